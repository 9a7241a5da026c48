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
#include "core/present/slice_children.h"
#include "core/present/slice_links.h"
#include "core/present/stack_fold.h"
#include "core/store/trace_store.h"
#include "views/style.h"
#include "views/timeline_rows.h"

namespace sl::views {

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
  uint32_t take_close_request() { return std::exchange(hits_.close_request, kNone); }
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
  SourceSlice hovered() const { return hits_.hovered; }  // under the mouse last frame (its tooltip)
  // The selection's launch, activity and flow links, and its children, found once per selection.
  const present::SliceLinks& selection_links();
  const present::SliceChildren& selection_children();
  void set_highlights(std::vector<SliceRef> slices) { set_highlights(0, std::move(slices)); }
  void set_highlights(uint32_t source, std::vector<SliceRef> slices);
  const std::vector<SliceRef>& highlights() const { return highlights(0); }
  const std::vector<SliceRef>& highlights(uint32_t source) const;
  void set_idle_gaps(std::vector<IdleGapMark> gaps) { set_idle_gaps(0, std::move(gaps)); }
  void set_idle_gaps(uint32_t source, std::vector<IdleGapMark> gaps);
  void set_path(PathOverlay path);  // over source 0
  bool path_shown() const { return !sources_.empty() && !sources_[0].path.slices.empty(); }
  const std::vector<SliceRef>& path_slices() const;  // sorted (track, index)
  // The screen x range of the time axis in the last frame (other views align their plots on it).
  std::pair<float, float> canvas_x() const { return {canvas_x0_, canvas_x1_}; }
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
  // CPU ms this view spent preparing its sources for drawing (lane rows, sampled starts and ends,
  // counter indexes, short names): the one-time work opening a trace pays so that no frame does.
  double prepare_ms() const { return prepare_ms_; }
  uint32_t gaps_visible_on(uint32_t track) const;  // source 0's idle gaps drawn on a track last frame

  // Deep stacks start folded to kFoldedLevels levels under a "N more levels" row (the rule of
  // core/present/stack_fold.h, which figures follow too); a click on it, or the track menu, unfolds.
  static constexpr uint32_t kFoldedLevels = present::kFoldedLevels;
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
  // Source headers stay in view (at the top while their rows do, else at the bottom edge): for a
  // few sources read side by side (the diff's two runs); a job's many ranks would fill the view.
  bool sticky_source_headers = false;
  float source_screen_y(uint32_t source) const { return source < sources_.size() ? sources_[source].screen_y : NAN; }

private:
  // The built-in row kinds are the classes of timeline_rows.h (TimelineRow), laid out by
  // layout_rows each frame; the owner's rows are the CustomRow objects above.
  using Source = TimelineSourceState;

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
  struct StickyHeader {
    size_t row;            // index into rows_ of the SourceHeaderRow
    float layout_y, y;     // its place in the content, where it is drawn (content coordinates)
    float height;
  };
  std::vector<StickyHeader> sticky_headers(float top, float bottom) const;
  RowContext row_context(ImDrawList* dl, float header_x);
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
  void draw_flows(ImDrawList* dl, float x0, float x1);
  void draw_path_links(ImDrawList* dl, uint32_t source, float x0, float x1);
  void draw_track_menu();
  float draw_legend(ImDrawList* dl, ImVec2 min, float width);
  void add_track_rows(uint32_t source, uint32_t track, float& y);
  float place_row(const TimelineRow& row) {  // appends to rows_; returns its height
    rows_.push_back(row);
    return row_base(row).height;
  }
  float x_of(double t) const { return canvas_x0_ + float((t - t0_) / ns_per_px_); }
  double t_of(float x) const { return t0_ + double(x - canvas_x0_) * ns_per_px_; }
  TimeMapping mapping() const { return {t0_, t1_, ns_per_px_, canvas_x0_, canvas_x1_}; }
  float row_y_of(uint32_t source, SliceRef s) const;  // screen y of a slice's lane, or NaN when not laid out

  std::vector<Source> sources_;
  std::vector<CustomRow*> custom_rows_;
  std::vector<TimelineRow> rows_;
  bool fixed_range_ = false;
  TimeNs data_start_ = 0, data_end_ = 0;
  Rect legend_rect_, rows_rect_, custom_rect_;
  float chrome_height_ = 0;
  double t0_ = 0, t1_ = 1, ns_per_px_ = 1;
  float canvas_x0_ = 0, canvas_x1_ = 1, lane_height_ = 18, header_width_ = 240;
  float content_height_ = 0;
  SourceSlice selected_;
  present::SliceLinks selection_links_;
  present::SliceChildren selection_children_;
  template <class Facts>
  const Facts& of_selection(Facts& facts);
  RowHits hits_;  // what the rows found under the mouse (hover, fold, menu, close box)
  std::vector<SourceSlice> matches_;  // every source's highlights by view time: what step_match walks
  size_t match_cursor_ = 0;
  bool dragging_ = false, range_dragging_ = false, following_ = false;
  size_t custom_pressed_ = SIZE_MAX;  // the custom row a press started on (a release there clicks it)
  ImVec2 drag_origin_{};
  TimeNs range_a_ = 0, range_b_ = 0;
  float pending_scroll_y_ = -1;
  uint32_t pending_scroll_source_ = kNone;
  TimelineStats stats_;
  double prepare_ms_ = 0;
};

}  // namespace sl::views
