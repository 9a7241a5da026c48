// The critical path's presentation helpers (core/analysis/critical_path_contributors.h) on hand-made
// traces whose paths are known: slices, links, contributors, ops and GPU waits.
#include <doctest/doctest.h>

#include "core/analysis/critical_path_contributors.h"
#include "tests/unit/analysis/analysis_test_util.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::analysis::test;

namespace {

std::string step(const std::string& ts, const std::string& dur) { return X("user_annotation", "ProfilerStep#0", 1, 1, ts, dur); }
std::string op(const std::string& name, const std::string& ts, const std::string& dur) { return X("cpu_op", name, 1, 1, ts, dur); }

}  // namespace

TEST_CASE("critical path contributors: CPU-bound path, time owned by the ops") {
  // A [10,60] launches k; B [60,100] follows. Path: A's self time 10 + 35, the launch 5, B 40.
  LoadedPath l = load_path(trace({step("0", "100"), op("A", "10", "50"), launch("cudaLaunchKernel", "20", "5", 1),
                                  kernel("k", 7, "30", "5", 1), op("B", "60", "40")}));
  REQUIRE(l.path.valid);
  std::vector<SliceRef> slices = critical_path_slices(l.table, l.path);
  std::vector<std::string> names;
  for (SliceRef s : slices) names.push_back(std::string(l.store->name(s)));
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"A", "B", "cudaLaunchKernel"});
  CHECK(critical_path_links(l.table, l.path).empty());  // all on one thread's row

  std::vector<PathContributor> c = path_contributors(l.table, l.path);
  REQUIRE(c.size() == 3);
  CHECK(l.store->name(c[0].slice) == "A");
  CHECK(c[0].time == usec(45));
  CHECK(l.store->name(c[1].slice) == "B");
  CHECK(c[1].time == usec(40));
  CHECK(c[2].time == usec(5));
  CHECK(c[0].bound_by == BoundBy::CpuBound);
  TimeNs total = 0;
  for (const auto& x : c) total += x.time;
  CHECK(total == l.path.length);  // every edge with time belongs to a slice here

  IdleCauses causes = idle_causes(l.table);
  CHECK(path_gpu_gaps(l.table, l.path, causes).empty());
  CHECK(annotation_instances(l.table, "ProfilerStep").size() == 1);
  CHECK(annotation_instances(l.table, "Profiler").empty());  // a prefix is not an instance
}

TEST_CASE("critical path contributors: GPU-bound path, links and GPU waits with their idle cause") {
  // L1 [10,12] → k1 [15,65] on stream 7, then k2 [66,116] queued behind it.
  LoadedPath l = load_path(trace({step("0", "200"), launch("cudaLaunchKernel", "10", "2", 1), launch("cudaLaunchKernel", "13", "2", 2),
                                  op("C", "20", "10"), kernel("k1", 7, "15", "50", 1), kernel("k2", 7, "66", "50", 2)}));
  REQUIRE(l.path.valid);
  REQUIRE(l.path.length == usec(106));
  CHECK(critical_path_slices(l.table, l.path).size() == 3);  // L1, k1, k2

  std::vector<CriticalPathLink> links = critical_path_links(l.table, l.path);
  REQUIRE(links.size() == 2);
  CHECK(l.store->name(links[0].from) == "cudaLaunchKernel");
  CHECK(l.store->name(links[0].to) == "k1");
  CHECK(links[0].from_ts == usec(10));
  CHECK(links[0].to_ts == usec(15));
  CHECK(links[0].bound_by == BoundBy::KernelLaunchOverhead);
  CHECK(l.store->name(links[1].from) == "k1");
  CHECK(links[1].from_ts == usec(65));
  CHECK(links[1].to_ts == usec(66));
  CHECK(links[1].bound_by == BoundBy::KernelKernelOverhead);

  std::vector<PathOp> ops = path_ops(l.table, path_contributors(l.table, l.path));
  REQUIRE(ops.size() == 2);
  CHECK(ops[0].time == usec(50));
  CHECK(ops[0].count == 1);
  CHECK(ops[1].time == usec(50));

  IdleCauses causes = idle_causes(l.table);
  std::vector<PathGpuGap> gaps = path_gpu_gaps(l.table, l.path, causes);
  REQUIRE(gaps.size() == 2);
  CHECK(gaps[0].start == usec(10));  // longest first: the launch wait
  CHECK(gaps[0].end == usec(15));
  CHECK(gaps[1].start == usec(65));
  CHECK(gaps[1].end == usec(66));
  // Each wait carries the cause of the idle gap that ends at its kernel.
  for (const PathGpuGap& g : gaps) {
    const IdleGap* found = nullptr;
    for (const IdleGap& ig : causes.gaps)
      if (ig.next >= 0 && l.table.rows[size_t(ig.next)].ref == g.kernel) found = &ig;
    REQUIRE(found);
    CHECK(g.cause == int(found->cause));
  }
  CHECK(gaps[1].cause == int(IdleCause::LaunchLatency));  // 1 µs after k1: under the 30 µs latency
}
