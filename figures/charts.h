// The analysis charts as figures: launch-latency histogram, GPU time and kernel breakdown, idle
// causes per stream. Inputs are the core analyses' plain results; layouts are pure.
#pragma once

#include <string>

#include "core/analysis/idle_time.h"
#include "core/analysis/kernel_breakdown.h"
#include "core/analysis/launch_stats.h"
#include "core/analysis/temporal_breakdown.h"
#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

// Launch → kernel start times on log-spaced bins, with the median marked. False with `error`
// when the trace has no launch/kernel pairs.
bool histogram_figure(const analysis::LaunchStats& stats, const Style& style, const std::string& title, Scene& scene,
                      std::string& error);

// GPU time split (compute / non-compute / idle) and the kernels that take the most time, by type.
bool breakdown_figure(const analysis::TemporalBreakdown& temporal, const analysis::KernelBreakdown& kernels,
                      const Style& style, const std::string& title, Scene& scene, std::string& error);

// One stacked bar per GPU stream: its idle time split by cause.
bool idle_figure(const analysis::IdleCauses& causes, const Style& style, const std::string& title, Scene& scene,
                 std::string& error);

}  // namespace sl::fig
