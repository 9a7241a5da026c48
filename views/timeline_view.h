// The zoomable CPU/GPU timeline over rows of one or more stores (sources): per source, process
// groups of thread and stream rows, counters, async tracks; above them rows the owner supplies
// (CustomRow: the job's rank overview). LOD folding so per-frame work depends on pixels, not on
// trace size.
#pragma once

#include <imgui.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/present/range_min_max.h"
#include "core/trace_store.h"
#include "views/style.h"

namespace sl::views {

// One idle gap on a GPU track, coloured by its cause (sl::analysis::IdleCause).
struct IdleGapMark {
  uint32_t track;
  TimeNs start, end;
  int cause;
  uint32_t host_track = kNone;  // CPU thread whose activity the hover explains (IdleGap::host_track)
  bool host_inferred = false;   // no launch link: host_track launches most of the stream's work
};

// The idle-gap hover text: length, cause and why, then what the gap's launching thread ran
// meanwhile (top ops by self time in the gap, untraced time). No ImGui: tested headless.
std::string idle_gap_explanation(const TraceStore& store, const IdleGapMark& gap);

// One entry of the rows in display order (pinned tracks first, then process groups), without
// geometry: what `layout_rows` lays out and what an export of the screen draws.
struct DisplayRow {
  enum Kind { PinnedHeader, ProcessHeader, Track, Counter, SourceHeader } kind;
  uint32_t process = kNone, track = kNone, counter = kNone;
  uint32_t source = 0;  // which of the view's sources (SourceHeader: only when it has a label)
};

struct TimelineStats {
  uint32_t rows_drawn = 0, slices_drawn = 0, folded_blocks = 0, gaps_drawn = 0, counter_columns = 0;
  uint32_t draw_commands = 0, draw_vertices = 0;
  uint32_t path_outlined = 0, path_links_drawn = 0;  // the path overlay, last frame
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

// What the user made of a view, kept across a store swap (live capture snapshots): tracks are
// named by a key stable across rebuilds (track_key), not by their index.
struct TimelineViewState {
  double t0 = 0, t1 = 0;
  bool following = false;
  TimeNs range_a = 0, range_b = 0;
  std::string selected_track;  // "" = nothing selected
  TimeNs selected_start = 0;
  std::string selected_name;
  std::vector<std::pair<std::string, uint8_t>> rows;  // track key → bit 0 pinned, bit 1 hidden
  std::vector<std::pair<std::string, uint8_t>> processes;  // process key → collapsed
};

// A key naming a track across stores built from the same data (process, kind, tid, device/stream).
std::string track_key(const TraceStore& store, uint32_t track);

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

// The timeline: one ruler, one overview strip, one time axis (the view clock) and one vertical
// scroll over rows of any number of sources (each store with its own per-track state: lanes,
// pinned, hidden, folded, idle gaps, highlights, path overlay) below the owner's custom rows.
// The single-trace tab is one source; the diff view two (A, then B shifted); a job tab the rank
// overview as custom rows plus one source per expanded rank. Calls that name a track or a
// SliceRef without a source mean source 0, so single-trace callers read as before.
class TimelineView {
public:
  TimelineView() = default;  // no source yet (a job before any rank is expanded)
  explicit TimelineView(const TraceStore& store);

  // --- sources: indices are positions, in drawing order ---
  // Inserts at `at` (default: last); returns its index. Later sources move down by one.
  uint32_t add_source(TimelineSource source, uint32_t at = kNone);
  void remove_source(uint32_t source);  // later sources move up by one
  size_t source_count() const { return sources_.size(); }
  const TimelineSource& source(uint32_t i) const { return sources_[i].def; }
  void set_shift(uint32_t source, TimeNs shift) { sources_[source].def.shift = shift, ++sources_version_; }
  void set_color_override(uint32_t source, std::function<std::optional<ImU32>(SliceRef)> f) {
    sources_[source].def.color_override = std::move(f);
  }
  // The source whose close box was clicked since the last call (kNone: none).
  uint32_t take_close_request() { return std::exchange(close_request_, kNone); }
  // Rows pinned above the sources' rows, in order, for the next frames (not owned).
  void set_custom_rows(std::vector<CustomRow*> rows) { custom_rows_ = std::move(rows); }
  // Scrolls so the source's rows start near the top (next frame).
  void scroll_to_source(uint32_t source);
  // The time range "show everything" frames (view clock). By default the sources' data, joined.
  void set_data_range(TimeNs start, TimeNs end) { fixed_range_ = true, data_start_ = start, data_end_ = end; }
  std::string empty_hint;  // shown in the rows area while it has no source
  // The overview strip's GPU busy, one value in [0, 1] per column of [start, end) (the data range),
  // from the owner: a job's mean over all its ranks, expanded or not. Unset: the sources' streams.
  std::function<const std::vector<float>&(TimeNs start, TimeNs end, int columns)> overview_profile;

  // Draws ruler, overview, custom rows and rows filling `size` at the cursor of the current window.
  void draw(ImVec2 size);
  // Height of the strips above the custom rows (overview, ruler, legend) in the last frame.
  float chrome_height() const { return chrome_height_; }

  // --- navigation and selection (also driven by scripts and other views); view clock ---
  void show_all();
  void zoom_to(double t0, double t1);
  void frame(SliceRef slice) { frame(SourceSlice{0, slice}); }  // zoom around a slice, scroll its row into view
  void frame(SourceSlice slice);
  void select(SliceRef slice, bool frame_it = false) { select(SourceSlice{slice.valid() ? 0u : kNone, slice}, frame_it); }
  void select(SourceSlice slice, bool frame_it = false);
  SliceRef selected() const { return selected_.source == 0 ? selected_.ref : SliceRef{}; }  // source 0's
  SourceSlice selection() const { return selected_; }
  void set_highlights(std::vector<SliceRef> slices) { set_highlights(0, std::move(slices)); }
  void set_highlights(uint32_t source, std::vector<SliceRef> slices);
  const std::vector<SliceRef>& highlights() const { return highlights(0); }
  const std::vector<SliceRef>& highlights(uint32_t source) const;
  void set_idle_gaps(std::vector<IdleGapMark> gaps) { set_idle_gaps(0, std::move(gaps)); }
  void set_idle_gaps(uint32_t source, std::vector<IdleGapMark> gaps);
  void set_path(PathOverlay path);  // over source 0
  bool path_shown() const { return !sources_.empty() && !sources_[0].path.slices.empty(); }
  const std::vector<SliceRef>& path_slices() const;  // sorted (track, index)
  double view_start() const { return t0_; }
  double view_end() const { return t1_; }
  std::pair<TimeNs, TimeNs> range_selection() const { return {range_a_, range_b_}; }
  void set_range(TimeNs a, TimeNs b) { range_a_ = std::min(a, b), range_b_ = std::max(a, b); }
  void clear_range() { range_a_ = range_b_ = 0; }
  // Rows: pinned tracks are drawn first, hidden ones not at all (a process header offers them back).
  void set_pinned(uint32_t track, bool pinned) { set_pinned(0, track, pinned); }
  void set_pinned(uint32_t source, uint32_t track, bool pinned);
  void set_hidden(uint32_t track, bool hidden) { set_hidden(0, track, hidden); }
  void set_hidden(uint32_t source, uint32_t track, bool hidden);
  bool hidden(uint32_t track) const;
  bool pinned(uint32_t source, uint32_t track) const { return sources_[source].pinned[track]; }
  // A process group of a source shows its header only while collapsed (its pinned tracks stay).
  bool collapsed(uint32_t source, uint32_t process) const { return sources_[source].collapsed[process]; }
  void set_collapsed(uint32_t source, uint32_t process, bool c) { sources_[source].collapsed[process] = c; }
  // Scrolls (next frame) so that every slice's lane is inside the rows area (last frame's height)
  // when they fit in it together; false, changing nothing, when they do not or one is not laid out.
  bool scroll_to_show(const std::vector<SourceSlice>& slices);
  // The rows as drawn, in order (every source), honouring pins, hidden rows, collapsed processes
  // and sources (no ImGui needed: headless exports and tests call these).
  std::vector<DisplayRow> display_order() const;
  std::vector<uint32_t> visible_tracks() const;  // source 0's Track entries of display_order()

  // Live capture: while following, the view keeps its width with its right edge at `end`
  // (call follow() each frame). Any pan or zoom (user, script, framing a slice) stops following;
  // the toolbar toggle or the End key (when follow_available) resumes it.
  bool following() const { return following_; }
  void set_following(bool on) { following_ = on; }
  void follow(TimeNs end);
  bool follow_available = false;

  TimelineViewState save_state() const;  // the view and source 0
  void restore_state(const TimelineViewState& state);  // tracks absent from state keep their defaults

  // Find: case-insensitive substring of names (or a RE2 regex) in every source; selects the first
  // match (by view time) and steps through all of them.
  size_t find(const std::string& text, bool regex = false);
  void step_match(int direction);
  size_t match_index() const { return match_cursor_; }
  size_t match_count() const { return matches_.size(); }  // every source's highlights

  ColorMode color_mode = ColorMode::ByName;
  Theme theme = Theme::Light;
  bool show_idle = true;
  bool show_flows = true;
  bool show_legend = true;  // off where a view draws its own (the diff view's header)
  const TimelineStats& stats() const { return stats_; }
  uint32_t gaps_visible_on(uint32_t track) const;  // source 0's idle gaps drawn on a track last frame

  // Deep stacks (Python with_stack traces nest twenty frames and more; 2 × kFoldedLevels levels
  // or more) start folded to kFoldedLevels levels under a "N more levels" row; a click on it, or
  // the track menu, unfolds.
  static constexpr uint32_t kFoldedLevels = 4;
  bool folded(uint32_t track) const { return folded(0, track); }
  bool folded(uint32_t source, uint32_t track) const;
  void set_folded(uint32_t track, bool folded) { set_folded(0, track, folded); }
  void set_folded(uint32_t source, uint32_t track, bool folded);
  // The time the data covers (view clock): first slice start to last slice end over the sources.
  // Metadata (Kineto's "Record Window End" instant) can sit far beyond; opening and "show
  // everything" frame this range.
  std::pair<TimeNs, TimeNs> data_range() const { return {data_start_, data_end_}; }
  // Last frame's layout in screen pixels, for tests (state JSON): where the legend strip, the
  // custom rows and the slice area are, each track's first lane and each source's first row (NaN
  // when not laid out).
  using Rect = TimelineRect;
  Rect legend_rect() const { return legend_rect_; }  // zero size when no legend is drawn
  Rect rows_rect() const { return rows_rect_; }
  Rect custom_rows_rect() const { return custom_rect_; }
  float track_screen_y(uint32_t track) const { return track_screen_y(0, track); }
  float track_screen_y(uint32_t source, uint32_t track) const;
  float source_screen_y(uint32_t source) const { return source < sources_.size() ? sources_[source].screen_y : NAN; }

private:
  // Row kinds of the sources' part of the layout. A tagged value rather than a class per kind:
  // rows are laid out every frame (thousands of lanes when a deep trace is unfolded), and each
  // kind's drawing is one member function below (draw_source_header, draw_header, draw_lane,
  // draw_counter, draw_more_levels). The owner's rows are the CustomRow classes above.
  struct Row {
    enum Kind { SourceHeader, ProcessHeader, Lane, Counter, MoreLevels } kind;
    uint32_t source = 0, process = kNone, track = kNone, lane_row = 0, counter = kNone;
    float y = 0, height = 0;
  };
  struct LaneIndex {
    std::vector<std::vector<uint32_t>> rows;  // per visual row: slice rows in time order
    std::vector<std::vector<TimeNs>> busy;    // per visual row: durations summed up to each slice
  };
  // Everything the view keeps per store, indexed by its track / process numbers.
  struct Source {
    TimelineSource def;
    std::vector<LaneIndex> lanes;           // per track
    std::vector<uint8_t> collapsed;          // per process
    std::vector<uint8_t> pinned, hidden;     // per track
    std::vector<uint8_t> unfolded;           // per track: deep levels shown
    std::vector<std::vector<IdleGapMark>> gaps;  // per track, by start
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
    float screen_y = NAN;                    // its first row, last frame
    std::vector<present::RangeMinMax> counter_extremes;  // per counter, built when first drawn
    const TraceStore& store() const { return *def.store; }
    double view(TimeNs t) const { return double(t + def.shift); }  // store clock → view clock
  };

  static void build_lane_index(Source& src);
  void update_data_range();
  void reindex_sources(uint32_t at, int delta);
  void rebuild_matches();
  std::vector<DisplayRow> source_order(uint32_t source) const;
  void layout_rows();
  void handle_input(ImVec2 canvas_min, ImVec2 canvas_max);
  void draw_custom_rows(ImDrawList* dl, float x, float y);
  void draw_ruler(ImDrawList* dl, ImVec2 min, ImVec2 max);
  void draw_overview(ImDrawList* dl, ImVec2 min, ImVec2 max);
  void draw_rows(ImDrawList* dl, ImVec2 min, ImVec2 max, float scroll_y);
  void draw_source_header(ImDrawList* dl, const Row& row, float x, float y);
  void draw_lane(ImDrawList* dl, const Row& row, float x0, float y, float x1);
  void draw_counter(ImDrawList* dl, const Row& row, float x0, float y, float x1);
  static const present::RangeMinMax& counter_extremes(Source& src, uint32_t counter);
  const std::vector<uint8_t>& overview_busy(int columns);
  struct OverviewKey {
    int columns = 0;
    TimeNs start = 0, end = 0;
    uint64_t sources_version = 0;
    friend bool operator==(const OverviewKey&, const OverviewKey&) = default;
  };
  OverviewKey overview_key_{-1};
  std::vector<uint8_t> overview_busy_;  // per overview column: GPU work there
  uint64_t sources_version_ = 0;        // bumped whenever a source is added, removed or shifted
  void draw_gaps(ImDrawList* dl, uint32_t source, uint32_t track, float x0, float y, float x1, float height);
  void draw_flows(ImDrawList* dl, float x0, float x1);
  void draw_path_links(ImDrawList* dl, uint32_t source, float x0, float x1);
  void outline_path(ImDrawList* dl, const Row& row, float x0, float y, float x1);
  bool on_path(const Source& src, SliceRef s) const;
  ImU32 base_slice_color(const Source& src, SliceRef s) const;
  ImU32 slice_color(const Source& src, SliceRef s) const;
  void draw_header(ImDrawList* dl, const Row& row, float x, float y, float width);
  void draw_track_menu();
  float draw_legend(ImDrawList* dl, ImVec2 min, float width);
  void draw_more_levels(ImDrawList* dl, const Row& row, float x, float y);
  void add_track_rows(uint32_t source, uint32_t track, float& y);
  void slice_tooltip(const Source& src, SliceRef s);
  void gap_tooltip(uint32_t source, const IdleGapMark& gap);
  float x_of(double t) const { return canvas_x0_ + float((t - t0_) / ns_per_px_); }
  double t_of(float x) const { return t0_ + double(x - canvas_x0_) * ns_per_px_; }
  TimeMapping mapping() const { return {t0_, t1_, ns_per_px_, canvas_x0_, canvas_x1_}; }
  float row_y_of(uint32_t source, SliceRef s) const;  // screen y of a slice's lane, or NaN when not laid out

  std::vector<Source> sources_;
  std::vector<CustomRow*> custom_rows_;
  std::vector<Row> rows_;
  bool fixed_range_ = false;
  TimeNs data_start_ = 0, data_end_ = 0;
  Rect legend_rect_, rows_rect_, custom_rect_;
  float chrome_height_ = 0;
  uint32_t menu_source_ = kNone, menu_track_ = kNone;
  uint32_t close_request_ = kNone;
  double t0_ = 0, t1_ = 1, ns_per_px_ = 1;
  float canvas_x0_ = 0, canvas_x1_ = 1, lane_height_ = 18, header_width_ = 240;
  float content_height_ = 0;
  SourceSlice selected_, hovered_;
  std::vector<SourceSlice> matches_;  // every source's highlights by view time: what step_match walks
  size_t match_cursor_ = 0;
  bool dragging_ = false, range_dragging_ = false, following_ = false;
  size_t custom_pressed_ = SIZE_MAX;  // the custom row a press started on (a release there clicks it)
  ImVec2 drag_origin_{};
  TimeNs range_a_ = 0, range_b_ = 0;
  float pending_scroll_y_ = -1;
  uint32_t pending_scroll_source_ = kNone;
  struct FoldHit {
    TimeNs start, end;  // view clock
    uint32_t count;
  } fold_hover_{};
  bool fold_hovered_ = false;
  // The hovered idle gap's explanation, computed once when the hovered gap changes (not per frame).
  struct GapHover {
    uint32_t source = kNone, track = kNone;
    TimeNs start = 0;
    std::string text;
  } gap_hover_;
  TimelineStats stats_;
};

}  // namespace sl::views
