// Plain mirrors of the CUPTI activity records Sightline captures, free of any CUPTI header, so
// the conversion to trace events is a pure function that builds and is tested without CUDA.
//
// The injection library (core/capture/cupti/) copies each CUPTI record into one of these; the
// live protocol (live_protocol.h) carries them; record_events.h turns them into trace events.
//
// Times are nanoseconds on the capture clock. The injection library registers a CUPTI
// timestamp callback returning CLOCK_MONOTONIC, so GPU activity, API calls, NVTX markers and
// NVML samples share one clock; `CaptureInfo` pairs a monotonic instant with the wall clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sl::capture {

enum class ActivityKind : uint8_t {
  Kernel = 1,        // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
  Memcpy = 2,        // CUPTI_ACTIVITY_KIND_MEMCPY
  Memset = 3,        // CUPTI_ACTIVITY_KIND_MEMSET
  Runtime = 4,       // CUPTI_ACTIVITY_KIND_RUNTIME
  Driver = 5,        // CUPTI_ACTIVITY_KIND_DRIVER
  Synchronization = 6,  // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
  Marker = 7,        // CUPTI_ACTIVITY_KIND_MARKER (NVTX ranges and marks)
  Overhead = 8,      // CUPTI_ACTIVITY_KIND_OVERHEAD
  CudaEvent = 9,     // CUPTI_ACTIVITY_KIND_CUDA_EVENT (an event record: which stream it was on)
  Counter = 10,      // an NVML sample (not a CUPTI record)
};
constexpr uint8_t kMaxActivityKind = 10;

// CUpti_ActivityFlag bits used by marker records.
enum MarkerFlag : uint32_t { kMarkerInstant = 1u << 0, kMarkerStart = 1u << 1, kMarkerEnd = 1u << 2 };

// CUpti_ActivitySynchronizationType, same numbering.
enum class SyncKind : uint8_t { Unknown = 0, EventSynchronize = 1, StreamWaitEvent = 2, StreamSynchronize = 3,
                                ContextSynchronize = 4 };

// CUPTI marks "no stream" (context synchronisation) with all ones.
constexpr uint32_t kNoStream = 0xFFFFFFFFu;

// One activity. Fields a kind does not use stay zero.
struct ActivityRecord {
  ActivityKind kind = ActivityKind::Kernel;
  uint32_t flags = 0;        // Marker: MarkerFlag bits
  uint64_t start = 0;        // ns; Marker/CudaEvent/Counter: the instant
  uint64_t end = 0;          // ns
  uint32_t correlation = 0;  // links an API call to the GPU work it launched (0: none)
  uint32_t device = 0, context = 0, stream = 0;
  uint32_t pid = 0, tid = 0;  // API calls, markers, overhead: the calling process and thread
  uint32_t cbid = 0;          // Runtime/Driver: the callback id of the function
  uint8_t copy_kind = 0;      // Memcpy: CUpti_ActivityMemcpyKind
  uint8_t src_kind = 0, dst_kind = 0;  // Memcpy/Memset: CUpti_ActivityMemoryKind
  uint8_t sync_kind = 0;      // Synchronization: SyncKind
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};  // Kernel
  uint32_t registers = 0, static_shared = 0, dynamic_shared = 0;  // Kernel
  uint64_t bytes = 0;         // Memcpy/Memset
  uint32_t value = 0;         // Memset: the byte value
  uint64_t id = 0;            // Marker: range id; Synchronization/CudaEvent: the CUDA event id
  double number = 0;          // Counter: the sample
  std::string name;           // kernel (mangled), API function, marker text, counter series, overhead
  std::string domain;         // Marker: NVTX domain ("" = default)
};

// A GPU as described by CUPTI_ACTIVITY_KIND_DEVICE; written to `deviceProperties`.
struct DeviceInfo {
  uint32_t id = 0;
  std::string name;
  uint64_t total_global_mem = 0;
  uint32_t compute_major = 0, compute_minor = 0;
  uint32_t num_sms = 0;
  uint32_t max_threads_per_block = 0, max_threads_per_sm = 0;
  uint32_t regs_per_block = 0, regs_per_sm = 0;
  uint32_t warp_size = 0;
  uint32_t shared_mem_per_block = 0, shared_mem_per_sm = 0, shared_mem_per_block_optin = 0;
};

// Facts about one capture session.
struct CaptureInfo {
  uint32_t pid = 0;
  std::string process_name;
  uint64_t clock_base_ns = 0;  // capture-clock instant written as ts 0
  int64_t wall_base_ns = 0;    // the wall clock (ns since 1970) at clock_base_ns
  uint32_t cupti_version = 0, cuda_runtime_version = 0, cuda_driver_version = 0;
};

// Counts of records that never made it into the trace.
struct DropStats {
  uint64_t records = 0;        // records captured and delivered
  uint64_t dropped_buffer = 0; // ours: buffers or queues full
  uint64_t dropped_cupti = 0;  // cuptiActivityGetNumDroppedRecords
};

// Everything one capture produced.
struct CaptureData {
  CaptureInfo info;
  std::vector<DeviceInfo> devices;
  std::vector<ActivityRecord> records;
  DropStats drops;
  std::vector<std::string> messages;  // warnings from the injection library (NVML absent, ...)
};

}  // namespace sl::capture
