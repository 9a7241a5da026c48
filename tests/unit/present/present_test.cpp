// GUI-free drawing helpers (core/present): what the timeline asks per pixel column.
#include <doctest/doctest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "core/present/gallop.h"
#include "core/present/range_min_max.h"
#include "core/present/sampled_keys.h"

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

TEST_CASE("gallop partition point: equals std::partition_point at every boundary") {
  for (int n : {0, 1, 2, 3, 7, 8, 9, 100, 1000}) {
    std::vector<int> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) v[size_t(i)] = i;
    for (int cut = -1; cut <= n + 1; ++cut) {
      auto below = [&](int x) { return x < cut; };
      REQUIRE(sl::present::gallop_partition_point(v.begin(), v.end(), below) == std::partition_point(v.begin(), v.end(), below));
    }
  }
}

// A lane as the timeline holds it: positions → slice rows (ascending, with gaps) → a start
// column; keys drawn from a small range so ties run across sample positions.
TEST_CASE("sampled keys: every search equals std::partition_point over the plain sequence") {
  std::mt19937 rng(11);
  // Sizes around the sample stride (64) and its multiples, and tiny ones.
  for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(7), size_t(8), size_t(9), size_t(63), size_t(64), size_t(65),
                   size_t(127), size_t(128), size_t(129), size_t(511), size_t(512), size_t(513), size_t(1000), size_t(4097)}) {
    for (int64_t spread : {int64_t(3), int64_t(1'000'000)}) {  // many ties / few ties
      std::vector<int64_t> column(2 * n + 1);
      std::vector<uint32_t> rows;
      for (uint32_t r = 0; r < column.size(); ++r)
        if (rng() % 2) rows.push_back(r);
      rows.resize(std::min(rows.size(), n));
      std::uniform_int_distribution<int64_t> key(-spread, spread);
      std::vector<int64_t> keys(rows.size());
      for (int64_t& k : keys) k = key(rng);
      std::sort(keys.begin(), keys.end());
      for (size_t p = 0; p < rows.size(); ++p) column[rows[p]] = keys[p];
      auto key_at = [&](size_t p) { return column[rows[p]]; };
      sl::present::SampledKeys index(rows.size(), key_at);
      REQUIRE(index.size() == rows.size());
      // Cuts below, above, on and between the keys; strict and non-strict predicates.
      std::vector<int64_t> cuts = {-spread - 5, spread + 5, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
      for (int k = 0; k < 40; ++k) cuts.push_back(key(rng));
      if (!keys.empty()) cuts.insert(cuts.end(), {keys.front(), keys.back(), keys[keys.size() / 2]});
      for (int64_t cut : cuts)
        for (bool strict : {true, false}) {
          auto pred = [&](int64_t t) { return strict ? t < cut : t <= cut; };
          size_t plain = size_t(std::partition_point(keys.begin(), keys.end(), pred) - keys.begin());
          REQUIRE(index.partition_point(key_at, pred) == plain);
          for (size_t from = 0; from <= keys.size() + 1; from += (from < 200 ? 1 : 37)) {
            size_t expect = std::max(plain, std::min(from, keys.size()));  // the search starts at from
            REQUIRE(index.partition_point_from(from, key_at, pred) == expect);
          }
        }
    }
  }
}

TEST_CASE("sampled keys: the first and last positions and an empty sequence") {
  std::vector<int64_t> v(130);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i) * 10;
  auto key_at = [&](size_t p) { return v[p]; };
  sl::present::SampledKeys index(v.size(), key_at);
  auto below = [](int64_t cut) { return [cut](int64_t t) { return t < cut; }; };
  CHECK(index.partition_point(key_at, below(0)) == 0);        // the first key fails
  CHECK(index.partition_point(key_at, below(1290)) == 129);   // only the last fails
  CHECK(index.partition_point(key_at, below(1291)) == 130);   // none fails
  CHECK(index.partition_point(key_at, below(640)) == 64);     // on a sample
  CHECK(index.partition_point(key_at, below(641)) == 65);     // just past one
  CHECK(index.partition_point_from(129, key_at, below(5000)) == 130);
  CHECK(index.partition_point_from(130, key_at, below(5000)) == 130);
  CHECK(index.partition_point_from(0, key_at, below(1280)) == 128);  // from the first block to the last
  sl::present::SampledKeys none(0, key_at);
  CHECK(none.partition_point(key_at, below(5)) == 0);
  CHECK(none.partition_point_from(0, key_at, below(5)) == 0);
}
