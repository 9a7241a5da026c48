// §3 Kernel breakdown: time by kernel type (with overlap labels), statistics per kernel, and
// duration distributions per kernel name.
#pragma once

#include <optional>
#include <string>

#include "core/analysis/common.h"

namespace sl::analysis {

struct KernelTypeShare {
  std::string label;  // "COMPUTATION", "COMPUTATION overlapping COMMUNICATION", ...
  TimeNs time = 0;
  double pct = 0;     // (HTA) rounded to 1 decimal
};

struct KernelStats {
  int64_t rank = 0;
  KernelType type = KernelType::Computation;
  std::string name;   // (HTA) "others" for the folded tail
  uint64_t count = 0;
  double sum = 0, min = 0, max = 0, mean = 0, std = 0;  // ns
  std::optional<double> median, p95;                     // ns; absent for HTA's "others"
};

struct KernelBreakdown {
  std::vector<KernelTypeShare> by_type;
  std::vector<KernelStats> per_kernel;       // HTA mode: with the `others` folding
  std::vector<KernelStats> per_kernel_full;  // never folded
};

struct KernelBreakdownOptions {
  double duration_ratio = 0.8;  // (HTA) fold past this quantile of the cumulative total
  size_t num_kernels = 10;      // (HTA) fold beyond this many kernels per type
};

KernelBreakdown kernel_breakdown(const EventTable& table, const KernelBreakdownOptions& options = {});

// Log-spaced histogram of the durations of one kernel name; each bin keeps its rows.
struct DurationHistogram {
  std::string name;
  std::vector<double> edges;                 // ns, bins = edges.size() - 1
  std::vector<std::vector<uint32_t>> rows;   // row indices per bin
};
std::vector<DurationHistogram> duration_distributions(const EventTable& table, size_t top_names = 20,
                                                      size_t bins = 20);

// Log-spaced bin edges covering [lo, hi] (values <= 0 go to the first bin).
std::vector<double> log_bins(double lo, double hi, size_t bins);
size_t bin_of(const std::vector<double>& edges, double value);

}  // namespace sl::analysis
