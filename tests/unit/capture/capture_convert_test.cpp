// Captured activity records → events, a TraceStore and Kineto JSON (no GPU needed).
#include <doctest/doctest.h>

#include <set>

#include "core/capture/capture_store.h"
#include "core/capture/chrome_trace.h"
#include "core/capture/device_match.h"
#include "core/capture/record_events.h"
#include "core/snapshot/snapshot.h"
#include "tests/unit/capture/capture_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::capture;

namespace {

std::set<int64_t> gpu_streams(const TraceStore& s) {
  std::set<int64_t> out;
  for (const Track& t : s.tracks)
    if (t.kind == TrackKind::GpuStream && t.gpu_work) out.insert(t.stream);
  return out;
}

uint64_t count_cat(const TraceStore& s, std::string_view cat) {
  uint64_t n = 0;
  for (const Track& t : s.tracks)
    for (StringId c : t.slices.cat) n += s.strings.view(c) == cat;
  return n;
}

// Absolute ns of the first slice named `name`: comparable across stores with different origins.
int64_t abs_start(const TraceStore& s, std::string_view name) {
  SliceRef ref = test::find_slice(s, name);
  REQUIRE(ref.valid());
  return s.origin_ns + s.start(ref);
}

}  // namespace

TEST_CASE("capture: conversion counts every record kind") {
  CaptureData d = test::synthetic_capture();
  ConvertedTrace c = convert_records(d);
  CHECK(c.stats.kernels == 3);
  CHECK(c.stats.memcpys == 1);
  CHECK(c.stats.memsets == 1);
  CHECK(c.stats.runtime == 7);
  CHECK(c.stats.driver == 2);
  CHECK(c.stats.syncs == 2);
  CHECK(c.stats.markers == 4);  // outer, inner, mark, dangling (closed at the end)
  CHECK(c.stats.unmatched_markers == 1);
  CHECK(c.stats.overhead == 1);
  CHECK(c.stats.counters == 2);
  CHECK(c.stats.flows == 5);  // 3 kernels, the copy and the set
  CHECK(c.stats.invalid == 0);
  CHECK(c.host_pid == 4242);
}

TEST_CASE("capture: names follow Kineto") {
  CHECK(demangle("_Z6kernelPfi") == "kernel(float*, int)");
  CHECK(demangle("plain_name") == "plain_name");
  CHECK(demangle("_Znot a name") == "_Znot a name");
  CHECK(memcpy_name(1, 1, 3) == "Memcpy HtoD (Pageable -> Device)");
  CHECK(memcpy_name(2, 3, 2) == "Memcpy DtoH (Device -> Pinned)");
  CHECK(memcpy_name(200, 9, 3) == "Memcpy Unknown (Unknown -> Device)");
  CHECK(memset_name(3) == "Memset (Device)");
  CHECK(sync_name(uint8_t(SyncKind::StreamWaitEvent)) == "Stream Wait Event");
  CHECK(sync_name(uint8_t(SyncKind::ContextSynchronize)) == "Context Sync");
}

TEST_CASE("capture: store from records links launches and nests NVTX") {
  CaptureData d = test::synthetic_capture();
  auto store = build_store(d);
  CHECK(store->kernel_count() == 3);
  CHECK(gpu_streams(*store) == std::set<int64_t>{7, 13});
  CHECK(store->flows.size() == 5);
  CHECK(store->launch_link_count() == 7);  // 3 kernels, copy, set, 2 syncs

  SliceRef kernel = test::find_slice(*store, "kernel(float*, int)");
  REQUIRE(kernel.valid());
  CHECK(store->tracks[kernel.track].stream == 7);
  CHECK(store->tracks[kernel.track].device == 0);
  SliceRef launch = store->launch_of(kernel);
  REQUIRE(launch.valid());
  CHECK(store->name(launch) == "cudaLaunchKernel");  // not the driver call with the same id
  CHECK(store->correlation_id(kernel) == 10);
  REQUIRE(store->flows_to(kernel).size() == 1);
  CHECK(store->flows[store->flows_to(kernel)[0]].from == launch);

  SliceRef driver_kernel = test::find_slice(*store, "driver_kernel");
  REQUIRE(store->launch_of(driver_kernel).valid());
  CHECK(store->name(store->launch_of(driver_kernel)) == "cuLaunchKernel");
  CHECK(store->tracks[driver_kernel.track].stream == 13);

  SliceRef inner = test::find_slice(*store, "inner"), outer = test::find_slice(*store, "outer");
  REQUIRE(inner.valid());
  REQUIRE(outer.valid());
  CHECK(store->cat(inner) == "user_annotation");
  CHECK(store->parent(inner) == outer);
  CHECK(store->dur(outer) == 12700);
  CHECK(store->dur(inner) == 3200);
  CHECK(inner.track == test::find_slice(*store, "cudaLaunchKernel").track);

  // Clock: exact ns, no rounding; the store starts at the earliest record (the first power sample).
  CHECK(store->origin_ns == 100);
  CHECK(store->start(kernel) == 5001 - 100);
  CHECK(store->dur(kernel) == 4001);

  REQUIRE(store->counters.size() == 1);
  CHECK(store->counters[0].value == std::vector<double>{250.5, 301.25});
  REQUIRE(store->meta.devices.size() == 1);
  CHECK(store->meta.devices[0].name == "NVIDIA H100 80GB HBM3");
  CHECK(count_cat(*store, "cuda_sync") == 2);
  CHECK(count_cat(*store, "overhead") == 1);

  auto args = store->decode_args(store->tracks[kernel.track].slices.args[kernel.index]);
  bool grid = false;
  for (auto& [k, v] : args) grid |= k == "grid" && v == "[128,0,0]";
  CHECK(grid);
}

TEST_CASE("capture: stream wait event names the stream it waits on") {
  CaptureData d = test::synthetic_capture();
  ConvertedTrace c = convert_records(d);
  bool found = false;
  for (const CaptureEvent& e : c.events)
    if (e.name == "Stream Wait Event") {
      found = true;
      CHECK(e.tid == 13);
      CHECK(e.args.find("\"wait_on_stream\":7") != std::string::npos);
      CHECK(e.args.find("\"wait_on_cuda_event_record_corr_id\":15") != std::string::npos);
    }
  CHECK(found);
}

TEST_CASE("capture: JSON times are exact microseconds with 3 decimals") {
  CaptureData d = test::synthetic_capture();
  d.records.resize(2);
  d.records[1] = test::gpu(ActivityKind::Kernel, "k", 0, 7, 123456789012345ull, 123456789012345ull + 1001);
  std::string json = chrome_trace_json(d);
  CHECK(json.find("\"ts\":123456789012.345,\"dur\":1.001") != std::string::npos);
  CHECK(json.find("\"baseTimeNanoseconds\":1751410836000000000") != std::string::npos);
  // A record before the base (possible for activity buffered before start) stays exact.
  CHECK(relative_ns(test::kBase - 5, test::kBase) == -5);
}

TEST_CASE("capture: written JSON loads back with the same kernels streams flows and links") {
  CaptureData d = test::synthetic_capture();
  auto direct = build_store(d);
  std::string json = chrome_trace_json(d);
  auto loaded = test::load_ok(json);
  CHECK(loaded->issues.total() == 0);
  CHECK(loaded->kernel_count() == direct->kernel_count());
  CHECK(loaded->flows.size() == direct->flows.size());
  CHECK(loaded->launch_link_count() == direct->launch_link_count());
  CHECK(loaded->gpu_activity_count() == direct->gpu_activity_count());
  CHECK(gpu_streams(*loaded) == gpu_streams(*direct));
  CHECK(loaded->slice_count() == direct->slice_count());
  for (const char* cat : {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "cuda_sync",
                          "user_annotation", "overhead"})
    CHECK_MESSAGE(count_cat(*loaded, cat) == count_cat(*direct, cat), cat);
  for (const char* name : {"kernel(float*, int)", "other_kernel", "outer", "inner", "Context Sync"})
    CHECK_MESSAGE(abs_start(*loaded, name) == abs_start(*direct, name), name);
  SliceRef k = test::find_slice(*loaded, "other_kernel");
  CHECK(loaded->name(loaded->launch_of(k)) == "cudaLaunchKernel");
  CHECK(loaded->tracks[k.track].stream == 13);
  REQUIRE(loaded->meta.devices.size() == 1);
  CHECK(loaded->meta.devices[0].name == "NVIDIA H100 80GB HBM3");
  REQUIRE(loaded->counters.size() == 1);
  CHECK(loaded->counters[0].value.size() == 2);
}

TEST_CASE("capture: a process whose pid equals a device id is moved off the GPU pid") {
  CaptureData d = test::synthetic_capture();
  d.info.pid = 0;
  for (auto& r : d.records) r.pid = 0;
  ConvertedTrace c = convert_records(d);
  CHECK(c.host_pid == (int64_t(1) << 32));
  auto store = build_store(d);
  SliceRef launch = test::find_slice(*store, "cudaLaunchKernel");
  CHECK(store->tracks[launch.track].kind == TrackKind::CpuThread);
  CHECK(store->kernel_count() == 3);
}

TEST_CASE("capture: records with end before start are counted and skipped") {
  CaptureData d;
  d.info.clock_base_ns = test::kBase;
  d.records.push_back(test::gpu(ActivityKind::Kernel, "backwards", 1, 7, 500, 100));
  ConvertedTrace c = convert_records(d);
  CHECK(c.stats.invalid == 1);
  CHECK(c.stats.kernels == 0);
}

// Found by the live-stream fuzzer (tests/fuzz/fuzz_live.cpp): a record 2^63 ns before the clock
// base made the store's rebasing overflow int64 (UBSan), and a garbled end far in the future
// stretched the ranges closed at the capture's end. Such records are counted and skipped, in a
// one-shot build and in appended batches, and the store keeps sane times a snapshot accepts.
TEST_CASE("capture: records timed decades from the capture's start are counted and skipped") {
  using K = ActivityKind;
  CaptureData d = test::synthetic_capture();
  ConvertedTrace clean = convert_records(d);
  auto clean_store = build_store(d);
  ActivityRecord before = test::api(K::Runtime, "cudaLaunchKernel", 90, 0, 10);
  before.start = test::kBase - (uint64_t(1) << 63) + 1000, before.end = before.start + 10;
  ActivityRecord after = test::gpu(K::Kernel, "far", 91, 7, 100, 200);
  after.end = UINT64_MAX;
  ActivityRecord mark = test::marker("far mark", 92, kMarkerInstant, 0);
  mark.start = UINT64_MAX - 5;
  d.records.insert(d.records.begin() + 3, {before, after, mark});
  ConvertedTrace c = convert_records(d);
  CHECK(c.stats.invalid == clean.stats.invalid + 3);
  CHECK(c.stats.kernels == clean.stats.kernels);
  CHECK(c.events.size() == clean.events.size());
  for (size_t i = 0; i < c.events.size() && i < clean.events.size(); ++i) {
    CHECK(c.events[i].ts == clean.events[i].ts);
    CHECK(c.events[i].dur == clean.events[i].dur);  // the open NVTX range still ends at the last sane time
  }
  auto once = build_store(d);
  CHECK(once->origin_ns == clean_store->origin_ns);
  CHECK(once->end_ns == clean_store->end_ns);
  // Appended one record at a time, as a live viewer may receive them.
  TraceStore grown;
  RecordConverter converter(d.info, d.devices);
  CaptureAppender appender(grown, d.info, d.devices);
  for (size_t i = 0; i < d.records.size(); ++i) {
    ConvertedTrace batch = converter.convert(std::span(d.records).subspan(i, 1));
    if (i == 0) converter.add_metadata(batch);
    appender.append(batch);
  }
  ConvertedTrace last;
  converter.close_open_ranges(last);
  appender.append(last);
  appender.end();
  CHECK(converter.totals().invalid == clean.stats.invalid + 3);
  CHECK(grown.origin_ns == clean_store->origin_ns);
  CHECK(grown.end_ns == clean_store->end_ns);
  LoadResult reopened = read_snapshot_bytes(snapshot_bytes(grown), "grown");
  CHECK_MESSAGE(reopened.ok(), reopened.error.to_string());
}

TEST_CASE("capture: NVML devices match CUDA devices by UUID") {
  const uint8_t bytes[16] = {0x5a, 0x3f, 0x0a, 0x1e, 0x00, 0x11, 0x22, 0x33,
                             0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xff};
  CHECK(format_gpu_uuid(bytes) == "GPU-5a3f0a1e-0011-2233-4455-66778899aaff");

  // CUDA_VISIBLE_DEVICES=2,0 on a 3-GPU machine: CUDA 0 is NVML 2, CUDA 1 is NVML 0, NVML 1 unseen.
  std::vector<std::string> nvml = {"GPU-aaaa0000-0000-0000-0000-000000000000", "GPU-bbbb0000-0000-0000-0000-000000000000",
                                   "GPU-cccc0000-0000-0000-0000-000000000000"};
  std::vector<std::string> cuda = {"GPU-CCCC0000-0000-0000-0000-000000000000", "aaaa0000-0000-0000-0000-000000000000"};
  CHECK(cuda_ordinals_for_nvml(nvml, cuda) == std::vector<int>{1, -1, 0});
  CHECK(cuda_ordinals_for_nvml(nvml, {}) == std::vector<int>{-1, -1, -1});
  CHECK(cuda_ordinals_for_nvml({"", "not-a-uuid"}, {"", "GPU-0"}) == std::vector<int>{-1, -1});
}
