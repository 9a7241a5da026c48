// Distributed jobs: opening a folder of rank traces, matching collectives across ranks,
// stragglers and clock offsets, on hand-made jobs with known answers (and the corpus job).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unistd.h>

#include "analysis_test_util.h"
#include "core/analysis/collectives.h"
#include "core/analysis/interval_index.h"
#include "core/analysis/job_overview.h"
#include "core/analysis/job_report.h"
#include "core/job.h"
#include "core/snapshot.h"
#include "test_support.h"

using namespace sl;
using namespace sl::analysis;
using sl::analysis::test::kernel;
using sl::analysis::test::launch;
using sl::analysis::test::trace;
using sl::analysis::test::usec;
using sl::analysis::test::X;

namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() / ("sightline_job_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter++) + "_" + name);
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& file, const std::string& text) const {
    std::ofstream(path / file, std::ios::binary) << text;
    return (path / file).string();
  }
};

std::string dist(int rank, int world = 4) {
  return R"("distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(rank) +
         R"(, "world_size": )" + std::to_string(world) + "}";
}

std::string us_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// One all-reduce on (pid 1, tid 1) and stream 7: record_param_comms around the launch, the
// kernel from `start` to `end` (µs), in process group `group` over `ranks`.
void add_collective(std::vector<std::string>& ev, int& corr, double start, double end, const std::string& group = "",
                    const std::string& ranks = "", const std::string& kernel_name =
                        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)") {
  std::string args = "{}";
  if (!group.empty())
    args = R"({"Process Group Name": ")" + group + R"(", "Process Group Ranks": ")" + ranks + R"("})";
  ev.push_back(X("cpu_op", "record_param_comms", 1, 1, us_text(start - 75), "20", args));
  ev.push_back(launch("cudaLaunchKernel", us_text(start - 70), "5", ++corr));
  ev.push_back(kernel(kernel_name, 7, us_text(start), us_text(end - start), corr));
}

// The straggler job: 4 iterations of 5 ms; every rank computes 1 ms then all-reduces; rank 2
// first spends 3 ms in the data loader, so it arrives 3 ms after the others at every all-reduce.
// All all-reduces end together at b + 4600 µs.
std::string straggler_rank(int rank) {
  std::vector<std::string> ev;
  int corr = 0;
  const double t0 = 1'000'000;
  // Warm-up kernel, so iteration 0 also starts after an idle gap.
  ev.push_back(launch("cudaLaunchKernel", us_text(t0 - 1500), "5", ++corr));
  ev.push_back(kernel("warmup_kernel", 7, us_text(t0 - 1400), "1000", corr));
  for (int k = 0; k < 4; ++k) {
    double b = t0 + 5000.0 * k, d = rank == 2 ? 3000 : 0;
    ev.push_back(X("user_annotation", "ProfilerStep#" + std::to_string(k), 1, 1, us_text(b), "4900"));
    if (rank == 2)
      ev.push_back(X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, 1,
                     us_text(b + 1), "2999"));
    ev.push_back(launch("cudaLaunchKernel", us_text(b + d + 10), "5", ++corr));
    ev.push_back(kernel("gemm_kernel", 7, us_text(b + d + 20), "1000", corr));
    add_collective(ev, corr, b + d + 1100, b + 4600, "0", "[0, 1, 2, 3]");
  }
  return trace(ev, dist(rank));
}

std::vector<RankInput> inputs_of(const std::vector<std::unique_ptr<TraceStore>>& stores) {
  std::vector<RankInput> in;
  for (size_t r = 0; r < stores.size(); ++r) in.push_back({int64_t(r), stores[r].get()});
  return in;
}

std::vector<std::unique_ptr<TraceStore>> load_ranks(const std::vector<std::string>& texts) {
  std::vector<std::unique_ptr<TraceStore>> out;
  for (const auto& t : texts) out.push_back(analysis::test::load(t));
  return out;
}

const CollectiveArrival& arrival_of(const CollectiveInstance& in, int64_t rank) {
  auto it = std::find_if(in.arrivals.begin(), in.arrivals.end(), [&](auto& a) { return a.rank == rank; });
  REQUIRE(it != in.arrivals.end());
  return *it;
}

}  // namespace

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

TEST_CASE("collectives: rank 2 arrives 3 ms late at every all-reduce after data loading") {
  auto stores = load_ranks({straggler_rank(0), straggler_rank(1), straggler_rank(2), straggler_rank(3)});
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  CHECK_FALSE(a.aligned);
  for (TimeNs o : a.offsets) CHECK(o == 0);
  REQUIRE(a.instances.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    const CollectiveInstance& in = a.instances[k];
    CAPTURE(k);
    CHECK(in.name == "AllReduce");
    CHECK(in.group == "0");
    CHECK(in.instance == k);
    CHECK(in.arrivals.size() == 4);
    CHECK(in.missing.empty());
    CHECK(in.last_rank == 2);
    CHECK(in.skew == usec(3000));
    CHECK(in.last_cause == "data_loading");
    for (int64_t r : {0, 1, 3}) CHECK(arrival_of(in, r).wait == usec(3000));
    CHECK(arrival_of(in, 2).wait == 0);
    // Job clock: zero at the earliest rank start (the warm-up launch at 998500 µs).
    CHECK(arrival_of(in, 0).arrival == usec(1500 + 5000 * int64_t(k) + 1100));
    CHECK(arrival_of(in, 2).arrival == usec(1500 + 5000 * int64_t(k) + 4100));
    CHECK(arrival_of(in, 2).cpu_arrival == usec(1500 + 5000 * int64_t(k) + 4025));
    CHECK(arrival_of(in, 1).end == usec(1500 + 5000 * int64_t(k) + 4600));
  }
  REQUIRE(a.stragglers.size() == 4);
  const StragglerRow& top = a.stragglers[0];
  CHECK(top.rank == 2);
  CHECK(top.late_count == 4);
  CHECK(top.delay_caused == usec(4 * 3 * 3000));
  CHECK(top.wait == 0);
  CHECK(top.top_cause == "data_loading");
  CHECK(top.iterations == 4);
  REQUIRE(top.iteration_mean);
  CHECK(*top.iteration_mean == doctest::Approx(4900e3));
  CHECK(top.collectives == 4);
  CHECK(top.compute == usec(5 * 1000));        // warm-up + 4 gemms
  CHECK(top.communication == usec(4 * 500));   // it arrives last: its all-reduces are short
  CHECK(top.idle == usec(21000 - 7000));       // GPU span 998.6 ms .. 1019.6 ms
  CHECK(a.stragglers[1].communication == usec(4 * 3500));
  CHECK(a.stragglers[1].idle == usec(21000 - 19000));
  for (size_t i = 1; i < 4; ++i) {
    CHECK(a.stragglers[i].late_count == 0);
    CHECK(a.stragglers[i].delay_caused == 0);
    CHECK(a.stragglers[i].wait == usec(4 * 3000));
    CHECK(a.stragglers[i].top_cause.empty());
  }
  // The report tables: one row per rank and instance, then the straggler ranking.
  std::vector<Table> tables = collective_tables(a);
  REQUIRE(tables.size() == 3);
  CHECK(tables[0].name == "collectives");
  CHECK(tables[0].rows.size() == 16);
  CHECK(tables[1].name == "stragglers");
  CHECK(cell_json(tables[1].rows[0][2]) == "36000");
  CHECK(cell_json(tables[1].rows[0][5]) == "\"data_loading\"");
}

TEST_CASE("collectives: two process groups match separately") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    // Everyone: 2 all-reduces in group "0"; pairs {0,1} and {2,3}: 3 all-gathers in groups "1"/"2".
    for (int k = 0; k < 2; ++k) add_collective(ev, corr, 1000 + 10000 * k + 10 * rank, 1000 + 10000 * k + 500, "0", "[0, 1, 2, 3]");
    std::string pair_group = rank < 2 ? "1" : "2", pair_ranks = rank < 2 ? "[0, 1]" : "[2, 3]";
    for (int k = 0; k < 3; ++k)
      add_collective(ev, corr, 3000 + 2000 * k + (rank % 2) * 40, 3000 + 2000 * k + 300, pair_group, pair_ranks,
                     "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
    texts.push_back(trace(ev, dist(rank)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 8);
  std::map<std::string, int> per_group;
  for (const auto& in : a.instances) {
    ++per_group[in.group + "/" + in.name];
    CHECK(in.missing.empty());
    if (in.group == "0") {
      CHECK(in.arrivals.size() == 4);
      CHECK(in.last_rank == 3);
      CHECK(in.skew == usec(30));
    } else {
      REQUIRE(in.arrivals.size() == 2);
      CHECK(in.arrivals[0].rank == (in.group == "1" ? 0 : 2));
      CHECK(in.last_rank == (in.group == "1" ? 1 : 3));
      CHECK(in.skew == usec(40));
      CHECK(in.arrivals[0].wait == usec(40));
    }
  }
  CHECK(per_group["0/AllReduce"] == 2);
  CHECK(per_group["1/AllGather"] == 3);
  CHECK(per_group["2/AllGather"] == 3);
}

TEST_CASE("collectives: a rank missing a collective is listed as missing, later instances stay matched") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    for (int k = 0; k < 4; ++k) {
      if (rank == 3 && k == 2) continue;  // rank 3 never calls the third all-reduce
      add_collective(ev, corr, 1000 + 5000 * k + 20 * rank, 1000 + 5000 * k + 800);
    }
    texts.push_back(trace(ev, dist(rank)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    const CollectiveInstance& in = a.instances[k];
    CAPTURE(k);
    CHECK(in.group == "default");
    CHECK(in.instance == k);
    if (k == 2) {
      CHECK(in.arrivals.size() == 3);
      CHECK(in.missing == std::vector<int64_t>{3});
      CHECK(in.last_rank == 2);
    } else {
      CHECK(in.arrivals.size() == 4);
      CHECK(in.missing.empty());
      CHECK(in.last_rank == 3);
      CHECK(in.skew == usec(60));
    }
  }
  CHECK_FALSE(a.notes.empty());
}

TEST_CASE("collectives: the Seq arg matches instances even when a rank missed one") {
  std::vector<std::string> texts;
  for (int rank = 0; rank < 3; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    for (int seq = 0; seq < 3; ++seq) {
      if (rank == 1 && seq == 1) continue;
      double start = 1000 + 3000 * seq + 10 * rank;
      std::string args = R"({"Process Group Name": "7", "Seq": )" + std::to_string(seq) + "}";
      ev.push_back(X("cpu_op", "record_param_comms", 1, 1, us_text(start - 75), "20", args));
      ev.push_back(launch("cudaLaunchKernel", us_text(start - 70), "5", ++corr));
      ev.push_back(kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", 7,
                          us_text(start), us_text(1000 + 3000 * seq + 500 - start), corr));
    }
    texts.push_back(trace(ev, dist(rank, 3)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 3);
  CHECK(a.notes.empty());  // no clock-based matching was needed
  CHECK(a.instances[1].arrivals.size() == 2);
  CHECK(a.instances[1].missing == std::vector<int64_t>{1});
  CHECK(a.instances[2].arrivals.size() == 3);
  CHECK(a.instances[2].group == "7");
  CHECK(a.instances[2].skew == usec(20));
  CHECK(arrival_of(a.instances[2], 0).wait == usec(20));
}

// One NCCL send or recv on (pid 1, tid 1) and stream 7, with `args` on its record_param_comms.
void add_p2p(std::vector<std::string>& ev, int& corr, double start, double end, const std::string& args) {
  ev.push_back(X("cpu_op", "record_param_comms", 1, 1, us_text(start - 75), "20", args));
  ev.push_back(launch("cudaLaunchKernel", us_text(start - 70), "5", ++corr));
  ev.push_back(kernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", 7, us_text(start), us_text(end - start), corr));
}

TEST_CASE("collectives: send/recv pair by (sender, receiver) in order, in a 4-rank pipeline") {
  // Forward 0->1->2->3 (two micro-batches), backward 3->2->1->0. Ranks 1 and 2 interleave
  // receives from one neighbour with sends to the other, so their k-th send/recv kernels are
  // different transfers: matching by order (or by name) would pair the wrong ranks.
  struct Transfer {
    int src, dst;
    double send_start, recv_start, end;  // µs; both kernels end together
  };
  const std::vector<Transfer> transfers = {
      {0, 1, 100, 130, 200},  {1, 2, 250, 210, 350}, {0, 1, 400, 380, 500},  {2, 3, 400, 390, 480},
      {1, 2, 550, 600, 650},  {2, 3, 700, 760, 800}, {3, 2, 900, 850, 1000}, {1, 0, 1200, 1000, 1300},
      {2, 1, 1050, 1100, 1150}};
  std::vector<std::vector<std::pair<double, std::string>>> ops(4);  // per rank: (start, event args)
  for (const Transfer& t : transfers) {
    const std::string group = R"("Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3]")";
    // Rank 3 writes a bare `peer` (direction from the name); the others PyTorch's Src/Dst Rank.
    auto args = [&](int rank, bool send) {
      std::string peer = std::to_string(send ? t.dst : t.src);
      std::string key = rank == 3 ? "peer" : send ? "Dst Rank" : "Src Rank";
      return "{" + group + R"(, "Collective name": ")" + (send ? "send" : "recv") + R"(", ")" + key + "\": " + peer + "}";
    };
    ops[size_t(t.src)].push_back({t.send_start, args(t.src, true)});
    ops[size_t(t.dst)].push_back({t.recv_start, args(t.dst, false)});
  }
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::sort(ops[size_t(rank)].begin(), ops[size_t(rank)].end());
    std::vector<std::string> ev;
    int corr = 0;
    for (auto& [start, args] : ops[size_t(rank)]) {
      auto t = std::find_if(transfers.begin(), transfers.end(), [&](const Transfer& x) {
        return (x.src == rank && x.send_start == start) || (x.dst == rank && x.recv_start == start);
      });
      add_p2p(ev, corr, start, t->end, args);
    }
    texts.push_back(trace(ev, dist(rank)));
  }
  auto stores = load_ranks(texts);
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  CHECK_FALSE(a.aligned);
  REQUIRE(a.instances.size() == transfers.size());
  // Instances by first arrival: the order of `transfers` above.
  std::map<std::string, uint64_t> seen;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    const CollectiveInstance& in = a.instances[i];
    CAPTURE(i);
    std::string name = "send/recv " + std::to_string(t.src) + "->" + std::to_string(t.dst);
    CHECK(in.name == name);
    CHECK(in.group == "0");
    CHECK(in.instance == seen[name]++);
    REQUIRE(in.arrivals.size() == 2);
    CHECK(in.missing.empty());
    const CollectiveArrival& sender = arrival_of(in, t.src);
    const CollectiveArrival& receiver = arrival_of(in, t.dst);
    CHECK(sender.arrival + a.origin_ns == usec(int64_t(t.send_start)));
    CHECK(receiver.arrival + a.origin_ns == usec(int64_t(t.recv_start)));
    CHECK(sender.end + a.origin_ns == usec(int64_t(t.end)));
    CHECK(receiver.end + a.origin_ns == usec(int64_t(t.end)));
    double late = std::max(t.send_start, t.recv_start), early = std::min(t.send_start, t.recv_start);
    CHECK(in.last_rank == (t.send_start > t.recv_start ? t.src : t.dst));
    CHECK(in.skew == usec(int64_t(late - early)));
    CHECK(sender.wait == usec(int64_t(late - t.send_start)));
    CHECK(receiver.wait == usec(int64_t(late - t.recv_start)));
  }
  // Stragglers: rank 1 was last 4 times (the others waited 30 + 40 + 50 + 200 µs), rank 3 twice
  // (60 + 50), rank 2 twice (50 + 10), rank 0 once (20).
  REQUIRE(a.stragglers.size() == 4);
  const std::vector<std::tuple<int64_t, uint64_t, int64_t, int64_t>> expected = {
      {1, 4, 320, 70}, {3, 2, 110, 10}, {2, 2, 60, 200}, {0, 1, 20, 230}};  // rank, late, caused, own wait
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    auto [rank, late, caused, wait] = expected[i];
    CHECK(a.stragglers[i].rank == rank);
    CHECK(a.stragglers[i].late_count == late);
    CHECK(a.stragglers[i].delay_caused == usec(caused));
    CHECK(a.stragglers[i].wait == usec(wait));
  }
}

TEST_CASE("collectives: a send whose receiver missed it is listed with the receiver missing") {
  // Rank 0 sends to rank 1 three times; rank 1's trace starts after the first transfer.
  std::vector<std::string> ev0, ev1;
  int c0 = 0, c1 = 0;
  const std::string send = R"({"Collective name": "send", "Dst Rank": 1})";
  const std::string recv = R"({"Collective name": "recv", "Src Rank": 0})";
  for (int k = 0; k < 3; ++k) add_p2p(ev0, c0, 1000 + 1000 * k, 1000 + 1000 * k + 300, send);
  for (int k = 1; k < 3; ++k) add_p2p(ev1, c1, 1000 + 1000 * k + 100, 1000 + 1000 * k + 300, recv);
  auto stores = load_ranks({trace(ev0, dist(0, 2)), trace(ev1, dist(1, 2))});
  CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
  REQUIRE(a.instances.size() == 3);
  CHECK(a.instances[0].name == "send/recv 0->1");
  CHECK(a.instances[0].group == "default");
  REQUIRE(a.instances[0].arrivals.size() == 1);
  CHECK(a.instances[0].missing == std::vector<int64_t>{1});
  for (size_t k = 1; k < 3; ++k) {
    CAPTURE(k);
    REQUIRE(a.instances[k].arrivals.size() == 2);
    CHECK(a.instances[k].missing.empty());
    CHECK(a.instances[k].last_rank == 1);
    CHECK(a.instances[k].skew == usec(100));
    CHECK(arrival_of(a.instances[k], 0).wait == usec(100));
  }
}

namespace {

// Ranks 2 and 3 run on a host whose clock is `kHostB` µs ahead; each all-reduce's end jitters by
// a few µs, as real collectives do; arrivals spread over 300 µs.
const double kHostB = 1234.567 * 1000;

std::vector<std::string> two_host_ranks() {
  const int jitter[4][6] = {{0, 2, -1, 3, 0, 1}, {1, -2, 0, 2, -3, 0}, {-1, 0, 3, -2, 1, 2}, {2, 1, -3, 0, 2, -1}};
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    double shift = rank >= 2 ? kHostB : 0;
    for (int k = 0; k < 6; ++k) {
      double start = 5000 + 4000 * k + 100 * ((rank + k) % 4);
      add_collective(ev, corr, start + shift, 5000 + 4000 * k + 900 + jitter[rank][k] + shift);
    }
    texts.push_back(trace(ev, dist(rank)));
  }
  return texts;
}

}  // namespace

TEST_CASE("collectives: clock offsets between hosts are recovered within 10 us") {
  auto stores = load_ranks(two_host_ranks());
  SUBCASE("auto: offsets above the noise are applied") {
    CollectiveAnalysis a = analyze_collectives(inputs_of(stores));
    REQUIRE(a.offsets.size() == 4);
    CHECK(a.offsets[0] == 0);
    CHECK(std::abs(a.offsets[1]) <= usec(10));
    CHECK(std::abs(a.offsets[2] + TimeNs(kHostB * 1000)) <= usec(10));
    CHECK(std::abs(a.offsets[3] + TimeNs(kHostB * 1000)) <= usec(10));
    CHECK(a.aligned);
    REQUIRE(a.instances.size() == 6);
    for (const auto& in : a.instances) CHECK(in.skew <= usec(300 + 10));
  }
  SUBCASE("none: raw clocks") {
    CollectiveOptions o;
    o.align = Align::None;
    CollectiveAnalysis a = analyze_collectives(inputs_of(stores), o);
    CHECK_FALSE(a.aligned);
    REQUIRE(a.instances.size() == 6);
    for (const auto& in : a.instances) CHECK(in.skew >= usec(1234000));
  }
}

TEST_CASE("job report: every analysis per rank with its rank column, --rank picks one") {
  TempDir dir("report");
  for (int r = 0; r < 4; ++r) dir.write("rank_" + std::to_string(r) + ".json", straggler_rank(r));
  JobResult loaded = load_job(plan_job_dir(dir.path.string()));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error);
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
  three.rank = 3, three.late_count = 1, three.delay_caused = usec(1'000), three.top_cause = "host_launch_bound";
  a.stragglers = {five, three};
  CHECK(straggler_insight(a) == "rank 5 made the others wait 38.0 ms over 12 collectives, mostly after data-loading stalls");
  for (int k = 0; k < 12; ++k) late("AllReduce", 5, usec(100));
  late("ReduceScatter", 3, usec(100));
  late("AllGather", 5, 0);  // no skew: rank 5 was not late for it
  CHECK(straggler_insight(a) == "rank 5 made the others wait 38.0 ms over 12 all-reduces, mostly after data-loading stalls");
  late("send/recv 0->5", 5, usec(100));  // a second kind: the generic word again
  CHECK(straggler_insight(a) == "rank 5 made the others wait 38.0 ms over 12 collectives, mostly after data-loading stalls");
  a.stragglers[0].delay_caused = 0;  // rank 3 now: one reduce-scatter
  CHECK(straggler_insight(a) == "rank 3 made the others wait 1.0 ms over 1 reduce-scatter, mostly after host-bound launches");
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
