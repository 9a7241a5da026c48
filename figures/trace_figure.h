// One trace's figure by view name, as `sightline render TRACE --view V` and the Python module's
// Trace.render draw it: the analyses each view reads, then its figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/store/trace_store.h"
#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

struct TraceFigureRequest {
  std::string view = "timeline";  // timeline, histogram, breakdown, idle, roofline, memory, critical-path
  TimeNs start = 0, end = 0;      // timeline: the range since the trace start (end 0: all of it)
  std::string tracks;             // timeline: rows whose label contains or matches this
  std::string title;
  int max_depth = -1;  // timeline: -1 every depth
  size_t top = 8;      // critical-path: ops and GPU waits listed
  std::optional<int64_t> instance;        // critical-path: the annotation instance
  std::optional<std::string> annotation;  // critical-path: unset = ProfilerStep, else the whole trace
};

// Whether `view` is one trace_figure draws.
bool is_trace_view(std::string_view view);
// Builds the figure into `scene`; false with `error` when it cannot be drawn. `details` is what
// the CLI adds to its "wrote" line, " (N rows, ...)" ("" for views with nothing to add).
bool trace_figure(const TraceStore& store, const TraceFigureRequest& request, const Style& style, Scene& scene,
                  std::string& details, std::string& error);

struct TimelineFigureStats;
// "N rows, N slices, ..." of a drawn timeline, as the CLI reports it (render and --view diff).
std::string timeline_rows_report(const TimelineFigureStats& stats, int max_depth);

}  // namespace sl::fig
