// Synthetic capture data shared by the capture unit tests: one of every record kind.
#pragma once

#include "core/capture/activity_record.h"

namespace sl::test {

constexpr uint64_t kBase = 1'000'000'000'000ull;  // capture-clock ns at ts 0

inline capture::ActivityRecord api(capture::ActivityKind kind, const char* name, uint32_t corr, uint64_t start,
                                   uint64_t end, uint32_t tid = 7) {
  capture::ActivityRecord r;
  r.kind = kind;
  r.name = name;
  r.correlation = corr;
  r.start = kBase + start;
  r.end = kBase + end;
  r.pid = 4242;
  r.tid = tid;
  r.cbid = 211;
  return r;
}

inline capture::ActivityRecord gpu(capture::ActivityKind kind, const char* name, uint32_t corr, uint32_t stream,
                                   uint64_t start, uint64_t end) {
  capture::ActivityRecord r;
  r.kind = kind;
  r.name = name;
  r.correlation = corr;
  r.device = 0;
  r.context = 1;
  r.stream = stream;
  r.start = kBase + start;
  r.end = kBase + end;
  return r;
}

inline capture::ActivityRecord marker(const char* name, uint64_t id, uint32_t flags, uint64_t at) {
  capture::ActivityRecord r;
  r.kind = capture::ActivityKind::Marker;
  r.name = name;
  r.id = id;
  r.flags = flags;
  r.start = kBase + at;
  r.pid = 4242;
  r.tid = 7;
  return r;
}

// Times in ns after kBase. Three kernels (two launched by the runtime on streams 7 and 13, one
// by the driver), a copy, a set, an event recorded on 7 and waited for on 13, a context sync,
// NVTX ranges outer ⊃ inner plus a mark and a range never closed, CUPTI overhead, two power samples.
inline capture::CaptureData synthetic_capture() {
  using K = capture::ActivityKind;
  capture::CaptureData d;
  d.info.pid = 4242;
  d.info.process_name = "demo";
  d.info.clock_base_ns = kBase;
  d.info.wall_base_ns = 1'751'410'836'000'000'000;
  d.info.cupti_version = 26;
  capture::DeviceInfo dev;
  dev.id = 0;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.num_sms = 132;
  dev.compute_major = 9;
  d.devices.push_back(dev);
  auto& r = d.records;
  r.push_back(api(K::Runtime, "cudaLaunchKernel", 10, 1000, 3500));
  r.push_back(api(K::Driver, "cuLaunchKernel", 10, 1500, 3000));  // made by the runtime call: not the launch
  capture::ActivityRecord k1 = gpu(K::Kernel, "_Z6kernelPfi", 10, 7, 5001, 9002);
  k1.grid[0] = 128, k1.block[0] = 256, k1.registers = 32, k1.static_shared = 1024, k1.dynamic_shared = 512;
  r.push_back(k1);
  r.push_back(api(K::Runtime, "cudaLaunchKernel", 11, 4000, 4600));
  r.push_back(gpu(K::Kernel, "other_kernel", 11, 13, 9500, 12000));
  r.push_back(api(K::Driver, "cuLaunchKernel", 12, 4700, 4900));
  r.push_back(gpu(K::Kernel, "driver_kernel", 12, 13, 12500, 13000));
  r.push_back(api(K::Runtime, "cudaMemcpyAsync", 13, 5000, 5400));
  capture::ActivityRecord copy = gpu(K::Memcpy, "", 13, 7, 9100, 11148);
  copy.copy_kind = 1, copy.src_kind = 1, copy.dst_kind = 3, copy.bytes = 4096;
  r.push_back(copy);
  r.push_back(api(K::Runtime, "cudaMemsetAsync", 14, 5500, 5600));
  capture::ActivityRecord set = gpu(K::Memset, "", 14, 7, 11200, 11300);
  set.dst_kind = 3, set.bytes = 1000;
  r.push_back(set);
  r.push_back(api(K::Runtime, "cudaEventRecord", 15, 5700, 5750));
  capture::ActivityRecord ev = gpu(K::CudaEvent, "", 15, 7, 5760, 5760);
  ev.id = 99;
  r.push_back(ev);
  r.push_back(api(K::Runtime, "cudaStreamWaitEvent", 16, 5800, 5900));
  capture::ActivityRecord wait = gpu(K::Synchronization, "", 16, 13, 5800, 5900);
  wait.sync_kind = uint8_t(capture::SyncKind::StreamWaitEvent), wait.id = 99;
  r.push_back(wait);
  r.push_back(api(K::Runtime, "cudaDeviceSynchronize", 17, 6000, 13100));
  capture::ActivityRecord ctx = gpu(K::Synchronization, "", 17, capture::kNoStream, 6000, 13100);
  ctx.sync_kind = uint8_t(capture::SyncKind::ContextSynchronize);
  r.push_back(ctx);
  r.push_back(marker("outer", 1, capture::kMarkerStart, 500));
  r.push_back(marker("inner", 2, capture::kMarkerStart, 800));
  r.push_back(marker("mark", 3, capture::kMarkerInstant, 900));
  r.push_back(marker("", 2, capture::kMarkerEnd, 4000));
  r.push_back(marker("", 1, capture::kMarkerEnd, 13200));
  r.push_back(marker("dangling", 4, capture::kMarkerStart, 13300));
  capture::ActivityRecord over = api(K::Overhead, "CUPTI buffer flush", 0, 13400, 13600);
  r.push_back(over);
  for (uint64_t t : {100ull, 10100ull}) {
    capture::ActivityRecord c;
    c.kind = K::Counter;
    c.name = "power draw (W)";
    c.start = kBase + t;
    c.number = t == 100 ? 250.5 : 301.25;
    r.push_back(c);
  }
  d.drops = {uint64_t(r.size()), 3, 2};
  return d;
}

}  // namespace sl::test
