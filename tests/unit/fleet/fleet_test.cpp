// Fleet scale (core/fleet): rank summaries and fleet files round-trip byte for byte; the reduce
// over summaries gives the job report's own tables (hand-made job, and the corpus 8-rank job);
// cut and flipped files are refused with what and where, never a crash.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/analysis/job_overview.h"
#include "core/analysis/job_report.h"
#include "core/fleet/fleet.h"
#include "core/fleet/fleet_report.h"
#include "core/fleet/sections.h"
#include "core/job/job.h"
#include "tests/unit/job/job_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::fleet;
using namespace sl::job_test;

namespace {

std::unique_ptr<Job> load_dir(const std::string& dir) {
  JobResult loaded = load_job(plan_job_dir(dir));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error);
  return std::move(loaded.job);
}

Fleet reduce_job(const Job& job, const std::string& source) {
  std::vector<RankSummary> ranks;
  for (const JobRank& r : job.ranks) {
    // Through the serialised form, as a worker hands it over.
    std::string error;
    RankSummary back;
    REQUIRE_MESSAGE(parse_rank_summary(serialize_rank_summary(summarize_job_rank(r)), back, error), error);
    ranks.push_back(std::move(back));
  }
  FleetOptions o;
  o.source = source;
  Fleet f;
  std::string error;
  REQUIRE_MESSAGE(reduce_fleet(std::move(ranks), o, f, error), error);
  return f;
}

// `report DIR --only collectives,stragglers,clock_offsets` and the fleet's, as text.
void check_report_equal(const Job& job, const Fleet& fleet) {
  analysis::JobReportOptions jo;
  jo.report.only = {"collectives", "stragglers", "clock_offsets", "outliers"};
  analysis::JobReport report = analysis::run_job_report(job, jo);
  FleetReportOptions fo;
  fo.only = jo.report.only;
  CHECK(render_fleet_text(fleet, fo) == analysis::render_job_text(job, report, jo));
}

// Rank `rank` of the 4-rank straggler job, summarised (the summary holds no store: the folder may go).
RankSummary straggler_summary(const std::string& name, int rank) {
  TempDir dir(name);
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  return summarize_job_rank(load_dir(dir.path.string())->ranks[size_t(rank)]);
}

Fleet round_trip(const Fleet& f) {
  Fleet back;
  std::string error;
  REQUIRE_MESSAGE(parse_fleet(serialize_fleet(f), back, error), error);
  return back;
}

}  // namespace

TEST_CASE("fleet: a rank summary round-trips byte for byte and keeps what the analysis reads") {
  TempDir dir("fleet_rank");
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  auto job = load_dir(dir.path.string());
  RankSummary s = summarize_job_rank(job->ranks[1]);
  REQUIRE(s.ok());
  CHECK(s.rank == 1);
  CHECK(!s.analysis.calls.empty());
  CHECK(!s.profile.levels.empty());
  CHECK(s.profile.levels.back().busy.size() == 1);
  CHECK(!s.streams.empty());
  CHECK(!s.top_kernels.empty());
  std::string bytes = serialize_rank_summary(s);
  RankSummary back;
  std::string error;
  REQUIRE_MESSAGE(parse_rank_summary(bytes, back, error), error);
  CHECK(serialize_rank_summary(back) == bytes);
  CHECK(back.analysis.busy.merged().size() == s.analysis.busy.merged().size());
  CHECK(back.analysis.calls.size() == s.analysis.calls.size());
  CHECK(back.analysis.origin_ns == s.analysis.origin_ns);
  // Without TIME the bytes are the same for two maps of one rank.
  RankSummary again = summarize_job_rank(job->ranks[1]);
  again.load_seconds = 123;
  CHECK(serialize_rank_summary(again, false) == serialize_rank_summary(s, false));
}

TEST_CASE("fleet: the reduce's first pass and the last ranks' causes read a summary straight from its bytes") {
  RankSummary s = straggler_summary("fleet_straight", 2);
  REQUIRE(s.ok());
  // Format 2 ends the analysis section with the iteration starts: the first pass reads past them
  // (it once stopped short and fell back to the whole parse for every rank).
  s.analysis.iteration_durations = {1000, 1000, 1000};
  s.analysis.iteration_starts = {0, 1000, 2000};
  const std::string bytes = serialize_rank_summary(s);
  struct Sink final : analysis::CallSink {
    analysis::RankColumns columns;
    size_t announced = 0;
    std::vector<TimeNs> starts;
    void rank(const analysis::RankColumns& c, size_t calls) override { columns = c, announced = calls, starts.clear(); }
    void call(size_t, const analysis::CallView& c) override { starts.push_back(c.start); }
  };
  for (bool checked : {false, true}) {
    Sink sink;
    std::optional<analysis::IdleCause> top;
    REQUIRE(read_rank_calls(bytes, 2, sink, top, checked));
    CHECK(sink.announced == s.analysis.calls.size());
    REQUIRE(sink.starts.size() == s.analysis.calls.size());
    for (size_t k = 0; k < sink.starts.size(); ++k) CHECK(sink.starts[k] == s.analysis.calls[k].start);
    const analysis::RankColumns want = analysis::rank_columns(s.analysis);
    CHECK(sink.columns.iterations == 3);
    CHECK(sink.columns.compute == want.compute);
    CHECK(sink.columns.communication == want.communication);
    CHECK(sink.columns.idle == want.idle);
    CHECK(top == top_idle_cause(s.analysis));
    analysis::RankSummary activity;
    REQUIRE(read_rank_activity(bytes, activity, checked));
    CHECK(activity.busy.merged().size() == s.analysis.busy.merged().size());
    CHECK(activity.compute.merged().size() == s.analysis.compute.merged().size());
    REQUIRE(activity.causes.gaps.size() == s.analysis.causes.gaps.size());
    for (size_t g = 0; g < activity.causes.gaps.size(); ++g) {
      CHECK(activity.causes.gaps[g].start == s.analysis.causes.gaps[g].start);
      CHECK(activity.causes.gaps[g].cause == s.analysis.causes.gaps[g].cause);
    }
    CHECK(activity.calls.empty());  // never decoded
  }
  // A flipped byte: the checked read refuses it; the reduce's reads trust what was verified.
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  Sink sink;
  std::optional<analysis::IdleCause> top;
  analysis::RankSummary activity;
  CHECK(!read_rank_calls(flipped, 2, sink, top));
  CHECK(!read_rank_activity(flipped, activity));
}

TEST_CASE("fleet: the reduce gives the job report's tables, and the fleet file keeps them") {
  TempDir dir("fleet_job");
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  auto job = load_dir(dir.path.string());
  Fleet f = reduce_job(*job, job->source);
  check_report_equal(*job, f);
  Fleet back = round_trip(f);
  check_report_equal(*job, back);
  CHECK(serialize_fleet(back) == serialize_fleet(f));
  FleetReportOptions all;
  CHECK(render_fleet_text(back, all) == render_fleet_text(f, all));
  auto tables = fleet_report_tables(back, all);
  std::vector<std::string> names;
  for (auto& t : tables) names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"collectives", "stragglers", "clock_offsets", "ranks", "outliers", "nodes"});
}

TEST_CASE("fleet: outliers beyond 3 MAD, nodes by --gpus-per-node, a failed rank noted as report DIR notes it") {
  TempDir dir("fleet_nodes");
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  auto job = load_dir(dir.path.string());
  std::vector<RankSummary> ranks;
  for (const JobRank& r : job->ranks) ranks.push_back(summarize_job_rank(r));
  ranks.push_back(failed_rank("missing/rank_9.json", 9, "no such file"));
  FleetOptions o;
  o.gpus_per_node = 2;
  Fleet f;
  std::string error;
  REQUIRE(reduce_fleet(ranks, o, f, error));
  const analysis::Table& nodes = f.tables[2];
  REQUIRE(nodes.name == "nodes");
  CHECK(nodes.rows.size() == 3);  // ranks 0-1, 2-3, and the failed rank 9's node 4
  FleetReportOptions fo;
  std::string text = render_fleet_text(f, fo);
  CHECK(text.find("rank 9 failed to load: missing/rank_9.json: no such file") != std::string::npos);
  CHECK(text.find("ranks: 5 (4 loaded)") != std::string::npos);
  // Two summaries of one rank: refused, naming both files.
  ranks.push_back(ranks[0]);
  CHECK_FALSE(reduce_fleet(ranks, o, f, error));
  CHECK(error.find("two summaries claim rank 0") != std::string::npos);
}

TEST_CASE("fleet: the corpus 8-rank job reduces to report DIR's job tables") {
  if (!test::have_shared()) return;
  std::string dir = (test::shared_dir() / "corpus" / "param_dlrm_8rank").string();
  auto job = load_dir(dir);
  REQUIRE(job->ranks.size() == 8);
  Fleet f = round_trip(reduce_job(*job, job->source));
  check_report_equal(*job, f);
  for (std::string_view packed : f.packed) CHECK(packed.size() < 64 * 1024);
}

TEST_CASE("fleet: a cut or flipped fleet file is refused with what and where, never a crash") {
  TempDir dir("fleet_damage");
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  auto job = load_dir(dir.path.string());
  std::string bytes = serialize_fleet(reduce_job(*job, job->source));
  Fleet out;
  std::string error;
  size_t refused = 0, tries = 0;
  for (size_t cut = 0; cut < bytes.size(); cut += std::max<size_t>(1, bytes.size() / 400)) {
    ++tries;
    if (!parse_fleet(std::string_view(bytes).substr(0, cut), out, error)) ++refused;
    CHECK(error.find("fleet file") != std::string::npos);
  }
  CHECK(refused == tries);  // every cut: sections are counted in the header
  for (size_t at = 0; at < bytes.size(); at += std::max<size_t>(1, bytes.size() / 400)) {
    std::string flipped = bytes;
    flipped[at] = char(flipped[at] ^ 0x10);
    error.clear();
    bool ok = parse_fleet(flipped, out, error);
    CAPTURE(at);
    CHECK_FALSE(ok);
    CHECK(error.find("byte") != std::string::npos);
  }
  std::string future = bytes;
  future[8] = 99;  // version 99
  CHECK_FALSE(parse_fleet(future, out, error));
  CHECK(error.find("version 99") != std::string::npos);
}

TEST_CASE("fleet: the file is written atomically and named by its magic") {
  TempDir dir("fleet_file");
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  auto job = load_dir(dir.path.string());
  Fleet f = reduce_job(*job, job->source);
  std::string path = (dir.path / "run.slfleet").string(), error;
  REQUIRE_MESSAGE(write_fleet_file(path, f, error), error);
  CHECK(is_fleet_file(path));
  CHECK_FALSE(is_fleet_file((dir.path / "rank_0.json").string()));
  Fleet back;
  REQUIRE_MESSAGE(read_fleet_file(path, back, error), error);
  CHECK(back.ranks.size() == 4);
  for (const auto& e : std::filesystem::directory_iterator(dir.path))
    CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}
