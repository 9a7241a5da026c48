// Outlier ranks (core/analysis/outlier_ranks.h): beyond 3·MAD above the median, by metric then
// rank; the same table in `report DIR` as in a fleet.
#include <doctest/doctest.h>

#include "core/analysis/outlier_ranks.h"

using namespace sl;
using namespace sl::analysis;

namespace {

StragglerRow row(int64_t rank, std::optional<double> iteration, TimeNs wait, uint64_t collectives = 4) {
  StragglerRow s;
  s.rank = rank, s.iteration_mean = iteration, s.wait = wait, s.collectives = collectives;
  return s;
}

}  // namespace

TEST_CASE("outliers: a slow rank beyond 3 MAD, a wait outlier, nothing among two ranks") {
  // Iterations 100, 101, 99, 100, 130 ms: median 100, MAD 1 → rank 4 at 30 MADs; waits equal but
  // rank 2's: MAD 0, so any rank above the others is flagged, with no MAD count.
  std::vector<StragglerRow> rows{row(4, 130e6, 5'000), row(0, 100e6, 5'000), row(1, 101e6, 5'000),
                                 row(2, 99e6, 9'000), row(3, 100e6, 5'000)};
  std::vector<OutlierRank> out = outlier_ranks(rows);
  REQUIRE(out.size() == 2);
  CHECK(out[0].rank == 4);
  CHECK(out[0].metric == "iteration_time");
  CHECK(out[0].median == doctest::Approx(100e6));
  CHECK(out[0].mad == doctest::Approx(1e6));
  CHECK(*out[0].mads == doctest::Approx(30));
  CHECK(out[1].rank == 2);
  CHECK(out[1].metric == "wait");
  CHECK(out[1].mad == 0);
  CHECK(!out[1].mads);
  // Worst first: the 30 MADs before the MAD of 0.
  CHECK(outliers_worst_first(out) == std::vector<int64_t>{4, 2});
  Table t = outliers_table(out);
  CHECK(t.name == "outliers");
  CHECK(t.columns == std::vector<std::string>{"rank", "metric", "value_us", "median_us", "mad_us", "mads"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0][5].d == doctest::Approx(30));
  CHECK(t.rows[1][5].kind == Cell::Null);
  // A fast rank is no outlier; a rank with no collectives has no wait; two ranks have no median.
  CHECK(outlier_ranks({row(0, 100e6, 0), row(1, 100e6, 0), row(2, 100e6, 0), row(3, 60e6, 0)}).empty());
  CHECK(outlier_ranks({row(0, std::nullopt, 0, 0), row(1, std::nullopt, 0, 0), row(2, std::nullopt, 900, 0)}).empty());
  CHECK(outlier_ranks({row(0, 100e6, 0), row(1, 900e6, 0)}).empty());
}

TEST_CASE("outliers: a rank outlying in both metrics is listed twice and ranked once, by its worst") {
  std::vector<StragglerRow> rows;
  for (int r = 0; r < 8; ++r) rows.push_back(row(r, 100e6 + r * 1e5, 1'000 + r * 10));
  rows[5].iteration_mean = 200e6, rows[5].wait = 100'000;  // both
  rows[6].wait = 2'000;                                     // wait only, fewer MADs
  std::vector<OutlierRank> out = outlier_ranks(rows);
  CHECK(out.size() == 3);
  CHECK(outliers_worst_first(out) == std::vector<int64_t>{5, 6});
}
