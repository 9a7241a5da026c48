// The diff view: two runs compared on one timeline with two sources, A's rows under an
// "A (control)" header then B's under "B (test)", B shifted by the offset that lines up a chosen
// iteration start (one ruler, one zoom: nothing to keep in sync); the aligned-operator table of
// sl::diff::trace_diff (Sightline mode) whose rows highlight and frame the matched events in
// both sources; a colouring by relative change (each source's colour override); the side-by-side
// run summary. The workspaces' own timelines are left alone. The diff is computed once, on a
// background thread, never per frame.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/diff/trace_diff.h"
#include "core/present/diff_palette.h"
#include "core/text/json_writer.h"
#include "views/workspace.h"

namespace sl::views {

class DiffView {
public:
  // Both workspaces must hold a loaded trace and outlive this view.
  DiffView(Workspace& a, Workspace& b);
  ~DiffView();

  void draw(ImVec2 size);
  bool ready() const { return diff_ != nullptr; }  // the diff is computed and installed
  const diff::TraceDiff* result() const { return diff_.get(); }
  bool poll();  // installs a finished diff; true when something changed
  const std::string& error() const { return error_; }

  // One table row: one aligned operator, or every occurrence of one name when grouped.
  struct Row {
    std::string name;  // the matching key both runs' names share
    TimeNs dur_a = 0, dur_b = 0;
    TimeNs self_a = 0, self_b = 0;  // own time, children excluded
    uint32_t count = 0;
    std::vector<uint32_t> ops;  // indices into AlignedDiff::ops
    TimeNs delta() const { return dur_b - dur_a; }
    TimeNs self_delta() const { return self_b - self_a; }
  };
  const std::vector<Row>& rows() const { return rows_; }  // in display order
  // Selects row `i` of the display order: highlights its matched events in both timelines
  // and frames them. False when out of range.
  bool select_row(size_t i);
  void set_grouped(bool grouped);
  void set_filter(const std::string& text);
  void set_offset(double ns);  // B time = A time + offset: source B is shifted by -offset
  double offset() const { return offset_; }
  void sync_now() {}  // one timeline: nothing to keep in sync (kept for callers of the old API)
  // The one timeline (source 0 = A on A's clock, source 1 = B): scripts zoom it, exports read its window.
  TimelineView& timeline() { return timeline_; }
  void write_state(JsonWriter& w) const;

  bool diff_colors = true;

private:
  void rebuild_rows();
  void sort_rows();
  void build_colors();
  void draw_header();
  void draw_timeline(ImVec2 size);
  void draw_table();
  void draw_summary();
  void show_matched_rows(SourceSlice a, SourceSlice b);
  void release_matched_rows();
  std::optional<ImU32> tint(const TraceStore& s, const present::ChangeTints& tints, SliceRef r) const;

  Workspace &a_, &b_;
  std::unique_ptr<diff::TraceDiff> diff_;
  std::string error_;
  std::thread thread_;
  std::mutex mutex_;
  std::unique_ptr<diff::TraceDiff> finished_;
  std::string finished_error_;
  std::atomic<bool> computing_{true};

  double offset_ = 0, default_offset_ = 0;
  static constexpr uint32_t kA = 0, kB = 1;  // the timeline's sources
  TimelineView timeline_;
  std::vector<Row> rows_;
  bool grouped_ = false;
  std::string filter_;
  char filter_text_[128] = "";
  // Self delta: what changed is the op whose own time changed, not its ancestors, which all carry
  // the same inclusive delta (analyses.md §9); the inclusive delta is a column beside it.
  int sort_column_ = 5;
  bool sort_ascending_ = false;
  int selected_row_ = -1;
  present::ChangeTints tints_a_, tints_b_;  // per slice: colour by change
  SourceSlice matched_a_, matched_b_;       // the selected row's framed pair
  // What show_matched_rows changed for the selected row (undone by the next selection): tracks it
  // pinned (source, track) and A's process groups it collapsed.
  std::vector<std::pair<uint32_t, uint32_t>> pinned_for_row_;
  std::vector<uint32_t> collapsed_for_row_;
};

}  // namespace sl::views
