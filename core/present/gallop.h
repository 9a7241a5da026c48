// Galloping search: std::partition_point for a boundary expected near the front of the range.
// Drawing walks sorted rows left to right and asks "where does this pixel column's run end?"
// again and again; a plain binary search over the rest of a 30M-slice row touches ~25 cold cache
// lines per question, a gallop from the current position ~2 log2(distance), mostly warm ones.
#pragma once

#include <algorithm>
#include <iterator>

namespace sl::present {

// The first element of [first, last) for which pred is false, given that pred is true for a
// prefix of the range and false after it (as std::partition_point).
template <class It, class Pred>
It gallop_partition_point(It first, It last, Pred pred) {
  auto size = std::distance(first, last);
  decltype(size) step = 1, done = 0;  // pred holds for every element before first + done
  while (step <= size && pred(*std::next(first, step - 1))) {
    done = step;
    step *= 2;
  }
  return std::partition_point(std::next(first, done), std::next(first, std::min(step - 1, size)), pred);
}

}  // namespace sl::present
