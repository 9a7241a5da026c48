// HTA mode, classes of differences from Holistic Trace Analysis 0.6.1 found on real traces (issue
// 13), one test per class, and the CUPTI counter analysis (HTA's reference row for row).
// Corpus checks skip with a message when ../shared is absent.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/analysis/numpy_sort.h"
#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/import/common/file_reader.h"
#include "core/import/trace_loader.h"
#include "tests/unit/analysis/analysis_test_util.h"

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

// ---- tie order: numpy's quicksort argsort (behind pandas' sort_values) ----

TEST_CASE("numpy_quicksort_argsort reproduces numpy 1.24's argsort(kind='quicksort') tie order") {
  auto keys = [](size_t n, int64_t m) {
    std::vector<int64_t> k(n);
    for (size_t i = 0; i < n; ++i) k[i] = int64_t((i * 7919 + 13) % size_t(m));
    return k;
  };
  auto checksum = [](const std::vector<uint32_t>& order) {
    int64_t sum = 0;
    for (size_t i = 0; i < order.size(); ++i) sum += int64_t(i + 1) * int64_t(order[i]);
    return sum;
  };
  // Expected values printed by numpy 1.24.2 (np.argsort(keys, kind="quicksort")).
  CHECK(numpy_quicksort_argsort(keys(40, 7)) ==
        std::vector<uint32_t>{39, 4, 32, 25, 11, 18, 1, 36, 29, 8, 22, 15, 33, 26, 19, 12, 5, 16, 37, 2,
                              30, 23, 9, 13, 34, 6, 27, 20, 24, 10, 31, 3, 38, 17, 14, 28, 21, 35, 7, 0});
  CHECK(checksum(numpy_quicksort_argsort(keys(5000, 37))) == 31210632515);
  CHECK(checksum(numpy_quicksort_argsort(keys(100000, 1000))) == 249992469791000);
  std::vector<int64_t> pipe(3000);
  for (size_t i = 0; i < pipe.size(); ++i) pipe[i] = int64_t(std::min(i, pipe.size() - i) / 3);
  CHECK(checksum(numpy_quicksort_argsort(pipe)) == 6752582728);
  CHECK(numpy_quicksort_argsort({}).empty());
}

TEST_CASE("hta (b): queue length statistics in HTA's tie order (trace_diff_control: 634 tied times)") {
  auto s = load_corpus("hta_trace_diff_control_a100");
  std::filesystem::path ref = kSharedDir / "specs" / "reference" / "hta_trace_diff_control_a100" / "queue_length_summary.csv";
  if (!s || !std::filesystem::exists(ref)) return;
  ReportOptions o;
  o.table.mode = Mode::Hta;
  o.only = {"queue_length"};
  Report r = run_report(*s, o);
  auto rows = read_csv_file(ref);
  REQUIRE(rows.size() == r.queues->size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Describe& d = (*r.queues)[i].summary;
    INFO("stream " << rows[i]["stream"]);
    CHECK(d.mean == doctest::Approx(std::stod(rows[i]["queue_length_mean"])).epsilon(1e-12));
    CHECK(d.std == doctest::Approx(std::stod(rows[i]["queue_length_std"])).epsilon(1e-12));
    CHECK(d.p25 == std::stod(rows[i]["queue_length_25%"]));
    CHECK(d.p50 == std::stod(rows[i]["queue_length_50%"]));
    CHECK(d.p75 == std::stod(rows[i]["queue_length_75%"]));
  }
}

// ---- (c) memory bandwidth: every kind's points in one unstable sort ----

TEST_CASE("hta (c): memory-bandwidth counts follow numpy's order of tied points across kinds") {
  // 20 memsets back to back (each end ties the next start) and one memcpy: 42 points, so numpy
  // partitions instead of insertion-sorting and the ties do not keep starts first. The counts
  // were computed with pandas 1.5.3 / numpy 1.24.2 running HTA's code on this trace.
  std::vector<std::string> ev;
  for (int i = 0; i < 20; ++i)
    ev.push_back(gpu("gpu_memset", "Memset (Device)", 7, std::to_string(10 * i), "10", i + 1,
                     R"j(,"memory bandwidth (GB/s)":)j" + std::to_string(i + 1)));
  ev.push_back(gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 8, "50", "100", 99, R"j(,"memory bandwidth (GB/s)":3)j"));
  auto s = load(trace(ev));
  Report r = hta_report(*s, "memory_bw");
  REQUIRE(r.bandwidth->size() == 2);
  const MemoryBandwidthKind& memset = (*r.bandwidth)[1];
  CHECK(memset.copy_kind == "Memset");
  CHECK(memset.summary.count == 27);  // starts-before-ends at ties would give 39
  CHECK((*r.bandwidth)[0].summary.count == 1);
}

TEST_CASE("hta (a)(c)(d): corpus traces against HTA's code paths run with pandas 1.5.3 / numpy 1.24.2") {
  // Expected values: HTA 0.6.1's loading, get_memory_bw_summary and kernel-type sweep, run in
  // pandas 1.5.3 on the files (the same library versions as reference-values.md). Before the
  // fixes Sightline gave DtoD 7675 on hta_trace_diff_test_v100 (tie order), DtoD 1292 and
  // COMPUTATION 371264 / MEMORY 2063 on hta_ns_resolution_v100 (rounding), and no zero rows.
  struct Case {
    const char* trace;
    std::map<std::string, uint64_t> bw_counts;
    std::vector<std::pair<std::string, int64_t>> types;  // label, µs, HTA's row order
  };
  const Case cases[] = {
      {"hta_trace_diff_test_v100",
       {{"Memcpy DtoD", 5461}, {"Memcpy DtoH", 50}, {"Memcpy HtoD", 125}, {"Memset", 725}},
       {}},
      {"hta_ns_resolution_v100",
       {{"Memcpy DtoD", 1284}, {"Memset", 116}},
       {{"COMPUTATION", 372150}, {"MEMORY", 2371}}},
      {"kin_resnet50_nw0_run1",
       {},
       {{"COMPUTATION", 492891}, {"MEMORY", 10140}, {"COMPUTATION overlapping MEMORY", 0}}},
  };
  for (const Case& c : cases) {
    auto s = load_corpus(c.trace);
    if (!s) return;
    INFO(c.trace);
    ReportOptions o;
    o.table.mode = Mode::Hta;
    o.only = {"memory_bw", "kernel_type_breakdown"};
    Report r = run_report(*s, o);
    for (auto& [kind, count] : c.bw_counts) {
      INFO(kind);
      auto it = std::find_if(r.bandwidth->begin(), r.bandwidth->end(), [&](const auto& k) { return k.copy_kind == kind; });
      REQUIRE(it != r.bandwidth->end());
      CHECK(it->summary.count == count);
    }
    if (c.types.empty()) continue;
    REQUIRE(r.kernels->by_type.size() == c.types.size());
    for (size_t i = 0; i < c.types.size(); ++i) {
      CHECK(r.kernels->by_type[i].label == c.types[i].first);
      CHECK(r.kernels->by_type[i].time == usec(c.types[i].second));
    }
  }
}

// ---- (d) kernel-type breakdown: states reached for zero time are rows ----

TEST_CASE("hta (d): a zero-time type overlap is a row (COMPUTATION overlapping MEMORY, 0)") {
  // A memset of 0 µs inside a kernel: HTA's sweep passes through COMPUTATION+MEMORY for no time.
  auto s = load(trace({kernel("k", 7, "0", "10", 1), gpu("gpu_memset", "Memset (Device)", 8, "5", "0", 2)}));
  Report r = hta_report(*s, "kernel_type_breakdown");
  const auto& rows = r.kernels->by_type;
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].label == "COMPUTATION");
  CHECK(rows[0].time == usec(10));
  CHECK(rows[0].pct == 100.0);
  CHECK(rows[1].label == "COMPUTATION overlapping MEMORY");
  CHECK(rows[1].time == 0);
  CHECK(rows[1].pct == 0.0);
  // Sightline mode reports time actually spent: no zero rows.
  ReportOptions o;
  o.only = {"kernel_type_breakdown"};
  CHECK(run_report(*s, o).kernels->by_type.size() == 1);
}

// ---- (e) frequent kernel sequences: HTA's call stack, not the store's nesting ----

TEST_CASE("hta (e): a zero-length event at a launch's end nests inside it, so the launch is no leaf") {
  // cudaPeekAtLastError (0 µs) right at the end of cudaLaunchKernel: HTA's compare_events puts a
  // zero-length event's start before the other's end, so it becomes the launch's child and the
  // launch stops being a leaf: kernel k2 leaves the pattern. Sightline keeps it.
  auto s = load(trace({X("cpu_op", "aten::op", 1, 1, "0", "100"),
                       launch("cudaLaunchKernel", "10", "5", 1), launch("cudaLaunchKernel", "20", "5", 2),
                       launch("cudaPeekAtLastError", "25", "0", 3), launch("cudaLaunchKernel", "30", "5", 4),
                       launch("cudaLaunchKernel", "40", "5", 5),
                       kernel("k1", 7, "50", "5", 1), kernel("k2", 7, "60", "5", 2), kernel("k4", 7, "70", "5", 4),
                       kernel("k5", 7, "80", "5", 5)}));
  ReportOptions o;
  o.only = {"kernel_sequences"};
  o.operator_name = "aten::op";
  Report sl_mode = run_report(*s, o);
  REQUIRE(sl_mode.sequences->size() == 1);
  CHECK(sl_mode.sequences->front().pattern == std::vector<std::string>{"aten::op", "k1", "k2", "k4", "k5"});
  o.table.mode = Mode::Hta;
  Report hta = run_report(*s, o);
  REQUIRE(hta.sequences->size() == 1);
  CHECK(hta.sequences->front().pattern == std::vector<std::string>{"aten::op", "k1", "k4", "k5"});
}

TEST_CASE("hta (e): hta_negqueue_rank0_a100 pattern counts on HTA's call stacks") {
  auto s = load_corpus("hta_negqueue_rank0_a100");
  if (!s) return;
  // Counts from HTA's CallStackGraph rules run in Python (pandas 1.5.3) on the file; the store's
  // nesting gave 32 and 4 (zero-length events at boundaries nest differently).
  const std::pair<const char*, uint64_t> cases[] = {{"SelectBackward0", 8}, {"aten::mm", 1},
                                                    {"BinaryCrossEntropyWithLogitsBackward0", 8}};
  for (auto [op, count] : cases) {
    INFO(op);
    ReportOptions o;
    o.table.mode = Mode::Hta;
    o.only = {"kernel_sequences"};
    o.operator_name = op;
    Report r = run_report(*s, o);
    REQUIRE(r.sequences->size() == 1);
    CHECK(r.sequences->front().count == count);
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

TEST_CASE("cupti counters: odd args (nested, strings with quotes, exponents, negatives) parse safely") {
  auto s = load(trace({
      launch("cudaLaunchKernel", "0", "2", 1),
      X("cuda_profiler_range", "k", 0, 0, "10", "5",
        R"j({"note": "a \"quoted\", {brace}", "nested": {"x": [1, {"y": 2}]}, "dram__bytes_read.sum": 1.5e3, "m.neg": -4, "flag": true, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum": 7})j"),
  }));
  ReportOptions o;
  o.only = {"cupti_counters"};
  Report r = run_report(*s, o);
  REQUIRE(r.cupti->kernels.size() == 1);
  CHECK(r.cupti->metrics ==
        std::vector<std::string>{"dram__bytes_read.sum", "m.neg", "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"});
  const CuptiKernelCounters& k = r.cupti->kernels[0];
  CHECK(k.values[0] == 1500.0);
  CHECK(k.values[1] == -4.0);
  CHECK(k.flops == 14.0);
  CHECK(k.dram_bytes == 1500.0);
  CHECK(k.op_stack.empty());
  CHECK(k.bottom_op.empty());
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
