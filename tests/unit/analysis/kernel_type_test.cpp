// Kernel types in Sightline mode (analyses.md §0): collectives by their names' tokens and by the op
// that launched them, GPU user annotations never kernels; HTA mode keeps HTA's own rules.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "core/analysis/kernel_breakdown.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"

namespace sl::analysis {
namespace {

using namespace test;

KernelType of(std::string_view name, std::string_view cat = "kernel") { return kernel_type_sightline(name, cat); }

}  // namespace

TEST_CASE("kernel type: collectives by name, as whole tokens") {
  // The kernels the new-user traces met: an 8-GPU multimem all-reduce (B200), vLLM's custom
  // all-reduce, TensorRT-LLM's camel-case one, DeepEP, userbuffers.
  CHECK(of("multimem_all_reduce_kernel") == KernelType::Communication);
  CHECK(of("void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*, vllm::RankSignals, int)") ==
        KernelType::Communication);
  CHECK(of("void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16, 4>(AllReduceParams)") ==
        KernelType::Communication);
  CHECK(of("void deep_ep::intranode::dispatch<8, 768>(int4*, float*)") == KernelType::Communication);
  CHECK(of("void deep_ep::internode::combine<nv_bfloat16>(void*)") == KernelType::Communication);
  CHECK(of("userbuffers_fp16_sum_inplace_gpu_rw") == KernelType::Communication);
  CHECK(of("custom_all_gather_kernel") == KernelType::Communication);
  CHECK(of("reduce_scatter_tensor_kernel") == KernelType::Communication);
  CHECK(of("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)") == KernelType::Communication);
  // Not collectives: a reduction, a dispatch outside DeepEP, a gather.
  CHECK(of("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float>>>") ==
        KernelType::Computation);
  CHECK(of("void at::native::(anonymous namespace)::indexSelectLargeIndex<float, long>(dispatch)") ==
        KernelType::Computation);
  CHECK(of("void at::native::_scatter_gather_elementwise_kernel<128, 4>") == KernelType::Computation);
  CHECK(of("triton_red_fused_all_0") == KernelType::Computation);
  CHECK(of("Memcpy DtoD (Device -> Device)", "gpu_memcpy") == KernelType::Memory);
}

TEST_CASE("kernel type: a GPU user annotation is a label, never a kernel, whatever its name") {
  CHECK(of("nccl:_all_gather_base", "gpu_user_annotation") == KernelType::Other);
  CHECK(of("nccl:all_reduce", "gpu_user_annotation") == KernelType::Other);
  // So no kernel table lists it: the breakdown's rows are kernels, copies and sets only.
  auto s = load(trace({X("user_annotation", "nccl:all_reduce", 1, 1, "100", "50"),
                       launch("cudaLaunchKernel", "110", "5", 7),
                       gpu("gpu_user_annotation", "nccl:all_reduce", 7, "115", "30", 7),
                       kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 7, "116", "20", 7)}));
  KernelBreakdown b = kernel_breakdown(table(*s, Mode::Sightline), {});
  REQUIRE(b.per_kernel_full.size() == 1);
  CHECK(b.per_kernel_full[0].name == "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
}

TEST_CASE("kernel type: a kernel launched inside a collective op is communication (Sightline mode only)") {
  // A custom all-reduce written in Triton, launched under record_param_comms (c10d's profiling
  // op); the same Triton kernel outside it stays computation.
  auto s = load(trace({X("cpu_op", "record_param_comms", 1, 1, "100", "50"),
                       launch("cudaLaunchKernel", "110", "5", 7),
                       kernel("triton_poi_fused_add_0", 7, "120", "20", 7),
                       X("cpu_op", "c10d::allreduce_", 1, 1, "200", "50"),
                       X("cpu_op", "aten::empty", 1, 1, "205", "30"),
                       launch("cudaLaunchKernel", "210", "5", 8),
                       kernel("one_shot_kernel", 7, "220", "20", 8),
                       X("cpu_op", "aten::add", 1, 1, "300", "50"),
                       launch("cudaLaunchKernel", "310", "5", 9),
                       kernel("triton_poi_fused_add_0", 7, "320", "20", 9)}));
  EventTable sightline = table(*s, Mode::Sightline);
  std::vector<KernelType> types;
  for (uint32_t g : sightline.gpu) types.push_back(kernel_type(sightline, sightline.rows[g]));
  CHECK(types == std::vector<KernelType>{KernelType::Communication, KernelType::Communication, KernelType::Computation});
  EventTable hta = table(*s, Mode::Hta);
  for (uint32_t g : hta.gpu) CHECK(kernel_type(hta, hta.rows[g]) == KernelType::Computation);
}

TEST_CASE("kernel type: no corpus kernel named like a collective is computation") {
  if (!sl::test::have_shared()) return;
  // The words of §0, checked here by plain substring so the test does not share the rule's code.
  auto named_like_collective = [](std::string n) {
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const char* w : {"nccl", "rccl", "all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
                          "reducescatter", "alltoall", "all_to_all", "multimem", "cross_device_reduce"})
      if (n.find(w) != std::string::npos) return true;
    return false;
  };
  size_t collectives = 0;
  const size_t traces = sl::test::for_each_corpus_trace([&](const std::string& file, const TraceStore& store) {
    EventTable t = table(store, Mode::Sightline);
    for (uint32_t g : t.gpu) {
      const Row& row = t.rows[g];
      if (!is_kernel_cat(t.cat(row)) || !named_like_collective(std::string(t.name(row)))) continue;
      ++collectives;
      INFO(file << ": " << t.name(row));
      CHECK(kernel_type(t, row) == KernelType::Communication);
    }
  });
  CHECK(traces > 40);
  CHECK(collectives > 100);  // tl_b200_eager's multimem all-reduces, the NCCL and RCCL kernels
}

}  // namespace sl::analysis
