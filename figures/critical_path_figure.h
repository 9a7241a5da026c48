// The critical path of one iteration as a figure: one row per thread or stream the path touches
// with only the path's slices (nested among themselves, coloured by what bounds their time) and
// its links between slices as arrows, under them the path itself as a strip of its edges, the
// shares by category, the ops that cost the path most and the GPU waits on it with their causes.
#pragma once

#include <string>

#include "core/analysis/critical_path_contributors.h"
#include "figures/timeline_figure.h"

namespace sl::fig {

struct CriticalPathFigureOptions {
  std::string title;  // the trace's name; the figure adds the instance and the path length
  size_t top = 8;  // ops and GPU waits listed, each
  size_t max_elements = kElementBudget;
};

struct CriticalPathFigureStats {
  size_t rows = 0, slices = 0, links = 0, strip_segments = 0, ops = 0, gaps = 0;
  size_t skipped = 0;  // slices and links left out for the element budget (the narrowest first)
};

// `idle` may be null (the GPU waits then have no cause). False with `error` when the path is not
// valid (its note says why).
bool critical_path_figure(const TraceStore& store, const analysis::EventTable& table, const analysis::CriticalPath& path,
                          const analysis::IdleCauses* idle, const Style& style, const CriticalPathFigureOptions& options,
                          Scene& scene, CriticalPathFigureStats& stats, std::string& error);

}  // namespace sl::fig
