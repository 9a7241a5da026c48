// GUI-free drawing helpers (core/present): what the timeline asks per pixel column.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "core/present/range_min_max.h"

using sl::present::RangeMinMax;

TEST_CASE("range min/max: every range of a series equals a direct scan") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> value(-1e6, 1e6);
  // Lengths around the block sizes, so ranges start, end and span inside, on and across blocks.
  for (size_t n : {size_t(1), size_t(31), size_t(32), size_t(33), size_t(1023), size_t(1024), size_t(5000)}) {
    std::vector<double> v(n);
    for (double& x : v) x = value(rng);
    RangeMinMax index(v);
    CHECK(index.size() == n);
    auto [lo, hi] = index.all();
    CHECK(lo == *std::min_element(v.begin(), v.end()));
    CHECK(hi == *std::max_element(v.begin(), v.end()));
    std::uniform_int_distribution<size_t> pos(0, n - 1);
    for (int k = 0; k < 2000; ++k) {
      size_t a = pos(rng), b = pos(rng);
      if (a > b) std::swap(a, b);
      auto [mn, mx] = index.of(a, b + 1);
      REQUIRE(mn == *std::min_element(v.begin() + a, v.begin() + b + 1));
      REQUIRE(mx == *std::max_element(v.begin() + a, v.begin() + b + 1));
    }
  }
}

TEST_CASE("range min/max: a peak inside a coarse block is found from the block's summary") {
  std::vector<double> v(4096, 1.0);
  v[2000] = 9.0, v[3000] = -4.0;
  RangeMinMax index(v);
  CHECK(index.of(1024, 2048) == std::pair(1.0, 9.0));   // exactly one coarse block
  CHECK(index.of(0, 4096) == std::pair(-4.0, 9.0));
  CHECK(index.of(2001, 2999) == std::pair(1.0, 1.0));  // between the two: neither extreme
  CHECK(index.of(3000, 3001) == std::pair(-4.0, -4.0));
}
