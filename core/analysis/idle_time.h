// §2 Idle time on GPU streams.
//  2a: HTA's breakdown per stream into host_wait / kernel_wait / other, with interval statistics.
//  2b: Sightline's idle causes, one per gap, kept per gap so the timeline can paint them.
// In Sightline mode idle counts over the idle window (below): the time before a stream's first
// activity and after its last one inside the window is idle too, and gets a cause like any gap,
// so the temporal breakdown's idle per stream equals the sum of that stream's idle causes.
#pragma once

#include <optional>
#include <string>

#include "core/analysis/common.h"
#include "core/analysis/idle_rules_input.h"

namespace sl::analysis {

enum class IdleCategory : uint8_t { HostWait, KernelWait, Other };
std::string_view idle_category_name(IdleCategory c);  // host_wait, kernel_wait, other

struct IdleBreakdownRow {
  int64_t rank = 0, stream = 0;
  IdleCategory category = IdleCategory::Other;
  TimeNs idle = 0;
  std::optional<double> ratio;  // idle / stream's idle; null when the stream has none (HTA: NaN)
  Describe stats;               // of the gaps in this category (count excludes a stream's first)
};

struct IdleBreakdownOptions {
  TimeNs consecutive_kernel_delay = 30'000;  // 30 µs
};

// Categories appear per stream only when at least one activity falls in them (HTA's groupby);
// streams in order of first appearance.
// Sightline mode measures each gap from the running maximum end (an overlapped activity has a
// zero gap, never a negative one); HTA mode keeps HTA's immediately-preceding end.
std::vector<IdleBreakdownRow> idle_breakdown(const EventTable& table, const IdleBreakdownOptions& o = {});

// ---- the idle window and GPU work (Sightline mode) ----
// GPU work: every row on a GPU track except GPU user annotations (analyses.md §1: kernels,
// memcpys, memsets and sync events). (HTA) mode: kernel/memcpy/memset categories, as §2a.
bool is_gpu_work(const EventTable& table, const Row& row);
// The span idle counts over, per rank (one table = one rank):
//  - with ProfilerStep iterations: first step's start .. last step's end, widened to cover every
//    GPU work row (GPU work of the last step runs after its CPU side ends);
//  - without: the trace's span, first start .. last end of every row of the table (CPU and GPU).
// Empty (start == end == 0) when the table has no GPU work.
Interval idle_window(const EventTable& table);
// GPU work rows per stream (streams in order of first appearance, rows by start), for the
// per-stream idle and temporal analyses. A stream whose only work is sync events (a device-wide
// track of context/event syncs) is not reported; its rows still count in the rank's G.
std::vector<std::pair<int64_t, std::vector<uint32_t>>> gpu_work_by_stream(const EventTable& table);

// Causes in the order of the rules of §2b: the first six say the host was late (the next
// activity's launch started after the gap began), the last four that the work was already launched.
// Each names one fix; two causes differ when their fixes differ.
enum class IdleCause : uint8_t {
  DataLoading,      // 1. the launching process was in the DataLoader
  HostSync,         // 2. the launching thread was blocked in a synchronising call
  CaptureWarmup,    // 3. graph capture, compilation, autotuning, warm-up: not steady state
  HostCompute,      // 4. CPU work that launched nothing (preprocessing, a CPU op)
  LaunchBound,      // 5. the thread was dispatching GPU work
  HostUntraced,     // 6. no op or Python function of the thread overlaps the window
  CrossStreamWait,  // 7. waiting on another stream
  CollectiveWait,   // 8. a communication stream waiting for its next collective
  LaunchLatency,    // 9. launched, and started within 30 µs
  Other,            // 10.
};
std::string_view idle_cause_name(IdleCause c);  // data_loading, host_sync, capture_warmup, ...
constexpr int kIdleCauseCount = 10;
// The causes a host-bound verdict names (§5): the host was late for a reason a fix of the
// steady state addresses. Capture/warm-up is excluded from verdicts.
bool is_host_cause(IdleCause c);
bool is_wait_cause(IdleCause c);  // cross-stream or collective wait
// The fix a cause names, one sentence for people (the headline, the insights, the hover text).
std::string_view idle_cause_fix(IdleCause c);

struct IdleGap {
  enum class Edge : uint8_t { None, Leading, Trailing };
  int64_t stream = 0;
  uint32_t track = kNone;  // GPU track of the activity that ends the gap (the last one, trailing)
  TimeNs start = 0, end = 0;
  // Where the host-side window W of §2b ends: the next activity's launch start when the host was
  // late (W = [start, host_end)), else `end`.
  TimeNs host_end = 0;
  IdleCause cause = IdleCause::Other;
  int32_t next = -1;       // row of the activity that ends the gap; -1 for a trailing edge
  Edge edge = Edge::None;  // before the stream's first activity / after its last, in the window
  // The CPU thread whose activity explains the gap: the launching thread of `next` (of the
  // last activity for a trailing edge); for work without a launch link, of the threads that
  // launch the stream's linked work (else the rank's), the one that ran host work for most of
  // the gap. kNone when nothing launches.
  uint32_t host_track = kNone;
  bool host_inferred = false;  // host_track was inferred (no launch link)
  // The top CPU events of W (host causes only): IdleCauses::top_events[top_begin, +top_count).
  uint32_t top_begin = 0;
  uint8_t top_count = 0;
  TimeNs length() const { return end - start; }
};

struct IdleCauseRow {
  int64_t rank = 0, stream = 0;
  IdleCause cause = IdleCause::Other;
  TimeNs idle = 0;
  uint64_t count = 0;
  double share = 0;               // of the stream's idle time
  std::vector<uint32_t> longest;  // indices into IdleCauses::gaps, longest first (up to 5)
  std::vector<HostEvent> top_events;  // host causes: the top CPU events in their windows (up to 5)
};

// Time the whole GPU waited (no kernel, memcpy or memset on any stream), cut from the idle-cause
// gaps, each piece with the cause of the stream that resumed first. Sorted, disjoint.
struct DeviceIdle {
  TimeNs start = 0, end = 0;
  IdleCause cause = IdleCause::Other;
  TimeNs resumed = 0;  // when the stream of the gap the cause comes from resumed (its next activity)
  uint32_t gap = 0;    // index of that gap in IdleCauses::gaps
  uint32_t top_begin = 0;  // its host window's top events: IdleCauses::device_top[top_begin, +top_count)
  uint8_t top_count = 0;
};

struct IdleCauses {
  std::vector<IdleGap> gaps;      // every gap, by stream then time
  std::vector<IdleCauseRow> rows; // per stream and cause (causes with no gap omitted)
  std::vector<HostEvent> top_events;  // per gap, up to 3 (IdleGap::top_begin)
  // Sightline mode: the device-wide pieces (the ledger's entries, idle_ledger.h) and, for host
  // causes, the top events of each piece's own host window (DeviceIdle::top_begin).
  std::vector<DeviceIdle> device;
  std::vector<HostEvent> device_top;
  Interval window{0, 0};          // Sightline mode: the idle window; (HTA) mode: empty
};

// Sums events by name, largest first (ties by name), cut to `keep`.
std::vector<HostEvent> sum_host_events(const std::vector<HostEvent>& events, size_t keep);
// Sums the top events of several gaps by name, largest first, cut to `keep`. (Each gap keeps
// its own top 3, so this ranks the events that lead their windows.)
std::vector<HostEvent> top_host_events(const IdleCauses& causes, const std::vector<uint32_t>& gaps, size_t keep);

IdleCauses idle_causes(const EventTable& table, const IdleCauseOptions& o = {});


}  // namespace sl::analysis
