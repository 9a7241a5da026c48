#include "core/analysis/kernel_sequences.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/analysis/numpy_sort.h"

namespace sl::analysis {

std::string KernelSequence::joined() const {
  std::string s;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (i) s += '|';
    s += pattern[i];
  }
  return s;
}

namespace {

// (HTA) Depth offset of a CPU track's top-level events: on threads other than the main one (the
// thread holding ProfilerStep), top-level events hang under the main thread's `## backward ##`
// or enclosing `ProfilerStep#` slice.
int depth_offset(const TraceStore& s, uint32_t track, TimeNs ts, uint32_t main_track) {
  if (main_track == kNone || track == main_track) return 0;
  const SliceColumns& m = s.tracks[main_track].slices;
  int best = -1;
  auto [lo, hi] = s.rows_overlapping(main_track, ts, ts + 1);
  for (uint32_t i = lo; i < hi; ++i) {
    if (m.start[i] > ts || m.end(i) <= ts || m.lane[i] != 0) continue;
    std::string_view n = s.strings.view(m.name[i]);
    if (n == "## backward ##" || n.starts_with("ProfilerStep#")) best = std::max(best, int(m.depth[i]));
  }
  return best + 1;
}

// A pattern lists its kernels by GPU start. Sightline: equal starts keep launch order. (HTA) the
// kernels come from an inner merge of the GPU rows (row order, each once per matching launch)
// with the root's leaves, then pandas' sort_values(by="ts"): numpy's unstable quicksort, which
// reorders equal starts (kernels on two streams starting together) once a pattern has more
// than 16 kernels, so the same operator can give two different patterns.
void order_by_start(const EventTable& t, std::vector<uint32_t>& kernels) {
  if (t.mode != Mode::Hta) {
    std::stable_sort(kernels.begin(), kernels.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
    return;
  }
  std::stable_sort(kernels.begin(), kernels.end());
  std::vector<int64_t> starts;
  starts.reserve(kernels.size());
  for (uint32_t k : kernels) starts.push_back(t.rows[k].ts);
  std::vector<uint32_t> sorted;
  sorted.reserve(kernels.size());
  for (uint32_t i : numpy_quicksort_argsort(starts)) sorted.push_back(kernels[i]);
  kernels = std::move(sorted);
}

// One occurrence of a pattern: the root op followed by its kernels in start order; patterns are
// keyed by the names, so equal sequences under equal ops add up.
void count_occurrence(const EventTable& t, const Row& root, std::vector<uint32_t>& kernels,
                      std::map<std::vector<StringId>, KernelSequence>& groups) {
  order_by_start(t, kernels);
  std::vector<StringId> key{root.name};
  for (uint32_t k : kernels) key.push_back(t.rows[k].name);
  KernelSequence& g = groups[key];
  if (g.count == 0) {
    g.op = std::string(t.name(root));
    for (StringId id : key) g.pattern.emplace_back(t.store->strings.view(id));
  }
  ++g.count;
  for (uint32_t k : kernels) g.gpu_kernel_time += t.rows[k].dur;
  g.cpu_op_time += root.dur;
}

void sort_by_count_then_pattern(std::vector<KernelSequence>& out) {
  std::sort(out.begin(), out.end(), [](const KernelSequence& a, const KernelSequence& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.joined() < b.joined();
  });
}

// (HTA) the call stack of one thread as HTA's CallStackGraph builds it: every row of the thread
// becomes a start and an end event (negative durations clamped to 0), sorted by HTA's
// compare_events, then a stack walk makes each start a child of the open event on top. This is
// not the store's nesting: a zero-duration event at another's end (cudaPeekAtLastError right
// after cudaLaunchKernel) is nested INSIDE it, so the launch is no longer a leaf and its kernel
// leaves the operator's pattern (hta_negqueue_rank0_a100 has 71 such launches).
struct HtaCallStack {
  std::unordered_map<uint32_t, int32_t> depth;                  // row -> depth (top level 0)
  std::unordered_map<uint32_t, uint32_t> parent;                // row -> parent row (absent = top)
  std::unordered_map<uint32_t, std::vector<uint32_t>> children;  // row -> child rows, in order
};

struct StackEvent {
  uint32_t row;
  uint64_t order;  // file order: HTA's event index
  TimeNs time, dur;
  bool start;
};

// HTA's compare_events as a "goes first" test.
bool hta_event_before(const StackEvent& x, const StackEvent& y) {
  if (x.row == y.row) return x.start && !y.start;
  if (x.time != y.time) return x.time < y.time;
  if (x.start == y.start) {
    if (x.start) return x.dur != y.dur ? x.dur > y.dur : x.order < y.order;
    return x.dur != y.dur ? x.dur < y.dur : x.order > y.order;
  }
  if (x.dur > 0 && y.dur > 0) return !x.start;  // ends before starts: touching events are siblings
  if (x.dur == 0 && y.dur == 0) return x.order < y.order;
  return x.start;  // a zero-length event at another's boundary falls inside it
}

HtaCallStack build_hta_call_stack(const EventTable& t, const std::vector<uint32_t>& rows) {
  std::vector<StackEvent> events;
  events.reserve(rows.size() * 2);
  for (uint32_t i : rows) {
    const Row& r = t.rows[i];
    TimeNs dur = std::max<TimeNs>(r.dur, 0);
    events.push_back({i, r.order, r.ts, dur, true});
    events.push_back({i, r.order, r.ts + dur, dur, false});
  }
  // compare_events is not a strict weak order in one corner: a zero-length event at an instant
  // where one event ends and another starts (x.start < y.end < z.start < x.start). There the
  // result depends on the sort algorithm; HTA's is CPython's TimSort, ours a stable merge sort,
  // so such instants can still nest differently (known gap: e.g. fbgemm::permute_2D_sparse_data
  // on hta_negqueue_rank0_a100). Everywhere else the order is total and both sorts agree.
  std::stable_sort(events.begin(), events.end(), hta_event_before);
  HtaCallStack cs;
  std::vector<uint32_t> open;
  for (const StackEvent& e : events) {
    if (!e.start) {
      if (!open.empty()) open.pop_back();  // HTA pops the top, whichever event ends
      continue;
    }
    if (cs.depth.count(e.row)) continue;
    if (open.empty()) {
      cs.depth[e.row] = 0;
    } else {
      cs.parent[e.row] = open.back();
      cs.depth[e.row] = cs.depth[open.back()] + 1;
      cs.children[open.back()].push_back(e.row);
    }
    open.push_back(e.row);
  }
  return cs;
}

void collect_leaves(const HtaCallStack& cs, uint32_t row, std::vector<uint32_t>& leaves) {
  auto it = cs.children.find(row);
  if (it == cs.children.end()) {
    leaves.push_back(row);
    return;
  }
  for (uint32_t c : it->second) collect_leaves(cs, c, leaves);
}

// (HTA) get_frequent_cuda_kernel_sequences on HTA's call graph (see analyses.md §6).
std::vector<KernelSequence> kernel_sequences_hta(const EventTable& t, const KernelSequenceOptions& o) {
  const TraceStore& s = *t.store;
  uint32_t main_track = s.iterations.empty() ? kNone : s.iterations.front().slice.track;
  // Threads holding rows with stream > 0 are GPU streams: HTA keeps only their kernels and builds
  // no call stack, so a GPU annotation (stream -1 in HTA's table) is never a root.
  std::vector<char> gpu_stack(s.tracks.size(), 0);
  for (uint32_t g : t.gpu)
    if (t.rows[g].stream > 0) gpu_stack[t.rows[g].ref.track] = 1;
  std::map<uint32_t, std::vector<uint32_t>> rows_by_track;
  for (uint32_t i : t.cpu)
    if (!gpu_stack[t.rows[i].ref.track]) rows_by_track[t.rows[i].ref.track].push_back(i);

  std::map<uint32_t, HtaCallStack> stacks;
  std::vector<std::pair<int, uint32_t>> cands;
  for (auto& [track, rows] : rows_by_track) {
    bool any = std::any_of(rows.begin(), rows.end(), [&](uint32_t i) {
      return t.name(t.rows[i]).find(o.operator_name) != std::string_view::npos;
    });
    if (!any) continue;
    HtaCallStack& cs = stacks[track] = build_hta_call_stack(t, rows);
    for (uint32_t i : rows) {
      if (t.name(t.rows[i]).find(o.operator_name) == std::string_view::npos) continue;
      uint32_t top = i;
      for (auto p = cs.parent.find(top); p != cs.parent.end(); p = cs.parent.find(top)) top = p->second;
      cands.push_back({cs.depth[i] + depth_offset(s, track, t.rows[top].ts, main_track), i});
    }
  }
  std::vector<KernelSequence> out;
  if (cands.empty()) return out;
  int min_depth = INT32_MAX;
  for (auto& [d, i] : cands) min_depth = std::min(min_depth, d);

  std::unordered_map<int64_t, std::vector<uint32_t>> gpu_by_corr;  // stream > 0, row order
  for (uint32_t g : t.gpu)
    if (t.rows[g].stream > 0) gpu_by_corr[t.rows[g].corr].push_back(g);

  std::map<std::vector<StringId>, KernelSequence> groups;
  for (auto& [d, ri] : cands) {
    if (d != min_depth) continue;
    const Row& root = t.rows[ri];
    std::vector<uint32_t> leaves;
    collect_leaves(stacks[root.ref.track], ri, leaves);
    // Inner merge of the GPU rows (stream > 0, row order) with the leaves on correlation: each GPU
    // row once per leaf of its correlation (-1 included, as pandas matches it), in row order.
    std::unordered_map<int64_t, uint32_t> leaf_corr;
    for (uint32_t l : leaves) ++leaf_corr[t.rows[l].corr];
    std::vector<uint32_t> kernels;
    for (auto& [corr, times] : leaf_corr) {
      auto it = gpu_by_corr.find(corr);
      if (it == gpu_by_corr.end()) continue;
      for (uint32_t g : it->second) kernels.insert(kernels.end(), times, g);
    }
    std::stable_sort(kernels.begin(), kernels.end());
    if (kernels.size() < o.min_pattern_length) continue;
    count_occurrence(t, root, kernels, groups);
  }
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  return out;
}

}  // namespace

std::vector<KernelSequence> kernel_sequences(const EventTable& t, const KernelSequenceOptions& o) {
  std::vector<KernelSequence> out;
  if (o.operator_name.empty()) return out;
  if (t.mode == Mode::Hta) {
    out = kernel_sequences_hta(t, o);
    sort_by_count_then_pattern(out);
    return out;
  }
  const TraceStore& s = *t.store;

  // Candidates: CPU rows whose name contains the substring, at the smallest depth.
  std::vector<std::pair<int, uint32_t>> cands;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    if (t.name(r).find(o.operator_name) == std::string_view::npos) continue;
    const SliceColumns& c = s.tracks[r.ref.track].slices;
    if (c.lane[r.ref.index] != 0) continue;
    cands.push_back({int(c.depth[r.ref.index]), i});
  }
  if (cands.empty()) return out;
  int min_depth = INT32_MAX;
  for (auto& [d, i] : cands) min_depth = std::min(min_depth, d);

  // GPU rows by correlation.
  std::unordered_map<int64_t, std::vector<uint32_t>> gpu_by_corr;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (r.corr == -1) continue;
    gpu_by_corr[r.corr].push_back(i);
  }
  // Leaves: CPU slices with no child (per track, computed on demand).
  LeafTest is_leaf(s);

  std::map<std::vector<StringId>, KernelSequence> groups;
  for (auto& [d, ri] : cands) {
    if (d != min_depth) continue;
    const Row& root = t.rows[ri];
    const SliceColumns& c = s.tracks[root.ref.track].slices;
    const uint16_t root_depth = c.depth[root.ref.index];
    std::vector<uint32_t> kernels;
    for (uint32_t k = root.ref.index + 1; k < c.size() && c.start[k] < c.end(root.ref.index); ++k) {
      if (c.lane[k] != 0 || c.depth[k] <= root_depth || !is_leaf(root.ref.track, k)) continue;
      auto corr = s.correlation_id(SliceRef{root.ref.track, k});
      if (!corr) continue;
      auto it = gpu_by_corr.find(*corr);
      if (it != gpu_by_corr.end()) kernels.insert(kernels.end(), it->second.begin(), it->second.end());
    }
    if (kernels.size() < o.min_pattern_length) continue;
    count_occurrence(t, root, kernels, groups);
  }
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  sort_by_count_then_pattern(out);
  return out;
}

}  // namespace sl::analysis
