#include "core/analysis/kernel_sequences.h"

#include <algorithm>
#include <map>
#include <unordered_map>

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

}  // namespace

std::vector<KernelSequence> kernel_sequences(const EventTable& t, const KernelSequenceOptions& o) {
  std::vector<KernelSequence> out;
  if (o.operator_name.empty()) return out;
  const TraceStore& s = *t.store;
  const bool hta = t.mode == Mode::Hta;
  uint32_t main_track = kNone;
  if (hta && !s.iterations.empty()) main_track = s.iterations.front().slice.track;

  // Candidates: CPU rows whose name contains the substring, at the smallest depth.
  std::vector<std::pair<int, uint32_t>> cands;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    if (t.name(r).find(o.operator_name) == std::string_view::npos) continue;
    const SliceColumns& c = s.tracks[r.ref.track].slices;
    if (c.lane[r.ref.index] != 0) continue;
    int depth = int(c.depth[r.ref.index]);
    if (hta) {
      SliceRef top = r.ref;
      while (s.parent(top).valid()) top = s.parent(top);
      depth += depth_offset(s, r.ref.track, s.start(top), main_track);
    }
    cands.push_back({depth, i});
  }
  if (cands.empty()) return out;
  int min_depth = INT32_MAX;
  for (auto& [d, i] : cands) min_depth = std::min(min_depth, d);

  // GPU rows by correlation (HTA: stream > 0 only).
  std::unordered_map<int64_t, std::vector<uint32_t>> gpu_by_corr;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (r.corr == -1 || (hta && r.stream <= 0)) continue;
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
    std::stable_sort(kernels.begin(), kernels.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
    std::vector<StringId> key{root.name};
    for (uint32_t k : kernels) key.push_back(t.rows[k].name);
    KernelSequence& g = groups[key];
    if (g.count == 0) {
      g.op = std::string(t.name(root));
      for (StringId id : key) g.pattern.emplace_back(s.strings.view(id));
    }
    ++g.count;
    for (uint32_t k : kernels) g.gpu_kernel_time += t.rows[k].dur;
    g.cpu_op_time += root.dur;
  }
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  std::sort(out.begin(), out.end(), [](const KernelSequence& a, const KernelSequence& b) {
    if (a.count != b.count) return a.count > b.count;
    return a.joined() < b.joined();
  });
  return out;
}

}  // namespace sl::analysis
