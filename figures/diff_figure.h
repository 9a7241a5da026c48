// Two runs compared, as a figure: the compared iteration of A above B's on one time axis (each
// relative to its own iteration start; GPU streams and the main CPU thread, slices coloured by
// change as in the GUI's diff tab), a bar chart of the largest own-time regressions and
// improvements, the change legend and a title "A vs B".
#pragma once

#include <string>

#include "core/diff/trace_diff.h"
#include "figures/timeline_figure.h"

namespace sl::fig {

struct DiffFigureOptions {
  // Time window relative to each run's compared-iteration start; end <= start: the longer step.
  TimeNs start = 0, end = 0;
  std::string tracks;  // further row filter (label substring or RE2 regex), as in the timeline
  std::string title;   // empty: "NAME_A vs NAME_B"
  std::string name_a = "A", name_b = "B";  // the runs' names (file names) in headers
  int max_depth = 1;   // CPU rows: the step and its top-level operators; < 0: every depth
  size_t top = 8;      // bars: at most this many regressions and as many improvements
  size_t max_elements = kElementBudget;
};

struct DiffFigureStats {
  TimelineFigureStats a, b;
  size_t bars = 0, elements = 0;
};

// Needs the aligned diff (Sightline mode): false with `error` without it, or when a run has no
// row with slices in the window.
bool diff_figure(const TraceStore& a, const TraceStore& b, const diff::TraceDiff& d, const Style& style,
                 const DiffFigureOptions& options, Scene& scene, DiffFigureStats& stats, std::string& error);

// A call path shortened from the left, whole " > " segments at a time, to fit `width` px.
std::string fit_path(const std::string& path, float width, float size);

// "+1.234 ms" / "−0.050 ms": a signed time change in milliseconds.
std::string signed_ms(TimeNs delta);

}  // namespace sl::fig
