// Min and max of any index range of a series, for drawing dense counters one pixel column at a
// time: per-block extremes at two levels, built once in O(n), answer a range in at most
// 2 × (kFine + kCoarse / kFine) reads plus one per coarse block it covers, whatever the series
// length. Without it a zoomed-out counter of millions of points was walked point by point on
// every frame (the 10 GB synthetic trace's frames took ~20 ms).
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace sl::present {

class RangeMinMax {
public:
  RangeMinMax() = default;
  explicit RangeMinMax(std::span<const double> values);

  size_t size() const { return values_.size(); }
  const double* data() const { return values_.data(); }  // the series it indexes
  // Extremes of values[begin, end); begin < end <= size().
  std::pair<double, double> of(size_t begin, size_t end) const;
  std::pair<double, double> all() const { return all_; }

  static constexpr size_t kFine = 32, kCoarse = 1024;  // kCoarse is a multiple of kFine

private:
  std::span<const double> values_;
  std::vector<double> fine_min_, fine_max_, coarse_min_, coarse_max_;  // per whole block
  std::pair<double, double> all_{0, 0};
};

}  // namespace sl::present
