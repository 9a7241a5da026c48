// The diff engine on small hand-made pairs: every ops-diff change category, short names,
// iterations, and the aligned diff (inserted op, removed op, renamed kernel, other step numbers).
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>

#include "core/diff/trace_diff.h"
#include "core/names/hta_short_name.h"
#include "tests/unit/analysis/analysis_test_util.h"

using namespace sl;
using namespace sl::diff;
using namespace sl::analysis::test;
using sl::analysis::Mode;


namespace {

std::string op(const std::string& name, const std::string& ts, const std::string& dur, int tid = 1) {
  return X("cpu_op", name, 1, tid, ts, dur);
}
std::string step(int n, const std::string& ts, const std::string& dur) {
  return X("user_annotation", "ProfilerStep#" + std::to_string(n), 1, 1, ts, dur);
}

const OpsDiffRow* row(const OpsDiff& d, const std::string& name) {
  for (const auto& r : d.rows)
    if (r.name == name) return &r;
  return nullptr;
}

OpsDiff ops_of(const TraceStore& a, const TraceStore& b, Mode mode, diff::Device device = diff::Device::All,
               std::optional<int64_t> ia = {}, std::optional<int64_t> ib = {}) {
  DiffOptions o;
  o.mode = mode;
  o.device = device;
  o.iteration_a = ia;
  o.iteration_b = ib;
  return trace_diff(a, b, o).ops;
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("ops diff: added / deleted / increased / decreased / unchanged in both modes") {
  auto a = load(trace({op("A", "100", "10"), op("A", "120", "10"), op("B", "140", "5"), op("C", "150", "1"),
                       op("D", "160", "7")}));
  auto b = load(trace({op("A", "100", "12"), op("B", "140", "6"), op("C", "150", "1"), op("C", "152", "1"),
                       op("C", "154", "2"), op("E", "160", "3")}));
  for (Mode m : {Mode::Sightline, Mode::Hta}) {
    OpsDiff d = ops_of(*a, *b, m);
    CHECK_FALSE(d.control_iteration);  // no ProfilerStep: every event
    REQUIRE(d.rows.size() == 5);
    CHECK(d.rows[0].name == "A");
    CHECK(d.added == std::vector<std::string>{"E"});
    CHECK(d.deleted == std::vector<std::string>{"D"});
    CHECK(d.increased == std::vector<std::string>{"C"});
    CHECK(d.decreased == std::vector<std::string>{"A"});
    CHECK(d.unchanged == std::vector<std::string>{"B"});
    const OpsDiffRow* A = row(d, "A");
    CHECK(A->control_count == 2);
    CHECK(A->control_total == usec(20));
    CHECK(A->test_total == usec(12));
    CHECK(A->diff_total() == usec(-8));
    CHECK(A->sign() == '-');
    CHECK(row(d, "C")->sign() == '+');
    CHECK(row(d, "C")->test_total == usec(4));
    CHECK(row(d, "D")->test_count == 0);
    CHECK(row(d, "E")->control_count == 0);
    CHECK(row(d, "B")->sign() == '=');
  }
}

TEST_CASE("ops diff: the first iteration by default and a chosen one; device filter follows launches") {
  // Step 1 holds A and a launch of kernel k1; step 2 holds B and a launch of k2.
  auto json = trace({step(1, "100", "100"), op("A", "110", "10"), launch("cudaLaunchKernel", "130", "5", 1),
                     step(2, "200", "100"), op("B", "210", "10"), launch("cudaLaunchKernel", "230", "5", 2),
                     kernel("k1", 7, "250", "20", 1), kernel("k2", 7, "280", "30", 2)});
  auto s = load(json);
  for (Mode m : {Mode::Sightline, Mode::Hta}) {
    OpsDiff first = ops_of(*s, *s, m);
    REQUIRE(first.control_iteration == 1);
    CHECK(row(first, "A"));
    CHECK_FALSE(row(first, "B"));
    REQUIRE(row(first, "k1"));  // starts after step 1 ended, belongs to it through its launch
    CHECK_FALSE(row(first, "k2"));
    OpsDiff second = ops_of(*s, *s, m, diff::Device::Gpu, 2, 2);
    REQUIRE(second.rows.size() == 1);
    CHECK(second.rows[0].name == "k2");
    CHECK(second.rows[0].control_total == usec(30));
    OpsDiff cpu = ops_of(*s, *s, m, diff::Device::Cpu, 1, 2);
    CHECK(has(cpu.deleted, "A"));
    CHECK(has(cpu.added, "B"));
    if (m == Mode::Hta) CHECK(has(cpu.deleted, "ProfilerStep#1"));
    else CHECK(has(cpu.unchanged, "ProfilerStep#*"));  // Sightline: the compared steps are one op
    CHECK(has(cpu.unchanged, "cudaLaunchKernel"));
    CHECK_FALSE(row(cpu, "k1"));
  }
  CHECK_THROWS_AS(ops_of(*s, *s, Mode::Sightline, diff::Device::All, 7, 1), std::invalid_argument);
}

TEST_CASE("ops diff: HTA iteration quirks (unpaired kernel and file event 0)") {
  // Kernel k0 has no launch in the trace: HTA gives it no iteration, so it is never compared.
  auto s = load(trace({step(1, "100", "100"), op("A", "110", "10"), kernel("k0", 7, "120", "5", 42)}));
  OpsDiff hta = ops_of(*s, *s, Mode::Hta);
  CHECK(row(hta, "A"));
  CHECK_FALSE(row(hta, "k0"));
}

TEST_CASE("short names follow HTA's shorten_name") {
  CHECK(hta_short_name("aten::add") == "aten::add");
  CHECK(hta_short_name("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                   "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)") ==
        "at::native::vectorized_elementwise_kernel");
  CHECK(hta_short_name("Memcpy HtoD (Pinned -> Device)") == "Memcpy HtoD (Pinned -> Device)");
  CHECK(hta_short_name("std::vector<int> foo(int)") == "foo");
  CHECK(hta_short_name("a->b(x)") == "ab");
  CHECK(hta_short_name("autograd::engine::evaluate_function: AddmmBackward0") ==
        "autograd::engine::evaluate_function: AddmmBackward0");  // no bracket: whole
  // Two kernels that differ only in template arguments merge under --short-names.
  auto a = load(trace({op("f<int>(int)", "100", "10"), op("f<float>(float)", "120", "5")}));
  DiffOptions o;
  o.short_names = true;
  OpsDiff d = trace_diff(*a, *a, o).ops;
  REQUIRE(d.rows.size() == 1);
  CHECK(d.rows[0].name == "f");
  CHECK(d.rows[0].control_count == 2);
  CHECK(d.rows[0].control_total == usec(15));
}

namespace {

// Run A: step 1 { forward { linear{launch→gemm} relu{launch→relu_k} add } }
std::string run_a() {
  return trace({step(1, "100", "200"), op("forward", "105", "150"), op("aten::linear", "110", "40"),
                launch("cudaLaunchKernel", "120", "5", 1), op("aten::relu", "160", "20"),
                launch("cudaLaunchKernel", "165", "5", 2), op("aten::add", "200", "10"),
                kernel("gemm_v1", 7, "130", "50", 1), kernel("relu_k", 7, "185", "10", 2)});
}
// Run B: step 5 { forward { linear{launch→gemm_v2} dropout relu{launch→relu_k} } } (add removed)
std::string run_b() {
  return trace({step(5, "1000", "300"), op("forward", "1005", "250"), op("aten::linear", "1010", "60"),
                launch("cudaLaunchKernel", "1020", "5", 11), op("aten::dropout", "1080", "30"),
                op("aten::relu", "1120", "25"), launch("cudaLaunchKernel", "1125", "5", 12),
                kernel("gemm_v2", 7, "1030", "70", 11), kernel("relu_k", 7, "1150", "10", 12)});
}

const AlignedOp* aligned_op(const AlignedDiff& d, const std::string& name) {
  for (const auto& o : d.ops)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("aligned diff: inserted op, removed op, renamed kernel, different iteration numbers") {
  auto a = load(run_a());
  auto b = load(run_b());
  AlignedDiff d = aligned_diff(*a, *b);
  REQUIRE(d.iterations.size() == 1);  // no common number: the i-th with the i-th
  CHECK(d.chosen.a == 1);
  CHECK(d.chosen.b == 5);
  CHECK(d.chosen.dur_a() == usec(200));
  CHECK(d.chosen.dur_b() == usec(300));

  REQUIRE(d.removed.size() == 1);
  CHECK(d.removed[0].name == "aten::add");
  CHECK(d.removed[0].where == "ProfilerStep#1 > forward");
  CHECK(d.removed[0].position == 2);
  REQUIRE(d.added.size() == 1);
  CHECK(d.added[0].name == "aten::dropout");
  CHECK(d.added[0].where == "ProfilerStep#5 > forward");
  CHECK(d.added[0].position == 1);
  CHECK(d.added[0].dur == usec(30));

  const AlignedOp* linear = aligned_op(d, "aten::linear");
  REQUIRE(linear);
  CHECK(linear->path == "ProfilerStep#1 > forward > aten::linear");
  CHECK(linear->depth == 2);
  CHECK(linear->dur_a == usec(40));
  CHECK(linear->dur_b == usec(60));
  CHECK(linear->delta() == usec(20));
  CHECK(linear->self_a == usec(35));  // minus its 5 µs launch call
  CHECK(linear->kernel_time_a == usec(50));
  CHECK(linear->kernel_time_b == usec(70));
  CHECK(linear->kernels_renamed == std::vector<std::string>{"gemm_v1 -> gemm_v2"});
  CHECK(linear->kernels_added.empty());
  const AlignedOp* relu = aligned_op(d, "aten::relu");
  REQUIRE(relu);
  CHECK(relu->kernels_renamed.empty());
  CHECK(relu->kernels_a == 1);
  CHECK(relu->delta() == usec(5));
  const AlignedOp* fwd = aligned_op(d, "forward");
  REQUIRE(fwd);
  CHECK(fwd->kernels_a == 2);
  CHECK(fwd->kernel_time_b == usec(80));
  // The launch calls align but are not listed as operators.
  CHECK_FALSE(aligned_op(d, "cudaLaunchKernel"));
  // Slices: A has 7 (step, forward, linear, launch, relu, launch, add), B 7; 6 matched.
  CHECK(d.nodes_a == 7);
  CHECK(d.nodes_b == 7);
  CHECK(d.matched == 6);
  CHECK(d.matched_fraction == doctest::Approx(12.0 / 14.0));
  // Own-time changes: forward +55 µs (dropout inside it is new), linear +20, relu +5, step 0.
  REQUIRE(d.regressions.size() == 3);
  CHECK(d.ops[d.regressions[0]].name == "forward");
  CHECK(d.ops[d.regressions[0]].self_delta() == usec(55));
  CHECK(d.ops[d.regressions[1]].name == "aten::linear");
  CHECK(d.ops[d.regressions[2]].name == "aten::relu");
  CHECK(d.improvements.empty());
}

TEST_CASE("aligned diff: a kernel added under an op and iterations paired by number") {
  auto a = load(trace({step(3, "100", "100"), op("aten::mm", "110", "20"), launch("cudaLaunchKernel", "112", "2", 1),
                       step(4, "200", "100"), op("aten::mm", "210", "20"), launch("cudaLaunchKernel", "212", "2", 2),
                       kernel("mm_k", 7, "120", "10", 1), kernel("mm_k", 7, "220", "10", 2)}));
  auto b = load(trace({step(4, "100", "150"), op("aten::mm", "110", "30"), launch("cudaLaunchKernel", "112", "2", 1),
                       launch("cudaLaunchKernel", "116", "2", 2), kernel("mm_k", 7, "120", "10", 1),
                       kernel("extra_k", 7, "131", "5", 2)}));
  AlignedDiff d = aligned_diff(*a, *b);
  REQUIRE(d.iterations.size() == 1);  // only step 4 is in both
  CHECK(d.chosen.a == 4);
  CHECK(d.chosen.b == 4);
  const AlignedOp* mm = aligned_op(d, "aten::mm");
  REQUIRE(mm);
  CHECK(mm->kernels_added == std::vector<std::string>{"extra_k"});
  CHECK(mm->kernels_removed.empty());
  CHECK(mm->kernels_b == 2);
  REQUIRE(d.added.size() == 1);
  CHECK(d.added[0].name == "cudaLaunchKernel");
  CHECK(d.added[0].kernels == 1);
  // An explicit iteration picks the same number on the other side, else the same index.
  AlignOptions o;
  o.iteration_a = 3;
  AlignedDiff d3 = aligned_diff(*a, *b, o);
  CHECK(d3.chosen.a == 3);
  CHECK(d3.chosen.b == 4);  // step 3 is A's first, B's first is 4
  o.iteration_a = 9;
  CHECK_THROWS_AS(aligned_diff(*a, *b, o), std::invalid_argument);
}

TEST_CASE("trace diff: summary side by side and rank check") {
  auto a = load(run_a());
  auto b = load(run_b());
  TraceDiff d = trace_diff(*a, *b, {});
  REQUIRE(d.summary_a);
  REQUIRE(d.summary_b);
  CHECK(d.summary_a->step_time == usec(200));
  CHECK(d.summary_b->step_time == usec(300));
  CHECK(d.summary_a->launch_pairs == 2);
  CHECK(d.summary_b->temporal.span == usec(300));  // the idle window: ProfilerStep#5, 1000 .. 1300
  auto tables = diff_tables(d);
  std::string json = render_diff_json(d, tables);
  CHECK(json.find("\"ops_diff\"") != std::string::npos);
  CHECK(json.find("\"matched_fraction\"") != std::string::npos);
  CHECK(json.find("\"gemm_v1 -> gemm_v2\"") != std::string::npos);
  DiffOptions o;
  o.rank_a = 3;
  CHECK_THROWS_AS(trace_diff(*a, *b, o), std::invalid_argument);
  o.mode = Mode::Hta;
  o.rank_a = {};
  TraceDiff h = trace_diff(*a, *b, o);
  CHECK_FALSE(h.aligned);
  CHECK_FALSE(h.summary_a);
}
