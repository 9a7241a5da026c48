// Distributed jobs: opening a folder (or a list) of rank traces and snapshots: rank numbers,
// parallel loading, and clear errors for bad input, on hand-made jobs with known answers.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "core/analysis/job_report.h"
#include "core/import/trace_loader.h"
#include "core/job/job.h"
#include "core/snapshot/snapshot.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/job/job_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::job_test;
using sl::analysis::test::kernel;
using sl::analysis::test::trace;

TEST_CASE("job: rank numbers from file names") {
  CHECK(rank_from_file_name("rank-3.json") == 3);
  CHECK(rank_from_file_name("trace_rank_12.pt.trace.json.gz") == 12);
  CHECK(rank_from_file_name("worker7_step_12.1694128201553.pt.trace.json.gz") == 7);
  CHECK(rank_from_file_name("Worker_5.json") == 5);
  CHECK_FALSE(rank_from_file_name("trace.json").has_value());
  CHECK_FALSE(rank_from_file_name("ranking.json").has_value());
}

TEST_CASE("job: a directory of ranks loads in parallel, ranks from distributedInfo, file name, order") {
  TempDir dir("naming");
  using analysis::test::kernel;
  std::string body_only = trace({kernel("k", 7, "10", "5", 1)});
  dir.write("b_trace.json", trace({kernel("k", 7, "10", "5", 1)}, dist(5)));  // distributedInfo wins
  dir.write("rank_9.json", body_only);                                         // file name
  dir.write("zz.json", body_only);                                             // file order (3rd file)
  dir.write("README.md", "not a trace");
  dir.write("config.json", R"({"lr": 0.1})");
  std::atomic<int> done{0};
  std::mutex progress_mutex;
  std::set<size_t> progressed;
  JobOptions o;
  o.threads = 2;
  o.on_rank_done = [&](size_t, const JobRank&) { ++done; };
  o.on_rank_progress = [&](size_t file, const LoadProgress&) {
    std::lock_guard<std::mutex> lock(progress_mutex);
    progressed.insert(file);
  };
  JobPlan plan = plan_job_dir(dir.path.string());
  REQUIRE(plan.files.size() == 4);  // b_trace, config, rank_9, zz (natural order)
  JobResult r = load_job(plan, o);
  REQUIRE_MESSAGE(r.ok(), r.error);
  CHECK(done == 4);
  CHECK(progressed == std::set<size_t>{0, 1, 2, 3});  // every file reports at least its reading phase
  const Job& job = *r.job;
  REQUIRE(job.ranks.size() == 3);
  CHECK(job.ranks[0].rank == 2);
  CHECK(job.ranks[0].rank_source == RankSource::FileOrder);
  CHECK(fs::path(job.ranks[0].path).filename() == "zz.json");
  CHECK(job.ranks[1].rank == 5);
  CHECK(job.ranks[1].rank_source == RankSource::DistributedInfo);
  CHECK(job.ranks[2].rank == 9);
  CHECK(job.ranks[2].rank_source == RankSource::FileName);
  REQUIRE(job.skipped.size() == 2);
  CHECK(fs::path(job.skipped[0].path).filename() == "README.md");
  CHECK(fs::path(job.skipped[1].path).filename() == "config.json");
  CHECK(job.skipped[1].reason.find("traceEvents") != std::string::npos);
}

TEST_CASE("job: bad input gives clear errors") {
  SUBCASE("empty directory") {
    TempDir dir("empty");
    JobResult r = load_job(plan_job_dir(dir.path.string()));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.find("empty directory") != std::string::npos);
  }
  SUBCASE("missing directory") {
    JobResult r = load_job(plan_job_dir("/nonexistent/sightline/job"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.find("/nonexistent/sightline/job") != std::string::npos);
  }
  SUBCASE("a directory of non-traces") {
    TempDir dir("nontraces");
    dir.write("notes.txt", "hello");
    dir.write("config.json", R"({"lr": 0.1})");
    JobPlan plan = plan_job_dir(dir.path.string());
    CHECK(plan.skipped.size() == 1);
    JobResult r = load_job(plan);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.find("no Kineto traces") != std::string::npos);
  }
  SUBCASE("two files with the same rank") {
    TempDir dir("dup");
    std::string a = dir.write("a.json", trace({kernel("k", 7, "10", "5", 1)}, dist(1)));
    std::string b = dir.write("b.json", trace({kernel("k", 7, "10", "5", 1)}, dist(1)));
    JobResult r = load_job(plan_job_dir(dir.path.string()));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.find("rank 1") != std::string::npos);
    CHECK(r.error.find(a) != std::string::npos);
    CHECK(r.error.find(b) != std::string::npos);
  }
  SUBCASE("one truncated rank fails alone") {
    TempDir dir("truncated");
    for (int r = 0; r < 3; ++r) {
      std::string text = straggler_rank(r);
      // Cut inside its first event: a cut after complete events would load them (issue 17).
      if (r == 1) text = text.substr(0, text.find("\"ph\"") + 4);
      dir.write("rank_" + std::to_string(r) + ".json", text);
    }
    JobResult r = load_job(plan_job_dir(dir.path.string()));
    REQUIRE_MESSAGE(r.ok(), r.error);
    REQUIRE(r.job->ranks.size() == 3);
    CHECK(r.job->loaded_count() == 2);
    const JobRank* bad = r.job->find(1);
    REQUIRE(bad);
    CHECK_FALSE(bad->ok());
    CHECK(bad->rank_source == RankSource::FileName);
    CHECK(bad->error.to_string().find("rank_1.json") != std::string::npos);
    CHECK(bad->error.byte_offset > 0);
    // The others stay usable: the job report runs on them and names the failed rank.
    JobReport report = run_job_report(*r.job, {});
    CHECK(report.ranks.size() == 2);
    CHECK(std::any_of(report.notes.begin(), report.notes.end(),
                      [](auto& n) { return n.find("rank 1 failed") != std::string::npos; }));
    REQUIRE(report.collectives);
    CHECK(report.collectives->instances.size() == 4);
  }
  SUBCASE("corrupt rank files fail alone or are skipped, with the reason; the job still reports") {
    TempDir dir("corrupt");
    std::string good = straggler_rank(0);
    dir.write("rank_0.json", good);
    dir.write("rank_1.json", "");                                   // empty file
    std::string binary;
    for (int i = 0; i < 4000; ++i) binary += char((i * 7919 + 13) % 256);
    dir.write("rank_2.json", binary);                               // not JSON at all
    std::string z = sl::test::gzip(straggler_rank(3));
    for (size_t i = 20; i < 60; ++i) z[i] = char(z[i] ^ 0x5a);
    dir.write("rank_3.json.gz", z);                                 // corrupt deflate data
    dir.write("rank_4.json.gz", R"(not gzip {"traceEvents": []})");  // .gz that is not gzip
    dir.write("rank_5.json", R"({"traceEvents": 5})");              // events not an array
    dir.write("rank_6.json", R"({"traceEvents": [)" + std::string(100000, '['));  // deep and cut
    std::string half = sl::test::gzip(straggler_rank(7));
    dir.write("rank_7.json.gz", half.substr(0, half.size() / 2));   // gzip cut in the middle
    JobResult r = load_job(plan_job_dir(dir.path.string()));
    REQUIRE_MESSAGE(r.ok(), r.error);
    std::map<int64_t, std::string> failed;
    for (const JobRank& rank : r.job->ranks)
      if (!rank.ok()) failed[rank.rank] = rank.error.to_string();
    CHECK(failed.size() == 4);
    CHECK(failed[1].find("empty file") != std::string::npos);
    CHECK(failed[3].find("corrupt or truncated gzip data") != std::string::npos);
    CHECK(failed[5].find("\"traceEvents\" is not an array") != std::string::npos);
    CHECK(failed[6].find("unexpected end of file") != std::string::npos);
    for (auto& [rank, error] : failed) CHECK(error.find("rank_" + std::to_string(rank) + ".json") != std::string::npos);
    REQUIRE(r.job->skipped.size() == 2);  // neither starts like a trace
    CHECK(fs::path(r.job->skipped[0].path).filename() == "rank_2.json");
    CHECK(fs::path(r.job->skipped[1].path).filename() == "rank_4.json.gz");
    for (const SkippedFile& f : r.job->skipped) CHECK(f.reason.find("not a trace") != std::string::npos);
    // The gzip cut mid-stream loads the events before the cut, flagged as cut off.
    const JobRank* cut = r.job->find(7);
    REQUIRE(cut);
    REQUIRE(cut->ok());
    CHECK(cut->store->issues.truncation.has_value());
    JobReport report = run_job_report(*r.job, {});
    CHECK(report.ranks.size() == 2);
    for (int64_t rank : {1, 3, 5, 6})
      CHECK(std::any_of(report.notes.begin(), report.notes.end(), [&](auto& n) {
        return n.find("rank " + std::to_string(rank) + " failed to load") != std::string::npos;
      }));
  }
  SUBCASE("cancel stops the job") {
    TempDir dir("cancel");
    dir.write("rank_0.json", straggler_rank(0));
    std::atomic<bool> cancel{true};
    JobOptions o;
    o.cancel = &cancel;
    JobResult r = load_job(plan_job_dir(dir.path.string()), o);
    CHECK_FALSE(r.ok());
    CHECK(r.error == "cancelled");
  }
}

// Every table of a job report as text: what a user reads of it, without the file paths.
static std::string job_tables_text(const JobResult& loaded) {
  std::string out;
  for (const Table& t : run_job_report(*loaded.job, {}).tables) {
    out += "== " + t.name + "\n";
    for (const auto& row : t.rows) {
      for (const auto& c : row) out += cell_json(c) + ",";
      out += "\n";
    }
  }
  return out;
}

// Issue 15, "every command accepts snapshot files": a job's ranks may be snapshots too.
TEST_CASE("job: snapshot files are ranks; a snapshot beside its own trace is skipped, not counted twice") {
  TempDir traces("snap_traces"), snaps("snap_only");
  std::vector<std::string> snap_files;
  for (int r = 0; r < 3; ++r) {
    std::string name = "rank_" + std::to_string(r);
    std::string trace = traces.write(name + ".json", straggler_rank(r));
    LoadResult one = load_trace(trace);
    REQUIRE(one.ok());
    snap_files.push_back((snaps.path / (name + ".slsnap")).string());
    REQUIRE(write_snapshot(*one.store, snap_files.back()).empty());
  }
  // `convert` writes rank_1.slsnap beside rank_1.json: the trace is the rank.
  REQUIRE(write_snapshot(*load_trace((traces.path / "rank_1.json").string()).store, (traces.path / "rank_1.slsnap").string()).empty());
  JobPlan mixed = plan_job_dir(traces.path.string());
  CHECK(mixed.files.size() == 3);
  REQUIRE(mixed.skipped.size() == 1);
  CHECK(mixed.skipped[0].reason == "the snapshot of " + (traces.path / "rank_1.json").string() + ", which is read instead");
  JobResult from_json = load_job(mixed);
  REQUIRE_MESSAGE(from_json.ok(), from_json.error);

  JobResult from_dir = load_job(plan_job_dir(snaps.path.string()));
  JobResult from_files = load_job(plan_job_files(snap_files));
  for (const JobResult* r : {&from_dir, &from_files}) {
    REQUIRE_MESSAGE(r->ok(), r->error);
    REQUIRE(r->job->loaded_count() == 3);
    CHECK(r->job->find(2)->rank_source == RankSource::DistributedInfo);
    CHECK(job_tables_text(*r) == job_tables_text(from_json));
  }
  JobPlan none = plan_job_files({(traces.path / "notes.txt").string()});
  CHECK(none.error == "no Kineto traces (.json, .json.gz) or snapshots (.slsnap) among the files given");
  CHECK(none.skipped[0].reason == "not a .json, .json.gz or .slsnap file");
}

namespace {

// A rank of `world` ranks on `device`, with one kernel at `start_us`.
std::string rank_on(int rank, int world, const std::string& device, double start_us) {
  std::vector<std::string> ev;
  ev.push_back(launch("cudaLaunchKernel", us_text(start_us - 10), "5", 1));
  ev.push_back(kernel("gemm_kernel", 7, us_text(start_us), "100", 1));
  return trace(ev, dist(rank, world) + R"(, "deviceProperties": [{"id": 0, "name": ")" + device + R"("}])");
}

}  // namespace

TEST_CASE("job: warnings when the ranks may not be one job") {
  SUBCASE("one job: no warning") {
    TempDir dir("one_job");
    for (int r = 0; r < 2; ++r) dir.write("rank" + std::to_string(r) + ".json", rank_on(r, 2, "NVIDIA H100", 1000 + r));
    JobResult loaded = load_job(plan_job_dir(dir.path.string()));
    REQUIRE(loaded.ok());
    CHECK(job_warnings(*loaded.job).empty());
  }
  SUBCASE("a folder of unrelated traces: device type, world_size, clocks") {
    // An MI300 rank of 8, an H100 inference trace, another MI300 run 28 days later: was silent.
    TempDir dir("unrelated");
    dir.write("a.json", rank_on(0, 8, "AMD Instinct MI300X", 1000));
    dir.write("b.json", rank_on(1, 1, "NVIDIA H100 80GB HBM3", 1050));
    dir.write("c.json", rank_on(2, 8, "AMD Instinct MI300X", 2'437'895e6));
    JobResult loaded = load_job(plan_job_dir(dir.path.string()));
    REQUIRE(loaded.ok());
    std::vector<std::string> w = job_warnings(*loaded.job);
    REQUIRE(w.size() == 3);
    CHECK(w[0] == "ranks disagree on device type: AMD Instinct MI300X (ranks 0, 2), NVIDIA H100 80GB HBM3 (rank 1)");
    CHECK(w[1] == "ranks disagree on world_size: 1 (rank 1), 8 (ranks 0, 2)");
    CHECK(w[2].starts_with("the ranks' clocks do not overlap at all (ranks 0, 1 | rank 2)"));
    CHECK(w[2].ends_with("are these one job?"));
  }
}

TEST_CASE("job: --rank-from overrides where ranks come from; two files claiming one rank say how") {
  TempDir dir("rank_from");
  // Both claim rank 0 in distributedInfo (two single-GPU runs); their names say 5 and 7.
  dir.write("rank_5.json", rank_on(0, 1, "NVIDIA H100", 1000));
  dir.write("rank_7.json", rank_on(0, 1, "NVIDIA H100", 1010));
  JobResult clash = load_job(plan_job_dir(dir.path.string()));
  REQUIRE_FALSE(clash.ok());
  CHECK(clash.error.find("two files claim rank 0") != std::string::npos);
  CHECK(clash.error.find("--rank-from name") != std::string::npos);  // was a dead end
  JobOptions by_name;
  by_name.rank_from = RankSource::FileName;
  JobResult named = load_job(plan_job_dir(dir.path.string()), by_name);
  REQUIRE_MESSAGE(named.ok(), named.error);
  REQUIRE(named.job->ranks.size() == 2);
  CHECK(named.job->ranks[0].rank == 5);
  CHECK(named.job->ranks[1].rank == 7);
  CHECK(named.job->ranks[0].rank_source == RankSource::FileName);
  JobOptions by_order;
  by_order.rank_from = RankSource::FileOrder;
  JobResult ordered = load_job(plan_job_dir(dir.path.string()), by_order);
  REQUIRE(ordered.ok());
  CHECK(ordered.job->ranks[0].rank == 0);
  CHECK(ordered.job->ranks[1].rank == 1);
  CHECK(ordered.job->ranks[1].path.ends_with("rank_7.json"));
  // A source a file lacks is an error naming the file, not a silent fallback.
  dir.write("other.json", rank_on(1, 1, "NVIDIA H100", 1020));
  JobResult missing = load_job(plan_job_dir(dir.path.string()), by_name);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error.find("other.json: --rank-from name") != std::string::npos);
  CHECK(rank_source_named("distributed-info") == RankSource::DistributedInfo);
  CHECK_FALSE(rank_source_named("rank"));
}
