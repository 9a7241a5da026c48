// Finishing a store on two threads (core/store/both_ways.h: tracks sorted and nested two at a time,
// indexes built side by side, flow keys sorted beside the rest, the second half of a parse
// absorbed in two parts) gives the very store one thread gives: the snapshot bytes (every
// column, index, flow and issue) are compared. Threads are forced either way: on their own they
// start only for large stores.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <span>
#include <string>
#include <tuple>

#include "core/import/trace_loader.h"
#include "core/snapshot/snapshot.h"
#include "core/store/both_ways.h"
#include "core/store/trace_builder.h"
#include "tests/unit/test_support.h"

namespace sl {
namespace {

std::string snapshot_of_load(const std::string& path, bool one_thread) {
  ForceThreads force(one_thread ? Threads::One : Threads::Two);
  LoadResult r = load_trace(path);
  INFO(path << ": " << r.error.to_string());
  REQUIRE(r.ok());
  return snapshot_bytes(*r.store);
}

// Host threads "1".."threads" of process 100 and GPU streams 7.. of device 0.
struct Tracks {
  std::vector<uint32_t> threads, streams;
};
Tracks host_and_gpu_tracks(TraceBuilder& b, int threads, int streams) {
  Tracks tracks;
  uint32_t host = b.process("100", 100), gpu = b.process("0", 0);
  for (int t = 0; t < threads; ++t) tracks.threads.push_back(b.thread_track(host, std::to_string(t + 1), t + 1));
  for (int s = 0; s < streams; ++s) {
    tracks.streams.push_back(b.thread_track(gpu, std::to_string(s + 7), s + 7));
    b.mark_gpu(tracks.streams.back(), 0, s + 7);
  }
  return tracks;
}

// Many tracks of uneven sizes, written out of order, with partial overlaps (extra lane groups),
// launches and kernels sharing correlation ids, and flows whose ends come before their starts,
// lack a start or a slice: everything finish() sorts, nests, binds and indexes. Events
// [from, to) of the sequence `seed` gives.
void add_events(TraceBuilder& b, TraceStore& store, uint32_t seed, int from, int to) {
  std::mt19937 rng(seed);
  auto [threads, streams] = host_and_gpu_tracks(b, 37, 11);
  StringId cpu_op = store.strings.intern("cpu_op"), kernel = store.strings.intern("kernel");
  StringId ac2g = store.strings.intern("ac2g");
  std::vector<StringId> names;
  for (int n = 0; n < 50; ++n) names.push_back(store.strings.intern("op" + std::to_string(n)));
  const TimeNs base = 1'000'000'000;
  for (int i = 0; i < to; ++i) {
    uint32_t t = threads[std::min<size_t>(rng() % 64, threads.size() - 1)];  // uneven: the last one is big
    TimeNs start = base + TimeNs(rng() % 5'000'000), dur = TimeNs(rng() % 20'000);
    bool launch = rng() % 4 == 0;
    int64_t id = int64_t(rng() % 20000);
    StringId name = names[rng() % names.size()], kernel_name = names[rng() % names.size()];
    uint32_t s = streams[rng() % streams.size()];
    TimeNs k = start + TimeNs(rng() % 50'000), k_dur = TimeNs(rng() % 9'000), skew = TimeNs(rng() % 3);
    bool has_start = rng() % 8, has_end = rng() % 8, enclosing = rng() % 2;
    if (i < from) continue;
    b.add_slice(t, start, dur, name, cpu_op, kNone, launch ? std::optional<int64_t>(id) : std::nullopt);
    if (!launch) continue;
    b.add_slice(s, k, k_dur, kernel_name, kernel, kNone, id);
    uint64_t key = uint64_t(id) * 0x9E3779B97F4A7C15ull;
    if (has_start) b.add_flow_point(t, key, ac2g, 's', start + dur / 2, true, uint64_t(i) * 10);
    if (has_end) b.add_flow_point(s, key, ac2g, 'f', k - skew, enclosing, uint64_t(i) * 10 + 1);
  }
}

constexpr int kEvents = 60000;

std::unique_ptr<TraceStore> many_tracks(uint32_t seed, bool one_thread) {
  ForceThreads force(one_thread ? Threads::One : Threads::Two);
  auto store = std::make_unique<TraceStore>();
  TraceBuilder b(*store);
  add_events(b, *store, seed, 0, kEvents);
  b.finish();
  return store;
}

// The same events parsed as two halves (as a large file is): the second absorbed into the first.
std::unique_ptr<TraceStore> many_tracks_in_halves(uint32_t seed, bool one_thread) {
  ForceThreads force(one_thread ? Threads::One : Threads::Two);
  auto store = std::make_unique<TraceStore>();
  TraceStore later_store;
  TraceBuilder b(*store), later(later_store);
  add_events(b, *store, seed, 0, kEvents / 2);
  add_events(later, later_store, seed, kEvents / 2, kEvents);
  b.absorb(later);
  b.finish();
  return store;
}

}  // namespace

TEST_CASE("finish on two threads: a store of many tracks is the one-thread store, byte for byte") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto one = many_tracks(seed, true), two = many_tracks(seed, false);
    // The store is not trivial: overlaps went to extra lanes, flows and launch links bound.
    CHECK(one->issues.count(IssueKind::OverlappingSlice) > 1000);
    CHECK(one->flows.size() > 3000);
    CHECK(one->issues.count(IssueKind::FlowEndWithoutStart) > 100);
    CHECK(one->launch_link_count() > 10000);
    for (uint32_t row = 0; row < one->flows.size(); ++row) {
      auto from = one->flows_from(one->flows[row].from), to = one->flows_to(one->flows[row].to);
      CHECK(std::count(from.begin(), from.end(), row) == 1);
      CHECK(std::count(to.begin(), to.end(), row) == 1);
    }
    CHECK(snapshot_bytes(*one) == snapshot_bytes(*two));
  }
}

TEST_CASE("finish on two threads: a store parsed in two halves is the one-thread store and the one-part store") {
  for (uint32_t seed : {4u, 5u}) {
    auto one = many_tracks_in_halves(seed, true), two = many_tracks_in_halves(seed, false);
    CHECK(one->flows.size() > 3000);
    std::string bytes = snapshot_bytes(*one);
    CHECK(bytes == snapshot_bytes(*two));
    // Absorbing changes nothing either: the halves add up to the store of all events at once.
    CHECK(bytes == snapshot_bytes(*many_tracks(seed, true)));
  }
}

TEST_CASE("finish on two threads: corpus traces give the one-thread snapshot bytes") {
  if (!test::have_shared()) return;
  for (const char* name : {"hta_trace_diff_control_a100.json.gz", "kin_resnet50_nw0_run1.json.gz",
                           "tl_vllm_graph_exec_full.json.gz", "hta_mtia_inference.json.gz",
                           "catapult_flow_simple.json.gz"}) {
    std::string path = (test::shared_dir() / "corpus" / name).string();
    CHECK_MESSAGE(snapshot_of_load(path, true) == snapshot_of_load(path, false), name);
  }
}

}  // namespace sl

namespace sl {
namespace {

// Launches on host threads (a runtime call, now and then with a driver call inside sharing its
// correlation id) and the kernels they launched on streams: now and then several kernels of one
// launch (a CUDA graph's), or a kernel whose id no call has. Linked either by
// flows_from_launches (as the Nsight loader links them) or by two flow points of a key of their
// own (`s` at the launch's start, `f` at the kernel's). Events [from, to) of the sequence `seed`
// gives; each launch's calls and kernels are apart from the others' in time, so that the points
// bind to the very slices the links name.
struct Launches {
  int launched = 0;  // kernels with a launch
  void add(TraceBuilder& b, TraceStore& store, uint32_t seed, int from, int to, bool points) {
    std::mt19937 rng(seed);
    auto [threads, streams] = host_and_gpu_tracks(b, 5, 3);
    auto intern = [&](const char* s) { return store.strings.intern(s); };
    StringId launch = intern("cudaLaunchKernel"), driver = intern("cuLaunchKernel"), kernel = intern("kernel");
    StringId runtime = intern("cuda_runtime"), driver_cat = intern("cuda_driver"), ac2g = intern("ac2g");
    const TimeNs base = 5'000'000'000;
    uint32_t thread = threads[0];
    TimeNs launched_at = 0;
    int64_t id = -1;
    for (int i = 0; i < to; ++i) {
      TimeNs start = base + TimeNs(i) * 10'000 + TimeNs(rng() % 1'000), dur = 3 + TimeNs(rng() % 5'000);
      bool new_launch = id < 0 || rng() % 5 != 0, with_driver = rng() % 3 == 0, unlaunched = rng() % 10 == 0;
      uint32_t t = threads[rng() % threads.size()], s = streams[rng() % streams.size()];
      TimeNs k = base + TimeNs(i) * 10'000 + 2'000 + TimeNs(rng() % 7'000), k_dur = 1 + TimeNs(rng() % 3'000);
      if (new_launch) thread = t, launched_at = start, id = i;
      if (i < from) continue;
      if (new_launch) {
        b.add_slice(t, start, dur, launch, runtime, kNone, id);
        if (with_driver) b.add_slice(t, start + 1, dur - 2, driver, driver_cat, kNone, id);
      }
      b.add_slice(s, k, k_dur, kernel, kernel, kNone, unlaunched ? 1'000'000 + i : id);
      if (unlaunched) continue;
      ++launched;
      if (!points) continue;
      b.add_flow_point(thread, uint64_t(i), ac2g, 's', launched_at, true, 0);
      b.add_flow_point(s, uint64_t(i), ac2g, 'f', k, true, 0);
    }
  }
};

struct Linked {
  std::unique_ptr<TraceStore> store = std::make_unique<TraceStore>();
  int launched = 0;
};

// In halves, only the second half's builder is told to link launches: absorbing it carries that.
Linked launches(uint32_t seed, bool points, bool in_halves, bool one_thread) {
  ForceThreads force(one_thread ? Threads::One : Threads::Two);
  Linked linked;
  TraceStore later_store;
  TraceBuilder b(*linked.store), later(later_store);
  Launches first, second;
  first.add(b, *linked.store, seed, 0, in_halves ? 20000 : 40000, points);
  if (!points && !in_halves) b.flows_from_launches(linked.store->strings.intern("ac2g"));
  if (in_halves) {
    second.add(later, later_store, seed, 20000, 40000, points);
    if (!points) later.flows_from_launches(later_store.strings.intern("ac2g"));
    b.absorb(later);
  }
  b.finish();
  linked.launched = first.launched + second.launched;
  return linked;
}

std::vector<std::pair<SliceRef, SliceRef>> pairs_of(const TraceStore& store) {
  std::vector<std::pair<SliceRef, SliceRef>> pairs;
  for (const Flow& f : store.flows) pairs.emplace_back(f.from, f.to);
  auto key = [](const std::pair<SliceRef, SliceRef>& p) {
    return std::tuple(p.first.track, p.first.index, p.second.track, p.second.index);
  };
  std::sort(pairs.begin(), pairs.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  return pairs;
}

}  // namespace

TEST_CASE("launch flows: one from each launch to each GPU activity it launched, as flow points would link them") {
  auto points = launches(9, true, false, true);
  for (bool in_halves : {false, true}) {
    for (bool one_thread : {true, false}) {
      CAPTURE(in_halves);
      CAPTURE(one_thread);
      auto [store, launched] = launches(9, false, in_halves, one_thread);
      // Not trivial: most kernels launched, some by a launch of several, some not at all.
      CHECK(launched > 30000);
      CHECK(launched < 38000);
      REQUIRE(store->flows.size() == size_t(launched));
      CHECK(store->issues.count(IssueKind::FlowPointUnbound) == 0);
      size_t graphs = 0;
      for (uint32_t row = 0; row < store->flows.size(); ++row) {
        const Flow& f = store->flows[row];
        CHECK(store->launch_of(f.to) == f.from);
        CHECK(store->strings.view(f.cat) == "ac2g");
        std::span<const uint32_t> to = store->flows_to(f.to), from = store->flows_from(f.from);
        CHECK((to.size() == 1 && to[0] == row));
        CHECK(from.size() == store->activities_of(f.from).size());
        CHECK(std::count(from.begin(), from.end(), row) == 1);
        graphs += from.size() > 1;
      }
      CHECK(graphs > 5000);
      CHECK(pairs_of(*store) == pairs_of(*points.store));
      CHECK(snapshot_bytes(*store) == snapshot_bytes(*launches(9, false, false, true).store));
    }
  }
}

}  // namespace sl

namespace sl {

// CUDA graphs: each launch starts a flow to every kernel of its graph, and the launches' kernels
// take turns on the stream. Two of the launches start at the same time on two threads. With
// `other_slices`, flows are few beside the slices (the index is sorted another way than with many).
TEST_CASE("launch flows: launches of CUDA graphs, their flows in the kernels' order, with few slices or many") {
  for (int other_slices : {0, 40000}) {
    CAPTURE(other_slices);
    TraceStore store;
    TraceBuilder b(store);
    auto [threads, streams] = host_and_gpu_tracks(b, 3, 1);
    StringId launch = store.strings.intern("cudaGraphLaunch"), kernel = store.strings.intern("kernel");
    StringId runtime = store.strings.intern("cuda_runtime"), ac2g = store.strings.intern("ac2g");
    const TimeNs base = 1'000'000'000;
    const std::pair<uint32_t, TimeNs> launches[] = {
        {threads[0], base}, {threads[1], base}, {threads[0], base + 100}, {threads[1], base + 300}};
    for (int l = 0; l < 4; ++l) b.add_slice(launches[l].first, launches[l].second, 50, launch, runtime, kNone, l);
    for (int i = 0; i < other_slices; ++i) b.add_slice(threads[2], base + i * 10, 5, launch, runtime, kNone, std::nullopt);
    const int kKernels = 4000;
    for (int k = 0; k < kKernels; ++k) b.add_slice(streams[0], base + 1000 + k * 10, 5, kernel, kernel, kNone, k % 4);
    b.flows_from_launches(ac2g);
    b.finish();
    REQUIRE(store.flows.size() == size_t(kKernels));
    std::vector<SliceRef> launch_slices;
    for (int l = 0; l < 4; ++l) {
      CAPTURE(l);
      TimeNs at = launches[l].second - store.origin_ns;  // the store's times start at 0
      SliceRef from = store.slice_at(launches[l].first, at + 1);
      REQUIRE(from.valid());
      CHECK(store.start(from) == at);
      std::span<const uint32_t> rows = store.flows_from(from);
      REQUIRE(rows.size() == size_t(kKernels / 4));
      for (size_t i = 0; i < rows.size(); ++i) {
        CHECK(store.flows[rows[i]].from == from);
        CHECK(store.flows[rows[i]].to == SliceRef{streams[0], uint32_t(l + 4 * i)});  // kernel by kernel
        if (i > 0) CHECK(rows[i] == rows[i - 1] + 1);  // a launch's flows are rows side by side
      }
      launch_slices.push_back(from);
    }
    for (uint32_t row = 0; row < kKernels; ++row) {
      std::span<const uint32_t> to = store.flows_to({streams[0], row});
      REQUIRE(to.size() == 1);
      CHECK(store.flows[to[0]].to == SliceRef{streams[0], row});
      CHECK(store.flows[to[0]].from == launch_slices[row % 4]);
    }
  }
}

}  // namespace sl
