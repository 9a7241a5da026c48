// One definition of each extent, named where printed (core/report/trace_info.h): info and the
// report's headline say the same "trace span" and the same "GPU window".
#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/report/trace_info.h"
#include "tests/unit/test_support.h"

using namespace sl;

namespace {

// A CPU op (0-10 µs) launching a kernel that runs 20-23 µs, and Kineto's closing marker at 50 µs.
const char* kTrace = R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 5, "args": {"correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 20, "dur": 3,
   "args": {"stream": 7, "device": 0, "correlation": 1}},
  {"ph": "i", "s": "t", "name": "Record Window End", "pid": 1, "tid": 1, "ts": 50}
]})";

}  // namespace

TEST_CASE("trace span and GPU window: one definition each, named alike in info and report") {
  auto store = test::load_ok(kTrace);
  CHECK(trace_span(*store) == 50'000);
  auto gpu = gpu_window(*store);
  REQUIRE(gpu);
  CHECK(gpu->start == 20'000);
  CHECK(gpu->length() == 3'000);
  std::string info = info_text(*store);
  CHECK(info.find("trace span      50.0 µs, first to last event") != std::string::npos);
  CHECK(info.find("GPU window      3.00 µs, first to last GPU activity") != std::string::npos);
  analysis::Report report = analysis::run_report(*store, {});
  std::string text = analysis::render_text(report, analysis::report_tables(report));
  // Was "trace span 23.0 µs" (first to last row of the analyses) where info said 50 µs.
  CHECK(text.find("trace span 50.0 µs (first to last event); GPU window 3.00 µs") != std::string::npos);
  CHECK(info_json(*store).find("\"gpu_window_us\":3") != std::string::npos);
}

TEST_CASE("info: a device without a name prints what is known, not an empty field") {
  // vLLM's ROCm traces write "name": "" with the compute capability and a 64-wide wavefront.
  auto amd = test::load_ok(R"({"deviceProperties": [{"id": 0, "name": "", "computeMajor": 9, "computeMinor": 4, "warpSize": 64}],
    "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]})");
  std::string info = info_text(*amd);
  CHECK(info.find("device          0: (unnamed; AMD, compute capability 9.4)\n") != std::string::npos);
  // The vendor from the runtime's calls when deviceProperties does not say.
  auto cuda = test::load_ok(R"({"deviceProperties": [{"id": 0, "name": "", "computeMajor": 8, "computeMinor": 0}],
    "traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0, "dur": 10}]})");
  CHECK(info_text(*cuda).find("0: (unnamed; NVIDIA, compute capability 8.0)") != std::string::npos);
  auto bare = test::load_ok(R"({"deviceProperties": [{"id": 3}], "traceEvents": []})");
  CHECK(info_text(*bare).find("3: (unnamed)") != std::string::npos);
  // A named device prints its name alone.
  auto named = test::load_ok(R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H100", "computeMajor": 9, "computeMinor": 0}],
    "traceEvents": []})");
  CHECK(info_text(*named).find("device          0: NVIDIA H100\n") != std::string::npos);
}
