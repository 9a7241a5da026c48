#include "core/analysis/launch_stats.h"

#include <algorithm>
#include <unordered_map>

#include "core/analysis/kernel_breakdown.h"

namespace sl::analysis {

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

// Sightline: every GPU activity with a resolved launch, whatever the API.
void collect_sightline(LaunchStats& s, const EventTable& t) {
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (r.launch < 0) continue;
    std::string_view cat = t.cat(r);
    if (!is_kernel_memcpy_memset_cat(cat)) continue;
    add_pair(s, t, uint32_t(r.launch), i);
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

}  // namespace

LaunchStats launch_stats(const EventTable& t, const LaunchStatsOptions& o) {
  LaunchStats s;
  s.rank = t.rank;
  if (t.mode == Mode::Hta) collect_hta(s, t);
  else collect_sightline(s, t);
  if (s.pairs.empty()) return s;
  std::vector<double> delays, to_start;
  for (const auto& p : s.pairs) {
    if (p.runtime <= o.runtime_cutoff && p.gpu < p.runtime) ++s.short_kernels;
    if (p.runtime > o.runtime_cutoff) ++s.runtime_outliers;
    if (p.delay > o.launch_delay_cutoff) ++s.launch_delay_outliers;
    s.runtime_sum += p.runtime;
    s.gpu_sum += p.gpu;
    s.delay_sum += p.delay;
    s.delay_max = std::max(s.delay_max, p.delay);
    delays.push_back(double(p.delay));
    to_start.push_back(double(p.to_start));
  }
  std::sort(delays.begin(), delays.end());
  std::sort(to_start.begin(), to_start.end());
  s.delay_mean = double(s.delay_sum) / double(s.pairs.size());
  s.delay_median = quantile_sorted(delays, 0.5);
  s.to_start_median = quantile_sorted(to_start, 0.5);
  s.histograms.push_back(histogram(s, "runtime", &LaunchPair::runtime, o.histogram_bins));
  s.histograms.push_back(histogram(s, "launch_delay", &LaunchPair::delay, o.histogram_bins));
  s.histograms.push_back(histogram(s, "launch_to_start", &LaunchPair::to_start, o.histogram_bins));
  s.histograms.push_back(histogram(s, "gpu_duration", &LaunchPair::gpu, o.histogram_bins));
  return s;
}

}  // namespace sl::analysis
