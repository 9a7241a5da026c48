// §8 Communication/computation overlap: the share of communication time hidden under compute.
#pragma once

#include <optional>

#include "core/analysis/common.h"

namespace sl::analysis {

struct CommCompOverlap {
  int64_t rank = 0;
  TimeNs communication = 0, overlap = 0;
  std::optional<double> overlap_pct;  // null when there is no communication; (HTA) 2 decimals
};

CommCompOverlap comm_comp_overlap(const EventTable& table);

}  // namespace sl::analysis
