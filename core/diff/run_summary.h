// One run's headline figures for the side-by-side summary of a diff: step time, temporal
// breakdown, idle causes (summed over streams), launch statistics. Computed with the analyses
// of core/analysis on the whole trace of one rank.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/idle_time.h"
#include "core/analysis/launch_stats.h"
#include "core/analysis/temporal_breakdown.h"

namespace sl::diff {

struct RunSummary {
  int64_t rank = 0;
  uint64_t iterations = 0;
  std::optional<TimeNs> step_time;        // of the aligned iteration
  std::optional<double> mean_step_time;   // ns, over every ProfilerStep
  // The steady state: every ProfilerStep but the first (warm-up: allocator, cuDNN autotuning,
  // lazy init) when there are at least 3, else all of them. The diff's headline compares these.
  std::vector<int64_t> steady_iterations;
  std::optional<double> steady_step_time;  // ns, mean over steady_iterations
  std::vector<std::string> gpus;           // distinct deviceProperties names of the GPUs in use
  analysis::TemporalBreakdown temporal;
  std::array<TimeNs, analysis::kIdleCauseCount> idle_by_cause{};  // ns, all streams
  std::array<uint64_t, analysis::kIdleCauseCount> gaps_by_cause{};
  TimeNs idle_total = 0;
  uint64_t launch_pairs = 0;
  TimeNs launch_delay_sum = 0, gpu_time_sum = 0, runtime_sum = 0;
  double launch_delay_median = 0, launch_to_start_median = 0;  // ns
  uint64_t kernels = 0;
};

// `step` is the [start, end) of the aligned iteration, if any.
RunSummary run_summary(const analysis::EventTable& table, std::optional<TimeNs> step_time);

// The steady-state iterations of a run (see RunSummary::steady_iterations), in start order.
std::vector<const Iteration*> steady_state_iterations(const TraceStore& store);
constexpr size_t kMinStepsToSkipWarmup = 3;

// "6-10", "6, 8, 9" or "none": which steps a mean is over, for people.
std::string iteration_list_text(const std::vector<int64_t>& numbers);

// Relative change of the steady-state mean step time, B vs A, in percent (nullopt without steps).
std::optional<double> steady_step_change_pct(const RunSummary& a, const RunSummary& b);

// A warning when the two runs used different GPUs (deviceProperties names), else "".
std::string gpu_mismatch(const RunSummary& a, const RunSummary& b);

}  // namespace sl::diff
