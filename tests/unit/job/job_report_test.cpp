// Distributed jobs: the job report, every analysis per rank with its rank column, on a
// hand-made job and on the corpus job against the report of each rank file alone.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/analysis/job_report.h"
#include "core/import/trace_loader.h"
#include "core/job/job.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/job/job_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::job_test;

namespace {

// The four-rank straggler job (job_test_util.h), loaded from `dir`.
JobResult straggler_job(const TempDir& dir) {
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  JobResult loaded = load_job(plan_job_dir(dir.path.string()));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error);
  return loaded;
}

}  // namespace

TEST_CASE("job report: every analysis per rank with its rank column, --rank picks one") {
  TempDir dir("report");
  JobResult loaded = straggler_job(dir);
  JobReportOptions o;
  JobReport all = run_job_report(*loaded.job, o);
  auto table = [](const JobReport& r, const std::string& name) -> const Table& {
    auto it = std::find_if(r.tables.begin(), r.tables.end(), [&](auto& t) { return t.name == name; });
    REQUIRE(it != r.tables.end());
    return *it;
  };
  const Table& tb = table(all, "temporal_breakdown");
  REQUIRE(tb.rows.size() == 4);
  for (int r = 0; r < 4; ++r) CHECK(tb.rows[size_t(r)][0].i == r);
  const Table& kt = table(all, "kernel_type_breakdown");
  CHECK(kt.columns.front() == "rank");
  CHECK(table(all, "stragglers").rows.size() == 4);
  o.only_rank = 2;
  JobReport one = run_job_report(*loaded.job, o);
  CHECK(table(one, "temporal_breakdown").rows.size() == 1);
  CHECK(table(one, "stragglers").rows.size() == 1);
  CHECK(table(one, "collectives").rows.size() == 4);
  std::string json = render_job_json(*loaded.job, one, o);
  CHECK(json.find("\"rank\": 2,") != std::string::npos);
  CHECK(json.find("\"stragglers\": [") != std::string::npos);
}

TEST_CASE("job report text: opens with the job's insights and stragglers, then the per-rank tables") {
  TempDir dir("report_text");
  JobResult loaded = straggler_job(dir);
  JobReportOptions o;
  JobReport report = run_job_report(*loaded.job, o);
  std::string text = render_job_text(*loaded.job, report, o);
  size_t insights = text.find("== job insights ==");
  REQUIRE(insights != std::string::npos);
  CHECK(insights < text.find("stragglers: rank"));
  CHECK(text.find("rank 0: trace span") != std::string::npos);  // each rank's headline
  size_t stragglers = text.find("== stragglers ==");
  size_t per_rank = text.find("== temporal_breakdown ==");
  REQUIRE(stragglers != std::string::npos);
  REQUIRE(per_rank != std::string::npos);
  // Were the last tables of the text, after every rank's tables (line 1,644 of 1,801 on a real job).
  CHECK(insights < stragglers);
  CHECK(stragglers < per_rank);
  CHECK(per_rank < text.find("== collectives =="));
  // The insights table is JSON only, as for one rank; the ledger's tables wait for --explain.
  CHECK(text.find("== insights ==") == std::string::npos);
  CHECK(text.find("== ledger ==") == std::string::npos);
}

TEST_CASE("job report on the corpus: per-rank numbers equal the report of each rank file alone") {
  if (!sl::test::have_shared()) return;
  std::string dir = (sl::test::shared_dir() / "corpus" / "param_dlrm_8rank").string();
  JobResult loaded = load_job(plan_job_dir(dir));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error);
  REQUIRE(loaded.job->ranks.size() == 8);
  CHECK(loaded.job->loaded_count() == 8);
  JobReport job = run_job_report(*loaded.job, {});
  for (const JobRank& rank : loaded.job->ranks) {
    CAPTURE(rank.rank);
    CHECK(rank.rank_source == RankSource::DistributedInfo);
    LoadResult alone = load_trace(rank.path);
    REQUIRE(alone.ok());
    Report r = run_report(*alone.store, {});
    for (const Table& t : report_tables(r)) {
      CAPTURE(t.name);
      auto merged = std::find_if(job.tables.begin(), job.tables.end(), [&](auto& m) { return m.name == t.name; });
      REQUIRE(merged != job.tables.end());
      bool added_rank = std::find(t.columns.begin(), t.columns.end(), "rank") == t.columns.end();
      size_t rank_col = size_t(std::find(merged->columns.begin(), merged->columns.end(), "rank") - merged->columns.begin());
      std::vector<std::string> mine, expected;
      for (const auto& row : merged->rows) {
        if (row[rank_col].kind != Cell::Int || row[rank_col].i != rank.rank) continue;
        std::string s;
        for (size_t k = added_rank ? 1 : 0; k < row.size(); ++k) s += cell_json(row[k]) + ",";
        mine.push_back(s);
      }
      for (const auto& row : t.rows) {
        std::string s;
        for (const auto& c : row) s += cell_json(c) + ",";
        expected.push_back(s);
      }
      CHECK(mine == expected);
    }
  }
  // Ranks of one host: offsets within noise, so the clocks stay raw.
  REQUIRE(job.collectives);
  CHECK_FALSE(job.collectives->aligned);
  CHECK(job.collectives->instances.size() == 8);
  for (const auto& in : job.collectives->instances) CHECK(in.arrivals.size() == 8);
}
