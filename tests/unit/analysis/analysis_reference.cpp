// `--mode hta` against Holistic Trace Analysis 0.6.1's own outputs (shared/specs/reference):
// every reference CSV of both traces becomes a check, exact where reference-values.md says so.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/import/common/file_reader.h"
#include "core/import/trace_loader.h"

using namespace sl;
using namespace sl::analysis;

namespace {

#ifdef SIGHTLINE_SHARED_DIR
const std::filesystem::path kShared = SIGHTLINE_SHARED_DIR;
#else
const std::filesystem::path kShared = "../shared";
#endif

using CsvRow = std::map<std::string, std::string>;

std::vector<std::string> split_csv_line(std::istream& in, bool& ok) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false, any = false;
  char c;
  while (in.get(c)) {
    any = true;
    if (quoted) {
      if (c == '"') {
        if (in.peek() == '"') {
          field += '"';
          in.get(c);
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      break;
    } else if (c != '\r') {
      field += c;
    }
  }
  ok = any;
  fields.push_back(std::move(field));
  return fields;
}

std::vector<CsvRow> read_csv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path.string());
  bool ok = false;
  std::vector<std::string> header = split_csv_line(in, ok);
  std::vector<CsvRow> rows;
  while (true) {
    std::vector<std::string> f = split_csv_line(in, ok);
    if (!ok) break;
    if (f.size() == 1 && f[0].empty()) continue;
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

double num(const CsvRow& r, const std::string& key) {
  auto it = r.find(key);
  REQUIRE_MESSAGE(it != r.end(), "missing column " << key);
  if (it->second.empty()) return NAN;
  return std::stod(it->second);
}

double us_of(double ns) { return ns / 1000.0; }

struct Fixture {
  std::string name, op;
  int64_t rank;
  size_t rows_after_load;
  std::unique_ptr<TraceStore> store;
  Report report;
  std::filesystem::path ref;
};

// Loads one reference trace once per test binary run.
Fixture* fixture(const std::string& name, const std::string& op, int64_t rank, size_t rows) {
  static std::map<std::string, std::unique_ptr<Fixture>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  std::filesystem::path trace = kShared / "corpus" / (name + ".json.gz");
  std::filesystem::path ref = kShared / "specs" / "reference" / name;
  if (!std::filesystem::exists(trace) || !std::filesystem::exists(ref)) {
    MESSAGE("skipping HTA reference test: " << trace.string() << " or " << ref.string() << " not found");
    return nullptr;
  }
  auto f = std::make_unique<Fixture>();
  f->name = name;
  f->op = op;
  f->rank = rank;
  f->rows_after_load = rows;
  f->ref = ref;
  LoadResult loaded = load_trace(trace.string());
  REQUIRE_MESSAGE(loaded.ok(), loaded.error.to_string());
  f->store = std::move(loaded.store);
  ReportOptions o;
  o.table.mode = Mode::Hta;
  o.operator_name = op;
  f->report = run_report(*f->store, o);
  return (cache[name] = std::move(f)).get();
}

void check_all(Fixture& f) {
  const Report& r = f.report;
  const std::filesystem::path& ref = f.ref;
  INFO("trace: " << f.name);
  CHECK(r.table.rank == f.rank);
  CHECK(r.table.rows.size() == f.rows_after_load);

  SUBCASE("temporal breakdown (exact)") {
    auto rows = read_csv(ref / "temporal_breakdown.csv");
    REQUIRE(rows.size() == 1);
    const TemporalBreakdown& t = *r.temporal;
    REQUIRE(t.valid);
    CHECK(us_of(double(t.idle)) == num(rows[0], "idle_time(us)"));
    CHECK(us_of(double(t.compute)) == num(rows[0], "compute_time(us)"));
    CHECK(us_of(double(t.non_compute)) == num(rows[0], "non_compute_time(us)"));
    CHECK(us_of(double(t.span)) == num(rows[0], "kernel_time(us)"));
    CHECK(t.idle_pct == num(rows[0], "idle_time_pctg"));
    CHECK(t.compute_pct == num(rows[0], "compute_time_pctg"));
    CHECK(t.non_compute_pct == num(rows[0], "non_compute_time_pctg"));
  }

  SUBCASE("idle time breakdown per stream and category (exact, same order)") {
    auto rows = read_csv(ref / "idle_time_breakdown.csv");
    REQUIRE(rows.size() == r.idle->size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const IdleBreakdownRow& x = (*r.idle)[i];
      CHECK(x.stream == int64_t(num(rows[i], "stream")));
      CHECK(idle_category_name(x.category) == rows[i]["idle_category"]);
      CHECK(us_of(double(x.idle)) == num(rows[i], "idle_time"));
      double ratio = num(rows[i], "idle_time_ratio");
      if (std::isnan(ratio)) CHECK_FALSE(x.ratio.has_value());
      else CHECK(x.ratio.value_or(-1) == ratio);
    }
  }

  SUBCASE("idle interval statistics (exact at HTA's 2 decimals)") {
    auto rows = read_csv(ref / "idle_interval_stats.csv");
    REQUIRE(rows.size() == r.idle->size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const IdleBreakdownRow& x = (*r.idle)[i];
      INFO("stream " << x.stream << " " << idle_category_name(x.category));
      CHECK(double(x.stats.count) == num(rows[i], "count"));
      if (x.stats.count == 0) continue;
      auto r2 = [](double ns) { return round_to(ns / 1000.0, 2); };
      CHECK(r2(x.stats.mean) == num(rows[i], "mean"));
      if (x.stats.std_valid) CHECK(r2(x.stats.std) == num(rows[i], "std"));
      else CHECK(std::isnan(num(rows[i], "std")));
      CHECK(r2(x.stats.min) == num(rows[i], "min"));
      CHECK(r2(x.stats.p25) == num(rows[i], "25%"));
      CHECK(r2(x.stats.p50) == num(rows[i], "50%"));
      CHECK(r2(x.stats.p75) == num(rows[i], "75%"));
      CHECK(r2(x.stats.max) == num(rows[i], "max"));
    }
    // `report --mode hta` prints them as HTA's CSV has them, cell for cell.
    std::vector<Table> tables = report_tables(r);
    auto printed = std::find_if(tables.begin(), tables.end(), [](const Table& t) { return t.name == "idle_interval_stats"; });
    REQUIRE(printed != tables.end());
    REQUIRE(printed->rows.size() == rows.size());
    const char* columns[] = {"mean", "std", "min", "25%", "50%", "75%", "max"};
    for (size_t i = 0; i < rows.size(); ++i)
      for (size_t c = 0; c < 7; ++c) {
        double want = num(rows[i], columns[c]);
        CHECK(cell_json(printed->rows[i][4 + c]) == (std::isnan(want) ? std::string("null") : format_number(want)));
      }
  }

  SUBCASE("kernel type breakdown (exact)") {
    auto rows = read_csv(ref / "gpu_kernel_type_breakdown.csv");
    REQUIRE(rows.size() == r.kernels->by_type.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const KernelTypeShare& x = r.kernels->by_type[i];
      CHECK(x.label == rows[i]["kernel_type"]);
      CHECK(us_of(double(x.time)) == num(rows[i], "sum"));
      CHECK(x.pct == num(rows[i], "percentage"));
    }
  }

  auto check_kernels = [&](const char* file, const std::vector<KernelStats>& mine) {
    auto rows = read_csv(ref / file);
    REQUIRE(rows.size() == mine.size());
    std::map<std::pair<std::string, std::string>, const KernelStats*> by_key;
    for (const auto& k : mine) by_key[{std::string(kernel_type_name(k.type)), k.name}] = &k;
    for (auto& row : rows) {
      INFO(file << ": " << row["name"]);
      auto it = by_key.find({row["kernel_type"], row["name"]});
      REQUIRE(it != by_key.end());
      const KernelStats& k = *it->second;
      CHECK(us_of(k.sum) == num(row, "sum (us)"));
      CHECK(us_of(k.max) == num(row, "max (us)"));
      CHECK(us_of(k.min) == num(row, "min (us)"));
      CHECK(us_of(k.mean) == doctest::Approx(num(row, "mean (us)")).epsilon(1e-12));
      CHECK(us_of(k.std) == doctest::Approx(num(row, "stddev")).epsilon(1e-9));
      CHECK(k.rank == int64_t(num(row, "rank")));
    }
  };
  SUBCASE("per-kernel breakdown, folded into others") { check_kernels("gpu_kernel_breakdown.csv", r.kernels->per_kernel); }
  SUBCASE("per-kernel breakdown, full") { check_kernels("gpu_kernel_breakdown_full.csv", r.kernels->per_kernel_full); }

  SUBCASE("kernel launch statistics: pairs and summary (exact)") {
    const LaunchStats& s = *r.launches;
    auto sum = read_csv(ref / "cuda_kernel_launch_stats_summary.csv");
    REQUIRE(sum.size() == 1);
    CHECK(double(s.pairs.size()) == num(sum[0], "n_pairs"));
    CHECK(double(s.short_kernels) == num(sum[0], "short_gpu_kernels(cpu_duration<=50 & gpu_duration<cpu_duration)"));
    CHECK(double(s.runtime_outliers) == num(sum[0], "runtime_outliers(cpu_duration>50)"));
    CHECK(double(s.launch_delay_outliers) == num(sum[0], "launch_delay_outliers(launch_delay>100)"));
    CHECK(us_of(double(s.runtime_sum)) == num(sum[0], "cpu_duration_sum"));
    CHECK(us_of(double(s.gpu_sum)) == num(sum[0], "gpu_duration_sum"));
    CHECK(us_of(double(s.delay_sum)) == num(sum[0], "launch_delay_sum"));
    CHECK(us_of(s.delay_mean) == doctest::Approx(num(sum[0], "launch_delay_mean")).epsilon(1e-12));
    CHECK(us_of(s.delay_median) == num(sum[0], "launch_delay_median"));
    CHECK(us_of(double(s.delay_max)) == num(sum[0], "launch_delay_max"));
    // Every pair, as a multiset of (correlation, cpu, gpu, delay).
    auto pairs = read_csv(ref / "cuda_kernel_launch_stats.csv");
    std::vector<std::array<double, 4>> want, got;
    for (auto& p : pairs)
      want.push_back({num(p, "correlation"), num(p, "cpu_duration"), num(p, "gpu_duration"), num(p, "launch_delay")});
    for (const auto& p : s.pairs)
      got.push_back({double(p.correlation), us_of(double(p.runtime)), us_of(double(p.gpu)), us_of(double(p.delay))});
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    CHECK(got == want);
  }

  SUBCASE("queue length summary (count, min, max exact; the rest up to tie order)") {
    auto rows = read_csv(ref / "queue_length_summary.csv");
    REQUIRE(rows.size() == r.queues->size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const QueueLengthStream& q = (*r.queues)[i];
      INFO("stream " << q.stream);
      CHECK(q.stream == int64_t(num(rows[i], "stream")));
      CHECK(double(q.summary.count) == num(rows[i], "queue_length_count"));
      CHECK(q.summary.min == num(rows[i], "queue_length_min"));
      CHECK(q.summary.max == num(rows[i], "queue_length_max"));
      CHECK(q.summary.mean == doctest::Approx(num(rows[i], "queue_length_mean")).epsilon(0.01));
    }
  }

  SUBCASE("memory bandwidth summary (counts exact, values to 1e-9)") {
    auto rows = read_csv(ref / "memory_bw_summary.csv");
    REQUIRE(rows.size() == r.bandwidth->size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const MemoryBandwidthKind& k = (*r.bandwidth)[i];
      CHECK(k.copy_kind == rows[i]["name"]);
      CHECK(double(k.summary.count) == num(rows[i], "memory_bw_gbps_count"));
      CHECK(k.summary.mean == doctest::Approx(num(rows[i], "memory_bw_gbps_mean")).epsilon(1e-9));
      CHECK(k.summary.max == doctest::Approx(num(rows[i], "memory_bw_gbps_max")).epsilon(1e-9));
      CHECK(k.summary.min == doctest::Approx(num(rows[i], "memory_bw_gbps_min")).epsilon(1e-9));
    }
  }

  SUBCASE("communication/computation overlap (exact)") {
    auto rows = read_csv(ref / "comm_comp_overlap.csv");
    REQUIRE(r.overlap->overlap_pct);
    CHECK(*r.overlap->overlap_pct == num(rows[0], "comp_comm_overlap_pctg"));
  }

  SUBCASE("frequent kernel sequences (exact)") {
    auto rows = read_csv(ref / "frequent_cuda_kernel_sequences.csv");
    REQUIRE(rows.size() == r.sequences->size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const KernelSequence& s = (*r.sequences)[i];
      CHECK(s.joined() == rows[i]["pattern"]);
      CHECK(double(s.count) == num(rows[i], "count"));
      CHECK(us_of(double(s.gpu_kernel_time)) == num(rows[i], "GPU kernel duration (us)"));
      CHECK(us_of(double(s.cpu_op_time)) == num(rows[i], "CPU op duration (us)"));
    }
  }
}

}  // namespace

TEST_CASE("HTA reference: hta_trace_diff_control_a100 (rank 3 / last-step filter)") {
  Fixture* f = fixture("hta_trace_diff_control_a100", "aten::linear", 3, 62255);
  if (!f) return;
  check_all(*f);
}

TEST_CASE("HTA reference: hta_sampled_rank0 (rank 0 / communication-heavy)") {
  Fixture* f = fixture("hta_sampled_rank0", "torch::jit::(anonymous namespace)::DifferentiableGraphBackward", 0, 2403);
  if (!f) return;
  check_all(*f);
}
