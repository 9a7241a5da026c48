// The timeline as a figure: any time range and any subset of rows, slices nested by depth, the
// screen's level-of-detail folding, idle-cause overlay on GPU streams, time axis, legend, title.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/idle_time.h"
#include "core/store/trace_store.h"
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
  // Depth limit: slices deeper than this on CPU and async rows (0 = top level) are not drawn; they
  // are counted (stats.depth_cut) and a note under the axis says so. < 0: every depth.
  int max_depth = -1;
  // Deep stacks folded as on screen (core/present/stack_fold.h): a CPU or async row of 8 levels or
  // more shows its first 4 and a "▸ N more levels" row; the slices below are counted
  // (stats.levels_folded) and a note says so. `render` folds unless --tracks or --max-depth is given.
  bool fold_deep_stacks = false;
  // The screen's own fold state (the GUI's export: a row the user unfolded is drawn whole, a folded
  // one shows its first 4 levels); when set it decides instead of fold_deep_stacks.
  std::function<bool(uint32_t track)> folded_track;
  // For figures composed of several timelines (the diff figure): a further row test besides
  // `tracks`, and slice colours that replace the kernel-type / name colours (nullopt: the usual).
  std::function<bool(uint32_t track)> keep_track;
  std::function<std::optional<Color>(SliceRef)> slice_color;
};

struct TimelineFigureStats {
  size_t tracks = 0, lanes = 0, slices = 0, folded = 0, gaps = 0, labels = 0, elements = 0;
  float fold_px = kFoldPx;  // widened past kFoldPx only when the budget demands it
  bool truncated = false;   // the budget was still exceeded at the widest fold: rows were cut
  size_t depth_cut = 0;     // slices in the range below options.max_depth, not drawn
  size_t levels_folded = 0; // slices under a deep stack's "N more levels" row, not drawn
};

// `idle` may be null (no overlay). False with `error` set when no row matches or the range is empty.
bool timeline_figure(const TraceStore& store, const analysis::IdleCauses* idle, const Style& style,
                     const TimelineFigureOptions& options, Scene& scene, TimelineFigureStats& stats, std::string& error);

class KeyTable;

// The rows of one trace in [options.start, options.end) on a plot area the caller places, so that
// several runs can share one time axis (the diff figure). The same drawing as timeline_figure:
// process headers, row labels, nested slices, folding; no axis, title or legend.
class TimelineBand {
public:
  // Long or ambiguous slice labels get keys from `keys`, shared with the rest of the figure.
  TimelineBand(const TraceStore& store, const Style& style, const TimelineFigureOptions& options, KeyTable& keys);
  ~TimelineBand();
  bool select(std::string& error);  // false with `error` when no row has slices in the range
  float label_width() const;        // the label column these rows want
  float height() const;
  // Draws from `y` with the plot between x0 and x1, in at most `budget` elements (folding widens).
  void draw(Scene& scene, float x0, float x1, float y, size_t budget, TimelineFigureStats& stats);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A time axis at y_axis over the plot [x0, x1] for times t0..t1 (ns, as labelled), with
// gridlines up to y_top and `caption` under the tick labels.
void emit_time_axis(Scene& scene, const Style& style, double t0, double t1, float x0, float x1, float y_top, float y_axis,
                    const std::string& caption);

// The figure's note for a depth limit: "stacks cut below depth N: K slices not drawn".
std::string depth_note(int max_depth, size_t cut);

// The figure's note for folded deep stacks: "deep stacks folded to 4 levels: K slices not drawn …".
std::string fold_note(size_t folded);

// Display labels, as the GUI names rows.
std::string process_label(const TraceStore& store, uint32_t process);
std::string track_label(const TraceStore& store, uint32_t track);

// Shortens `text` with "…" until it fits `width` px at `size`; empty when not even one letter fits.
std::string fit_text(const std::string& text, float width, float size, bool bold = false);
// Shortens `text` in the middle ("cutlass::Kernel2<cutl…align4>"), keeping its start and its end,
// where names that share a function name differ (the short-name rule's template arguments).
std::string fit_text_middle(const std::string& text, float width, float size, bool bold = false);
// `text` on at most `max_lines` lines of `width`, broken at spaces; the last line is cut with "…".
std::vector<std::string> wrap_text(const std::string& text, float width, float size, size_t max_lines, bool bold = false);

}  // namespace sl::fig
