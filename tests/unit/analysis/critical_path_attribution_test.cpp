// §10 "an edge's category is what its time was spent on", Sightline mode: launch overhead is the
// launch call and the time its stream sat empty, never the queue before a kernel. Hand-made
// traces.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/analysis/critical_path.h"
#include "tests/unit/analysis/analysis_test_util.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::analysis::test;

namespace {

std::string step(const std::string& ts, const std::string& dur) { return X("user_annotation", "ProfilerStep#0", 1, 1, ts, dur); }
std::string copy(const std::string& name, int stream, const std::string& ts, const std::string& dur, int corr) {
  return gpu("gpu_memcpy", name, stream, ts, dur, corr);
}

TimeNs sum_of(const CriticalPath& p, BoundBy b) {
  for (const auto& s : p.summary)
    if (s.bound_by == b) return s.sum;
  return 0;
}

bool on_path(const LoadedPath& l, std::string_view name) {
  return std::any_of(l.path.path.begin(), l.path.path.end(), [&](const CriticalPathEdge& e) {
    return l.table.name(l.table.rows[e.from_row]) == name || l.table.name(l.table.rows[e.to_row]) == name;
  });
}

}  // namespace

TEST_CASE("critical path attribution: a blocking copy launched early behind a queue puts the queue on the path") {
  // Five 100 µs kernels queue on stream 7 (launched at 10..50, run 15..515). A blocking
  // cudaMemcpyAsync [60, 560] issues a DtoH copy that starts when the stream drains (520). The
  // 460 µs from the copy's launch to its start are the kernels' time, not launch overhead.
  std::vector<std::string> ev = {step("0", "1000")};
  const char* names[] = {"k1", "k2", "k3", "k4", "k5"};
  for (int i = 0; i < 5; ++i) {
    ev.push_back(launch("cudaLaunchKernel", std::to_string(10 + 10 * i), "5", i + 1));
    ev.push_back(kernel(names[i], 7, std::to_string(15 + 100 * i), "100", i + 1));
  }
  ev.push_back(launch("cudaMemcpyAsync", "60", "500", 9));
  ev.push_back(copy("Memcpy DtoH (Device -> Pageable)", 7, "520", "30", 9));
  ev.push_back(X("cuda_runtime", "cudaStreamSynchronize", 1, 1, "561", "4"));
  LoadedPath l = load_path(trace(ev));
  REQUIRE(l.path.valid);
  CHECK(sum_of(l.path, BoundBy::KernelLaunchOverhead) == usec(5));  // k1's launch only
  CHECK(sum_of(l.path, BoundBy::GpuCompute) == usec(530));          // the kernels and the copy
  CHECK(sum_of(l.path, BoundBy::KernelKernelOverhead) == usec(5));  // the drained stream before the copy
  CHECK(on_path(l, "k3"));
  // The call's 500 µs were spent waiting on the GPU: not CPU time either.
  CHECK(sum_of(l.path, BoundBy::CpuBound) < usec(20));
}

TEST_CASE("critical path attribution: a launch as its stream drains carries only the empty stream after the earlier kernel") {
  // k1 [12, 100] runs while k2's slow launch call [20, 110] is under way; k2 starts at 112. Of the
  // 92 µs from that call to k2, the stream was busy with k1 until 100: those are k1's, on the path
  // through k1; only the 12 µs of empty stream after it (waiting for the launch) are overhead.
  LoadedPath l = load_path(trace({step("0", "1000"), launch("cudaLaunchKernel", "10", "2", 1),
                                  launch("cudaLaunchKernel", "20", "90", 2), kernel("k1", 7, "12", "88", 1),
                                  kernel("k2", 7, "112", "300", 2)}));
  REQUIRE(l.path.valid);
  CHECK(sum_of(l.path, BoundBy::KernelLaunchOverhead) == usec(2 + 12));
  CHECK(sum_of(l.path, BoundBy::GpuCompute) == usec(88 + 300));
  CHECK(on_path(l, "k1"));
}

TEST_CASE("critical path attribution: a launch onto an empty stream keeps its launch overhead") {
  // The stream sat empty from the launch to the kernel: that wait is the launch's (§10).
  LoadedPath l = load_path(trace({step("0", "1000"), launch("cudaLaunchKernel", "10", "5", 1), kernel("k", 7, "40", "100", 1)}));
  REQUIRE(l.path.valid);
  CHECK(sum_of(l.path, BoundBy::KernelLaunchOverhead) == usec(30));
}
