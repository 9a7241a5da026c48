#include "views/pattern_model.h"

#include "core/analysis/launch_stats.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

namespace sl::views {

using namespace sl::analysis;

namespace {

// The calls fusion_candidates cuts chains at (they drain the launch queue).
bool blocking_host_call(std::string_view n) {
  static constexpr std::string_view kCalls[] = {
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy",
      "hipDeviceSynchronize",  "hipStreamSynchronize",  "hipEventSynchronize",  "hipMemcpy",
      "cuCtxSynchronize",      "cuStreamSynchronize",   "cuEventSynchronize"};
  return std::find(std::begin(kCalls), std::end(kCalls), n) != std::end(kCalls);
}

Occurrence make_occurrence(const EventTable& t, const std::vector<uint32_t>& rows, SliceRef anchor) {
  Occurrence o;
  o.start = INT64_MAX;
  o.end = INT64_MIN;
  for (uint32_t r : rows) {
    o.kernels.push_back(t.rows[r].ref);
    o.start = std::min(o.start, t.rows[r].ts);
    o.end = std::max(o.end, t.rows[r].end());
  }
  o.anchor = anchor.valid() ? anchor : (rows.empty() ? SliceRef{} : t.rows[rows.front()].ref);
  return o;
}

}  // namespace

std::vector<Occurrence> fusion_occurrences(const EventTable& t, const FusionCandidate& chain) {
  std::vector<Occurrence> out;
  if (chain.chain.empty()) return out;
  std::vector<StringId> ids;
  for (const auto& n : chain.chain) {
    StringId id = t.store->strings.find(n);
    if (id == StringPool::kNotFound) return out;
    ids.push_back(id);
  }
  std::unordered_map<int64_t, std::vector<uint32_t>> by_stream;
  for (uint32_t i : t.gpu)
    if (t.rows[i].launch >= 0 && is_kernel_cat(t.cat(t.rows[i]))) by_stream[t.rows[i].stream].push_back(i);
  // Like fusion_candidates: communication and graph-replayed kernels are never part of a chain.
  std::vector<int32_t> graph = graph_positions(t);
  auto excluded = [&](uint32_t i) { return graph[i] >= 0 || KernelType(t.rows[i].kernel_type) == KernelType::Communication; };
  std::vector<TimeNs> blocking;
  for (uint32_t i : t.cpu)
    if (blocking_host_call(t.name(t.rows[i]))) blocking.push_back(t.rows[i].ts);
  std::sort(blocking.begin(), blocking.end());
  auto launch_ts = [&](uint32_t k) { return t.rows[size_t(t.rows[k].launch)].ts; };
  auto cut_between = [&](uint32_t a, uint32_t b) {
    auto it = std::upper_bound(blocking.begin(), blocking.end(), launch_ts(a));
    return it != blocking.end() && *it < launch_ts(b);
  };
  for (auto& [stream, v] : by_stream) {
    std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return launch_ts(a) < launch_ts(b); });
    for (size_t a = 0; a + ids.size() <= v.size(); ++a) {
      bool match = true;
      for (size_t k = 0; k < ids.size() && match; ++k) {
        match = t.rows[v[a + k]].name == ids[k] && !excluded(v[a + k]);
        if (match && k > 0) match = !cut_between(v[a + k - 1], v[a + k]);
      }
      if (match) out.push_back(make_occurrence(t, std::vector<uint32_t>(v.begin() + long(a), v.begin() + long(a + ids.size())), {}));
    }
  }
  std::sort(out.begin(), out.end(), [](const Occurrence& a, const Occurrence& b) { return a.start < b.start; });
  return out;
}

std::vector<Occurrence> kernel_occurrences(const EventTable& t, const std::string& name) {
  std::vector<Occurrence> out;
  StringId id = t.store->strings.find(name);
  if (id == StringPool::kNotFound) return out;
  for (uint32_t i : t.gpu)
    if (t.rows[i].name == id && is_kernel_cat(t.cat(t.rows[i]))) out.push_back(make_occurrence(t, {i}, {}));
  std::sort(out.begin(), out.end(), [](const Occurrence& a, const Occurrence& b) { return a.start < b.start; });
  return out;
}

std::vector<Occurrence> sequence_occurrences(const EventTable& t, const std::string& sub, const KernelSequence& seq) {
  std::vector<Occurrence> out;
  if (sub.empty() || seq.pattern.empty()) return out;
  const TraceStore& s = *t.store;
  // The same roots kernel_sequences groups: lane-0 CPU rows containing `sub`, shallowest only.
  std::vector<uint32_t> roots;
  int min_depth = INT_MAX;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    if (t.name(r).find(sub) == std::string_view::npos) continue;
    const SliceColumns& c = s.tracks[r.ref.track].slices;
    if (c.lane[r.ref.index] != 0) continue;
    int d = int(c.depth[r.ref.index]);
    if (d < min_depth) min_depth = d, roots.clear();
    if (d == min_depth) roots.push_back(i);
  }
  std::unordered_map<int64_t, std::vector<uint32_t>> gpu_by_corr;
  for (uint32_t i : t.gpu)
    if (t.rows[i].corr != -1) gpu_by_corr[t.rows[i].corr].push_back(i);
  analysis::LeafTest is_leaf(s);
  for (uint32_t ri : roots) {
    const Row& root = t.rows[ri];
    if (t.name(root) != seq.pattern.front()) continue;
    const SliceColumns& c = s.tracks[root.ref.track].slices;
    std::vector<uint32_t> kernels;
    for (uint32_t k = root.ref.index + 1; k < c.size() && c.start[k] < c.end(root.ref.index); ++k) {
      if (c.lane[k] != 0 || c.depth[k] <= c.depth[root.ref.index] || !is_leaf(root.ref.track, k)) continue;
      auto corr = s.correlation_id(SliceRef{root.ref.track, k});
      if (!corr) continue;
      if (auto it = gpu_by_corr.find(*corr); it != gpu_by_corr.end()) kernels.insert(kernels.end(), it->second.begin(), it->second.end());
    }
    if (kernels.size() + 1 != seq.pattern.size()) continue;
    std::stable_sort(kernels.begin(), kernels.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
    bool match = true;
    for (size_t k = 0; k < kernels.size() && match; ++k) match = t.name(t.rows[kernels[k]]) == seq.pattern[k + 1];
    if (match) out.push_back(make_occurrence(t, kernels, root.ref));
  }
  std::sort(out.begin(), out.end(), [](const Occurrence& a, const Occurrence& b) { return a.start < b.start; });
  return out;
}

std::vector<SliceRef> occurrence_kernels(const std::vector<Occurrence>& occurrences) {
  std::vector<SliceRef> out;
  for (const auto& o : occurrences) out.insert(out.end(), o.kernels.begin(), o.kernels.end());
  std::sort(out.begin(), out.end(), [](SliceRef a, SliceRef b) { return a.track != b.track ? a.track < b.track : a.index < b.index; });
  out.erase(std::unique(out.begin(), out.end(), [](SliceRef a, SliceRef b) { return a.track == b.track && a.index == b.index; }), out.end());
  return out;
}

}  // namespace sl::views
