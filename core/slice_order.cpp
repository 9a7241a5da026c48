#include "core/slice_order.h"

#include <algorithm>
#include <numeric>

namespace sl {
namespace {

bool sorted_by_start_then_longer(const SliceColumns& c) {
  for (uint32_t i = 1; i < c.size(); ++i)
    if (slice_before(c, i, i - 1)) return false;
  return true;
}

std::vector<uint32_t> stable_order(size_t n, auto before) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), before);
  return order;
}

// The open-slice stack of each lane group as the nesting loop left it after row from - 1, give
// or take slices that had already ended: the last row placed in a group and its parent chain
// (parents never leave their group). A stack may keep a few ended slices on top that the loop
// had popped; they end before any later row starts, so the next visit pops them again.
std::vector<std::vector<uint32_t>> stacks_before(const Track& track, uint32_t from) {
  const SliceColumns& c = track.slices;
  std::vector<std::vector<uint32_t>> stacks(track.lane_depths.size());
  size_t found = 0;
  for (uint32_t row = from; row-- > 0 && found < stacks.size();) {
    auto& stack = stacks[c.lane[row]];
    if (!stack.empty()) continue;
    for (uint32_t r = row; r != kNone; r = c.parent[r]) stack.push_back(r);
    std::reverse(stack.begin(), stack.end());
    ++found;
  }
  return stacks;
}

}  // namespace

void permute_slices(SliceColumns& c, size_t from, const std::vector<uint32_t>& order) {
  permute_from(c.start, from, order);
  permute_from(c.dur, from, order);
  permute_from(c.name, from, order);
  permute_from(c.cat, from, order);
  permute_from(c.args, from, order);
  permute_from(c.corr, from, order);
}

void sort_slices(SliceColumns& c) {
  if (sorted_by_start_then_longer(c)) return;
  // Stable: equal (start, dur) keep file order, so the first written encloses the second.
  permute_slices(c, 0, stable_order(c.size(), [&](uint32_t a, uint32_t b) { return slice_before(c, a, b); }));
}

void sort_series(std::vector<TimeNs>& ts, std::vector<double>& values) {
  if (std::is_sorted(ts.begin(), ts.end())) return;
  auto order = stable_order(ts.size(), [&](uint32_t x, uint32_t y) { return ts[x] < ts[y]; });
  permute_from(ts, 0, order);
  permute_from(values, 0, order);
}

void sort_instants(InstantColumns& i) {
  if (std::is_sorted(i.ts.begin(), i.ts.end())) return;
  auto order = stable_order(i.size(), [&](uint32_t x, uint32_t y) { return i.ts[x] < i.ts[y]; });
  permute_from(i.ts, 0, order);
  permute_from(i.name, 0, order);
  permute_from(i.cat, 0, order);
  permute_from(i.args, 0, order);
  permute_from(i.scope, 0, order);
}

// Slices nest by time. Each lane group keeps a stack of open slices; a slice goes into the first
// group where it fits inside the innermost open slice (or opens a new root), so a partial
// overlap never mis-nests and never hides: it moves to the next group.
uint32_t nest_slices_from(Track& track, uint32_t from, ImportIssues& issues) {
  SliceColumns& c = track.slices;
  size_t n = c.size();
  std::vector<std::vector<uint32_t>> stacks = stacks_before(track, from);
  c.parent.resize(n, kNone);
  c.depth.resize(n, 0);
  c.lane.resize(n, 0);
  track.max_end_prefix.resize(n);
  uint32_t overlapping = 0;
  TimeNs max_end = from > 0 ? track.max_end_prefix[from - 1] : INT64_MIN;
  for (uint32_t row = from; row < n; ++row) {
    TimeNs s = c.start[row], e = c.end(row);
    size_t group = 0;
    for (;; ++group) {
      if (group == stacks.size()) stacks.emplace_back(), track.lane_depths.push_back(0);
      auto& stack = stacks[group];
      while (!stack.empty() && c.end(stack.back()) <= s)
        stack.pop_back();
      if (stack.empty() || c.end(stack.back()) >= e) break;
    }
    auto& stack = stacks[group];
    c.parent[row] = stack.empty() ? kNone : stack.back();
    size_t depth = stack.size();
    if (depth > UINT16_MAX) {
      issues.add_count(IssueKind::DepthOverflow, 1);
      depth = UINT16_MAX;
    }
    c.depth[row] = static_cast<uint16_t>(depth);
    c.lane[row] = static_cast<uint16_t>(std::min<size_t>(group, UINT16_MAX));
    track.lane_depths[group] = static_cast<uint16_t>(std::max<size_t>(track.lane_depths[group], depth + 1));
    stack.push_back(row);
    if (group > 0) ++overlapping;
    max_end = std::max(max_end, e);
    track.max_end_prefix[row] = max_end;
  }
  return overlapping;
}

}  // namespace sl

namespace sl {

TimeNs latest_end(const TraceStore& store) {
  TimeNs end = 0;
  for (const Track& t : store.tracks) {
    if (!t.max_end_prefix.empty()) end = std::max(end, t.max_end_prefix.back());
    if (!t.instants.ts.empty()) end = std::max(end, t.instants.ts.back());
  }
  for (const CounterSeries& s : store.counters)
    if (!s.ts.empty()) end = std::max(end, s.ts.back());
  return end;
}

}  // namespace sl
