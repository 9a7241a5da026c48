// Distributed jobs: the job overview, per-rank busy and idle-cause columns on the job clock,
// re-aligning, the stragglers insight, and binning against IntervalIndex.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>

#include "core/analysis/collectives.h"
#include "core/analysis/interval_index.h"
#include "core/analysis/job_overview.h"
#include "core/analysis/report_tables.h"
#include "core/job/job.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/job/job_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::job_test;
using sl::analysis::test::usec;

TEST_CASE("job overview: per-rank busy and idle-cause columns on the job clock, straggler insight") {
  TempDir dir("overview");
  for (int r = 0; r < 4; ++r) dir.write("rank" + std::to_string(r) + ".json", straggler_rank(r));
  JobResult loaded = load_job(plan_job_dir(dir.path.string()));
  REQUIRE(loaded.ok());
  JobOverview ov = build_job_overview(*loaded.job);
  REQUIRE(ov.ranks.size() == 4);
  CHECK(ov.collectives.instances.size() == 4);
  // Every rank starts with the same warm-up launch, so the job clock is each rank's own.
  for (const RankActivity& r : ov.ranks) CHECK(r.shift == 0);
  CHECK(ov.span == usec(1500 + 3 * 5000 + 4600));
  // Iteration 0 is job time 1500..6500 µs, binned into 1 ms columns.
  auto bins_of = [&](int64_t rank) { return bin_rank(ov.ranks[size_t(rank)], usec(1500), usec(6500), 5); };
  RankBins late = bins_of(2), early = bins_of(0);
  // Rank 2: 3 ms in the data loader (GPU idle), gemm 4520..5520, all-reduce 5600..6100.
  for (int c = 0; c < 3; ++c) {
    CHECK(late.busy[size_t(c)] == doctest::Approx(0.0));
    CHECK(late.cause[size_t(c)] == int(IdleCause::DataLoading));
  }
  CHECK(late.busy[3] == doctest::Approx(0.98));
  CHECK(late.busy[4] == doctest::Approx(0.52));
  // Rank 0: gemm 1520..2520, then the all-reduce waits for rank 2 from 2600 to 6100.
  CHECK(early.busy[0] == doctest::Approx(0.98));
  CHECK(early.busy[1] == doctest::Approx(0.92));
  CHECK(early.busy[2] == doctest::Approx(1.0));
  CHECK(early.busy[3] == doctest::Approx(1.0));
  CHECK(early.busy[4] == doctest::Approx(0.6));
  CHECK(early.cause[2] == -1);  // no idle gap inside the all-reduce
  // Empty or inverted ranges give no columns; a zoom into one column keeps exact fractions.
  CHECK(bin_rank(ov.ranks[0], usec(10), usec(10), 4).busy.empty());
  CHECK(bin_rank(ov.ranks[0], usec(1520), usec(2520), 1).busy[0] == doctest::Approx(1.0));
  CHECK(straggler_insight(ov.collectives) ==
        "rank 2 made the others wait 36.0 ms over 4 all-reduces, mostly after data-loading stalls");
  REQUIRE(straggler_of(ov.collectives, 2) != nullptr);
  CHECK(straggler_of(ov.collectives, 2)->late_count == 4);
  CHECK(straggler_of(ov.collectives, 9) == nullptr);
}

namespace {

// Everything an overview shows, as text: the job tables, offsets, each rank's place on the job
// clock and its columns over the whole span, and each arrival's slice.
std::string overview_text(const JobOverview& ov) {
  std::string out = "span " + std::to_string(ov.span) + " origin " + std::to_string(ov.collectives.origin_ns) +
                    (ov.collectives.aligned ? " aligned\n" : " raw\n");
  for (const Table& t : collective_tables(ov.collectives))
    for (const auto& row : t.rows) {
      out += t.name + ":";
      for (const Cell& c : row) out.append(" ").append(cell_json(c));
      out += "\n";
    }
  for (const std::string& n : ov.collectives.notes) out += "note: " + n + "\n";
  for (const CollectiveInstance& in : ov.collectives.instances)
    for (const CollectiveArrival& a : in.arrivals)
      out += "slice " + std::to_string(a.slice.track) + "/" + std::to_string(a.slice.index) + "\n";
  std::vector<TimeNs> edges = column_edges(0, std::max<TimeNs>(ov.span, 1), 64);
  for (const RankActivity& r : ov.ranks) {
    out += "rank " + std::to_string(r.rank) + " file " + std::to_string(r.job_index) + " shift " + std::to_string(r.shift) +
           " gpu " + std::to_string(r.start) + ".." + std::to_string(r.end) + ":";
    RankBins bins = bin_rank(r, edges);
    for (size_t c = 0; c < bins.busy.size(); ++c)
      out.append(" ").append(std::to_string(bins.busy[c])).append("/").append(std::to_string(bins.cause[c]));
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("job overview: re-aligning reuses the rank summaries and equals a fresh build") {
  std::vector<std::string> straggler;
  for (int r = 0; r < 4; ++r) straggler.push_back(straggler_rank(r));
  for (const auto& [name, texts] : {std::pair{"straggler", straggler}, std::pair{"two hosts", two_host_ranks()}}) {
    CAPTURE(name);
    TempDir dir("realign");
    for (size_t r = 0; r < texts.size(); ++r) dir.write("rank_" + std::to_string(r) + ".json", texts[r]);
    JobResult loaded = load_job(plan_job_dir(dir.path.string()));
    REQUIRE_MESSAGE(loaded.ok(), loaded.error);
    JobOverview first = build_job_overview(*loaded.job);  // auto, as the job tab opens
    std::map<Align, JobOverview> realigned;
    for (Align align : {Align::Collectives, Align::None, Align::Auto}) {
      CAPTURE(int(align));
      CollectiveOptions o;
      o.align = align;
      JobOverview re = realign_job_overview(first, o);
      CHECK(overview_text(re) == overview_text(build_job_overview(*loaded.job, o)));
      REQUIRE(re.ranks.size() == first.ranks.size());
      for (size_t k = 0; k < re.ranks.size(); ++k) {  // the very same summaries: no pass over events
        CHECK(re.ranks[k].summary == first.ranks[k].summary);
        CHECK(re.ranks[k].idle == first.ranks[k].idle);
      }
      realigned[align] = std::move(re);
    }
    const JobOverview &aligned = realigned[Align::Collectives], &raw = realigned[Align::None];
    CHECK(aligned.collectives.aligned);
    CHECK_FALSE(raw.collectives.aligned);
    if (std::string(name) == "two hosts") {  // aligning moves host B's ranks back by its clock lead
      for (size_t k : {2, 3}) CHECK(std::abs(raw.ranks[k].shift - aligned.ranks[k].shift - TimeNs(kHostB * 1000)) <= usec(10));
      CHECK(raw.span > usec(1234000));
      CHECK(aligned.span < usec(30000));
    } else {  // one host: only rank 2's lateness, which aligning on the ends does not remove
      CHECK(overview_text(realigned[Align::Auto]) == overview_text(raw));
      for (const CollectiveInstance& in : aligned.collectives.instances) CHECK(in.last_rank == 2);
    }
  }
}

TEST_CASE("job overview: the stragglers insight names the collective kind and the cause in words") {
  CollectiveAnalysis a;
  auto late = [&](std::string name, int64_t rank, TimeNs skew) {
    CollectiveInstance in;
    in.name = std::move(name), in.last_rank = rank, in.skew = skew;
    a.instances.push_back(in);
  };
  StragglerRow five;
  five.rank = 5, five.late_count = 12, five.delay_caused = usec(38'000), five.top_cause = "data_loading";
  StragglerRow three;
  three.rank = 3, three.late_count = 1, three.delay_caused = usec(1'000), three.top_cause = "launch_bound";
  a.stragglers = {five, three};
  CHECK(straggler_insight(a) == "rank 5 made the others wait 38.0 ms over 12 collectives, mostly after data-loading stalls");
  for (int k = 0; k < 12; ++k) late("AllReduce", 5, usec(100));
  late("ReduceScatter", 3, usec(100));
  late("AllGather", 5, 0);  // no skew: rank 5 was not late for it
  CHECK(straggler_insight(a) == "rank 5 made the others wait 38.0 ms over 12 all-reduces, mostly after data-loading stalls");
  late("send/recv 0->5", 5, usec(100));  // a second kind: the generic word again
  CHECK(straggler_insight(a) == "rank 5 made the others wait 38.0 ms over 12 collectives, mostly after data-loading stalls");
  a.stragglers[0].delay_caused = 0;  // rank 3 now: one reduce-scatter
  CHECK(straggler_insight(a) == "rank 3 made the others wait 1.0 ms over 1 reduce-scatter, mostly after launch-bound dispatch");
  a.stragglers[1].top_cause = "compute";
  CHECK(straggler_insight(a) == "rank 3 made the others wait 1.0 ms over 1 reduce-scatter, mostly after compute");
  a.stragglers[1].delay_caused = 0;
  CHECK(straggler_insight(a).empty());
}

TEST_CASE("job overview: Coverage's one-pass cumulative equals IntervalIndex at every edge") {
  // Overlapping, touching and nested intervals; edges before, inside, between and after them,
  // both dense (many edges per interval) and sparse (many intervals per edge: the gallop).
  std::vector<Interval> intervals;
  uint64_t seed = 12345;
  auto next = [&](uint64_t mod) { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, (seed >> 33) % mod; };
  for (int i = 0; i < 2000; ++i) {
    TimeNs s = TimeNs(next(1'000'000));
    intervals.push_back({s, s + TimeNs(next(900)) + 1});
  }
  Coverage coverage(intervals);
  IntervalIndex index(intervals);
  for (TimeNs step : {TimeNs(7), TimeNs(1000), TimeNs(250'000)}) {
    std::vector<TimeNs> edges, got;
    for (TimeNs t = -5000; t < 1'010'000; t += step) edges.push_back(t);
    coverage.cumulative(edges, got);
    REQUIRE(got.size() == edges.size());
    for (size_t k = 0; k < edges.size(); ++k) {
      CAPTURE(edges[k]);
      CHECK(got[k] == index.covered(INT64_MIN / 2, edges[k]));
    }
  }
}

TEST_CASE("job overview: binning visits few intervals directly, many in one pass, with the same exact columns") {
  // Random busy intervals and idle gaps of three causes (rank-local), a shifted rank, and views
  // from the whole span (the cumulative pass) down to a few columns' worth of intervals (visited).
  uint64_t seed = 777;
  auto next = [&](uint64_t mod) { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, (seed >> 33) % mod; };
  auto random_intervals = [&](int n, TimeNs longest) {
    std::vector<Interval> v;
    for (int i = 0; i < n; ++i) {
      TimeNs s = TimeNs(next(10'000'000));
      v.push_back({s, s + TimeNs(next(uint64_t(longest))) + 1});
    }
    return v;
  };
  RankActivity rank;
  rank.shift = 123'457;
  auto summary = std::make_shared<RankSummary>();
  summary->busy = IntervalIndex(random_intervals(3000, 4000));
  auto idle = std::make_shared<IdleCoverage>();
  const int causes[] = {int(IdleCause::DataLoading), int(IdleCause::HostSync), int(IdleCause::Other)};
  for (int c : causes) (*idle)[size_t(c)] = Coverage(random_intervals(800, 9000));
  rank.summary = summary;
  rank.idle = idle;
  for (TimeNs width : {TimeNs(12'000'000), TimeNs(1'000'000), TimeNs(80'000), TimeNs(9'000), TimeNs(700)}) {
    for (TimeNs t0 : {TimeNs(0), TimeNs(3'333'333), TimeNs(9'990'000)}) {
      for (int columns : {1, 7, 640}) {
        CAPTURE(width);
        CAPTURE(t0);
        CAPTURE(columns);
        std::vector<TimeNs> edges = column_edges(t0, t0 + width, columns);
        RankBins bins = bin_rank(rank, edges);
        REQUIRE(bins.busy.size() == size_t(columns));
        for (size_t c = 0; c < size_t(columns); ++c) {
          TimeNs a = edges[c] - rank.shift, b = edges[c + 1] - rank.shift;
          CHECK(bins.busy[c] == float(double(rank.summary->busy.covered(a, b)) / double(b - a)));
          int8_t expected = -1;
          TimeNs most = 0;
          for (int k = 0; k < kIdleCauseCount; ++k)
            if (TimeNs v = (*rank.idle)[size_t(k)].covered(a, b); v > most) most = v, expected = int8_t(k);
          CHECK(bins.cause[c] == expected);
        }
      }
    }
  }
}
