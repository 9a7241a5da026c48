// View-model of the launch-latency view, headless: filtered log-spaced histograms of one launch
// quantity, quantiles, cutoff counts, and brushing (a bin range → the kernels in it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/launch_stats.h"

namespace sl::views {

enum class LatencyQuantity { LaunchDelay, LaunchToStart, Runtime, GpuDuration };
constexpr int kLatencyQuantityCount = 4;
const char* latency_quantity_label(LatencyQuantity q);  // "launch delay", ...
const char* latency_quantity_key(LatencyQuantity q);    // launch_delay, ... (as in the report)
bool parse_latency_quantity(const std::string& key, LatencyQuantity& q);
TimeNs latency_value(const analysis::LaunchPair& p, LatencyQuantity q);

struct LatencyFilter {
  int64_t stream = -2;     // -2 = every stream
  std::string name;        // substring of the kernel name; empty = all
  int64_t iteration = -2;  // -2 = every iteration, -1 = outside any
  bool active() const { return stream != -2 || !name.empty() || iteration != -2; }
};

struct LatencyCutoffs {
  TimeNs runtime = 50'000, launch_delay = 100'000;
};

struct LatencyBins {
  LatencyQuantity quantity = LatencyQuantity::LaunchDelay;
  std::vector<double> edges;                 // ns, bins + 1 (log-spaced as in launch_stats)
  std::vector<std::vector<uint32_t>> pairs;  // indices into LaunchStats::pairs per bin
  uint64_t total = 0;
  uint64_t zeros = 0;  // values of exactly 0: a log axis has no 0, they are counted in the first bin
  double p50 = 0, p90 = 0, p99 = 0;          // ns, of the filtered values
  uint64_t short_kernels = 0, runtime_outliers = 0, launch_delay_outliers = 0;
  size_t max_count() const;
};

// Unfiltered with the default bin count, the bins are exactly launch_stats' histogram.
LatencyBins bin_latency(const analysis::EventTable& table, const analysis::LaunchStats& stats,
                        const std::vector<int64_t>& iteration_of_row, LatencyQuantity q,
                        const LatencyFilter& filter, const LatencyCutoffs& cutoffs, size_t bins = 30);

// Bins overlapping [lo_ns, hi_ns] as an inclusive range {first, last}; {1, 0} when none.
std::pair<size_t, size_t> bins_in_range(const LatencyBins& bins, double lo_ns, double hi_ns);
// Pair indices in bins first..last, in launch order.
std::vector<uint32_t> brushed_pairs(const LatencyBins& bins, size_t first, size_t last);

}  // namespace sl::views
