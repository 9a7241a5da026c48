// Merged intervals with prefix sums: "how much of [t0, t1) is covered" in O(log n), or at many
// increasing times in one pass.
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
  // "Covered before t" at many increasing times in one forward pass, galloping over the
  // intervals between them, so a whole row of pixel columns costs O(columns · log(intervals per
  // column)), zoomed in or out. `shift` is subtracted from every time first. `scan` calls
  // f(k, covered before times[k]) in order; `cumulative` collects those.
  template <class F>
  void scan(const std::vector<TimeNs>& increasing_times, TimeNs shift, F&& f) const {
    size_t i = 0, n = merged_.size();  // first interval ending after the current time
    for (size_t k = 0; k < increasing_times.size(); ++k) {
      TimeNs t = increasing_times[k] - shift;
      if (i < n && merged_[i].end <= t) {  // gallop, then binary search in the last step
        size_t step = 1;
        while (i + step < n && merged_[i + step].end <= t) step *= 2;
        auto first = merged_.begin() + ptrdiff_t(i + step / 2), last = merged_.begin() + ptrdiff_t(std::min(i + step, n));
        i = size_t(std::upper_bound(first, last, t, [](TimeNs v, const Interval& x) { return v < x.end; }) - merged_.begin());
      }
      f(k, prefix_[i] + (i < n ? std::max<TimeNs>(0, t - merged_[i].start) : 0));
    }
  }
  void cumulative(const std::vector<TimeNs>& increasing_times, std::vector<TimeNs>& out, TimeNs shift = 0) const {
    out.resize(increasing_times.size());
    scan(increasing_times, shift, [&](size_t k, TimeNs covered) { out[k] = covered; });
  }
  const std::vector<Interval>& merged() const { return merged_; }
  bool empty() const { return merged_.empty(); }
  size_t size() const { return merged_.size(); }

private:
  std::vector<Interval> merged_;
  std::vector<TimeNs> prefix_;
};

}  // namespace sl::analysis
