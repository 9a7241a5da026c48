// §1 Temporal breakdown: how the GPU's span splits into idle, compute and non-compute time.
#pragma once

#include <vector>

#include "core/analysis/common.h"

namespace sl::analysis {

// One split of a span (the rank's, or one stream's) into idle, compute and non-compute time.
struct TemporalSplit {
  TimeNs idle = 0, compute = 0, non_compute = 0, span = 0;
  double idle_pct = 0, compute_pct = 0, non_compute_pct = 0;  // (HTA) rounded to 2 decimals
};

struct StreamTemporal : TemporalSplit {
  int64_t stream = 0;
};

struct TemporalBreakdown : TemporalSplit {
  bool valid = false;  // false when there is no GPU activity
  int64_t rank = 0;
  // Sightline mode: the same split per stream over the same window (idle = the stream's idle
  // time, equal to the sum of its idle causes); streams in order of first appearance.
  // (HTA) mode: empty (HTA has no per-stream temporal breakdown).
  std::vector<StreamTemporal> streams;
};

// Sightline mode: G = GPU work (annotations excluded) and span = the idle window (idle_time.h),
// so idle before the first and after the last activity counts. (HTA) mode: G = every GPU row,
// span = first merged start .. last merged end.
TemporalBreakdown temporal_breakdown(const EventTable& table);

}  // namespace sl::analysis
