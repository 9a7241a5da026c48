// A trace with CPU launches but no GPU activity (analyses.md §2b): one warning that names the
// launches left without a GPU event, and a report with no idle verdict.
#include <doctest/doctest.h>

#include "core/analysis/insights.h"
#include "core/report/trace_info.h"
#include "tests/unit/analysis/analysis_test_util.h"

namespace sl::analysis {

using namespace test;

TEST_CASE("no GPU activity: launches without a GPU event are named, and no idle verdict is given") {
  auto s = load(trace({X("cpu_op", "aten::mm", 1, 1, "100", "50"), launch("cudaLaunchKernel", "110", "5", 7),
                       X("cpu_op", "aten::add", 1, 1, "200", "50"), launch("cudaLaunchKernel", "210", "5", 8),
                       launch("cudaMemcpyAsync", "260", "5", 9)}));
  CHECK(missing_gpu_activity_warning(*s) ==
        "no GPU activity recorded: 3 launches have no GPU event — was CUPTI activity tracing on?");
  ReportOptions o;
  Report r = run_report(*s, o);
  CHECK(r.gpu_warning == missing_gpu_activity_warning(*s));
  std::string headline = headline_text(r);
  CHECK(headline.find("no GPU activity recorded: 3 launches") != std::string::npos);
  CHECK(headline.find("tracing on? No idle verdict.") != std::string::npos);
  CHECK(headline.find("no finding stands out") == std::string::npos);
  CHECK(headline.find("idle split") == std::string::npos);
}

TEST_CASE("no GPU activity: no warning when the GPU side is there, or when nothing was launched") {
  auto with_gpu = load(trace({launch("cudaLaunchKernel", "110", "5", 7), kernel("k", 7, "120", "10", 7),
                              launch("cudaLaunchKernel", "210", "5", 8)}));
  CHECK(missing_gpu_activity_warning(*with_gpu).empty());  // one launch unmatched, but the GPU was recorded
  auto cpu_only = load(trace({X("cpu_op", "aten::mm", 1, 1, "100", "50")}));
  CHECK(missing_gpu_activity_warning(*cpu_only).empty());
  auto one = load(trace({launch("cudaLaunchKernel", "110", "5", 7)}));
  CHECK(missing_gpu_activity_warning(*one) == "no GPU activity recorded: 1 launch has no GPU event — was CUPTI activity tracing on?");
}

}  // namespace sl::analysis
