// Merged intervals with prefix sums: "how much of [t0, t1) is covered" in O(log n).
#pragma once

#include <algorithm>
#include <vector>

#include "core/analysis/common.h"

namespace sl::analysis {

class IntervalIndex {
public:
  IntervalIndex() = default;
  explicit IntervalIndex(std::vector<Interval> intervals) : merged_(merge_intervals(std::move(intervals))) {
    prefix_.reserve(merged_.size() + 1);
    prefix_.push_back(0);
    for (const Interval& i : merged_) prefix_.push_back(prefix_.back() + (i.end - i.start));
  }

  TimeNs covered(TimeNs t0, TimeNs t1) const {
    if (t1 <= t0 || merged_.empty()) return 0;
    // First interval ending after t0, last interval starting before t1.
    size_t a = size_t(std::upper_bound(merged_.begin(), merged_.end(), t0,
                                       [](TimeNs v, const Interval& i) { return v < i.end; }) -
                      merged_.begin());
    size_t b = size_t(std::lower_bound(merged_.begin(), merged_.end(), t1,
                                       [](const Interval& i, TimeNs v) { return i.start < v; }) -
                      merged_.begin());
    if (a >= b) return 0;
    TimeNs sum = prefix_[b] - prefix_[a];
    sum -= std::max<TimeNs>(0, t0 - merged_[a].start);
    sum -= std::max<TimeNs>(0, merged_[b - 1].end - t1);
    return sum;
  }
  const std::vector<Interval>& merged() const { return merged_; }

private:
  std::vector<Interval> merged_;
  std::vector<TimeNs> prefix_;
};

}  // namespace sl::analysis
