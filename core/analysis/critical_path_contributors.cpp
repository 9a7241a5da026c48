#include "core/analysis/critical_path_contributors.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace sl::analysis {

namespace {

SliceRef ref_of(const EventTable& table, uint32_t row) { return table.rows[row].ref; }

TimeNs node_ts(const EventTable& table, uint32_t row, bool start) {
  const Row& r = table.rows[row];
  return start ? r.ts : r.end();
}

bool is_overhead(BoundBy b) { return b == BoundBy::KernelLaunchOverhead || b == BoundBy::KernelKernelOverhead; }

// The slice whose time an edge spends (see the graph rules in critical_path.cpp): one slice's
// start → end; parent start → first child start (the parent's); last child end → parent end (the
// parent's); sibling end → next sibling start: the deepest slice running in the middle of the gap
// (often a Python frame, which the graph leaves out: its own time is what the gap costs); none
// between top-level ops.
SliceRef owner_of(const EventTable& table, const CriticalPathEdge& e) {
  if (e.from_row == e.to_row) return ref_of(table, e.from_row);
  if (e.from_start && e.to_start) return ref_of(table, e.from_row);
  if (!e.from_start && !e.to_start) return ref_of(table, e.to_row);
  if (!e.from_start && e.to_start) {
    SliceRef next = ref_of(table, e.to_row);
    TimeNs middle = table.rows[e.from_row].end() + e.weight / 2;
    return table.store->slice_at(next.track, middle);
  }
  return {};
}

}  // namespace

std::vector<SliceRef> annotation_instances(const EventTable& table, std::string_view annotation) {
  std::vector<const Row*> found;
  for (uint32_t i : table.cpu) {
    std::string_view name = table.name(table.rows[i]);
    if (name.substr(0, annotation.size()) != annotation) continue;
    if (name.size() == annotation.size() || name[annotation.size()] == '#') found.push_back(&table.rows[i]);
  }
  std::stable_sort(found.begin(), found.end(), [](const Row* a, const Row* b) { return a->ts < b->ts; });
  std::vector<SliceRef> out;
  for (const Row* r : found) out.push_back(r->ref);
  return out;
}

std::vector<SliceRef> critical_path_slices(const EventTable& table, const CriticalPath& path) {
  std::vector<SliceRef> out;
  out.reserve(path.path.size() * 2);
  for (const CriticalPathEdge& e : path.path) {
    out.push_back(ref_of(table, e.from_row));
    out.push_back(ref_of(table, e.to_row));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<CriticalPathLink> critical_path_links(const EventTable& table, const CriticalPath& path) {
  std::vector<CriticalPathLink> out;
  for (const CriticalPathEdge& e : path.path) {
    SliceRef from = ref_of(table, e.from_row), to = ref_of(table, e.to_row);
    if (from == to) continue;
    if (e.bound_by == BoundBy::CpuBound && from.track == to.track) continue;  // within a thread's row
    out.push_back({from, to, node_ts(table, e.from_row, e.from_start), node_ts(table, e.to_row, e.to_start), e.bound_by});
  }
  return out;
}

std::vector<PathContributor> path_contributors(const EventTable& table, const CriticalPath& path) {
  std::map<SliceRef, PathContributor> by_slice;
  std::map<SliceRef, TimeNs> largest_edge;
  for (const CriticalPathEdge& e : path.path) {
    if (e.weight <= 0 || is_overhead(e.bound_by) || e.bound_by == BoundBy::Dependency) continue;
    SliceRef owner = owner_of(table, e);
    if (!owner.valid()) continue;
    PathContributor& c = by_slice[owner];
    c.slice = owner;
    c.time += e.weight;
    if (e.weight > largest_edge[owner]) largest_edge[owner] = e.weight, c.bound_by = e.bound_by;
  }
  std::vector<PathContributor> out;
  out.reserve(by_slice.size());
  for (auto& [ref, c] : by_slice) out.push_back(c);
  std::stable_sort(out.begin(), out.end(), [](const PathContributor& a, const PathContributor& b) { return a.time > b.time; });
  return out;
}

std::vector<PathOp> path_ops(const EventTable& table, const std::vector<PathContributor>& contributors) {
  const TraceStore& store = *table.store;
  std::unordered_map<StringId, size_t> index;
  std::vector<PathOp> out;
  for (const PathContributor& c : contributors) {  // longest first: an op's first one is its longest
    auto [it, fresh] = index.try_emplace(store.name_id(c.slice), out.size());
    if (fresh) out.push_back({std::string(store.name(c.slice)), 0, 0, c.slice});
    PathOp& op = out[it->second];
    op.time += c.time;
    ++op.count;
  }
  std::stable_sort(out.begin(), out.end(), [](const PathOp& a, const PathOp& b) { return a.time > b.time; });
  return out;
}

std::vector<PathGpuGap> path_gpu_gaps(const EventTable& table, const CriticalPath& path, const IdleCauses& causes) {
  std::unordered_map<int32_t, int> cause_of_next;  // activity row → cause of the gap it ends
  for (const IdleGap& g : causes.gaps)
    if (g.next >= 0) cause_of_next[g.next] = int(g.cause);
  std::vector<PathGpuGap> out;
  for (const CriticalPathEdge& e : path.path) {
    if (!is_overhead(e.bound_by) || e.weight <= 0) continue;
    PathGpuGap gap{ref_of(table, e.to_row), node_ts(table, e.from_row, e.from_start), node_ts(table, e.to_row, e.to_start),
                   e.bound_by, -1};
    if (auto it = cause_of_next.find(int32_t(e.to_row)); it != cause_of_next.end()) gap.cause = it->second;
    out.push_back(gap);
  }
  std::stable_sort(out.begin(), out.end(), [](const PathGpuGap& a, const PathGpuGap& b) { return a.length() > b.length(); });
  return out;
}

}  // namespace sl::analysis
