// §10 critical path on hand-made traces with known paths (exact lengths and shares), and against
// HTA's critical_path_analysis on the two reference traces.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/analysis/critical_path.h"
#include "core/analysis/critical_path_detail.h"
#include "core/import/common/file_reader.h"
#include "core/import/trace_loader.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::analysis::test;

namespace {

std::string step(const std::string& ts, const std::string& dur) {
  return X("user_annotation", "ProfilerStep#0", 1, 1, ts, dur);
}
std::string op(const std::string& name, const std::string& ts, const std::string& dur) {
  return X("cpu_op", name, 1, 1, ts, dur);
}

CriticalPath path_of(const std::string& json, Mode mode = Mode::Sightline) {
  auto s = load(json);
  static std::unique_ptr<TraceStore> keep;  // the table points into the store
  keep = std::move(s);
  return critical_path(table(*keep, mode));
}

const CriticalPathShare* share(const CriticalPath& p, BoundBy b) {
  for (const auto& s : p.summary)
    if (s.bound_by == b) return &s;
  return nullptr;
}

void check_share(const CriticalPath& p, BoundBy b, int64_t sum_us, uint64_t count) {
  const CriticalPathShare* s = share(p, b);
  REQUIRE_MESSAGE(s, bound_by_name(b));
  CHECK(s->sum == usec(sum_us));
  CHECK(s->count == count);
  TimeNs total = 0;  // the shares' own total: the length, but for HTA's negative weights
  for (const auto& x : p.summary) total += x.sum;
  CHECK(s->pct == doctest::Approx(100.0 * double(sum_us * 1000) / double(total)));
}

}  // namespace

TEST_CASE("critical path: CPU-bound iteration") {
  // A [10,60] launches a short kernel; B [60,100] follows. The CPU chain is the path.
  CriticalPath p = path_of(trace({step("0", "100"), op("A", "10", "50"), launch("cudaLaunchKernel", "20", "5", 1),
                                  kernel("k", 7, "30", "5", 1), op("B", "60", "40")}));
  REQUIRE(p.valid);
  CHECK(p.annotation == "ProfilerStep");
  CHECK(p.instance == 0);
  CHECK(p.length == usec(90));
  CHECK(p.start == usec(10));
  CHECK(p.end == usec(100));
  CHECK(p.summary.size() == 1);
  check_share(p, BoundBy::CpuBound, 90, 5);
}

TEST_CASE("critical path: GPU-bound, kernels queued on one stream") {
  CriticalPath p =
      path_of(trace({step("0", "200"), launch("cudaLaunchKernel", "10", "2", 1), launch("cudaLaunchKernel", "13", "2", 2),
                     op("C", "20", "10"), kernel("k1", 7, "15", "50", 1), kernel("k2", 7, "66", "50", 2)}));
  REQUIRE(p.valid);
  CHECK(p.length == usec(106));
  CHECK(p.start == usec(10));
  CHECK(p.end == usec(116));
  check_share(p, BoundBy::KernelLaunchOverhead, 5, 1);
  check_share(p, BoundBy::GpuCompute, 100, 2);
  check_share(p, BoundBy::KernelKernelOverhead, 1, 1);
  CHECK(share(p, BoundBy::CpuBound) == nullptr);
}

TEST_CASE("critical path: launch-bound kernels") {
  // Each kernel finds its stream empty: launch edges; the CPU's launch loop sets the pace.
  CriticalPath p = path_of(trace({step("0", "100"), launch("cudaLaunchKernel", "10", "5", 1),
                                  launch("cudaLaunchKernel", "30", "5", 2), launch("cudaLaunchKernel", "50", "5", 3),
                                  kernel("k1", 7, "20", "2", 1), kernel("k2", 7, "40", "2", 2),
                                  kernel("k3", 7, "60", "2", 3)}));
  REQUIRE(p.valid);
  CHECK(p.length == usec(52));
  CHECK(p.end == usec(62));
  check_share(p, BoundBy::CpuBound, 40, 4);
  check_share(p, BoundBy::KernelLaunchOverhead, 10, 1);
  check_share(p, BoundBy::GpuCompute, 2, 1);
}

TEST_CASE("critical path: host synchronisation") {
  // cudaDeviceSynchronize [20,125] waits for k1 [20,120]; C runs after it. The path goes through
  // the kernel and the zero-weight sync dependency, not through the sync call's own duration.
  CriticalPath p = path_of(trace({step("0", "200"), launch("cudaLaunchKernel", "10", "5", 1),
                                  X("cuda_runtime", "cudaDeviceSynchronize", 1, 1, "20", "105"),
                                  kernel("k1", 7, "20", "100", 1), op("C", "130", "10")}));
  REQUIRE(p.valid);
  CHECK(p.length == usec(125));
  CHECK(p.start == usec(10));
  CHECK(p.end == usec(140));
  check_share(p, BoundBy::KernelLaunchOverhead, 10, 1);
  check_share(p, BoundBy::GpuCompute, 100, 1);
  check_share(p, BoundBy::Dependency, 0, 1);
  check_share(p, BoundBy::CpuBound, 15, 2);
  CHECK(bound_by_name(BoundBy::Dependency).empty());
}

TEST_CASE("critical path: cross-stream event wait") {
  // Stream 8 waits (cudaStreamWaitEvent) on the event recorded after k1 on stream 7: k3 starts
  // when k1 ends. The Kineto cuda_sync activity names the record's correlation and both streams.
  std::string wait = gpu("cuda_sync", "Stream Wait Event", 8, "101", "0", 3,
                         R"(,"wait_on_stream":7,"wait_on_cuda_event_record_corr_id":2)");
  CriticalPath p = path_of(trace({step("0", "200"), launch("cudaLaunchKernel", "10", "2", 1),
                                  launch("cudaEventRecord", "13", "1", 2), launch("cudaStreamWaitEvent", "15", "1", 3),
                                  launch("cudaLaunchKernel", "17", "2", 4), kernel("k1", 7, "20", "80", 1),
                                  kernel("k3", 8, "101", "10", 4), wait}));
  REQUIRE(p.valid);
  CHECK(p.length == usec(100));
  CHECK(p.end == usec(111));
  check_share(p, BoundBy::KernelLaunchOverhead, 10, 1);
  check_share(p, BoundBy::GpuCompute, 90, 2);
  check_share(p, BoundBy::Dependency, 0, 1);
}

TEST_CASE("critical path: annotation and instance choice, clear notes") {
  std::string json = trace({X("user_annotation", "ProfilerStep#4", 1, 1, "0", "50"), op("A", "10", "20"),
                            X("user_annotation", "ProfilerStep#5", 1, 1, "50", "50"), op("B", "60", "30")});
  auto s = load(json);
  EventTable t = table(*s, Mode::Sightline);
  CriticalPath first = critical_path(t);
  REQUIRE(first.valid);
  CHECK(first.length == usec(20));
  CriticalPathOptions o;
  o.instance = 1;
  CriticalPath second = critical_path(t, o);
  REQUIRE(second.valid);
  CHECK(second.instance == 1);
  CHECK(second.length == usec(30));
  o.instance = 2;
  CriticalPath none = critical_path(t, o);
  CHECK_FALSE(none.valid);
  CHECK(none.note.find("out of range") != std::string::npos);
  o.annotation = "Nope";
  o.annotation_explicit = true;  // a name the user gave: no whole-trace stand-in
  o.instance.reset();
  CHECK(critical_path(t, o).note.find("no 'Nope' annotation") != std::string::npos);
}

TEST_CASE("critical path: without ProfilerStep the whole trace is one instance, in both modes") {
  // §10: HTA mode too runs on such a trace, as HTA's annotation='', and says so.
  auto s = load(trace({op("A", "10", "50"), launch("cudaLaunchKernel", "20", "5", 1), kernel("k", 7, "30", "5", 1),
                       op("B", "70", "30")}));
  for (Mode mode : {Mode::Sightline, Mode::Hta}) {
    INFO(std::string(mode == Mode::Hta ? "hta" : "sightline"));
    EventTable t = table(*s, mode);
    CriticalPath p = critical_path(t);
    REQUIRE(p.valid);
    CHECK(p.annotation.empty());
    CHECK(p.instance == 0);
    CHECK(p.note.find("whole trace is one instance") != std::string::npos);
    CHECK(p.start == 0);  // from the trace's first event, A
    CHECK(p.end == usec(90));
    // A name the user gave is not replaced: the trace lacks it.
    CriticalPathOptions named;
    named.annotation_explicit = true;
    CriticalPath none = critical_path(t, named);
    CHECK_FALSE(none.valid);
    CHECK(none.note.find("no 'ProfilerStep' annotation") != std::string::npos);
    // The whole trace is instance 0 only.
    CriticalPathOptions second;
    second.instance = 1;
    CHECK(critical_path(t, second).note.find("out of range") != std::string::npos);
  }
}

// ---- HTA mode: one hand-made trace per rule where HTA's graph departs from §10 ----


namespace {

// The HTA-mode path of a trace file (paths name rows by index: nothing points into the store).
CriticalPath hta_path_of_file(const std::string& file, const CriticalPathOptions& o) {
  LoadResult loaded = load_trace(file);
  REQUIRE_MESSAGE(loaded.ok(), file);
  TableOptions to;
  to.mode = Mode::Hta;
  return critical_path(build_table(*loaded.store, to), o);
}

CriticalPath hta_path_of(const std::string& json, const CriticalPathOptions& o = {}) {
  static std::unique_ptr<TraceStore> keep;  // the table points into the store
  keep = load(json);
  return critical_path(table(*keep, Mode::Hta), o);
}

// The instance HTA's own critical-path tests analyse in their simple_add and alexnet traces.
CriticalPathOptions measured_forward() {
  CriticalPathOptions o;
  o.annotation = "[param|pytorch.model.alex_net|0|0|0|measure|forward]";
  o.instance = 1;
  return o;
}

bool path_has_edge(const CriticalPath& p, const EventTable& t, std::string_view from, std::string_view to, BoundBy b) {
  for (const auto& e : p.path)
    if (t.name(t.rows[e.from_row]) == from && t.name(t.rows[e.to_row]) == to && e.bound_by == b) return true;
  return false;
}

}  // namespace

TEST_CASE("critical path (HTA): HTA's own simple_add test trace, 315 nodes on the path") {
  // HTA's tests/test_critical_path_analysis.py asserts len(critical_path_nodes) == 315 for this
  // trace (tests/data/hta_cp_simple_add_input.json.gz, from HTA's repository) and instance.
  CriticalPath p = hta_path_of_file(sl::test::test_data("hta_cp_simple_add_input.json.gz"), measured_forward());
  REQUIRE(p.valid);
  CHECK(p.path.size() + 1 == 315);
  CHECK(p.length == usec(241724));
}

TEST_CASE("critical path (HTA): top-level ops linked at zero weight, zero-duration events left out") {
  // A [10,60] and B [80,100] under the step, Z a zero-duration op between them. HTA chains
  // top-level ops with a dependency edge of weight 0 (the 20 µs gap is not on the path) and clips
  // events with dur 0 (Z would add a dependency and an operator edge). Sightline: 90 µs.
  std::string json = trace({step("0", "200"), op("A", "10", "50"), op("Z", "70", "0"), op("B", "80", "20")});
  CriticalPath p = hta_path_of(json);
  REQUIRE(p.valid);
  CHECK(p.length == usec(70));
  CHECK(p.start == usec(10));
  CHECK(p.end == usec(100));
  check_share(p, BoundBy::CpuBound, 70, 2);
  check_share(p, BoundBy::Dependency, 0, 1);
  CHECK(path_of(json).length == usec(90));
}

TEST_CASE("critical path (HTA): the backward thread joins the forward thread") {
  // "forward" on thread 1, an autograd op on thread 2 after it: HTA merges the backward thread
  // into the forward one, so a dependency edge crosses threads and the path covers both.
  std::string json = trace({step("0", "300"), op("forward", "10", "100"),
                            X("cpu_op", "autograd::engine::evaluate_function: AddBackward0", 1, 2, "150", "100")});
  auto s = load(json);
  EventTable t = table(*s, Mode::Hta);
  CriticalPath p = critical_path(t);
  REQUIRE(p.valid);
  CHECK(p.length == usec(200));
  check_share(p, BoundBy::CpuBound, 200, 2);
  check_share(p, BoundBy::Dependency, 0, 1);
  CHECK(path_has_edge(p, t, "forward", "autograd::engine::evaluate_function: AddBackward0", BoundBy::Dependency));
  // Without an autograd thread the two ops stay on separate chains.
  std::string apart = trace({step("0", "300"), op("forward", "10", "100"), X("cpu_op", "other", 1, 2, "150", "100")});
  CHECK(hta_path_of(apart).length == usec(100));
}

TEST_CASE("critical path (HTA): launch edge only for a kernel alone on its stream, else kernel-kernel below 1500 us") {
  // k1 finds stream 7 empty from launch to start (queue length 1 at its launch, 0 once started):
  // launch edge. k2 was queued behind k1: kernel-kernel edge across its 1400 µs gap. k3, queued
  // too, starts 1630 µs after k2 ends: no edge into it at all (not even its launch).
  std::string json = trace({step("0", "4000"), launch("cudaLaunchKernel", "10", "5", 1),
                            launch("cudaLaunchKernel", "30", "5", 2), launch("cudaLaunchKernel", "40", "5", 3),
                            kernel("k1", 7, "20", "100", 1), kernel("k2", 7, "1520", "50", 2),
                            kernel("k3", 7, "3200", "50", 3)});
  CriticalPath p = hta_path_of(json);
  REQUIRE(p.valid);
  CHECK(p.length == usec(1560));
  CHECK(p.end == usec(1570));
  check_share(p, BoundBy::KernelLaunchOverhead, 10, 1);
  check_share(p, BoundBy::GpuCompute, 150, 2);
  check_share(p, BoundBy::KernelKernelOverhead, 1400, 1);
  // 3 launch calls and 3 kernels start → end, 2 dependencies between the calls, 1 launch edge, 1
  // kernel-kernel edge: none into k3.
  CHECK(p.graph_edges == 10);
}

TEST_CASE("critical path (HTA): stream sync edge, a blocking call's own time weighs 0") {
  // cudaStreamSynchronize [20,125] waits for k1 [20,120] (Kineto's "Stream Sync" record on stream
  // 7): a sync edge from k1's end to the call's end; the call's start → end weighs 0.
  std::string json =
      trace({step("0", "200"), launch("cudaLaunchKernel", "10", "5", 1),
             X("cuda_runtime", "cudaStreamSynchronize", 1, 1, "20", "105", R"({"correlation":2})"),
             kernel("k1", 7, "20", "100", 1), gpu("cuda_sync", "Stream Sync", 7, "20", "100", 2), op("C", "130", "10")});
  CriticalPath p = hta_path_of(json);
  REQUIRE(p.valid);
  CHECK(p.length == usec(120));
  CHECK(p.start == usec(10));
  CHECK(p.end == usec(140));
  check_share(p, BoundBy::KernelLaunchOverhead, 10, 1);
  check_share(p, BoundBy::GpuCompute, 100, 1);
  check_share(p, BoundBy::Dependency, 0, 2);
  check_share(p, BoundBy::CpuBound, 10, 1);
}

TEST_CASE("critical path (HTA): a stream wait makes the next kernel on the waiting stream wait") {
  // cudaEventRecord (corr 2) after k1's launch on stream 7; cudaStreamWaitEvent (corr 3, Kineto's
  // "Stream Wait Event" record on stream 8 naming the record and stream 7); k3 launched next onto
  // stream 8 waits for k1: sync edge k1 end → k3 start, and no launch edge (the wait ended after
  // k3's launch call).
  std::string wait = gpu("cuda_sync", "Stream Wait Event", 8, "16", "0", 3,
                         R"(,"wait_on_stream":7,"wait_on_cuda_event_record_corr_id":2)");
  std::string json = trace({step("0", "200"), launch("cudaLaunchKernel", "10", "2", 1),
                            launch("cudaEventRecord", "13", "1", 2), launch("cudaStreamWaitEvent", "15", "1", 3),
                            launch("cudaLaunchKernel", "17", "2", 4), kernel("k1", 7, "20", "80", 1),
                            kernel("k3", 8, "101", "10", 4), wait});
  auto s = load(json);
  EventTable t = table(*s, Mode::Hta);
  CriticalPath p = critical_path(t);
  REQUIRE(p.valid);
  CHECK(p.length == usec(100));
  CHECK(p.end == usec(111));
  check_share(p, BoundBy::KernelLaunchOverhead, 10, 1);
  check_share(p, BoundBy::GpuCompute, 90, 2);
  check_share(p, BoundBy::Dependency, 0, 1);
  CHECK(path_has_edge(p, t, "k1", "k3", BoundBy::Dependency));
}

TEST_CASE("critical path (HTA): a sub-µs activity rounded to -1 µs counts 0 in the length, -1 in its sum") {
  // Three kernels queued on stream 7: k1 [15, 35], a memset [35.6, 35.9] that rounds to start 36,
  // end 35 (loading rule 2), k2 [38, 48]. networkx measures the path over the validated weights
  // (-1 -> 0): 20 + 1 + 0 + 3 + 10 = 34 µs; the breakdown keeps the edge's own -1 (gpu_compute
  // 20 - 1 + 10 = 29), 33 µs in all. (Three held-out H100 traces differed from HTA by 11-17 µs.)
  std::string json = trace({step("0", "100"), launch("cudaLaunchKernel", "10", "1", 1),
                            launch("cudaLaunchKernel", "12", "1", 2), launch("cudaLaunchKernel", "13", "1", 3),
                            kernel("k1", 7, "15", "20", 1), kernel("Memset (Device)", 7, "35.6", "0.3", 2),
                            kernel("k2", 7, "38", "10", 3)});
  CriticalPath p = hta_path_of(json);
  REQUIRE(p.valid);
  CHECK(p.length == usec(34));
  CHECK(p.start == usec(15));
  CHECK(p.end == usec(48));
  check_share(p, BoundBy::GpuCompute, 29, 3);
  check_share(p, BoundBy::KernelKernelOverhead, 4, 2);
  CHECK(p.summary.size() == 2);
}

TEST_CASE("critical path (HTA): instances are rows whose name contains the annotation, in row order") {
  std::string json = trace({X("user_annotation", "Iteration#5", 1, 1, "50", "50"), op("B", "60", "30"),
                            X("user_annotation", "Iteration#4", 1, 1, "0", "50"), op("A", "10", "20")});
  CriticalPathOptions o;
  o.annotation = "Iteration";
  o.instance = 1;
  CriticalPath p = hta_path_of(json, o);
  REQUIRE(p.valid);
  CHECK(p.length == usec(20));  // the second row in file order is Iteration#4
  o.annotation = "ration#";
  o.instance = 0;
  CHECK(hta_path_of(json, o).length == usec(30));
  o.instance = 2;
  CHECK(hta_path_of(json, o).note.find("out of range") != std::string::npos);
}

// HTA's critical_path_analysis on the two reference traces (reference-values.md,
// critical_path_stats.json): length, span of the path, and every bound_by's sum and count.
namespace {

#ifdef SIGHTLINE_SHARED_DIR
const std::filesystem::path kCpShared = SIGHTLINE_SHARED_DIR;
#else
const std::filesystem::path kCpShared = "../shared";
#endif

struct CpReference {
  const char* trace;
  int64_t rank, instance, length_us, span_us;  // span: critical_path_end_ts - critical_path_start_ts
  uint64_t graph_nodes, graph_edges;
  std::vector<std::tuple<std::string, int64_t, uint64_t>> summary;  // bound_by, sum_us, count
};

void check_reference(const CpReference& ref) {
  auto file = kCpShared / "corpus" / (std::string(ref.trace) + ".json.gz");
  if (!std::filesystem::exists(file)) {
    MESSAGE("skipped: " << file.string() << " absent (../shared not mounted)");
    return;
  }
  CriticalPathOptions o;
  o.instance = ref.instance;
  CriticalPath p = hta_path_of_file(file.string(), o);
  REQUIRE(p.valid);
  CHECK(p.rank == ref.rank);
  CHECK(p.instance == ref.instance);
  CHECK(p.length == usec(ref.length_us));
  CHECK(p.end - p.start == usec(ref.span_us));
  CHECK(p.graph_nodes == ref.graph_nodes);
  CHECK(p.graph_edges == ref.graph_edges);
  CHECK(p.summary.size() == ref.summary.size());
  for (const auto& [name, sum_us, count] : ref.summary) {
    const CriticalPathShare* s = nullptr;
    for (const auto& x : p.summary)
      if (bound_by_name(x.bound_by) == name) s = &x;
    CHECK_MESSAGE(s, "bound_by '" << name << "' missing");
    if (!s) continue;
    CHECK(s->sum == usec(sum_us));
    CHECK(s->count == count);
  }
}

}  // namespace

TEST_CASE("critical path: HTA reference, trace_diff_control rank 3 instance 1") {
  check_reference({"hta_trace_diff_control_a100", 3, 1, 40308, 152476 - 107724, 19846, 19839,
                   {{"", 0, 649},
                    {"cpu_bound", 28953, 9547},
                    {"gpu_compute_bound", 10791, 92},
                    {"gpu_kernel_kernel_overhead", 550, 91},
                    {"gpu_kernel_launch_overhead", 14, 1}}});
}

TEST_CASE("critical path: HTA reference, sampled_rank0 instance 0") {
  check_reference({"hta_sampled_rank0", 0, 0, 301476, 602994 - 2305, 4734, 4704,
                   {{"", 0, 265},
                    {"cpu_bound", 300492, 3256},
                    {"gpu_compute_bound", 948, 3},
                    {"gpu_kernel_kernel_overhead", 30, 2},
                    {"gpu_kernel_launch_overhead", 6, 1}}});
}


// HTA's own critical-path tests (tests/test_critical_path_analysis.py) on their traces, kept in
// the shared corpus: the path sizes and the synchronisation edges they assert, found by names.
namespace {

struct CorpusGraph {
  std::unique_ptr<TraceStore> store;
  EventTable table;
  CriticalPath path;
  std::vector<CriticalPathEdge> edges;
};

std::optional<CorpusGraph> corpus_graph(const std::string& name, const CriticalPathOptions& o) {
  auto file = kCpShared / "corpus" / (name + ".json.gz");
  if (!std::filesystem::exists(file)) {
    MESSAGE("skipped: " << file.string() << " absent (../shared not mounted)");
    return std::nullopt;
  }
  LoadResult loaded = load_trace(file.string());
  REQUIRE(loaded.ok());
  CorpusGraph g;
  g.store = std::move(loaded.store);
  TableOptions to;
  to.mode = Mode::Hta;
  g.table = build_table(*g.store, to);
  g.path = critical_path(g.table, o);
  g.edges = detail::hta_graph_edges(g.table, o);
  return g;
}

// A zero-weight dependency edge from the end of an event named `from` to the start (or end) of
// one named `to`.
bool has_sync_edge(const CorpusGraph& g, std::string_view from, std::string_view to, bool to_start) {
  for (const auto& e : g.edges)
    if (!e.from_start && e.to_start == to_start && e.bound_by == BoundBy::Dependency && e.weight == 0 &&
        g.table.name(g.table.rows[e.from_row]) == from && g.table.name(g.table.rows[e.to_row]) == to)
      return true;
  return false;
}

}  // namespace

TEST_CASE("critical path (HTA): HTA's alexnet test (149 path nodes, a GPU-to-GPU event sync)") {
  auto g = corpus_graph("hta_cp_alexnet_a100", measured_forward());
  if (!g) return;
  REQUIRE(g->path.valid);
  CHECK(g->path.path.size() + 1 == 149);
  bool fft_to_elementwise = false;
  for (const auto& e : g->edges) {
    std::string_view from = g->table.name(g->table.rows[e.from_row]), to = g->table.name(g->table.rows[e.to_row]);
    fft_to_elementwise |= !e.from_start && e.to_start && e.bound_by == BoundBy::Dependency &&
                          from.starts_with("void fft2d_c2r_32x32") && g->table.rows[e.from_row].stream == 20 &&
                          g->table.rows[e.to_row].stream == 7 && to.find("elementwise") != std::string_view::npos;
  }
  CHECK(fft_to_elementwise);
}

TEST_CASE("critical path (HTA): HTA's event-sync test (kernel to cudaEventSynchronize and cudaDeviceSynchronize)") {
  auto g = corpus_graph("hta_cp_event_sync", {});
  if (!g) return;
  REQUIRE(g->path.valid);
  const std::string_view spin = "at::cuda::(anonymous namespace)::spin_kernel(long)";
  CHECK(has_sync_edge(*g, spin, "cudaEventSynchronize", false));
  CHECK(has_sync_edge(*g, spin, "cudaDeviceSynchronize", false));
}

TEST_CASE("critical path (HTA): HTA's multi-stream event-sync test (whole trace, kernel 1 to the memset)") {
  CriticalPathOptions o;
  o.annotation = "";
  auto g = corpus_graph("hta_cp_event_sync_multistream", o);
  if (!g) return;
  REQUIRE(g->path.valid);
  CHECK(has_sync_edge(*g, "ampere_sgemm_128x64_nn", "Memset (Device)", true));
}

