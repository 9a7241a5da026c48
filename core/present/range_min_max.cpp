#include "core/present/range_min_max.h"

#include <algorithm>
#include <limits>

namespace sl::present {

namespace {

// Extremes of each whole block of `block` values of `in` (a trailing partial block is left out:
// ranges read its values one by one).
void block_extremes(std::span<const double> lo_in, std::span<const double> hi_in, size_t block, std::vector<double>& lo,
                    std::vector<double>& hi) {
  size_t blocks = lo_in.size() / block;
  lo.resize(blocks);
  hi.resize(blocks);
  for (size_t b = 0; b < blocks; ++b) {
    auto l = lo_in.subspan(b * block, block), h = hi_in.subspan(b * block, block);
    lo[b] = *std::min_element(l.begin(), l.end());
    hi[b] = *std::max_element(h.begin(), h.end());
  }
}

}  // namespace

RangeMinMax::RangeMinMax(std::span<const double> values) : values_(values) {
  block_extremes(values, values, kFine, fine_min_, fine_max_);
  block_extremes(fine_min_, fine_max_, kCoarse / kFine, coarse_min_, coarse_max_);
  if (!values.empty()) all_ = of(0, values.size());
}

std::pair<double, double> RangeMinMax::of(size_t begin, size_t end) const {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  size_t i = begin;
  while (i < end) {
    if (i % kCoarse == 0 && i + kCoarse <= end) {
      lo = std::min(lo, coarse_min_[i / kCoarse]), hi = std::max(hi, coarse_max_[i / kCoarse]);
      i += kCoarse;
    } else if (i % kFine == 0 && i + kFine <= end) {
      lo = std::min(lo, fine_min_[i / kFine]), hi = std::max(hi, fine_max_[i / kFine]);
      i += kFine;
    } else {
      lo = std::min(lo, values_[i]), hi = std::max(hi, values_[i]);
      ++i;
    }
  }
  return {lo, hi};
}

}  // namespace sl::present
