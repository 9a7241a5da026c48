// The rank overview's partition into display rows (core/present/rank_rows.h).
#include <doctest/doctest.h>

#include <numeric>

#include "core/present/rank_rows.h"

using namespace sl::present;

namespace {

std::vector<int64_t> iota_ranks(size_t n) {
  std::vector<int64_t> r(n);
  std::iota(r.begin(), r.end(), 0);
  return r;
}

std::map<int64_t, int64_t> nodes_of(size_t n, size_t per_node) {
  std::map<int64_t, int64_t> m;
  for (size_t i = 0; i < n; ++i) m[int64_t(i)] = int64_t(i / per_node);
  return m;
}

// Every rank in exactly one row, in order.
void check_cover(const std::vector<RankRow>& rows, size_t n) {
  size_t next = 0;
  for (const RankRow& r : rows) {
    CHECK(r.first == next);
    CHECK(r.last > r.first);
    next = r.last;
  }
  CHECK(next == n);
}

}  // namespace

TEST_CASE("rank rows: everything fits, one row per rank") {
  auto ranks = iota_ranks(8);
  auto rows = partition_rank_rows(ranks, 300, {3}, nodes_of(8, 4));
  REQUIRE(rows.size() == 8);
  check_cover(rows, 8);
  CHECK(rank_row_label(rows[3], ranks) == "rank 3");
  CHECK(!rows[3].outlier);  // nothing aggregates: no row needs to stand apart
}

TEST_CASE("rank rows: one band per node, outliers on their own rows") {
  // 1,024 ranks, 8 GPUs a node, 300 rows: 128 node bands fit; ranks 77 and 500 are outliers.
  auto ranks = iota_ranks(1024);
  auto rows = partition_rank_rows(ranks, 300, {500, 77}, nodes_of(1024, 8));
  check_cover(rows, 1024);
  CHECK(rows.size() <= 300);
  // Node 9 (ranks 72–79) is cut by rank 77: 72–76, 77, 78–79; node 62 by 500: 496–499, 500, 501–503.
  CHECK(rows.size() == 128 + 2 * 2);
  size_t outliers = 0;
  for (const RankRow& r : rows) {
    CHECK(r.node_first == r.node_last);  // no band crosses a node boundary
    CHECK(r.node_first == int64_t(r.first / 8));
    CHECK(int64_t((r.last - 1) / 8) == r.node_first);
    if (r.outlier) {
      ++outliers;
      CHECK(r.size() == 1);
      CHECK((ranks[r.first] == 77 || ranks[r.first] == 500));
    } else {
      CHECK(r.size() <= 8);
    }
  }
  CHECK(outliers == 2);
  CHECK(rank_row_label(rows[3], ranks) == "node 3 \xC2\xB7 ranks 24\xE2\x80\x93" "31");
  auto at = [&](int64_t rank) {
    for (const RankRow& r : rows)
      if (r.first <= size_t(rank) && size_t(rank) < r.last) return r;
    return RankRow{};
  };
  CHECK(at(76).first == 72);
  CHECK(at(76).last == 77);
  CHECK(at(77).outlier);
  CHECK(rank_row_label(at(77), ranks) == "rank 77");
  CHECK(at(78).first == 78);
  CHECK(at(78).last == 80);
}

TEST_CASE("rank rows: too many nodes for a band each, whole nodes share a band") {
  // 16,384 ranks on 2,048 nodes of 8 into 300 rows: bands of whole nodes, never half of one.
  auto ranks = iota_ranks(16384);
  auto rows = partition_rank_rows(ranks, 300, {9000}, nodes_of(16384, 8));
  check_cover(rows, 16384);
  CHECK(rows.size() <= 300);
  CHECK(rows.size() >= 250);  // the budget is used, not wasted
  for (const RankRow& r : rows) {
    if (r.outlier) continue;
    bool starts = r.first % 8 == 0 || r.first == 9001, ends = r.last % 8 == 0 || r.last == 9000;
    CHECK(starts);
    CHECK(ends);
  }
  size_t outliers = 0;
  for (const RankRow& r : rows) outliers += r.outlier;
  CHECK(outliers == 1);
}

TEST_CASE("rank rows: one node larger than a band is cut into ranges within it") {
  // 4,096 ranks all on one host, 100 rows, outlier 10: ranges of at most ceil(4095/99) = 42 ranks.
  auto ranks = iota_ranks(4096);
  std::map<int64_t, int64_t> one_node;
  for (int64_t r : ranks) one_node[r] = 0;
  auto rows = partition_rank_rows(ranks, 100, {10}, one_node);
  check_cover(rows, 4096);
  CHECK(rows.size() <= 100);
  CHECK(rows.size() >= 95);
  for (const RankRow& r : rows) CHECK(r.size() <= 42);
  CHECK(rows[1].outlier);
  CHECK(rank_row_label(rows[0], ranks) == "node 0 \xC2\xB7 ranks 0\xE2\x80\x93" "9");
}

TEST_CASE("rank rows: no nodes known, rank ranges; the budget holds against too many outliers") {
  auto ranks = iota_ranks(1000);
  auto rows = partition_rank_rows(ranks, 50, {}, {});
  check_cover(rows, 1000);
  CHECK(rows.size() == 50);
  CHECK(rank_row_label(rows[0], ranks) == "ranks 0\xE2\x80\x93" "19");
  // 40 outliers spread every 25 ranks need 81 rows with their bands: only the first (worst) ones stay apart.
  std::vector<int64_t> many;
  for (int64_t r = 12; r < 1000; r += 25) many.push_back(r);
  rows = partition_rank_rows(ranks, 50, many, {});
  check_cover(rows, 1000);
  CHECK(rows.size() <= 50);
  size_t kept = 0;
  for (const RankRow& r : rows) kept += r.outlier;
  CHECK(kept == 24);  // 24 outliers + 25 bands = 49 rows; a 25th needs 51
  for (const RankRow& r : rows)
    if (r.outlier) CHECK(ranks[r.first] <= many[23]);
  // Display order other than rank order (a sort): outliers found by rank number.
  std::vector<int64_t> reversed(ranks.rbegin(), ranks.rend());
  rows = partition_rank_rows(reversed, 50, {999, 0}, {});
  check_cover(rows, 1000);
  CHECK(rows.front().outlier);
  CHECK(rows.back().outlier);
  CHECK(rank_row_label(rows.front(), reversed) == "rank 999");
}
