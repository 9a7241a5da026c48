// The timeline's rows in display order (pinned tracks, process groups, sources under their
// headers) and their layout each frame, with where tracks and slices landed on screen.
#include "views/timeline_view.h"

#include <algorithm>
#include <cmath>

namespace sl::views {

void TimelineView::add_track_rows(uint32_t source, uint32_t t, float& y) {
  const Track& track = sources_[source].store().tracks[t];
  uint32_t lanes = std::max<uint32_t>(track.row_count(), track.instants.size() ? 1 : 0);
  uint32_t shown = folded(source, t) ? kFoldedLevels : lanes;
  for (uint32_t lane = 0; lane < shown; ++lane) y += place_row(LaneRow(source, t, lane, y, lane_height_));
  if (shown < lanes) y += place_row(MoreLevelsRow(source, t, lanes - shown, y, lane_height_));
  if (lanes) y += 3;  // a little air between tracks
}

// One source's rows in display order: pinned tracks, then process groups (collapsible) with their
// tracks' lanes and counters. Tracks with neither slices nor instants take no row.
std::vector<DisplayRow> TimelineView::source_order(uint32_t source) const {
  const Source& src = sources_[source];
  const TraceStore& store = src.store();
  std::vector<DisplayRow> out;
  auto drawn = [&](uint32_t t) { return store.tracks[t].slices.size() || store.tracks[t].instants.size(); };
  if (std::count(src.pinned.begin(), src.pinned.end(), 1)) {
    out.push_back({DisplayRow::PinnedHeader, kNone, kNone, kNone, source});
    for (uint32_t t = 0; t < store.tracks.size(); ++t)
      if (src.pinned[t] && drawn(t)) out.push_back({DisplayRow::Track, store.tracks[t].process, t, kNone, source});
  }
  const auto& groups = src.groups();  // by what the tracks hold, not the pid alone
  for (uint32_t p : store.process_order) {
    bool has_content = false;
    for (uint32_t t : groups[p]) has_content |= drawn(t);
    for (const CounterSeries& c : store.counters) has_content |= c.process == p;
    if (!has_content) continue;
    out.push_back({DisplayRow::ProcessHeader, p, kNone, kNone, source});
    if (src.collapsed[p]) continue;
    for (uint32_t t : groups[p])
      if (!src.pinned[t] && !src.hidden[t] && drawn(t)) out.push_back({DisplayRow::Track, p, t, kNone, source});
    for (uint32_t c = 0; c < store.counters.size(); ++c)
      if (store.counters[c].process == p) out.push_back({DisplayRow::Counter, p, kNone, c, source});
  }
  return out;
}

// Every source in order, each under its header when it has a label (a folded source: the header only).
std::vector<DisplayRow> TimelineView::display_order() const {
  std::vector<DisplayRow> out;
  for (uint32_t i = 0; i < sources_.size(); ++i) {
    if (!sources_[i].def.label.empty()) {
      out.push_back({DisplayRow::SourceHeader, kNone, kNone, kNone, i});
      if (sources_[i].folded_away) continue;
    }
    std::vector<DisplayRow> rows = source_order(i);
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

std::vector<uint32_t> TimelineView::visible_tracks() const {
  std::vector<uint32_t> out;
  if (sources_.empty()) return out;
  for (const DisplayRow& r : source_order(0))
    if (r.kind == DisplayRow::Track) out.push_back(r.track);
  return out;
}

void TimelineView::layout_rows() {
  rows_.clear();
  lane_height_ = ImGui::GetFontSize() + 5;
  float y = 0;
  for (const DisplayRow& d : display_order()) {
    switch (d.kind) {
      case DisplayRow::SourceHeader:
        if (d.source > 0) y += 6;  // sources apart
        y += place_row(SourceHeaderRow(d.source, y, lane_height_));
        break;
      case DisplayRow::PinnedHeader:
      case DisplayRow::ProcessHeader:
        y += place_row(ProcessHeaderRow(d.source, d.process, y, lane_height_));
        break;
      case DisplayRow::Track: add_track_rows(d.source, d.track, y); break;
      case DisplayRow::Counter:
        y += place_row(CounterRow(d.source, d.counter, y, lane_height_));
        break;
    }
  }
  content_height_ = y;
}

float TimelineView::track_screen_y(uint32_t source, uint32_t track) const {
  if (source >= sources_.size() || track >= sources_[source].track_y.size()) return NAN;
  return sources_[source].track_y[track];
}

float TimelineView::row_y_of(uint32_t source, SliceRef s) const {
  float base = track_screen_y(source, s.track);
  if (std::isnan(base)) return NAN;
  uint32_t row = sources_[source].store().tracks[s.track].row_of(s.index);
  if (folded(source, s.track)) row = std::min(row, kFoldedLevels);  // below the fold: its "N more levels" row
  return base + float(row) * lane_height_;
}

}  // namespace sl::views
