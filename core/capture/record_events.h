// Captured activity records → Kineto-style trace events. A pure function: the JSON writer
// (chrome_trace.h) and the TraceBuilder sink (capture_store.h) both consume its output, so a
// written trace and a live store hold the same events.
//
// Placement follows Kineto: GPU work on pid = device, tid = stream; API calls, NVTX ranges and
// CUPTI overhead on pid = the process, tid = the thread. A GPU activity and the API call that
// launched it share `correlation` (in args) and an `ac2g` flow (`s` on the call, `f` with
// bp "e" on the activity). Times are ns since CaptureInfo::clock_base_ns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/capture/activity_record.h"

namespace sl::capture {

struct CaptureEvent {
  char ph = 'X';          // X, i, C, s, f, M
  int64_t pid = 0, tid = 0;
  std::string name;
  std::string_view cat;   // a literal: "kernel", "gpu_memcpy", ...
  int64_t ts = 0;         // ns since the clock base (may be negative for records before it)
  int64_t dur = 0;        // ns
  std::string args;       // a JSON object, or empty
  std::optional<int64_t> correlation;  // X events: the launch/activity link (also in args)
  bool gpu = false;       // X events on a GPU stream track
  int64_t device = -1, stream = -1;  // GPU events
  uint64_t flow_id = 0;   // s/f
  bool bp_enclosing = false;  // f: bp "e"
  double value = 0;       // C
};

struct ConvertStats {
  uint64_t kernels = 0, memcpys = 0, memsets = 0, runtime = 0, driver = 0, syncs = 0;
  uint64_t markers = 0, overhead = 0, counters = 0, flows = 0;
  uint64_t unmatched_markers = 0;  // range starts with no end (closed at the last timestamp) or ends with no start
  uint64_t invalid = 0;            // records with end < start, a time 73 years from the capture's start, or an unknown kind
};

struct ConvertedTrace {
  std::vector<CaptureEvent> events;
  int64_t host_pid = 0;   // pid written for CPU tracks (the process pid unless it collides with a device)
  ConvertStats stats;
};

// Every record at once: convert(records), then close_open_ranges and add_metadata.
ConvertedTrace convert_records(const CaptureData& data);

// Records → events batch by batch, as a live capture receives them; only the new records are
// converted. A link whose halves come in different batches comes out with the second half: a
// launch converted before its GPU work gets its flow start (`s`) in the batch that brings the
// work, and GPU work that came before its launch gets its flow end (`f`) with the launch.
// Differences from one batch of everything, all rare in CUPTI streams: the host pid is chosen
// from the devices and the first batch; when a driver call and the runtime call that made it
// share a correlation id across batches, the first one seen stays the launch; a Stream Wait
// Event that comes before its event's record lacks `wait_on_stream`.
class RecordConverter {
public:
  RecordConverter(const CaptureInfo& info, std::span<const DeviceInfo> devices);
  ConvertedTrace convert(std::span<const ActivityRecord> batch);
  // NVTX ranges still open end at the last time seen (the capture is over).
  void close_open_ranges(ConvertedTrace& out);
  // The process_name metadata event.
  void add_metadata(ConvertedTrace& out) const;
  int64_t host_pid() const { return host_pid_; }
  const ConvertStats& totals() const { return totals_; }  // over every batch

private:
  friend class BatchConversion;
  struct Launch {
    const ActivityRecord* pending = nullptr;  // the chosen launch, in the batch being converted
    int64_t tid = 0, ts = 0;                  // once converted
    bool flow_started = false;                // its `s` was written (or never will be)
  };
  struct Placed {
    int64_t pid, tid, ts;
  };
  struct EventRecord {
    uint32_t stream, correlation;
  };
  CaptureInfo info_;
  std::unordered_set<int64_t> devices_;
  bool started_ = false;
  int64_t host_pid_ = 0;
  uint64_t last_ = 0;  // the latest time of any record
  ConvertStats totals_;
  std::unordered_map<uint32_t, Launch> launch_;                   // correlation → its launch
  std::unordered_map<uint32_t, std::vector<Placed>> unlaunched_;  // GPU work waiting for its launch
  std::unordered_set<uint32_t> batch_activity_;                   // correlations with GPU work in this batch
  std::unordered_map<uint64_t, EventRecord> event_records_;       // CUDA event id → its record
  std::map<std::pair<std::string, uint64_t>, ActivityRecord> open_;  // NVTX ranges begun
};

// Exact ns since the clock base; records before the base give negative times.
inline int64_t relative_ns(uint64_t t, uint64_t base) {
  return t >= base ? int64_t(t - base) : -int64_t(base - t);
}

// "Memcpy HtoD (Pageable -> Device)", as Kineto names copies.
std::string memcpy_name(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind);
std::string memset_name(uint8_t dst_kind);
std::string_view sync_name(uint8_t sync_kind);  // "Stream Sync", "Event Sync", ...
std::string demangle(const std::string& name);   // the input when it is not a mangled C++ name

}  // namespace sl::capture
