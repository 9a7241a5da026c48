// `report DIR --mode hta` on the 8-rank corpus job against HTA 0.6.1's multi-rank outputs
// (shared/specs/reference/param_dlrm_8rank, calls in its run_info.json).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>

#include "core/analysis/job_report.h"
#include "core/job/job.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::analysis;

namespace {

using Csv = std::vector<std::map<std::string, std::string>>;

// RFC 4180 fields: quoted fields may hold commas and doubled quotes; no newlines inside here.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  return out;
}

Csv read_reference(const std::string& file) {
  std::ifstream in(sl::test::shared_dir() / "specs" / "reference" / "param_dlrm_8rank" / file);
  REQUIRE_MESSAGE(in.good(), "cannot read reference " << file);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = csv_fields(line);
  Csv rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f = csv_fields(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

double num(const std::map<std::string, std::string>& row, const std::string& key) {
  auto it = row.find(key);
  REQUIRE_MESSAGE(it != row.end(), "missing column " << key);
  return it->second.empty() ? NAN : std::stod(it->second);
}

double us_of(double ns) { return ns / 1000.0; }

struct HtaJob {
  std::unique_ptr<Job> job;
  JobReport report;
  const Report& rank(int64_t r) const {
    for (const auto& rr : report.ranks)
      if (rr.rank == r) return rr.report;
    FAIL("no rank " << r);
    throw;
  }
  const Table& table(const std::string& name) const {
    auto it = std::find_if(report.tables.begin(), report.tables.end(), [&](auto& t) { return t.name == name; });
    REQUIRE(it != report.tables.end());
    return *it;
  }
};

HtaJob* hta_job() {
  static std::unique_ptr<HtaJob> cached;
  if (cached) return cached.get();
  if (!sl::test::have_shared()) return nullptr;
  JobResult loaded = load_job(plan_job_dir((sl::test::shared_dir() / "corpus" / "param_dlrm_8rank").string()));
  REQUIRE_MESSAGE(loaded.ok(), loaded.error);
  cached = std::make_unique<HtaJob>();
  cached->job = std::move(loaded.job);
  JobReportOptions o;
  o.report.table.mode = Mode::Hta;
  cached->report = run_job_report(*cached->job, o);
  REQUIRE(cached->report.ranks.size() == 8);
  return cached.get();
}

}  // namespace

TEST_CASE("HTA job reference: param_dlrm_8rank temporal breakdown and comm/comp overlap (exact)") {
  HtaJob* j = hta_job();
  if (!j) return;
  for (auto& row : read_reference("temporal_breakdown.csv")) {
    int64_t rank = int64_t(num(row, "rank"));
    CAPTURE(rank);
    const TemporalBreakdown& t = *j->rank(rank).temporal;
    CHECK(us_of(double(t.idle)) == num(row, "idle_time(us)"));
    CHECK(us_of(double(t.compute)) == num(row, "compute_time(us)"));
    CHECK(us_of(double(t.non_compute)) == num(row, "non_compute_time(us)"));
    CHECK(us_of(double(t.span)) == num(row, "kernel_time(us)"));
    CHECK(t.idle_pct == num(row, "idle_time_pctg"));
    CHECK(t.compute_pct == num(row, "compute_time_pctg"));
    CHECK(t.non_compute_pct == num(row, "non_compute_time_pctg"));
  }
  for (auto& row : read_reference("comm_comp_overlap.csv")) {
    int64_t rank = int64_t(num(row, "rank"));
    CAPTURE(rank);
    REQUIRE(j->rank(rank).overlap->overlap_pct);
    CHECK(*j->rank(rank).overlap->overlap_pct == num(row, "comp_comm_overlap_pctg"));
  }
}

TEST_CASE("HTA job reference: kernel type breakdown over all ranks, per-kernel tables in HTA's order") {
  HtaJob* j = hta_job();
  if (!j) return;
  const Table& types = j->table("kernel_type_breakdown");
  auto ref = read_reference("gpu_kernel_breakdown_0.csv");
  REQUIRE(types.rows.size() == ref.size());
  CHECK(types.columns == std::vector<std::string>{"kernel_type", "sum_us", "pct"});
  for (size_t i = 0; i < ref.size(); ++i) {
    CHECK(types.rows[i][0].s == ref[i]["kernel_type"]);
    CHECK(us_of(double(types.rows[i][1].i)) == num(ref[i], "sum"));
    CHECK(types.rows[i][2].d == num(ref[i], "percentage"));
  }
  for (auto [file, name] : {std::pair{"gpu_kernel_breakdown_1.csv", "kernel_breakdown"},
                            std::pair{"gpu_kernel_breakdown_full_1.csv", "kernel_breakdown_full"}}) {
    CAPTURE(file);
    const Table& t = j->table(name);
    auto rows = read_reference(file);
    REQUIRE(t.rows.size() == rows.size());
    auto col = [&](const char* c) { return size_t(std::find(t.columns.begin(), t.columns.end(), c) - t.columns.begin()); };
    size_t rank = col("rank"), type = col("kernel_type"), kname = col("name"), sum = col("sum_us"), mn = col("min_us"),
           mx = col("max_us"), mean = col("mean_us"), sd = col("std_us");
    auto value = [](const Cell& c) { return c.ns_fractional ? c.d / 1000.0 : c.kind == Cell::Ns ? double(c.i) / 1000.0 : c.d; };
    for (size_t i = 0; i < rows.size(); ++i) {
      CAPTURE(i);
      CAPTURE(rows[i]["name"]);
      const auto& r = t.rows[i];
      CHECK(r[rank].i == int64_t(num(rows[i], "rank")));
      CHECK(r[type].s == rows[i]["kernel_type"]);
      CHECK(r[kname].s == rows[i]["name"]);
      CHECK(value(r[sum]) == num(rows[i], "sum (us)"));
      CHECK(value(r[mn]) == num(rows[i], "min (us)"));
      CHECK(value(r[mx]) == num(rows[i], "max (us)"));
      CHECK(value(r[mean]) == doctest::Approx(num(rows[i], "mean (us)")).epsilon(1e-12));
      CHECK(value(r[sd]) == doctest::Approx(num(rows[i], "stddev")).epsilon(1e-9));
    }
  }
}

TEST_CASE("HTA job reference: idle time breakdown and interval statistics for every rank (exact)") {
  HtaJob* j = hta_job();
  if (!j) return;
  auto rows = read_reference("idle_time_breakdown_0.csv");
  auto stats = read_reference("idle_time_breakdown_1.csv");
  std::vector<const IdleBreakdownRow*> mine;
  for (const auto& rr : j->report.ranks)
    for (const auto& x : *rr.report.idle) mine.push_back(&x);
  REQUIRE(mine.size() == rows.size());
  REQUIRE(stats.size() == rows.size());
  auto r2 = [](double ns) { return round_to(ns / 1000.0, 2); };
  for (size_t i = 0; i < rows.size(); ++i) {
    const IdleBreakdownRow& x = *mine[i];
    CAPTURE(i);
    CHECK(x.rank == int64_t(num(rows[i], "rank")));
    CHECK(x.stream == int64_t(num(rows[i], "stream")));
    CHECK(idle_category_name(x.category) == rows[i]["idle_category"]);
    CHECK(us_of(double(x.idle)) == num(rows[i], "idle_time"));
    double ratio = num(rows[i], "idle_time_ratio");
    if (std::isnan(ratio)) CHECK_FALSE(x.ratio.has_value());
    else CHECK(x.ratio.value_or(-1) == ratio);
    CHECK(double(x.stats.count) == num(stats[i], "count"));
    if (x.stats.count == 0) continue;
    CHECK(r2(x.stats.mean) == num(stats[i], "mean"));
    if (x.stats.std_valid) CHECK(r2(x.stats.std) == num(stats[i], "std"));
    CHECK(r2(x.stats.min) == num(stats[i], "min"));
    CHECK(r2(x.stats.p25) == num(stats[i], "25%"));
    CHECK(r2(x.stats.p50) == num(stats[i], "50%"));
    CHECK(r2(x.stats.p75) == num(stats[i], "75%"));
    CHECK(r2(x.stats.max) == num(stats[i], "max"));
  }
  // The report table prints them at HTA's 2 decimals, as HTA's CSV has them (32.88, not 32.877...).
  const Table& printed = j->table("idle_interval_stats");
  REQUIRE(printed.rows.size() == stats.size());
  const char* columns[] = {"mean", "std", "min", "25%", "50%", "75%", "max"};
  for (size_t i = 0; i < stats.size(); ++i)
    for (size_t c = 0; c < 7; ++c) {
      CAPTURE(i);
      CAPTURE(columns[c]);
      double ref = num(stats[i], columns[c]);
      CHECK(cell_json(printed.rows[i][4 + c]) == (std::isnan(ref) ? std::string("null") : format_number(ref)));
    }
}

TEST_CASE("HTA job reference: kernel launch pairs of every rank (exact multisets)") {
  HtaJob* j = hta_job();
  if (!j) return;
  for (int64_t rank = 0; rank < 8; ++rank) {
    CAPTURE(rank);
    std::vector<std::array<double, 4>> want, got;
    for (auto& p : read_reference("cuda_kernel_launch_stats_rank" + std::to_string(rank) + ".csv")) {
      CHECK(num(p, "rank") == double(rank));
      want.push_back({num(p, "correlation"), num(p, "cpu_duration"), num(p, "gpu_duration"), num(p, "launch_delay")});
    }
    for (const auto& p : j->rank(rank).launches->pairs)
      got.push_back({double(p.correlation), us_of(double(p.runtime)), us_of(double(p.gpu)), us_of(double(p.delay))});
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK(got == want);
  }
}

TEST_CASE("HTA job reference: queue length and memory bandwidth summaries of every rank") {
  HtaJob* j = hta_job();
  if (!j) return;
  std::vector<const QueueLengthStream*> queues;
  std::vector<const MemoryBandwidthKind*> bandwidth;
  for (const auto& rr : j->report.ranks) {
    for (const auto& q : *rr.report.queues) queues.push_back(&q);
    for (const auto& b : *rr.report.bandwidth) bandwidth.push_back(&b);
  }
  // Queue-length mean/std/percentiles depend on HTA's order of equal timestamps (numpy's unstable
  // quicksort, reproduced by core/analysis/numpy_sort.h): exact on every rank, rank 4's stream 7
  // included (mean 0.648; a stable order gave 0.665).
  auto qrows = read_reference("queue_length_summary.csv");
  REQUIRE(queues.size() == qrows.size());
  for (size_t i = 0; i < qrows.size(); ++i) {
    const QueueLengthStream& q = *queues[i];
    CAPTURE(i);
    CHECK(q.stream == int64_t(num(qrows[i], "stream")));
    CHECK(double(q.summary.count) == num(qrows[i], "queue_length_count"));
    CHECK(q.summary.min == num(qrows[i], "queue_length_min"));
    CHECK(q.summary.max == num(qrows[i], "queue_length_max"));
    CHECK(q.summary.mean == doctest::Approx(num(qrows[i], "queue_length_mean")).epsilon(1e-12));
    if (q.summary.std_valid) CHECK(q.summary.std == doctest::Approx(num(qrows[i], "queue_length_std")).epsilon(1e-12));
    CHECK(q.summary.p50 == num(qrows[i], "queue_length_50%"));
  }
  auto brows = read_reference("memory_bw_summary.csv");
  REQUIRE(bandwidth.size() == brows.size());
  for (size_t i = 0; i < brows.size(); ++i) {
    const MemoryBandwidthKind& k = *bandwidth[i];
    CAPTURE(i);
    CHECK(k.copy_kind == brows[i]["name"]);
    CHECK(double(k.summary.count) == num(brows[i], "memory_bw_gbps_count"));
    CHECK(k.summary.mean == doctest::Approx(num(brows[i], "memory_bw_gbps_mean")).epsilon(1e-9));
    CHECK(k.summary.min == doctest::Approx(num(brows[i], "memory_bw_gbps_min")).epsilon(1e-9));
    CHECK(k.summary.max == doctest::Approx(num(brows[i], "memory_bw_gbps_max")).epsilon(1e-9));
  }
}
