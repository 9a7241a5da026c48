// The timeline's rows: the value types the view and its rows share (sources, slices, the time
// mapping, the owner's CustomRow), the view's per-source state, and one class per built-in row
// kind (source header, process header, lane, counter, "N more levels"), drawn in
// timeline_rows.cpp.
//
// Row kinds are small value classes held in a std::variant (TimelineRow) and dispatched with
// std::visit, not heap objects behind a virtual base: the view lays its rows out every frame
// (thousands of lanes when a deep trace is unfolded), and a vector of variants costs no
// allocation per row. Each class owns its height, its drawing, its hover (tooltips) and its
// clicks, and works through a RowContext (the frame's mapping, draw list, columns and the
// sources' state) instead of the view's internals.
#pragma once

#include <imgui.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/names/track_names.h"
#include "core/present/range_min_max.h"
#include "core/present/sampled_keys.h"
#include "core/store/huge_pages.h"
#include "core/store/trace_store.h"
#include "views/style.h"

namespace sl::views {

// One idle gap on a GPU track, coloured by its cause (sl::analysis::IdleCause).
struct IdleGapMark {
  uint32_t track;
  TimeNs start, end;
  int cause;
  uint32_t host_track = kNone;  // CPU thread whose activity the hover explains (IdleGap::host_track)
  bool host_inferred = false;   // no launch link: host_track launches most of the stream's work
  TimeNs host_end = 0;          // end of §2b's host window W = [start, host_end) (IdleGap::host_end)
};

struct TimelineStats {
  uint32_t rows_drawn = 0, slices_drawn = 0, folded_blocks = 0, gaps_drawn = 0, counter_columns = 0;
  uint32_t draw_commands = 0, draw_vertices = 0;
  uint32_t path_outlined = 0, path_links_drawn = 0;  // the path overlay, last frame
  uint32_t flow_links_drawn = 0;                      // the selection's launch and flow arrows, last frame
};

// A path drawn over the rows (the critical path): its slices outlined, its links between slices
// as arrows in their kind's colour, every other slice dimmed. Empty slices = no overlay.
struct PathOverlay {
  struct Link {
    SliceRef from, to;
    TimeNs from_ts = 0, to_ts = 0;
    ImU32 color = 0;
  };
  std::vector<SliceRef> slices;
  std::vector<Link> links;
};

// One store drawn by a timeline. The view has one clock; a source's times sit on it shifted:
// store clock + shift = view clock (a job's rank on the job clock, the diff's run B moved so its
// compared iteration starts with A's).
struct TimelineSource {
  const TraceStore* store = nullptr;
  TimeNs shift = 0;
  // A header row above the source's rows ("" = none, as in a single-trace tab): click folds the
  // source, and a closable one shows a close box (the owner polls take_close_request()).
  std::string label;
  ImU32 band = 0;  // the header's tint; 0 = the theme's header colour
  bool closable = false;
  // Colours slices by something the timeline does not know (the diff tints by relative change):
  // consulted first; nullopt falls back to color_mode.
  std::function<std::optional<ImU32>(SliceRef)> color_override;
};

// A slice of one source.
struct SourceSlice {
  uint32_t source = kNone;
  SliceRef ref;
  bool valid() const { return source != kNone && ref.valid(); }
  bool operator==(const SourceSlice& o) const { return source == o.source && ref == o.ref; }
  bool operator!=(const SourceSlice& o) const { return !(*this == o); }
};

// A rectangle in screen pixels.
struct TimelineRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

// The view clock → screen x mapping every row of one timeline shares, for a frame.
struct TimeMapping {
  double t0 = 0, t1 = 1, ns_per_px = 1;
  float x0 = 0, x1 = 1;  // the slice area
  float x_of(double t) const { return x0 + float((t - t0) / ns_per_px); }
  double t_of(float x) const { return t0 + double(x - x0) * ns_per_px; }
};

// A row the timeline's owner supplies (the job's rank-overview rows): drawn pinned above the
// sources' rows, on the same axis, its label in the header column. The timeline pans and zooms
// over it as over its own rows and hands it hovers and clicks (a click is a press and release
// without a drag).
class CustomRow {
public:
  virtual ~CustomRow() = default;
  virtual float height() const = 0;
  virtual void draw(ImDrawList* dl, const TimelineRect& header, const TimelineRect& canvas, const TimeMapping& map) = 0;
  virtual void hover(ImVec2 mouse, const TimelineRect& canvas, const TimeMapping& map) = 0;  // may show a tooltip
  virtual void click(ImVec2 mouse, const TimelineRect& canvas, const TimeMapping& map) = 0;
};

// Everything a timeline keeps per source, indexed by its store's track / process numbers.
struct TimelineSourceState {
  // Per track, its visual rows as folding reads them. A zoomed-out frame folds rows of millions
  // of slices into a few hundred blocks each: every block searches for its end, then reads the
  // end of its last slice and the busy time inside it. Reading those from the store's columns
  // through `rows` cost ~4 cold pages per block (rows, start, dur, busy prefix); here each row's
  // starts and summed durations sit side by side, so a block reads one stretch of memory (plus
  // the sampled starts, which stay cached), and the store is read only for slices drawn whole.
  struct LaneIndex {
    struct Span {
      TimeNs start;        // the slice's start
      TimeNs busy_before;  // the durations of the row's earlier slices, summed
    };
    std::vector<std::vector<uint32_t>> rows;   // per visual row: slice rows in time order
    std::vector<std::vector<Span>> spans;      // per visual row: one per slice, then one holding the total
    std::vector<present::SampledKeys> starts;  // per visual row: every 64th start

    LaneIndex() = default;
    // `row_count` visual rows; slice i of `c` goes on row_of(i), in order.
    template <class RowOf>
    LaneIndex(const SliceColumns& c, uint32_t row_count, RowOf row_of) : rows(row_count), spans(row_count) {
      std::vector<TimeNs> busy(row_count, 0);
      std::vector<size_t> sizes(row_count, 0);
      for (uint32_t i = 0; i < c.size(); ++i) ++sizes[row_of(i)];
      for (uint32_t lane = 0; lane < row_count; ++lane) {
        rows[lane].reserve(sizes[lane]), spans[lane].reserve(sizes[lane] + 1);
        prefer_huge_pages(rows[lane].data(), rows[lane].capacity() * sizeof(uint32_t));
        prefer_huge_pages(spans[lane].data(), spans[lane].capacity() * sizeof(Span));
      }
      for (uint32_t i = 0; i < c.size(); ++i) {
        uint32_t lane = row_of(i);
        rows[lane].push_back(i);
        spans[lane].push_back({c.start[i], busy[lane]});
        busy[lane] += c.dur[i];
      }
      for (uint32_t lane = 0; lane < row_count; ++lane) {
        const auto& row = spans[lane];
        starts.emplace_back(row.size(), [&](size_t p) { return row[p].start; });
        spans[lane].push_back({row.empty() ? 0 : row.back().start + busy[lane] - row.back().busy_before, busy[lane]});
      }
    }

    // Position p of a row (an index into rows[lane]): its slice's times, and [i, j)'s busy time.
    TimeNs start(uint32_t lane, size_t p) const { return spans[lane][p].start; }
    TimeNs end(uint32_t lane, size_t p) const { return spans[lane][p].start + busy(lane, p, p + 1); }
    TimeNs busy(uint32_t lane, size_t i, size_t j) const { return spans[lane][j].busy_before - spans[lane][i].busy_before; }

    // The first position of a row, from `from` on, whose start fails `before` (a predicate on
    // times that holds up to some point).
    template <class Before>
    size_t first_starting(uint32_t lane, Before before, size_t from = 0) const {
      const std::vector<Span>& row = spans[lane];
      auto start_at = [&](size_t p) { return row[p].start; };
      return from == 0 ? starts[lane].partition_point(start_at, before) : starts[lane].partition_point_from(from, start_at, before);
    }
    // The same for the slice's end. Slices on a row never overlap (each ends by the next one's
    // start), so ends are sorted too and only the slice before the first start that fails can end
    // later: the sampled starts answer this as well.
    template <class Before>
    size_t first_ending(uint32_t lane, Before before, size_t from = 0) const {
      size_t first = first_starting(lane, before, from);
      return first > from && !before(end(lane, first - 1)) ? first - 1 : first;
    }
  };
  // A counter's indexes: extremes of any index range, and every 64th timestamp for the search
  // of each pixel column's end.
  struct CounterIndex {
    present::RangeMinMax extremes;
    present::SampledKeys times;
  };
  TimelineSource def;
  std::vector<LaneIndex> lanes;           // per track
  std::vector<uint8_t> collapsed;          // per process
  std::vector<uint8_t> pinned, hidden;     // per track
  std::vector<uint8_t> unfolded;           // per track: deep levels shown
  std::vector<std::vector<IdleGapMark>> gaps;  // per track, by start
  std::vector<present::SampledKeys> gap_ends;  // per track: every 64th gap's end
  std::vector<double> idle_share;          // per track: idle / span of its activity
  std::vector<uint32_t> gaps_drawn;        // per track, last frame
  std::vector<float> track_y;              // per track: screen y of its first lane, last frame
  std::vector<SliceRef> highlights;        // by start
  PathOverlay path;                        // links by min(from_ts, to_ts)
  std::vector<std::vector<uint32_t>> path_rows;  // per track: path slice rows, by start
  std::vector<TimeNs> path_max_dur;        // per track: longest path slice
  TimeNs path_max_span = 0;                // longest link
  TimeNs data_start = 0, data_end = 0;     // store clock
  bool folded_away = false;                // the source's header folds all its rows
  float screen_y = NAN;                    // its header (first row) last frame, where a sticky one was drawn
  std::vector<CounterIndex> counters;      // per counter, built with the view (rebuilt if a series changed)
  mutable std::vector<std::vector<uint32_t>> groups_;
  mutable size_t groups_tracks_ = SIZE_MAX;
  const TraceStore& store() const { return *def.store; }
  // Per process, the rows its group shows (display_groups: a CPU thread filed under a GPU's pid
  // joins the host's threads); rebuilt when the store's tracks change (live capture adds some).
  const std::vector<std::vector<uint32_t>>& groups() const {
    if (groups_tracks_ != store().tracks.size() || groups_.size() != store().processes.size())
      groups_ = display_groups(store()), groups_tracks_ = store().tracks.size();
    return groups_;
  }
  uint32_t group_of(uint32_t track) const {  // the process whose group shows `track`
    const auto& g = groups();
    for (uint32_t p = 0; p < g.size(); ++p)
      if (std::find(g[p].begin(), g[p].end(), track) != g[p].end()) return p;
    return store().tracks[track].process;
  }
  double view(TimeNs t) const { return double(t + def.shift); }  // store clock → view clock
};

// What the rows found under the mouse or were asked for, for the view to act on.
struct RowHits {
  SourceSlice hovered;  // this frame
  bool fold_hovered = false;  // this frame: a folded block is under the mouse (a click zooms to it)
  struct FoldHit {
    TimeNs start, end;  // view clock
    uint32_t count;
  } fold{};
  uint32_t menu_source = kNone, menu_track = kNone;  // the track whose menu a right-click opened
  uint32_t close_request = kNone;  // a source whose close box was clicked
  // The hovered idle gap's explanation, computed once when the hovered gap changes (not per frame).
  struct GapHover {
    uint32_t source = kNone, track = kNone;
    TimeNs start = 0;
    std::string text;
  } gap_hover;
};

// One frame of the view, as its rows see it: where to draw (the header column from header_x,
// the slice area map.x0..map.x1), how, and where to report.
struct RowContext {
  ImDrawList* dl = nullptr;
  TimeMapping map;
  float header_x = 0, header_width = 0, lane_height = 0;
  Theme theme = Theme::Light;
  ColorMode color_mode = ColorMode::ByName;
  bool show_idle = true;
  std::vector<TimelineSourceState>& sources;
  SourceSlice selected;
  RowHits& hits;
  TimelineStats& stats;
  // The track whose header a lane drew last (the first lane of a track on screen draws it).
  uint32_t header_source = kNone, header_track = kNone;
  float header_y = NAN;
  bool light() const { return theme == Theme::Light; }
};

// Where a laid-out row sits: its source, its top in the rows' content (0 = the first row) and
// its height. Each kind's constructor sets the height from the frame's lane height. Nothing is
// virtual: std::visit calls each kind's own methods, and a kind without hover, click or
// laid_out keeps these no-ops.
struct RowBase {
  uint32_t source = 0;
  float y = 0, height = 0;
  void laid_out(RowContext&, float /*screen_y*/) const {}  // every row, on screen or not
  void hover(RowContext&, float /*screen_y*/) const {}
  void click(RowContext&, float /*screen_y*/) const {}
};

// A source's header across the whole width: its label in its band colour; a click folds or
// unfolds the source, and a closable source has a close box at the right.
class SourceHeaderRow : public RowBase {
public:
  SourceHeaderRow(uint32_t source, float y, float lane_height) : RowBase{source, y, lane_height + 6} {}
  void draw(RowContext& ctx, float y) const;
  void hover(RowContext& ctx, float y) const;
  void click(RowContext& ctx, float y) const;

private:
  bool over_close(const RowContext& ctx, float y) const;
};

// A process group's header (process kNone: the pinned tracks' header); a click collapses or
// expands the group, a right-click shows its hidden tracks again.
class ProcessHeaderRow : public RowBase {
public:
  ProcessHeaderRow(uint32_t source, uint32_t process, float y, float lane_height)
      : RowBase{source, y, lane_height + 2}, process(process) {}
  void draw(RowContext& ctx, float y) const;
  void click(RowContext& ctx, float y) const;
  uint32_t process;

private:
  size_t hidden_tracks(const RowContext& ctx) const;
};

// One lane (visual row) of a track's slices, folded to pixels. The first lane of a track on
// screen also draws the track's header and, under a GPU stream, its idle gaps.
class LaneRow : public RowBase {
public:
  LaneRow(uint32_t source, uint32_t track, uint32_t lane, float y, float lane_height)
      : RowBase{source, y, lane_height}, track(track), lane(lane) {}
  void laid_out(RowContext& ctx, float y) const;
  void draw(RowContext& ctx, float y) const;
  void hover(RowContext& ctx, float y) const;
  void click(RowContext& ctx, float y) const;
  uint32_t track, lane;

private:
  bool draws_header(const RowContext& ctx, float y) const;
  bool over_header(const RowContext& ctx, float y) const;
  void draw_header(RowContext& ctx, float y) const;
  void draw_gaps(RowContext& ctx, float y, float height) const;
  void draw_slices(RowContext& ctx, float y) const;
  void draw_instant_ticks(RowContext& ctx, float y) const;
  void draw_outlines(RowContext& ctx, float y) const;
  void outline_path(RowContext& ctx, float y) const;
};

// A counter as a step chart with min/max per pixel column.
class CounterRow : public RowBase {
public:
  CounterRow(uint32_t source, uint32_t counter, float y, float lane_height)
      : RowBase{source, y, lane_height * 2.5f}, counter(counter) {}
  void draw(RowContext& ctx, float y) const;
  uint32_t counter;

  // The series' indexes, current: built with the view, again only if the series changed since.
  static const TimelineSourceState::CounterIndex& index(TimelineSourceState& src, uint32_t counter);
};

// The fold of a deep track: "▸ N more levels" across the row; a click unfolds it.
class MoreLevelsRow : public RowBase {
public:
  MoreLevelsRow(uint32_t source, uint32_t track, uint32_t levels, float y, float lane_height)
      : RowBase{source, y, lane_height}, track(track), levels(levels) {}
  void draw(RowContext& ctx, float y) const;
  void click(RowContext& ctx, float y) const;
  uint32_t track, levels;  // levels: how many the fold hides
};

// A laid-out row of the sources' part of the view.
using TimelineRow = std::variant<SourceHeaderRow, ProcessHeaderRow, LaneRow, CounterRow, MoreLevelsRow>;
inline const RowBase& row_base(const TimelineRow& row) {
  return std::visit([](const auto& r) -> const RowBase& { return r; }, row);
}

// The owner's CustomRow in the pinned strip above the sources' rows, at screen y: its header and
// slice area from the context's columns. Laid out apart from TimelineRow (the strip does not
// scroll, and a click there is a press and a release on the same row, tracked by the view).
class CustomRowSlot {
public:
  CustomRowSlot(CustomRow* row, float y) : row_(row), y_(y) {}
  float height() const { return row_->height(); }
  TimelineRect header(const RowContext& ctx) const { return {ctx.header_x, y_, ctx.header_x + ctx.header_width, y_ + height()}; }
  TimelineRect canvas(const RowContext& ctx) const { return {ctx.map.x0, y_, ctx.map.x1, y_ + height()}; }
  bool contains(const RowContext& ctx, ImVec2 p) const { return p.y >= y_ && p.y < y_ + height() && p.x >= ctx.header_x && p.x < ctx.map.x1; }
  void draw(RowContext& ctx) const { row_->draw(ctx.dl, header(ctx), canvas(ctx), ctx.map); }
  void hover(RowContext& ctx, ImVec2 mouse) const { row_->hover(mouse, canvas(ctx), ctx.map); }
  void click(RowContext& ctx, ImVec2 mouse) const { row_->click(mouse, canvas(ctx), ctx.map); }

private:
  CustomRow* row_;
  float y_;
};

}  // namespace sl::views
