// What the details panel and the timeline show of a selection, found once per selection. Its
// arrows (core/present/slice_links.h): a CUDA graph's launch with a flow to each of its kernels
// gives each pair once, in the far ends' time order, the first few of each kind listed, and the
// range a timeline draws for a window of time. Its children and self time
// (core/present/slice_children.h).
#include <doctest/doctest.h>

#include <algorithm>

#include "core/present/slice_children.h"
#include "core/present/slice_links.h"
#include "core/store/trace_builder.h"

namespace sl {
namespace {

constexpr int kKernels = 1000;

// A graph launch on a host thread at t = 0 (correlation 7) and its kernels on a stream, one every
// 10 µs from t = 100 µs, each also linked by a flow from the launch (as Kineto's ac2g and
// Nsight's launch flows do); one more flow, from a host slice at 50 µs to kernel 500, is no launch.
struct GraphLaunch {
  TraceStore store;
  uint32_t thread = 0, stream = 0;
  GraphLaunch() {
    TraceBuilder b(store);
    uint32_t host = b.process("1", 1), gpu = b.process("0", 0);
    thread = b.thread_track(host, "1", 1);
    stream = b.thread_track(gpu, "7", 7);
    b.mark_gpu(stream, 0, 7);
    StringId launch = store.strings.intern("cudaGraphLaunch"), op = store.strings.intern("op");
    StringId runtime = store.strings.intern("cuda_runtime"), kernel = store.strings.intern("kernel");
    StringId ac2g = store.strings.intern("ac2g");
    const TimeNs base = 1'000'000'000;
    b.add_slice(thread, base, 20'000, launch, runtime, kNone, 7);
    b.add_slice(thread, base + 50'000, 1'000, op, runtime, kNone, std::nullopt);
    for (int k = 0; k < kKernels; ++k) {
      TimeNs at = base + 100'000 + TimeNs(k) * 10'000;
      b.add_slice(stream, at, 5'000, kernel, kernel, kNone, 7);
    }
    b.flows_from_launches(ac2g);
    b.add_flow_point(thread, 1, ac2g, 's', base + 50'000, true, 0);
    b.add_flow_point(stream, 1, ac2g, 'f', base + 100'000 + 500 * 10'000, true, 0);
    b.finish();
  }
  SliceRef launch() const { return {thread, 0}; }
  SliceRef kernel(int k) const { return {stream, uint32_t(k)}; }
};

}  // namespace

TEST_CASE("slice links: a CUDA graph's launch gives each kernel once, in time order, the first few listed") {
  GraphLaunch g;
  using Kind = present::SliceLinks::Kind;
  present::SliceLinks links;
  links.update(g.store, g.launch(), 0);
  REQUIRE(g.store.activities_of(g.launch()).size() == size_t(kKernels));
  REQUIRE(g.store.flows_from(g.launch()).size() == size_t(kKernels));  // the same pairs again
  // Each pair once, named as the launch's ("runs"), not as a flow.
  CHECK(links.all().size() == size_t(kKernels));
  CHECK(links.count(Kind::Runs) == size_t(kKernels));
  CHECK(links.count(Kind::FlowTo) == 0);
  for (int k = 0; k < kKernels; ++k) {
    const auto& l = links.all()[size_t(k)];
    REQUIRE(l.from == g.launch());
    REQUIRE(l.to == g.kernel(k));
    REQUIRE(l.far() == g.kernel(k));
    REQUIRE(l.far_start == g.store.start(g.kernel(k)));
  }
  REQUIRE(links.first(Kind::Runs).size() == present::SliceLinks::kListed);
  for (size_t i = 0; i < links.first(Kind::Runs).size(); ++i) CHECK(links.first(Kind::Runs)[i] == i);
  CHECK(links.first(Kind::FlowTo).empty());

  // Kernels 200..209 start in [2100, 2190] µs: those, and one more on each side.
  TimeNs origin = g.store.start(g.kernel(0)) - 100'000;
  auto [begin, end] = links.around(origin + 2'100'000, origin + 2'195'000);
  CHECK(begin == 199);
  CHECK(end == 211);
  // A window before every kernel or after them all: just the nearest one.
  auto [b0, e0] = links.around(origin, origin + 50'000);
  CHECK(b0 == 0);
  CHECK(e0 == 1);
  auto [b1, e1] = links.around(origin + 1'000'000'000, origin + 2'000'000'000);
  CHECK(b1 == size_t(kKernels - 1));
  CHECK(e1 == size_t(kKernels));
}

TEST_CASE("slice links: a kernel's launch and its flows, each pair once; nothing selected, nothing") {
  GraphLaunch g;
  using Kind = present::SliceLinks::Kind;
  present::SliceLinks links;
  links.update(g.store, g.kernel(500), 1);
  // The launch (also a flow: one arrow) and the other host slice's flow, in the far ends' time order.
  REQUIRE(links.all().size() == 2);
  CHECK(links.all()[0].kind == Kind::LaunchedBy);
  CHECK(links.all()[0].far() == g.launch());
  CHECK(links.all()[1].kind == Kind::FlowFrom);
  CHECK(g.store.start(links.all()[1].far()) == 50'000);
  CHECK(links.count(Kind::LaunchedBy) == 1);
  CHECK(links.count(Kind::FlowFrom) == 1);
  links.update(g.store, g.kernel(3), 1);
  CHECK(links.all().size() == 1);
  links.update(g.store, SliceRef{}, 1);
  CHECK(links.all().empty());
  for (Kind k : {Kind::LaunchedBy, Kind::Runs, Kind::FlowFrom, Kind::FlowTo}) CHECK(links.count(k) == 0);
}

TEST_CASE("slice children: a step's direct children in start order, the first 64 listed, and its self time") {
  TraceStore store;
  TraceBuilder b(store);
  uint32_t thread = b.thread_track(b.process("1", 1), "1", 1);
  StringId step = store.strings.intern("ProfilerStep#1"), op = store.strings.intern("op");
  StringId inner = store.strings.intern("inner"), cat = store.strings.intern("cpu_op");
  const TimeNs base = 1'000'000;
  const int kOps = 100;
  b.add_slice(thread, base, 10'000'000, step, cat, kNone, std::nullopt);  // ends at 10 ms
  for (int i = 0; i < kOps; ++i) {
    b.add_slice(thread, base + 1'000 + i * 50'000, 40'000, op, cat, kNone, std::nullopt);
    b.add_slice(thread, base + 2'000 + i * 50'000, 10'000, inner, cat, kNone, std::nullopt);  // a grandchild
  }
  b.add_slice(thread, base + 20'000'000, 5'000, op, cat, kNone, std::nullopt);  // after the step
  b.finish();
  present::SliceChildren children;
  children.update(store, {thread, 0}, 0);
  CHECK(children.count() == size_t(kOps));
  REQUIRE(children.first().size() == present::SliceChildren::kListed);
  for (size_t i = 0; i < children.first().size(); ++i) {
    CHECK(store.name(children.first()[i]) == "op");
    CHECK(store.start(children.first()[i]) == 1'000 + TimeNs(i) * 50'000);
  }
  CHECK(children.self_time() == 10'000'000 - kOps * 40'000);
  // An op: one child (its inner), self time 30 µs; the inner: none, all of it its own.
  SliceRef first_op = children.first()[0];
  children.update(store, first_op, 0);
  CHECK(children.count() == 1);
  CHECK(children.self_time() == 30'000);
  children.update(store, {first_op.track, first_op.index + 1}, 0);
  CHECK(children.count() == 0);
  CHECK(children.self_time() == 10'000);
  children.update(store, SliceRef{}, 0);
  CHECK(children.count() == 0);
  CHECK(children.first().empty());
}

}  // namespace sl
