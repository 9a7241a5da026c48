#include "core/analysis/launch_stats.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/analysis/kernel_breakdown.h"

namespace sl::analysis {

bool is_graph_launch_name(std::string_view name) {
  // cudaGraphLaunch (and its _v10000 / _ptsz variants), cuGraphLaunch, hipGraphLaunch.
  return name.find("GraphLaunch") != std::string_view::npos;
}

namespace {

// The activities (kernels, memcpy, memset) of each graph launch call, in start order.
std::unordered_map<int32_t, std::vector<uint32_t>> graph_activities(const EventTable& t) {
  std::unordered_map<int32_t, std::vector<uint32_t>> by_launch;
  if (t.mode == Mode::Hta) return by_launch;  // HTA has no notion of graphs
  // Launch names repeat: each distinct one is tested once (0 = not yet, 1 = no, 2 = a graph launch).
  std::vector<uint8_t> graph_name(t.store->strings.size(), 0);
  auto is_graph_launch = [&](StringId name) {
    uint8_t& v = graph_name[name];
    if (!v) v = is_graph_launch_name(t.store->strings.view(name)) ? 2 : 1;
    return v == 2;
  };
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (r.launch < 0 || !is_graph_launch(t.rows[size_t(r.launch)].name)) continue;
    if (is_kernel_memcpy_memset_cat(t.cat(r))) by_launch[r.launch].push_back(i);
  }
  for (auto& [launch, v] : by_launch)
    std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
  return by_launch;
}

}  // namespace

std::vector<int32_t> graph_positions(const EventTable& t) {
  std::vector<int32_t> pos(t.rows.size(), -1);
  for (const auto& [launch, v] : graph_activities(t))
    for (size_t k = 0; k < v.size(); ++k) pos[v[k]] = int32_t(k);
  return pos;
}

namespace {

void add_pair(LaunchStats& s, const EventTable& t, uint32_t cpu, uint32_t gpu) {
  const Row& c = t.rows[cpu];
  const Row& g = t.rows[gpu];
  LaunchPair p;
  p.correlation = g.corr;
  p.launch = cpu;
  p.activity = gpu;
  p.runtime = c.dur;
  p.gpu = g.dur;
  p.delay = std::max<TimeNs>(0, g.ts - c.end());
  p.to_start = g.ts - c.ts;
  s.pairs.push_back(p);
}

// (HTA) launches named like the CUDA launch APIs, joined on correlation to every GPU row (an inner
// merge: CPU rows in row order, each followed by its GPU rows in row order).
void collect_hta(LaunchStats& s, const EventTable& t) {
  std::unordered_map<int64_t, std::vector<uint32_t>> gpu_by_corr;
  std::vector<uint32_t> launches;
  std::unordered_map<int64_t, bool> launch_corr;
  for (uint32_t i : t.cpu)
    if (is_hta_launch_name(t.name(t.rows[i]))) {
      launches.push_back(i);
      launch_corr[t.rows[i].corr] = true;
    }
  for (uint32_t i : t.gpu)
    if (launch_corr.count(t.rows[i].corr)) gpu_by_corr[t.rows[i].corr].push_back(i);
  for (uint32_t c : launches) {
    auto it = gpu_by_corr.find(t.rows[c].corr);
    if (it == gpu_by_corr.end()) continue;
    for (uint32_t g : it->second) add_pair(s, t, c, g);
  }
}

// Sightline: every GPU activity with a resolved launch, whatever the API. A graph launch's
// activities after its first get the in-graph latencies (from the previous activity of the graph).
void collect_sightline(LaunchStats& s, const EventTable& t) {
  auto graphs = graph_activities(t);
  std::unordered_map<uint32_t, std::pair<int32_t, uint32_t>> in_graph;  // row -> (position, previous row)
  for (const auto& [launch, v] : graphs)
    for (size_t k = 0; k < v.size(); ++k) in_graph[v[k]] = {int32_t(k), k ? v[k - 1] : v[k]};
  s.pairs.reserve(t.gpu.size());
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (r.launch < 0) continue;
    std::string_view cat = t.cat(r);
    if (!is_kernel_memcpy_memset_cat(cat)) continue;
    add_pair(s, t, uint32_t(r.launch), i);
    if (in_graph.empty()) continue;
    auto g = in_graph.find(i);
    if (g == in_graph.end()) continue;
    LaunchPair& p = s.pairs.back();
    p.graph_position = g->second.first;
    if (p.graph_position == 0) continue;
    const Row& prev = t.rows[g->second.second];
    p.delay = std::max<TimeNs>(0, r.ts - prev.end());
    p.to_start = r.ts - prev.ts;
  }
  std::stable_sort(s.pairs.begin(), s.pairs.end(), [&](const LaunchPair& a, const LaunchPair& b) {
    return t.rows[a.launch].ts < t.rows[b.launch].ts;
  });
}

Histogram histogram(const LaunchStats& s, const std::string& q, TimeNs LaunchPair::*field, size_t bins) {
  Histogram h;
  h.quantity = q;
  // The log axis starts at the smallest positive value, near the data: zeros (a kernel that
  // found its launch already done has no queue time) go in the first bin instead of stretching
  // the axis down to 1 ns.
  double lo = 1e300, hi = 0;
  for (const auto& p : s.pairs) {
    double v = double(p.*field);
    if (v > 0) lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) lo = hi = 1;  // every value is 0
  h.edges = log_bins(lo, hi, bins);
  h.pairs.resize(bins);
  for (uint32_t i = 0; i < s.pairs.size(); ++i) h.pairs[bin_of(h.edges, double(s.pairs[i].*field))].push_back(i);
  return h;
}

// quantile_sorted(sorted values, 0.5) without sorting them all: the two middle order statistics
// (nth_element, then the smallest above), interpolated by the same formula.
double median_of(std::vector<double>& v) {
  if (v.empty()) return 0;
  const double pos = 0.5 * double(v.size() - 1);
  const size_t lo = size_t(std::floor(pos));
  std::nth_element(v.begin(), v.begin() + ptrdiff_t(lo), v.end());
  const double a = v[lo];
  const double b = lo + 1 < v.size() ? *std::min_element(v.begin() + ptrdiff_t(lo) + 1, v.end()) : a;
  return a + (b - a) * (pos - double(lo));
}

}  // namespace

LaunchStats launch_stats(const EventTable& t, const LaunchStatsOptions& o) {
  LaunchStats s;
  s.rank = t.rank;
  if (t.mode == Mode::Hta) collect_hta(s, t);
  else collect_sightline(s, t);
  if (s.pairs.empty()) return s;
  std::vector<double> delays, to_start;
  std::vector<double> graph_first, graph_inner;
  delays.reserve(s.pairs.size());
  to_start.reserve(s.pairs.size());
  for (const auto& p : s.pairs) {
    if (p.graph_position >= 0) {
      ++s.graph_activities;
      (p.graph_position == 0 ? graph_first : graph_inner).push_back(double(p.delay));
      if (p.graph_position == 0) ++s.graph_launches, s.graph_runtime_sum += p.runtime;
    }
    if (p.delay > o.launch_delay_cutoff) ++s.launch_delay_outliers;
    if (p.graph_position <= 0) {  // a graph's one launch call counts once, on its first activity
      if (p.runtime <= o.runtime_cutoff && p.gpu < p.runtime) ++s.short_kernels;
      if (p.runtime > o.runtime_cutoff) ++s.runtime_outliers;
      s.runtime_sum += p.runtime;
    }
    s.gpu_sum += p.gpu;
    s.delay_sum += p.delay;
    s.delay_max = std::max(s.delay_max, p.delay);
    delays.push_back(double(p.delay));
    to_start.push_back(double(p.to_start));
  }
  s.delay_mean = double(s.delay_sum) / double(s.pairs.size());
  s.delay_median = median_of(delays);
  s.to_start_median = median_of(to_start);
  s.graph_first_delay_median = median_of(graph_first);
  s.graph_inner_delay_median = median_of(graph_inner);
  s.histograms.push_back(histogram(s, "runtime", &LaunchPair::runtime, o.histogram_bins));
  s.histograms.push_back(histogram(s, "launch_delay", &LaunchPair::delay, o.histogram_bins));
  s.histograms.push_back(histogram(s, "launch_to_start", &LaunchPair::to_start, o.histogram_bins));
  s.histograms.push_back(histogram(s, "gpu_duration", &LaunchPair::gpu, o.histogram_bins));
  return s;
}

}  // namespace sl::analysis
