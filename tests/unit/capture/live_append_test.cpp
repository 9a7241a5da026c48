// A live capture's store grown batch by batch (capture::CaptureAppender →
// TraceBuilder::finish_appended) equals the store built at once from the same records
// (build_store): every column, links, flows, iterations, indexes, `info` and `report`.
// Batches come in random order (a batch reaching back before a track's end), launches and
// their kernels in different batches either way round, over several seeds.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <tuple>

#include "capture_test_util.h"
#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/capture/capture_store.h"
#include "core/report/trace_info.h"
#include "core/snapshot/snapshot.h"
#include "views/live_feed.h"

using namespace sl;
using namespace sl::capture;

namespace {

using K = ActivityKind;

// A training-like capture: launches on two threads inside NVTX ranges, kernels and copies on
// three streams (overlapping at times: lane groups), a graph launch with two kernels, kernels
// whose launch was not recorded, context syncs, NVML samples and ProfilerStep ranges.
std::vector<ActivityRecord> random_records(std::mt19937& rng, int calls) {
  std::vector<ActivityRecord> out;
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  uint64_t t = 1'000;
  uint32_t corr = 1;
  for (int step = 0; t < 1'000 + uint64_t(calls) * 10'000; ++step) {
    uint64_t step_start = t;
    std::string step_name = "ProfilerStep#" + std::to_string(step);
    ActivityRecord range = test::marker(step_name.c_str(), 1000 + step, kMarkerStart, step_start);
    range.name = step_name;
    out.push_back(range);
    for (int i = 0; i < 8; ++i, ++corr) {
      uint32_t tid = pick(0, 3) ? 7 : 9;
      uint64_t launch = t + pick(100, 400), kernel = launch + pick(500, 20'000);
      int kind = pick(0, 9);
      if (kind < 6) {
        out.push_back(test::api(K::Runtime, "cudaLaunchKernel", corr, launch, launch + pick(200, 900), tid));
        out.push_back(test::gpu(K::Kernel, pick(0, 1) ? "gemm" : "relu", corr, 7 + pick(0, 2), kernel, kernel + pick(300, 9'000)));
      } else if (kind == 6) {  // a graph launch: two kernels share its correlation
        out.push_back(test::api(K::Runtime, "cudaGraphLaunch", corr, launch, launch + 700, tid));
        out.push_back(test::gpu(K::Kernel, "graph_a", corr, 8, kernel, kernel + 1'000));
        out.push_back(test::gpu(K::Kernel, "graph_b", corr, 8, kernel + 1'500, kernel + 2'000));
      } else if (kind == 7) {
        out.push_back(test::api(K::Runtime, "cudaMemcpyAsync", corr, launch, launch + 500, tid));
        ActivityRecord copy = test::gpu(K::Memcpy, "", corr, 9, kernel, kernel + 2'500);
        copy.bytes = 1 << 20, copy.copy_kind = 1, copy.src_kind = 1, copy.dst_kind = 3;
        out.push_back(copy);
      } else if (kind == 8) {  // work whose launch was not recorded, and a launch with no work
        out.push_back(test::gpu(K::Kernel, "orphan", corr, 7, kernel, kernel + 800));
        out.push_back(test::api(K::Runtime, "cudaStreamQuery", 0, launch, launch + 100, tid));
      } else {
        ActivityRecord sync = test::api(K::Synchronization, "", corr, launch, launch + 3'000, tid);
        sync.sync_kind = uint8_t(SyncKind::ContextSynchronize);
        sync.stream = kNoStream;
        out.push_back(sync);
        ActivityRecord power;
        power.kind = K::Counter, power.name = "power (W)", power.number = pick(50, 300);
        power.start = power.end = test::kBase + launch;
        out.push_back(power);
      }
      t += 1'200;
    }
    out.push_back(test::marker(step_name.c_str(), 1000 + step, kMarkerEnd, t));
    t += 50;
  }
  return out;
}

// The synthetic capture's hello and devices, without its records.
CaptureData header() {
  CaptureData d = test::synthetic_capture();
  d.info.process_name = "trainer";
  d.records.clear();
  return d;
}

// Splits `records` into batches of random sizes and shuffles their order.
std::vector<std::vector<ActivityRecord>> random_batches(std::mt19937& rng, const std::vector<ActivityRecord>& records) {
  std::vector<std::vector<ActivityRecord>> batches;
  for (size_t i = 0; i < records.size();) {
    size_t n = std::uniform_int_distribution<size_t>(1, 40)(rng);
    batches.emplace_back(records.begin() + i, records.begin() + std::min(records.size(), i + n));
    i += n;
  }
  std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

// `after_batch(b, store)` runs after each batch is appended (a viewer saving a snapshot).
std::unique_ptr<TraceStore> grow(const CaptureData& header, const std::vector<std::vector<ActivityRecord>>& batches,
                                 const std::function<void(size_t, const TraceStore&)>& after_batch = {}) {
  auto store = std::make_unique<TraceStore>();
  RecordConverter converter(header.info, header.devices);
  CaptureAppender appender(*store, header.info, header.devices);
  for (size_t b = 0; b < batches.size(); ++b) {
    ConvertedTrace events = converter.convert(batches[b]);
    if (b == 0) converter.add_metadata(events);
    appender.append(events);
    if (after_batch) after_batch(b, *store);
  }
  ConvertedTrace last;
  converter.close_open_ranges(last);
  appender.append(last);
  appender.end();
  return store;
}

// A slice named across stores: its track's (pid, tid, kind) and its row.
using Key = std::tuple<std::string, std::string, int, uint32_t>;
Key key_of(const TraceStore& s, SliceRef r) {
  if (!r.valid()) return {"", "", -1, kNone};
  const Track& t = s.tracks[r.track];
  return {std::string(s.strings.view(s.processes[t.process].pid_text)), std::string(s.strings.view(t.tid_text)),
          int(t.kind), r.index};
}

std::map<std::pair<std::string, std::string>, uint32_t> tracks_by_key(const TraceStore& s) {
  std::map<std::pair<std::string, std::string>, uint32_t> out;
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    out[{std::string(s.strings.view(s.processes[s.tracks[t].process].pid_text)), std::string(s.strings.view(s.tracks[t].tid_text))}] = t;
  return out;
}

std::string report_json(const TraceStore& store) {
  analysis::Report report = analysis::run_report(store, analysis::ReportOptions{});
  return analysis::render_json(report, analysis::report_tables(report), info_json(store));
}

void check_track(const TraceStore& a, uint32_t ta, const TraceStore& b, uint32_t tb) {
  const Track &x = a.tracks[ta], &y = b.tracks[tb];
  CHECK(x.kind == y.kind);
  CHECK(x.device == y.device);
  CHECK(x.stream == y.stream);
  CHECK(x.gpu_work == y.gpu_work);
  CHECK(a.strings.view(x.name) == b.strings.view(y.name));
  CHECK(x.lane_depths == y.lane_depths);
  CHECK(x.overlapping == y.overlapping);
  CHECK(x.max_end_prefix == y.max_end_prefix);
  const SliceColumns &c = x.slices, &d = y.slices;
  REQUIRE(c.size() == d.size());
  CHECK(c.start == d.start);
  CHECK(c.dur == d.dur);
  CHECK(c.parent == d.parent);
  CHECK(c.depth == d.depth);
  CHECK(c.lane == d.lane);
  size_t differing = 0;
  for (uint32_t r = 0; r < c.size(); ++r) {
    SliceRef sa{ta, r}, sb{tb, r};
    bool same = a.name(sa) == b.name(sb) && a.cat(sa) == b.cat(sb) && a.slice_args_json(sa) == b.slice_args_json(sb) &&
                a.correlation_id(sa) == b.correlation_id(sb) && key_of(a, a.launch_of(sa)) == key_of(b, b.launch_of(sb)) &&
                a.activities_of(sa).size() == b.activities_of(sb).size() &&
                a.flows_from(sa).size() == b.flows_from(sb).size() && a.flows_to(sa).size() == b.flows_to(sb).size();
    for (size_t i = 0; same && i < a.activities_of(sa).size(); ++i)
      same = key_of(a, a.activities_of(sa)[i]) == key_of(b, b.activities_of(sb)[i]);
    differing += !same;
  }
  CHECK(differing == 0);
  const InstantColumns &i = x.instants, &j = y.instants;
  REQUIRE(i.size() == j.size());
  CHECK(i.ts == j.ts);
  CHECK(i.scope == j.scope);
  for (size_t r = 0; r < i.size(); ++r) CHECK(a.strings.view(i.name[r]) == b.strings.view(j.name[r]));
}

std::vector<std::tuple<std::string, Key, Key>> flow_list(const TraceStore& s) {
  std::vector<std::tuple<std::string, Key, Key>> out;
  for (const Flow& f : s.flows) out.emplace_back(std::string(s.strings.view(f.cat)), key_of(s, f.from), key_of(s, f.to));
  std::sort(out.begin(), out.end());
  return out;
}

void check_same_store(const TraceStore& a, const TraceStore& b) {
  CHECK(a.origin_ns == b.origin_ns);
  CHECK(a.end_ns == b.end_ns);
  CHECK(a.counts.events == b.counts.events);
  CHECK(a.counts.slices == b.counts.slices);
  CHECK(a.counts.instants == b.counts.instants);
  CHECK(a.counts.counters == b.counts.counters);
  CHECK(a.counts.flows == b.counts.flows);
  CHECK(a.counts.metadata == b.counts.metadata);
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) {
    CAPTURE(k);
    CHECK(a.issues.count(IssueKind(k)) == b.issues.count(IssueKind(k)));
  }
  CHECK(a.launch_link_count() == b.launch_link_count());
  CHECK(a.gpu_activity_count() == b.gpu_activity_count());
  CHECK(a.kernel_count() == b.kernel_count());
  auto ka = tracks_by_key(a), kb = tracks_by_key(b);
  REQUIRE(ka.size() == kb.size());
  for (const auto& [key, ta] : ka) {
    CAPTURE(key.first);
    CAPTURE(key.second);
    REQUIRE(kb.count(key));
    check_track(a, ta, b, kb[key]);
  }
  // Display order, by key.
  auto order = [](const TraceStore& s) {
    std::vector<std::string> out;
    for (uint32_t p : s.process_order)
      for (uint32_t t : s.processes[p].tracks)
        out.push_back(std::string(s.strings.view(s.processes[p].pid_text)) + "/" + std::string(s.strings.view(s.tracks[t].tid_text)));
    return out;
  };
  CHECK(order(a) == order(b));
  CHECK(flow_list(a) == flow_list(b));
  REQUIRE(a.iterations.size() == b.iterations.size());
  for (size_t i = 0; i < a.iterations.size(); ++i) {
    CHECK(a.iterations[i].number == b.iterations[i].number);
    CHECK(a.iterations[i].start == b.iterations[i].start);
    CHECK(a.iterations[i].end == b.iterations[i].end);
    CHECK(key_of(a, a.iterations[i].slice) == key_of(b, b.iterations[i].slice));
  }
  REQUIRE(a.counters.size() == b.counters.size());
  for (size_t s = 0; s < a.counters.size(); ++s) {
    CHECK(a.strings.view(a.counters[s].name) == b.strings.view(b.counters[s].name));
    CHECK(a.counters[s].ts == b.counters[s].ts);
    CHECK(a.counters[s].value == b.counters[s].value);
  }
  for (StringId id = 0; id < a.strings.size(); ++id) {
    StringId other = b.strings.find(a.strings.view(id));
    size_t in_b = other == StringPool::kNotFound ? 0 : b.slices_named(other).size();
    if (a.slices_named(id).size() != in_b) FAIL_CHECK("slices named '" << a.strings.view(id) << "' differ");
  }
  CHECK(info_json(a) == info_json(b));
  CHECK(report_json(a) == report_json(b));
}

}  // namespace

TEST_CASE("live append: batches in random order give the store built at once, over several seeds") {
  for (uint32_t seed : {1u, 2u, 3u, 17u, 2026u}) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    CaptureData header = ::header();
    auto batches = random_batches(rng, random_records(rng, 40));
    CaptureData all = header;
    for (const auto& b : batches) all.records.insert(all.records.end(), b.begin(), b.end());
    auto once = build_store(all);
    auto grown = grow(header, batches);
    REQUIRE(once->slice_count() > 300);
    CHECK(once->flows.size() > 100);
    check_same_store(*once, *grown);
  }
}

TEST_CASE("live append: a kernel before its launch and a launch before its kernel both link") {
  CaptureData header = ::header();
  std::vector<ActivityRecord> kernel_first = {test::gpu(K::Kernel, "k1", 5, 7, 9'000, 9'500)};
  std::vector<ActivityRecord> launches = {test::api(K::Runtime, "cudaLaunchKernel", 5, 1'000, 1'400),
                                          test::api(K::Runtime, "cudaLaunchKernel", 6, 2'000, 2'400)};
  std::vector<ActivityRecord> kernel_after = {test::gpu(K::Kernel, "k2", 6, 7, 10'000, 10'500)};
  auto grown = grow(header, {kernel_first, launches, kernel_after});
  CaptureData all = header;
  for (const auto& b : {kernel_first, launches, kernel_after}) all.records.insert(all.records.end(), b.begin(), b.end());
  auto once = build_store(all);
  CHECK(grown->launch_link_count() == 2);
  CHECK(grown->flows.size() == 2);
  CHECK(grown->origin_ns == test::kBase - test::kBase + 1'000);  // the first launch, before the first kernel
  CHECK(grown->issues.count(IssueKind::FlowEndWithoutStart) == 0);
  check_same_store(*once, *grown);
}

TEST_CASE("live append: the store after every batch is a finished store of the records so far") {
  std::mt19937 rng(7);
  CaptureData header = ::header();
  auto batches = random_batches(rng, random_records(rng, 10));
  auto store = std::make_unique<TraceStore>();
  RecordConverter converter(header.info, header.devices);
  CaptureAppender appender(*store, header.info, header.devices);
  size_t records = 0;
  for (const auto& b : batches) {
    appender.append(converter.convert(b));
    records += b.size();
    for (const Track& t : store->tracks) {  // sorted, nested, indexed after each batch
      const SliceColumns& c = t.slices;
      REQUIRE(c.parent.size() == c.size());
      REQUIRE(t.max_end_prefix.size() == c.size());
      for (uint32_t r = 1; r < c.size(); ++r) REQUIRE((c.start[r - 1] < c.start[r] || (c.start[r - 1] == c.start[r] && c.dur[r - 1] >= c.dur[r])));
      for (uint32_t r = 0; r < c.size(); ++r)
        if (c.parent[r] != kNone) REQUIRE((c.start[c.parent[r]] <= c.start[r] && c.end(c.parent[r]) >= c.end(r)));
    }
    for (const Flow& f : store->flows) REQUIRE((f.from.index < store->tracks[f.from.track].slices.size() && f.to.index < store->tracks[f.to.track].slices.size()));
  }
  CHECK(records > 100);
  CHECK(store->slice_count() > 50);
}

TEST_CASE("live append: a snapshot of the grown store opens and equals it") {
  std::mt19937 rng(11);
  CaptureData header = ::header();
  auto batches = random_batches(rng, random_records(rng, 20));
  auto grown = grow(header, batches);
  auto path = std::filesystem::temp_directory_path() / ("sl-live-" + std::to_string(::getpid()) + ".slsnap");
  REQUIRE(write_snapshot(*grown, path.string()).empty());
  LoadResult opened = load_snapshot(path.string());
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(opened.ok(), opened.error.to_string());
  check_same_store(*grown, *opened.store);
  CHECK(opened.store->args_table().size() == grown->args_table().size());
}

TEST_CASE("live append: idle gaps tallied per batch equal a count over the store built at once") {
  for (uint32_t seed : {4u, 5u, 6u}) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    CaptureData head = header();
    auto batches = random_batches(rng, random_records(rng, 30));
    views::LiveStore live;
    std::unique_ptr<TraceStore> owned;
    RecordConverter converter(head.info, head.devices);
    CaptureData all = head;
    for (size_t i = 0; i < batches.size(); ++i) {
      views::LiveBatch b;
      b.fresh = i == 0;
      b.info = head.info;
      b.devices = head.devices;
      b.events = converter.convert(batches[i]);
      b.records = batches[i].size();
      if (auto fresh = live.apply(b)) owned = std::move(fresh);
      all.records.insert(all.records.end(), batches[i].begin(), batches[i].end());
    }
    auto once = build_store(all);
    TimeNs idle = 0;
    uint64_t gaps = 0;
    for (const Track& t : once->tracks) {
      if (t.kind != TrackKind::GpuStream) continue;
      for (size_t r = 1; r < t.slices.size(); ++r)
        if (TimeNs gap = t.slices.start[r] - t.max_end_prefix[r - 1]; gap > 0) idle += gap, ++gaps;
    }
    CHECK(gaps > 20);
    CHECK(live.idle_gaps() == gaps);
    CHECK(live.gpu_idle_ns() == idle);
    CHECK(live.records() == all.records.size());
  }
}

// "A snapshot of a live capture can be saved at any time": half-way through (NVTX ranges still
// open, kernels whose launch has not arrived, the args' last block still open), the snapshot
// opens as the store was then, byte for byte; the capture then goes on, and the store it ends
// with is the one grown without the save (saving changed nothing in it), equal to the one-shot build.
TEST_CASE("live append: a snapshot saved mid-capture opens as the store was, and the capture goes on unchanged") {
  std::mt19937 rng(23);
  CaptureData head = header();
  auto batches = random_batches(rng, random_records(rng, 30));
  REQUIRE(batches.size() > 10);
  auto path = std::filesystem::temp_directory_path() / ("sl-live-mid-" + std::to_string(::getpid()) + ".slsnap");
  size_t half = batches.size() / 2;
  std::string at_save;
  auto saved_then_grown = grow(head, batches, [&](size_t b, const TraceStore& store) {
    if (b + 1 != half) return;
    REQUIRE(write_snapshot(store, path.string()).empty());
    at_save = snapshot_bytes(store);
  });
  LoadResult opened = load_snapshot(path.string());
  std::filesystem::remove(path);
  REQUIRE_MESSAGE(opened.ok(), opened.error.to_string());
  CHECK(snapshot_bytes(*opened.store) == at_save);
  CHECK(opened.store->slice_count() > 0);
  CHECK(opened.store->slice_count() < saved_then_grown->slice_count());
  // The opened store answers like any trace.
  CHECK(info_json(*opened.store).find("\"kernels\":") != std::string::npos);
  (void)report_json(*opened.store);

  auto grown = grow(head, batches);
  CHECK(snapshot_bytes(*saved_then_grown) == snapshot_bytes(*grown));
  CaptureData all = head;
  for (const auto& b : batches) all.records.insert(all.records.end(), b.begin(), b.end());
  check_same_store(*build_store(all), *saved_then_grown);
}
