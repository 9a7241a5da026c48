// §2 Idle time on GPU streams.
//  2a: HTA's breakdown per stream into host_wait / kernel_wait / other, with interval statistics.
//  2b: Sightline's idle causes, one per gap, kept per gap so the timeline can paint them.
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
std::vector<IdleBreakdownRow> idle_breakdown(const EventTable& table, const IdleBreakdownOptions& o = {});

enum class IdleCause : uint8_t { DataLoading, HostSync, HostLaunchBound, CrossStreamWait, LaunchLatency, Other };
std::string_view idle_cause_name(IdleCause c);
constexpr int kIdleCauseCount = 6;

struct IdleGap {
  int64_t stream = 0;
  uint32_t track = kNone;  // GPU track of the stream (first one seen)
  TimeNs start = 0, end = 0;
  IdleCause cause = IdleCause::Other;
  int32_t next = -1;       // row of the activity that ends the gap
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
};

struct IdleCauseOptions {
  TimeNs launch_latency = 30'000;
  std::vector<std::string> data_loader_patterns = {"enumerate(DataLoader)", "DataLoader",
                                                   "_MultiProcessingDataLoaderIter",
                                                   "_SingleProcessDataLoaderIter"};
};

IdleCauses idle_causes(const EventTable& table, const IdleCauseOptions& o = {});

}  // namespace sl::analysis
