// §10 critical path on hand-made traces with known paths (exact lengths and shares), and against
// HTA's critical_path_analysis on the two reference traces.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/analysis/critical_path.h"
#include "core/file_reader.h"
#include "core/trace_loader.h"
#include "tests/unit/analysis_test_util.h"

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
  CHECK(s->pct == doctest::Approx(100.0 * double(sum_us * 1000) / double(p.length)));
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
  o.instance.reset();
  CHECK(critical_path(t, o).note.find("no 'Nope' annotation") != std::string::npos);
}

// HTA's critical_path_analysis on the two reference traces (reference-values.md). HTA mode does
// not reproduce these yet (the gap is recorded in core/analysis/README.md), so the comparison is
// may_fail: it runs, reports the difference, and becomes a hard check once it holds.
namespace {

#ifdef SIGHTLINE_SHARED_DIR
const std::filesystem::path kCpShared = SIGHTLINE_SHARED_DIR;
#else
const std::filesystem::path kCpShared = "../shared";
#endif

struct CpReference {
  const char* trace;
  int64_t rank, instance, length_us;
  std::vector<std::tuple<std::string, int64_t, uint64_t>> summary;  // bound_by, sum_us, count
};

void check_reference(const CpReference& ref) {
  auto file = kCpShared / "corpus" / (std::string(ref.trace) + ".json.gz");
  if (!std::filesystem::exists(file)) {
    MESSAGE("skipped: " << file.string() << " absent (../shared not mounted)");
    return;
  }
  LoadResult loaded = load_trace(file.string());
  REQUIRE(loaded.ok());
  TableOptions to;
  to.mode = Mode::Hta;
  EventTable t = build_table(*loaded.store, to);
  CriticalPathOptions o;
  o.instance = ref.instance;
  CriticalPath p = critical_path(t, o);
  REQUIRE(p.valid);
  CHECK(p.rank == ref.rank);
  CHECK(p.instance == ref.instance);
  CHECK(p.length == usec(ref.length_us));
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

TEST_CASE("critical path: HTA reference, trace_diff_control rank 3 instance 1" * doctest::may_fail()) {
  check_reference({"hta_trace_diff_control_a100", 3, 1, 40308,
                   {{"", 0, 649},
                    {"cpu_bound", 28953, 9547},
                    {"gpu_compute_bound", 10791, 92},
                    {"gpu_kernel_kernel_overhead", 550, 91},
                    {"gpu_kernel_launch_overhead", 14, 1}}});
}

TEST_CASE("critical path: HTA reference, sampled_rank0 instance 0" * doctest::may_fail()) {
  check_reference({"hta_sampled_rank0", 0, 0, 301476,
                   {{"", 0, 265},
                    {"cpu_bound", 300492, 3256},
                    {"gpu_compute_bound", 948, 3},
                    {"gpu_kernel_kernel_overhead", 30, 2},
                    {"gpu_kernel_launch_overhead", 6, 1}}});
}
