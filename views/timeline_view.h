// The zoomable CPU/GPU timeline: process groups of thread and stream rows, counters, async
// tracks; LOD folding so per-frame work depends on pixels, not on trace size.
#pragma once

#include <imgui.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

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
  enum Kind { PinnedHeader, ProcessHeader, Track, Counter } kind;
  uint32_t process = kNone, track = kNone, counter = kNone;
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

class TimelineView {
public:
  explicit TimelineView(const TraceStore& store);

  // Draws ruler, overview and rows filling `size` at the cursor of the current window.
  void draw(ImVec2 size);

  // --- navigation and selection (also driven by scripts and other views) ---
  void show_all();
  void zoom_to(double t0, double t1);
  void frame(SliceRef slice);  // zoom around a slice and scroll its row into view
  void select(SliceRef slice, bool frame_it = false);
  SliceRef selected() const { return selected_; }
  void set_highlights(std::vector<SliceRef> slices);
  const std::vector<SliceRef>& highlights() const { return highlights_; }
  void set_idle_gaps(std::vector<IdleGapMark> gaps);
  void set_path(PathOverlay path);
  bool path_shown() const { return !path_.slices.empty(); }
  const std::vector<SliceRef>& path_slices() const { return path_.slices; }  // sorted (track, index)
  double view_start() const { return t0_; }
  double view_end() const { return t1_; }
  std::pair<TimeNs, TimeNs> range_selection() const { return {range_a_, range_b_}; }
  void set_range(TimeNs a, TimeNs b) { range_a_ = std::min(a, b), range_b_ = std::max(a, b); }
  void clear_range() { range_a_ = range_b_ = 0; }
  // Rows: pinned tracks are drawn first, hidden ones not at all (a process header offers them back).
  void set_pinned(uint32_t track, bool pinned);
  void set_hidden(uint32_t track, bool hidden);
  bool hidden(uint32_t track) const { return track < hidden_.size() && hidden_[track]; }
  // The rows as drawn, in order, honouring pins, hidden rows and collapsed processes (no ImGui
  // needed: headless exports and tests call these).
  std::vector<DisplayRow> display_order() const;
  std::vector<uint32_t> visible_tracks() const;  // the Track entries of display_order()

  // Live capture: while following, the view keeps its width with its right edge at `end`
  // (call follow() each frame). Any pan or zoom (user, script, framing a slice) stops following;
  // the toolbar toggle or the End key (when follow_available) resumes it.
  bool following() const { return following_; }
  void set_following(bool on) { following_ = on; }
  void follow(TimeNs end);
  bool follow_available = false;

  TimelineViewState save_state() const;
  void restore_state(const TimelineViewState& state);  // tracks absent from state keep their defaults

  // Find: case-insensitive substring of names (or a RE2 regex); selects the first match.
  size_t find(const std::string& text, bool regex = false);
  void step_match(int direction);
  size_t match_index() const { return match_cursor_; }

  ColorMode color_mode = ColorMode::ByName;
  Theme theme = Theme::Light;
  bool show_idle = true;
  bool show_flows = true;
  bool show_legend = true;  // off where a view draws its own (the diff view's header)
  // The ruler labels time t of this store as t + ruler_offset, ticks at round values of that
  // clock; the view itself stays on the store's clock. A job's expanded rank sets its shift onto
  // the job clock, so its ruler reads as the overview's.
  TimeNs ruler_offset = 0;
  const TimelineStats& stats() const { return stats_; }
  uint32_t gaps_visible_on(uint32_t track) const;  // idle gaps drawn on a track last frame

  // Deep stacks (Python with_stack traces nest twenty frames and more; 2 × kFoldedLevels levels
  // or more) start folded to kFoldedLevels levels under a "N more levels" row; a click on it, or
  // the track menu, unfolds.
  static constexpr uint32_t kFoldedLevels = 4;
  bool folded(uint32_t track) const;
  void set_folded(uint32_t track, bool folded);
  // The time the data covers: first slice start to last slice end. Metadata (Kineto's "Record
  // Window End" instant) can sit far beyond; opening and "show everything" frame this range.
  std::pair<TimeNs, TimeNs> data_range() const { return {data_start_, data_end_}; }
  // Last frame's layout in screen pixels, for tests (state JSON): where the legend strip and the
  // slice area are, and each track's first lane (NaN when not laid out).
  struct Rect {
    float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  };
  Rect legend_rect() const { return legend_rect_; }  // zero size when no legend is drawn
  Rect rows_rect() const { return rows_rect_; }
  float track_screen_y(uint32_t track) const { return track < track_y_.size() ? track_y_[track] : NAN; }

private:
  struct Row {
    enum Kind { ProcessHeader, Lane, Counter, MoreLevels } kind;
    uint32_t process = kNone, track = kNone, lane_row = 0, counter = kNone;
    float y = 0, height = 0;
  };
  struct LaneIndex {
    std::vector<std::vector<uint32_t>> rows;  // per visual row: slice rows in time order
    std::vector<std::vector<TimeNs>> busy;    // per visual row: durations summed up to each slice
  };

  void build_lane_index();
  void layout_rows();
  void handle_input(ImVec2 canvas_min, ImVec2 canvas_max);
  void draw_ruler(ImDrawList* dl, ImVec2 min, ImVec2 max);
  void draw_overview(ImDrawList* dl, ImVec2 min, ImVec2 max);
  void draw_rows(ImDrawList* dl, ImVec2 min, ImVec2 max, float scroll_y);
  void draw_lane(ImDrawList* dl, const Row& row, float x0, float y, float x1);
  void draw_counter(ImDrawList* dl, const Row& row, float x0, float y, float x1);
  void draw_gaps(ImDrawList* dl, uint32_t track, float x0, float y, float x1, float height);
  void draw_flows(ImDrawList* dl, float x0, float x1);
  void draw_path_links(ImDrawList* dl, float x0, float x1);
  void outline_path(ImDrawList* dl, const Row& row, float x0, float y, float x1);
  bool on_path(SliceRef s) const;
  ImU32 base_slice_color(SliceRef s) const;
  void draw_header(ImDrawList* dl, const Row& row, float x, float y, float width);
  void draw_track_menu();
  float draw_legend(ImDrawList* dl, ImVec2 min, float width);
  void draw_more_levels(ImDrawList* dl, const Row& row, float x, float y);
  void add_track_rows(uint32_t track, float& y);
  void slice_tooltip(SliceRef s);
  void gap_tooltip(const IdleGapMark& gap);
  ImU32 slice_color(SliceRef s) const;
  float x_of(double t) const { return canvas_x0_ + float((t - t0_) / ns_per_px_); }
  double t_of(float x) const { return t0_ + double(x - canvas_x0_) * ns_per_px_; }
  float row_y_of(SliceRef s) const;  // screen y of a slice's lane, or NaN when not laid out

  const TraceStore& store_;
  std::vector<LaneIndex> lanes_;  // per track
  std::vector<Row> rows_;
  std::vector<uint8_t> collapsed_;  // per process
  std::vector<uint8_t> pinned_, hidden_;  // per track
  std::vector<uint8_t> unfolded_;         // per track: deep levels shown
  TimeNs data_start_ = 0, data_end_ = 0;
  Rect legend_rect_, rows_rect_;
  uint32_t menu_track_ = kNone;
  std::vector<std::vector<IdleGapMark>> gaps_;  // per track, by start
  std::vector<double> idle_share_;             // per track: idle / span of its activity
  std::vector<uint32_t> gaps_drawn_;           // per track, last frame
  std::vector<float> track_y_;                 // per track: screen y of its first lane, last frame
  double t0_ = 0, t1_ = 1, ns_per_px_ = 1;
  float canvas_x0_ = 0, canvas_x1_ = 1, lane_height_ = 18, header_width_ = 240;
  float content_height_ = 0;
  SliceRef selected_, hovered_;
  std::vector<SliceRef> highlights_;
  PathOverlay path_;                              // links by min(from_ts, to_ts)
  std::vector<std::vector<uint32_t>> path_rows_;  // per track: path slice rows, by start
  std::vector<TimeNs> path_max_dur_;              // per track: longest path slice
  TimeNs path_max_span_ = 0;                      // longest link
  size_t match_cursor_ = 0;
  bool dragging_ = false, range_dragging_ = false, following_ = false;
  ImVec2 drag_origin_{};
  TimeNs range_a_ = 0, range_b_ = 0;
  float pending_scroll_y_ = -1;
  struct FoldHit {
    TimeNs start, end;
    uint32_t count;
  } fold_hover_{};
  bool fold_hovered_ = false;
  // The hovered idle gap's explanation, computed once when the hovered gap changes (not per frame).
  struct GapHover {
    uint32_t track = kNone;
    TimeNs start = 0;
    std::string text;
  } gap_hover_;
  TimelineStats stats_;

public:
  // Hook for views that colour slices by something the timeline does not know (the diff view
  // tints by relative change): consulted first; nullopt falls back to color_mode.
  std::function<std::optional<ImU32>(SliceRef)> color_override;
};

}  // namespace sl::views
