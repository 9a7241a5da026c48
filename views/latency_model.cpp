#include "views/latency_model.h"

#include <algorithm>

#include "core/analysis/kernel_breakdown.h"

namespace sl::views {

using namespace sl::analysis;

const char* latency_quantity_label(LatencyQuantity q) {
  switch (q) {
    case LatencyQuantity::LaunchDelay: return "launch delay";
    case LatencyQuantity::LaunchToStart: return "launch to start";
    case LatencyQuantity::Runtime: return "runtime call duration";
    case LatencyQuantity::GpuDuration: return "GPU duration";
  }
  return "";
}

const char* latency_quantity_key(LatencyQuantity q) {
  switch (q) {
    case LatencyQuantity::LaunchDelay: return "launch_delay";
    case LatencyQuantity::LaunchToStart: return "launch_to_start";
    case LatencyQuantity::Runtime: return "runtime";
    case LatencyQuantity::GpuDuration: return "gpu_duration";
  }
  return "";
}

bool parse_latency_quantity(const std::string& key, LatencyQuantity& q) {
  for (int i = 0; i < kLatencyQuantityCount; ++i)
    if (key == latency_quantity_key(LatencyQuantity(i))) return q = LatencyQuantity(i), true;
  return false;
}

TimeNs latency_value(const LaunchPair& p, LatencyQuantity q) {
  switch (q) {
    case LatencyQuantity::LaunchDelay: return p.delay;
    case LatencyQuantity::LaunchToStart: return p.to_start;
    case LatencyQuantity::Runtime: return p.runtime;
    case LatencyQuantity::GpuDuration: return p.gpu;
  }
  return 0;
}

size_t LatencyBins::max_count() const {
  size_t m = 0;
  for (const auto& b : pairs) m = std::max(m, b.size());
  return m;
}

static bool contains_ci(std::string_view text, std::string_view needle) {
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
         }) != text.end();
}

LatencyBins bin_latency(const EventTable& t, const LaunchStats& stats, const std::vector<int64_t>& iteration_of_row,
                        LatencyQuantity q, const LatencyFilter& f, const LatencyCutoffs& cut, size_t bins) {
  LatencyBins out;
  out.quantity = q;
  std::vector<uint32_t> kept;
  for (uint32_t i = 0; i < stats.pairs.size(); ++i) {
    const LaunchPair& p = stats.pairs[i];
    const Row& gpu = t.rows[p.activity];
    if (f.stream != -2 && gpu.stream != f.stream) continue;
    if (!f.name.empty() && !contains_ci(t.name(gpu), f.name)) continue;
    if (f.iteration != -2) {
      int64_t it = p.activity < iteration_of_row.size() ? iteration_of_row[p.activity] : -1;
      if (it != f.iteration) continue;
    }
    kept.push_back(i);
  }
  out.total = kept.size();
  if (kept.empty()) return out;
  std::vector<double> values;
  double lo = 1e300, hi = 0;
  for (uint32_t i : kept) {
    const LaunchPair& p = stats.pairs[i];
    double v = double(latency_value(p, q));
    values.push_back(v);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (p.graph_position <= 0) {  // a graph launch is one call: counted on its first activity
      if (p.runtime <= cut.runtime && p.gpu < p.runtime) ++out.short_kernels;
      if (p.runtime > cut.runtime) ++out.runtime_outliers;
    }
    if (p.delay > cut.launch_delay) ++out.launch_delay_outliers;
  }
  out.edges = log_bins(lo, hi, bins);
  out.pairs.resize(bins);
  for (uint32_t i : kept) out.pairs[bin_of(out.edges, double(latency_value(stats.pairs[i], q)))].push_back(i);
  std::sort(values.begin(), values.end());
  out.p50 = quantile_sorted(values, 0.5);
  out.p90 = quantile_sorted(values, 0.9);
  out.p99 = quantile_sorted(values, 0.99);
  return out;
}

std::pair<size_t, size_t> bins_in_range(const LatencyBins& b, double lo, double hi) {
  size_t first = SIZE_MAX, last = 0;
  for (size_t i = 0; i + 1 < b.edges.size(); ++i) {
    if (b.edges[i + 1] < lo || b.edges[i] > hi) continue;
    first = std::min(first, i);
    last = std::max(last, i);
  }
  if (first == SIZE_MAX) return {1, 0};
  return {first, last};
}

std::vector<uint32_t> brushed_pairs(const LatencyBins& b, size_t first, size_t last) {
  std::vector<uint32_t> out;
  for (size_t i = first; i <= last && i < b.pairs.size(); ++i) out.insert(out.end(), b.pairs[i].begin(), b.pairs[i].end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace sl::views
