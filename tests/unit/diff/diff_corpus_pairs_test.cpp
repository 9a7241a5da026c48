// analyses.md §9 "Matching keys" on the corpus pairs (MANIFEST.tsv: the same model on two GPUs,
// two runs of one config): how much of the call trees matches, and that no top change is a name
// that differs only by an object address.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include "core/diff/trace_diff.h"
#include "core/import/trace_loader.h"
#include "core/names/matching_key.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::diff;

namespace {

struct CorpusPair {
  std::string a, b;
  double min_matched;  // fraction of slices matched the pair must reach
  std::string why;
};

// DLRM ranks 0 and 1: one model on two V100s (one vendor, one job). bert and qwen: one model, H100
// (CUDA 12.4) vs MI300X (ROCm 6.4), the cross-vendor case. A100 vs V100 are not the same program:
// the V100 run goes through torch.compile (CompiledFunction, CompiledFunctionBackward,
// cudaGraphLaunch) and runs 30 addmm where the A100 one runs 99, so even matching every name of
// step 1010 in any order and place would pair 54 % of its CPU slices (core/diff/README.md).
const CorpusPair kPairs[] = {
    {"param_dlrm_8rank/worker0_step_12.1694128201545.pt.trace", "param_dlrm_8rank/worker1_step_12.1694128201556.pt.trace",
     0.80, "same model, two V100s (ranks 0 and 1)"},
    {"hta_sampled_rank0", "hta_sampled_rank1", 0.60, "ranks 0 and 1 of 128, sampled subsets"},
    {"tl_h100_bert_small", "tl_mi300_bert_small", 0.80, "same model, H100 vs MI300"},
    {"tl_h100_qwen15_05b", "tl_mi300_qwen15_05b", 0.80, "same model, H100 vs MI300"},
    {"hta_trace_diff_control_a100", "hta_trace_diff_test_v100", 0.45, "A100 vs V100, V100 compiled: 54 % ceiling"},
    {"kin_resnet50_nw4_run1", "kin_resnet50_nw4_run2", 0.98, "two runs of one config"},
    {"kin_resnet50_nw0_run1", "kin_resnet50_nw4_run1", 0.50, "data-loader workers 0 vs 4"},
    {"kin_docs_before_fix_h100", "kin_docs_after_fix_h100", 0.50, "before / after a fix"},
};

std::unique_ptr<TraceStore> load_corpus(const std::string& name) {
  LoadResult r = load_trace((test::shared_dir() / "corpus" / (name + ".json.gz")).string());
  INFO(name << ": " << r.error.to_string());
  REQUIRE(r.ok());
  return std::move(r.store);
}

// The names a reader sees first in each ranking of the diff: its ten top rows.
std::vector<std::string> top_change_names(const TraceDiff& d) {
  std::vector<std::string> names;
  std::vector<OpsDiffRow> ops = d.ops.rows;
  std::stable_sort(ops.begin(), ops.end(), [](const OpsDiffRow& x, const OpsDiffRow& y) {
    return std::llabs(x.diff_self()) > std::llabs(y.diff_self());
  });
  for (size_t i = 0; i < ops.size() && i < 10; ++i) names.push_back(ops[i].name);
  const AlignedDiff& a = *d.aligned;
  for (const auto* ranking : {&a.regressions, &a.improvements, &a.inclusive_regressions, &a.inclusive_improvements})
    for (size_t i = 0; i < ranking->size() && i < 10; ++i) names.push_back(a.ops[(*ranking)[i]].name);
  for (const auto* unmatched : {&a.added, &a.removed}) {
    std::vector<UnmatchedOp> by_dur = *unmatched;
    std::stable_sort(by_dur.begin(), by_dur.end(), [](const UnmatchedOp& x, const UnmatchedOp& y) { return x.dur > y.dur; });
    for (size_t i = 0; i < by_dur.size() && i < 10; ++i) names.push_back(by_dur[i].name);
  }
  return names;
}

}  // namespace

TEST_CASE("matching keys on the corpus pairs: slices matched, no address among the top changes") {
  if (!test::have_shared()) return;
  for (const CorpusPair& p : kPairs) {
    auto a = load_corpus(p.a);
    auto b = load_corpus(p.b);
    TraceDiff d = trace_diff(*a, *b, {});
    REQUIRE(d.aligned);
    MESSAGE(p.a << " vs " << p.b << " (" << p.why << "): " << d.aligned->matched << " of " << d.aligned->nodes_a
                << " / " << d.aligned->nodes_b << " slices matched (" << 100 * d.aligned->matched_fraction << " %), "
                << d.aligned->kernel_pairs.size() << " kernels paired through their operator");
    INFO(p.a << " vs " << p.b);
    CHECK(d.aligned->matched_fraction >= p.min_matched);
    for (const std::string& name : top_change_names(d)) {
      INFO(name);
      CHECK_FALSE(has_address(name));
    }
    for (const KernelPair& k : d.aligned->kernel_pairs) {  // a memory activity stands only for its own kind
      INFO(k.name_a << " -> " << k.name_b);
      CHECK(k.name_a.starts_with("Memset") == k.name_b.starts_with("Memset"));
      CHECK(k.name_a.starts_with("Memcpy") == k.name_b.starts_with("Memcpy"));
    }
  }
}
