// The index order of numpy's argsort(kind="quicksort") (numpy 1.24, the generation pandas 1.5.3
// runs on), for HTA mode. pandas' sort_values(by=one column) is this argsort, and HTA sorts
// event boundaries with it before running sums (queue length, memory bandwidth, kernel-type
// overlap): the order of equal timestamps decides which intermediate values appear, so HTA's
// counts depend on it. The algorithm is introsort: median-of-3 quicksort with insertion sort on
// partitions of at most 16 elements, heapsort past a depth of 2·floor(log2 n). It is not stable.
// Checked against numpy 1.24.2 on random arrays and against HTA's own queue-length series
// (reference/hta_trace_diff_control_a100: 634 tied timestamps, same order).
#pragma once

#include <cstdint>
#include <vector>

namespace sl::analysis {

std::vector<uint32_t> numpy_quicksort_argsort(const std::vector<int64_t>& keys);

}  // namespace sl::analysis
