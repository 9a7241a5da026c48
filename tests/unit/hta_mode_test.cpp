// HTA mode, classes of differences from Holistic Trace Analysis 0.6.1 found on real traces (issue
// 13), one test per class, and the CUPTI counter analysis (HTA's reference row for row).
// Corpus checks skip with a message when ../shared is absent.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/trace_loader.h"
#include "tests/unit/analysis_test_util.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::analysis::test;

namespace {

#ifdef SIGHTLINE_SHARED_DIR
const std::filesystem::path kSharedDir = SIGHTLINE_SHARED_DIR;
#else
const std::filesystem::path kSharedDir = "../shared";
#endif

std::unique_ptr<TraceStore> load_corpus(const std::string& name) {
  std::filesystem::path path = kSharedDir / "corpus" / (name + ".json.gz");
  if (!std::filesystem::exists(path)) {
    MESSAGE("skipping: " << path.string() << " not found (needs ../shared)");
    return nullptr;
  }
  LoadResult loaded = load_trace(path.string());
  REQUIRE_MESSAGE(loaded.ok(), loaded.error.to_string());
  return std::move(loaded.store);
}

Report hta_report(const TraceStore& s, const std::string& only) {
  ReportOptions o;
  o.table.mode = Mode::Hta;
  o.only = {only};
  return run_report(s, o);
}

// Minimal CSV: quoted fields with doubled quotes, one record per line (no embedded newlines).
std::vector<std::map<std::string, std::string>> read_csv_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path.string());
  auto split = [](const std::string& line) {
    std::vector<std::string> f(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      char c = line[i];
      if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') f.back() += '"', ++i;
      else if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) f.emplace_back();
      else if (c != '\r') f.back() += c;
    }
    return f;
  };
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = split(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f = split(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

// HTA writes op_stack as a Python list repr: ['aten::conv2d', 'aten::convolution'].
std::vector<std::string> python_str_list(std::string s) {
  std::vector<std::string> out;
  if (s.size() < 2) return out;
  s = s.substr(1, s.size() - 2);
  size_t i = 0;
  while ((i = s.find('\'', i)) != std::string::npos) {
    size_t j = s.find('\'', i + 1);
    if (j == std::string::npos) break;
    out.push_back(s.substr(i + 1, j - i - 1));
    i = j + 1;
  }
  return out;
}

}  // namespace

// ---- (a) fractional-microsecond traces: HTA's rounding happens on float64 values ----

TEST_CASE("hta (a): ceil/floor of fractional µs act on the float64 pandas holds, not the exact decimal") {
  // 1712195495519689.047 µs is 1712195495519689.0 as a double (0.25 µs step at this magnitude):
  // HTA's ceil gives ...689, exact arithmetic ...690; the end 699.047 floors to 699 either way.
  auto s = load(trace({launch("cudaLaunchKernel", "1712195495519680.5", "2.25", 1),
                       kernel("k", 7, "1712195495519689.047", "10.000", 1)}));
  EventTable hta = table(*s, Mode::Hta);
  REQUIRE(hta.rounded);
  REQUIRE(hta.gpu.size() == 1);
  const Row& k = hta.rows[hta.gpu[0]];
  CHECK(s->origin_ns + k.ts == 1712195495519689000);
  CHECK(k.dur == usec(10));
  // The launch: 1712195495519680.5 is exact in float64 -> ceil 681; end 682.75 -> floor 682.
  const Row& l = hta.rows[hta.cpu[0]];
  CHECK(s->origin_ns + l.ts == 1712195495519681000);
  CHECK(l.dur == usec(1));
  EventTable exact = table(*s, Mode::Sightline);
  CHECK(exact.rows[exact.gpu[0]].dur == 10000);
}

TEST_CASE("hta (a): hta_ns_resolution_v100 kernel durations after HTA's rounding") {
  auto s = load_corpus("hta_ns_resolution_v100");
  if (!s) return;
  TableOptions o;
  o.mode = Mode::Hta;
  o.hta_last_step_filter = false;  // every kernel of the file, as the Python check counts them
  EventTable t = build_table(*s, o);
  CHECK(t.rounded);
  int64_t kernels = 0;
  TimeNs sum = 0;
  for (uint32_t i : t.gpu)
    if (t.cat(t.rows[i]) == "kernel") ++kernels, sum += t.rows[i].dur;
  // Python/pandas on the file: sum(floor(ts + dur) - ceil(ts)) over the 4350 kernels = 464915 µs
  // (exact decimal arithmetic would give 463817).
  CHECK(kernels == 4350);
  CHECK(sum == usec(464915));
}

// ---- (b) queue length counts every runtime launch HTA knows ----

TEST_CASE("hta (b): queue length counts driver and HIP launches (the runtime launch set, not launch stats')") {
  auto s = load(trace({launch("cudaLaunchKernel", "0", "2", 1), launch("cuLaunchKernel", "3", "2", 2),
                       launch("hipLaunchKernel", "6", "2", 3), launch("cudaStreamSynchronize", "9", "1", 4),
                       kernel("a", 7, "10", "5", 1), kernel("b", 7, "20", "5", 2), kernel("c", 7, "30", "5", 3),
                       kernel("d", 7, "40", "5", 4)}));
  Report r = hta_report(*s, "queue_length");
  REQUIRE(r.queues->size() == 1);
  const QueueLengthStream& q = r.queues->front();
  CHECK(q.summary.count == 6);  // three launches, three kernels; the sync's correlation is no launch
  CHECK(q.summary.max == 3);
  CHECK(q.summary.min == 0);
}

TEST_CASE("hta (b): TraceLens traces count their cuLaunchKernel / hip launches") {
  // Expected counts from HTA's rule applied to the files with Python (launch set of analyses.md §0).
  const std::pair<const char*, uint64_t> cases[] = {
      {"tl_h100_qwen15_05b", 2396}, {"tl_h100_bert_small", 122}, {"tl_mi300_bert_small", 122}};
  for (auto [name, count] : cases) {
    auto s = load_corpus(name);
    if (!s) return;
    INFO(name);
    Report r = hta_report(*s, "queue_length");
    REQUIRE(r.queues->size() == 1);
    CHECK(r.queues->front().summary.count == count);
  }
}

// ---- CUPTI counters ----

TEST_CASE("cupti counters: HTA's get_cupti_counter_data_with_operators, row for row") {
  auto s = load_corpus("hta_cupti_profiler_a100");
  std::filesystem::path ref = kSharedDir / "specs" / "reference" / "hta_cupti_profiler_a100" /
                              "cupti_counter_data_with_operators.csv";
  if (!s || !std::filesystem::exists(ref)) return;
  auto rows = read_csv_file(ref);
  Report r = hta_report(*s, "cupti_counters");
  REQUIRE(r.cupti);
  const CuptiCounters& c = *r.cupti;
  CHECK(c.note.empty());
  REQUIRE(rows.size() == 77);
  REQUIRE(c.kernels.size() == rows.size());
  CHECK(c.metrics.size() == 9);
  const double ref_ts0 = std::stod(rows[0]["ts"]);
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    const CuptiKernelCounters& k = c.kernels[i];
    CHECK(k.kernel == rows[i]["name"]);
    CHECK(k.top_op == rows[i]["top_level_op"]);
    CHECK(k.bottom_op == rows[i]["bottom_level_op"]);
    CHECK(k.op_stack == python_str_list(rows[i]["op_stack"]));
    CHECK(double(k.dur) / 1000.0 == std::stod(rows[i]["dur"]));
    CHECK(double(k.ts - c.kernels[0].ts) / 1000.0 == std::stod(rows[i]["ts"]) - ref_ts0);
    for (size_t m = 0; m < c.metrics.size(); ++m) {
      INFO(c.metrics[m]);
      REQUIRE(k.values[m]);
      CHECK(*k.values[m] == std::stod(rows[i][c.metrics[m]]));
    }
  }
}

TEST_CASE("cupti counters: derived FLOPs, DRAM bytes and rates; per operator in Sightline mode") {
  auto range = [](const std::string& name, const std::string& ts, const std::string& args) {
    return X("cuda_profiler_range", name, 0, 0, ts, "100", args);
  };
  auto s = load(trace({
      X("cpu_op", "aten::linear", 1, 1, "0", "50"), X("cpu_op", "aten::addmm", 1, 1, "1", "20"),
      launch("cudaLaunchKernel", "2", "5", 1), X("cpu_op", "aten::relu", 1, 1, "30", "10"),
      launch("cuLaunchKernel", "31", "5", 2),
      range("gemm", "1000",
            R"({"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 10, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 3, "dram__bytes_read.sum": 100, "dram__bytes_write.sum": 50, "gpu__time_duration.sum": 1000})"),
      range("relu", "1100", R"({"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 4, "label": "x"})"),
  }));
  ReportOptions o;
  o.only = {"cupti_counters"};
  Report r = run_report(*s, o);
  REQUIRE(r.cupti);
  const CuptiCounters& c = *r.cupti;
  REQUIRE(c.kernels.size() == 2);
  CHECK(c.metrics.size() == 6);  // the string arg is not a counter
  const CuptiKernelCounters& gemm = c.kernels[0];
  CHECK(gemm.op_stack == std::vector<std::string>{"aten::linear", "aten::addmm"});
  CHECK(gemm.bottom_op == "aten::addmm");
  CHECK(gemm.flops == 23.0);  // 2 x 10 FMA + 3 adds
  CHECK(gemm.dram_bytes == 150.0);
  CHECK(*per_second(gemm.flops, gemm.seconds) == doctest::Approx(23e6));
  CHECK(*intensity(gemm.flops, gemm.dram_bytes) == doctest::Approx(23.0 / 150.0));
  const CuptiKernelCounters& relu = c.kernels[1];
  CHECK(relu.bottom_op == "aten::relu");  // the driver launch counts in Sightline mode
  CHECK(relu.flops == 4.0);
  CHECK_FALSE(relu.dram_bytes);
  CHECK_FALSE(relu.seconds);  // range times are synthetic: no rate without gpu__time_duration
  REQUIRE(c.operators.size() == 2);
  CHECK(c.operators[0].op == "aten::addmm");
  CHECK(c.operators[0].flops == 23.0);
  auto tables = report_tables(r);
  auto has = [&](const char* n) {
    return std::any_of(tables.begin(), tables.end(), [&](const Table& t) { return t.name == n; });
  };
  CHECK(has("cupti_counters"));
  CHECK(has("cupti_counters_by_operator"));

  // HTA only pairs cudaLaunchKernel*: 2 ranges, 1 launch -> HTA gives up on the rank; so do we.
  Report h = hta_report(*s, "cupti_counters");
  CHECK(h.cupti->kernels.empty());
  CHECK(h.cupti->note.find("2 profiler ranges but 1 kernel launches") != std::string::npos);
}

TEST_CASE("cupti counters: a trace without counters gets a note, not an empty table") {
  auto s = load(trace({launch("cudaLaunchKernel", "0", "2", 1), kernel("k", 7, "5", "5", 1)}));
  ReportOptions o;
  o.only = {"cupti_counters"};
  Report r = run_report(*s, o);
  CHECK(r.cupti->kernels.empty());
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
    return n.find("no cuda_profiler_range events") != std::string::npos;
  }));
  auto tables = report_tables(r);
  CHECK(std::none_of(tables.begin(), tables.end(), [](const Table& t) { return t.name == "cupti_counters"; }));
}
