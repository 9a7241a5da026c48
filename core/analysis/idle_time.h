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

// Causes in the order of the rules of §2b; CollectiveWait (a stream that carries only
// collectives, waiting for the next one) was added after Other to keep the earlier values.
enum class IdleCause : uint8_t { DataLoading, HostSync, HostLaunchBound, CrossStreamWait, LaunchLatency, Other, CollectiveWait };
std::string_view idle_cause_name(IdleCause c);
constexpr int kIdleCauseCount = 7;

struct IdleGap {
  enum class Edge : uint8_t { None, Leading, Trailing };
  int64_t stream = 0;
  uint32_t track = kNone;  // GPU track of the activity that ends the gap (the last one, trailing)
  TimeNs start = 0, end = 0;
  IdleCause cause = IdleCause::Other;
  int32_t next = -1;       // row of the activity that ends the gap; -1 for a trailing edge
  Edge edge = Edge::None;  // before the stream's first activity / after its last, in the window
  // The CPU thread whose activity explains the gap: the launching thread of `next` (of the
  // last activity for a trailing edge); for work without a launch link, of the threads that
  // launch the stream's linked work (else the rank's), the one that ran host work for most of
  // the gap. kNone when nothing launches.
  uint32_t host_track = kNone;
  bool host_inferred = false;  // host_track was inferred (no launch link)
  TimeNs length() const { return end - start; }
};

struct IdleCauseRow {
  int64_t rank = 0, stream = 0;
  IdleCause cause = IdleCause::Other;
  TimeNs idle = 0;
  uint64_t count = 0;
  double share = 0;               // of the stream's idle time
  std::vector<uint32_t> longest;  // indices into IdleCauses::gaps, longest first (up to 5)
};

struct IdleCauses {
  std::vector<IdleGap> gaps;      // every gap, by stream then time
  std::vector<IdleCauseRow> rows; // per stream and cause (causes with no gap omitted)
  Interval window{0, 0};          // Sightline mode: the idle window; (HTA) mode: empty
};

struct IdleCauseOptions {
  TimeNs launch_latency = 30'000;
  std::vector<std::string> data_loader_patterns = {"enumerate(DataLoader)", "DataLoader",
                                                   "_MultiProcessingDataLoaderIter",
                                                   "_SingleProcessDataLoaderIter"};
};

IdleCauses idle_causes(const EventTable& table, const IdleCauseOptions& o = {});

// Time the whole GPU waited (no kernel, memcpy or memset on any stream), cut from the idle-cause
// gaps, each piece with the cause of the stream that resumed first. Sorted, disjoint.
struct DeviceIdle {
  TimeNs start = 0, end = 0;
  IdleCause cause = IdleCause::Other;
  TimeNs resumed = 0;  // end of the stream gap the cause comes from
};

}  // namespace sl::analysis
