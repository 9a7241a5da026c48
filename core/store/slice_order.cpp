#include "core/store/slice_order.h"

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

namespace {

// The rows of one sorted run, copied out while it is merged into the rows before it.
struct RunCopy {
  std::vector<TimeNs> start, dur;
  std::vector<StringId> name, cat;
  std::vector<uint32_t> args, corr;
  void take(const SliceColumns& c, size_t from, size_t to) {
    auto copy = [&](auto& out, const auto& column) { out.assign(column.begin() + std::ptrdiff_t(from), column.begin() + std::ptrdiff_t(to)); };
    copy(start, c.start), copy(dur, c.dur), copy(name, c.name), copy(cat, c.cat), copy(args, c.args), copy(corr, c.corr);
  }
};

// Rows [from, to) of the input columns to [at, at + (to - from)), at >= from (the ranges may overlap).
void move_rows(SliceColumns& c, size_t from, size_t to, size_t at) {
  auto move = [&](auto& column) {
    if (to - from <= 8) {  // interleaved rows (nested calls recorded when they end): no memmove call
      for (size_t row = to; row-- > from;) column[at + (row - from)] = column[row];
      return;
    }
    std::copy_backward(column.begin() + std::ptrdiff_t(from), column.begin() + std::ptrdiff_t(to),
                       column.begin() + std::ptrdiff_t(at + (to - from)));
  };
  move(c.start), move(c.dur), move(c.name), move(c.cat), move(c.args), move(c.corr);
}

void put_row(SliceColumns& c, size_t to, const RunCopy& r, size_t from) {
  c.start[to] = r.start[from], c.dur[to] = r.dur[from], c.name[to] = r.name[from];
  c.cat[to] = r.cat[from], c.args[to] = r.args[from], c.corr[to] = r.corr[from];
}

// Rows [from, size) in stable order among themselves; the rows before stay as they are.
void sort_tail(SliceColumns& c, size_t from) {
  auto base = uint32_t(from);
  std::vector<uint32_t> order =
      stable_order(c.size() - from, [&](uint32_t a, uint32_t b) { return slice_before(c, base + a, base + b); });
  for (uint32_t& row : order) row += base;
  permute_slices(c, from, order);
}

bool before(TimeNs start_a, TimeNs dur_a, TimeNs start_b, TimeNs dur_b) {
  return start_a != start_b ? start_a < start_b : dur_a > dur_b;
}

// The first row in [base, end) of a sorted stretch that a row (start, dur) goes before: it goes
// before every row from there to `end`. Gallops back from `end` (a late row usually lands near
// it: a nested call recorded after its parent goes one row back), then a binary search.
size_t first_row_after(const SliceColumns& c, size_t base, size_t end, TimeNs start, TimeNs dur) {
  size_t lo = end, hi = end, step = 1;
  while (lo > base && before(start, dur, c.start[lo - 1], c.dur[lo - 1])) {
    hi = lo - 1;
    lo = lo - base > step ? lo - step : base;
    step *= 2;
  }
  // Here rows [hi, end) go after the row and row lo - 1 (if any, from base) does not.
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (before(start, dur, c.start[mid], c.dur[mid])) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Tracks filled from several tables (an Nsight thread's CUDA calls, then its OS runtime calls;
// a stream's kernels, then its copies) or with a few late rows are a handful of sorted runs.
// Each run is merged into the sorted rows before it from the back, in place (only the run is
// copied out), a row of a run going after the earlier rows it ties with: the same order as the
// stable sort, in time linear in the rows moved (plus a short search per run row, the prefix
// rows after it moving as a block), with no permutation or column copies. Gives up
// (false) once the rows moved pass a budget of a few times the track: the stable sort then
// finishes. That is still right: the sorted prefix holds the first rows in stable order and the
// rest are untouched, so the stable sort of this state is the stable sort of the original.
bool merge_sorted_runs(SliceColumns& c) {
  const size_t n = c.size();
  size_t budget = 4 * n + 4096;
  RunCopy run;
  for (size_t from = 1; from < n;) {
    size_t to = from;
    while (to < n && !(to > from && slice_before(c, uint32_t(to), uint32_t(to - 1)))) ++to;
    if (!slice_before(c, uint32_t(from), uint32_t(from - 1))) {  // continues the sorted prefix
      from = to;
      continue;
    }
    // A short tail of several runs (a stream's copies, sets and syncs after its 900k kernels, a
    // run per table) is sorted first, so that the prefix rows move once rather than once a run.
    if (to < n && n - from <= n / 8) {
      sort_tail(c, from);
      to = n;
    }
    // Rows of the prefix that the run's rows go before: those after its first row's place.
    size_t lo = first_row_after(c, 0, from, c.start[from], c.dur[from]);
    size_t moved = (from - lo) + (to - from);
    if (moved > budget) return false;
    budget -= moved;
    run.take(c, from, to);
    // From the back: the prefix rows that go after each run row move up as one block per column
    // (a few long blocks when a handful of copies is merged into a stream's kernels).
    size_t i = from, out = to;
    for (size_t j = to - from; j-- > 0;) {
      size_t k = first_row_after(c, lo, i, run.start[j], run.dur[j]);
      out -= i - k;
      move_rows(c, k, i, out);
      i = k;
      put_row(c, --out, run, j);
    }
    from = to;
  }
  return true;
}

}  // namespace

void sort_slices(SliceColumns& c) {
  if (sorted_by_start_then_longer(c)) return;
  if (merge_sorted_runs(c)) return;
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
