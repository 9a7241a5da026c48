// §1 Temporal breakdown: how the GPU's span splits into idle, compute and non-compute time.
#pragma once

#include "core/analysis/common.h"

namespace sl::analysis {

struct TemporalBreakdown {
  bool valid = false;  // false when there is no GPU activity
  int64_t rank = 0;
  TimeNs idle = 0, compute = 0, non_compute = 0, span = 0;
  double idle_pct = 0, compute_pct = 0, non_compute_pct = 0;  // (HTA) rounded to 2 decimals
};

TemporalBreakdown temporal_breakdown(const EventTable& table);

}  // namespace sl::analysis
