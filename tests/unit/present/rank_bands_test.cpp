// The rank overview's bands (core/present/rank_bands): a band of one rank equals the rank's own
// bins, a band's median and worst over members, shifts onto the job clock, the level picked per
// column width, and rows recomputed only when the window changes.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "core/analysis/job_overview.h"
#include "core/present/rank_bands.h"

using namespace sl;
using namespace sl::present;

namespace {

// A rank busy over `busy` and idle by `cause` over `idle` (rank-local ns), shifted by `shift`.
analysis::RankActivity activity(int64_t rank, std::vector<analysis::Interval> busy, std::vector<analysis::Interval> idle,
                                analysis::IdleCause cause, TimeNs shift = 0) {
  auto summary = std::make_shared<analysis::RankSummary>();
  summary->rank = rank;
  summary->busy = analysis::IntervalIndex(std::move(busy));
  auto coverage = std::make_shared<analysis::IdleCoverage>();
  (*coverage)[size_t(cause)] = analysis::IntervalIndex(std::move(idle));
  analysis::RankActivity a;
  a.rank = rank;
  a.shift = shift;
  a.summary = std::move(summary);
  a.idle = std::move(coverage);
  return a;
}

// A column is resampled from the bins of the level the window picked (at most as wide as a column,
// or the finest): it equals the rank's exact column where the rank does not change within a bin of
// it, and the busy time over the whole window is kept.
void check_like_bins(const BandColumns& columns, const BandRow& got, const analysis::RankBins& want) {
  size_t n = want.busy.size();
  REQUIRE(got.median.busy.size() == n);
  const BandPyramid& p = columns.pyramid();
  double bin = double(p.span) / double(p.finest) * double(p.levels[columns.level()].finest_per_bin);
  double column = columns.column_ns();
  auto reach = size_t(std::ceil(bin / column));
  double got_total = 0, want_total = 0;
  for (size_t c = 0; c < n; ++c) {
    got_total += got.median.busy[c], want_total += want.busy[c];
    if (c < reach || c + reach >= n) continue;
    bool flat = true;
    for (size_t d = c - reach; d <= c + reach; ++d) flat = flat && want.busy[d] == want.busy[c] && want.cause[d] == want.cause[c];
    if (!flat) continue;
    CHECK(got.median.busy[c] == doctest::Approx(want.busy[c]).epsilon(0.01));
    CHECK(got.worst.busy[c] == doctest::Approx(want.busy[c]).epsilon(0.01));
    CHECK(got.median.cause[c] == want.cause[c]);
  }
  CHECK(got_total == doctest::Approx(want_total).epsilon(0.01));
}

}  // namespace

TEST_CASE("rank bands: a band of one rank is that rank's bins") {
  // Busy the first half, idle after it (data loading); a second, shifted rank alone in band 1.
  analysis::RankActivity r0 = activity(0, {{0, 500'000}}, {{500'000, 1'000'000}}, analysis::IdleCause::DataLoading);
  analysis::RankActivity r1 = activity(1, {{0, 250'000}}, {{250'000, 500'000}}, analysis::IdleCause::HostSync, 500'000);
  BandPyramid p = build_band_pyramid({{&r0}, {&r1}}, 1'000'000, 2, nullptr, 1000);
  CHECK(p.finest == 1000);
  CHECK(p.members == std::vector<uint32_t>{1, 1});
  CHECK(p.levels.back().bins == 1);
  BandColumns columns(std::make_shared<const BandPyramid>(std::move(p)));
  for (int n : {10, 20, 100, 1000, 3000}) {
    check_like_bins(columns, columns.row(0, 0, 1e6, n), analysis::bin_rank(r0, 0, 1'000'000, n));
    check_like_bins(columns, columns.row(1, 0, 1e6, n), analysis::bin_rank(r1, 0, 1'000'000, n));
  }
  const BandRow& ten = columns.row(0, 0, 1e6, 10);
  CHECK(ten.median.busy[0] == doctest::Approx(1.0));
  CHECK(ten.median.cause[9] == int8_t(analysis::IdleCause::DataLoading));
}

TEST_CASE("rank bands: median and worst of the members per column") {
  // Three ranks over [0, 1000): busy 200, 500 and 900 ns of it; plus one rank that failed (null).
  analysis::RankActivity a = activity(0, {{0, 200}}, {{200, 1000}}, analysis::IdleCause::DataLoading);
  analysis::RankActivity b = activity(1, {{0, 500}}, {{500, 1000}}, analysis::IdleCause::HostSync);
  analysis::RankActivity c = activity(2, {{0, 900}}, {{900, 1000}}, analysis::IdleCause::HostSync);
  BandPyramid p = build_band_pyramid({{&a, &b, nullptr, &c}, {}}, 1000, 1, nullptr, 16);
  CHECK(p.members == std::vector<uint32_t>{3, 0});
  BandColumns columns(std::make_shared<const BandPyramid>(std::move(p)));
  const BandRow& whole = columns.row(0, 0, 1000, 1);  // one column: the coarsest level
  CHECK(columns.level() == columns.pyramid().levels.size() - 1);
  CHECK(whole.median.busy[0] == doctest::Approx(128 / 255.0).epsilon(0.001));  // rank 1's 0.5
  CHECK(whole.worst.busy[0] == doctest::Approx(51 / 255.0).epsilon(0.001));         // rank 0's 0.2
  // The cause is voted per finest bin and summed upwards: data loading idles rank 0 over 13 of the
  // 16 finest bins, host sync ranks 1 and 2 over 8 + 2.
  CHECK(whole.median.cause[0] == int8_t(analysis::IdleCause::DataLoading));
  const BandRow& fine = columns.row(0, 0, 1000, 1000);  // finer than the finest bins: level 0
  CHECK(columns.level() == 0);
  CHECK(fine.median.busy[100] == doctest::Approx(1.0));   // every member busy at 100 ns
  CHECK(fine.worst.busy[300] == doctest::Approx(0.0));         // rank 0 idle at 300 ns
  CHECK(fine.median.busy[950] == doctest::Approx(0.0));   // only rank 2 busy in the last bin's part
  const BandRow& empty = columns.row(1, 0, 1000, 10);
  CHECK(empty.median.busy == std::vector<float>(10, 0.f));
  CHECK(empty.median.cause == std::vector<int8_t>(10, -1));
}

TEST_CASE("rank bands: rows are recomputed only when the window or width changes") {
  analysis::RankActivity a = activity(0, {{0, 500}}, {{500, 1000}}, analysis::IdleCause::DataLoading);
  BandColumns columns(std::make_shared<const BandPyramid>(build_band_pyramid({{&a}, {&a}}, 1000, 1)));
  columns.row(0, 0, 1000, 100), columns.row(1, 0, 1000, 100);
  uint64_t version = columns.version();
  CHECK(columns.rows_computed() == 2);
  columns.row(0, 0, 1000, 100), columns.row(1, 0, 1000, 100);
  CHECK(columns.rows_computed() == 2);
  CHECK(columns.version() == version);
  columns.row(0, 0, 1000, 101);
  CHECK(columns.rows_computed() == 3);
  CHECK(columns.version() == version + 1);
  columns.row(0, -500, 500, 101);  // half outside the job: no busy there
  CHECK(columns.rows_computed() == 4);
  CHECK(columns.row(0, -500, 500, 101).median.busy[10] == 0.f);
  CHECK(columns.row(0, -500, 500, 101).median.busy[60] == doctest::Approx(1.0));
  CHECK(columns.rows_computed() == 4);
}

// `count` ranks over [0, span) of random busy and idle stretches up to 20 µs, rank r idle for
// `cause(r)`, each shifted up to 100 µs.
template <class Cause>
std::vector<analysis::RankActivity> random_ranks(std::mt19937_64& rng, int count, TimeNs span, Cause&& cause) {
  std::vector<analysis::RankActivity> ranks;
  for (int r = 0; r < count; ++r) {
    std::vector<analysis::Interval> busy, idle;
    for (TimeNs t = TimeNs(rng() % 1000); t < span - 20'000;) {
      TimeNs on = 1 + TimeNs(rng() % 20'000), off = 1 + TimeNs(rng() % 20'000);
      busy.push_back({t, t + on}), idle.push_back({t + on, t + on + off});
      t += on + off;
    }
    ranks.push_back(activity(r, busy, idle, cause(r), TimeNs(rng() % 100'000)));
  }
  return ranks;
}

TEST_CASE("rank bands: random ranks at any zoom are within a bin of bin_rank") {
  std::mt19937_64 rng(38);
  const TimeNs span = 10'000'000;
  std::vector<analysis::RankActivity> ranks = random_ranks(rng, 5, span, [](int) { return analysis::IdleCause::LaunchBound; });
  std::vector<std::vector<const analysis::RankActivity*>> bands;
  for (const auto& r : ranks) bands.push_back({&r});
  BandColumns columns(std::make_shared<const BandPyramid>(build_band_pyramid(bands, span + 100'000, 2)));
  for (auto [t0, t1] : {std::pair<double, double>{0, 10'100'000}, {2'000'000, 3'000'000}, {5'000'000, 5'010'000}}) {
    int n = 1000;
    for (size_t r = 0; r < ranks.size(); ++r) {
      analysis::RankBins want = analysis::bin_rank(ranks[r], TimeNs(t0), TimeNs(t1), n);
      const BandRow& got = columns.row(r, t0, t1, n);
      check_like_bins(columns, got, want);
      double error = 0;  // where the rank changes within a bin of a column: off by at most that bin's share
      for (int c = 0; c < n; ++c) error += std::fabs(double(got.median.busy[size_t(c)]) - double(want.busy[size_t(c)]));
      CHECK(error / n < 0.15);
    }
  }
}

TEST_CASE("rank bands: levels() are row() quantised, the worst only where below the median") {
  std::mt19937_64 rng(48);
  const TimeNs span = 10'000'000;
  std::vector<analysis::RankActivity> ranks =
      random_ranks(rng, 12, span, [](int r) { return r % 2 ? analysis::IdleCause::LaunchBound : analysis::IdleCause::HostSync; });
  std::vector<std::vector<const analysis::RankActivity*>> bands(3);
  for (size_t r = 0; r < ranks.size(); ++r) bands[r % 3].push_back(&ranks[r]);
  BandColumns columns(std::make_shared<const BandPyramid>(build_band_pyramid(bands, span + 100'000, 2)));
  for (auto [t0, t1] : {std::pair<double, double>{0, 10'100'000}, {-1'000'000, 3'000'000}, {5'000'000, 5'010'000}, {123'456, 7'654'321}})
    for (int n : {1, 77, 1000, 1298})
      for (int levels : {1, 3, 16})
        for (size_t b = 0; b < bands.size(); ++b) {
          BandRow row = columns.row(b, t0, t1, n);  // a copy: levels() below may reuse the window's buffers
          const BandLevels& q = columns.levels(b, t0, t1, n, levels);
          REQUIRE(q.median.size() == size_t(n));
          int off = 0, other_cause = 0;
          for (size_t c = 0; c < size_t(n); ++c) {
            int m = busy_level(row.median.busy[c], levels), w = busy_level(row.worst.busy[c], levels);
            off += std::abs(int(q.median[c]) - m) > 0;
            CHECK(std::abs(int(q.median[c]) - m) <= 1);  // integer weights: a tie may round the other way
            CHECK(q.worst[c] <= q.median[c]);
            if (q.worst[c] > 0) CHECK(q.worst[c] < q.median[c]);
            if (w > 1 && w + 2 < m) CHECK(q.worst[c] > 0);
            other_cause += q.cause[c] != row.median.cause[c];  // near-equal pieces: the integer weights tie
            CHECK((q.cause[c] >= 0) == (row.median.cause[c] >= 0));
          }
          CHECK(off <= n / 50 + 1);
          INFO("columns ", n, " levels ", levels, " t0 ", t0);
          CHECK(other_cause <= n / 10 + 1);
        }
}
