// The rank heatmaps' headless model (core/present/rank_heatmap): exact cells of iteration time and
// collective wait on a hand-made 3-rank job, row orders, bands bounded by pixels, and the same
// matrices from the job's fleet.
#include <doctest/doctest.h>

#include "core/analysis/job_overview.h"
#include "core/fleet/fleet.h"
#include "core/present/rank_heatmap.h"
#include "tests/unit/job/job_test_util.h"

using namespace sl;
using namespace sl::present;
using namespace sl::job_test;

namespace {

// Steps (µs): rank 0: 1000, 1000; rank 1: 1000, 3000, 1000; rank 2: 1500, 1500.
// Two all-reduces ending together. #0 starts at 100/400/200 µs, ends 1000: waits 300, 0, 200.
// #1 starts at 6000/6000/6500, ends 7000: waits 500, 500, 0.
std::string heat_rank(int rank) {
  const double t0 = 1'000'000;
  const std::vector<std::vector<double>> steps = {{1000, 1000}, {1000, 3000, 1000}, {1500, 1500}};
  const double arrive0[] = {100, 400, 200}, arrive1[] = {6000, 6000, 6500};
  std::vector<std::string> ev;
  double at = t0;
  for (size_t k = 0; k < steps[rank].size(); ++k) {
    ev.push_back(X("user_annotation", "ProfilerStep#" + std::to_string(k), 1, 1, us_text(at), us_text(steps[rank][k])));
    at += steps[rank][k];
  }
  int corr = 0;
  add_collective(ev, corr, t0 + arrive0[rank], t0 + 1000, "0", "[0, 1, 2]");
  add_collective(ev, corr, t0 + arrive1[rank], t0 + 7000, "0", "[0, 1, 2]");
  return trace(ev, dist(rank, 3));
}

struct HeatJob {
  TempDir dir{"heatmap"};
  std::unique_ptr<Job> job;
  analysis::JobOverview overview;
  HeatJob() {
    for (int r = 0; r < 3; ++r) dir.write("rank_" + std::to_string(r) + ".json", heat_rank(r));
    JobResult loaded = load_job(plan_job_dir(dir.path.string()));
    REQUIRE_MESSAGE(loaded.ok(), loaded.error);
    job = std::move(loaded.job);
    overview = analysis::build_job_overview(*job);
  }
};

std::vector<TimeNs> row(const HeatmapMatrix& m, size_t r) {
  return {m.cells.begin() + std::ptrdiff_t(r * m.columns), m.cells.begin() + std::ptrdiff_t((r + 1) * m.columns)};
}

}  // namespace

TEST_CASE("rank heatmap: ranks × steps of iteration time, ranks × collectives of wait, exact") {
  HeatJob j;
  HeatmapMatrix steps = step_time_heatmap(j.overview);
  REQUIRE(steps.ranks == std::vector<int64_t>{0, 1, 2});
  REQUIRE(steps.columns == 3);
  CHECK(row(steps, 0) == std::vector<TimeNs>{1'000'000, 1'000'000, kNoCell});
  CHECK(row(steps, 1) == std::vector<TimeNs>{1'000'000, 3'000'000, 1'000'000});
  CHECK(row(steps, 2) == std::vector<TimeNs>{1'500'000, 1'500'000, kNoCell});
  CHECK(steps.min_value == 1'000'000);
  CHECK(steps.max_value == 3'000'000);
  CHECK(heatmap_column_label(steps, j.overview, 1) == "step 1");
  CHECK(steps.nodes == std::vector<int64_t>{-1, -1, -1});

  HeatmapMatrix waits = collective_wait_heatmap(j.overview);
  REQUIRE(waits.columns == 2);
  CHECK(row(waits, 0) == std::vector<TimeNs>{300'000, 500'000});
  CHECK(row(waits, 1) == std::vector<TimeNs>{0, 500'000});
  CHECK(row(waits, 2) == std::vector<TimeNs>{200'000, 0});
  CHECK(waits.min_value == 0);
  CHECK(waits.max_value == 500'000);
  CHECK(heatmap_column_label(waits, j.overview, 0) == "AllReduce #0");
  CHECK(heatmap_column_label(waits, j.overview, 1) == "AllReduce #1");
}

TEST_CASE("rank heatmap: rows by rank, by node (unknown last), by slowness (largest total first)") {
  HeatJob j;
  HeatmapMatrix steps = step_time_heatmap(j.overview, {{0, 1}, {1, 0}});
  CHECK(steps.nodes == std::vector<int64_t>{1, 0, -1});
  CHECK(order_rows(steps, RowOrder::Rank) == std::vector<size_t>{0, 1, 2});
  CHECK(order_rows(steps, RowOrder::Node) == std::vector<size_t>{1, 0, 2});
  CHECK(order_rows(steps, RowOrder::Slowness) == std::vector<size_t>{1, 2, 0});  // 5000, 3000, 2000 µs
  HeatmapMatrix waits = collective_wait_heatmap(j.overview);
  CHECK(order_rows(waits, RowOrder::Slowness) == std::vector<size_t>{0, 1, 2});  // 800, 500, 200 µs
  RowOrder o;
  CHECK((row_order_named("slowness", o) && o == RowOrder::Slowness));
  CHECK(!row_order_named("speed", o));
}

TEST_CASE("rank heatmap: more rows than pixels fold into bands showing each band's worst cell") {
  HeatJob j;
  HeatmapMatrix steps = step_time_heatmap(j.overview);
  HeatmapBands all = bin_heatmap(steps, order_rows(steps, RowOrder::Rank), 100, 100);
  CHECK(all.rows.size() == 3);
  CHECK(all.columns.size() == 3);
  CHECK(all.cells == steps.cells);

  // Two pixel rows for three ranks: rank 0 alone, then ranks 1 and 2 as one band.
  HeatmapBands two = bin_heatmap(steps, order_rows(steps, RowOrder::Rank), 2, 100);
  REQUIRE(two.rows.size() == 2);
  CHECK(two.rows[1].first == 1);
  CHECK(two.rows[1].last == 3);
  CHECK(two.at(1, 0) == 1'500'000);  // max of rank 1's 1000 and rank 2's 1500 µs
  CHECK(two.source_row[1 * 3 + 0] == 2);
  CHECK(two.at(1, 1) == 3'000'000);
  CHECK(two.source_row[1 * 3 + 1] == 1);
  CHECK(two.at(1, 2) == 1'000'000);  // rank 2 has no step 2
  CHECK(two.band_rank(steps, 1) == 1);

  // One pixel column and one row: the whole matrix's maximum, and where it is.
  HeatmapBands one = bin_heatmap(steps, order_rows(steps, RowOrder::Slowness), 1, 1);
  CHECK(one.cells == std::vector<TimeNs>{3'000'000});
  CHECK(one.source_row[0] == 1);
  CHECK(one.source_column[0] == 1);

  CHECK(fold_bands(0, 10).empty());
  CHECK(fold_bands(5, 0).size() == 1);
  CHECK(heatmap_fraction(steps, 2'000'000) == doctest::Approx(0.5));
  CHECK(heatmap_rgb(0) == Rgb{255, 255, 204});
  CHECK(heatmap_rgb(1) == Rgb{128, 0, 38});
}

TEST_CASE("rank heatmap: a fleet of the job gives the same matrices, with its nodes") {
  HeatJob j;
  std::vector<fleet::RankSummary> ranks;
  for (const JobRank& r : j.job->ranks) ranks.push_back(fleet::summarize_job_rank(r));
  fleet::FleetOptions o;
  o.gpus_per_node = 2;
  fleet::Fleet f;
  std::string error;
  REQUIRE_MESSAGE(fleet::reduce_fleet(std::move(ranks), o, f, error), error);
  analysis::JobOverview ov = fleet::overview_of_fleet(f);
  auto nodes = fleet::node_of_ranks(f);
  CHECK(nodes == std::map<int64_t, int64_t>{{0, 0}, {1, 0}, {2, 1}});
  HeatmapMatrix steps = step_time_heatmap(ov, nodes);
  CHECK(steps.cells == step_time_heatmap(j.overview).cells);
  CHECK(steps.nodes == std::vector<int64_t>{0, 0, 1});
  CHECK(collective_wait_heatmap(ov).cells == collective_wait_heatmap(j.overview).cells);
}

namespace {

// Two ranks, three steps of 2000 µs from t0. Step 0: all-reduce #0 arrives at 200/500, ends 900:
// waits 300, 0. Step 1: #1 at 400/300, ends 800 (waits 0, 100) and #2 at 1000/1200, ends 1500
// (waits 200, 0). Step 2: none. After the last step (6500/6600, ends 6900): waits 100, 0, in no step.
std::string step_wait_rank(int rank) {
  const double t0 = 1'000'000;
  std::vector<std::string> ev;
  for (int k = 0; k < 3; ++k)
    ev.push_back(X("user_annotation", "ProfilerStep#" + std::to_string(k), 1, 1, us_text(t0 + 2000.0 * k), us_text(2000)));
  const double arrive[4][2] = {{200, 500}, {2400, 2300}, {3000, 3200}, {6500, 6600}}, end[4] = {900, 2800, 3500, 6900};
  int corr = 0;
  for (int c = 0; c < 4; ++c) add_collective(ev, corr, t0 + arrive[c][rank], t0 + end[c], "0", "[0, 1]");
  return trace(ev, dist(rank, 2));
}

}  // namespace

TEST_CASE("rank heatmap: wait in collectives summed per rank and step, exact; the same from the fleet; none without starts") {
  TempDir dir{"stepwaits"};
  for (int r = 0; r < 2; ++r) dir.write("rank_" + std::to_string(r) + ".json", step_wait_rank(r));
  JobResult loaded = load_job(plan_job_dir(dir.path.string()));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error);
  analysis::JobOverview ov = analysis::build_job_overview(*loaded.job);
  REQUIRE(ov.collectives.instances.size() == 4);
  HeatmapMatrix m = step_wait_heatmap(ov);
  CHECK(m.kind == HeatmapKind::StepWaits);
  REQUIRE(m.columns == 3);
  CHECK(row(m, 0) == std::vector<TimeNs>{300'000, 200'000, 0});
  CHECK(row(m, 1) == std::vector<TimeNs>{0, 100'000, 0});
  CHECK(m.max_value == 300'000);
  CHECK(heatmap_column_label(m, ov, 2) == "step 2");
  CHECK(order_rows(m, RowOrder::Slowness) == std::vector<size_t>{0, 1});
  CHECK(heatmap_of(HeatmapKind::StepWaits, ov).cells == m.cells);
  HeatmapKind k;
  CHECK((heatmap_kind_named("step-waits", k) && k == HeatmapKind::StepWaits));
  CHECK(!heatmap_kind_named("stepwaits", k));

  // Through the fleet: the starts survive the summary's serialised form.
  std::vector<fleet::RankSummary> ranks;
  for (const JobRank& r : loaded.job->ranks) {
    fleet::RankSummary parsed;
    std::string error;
    REQUIRE_MESSAGE(fleet::parse_rank_summary(fleet::serialize_rank_summary(fleet::summarize_job_rank(r)), parsed, error), error);
    CHECK(parsed.analysis.iteration_starts.size() == 3);
    ranks.push_back(std::move(parsed));
  }
  ranks[1].analysis.iteration_starts.clear();  // as a format-1 summary reads
  fleet::Fleet f;
  std::string error;
  REQUIRE_MESSAGE(fleet::reduce_fleet(std::move(ranks), {}, f, error), error);
  HeatmapMatrix from_fleet = step_wait_heatmap(fleet::overview_of_fleet(f));
  REQUIRE(from_fleet.columns == 3);
  CHECK(row(from_fleet, 0) == row(m, 0));
  CHECK(row(from_fleet, 1) == std::vector<TimeNs>{kNoCell, kNoCell, kNoCell});
}
