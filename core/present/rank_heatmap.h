// The rank heatmaps of a job or a fleet (issue 38, "The fleet in the GUI"), GUI-free so that the
// job tab and `render --view heatmap` draw the same cells: ranks × steps of iteration time
// (ProfilerStep#N lengths), ranks × collective instances of each rank's wait in them, and ranks ×
// steps of the wait in collectives summed per step.
//
// The matrix keeps every cell (ranks × columns, what the client holds anyway for the
// collectives); drawing goes through bin_heatmap, which folds rows (and columns) into at most as
// many bands as there are pixels, each band showing its worst (largest) cell, so a frame's work
// and a figure's element count are bounded by pixels, never by the rank count.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/job_overview.h"
#include "core/present/palette.h"

namespace sl::present {

constexpr TimeNs kNoCell = -1;  // the rank has no such step, or missed the collective

enum class HeatmapKind : uint8_t { StepTime, CollectiveWait, StepWaits };
// "steps", "waits", "step-waits" (the GUI's `heatmap` command, `render --heatmap`).
const char* heatmap_kind_name(HeatmapKind kind);
bool heatmap_kind_named(std::string_view name, HeatmapKind& kind);

struct HeatmapMatrix {
  HeatmapKind kind = HeatmapKind::StepTime;
  std::vector<int64_t> ranks;  // row r's rank (the overview's loaded ranks, by rank)
  std::vector<int64_t> nodes;  // row r's node, -1 where unknown
  // StepTime, StepWaits: column c is ProfilerStep index c; CollectiveWait: index into the overview's
  // collectives.instances (in their order, by first arrival).
  size_t columns = 0;
  std::vector<TimeNs> cells;  // rows × columns, row-major; kNoCell where absent
  TimeNs min_value = 0, max_value = 0;  // over present cells (both 0 when none)

  size_t rows() const { return ranks.size(); }
  TimeNs at(size_t row, size_t column) const { return cells[row * columns + column]; }
};

// `node_of_rank`: the node of each rank when known (a fleet's nodes table), else empty.
HeatmapMatrix step_time_heatmap(const analysis::JobOverview& overview, const std::map<int64_t, int64_t>& node_of_rank = {});
HeatmapMatrix collective_wait_heatmap(const analysis::JobOverview& overview,
                                      const std::map<int64_t, int64_t>& node_of_rank = {});

// Each rank's wait in collectives summed per step: an arrival belongs to the step whose span
// [start, start + length) on the rank's own clock holds its CPU call's start (the kernel's start
// for a rank without CPU calls); arrivals outside every step count nowhere. A rank's steps without
// any wait read 0; a rank without iteration starts (a format-1 fleet summary) has no cells.
HeatmapMatrix step_wait_heatmap(const analysis::JobOverview& overview, const std::map<int64_t, int64_t>& node_of_rank = {});
HeatmapMatrix heatmap_of(HeatmapKind kind, const analysis::JobOverview& overview, const std::map<int64_t, int64_t>& node_of_rank = {});

// A column's label: "step 3", or "AllReduce #0" (the instance's name and number).
std::string heatmap_column_label(const HeatmapMatrix& m, const analysis::JobOverview& overview, size_t column);

enum class RowOrder : uint8_t { Rank, Node, Slowness };
// "rank", "node", "slowness"; Rank for anything else is the caller's to refuse.
const char* row_order_name(RowOrder order);
bool row_order_named(std::string_view name, RowOrder& order);

// Matrix rows in display order: by rank; by node then rank (unknown nodes last); by slowness,
// the largest row total (sum of present cells) first, ties by rank.
std::vector<size_t> order_rows(const HeatmapMatrix& m, RowOrder order);

// Consecutive ranges of `count` items folded into at most `max_bands` bands of near-equal size.
struct Band {
  size_t first = 0, last = 0;  // [first, last)
};
std::vector<Band> fold_bands(size_t count, size_t max_bands);

// The matrix as drawn: bands of ordered rows × bands of columns, each cell the band's largest
// value, with the matrix cell it came from (for a click: that rank and that step/instance).
struct HeatmapBands {
  std::vector<size_t> order;       // matrix rows in display order
  std::vector<Band> rows, columns; // rows index `order`, columns index matrix columns
  std::vector<TimeNs> cells;       // rows.size() × columns.size(), kNoCell where the band has none
  std::vector<uint32_t> source_row, source_column;  // per cell: the matrix cell of the value

  TimeNs at(size_t band_row, size_t band_column) const { return cells[band_row * columns.size() + band_column]; }
  // The rank a band row shows: its only rank, or for a band of several the first in order.
  int64_t band_rank(const HeatmapMatrix& m, size_t band_row) const { return m.ranks[order[rows[band_row].first]]; }
};
HeatmapBands bin_heatmap(const HeatmapMatrix& m, std::vector<size_t> order, size_t max_rows, size_t max_columns);

// Where a value falls on the colour scale, 0 (min_value) to 1 (max_value).
float heatmap_fraction(const HeatmapMatrix& m, TimeNs value);
// The sequential scale from light (short) to dark red (long), colour-blind safe.
Rgb heatmap_rgb(float fraction);
// The scale in `kHeatLevels` steps, so that neighbouring cells of one step draw as one
// rectangle (the GUI and the figures alike): a value's step, -1 for an absent cell, and its colour
// (grey for -1).
constexpr int kHeatLevels = 32;
int heatmap_level(const HeatmapMatrix& m, TimeNs value);
Rgb heatmap_level_rgb(int level);

}  // namespace sl::present
