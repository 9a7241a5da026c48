// §4 Kernel launch statistics: per launched GPU activity, the launch call's duration, the launch
// delay (queue time), launch-to-start and GPU duration; outlier counts, summary and histograms.
#pragma once

#include <string>

#include "core/analysis/common.h"

namespace sl::analysis {

struct LaunchPair {
  int64_t correlation = -1;
  uint32_t launch = 0, activity = 0;  // rows
  TimeNs runtime = 0;                 // launch call duration
  TimeNs gpu = 0;                     // activity duration
  TimeNs delay = 0;                   // max(0, activity start - launch end)
  TimeNs to_start = 0;                // activity start - launch start
};

struct Histogram {
  std::string quantity;                    // runtime, launch_delay, launch_to_start, gpu_duration
  std::vector<double> edges;               // ns
  std::vector<std::vector<uint32_t>> pairs;  // indices into LaunchStats::pairs, per bin
};

struct LaunchStatsOptions {
  TimeNs runtime_cutoff = 50'000;
  TimeNs launch_delay_cutoff = 100'000;
  size_t histogram_bins = 30;
};

struct LaunchStats {
  int64_t rank = 0;
  std::vector<LaunchPair> pairs;  // HTA: CPU rows in row order, each with its GPU rows
  uint64_t short_kernels = 0, runtime_outliers = 0, launch_delay_outliers = 0;
  TimeNs runtime_sum = 0, gpu_sum = 0, delay_sum = 0;
  double delay_mean = 0, delay_median = 0, to_start_median = 0;
  TimeNs delay_max = 0;
  std::vector<Histogram> histograms;
};

LaunchStats launch_stats(const EventTable& table, const LaunchStatsOptions& o = {});

}  // namespace sl::analysis
