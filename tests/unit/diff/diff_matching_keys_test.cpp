// analyses.md §9 "Matching keys" on hand-made pairs: addresses and Python line numbers do not
// make another op, launch calls of CUDA and HIP line up, kernels pair through their launching
// operator (never a memory activity with a compute kernel), and "what changed" ranks by self time.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/diff/trace_diff.h"
#include "core/names/matching_key.h"
#include "tests/unit/analysis/analysis_test_util.h"

using namespace sl;
using namespace sl::diff;
using namespace sl::analysis::test;

namespace {

std::string op(const std::string& name, const std::string& ts, const std::string& dur) {
  return X("cpu_op", name, 1, 1, ts, dur);
}
std::string py(const std::string& name, const std::string& ts, const std::string& dur) {
  return X("python_function", name, 1, 1, ts, dur);
}
std::string step(const std::string& ts, const std::string& dur) {
  return X("user_annotation", "ProfilerStep#1", 1, 1, ts, dur);
}
std::string memset_activity(int stream, const std::string& ts, const std::string& dur, int corr) {
  return gpu("gpu_memset", "Memset (Device)", stream, ts, dur, corr);
}

const AlignedOp* aligned_op(const AlignedDiff& d, const std::string& name) {
  for (const auto& o : d.ops)
    if (o.name == name) return &o;
  return nullptr;
}

const OpsDiffRow* ops_row(const OpsDiff& d, const std::string& name) {
  for (const auto& r : d.rows)
    if (r.name == name) return &r;
  return nullptr;
}

const char* kCutlass = "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>(Params)";
const char* kTensile = "Cijk_Alik_Bljk_B_BS_BH_Bias_HA_S_SAV_UserArgs_MT16x16x128_MI16x16x1_SN_LDSB0";

}  // namespace

TEST_CASE("matching keys: an H100 and an MI300 run line up through their launching operators") {
  // H100: addmm launches a cutlass GEMM (cudaLaunchKernel), fill_ a memset (cudaMemsetAsync).
  auto a = load(trace({step("100", "200"), op("aten::addmm", "110", "40"), launch("cudaLaunchKernel", "112", "4", 1),
                       op("aten::fill_", "160", "20"), launch("cudaMemsetAsync", "162", "4", 2),
                       kernel(kCutlass, 7, "120", "30", 1), memset_activity(7, "170", "2", 2)}));
  // MI300: the same ops through HIP; the GEMM is a Tensile kernel.
  auto b = load(trace({step("100", "200"), op("aten::addmm", "110", "50"), launch("hipExtModuleLaunchKernel", "112", "4", 1),
                       op("aten::fill_", "160", "20"), launch("hipMemsetAsync", "162", "4", 2),
                       kernel(kTensile, 7, "120", "42", 1), memset_activity(7, "170", "2", 2)}));
  AlignedDiff d = aligned_diff(*a, *b);
  CHECK(d.nodes_a == 5);
  CHECK(d.matched == 5);  // the launch calls too: by what they launched, not by API name
  CHECK(d.matched_fraction == doctest::Approx(1.0));
  const AlignedOp* addmm = aligned_op(d, "aten::addmm");
  REQUIRE(addmm);
  CHECK(addmm->kernels_removed.empty());
  CHECK(addmm->kernels_added.empty());
  REQUIRE(d.kernel_pairs.size() == 1);
  const KernelPair& k = d.kernel_pairs[0];
  CHECK(d.ops[k.op].name == "aten::addmm");
  CHECK(k.name_a == kCutlass);
  CHECK(k.name_b == kTensile);
  CHECK(k.delta() == 12'000);
  const AlignedOp* fill = aligned_op(d, "aten::fill_");
  REQUIRE(fill);
  CHECK(fill->kernels_renamed.empty());  // the memsets are the same activity
}

TEST_CASE("matching keys: a memset never pairs with a GEMM") {
  // One op, A: a memset then a GEMM; B: another GEMM only. In order, the memset would have been
  // "renamed" to B's GEMM (the earlier bug); within a kind, A's GEMM pairs with B's.
  auto a = load(trace({step("100", "200"), op("aten::linear", "110", "60"), launch("cudaMemsetAsync", "112", "4", 1),
                       launch("cudaLaunchKernel", "120", "4", 2), memset_activity(7, "130", "2", 1),
                       kernel("gemm_sm80", 7, "140", "20", 2)}));
  auto b = load(trace({step("100", "200"), op("aten::linear", "110", "60"), launch("cudaLaunchKernel", "120", "4", 2),
                       kernel("gemm_sm70", 7, "140", "30", 2)}));
  AlignedDiff d = aligned_diff(*a, *b);
  const AlignedOp* linear = aligned_op(d, "aten::linear");
  REQUIRE(linear);
  CHECK(linear->kernels_renamed == std::vector<std::string>{"gemm_sm80 -> gemm_sm70"});
  CHECK(linear->kernels_removed == std::vector<std::string>{"Memset (Device)"});
  CHECK(linear->kernels_added.empty());
  for (const KernelPair& k : d.kernel_pairs) {
    INFO(k.name_a << " -> " << k.name_b);
    CHECK(k.name_a.starts_with("Memset") == k.name_b.starts_with("Memset"));
  }
  // B launches a memcpy where A launched a memset: both stay unpaired.
  auto c = load(trace({step("100", "200"), op("aten::linear", "110", "60"),
                       launch("cudaMemcpyAsync", "112", "4", 1), launch("cudaLaunchKernel", "120", "4", 2),
                       gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 7, "130", "2", 1),
                       kernel("gemm_sm70", 7, "140", "30", 2)}));
  AlignedDiff e = aligned_diff(*a, *c);
  const AlignedOp* l2 = aligned_op(e, "aten::linear");
  REQUIRE(l2);
  CHECK(l2->kernels_renamed == std::vector<std::string>{"gemm_sm80 -> gemm_sm70"});
  CHECK(l2->kernels_removed == std::vector<std::string>{"Memset (Device)"});
  CHECK(l2->kernels_added == std::vector<std::string>{"Memcpy DtoD (Device -> Device)"});
}

TEST_CASE("matching keys: another address or line number is the same call, in both diffs") {
  auto a = load(trace({step("100", "300"), py("torch/nn/modules/module.py(1743): _call_impl", "110", "100"),
                       py("<built-in method cpu of Tensor object at 0x703a305e9e00>", "120", "50"),
                       py("<built-in method pop of dict object at 0x7f03c124d040>", "250", "5")}));
  auto b = load(trace({step("100", "300"), py("torch/nn/modules/module.py(1755): _call_impl", "110", "130"),
                       py("<built-in method cpu of Tensor object at 0x7028f79af840>", "120", "80"),
                       py("<built-in method pop of dict object at 0x7f0ca88f8330>", "250", "5")}));
  TraceDiff d = trace_diff(*a, *b, {});
  REQUIRE(d.aligned);
  CHECK(d.aligned->matched_fraction == doctest::Approx(1.0));
  CHECK(d.aligned->added.empty());
  CHECK(d.aligned->removed.empty());
  const std::string cpu_key = "<built-in method cpu of Tensor object at 0x\u2026>";
  const AlignedOp* cpu = aligned_op(*d.aligned, cpu_key);
  REQUIRE(cpu);
  CHECK(cpu->name_a == "<built-in method cpu of Tensor object at 0x703a305e9e00>");  // both originals kept
  CHECK(cpu->name_b == "<built-in method cpu of Tensor object at 0x7028f79af840>");
  CHECK(cpu->delta() == 30'000);
  CHECK(cpu->path == "ProfilerStep#1 > torch/nn/modules/module.py(\u2026): _call_impl > " + cpu_key);
  // The ops table: one row per call, not +80 / -50 under two addresses.
  const OpsDiffRow* row = ops_row(d.ops, cpu_key);
  REQUIRE(row);
  CHECK(row->control_count == 1);
  CHECK(row->test_count == 1);
  CHECK(row->diff_total() == 30'000);
  CHECK(row->control_name == "<built-in method cpu of Tensor object at 0x703a305e9e00>");
  CHECK(row->test_name == "<built-in method cpu of Tensor object at 0x7028f79af840>");
  CHECK(d.ops.added.empty());
  CHECK(d.ops.deleted.empty());
  for (const auto& r : d.ops.rows) CHECK_FALSE(has_address(r.name));
  for (const auto& op : d.aligned->ops) CHECK_FALSE(has_address(op.name));
}

TEST_CASE("matching keys: what changed ranks by self time, the inclusive delta kept beside it") {
  // forward > decorate_context > attention > (launch → the kernel): attention's own time grows by
  // 41 µs; every ancestor carries the same +41 µs inclusive.
  auto run = [](const char* attention_dur, const char* forward_dur, const char* decorate_dur, const char* step_dur) {
    return load(trace({step("100", step_dur), op("forward", "105", forward_dur), py("decorate_context", "106", decorate_dur),
                       op("attention", "110", attention_dur)}));
  };
  auto a = run("50", "60", "58", "100");
  auto b = run("91", "101", "99", "141");
  TraceDiff d = trace_diff(*a, *b, {});
  REQUIRE(d.aligned);
  REQUIRE_FALSE(d.aligned->regressions.empty());
  const AlignedOp& top = d.aligned->ops[d.aligned->regressions[0]];
  CHECK(top.name == "attention");
  CHECK(top.self_delta() == 41'000);
  CHECK(top.delta() == 41'000);
  CHECK(d.aligned->regressions.size() == 1);  // the ancestors' own time did not change
  const OpsDiffRow* fwd = ops_row(d.ops, "forward");
  REQUIRE(fwd);
  CHECK(fwd->diff_total() == 41'000);  // inclusive, kept
  CHECK(fwd->diff_self() == 0);
  CHECK(ops_row(d.ops, "attention")->diff_self() == 41'000);
  // The text table of ops leads with the op that changed, not with its ancestors.
  std::string text = render_diff_text(d, diff_tables(d));
  size_t table = text.find("== ops (by |diff_self_us|) ==");
  REQUIRE(table != std::string::npos);
  size_t first_row = text.find('\n', text.find('\n', table) + 1) + 1;
  CHECK(text.compare(first_row, 9, "attention") == 0);
}
