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
  // (Sightline) CUDA/HIP graph replay: -1 = launched on its own; 0 = first activity (by start) of
  // a graph launch, k = the k-th after it. From k >= 1 on, delay and to_start measure from the
  // previous activity of the same graph launch (kernel → kernel inside the graph), since the
  // device, not the host, issued them; the one launch call counts once (on position 0).
  int32_t graph_position = -1;
};

// A launch call that replays a captured graph: one CPU call for many GPU activities.
bool is_graph_launch_name(std::string_view name);  // cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch, ...
// Per table row: for GPU rows launched by a graph launch call (Sightline mode), the position of
// the activity among that launch's activities in start order; -1 elsewhere (and in HTA mode).
std::vector<int32_t> graph_positions(const EventTable& table);

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
  // short kernels and runtime outliers count launch calls: a graph launch once (position 0).
  uint64_t short_kernels = 0, runtime_outliers = 0, launch_delay_outliers = 0;
  TimeNs runtime_sum = 0, gpu_sum = 0, delay_sum = 0;
  double delay_mean = 0, delay_median = 0, to_start_median = 0;
  TimeNs delay_max = 0;
  // Graph launches (Sightline mode): their calls, the activities they replayed, the calls' time
  // (counted once each) and the medians of both latencies (launch → first, activity → activity).
  uint64_t graph_launches = 0, graph_activities = 0;
  TimeNs graph_runtime_sum = 0;
  double graph_first_delay_median = 0, graph_inner_delay_median = 0;
  std::vector<Histogram> histograms;
};

LaunchStats launch_stats(const EventTable& table, const LaunchStatsOptions& o = {});

}  // namespace sl::analysis
