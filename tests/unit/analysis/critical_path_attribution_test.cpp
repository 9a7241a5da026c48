// §10 "an edge's category is what its time was spent on", Sightline mode: launch overhead is the
// launch call and the time its stream sat empty, never the queue before a kernel nor a wait on
// another stream. Hand-made traces, then every corpus trace against the two invariants.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/analysis/critical_path.h"
#include "core/analysis/critical_path_contributors.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"

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

// The GPU work of the table: kernels, copies and sets.
std::vector<const Row*> gpu_work(const EventTable& t) {
  std::vector<const Row*> out;
  for (uint32_t i : t.gpu)
    if (is_kernel_memcpy_memset_cat(t.cat(t.rows[i]))) out.push_back(&t.rows[i]);
  return out;
}

// Merged length of `work` (on `stream`, or every stream when < 0) inside [from, to).
TimeNs busy_in(const std::vector<const Row*>& work, int64_t stream, TimeNs from, TimeNs to) {
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (const Row* r : work)
    if ((stream < 0 || r->stream == stream) && r->end() > from && r->ts < to)
      spans.push_back({std::max(r->ts, from), std::min(r->end(), to)});
  std::sort(spans.begin(), spans.end());
  TimeNs busy = 0, open = INT64_MIN, close = INT64_MIN;
  for (auto [s, e] : spans) {
    if (s > close) busy += close - open, open = s, close = e;
    else close = std::max(close, e);
  }
  return spans.empty() ? 0 : busy + close - open;
}

// The GPU of an instance is busy when its kernels, copies and sets (merged) cover >= 80 % of it.
bool gpu_busy(const std::vector<const Row*>& work, TimeNs from, TimeNs to) {
  return to > from && 10 * busy_in(work, -1, from, to) >= 8 * (to - from);
}

// ProfilerStep instance i, or the whole trace where there is none.
std::pair<TimeNs, TimeNs> instance_span(const EventTable& t, const std::vector<SliceRef>& steps, size_t i) {
  if (!steps.empty()) return {t.store->start(steps[i]), t.store->end(steps[i])};
  std::pair<TimeNs, TimeNs> span{INT64_MAX, INT64_MIN};
  for (const Row& r : t.rows) span.first = std::min(span.first, r.ts), span.second = std::max(span.second, r.end());
  return span;
}

// Each launch edge on the path carries at most its call and the time the kernel's stream sat
// empty after the call (no work queued or running on it) before the kernel started.
void check_launch_edges(const EventTable& t, const std::vector<const Row*>& work, const CriticalPath& p) {
  for (const auto& e : p.path) {
    if (e.bound_by != BoundBy::KernelLaunchOverhead) continue;
    const Row& k = t.rows[e.to_row];
    const Row& call = t.rows[size_t(k.launch)];
    const TimeNs empty = k.ts > call.end() ? (k.ts - call.end()) - busy_in(work, k.stream, call.end(), k.ts) : 0;
    CHECK(e.weight <= call.dur + empty);
  }
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

TEST_CASE("critical path attribution: a kernel that waits for communication on another stream depends on it") {
  // An all-reduce on stream 8 [20, 300]; a kernel launched at 30 onto the empty stream 7 starts
  // at 303, right after it: no cuda_sync record says so (older Kineto), but the wait was the
  // communication's (an event wait), not 273 µs of launch overhead.
  LoadedPath l = load_path(trace({step("0", "1000"), launch("cudaLaunchKernel", "10", "5", 1),
                                  launch("cudaLaunchKernel", "30", "5", 2),
                                  kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 8, "20", "280", 1),
                                  kernel("k_after", 7, "303", "200", 2)}));
  REQUIRE(l.path.valid);
  CHECK(sum_of(l.path, BoundBy::KernelLaunchOverhead) == usec(10));  // the all-reduce's launch only
  CHECK(sum_of(l.path, BoundBy::GpuCommunication) == usec(280));
  CHECK(sum_of(l.path, BoundBy::GpuCompute) == usec(200));
  bool dependency = false;
  for (const auto& e : l.path.path)
    dependency |= e.bound_by == BoundBy::Dependency && l.table.name(l.table.rows[e.to_row]) == "k_after" &&
                  l.table.rows[e.from_row].stream == 8;
  CHECK(dependency);
}

TEST_CASE("critical path attribution: a launch onto an empty stream keeps its launch overhead") {
  // The stream sat empty from the launch to the kernel: that wait is the launch's (§10).
  LoadedPath l = load_path(trace({step("0", "1000"), launch("cudaLaunchKernel", "10", "5", 1), kernel("k", 7, "40", "100", 1)}));
  REQUIRE(l.path.valid);
  CHECK(sum_of(l.path, BoundBy::KernelLaunchOverhead) == usec(30));
}

TEST_CASE("critical path attribution: on every corpus trace, launch overhead is launch calls and empty streams") {
  size_t instances = 0, busy = 0;
  const size_t traces = sl::test::for_each_corpus_trace([&](const std::string& file, const TraceStore& store) {
    EventTable t = build_table(store, TableOptions{});
    const std::vector<const Row*> work = gpu_work(t);
    const std::vector<SliceRef> steps = annotation_instances(t, "ProfilerStep");
    for (size_t i = 0; i < std::max<size_t>(1, steps.size()); ++i) {
      CriticalPathOptions o;
      o.instance = int64_t(i);
      CriticalPath p = critical_path(t, o);
      if (!p.valid) continue;  // no events in it
      ++instances;
      INFO(file << " instance " << i);
      check_launch_edges(t, work, p);
      auto [from, to] = instance_span(t, steps, i);
      if (!gpu_busy(work, from, to)) continue;
      ++busy;
      // §10: a step whose GPU is busy >= 80 % of it cannot come out launch-bound.
      CHECK(10 * sum_of(p, BoundBy::KernelLaunchOverhead) <= p.length);
    }
  });
  if (!traces) return;
  CHECK(traces > 40);
  CHECK(instances > 40);
  MESSAGE(busy << " of " << instances << " instances have their GPU busy >= 80 %");
}
