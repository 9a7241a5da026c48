// The timeline as a figure: any time range and any subset of rows, slices nested by depth, the
// screen's level-of-detail folding, idle-cause overlay on GPU streams, time axis, legend, title.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/idle_time.h"
#include "core/trace_store.h"
#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

constexpr size_t kElementBudget = 20'000;  // shapes + texts per figure, whatever the trace size
constexpr float kFoldPx = 3.f;             // as on screen: runs narrower than this fold

struct TimelineFigureOptions {
  TimeNs start = 0, end = 0;  // end <= start: the whole trace
  std::string tracks;         // case-insensitive substring or RE2 regex over row labels; empty = all
  // Explicit rows in display order (the GUI's visible tracks); when set, `tracks` is ignored.
  // Consecutive rows of one process share its group header; rows without slices in the range
  // are left out, as `render` does.
  std::vector<uint32_t> rows;
  std::string title;
  size_t max_elements = kElementBudget;
};

struct TimelineFigureStats {
  size_t tracks = 0, lanes = 0, slices = 0, folded = 0, gaps = 0, labels = 0, elements = 0;
  float fold_px = kFoldPx;  // widened past kFoldPx only when the budget demands it
  bool truncated = false;   // the budget was still exceeded at the widest fold: rows were cut
};

// `idle` may be null (no overlay). False with `error` set when no row matches or the range is empty.
bool timeline_figure(const TraceStore& store, const analysis::IdleCauses* idle, const Style& style,
                     const TimelineFigureOptions& options, Scene& scene, TimelineFigureStats& stats, std::string& error);

// Display labels, as the GUI names rows.
std::string process_label(const TraceStore& store, uint32_t process);
std::string track_label(const TraceStore& store, uint32_t track);

// Shortens `text` with "…" until it fits `width` px at `size`; empty when not even one letter fits.
std::string fit_text(const std::string& text, float width, float size, bool bold = false);

}  // namespace sl::fig
