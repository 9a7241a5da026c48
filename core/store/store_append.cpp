// TraceBuilder::finish_appended: a finished store takes further batches (live capture).
//
// What is incremental and what is not (per batch of k new events, N in the store):
// - slices: only the new rows are sorted; they merge into their track's tail, and nesting
//   resumes at the first row the batch lands before (usually the old end: O(k)). A batch that
//   reaches back re-nests that track's tail and renumbers its rows there (flows follow).
// - max_end_prefix and lane_depths are extended from that row; counters and instants are
//   re-sorted only when a new point lands before an old one.
// - flows bind as their points arrive: an `f` before its `s` waits for it (per flow key).
// - the name index, the launch ↔ activity links, iterations and the track order are rebuilt:
//   linear passes over flat columns (a few ms at 1M slices), no sorting, no string work.
#include <algorithm>
#include <numeric>

#include "core/store/slice_order.h"
#include "core/store/trace_builder.h"

namespace sl {
namespace {

// First finished row (of rows [0, finished)) that `row` sorts before: where a new row lands.
uint32_t landing_row(const SliceColumns& c, uint32_t finished, uint32_t row) {
  uint32_t lo = 0, hi = finished;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (slice_before(c, row, mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

}  // namespace

void TraceBuilder::finish_appended() {
  match_begin_end();
  match_async();
  finished_.resize(store_.tracks.size());
  finished_counters_.resize(store_.counters.size());
  changed_from_.assign(store_.tracks.size(), kNone);
  rebase_appended();
  store_.adopt_device_tracks();
  for (uint32_t t = 0; t < store_.tracks.size(); ++t) nest_appended(t);
  for (uint32_t s = 0; s < store_.counters.size(); ++s) {
    CounterSeries& series = store_.counters[s];
    if (series.ts.size() > finished_counters_[s]) sort_series(series.ts, series.value);
    finished_counters_[s] = uint32_t(series.ts.size());
  }
  store_.end_ns = latest_end(store_);
  store_.index_names();
  store_.link_correlations();
  store_.find_iterations();
  store_.order_tracks();
  size_t first_new_flow = store_.flows.size();
  pair_appended_flows();
  index_appended_flows(first_new_flow);
}

// New events carry absolute times; finished ones are relative to the origin. A batch starting
// before the origin moves it, and everything finished shifts with it.
void TraceBuilder::rebase_appended() {
  TimeNs origin = min_ts_ == INT64_MAX ? store_.origin_ns : min_ts_;
  if (origin != store_.origin_ns) shift_finished(store_.origin_ns - origin);
  store_.origin_ns = origin;
  for (uint32_t t = 0; t < store_.tracks.size(); ++t) {
    Track& track = store_.tracks[t];
    for (size_t r = finished_[t].slices; r < track.slices.size(); ++r) track.slices.start[r] -= origin;
    for (size_t r = finished_[t].instants; r < track.instants.size(); ++r) track.instants.ts[r] -= origin;
  }
  for (uint32_t s = 0; s < store_.counters.size(); ++s) {
    auto& ts = store_.counters[s].ts;
    for (size_t r = finished_counters_[s]; r < ts.size(); ++r) ts[r] -= origin;
  }
  for (FlowPoint& f : flow_points_) f.ts -= origin;
}

void TraceBuilder::shift_finished(TimeNs delta) {
  for (uint32_t t = 0; t < store_.tracks.size(); ++t) {
    Track& track = store_.tracks[t];
    for (uint32_t r = 0; r < finished_[t].slices; ++r) track.slices.start[r] += delta, track.max_end_prefix[r] += delta;
    for (uint32_t r = 0; r < finished_[t].instants; ++r) track.instants.ts[r] += delta;
  }
  for (uint32_t s = 0; s < store_.counters.size(); ++s)
    for (uint32_t r = 0; r < finished_counters_[s]; ++r) store_.counters[s].ts[r] += delta;
}

// Sorts the track's new rows, merges them into the finished ones (a new row after finished rows
// it ties with: file order) and nests from the first row that changed.
void TraceBuilder::nest_appended(uint32_t t) {
  Track& track = store_.tracks[t];
  SliceColumns& c = track.slices;
  uint32_t finished = finished_[t].slices, n = uint32_t(c.size());
  if (n > finished) {
    auto before = [&](uint32_t a, uint32_t b) { return slice_before(c, a, b); };
    std::vector<uint32_t> fresh(n - finished);
    std::iota(fresh.begin(), fresh.end(), finished);
    std::stable_sort(fresh.begin(), fresh.end(), before);
    uint32_t from = landing_row(c, finished, fresh.front());
    std::vector<uint32_t> moved(finished - from), order;
    std::iota(moved.begin(), moved.end(), from);
    order.reserve(n - from);
    std::merge(moved.begin(), moved.end(), fresh.begin(), fresh.end(), std::back_inserter(order), before);
    permute_slices(c, from, order);
    changed_from_[t] = from;
    uint32_t overlapping = track.overlapping;
    if (from < finished) {
      // Rows from `from` on are renumbered and nested again: restate what the rows before hold.
      track.lane_depths.clear();
      overlapping = 0;
      for (uint32_t r = 0; r < from; ++r) {
        if (c.lane[r] >= track.lane_depths.size()) track.lane_depths.resize(c.lane[r] + 1, 0);
        track.lane_depths[c.lane[r]] = std::max<uint16_t>(track.lane_depths[c.lane[r]], c.depth[r] + 1);
        overlapping += c.lane[r] > 0;
      }
      std::vector<uint32_t> new_row(finished - from);
      for (uint32_t i = 0; i < order.size(); ++i)
        if (order[i] < finished) new_row[order[i] - from] = from + i;
      remap_rows(t, from, new_row);
    }
    overlapping += nest_slices_from(track, from, store_.issues);
    // Counted as they appear; a re-nest that removes an overlap does not take its count back.
    if (overlapping > track.overlapping) store_.issues.add_count(IssueKind::OverlappingSlice, overlapping - track.overlapping);
    track.overlapping = overlapping;
  }
  if (track.instants.size() > finished_[t].instants) sort_instants(track.instants);
  finished_[t] = {n, uint32_t(track.instants.size())};
}

// Rows [from, ...) of `track` moved: new_row[old - from] is where each went.
void TraceBuilder::remap_rows(uint32_t track, uint32_t from, const std::vector<uint32_t>& new_row) {
  auto remap = [&](SliceRef& s) {
    if (s.track == track && s.index != kNone && s.index >= from && s.index - from < new_row.size())
      s.index = new_row[s.index - from];
  };
  for (Flow& f : store_.flows) remap(f.from), remap(f.to);
  for (auto& [key, state] : flow_keys_) {
    remap(state.from);
    for (FlowEnd& e : state.waiting) remap(e.target);
  }
}

// Flow points of this batch, bound to their slices, then paired per key with what earlier
// batches left: a start links every end that waited for it, and each later end.
void TraceBuilder::pair_appended_flows() {
  bind_targets();
  std::sort(flow_points_.begin(), flow_points_.end(), [](const FlowPoint& a, const FlowPoint& b) {
    return std::tie(a.key, a.ts, a.order) < std::tie(b.key, b.ts, b.order);
  });
  auto link = [&](StringId cat, SliceRef from, SliceRef to) {
    if (from.valid() && to.valid()) store_.flows.push_back({cat, from, to});
  };
  for (const FlowPoint& p : flow_points_) {
    FlowKey& key = flow_keys_[p.key];
    if (!p.target.valid()) store_.issues.add(IssueKind::FlowPointUnbound, p.offset);
    if (p.phase == 's') {
      key.ended = !key.waiting.empty() && !key.has_start;
      if (!key.has_start)
        for (const FlowEnd& e : key.waiting) link(e.cat, p.target, e.target);
      key.waiting.clear();
      key.has_start = true;
      key.from = p.target;
      key.start_offset = p.offset;
    } else if (!key.has_start) {
      key.waiting.push_back({p.cat, p.target, p.offset});
    } else {
      link(p.cat, key.from, p.target);
      if (p.phase == 't') key.from = p.target;
      else key.ended = true;
    }
  }
  flow_points_.clear();
}

void TraceBuilder::index_appended_flows(size_t first_new) {
  auto extend = [&](std::vector<uint32_t>& index, SliceRef Flow::*end) {
    auto by_end = [&](uint32_t a, uint32_t b) { return store_.flows[a].*end < store_.flows[b].*end; };
    size_t old = index.size();
    for (size_t i = first_new; i < store_.flows.size(); ++i) index.push_back(uint32_t(i));
    std::stable_sort(index.begin() + std::ptrdiff_t(old), index.end(), by_end);
    std::inplace_merge(index.begin(), index.begin() + std::ptrdiff_t(old), index.end(), by_end);
  };
  extend(store_.flows_by_from_, &Flow::from);
  extend(store_.flows_by_to_, &Flow::to);
}

void TraceBuilder::report_open_flows() {
  for (auto& [id, key] : flow_keys_) {
    if (!key.has_start && !key.waiting.empty()) store_.issues.add(IssueKind::FlowEndWithoutStart, key.waiting.front().offset);
    if (key.has_start && !key.ended) store_.issues.add(IssueKind::FlowStartWithoutEnd, key.start_offset);
  }
  flow_keys_.clear();
}

}  // namespace sl
