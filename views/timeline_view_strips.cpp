// The timeline's strips above the rows: the time ruler (with range selection) and the overview
// strip of GPU busy over the whole data range, with the view marked.
#include "views/timeline_view.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/present/time_axis.h"

namespace sl::views {

void TimelineView::draw_ruler(ImDrawList* dl, ImVec2 min, ImVec2 max) {
  bool light = theme == Theme::Light;
  dl->AddRectFilled(ImVec2(min.x - header_width_, min.y), max, light ? IM_COL32(245, 245, 245, 255) : IM_COL32(35, 35, 38, 255));
  // One ruler on the view clock for every row (a source's shift puts its times on it).
  int64_t step = present::tick_step(ns_per_px_ * 110);
  int64_t first = int64_t(std::floor(t0_ / double(step))) * step;
  ImU32 ink = light ? IM_COL32(60, 60, 60, 255) : IM_COL32(210, 210, 210, 255);
  for (int64_t shown = first; double(shown) <= t1_; shown += step) {
    float x = x_of(double(shown));
    if (x < min.x) continue;
    dl->AddLine(ImVec2(x, max.y - 6), ImVec2(x, max.y), ink);
    std::string label = present::format_tick(shown, step);
    // A label the edge would cut ("3.0" for "3.00 ms") is left out; its tick stays.
    if (x + 3 + ImGui::CalcTextSize(label.c_str()).x <= max.x) dl->AddText(ImVec2(x + 3, min.y + 3), ink, label.c_str());
  }
  // Dragging on the ruler selects a time range (as shift-drag does on the rows).
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseHoveringRect(min, max) && ImGui::IsMouseClicked(0)) {
    range_dragging_ = true;
    range_a_ = range_b_ = TimeNs(t_of(io.MousePos.x));
  }
  std::string span = "view " + present::format_duration(t1_ - t0_);
  dl->AddText(ImVec2(min.x - header_width_ + 6, min.y + 3), ink, span.c_str());
  if (range_b_ > range_a_ || range_dragging_) {
    float a = x_of(double(std::min(range_a_, range_b_))), b = x_of(double(std::max(range_a_, range_b_)));
    dl->AddRectFilled(ImVec2(a, min.y), ImVec2(b, max.y), IM_COL32(0, 114, 178, 60));
    std::string len = present::format_duration(double(std::llabs(range_b_ - range_a_)));
    dl->AddText(ImVec2(a + 4, min.y + 3), IM_COL32(0, 80, 140, 255), len.c_str());
  }
}

// Which overview columns hold GPU work of any source. The strip shows the whole data range, so
// zoom and pan never change it: it is rebuilt only for a new width, data range or set of sources
// (one search per column and stream, from the last column's answer through the lane's sampled
// starts; per frame, as plain binary searches, this cost 20 ms on a 10 GB trace).
const std::vector<uint8_t>& TimelineView::overview_busy(int columns) {
  OverviewKey key{columns, data_start_, data_end_, sources_version_};
  if (overview_key_ == key) return overview_busy_;
  overview_key_ = key;
  overview_busy_.assign(size_t(columns), 0);
  double offset = double(data_start_), per_col = std::max<double>(double(data_end_ - data_start_), 1) / columns;
  for (const Source& src : sources_)
    for (uint32_t t = 0; t < src.store().tracks.size(); ++t) {
      const Track& track = src.store().tracks[t];
      if (track.kind != TrackKind::GpuStream || src.lanes[t].rows.empty()) continue;
      const Source::LaneIndex& lanes = src.lanes[t];
      const size_t slices = lanes.rows[0].size();
      double base = offset - double(src.def.shift);  // column edges on the store's clock
      size_t p = 0;  // the first slice ending after the column's start: moves right with the columns
      for (int col = 0; col < columns; ++col) {
        TimeNs a = TimeNs(base + col * per_col), b = TimeNs(base + (col + 1) * per_col);
        p = lanes.first_ending(0, [&](TimeNs end) { return end <= a; }, p);
        if (p != slices && lanes.start(0, p) < b) overview_busy_[size_t(col)] = 1;
      }
    }
  return overview_busy_;
}

// The overview strip: GPU busy density over the whole data range (every source's streams), with
// the current view marked.
void TimelineView::draw_overview(ImDrawList* dl, ImVec2 min, ImVec2 max) {
  bool light = theme == Theme::Light;
  dl->AddRectFilled(ImVec2(min.x - header_width_, min.y), max, light ? IM_COL32(232, 234, 238, 255) : IM_COL32(28, 28, 32, 255));
  // The strip spans the data (data_range), labelled with it: the trace's own time range.
  std::string range = present::format_duration(double(data_start_)) + " \xE2\x80\x93 " + present::format_duration(double(data_end_));
  dl->AddText(ImVec2(min.x - header_width_ + 6, min.y + 5), light ? IM_COL32(90, 90, 90, 255) : IM_COL32(180, 180, 180, 255), range.c_str());
  double offset = double(data_start_), total = std::max<double>(double(data_end_ - data_start_), 1);
  int columns = std::max(1, int(max.x - min.x));
  // The owner's profile (a job: mean busy over its ranks, in [0, 1]) or the sources' streams (0/1).
  auto bar = [&](int col, float fraction) {  // at least a pixel: a little busy is not none
    dl->AddRectFilled(ImVec2(min.x + col, max.y - 4 - std::max(1.f, 14 * fraction)), ImVec2(min.x + col + 1, max.y - 4),
                      IM_COL32(0, 114, 178, 200));
  };
  if (overview_profile) {
    const std::vector<float>& busy = overview_profile(data_start_, data_end_, columns);
    for (int col = 0; col < columns && col < int(busy.size()); ++col)
      if (busy[size_t(col)] > 0) bar(col, busy[size_t(col)]);
  } else {
    const std::vector<uint8_t>& busy = overview_busy(columns);
    for (int col = 0; col < columns; ++col)
      if (busy[col]) bar(col, 1);
  }
  float a = min.x + float((t0_ - offset) / total) * (max.x - min.x), b = min.x + float((t1_ - offset) / total) * (max.x - min.x);
  dl->AddRect(ImVec2(std::max(a, min.x), min.y + 1), ImVec2(std::min(b, max.x), max.y - 1), IM_COL32(213, 94, 0, 255), 0, 0, 2);
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseHoveringRect(min, max) && ImGui::IsMouseDown(0) && !dragging_ && !range_dragging_) {
    double center = offset + double(io.MousePos.x - min.x) / double(max.x - min.x) * total, half = (t1_ - t0_) / 2;
    zoom_to(center - half, center + half);
  }
}

}  // namespace sl::views
