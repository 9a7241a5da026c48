// The timeline's navigation: zoom, pan and following live data, framing and selecting a slice,
// scrolling rows into view, and the mouse and keyboard input that drives them.
#include "views/timeline_view.h"

#include <algorithm>
#include <cmath>

namespace sl::views {

void TimelineView::show_all() {
  double span = std::max<double>(double(data_end_ - data_start_), 1000.0);
  zoom_to(double(data_start_) - span * 0.01, double(data_start_) + span * 1.01);
}

void TimelineView::zoom_to(double t0, double t1) {
  if (t1 - t0 < 10) {  // never closer than 10 ns across the view
    double mid = (t0 + t1) / 2;
    t0 = mid - 5, t1 = mid + 5;
  }
  t0_ = t0, t1_ = t1;
  following_ = false;
}

void TimelineView::follow(TimeNs end) {
  if (!following_) return;
  double width = t1_ - t0_;
  t1_ = double(end), t0_ = t1_ - width;
}

void TimelineView::frame(SourceSlice ss) {
  if (!ss.valid() || ss.source >= sources_.size()) return;
  Source& src = sources_[ss.source];
  const TraceStore& store = src.store();
  SliceRef s = ss.ref;
  double start = src.view(store.start(s)), dur = std::max<double>(double(store.dur(s)), 100);
  zoom_to(start - dur * 0.5, start + dur * 1.5);
  src.folded_away = false;
  src.collapsed[src.group_of(s.track)] = 0;
  if (folded(ss.source, s.track) && store.tracks[s.track].row_of(s.index) >= kFoldedLevels) src.unfolded[s.track] = 1;
  layout_rows();
  for (const TimelineRow& r : rows_)
    if (const auto* lane = std::get_if<LaneRow>(&r); lane && lane->source == ss.source && lane->track == s.track) {
      pending_scroll_y_ = std::max(0.f, lane->y - 3 * lane_height_);
      break;
    }
}

void TimelineView::scroll_to_source(uint32_t source) { pending_scroll_source_ = source; }

bool TimelineView::scroll_to_show(const std::vector<SourceSlice>& slices) {
  layout_rows();
  float top = INFINITY, bottom = -INFINITY;
  for (const SourceSlice& ss : slices) {
    if (!ss.valid() || ss.source >= sources_.size()) return false;
    auto first = std::find_if(rows_.begin(), rows_.end(), [&](const TimelineRow& r) {
      const auto* lane = std::get_if<LaneRow>(&r);
      return lane && lane->source == ss.source && lane->track == ss.ref.track && lane->lane == 0;
    });
    if (first == rows_.end()) return false;  // hidden, or its source or process folded away
    uint32_t lane = sources_[ss.source].store().tracks[ss.ref.track].row_of(ss.ref.index);
    if (folded(ss.source, ss.ref.track)) lane = std::min(lane, kFoldedLevels);  // its "N more levels" row
    float y = row_base(*first).y + float(lane) * lane_height_;
    top = std::min(top, y), bottom = std::max(bottom, y + lane_height_);
  }
  float height = rows_rect_.y1 - rows_rect_.y0;
  if (slices.empty() || height <= 0 || bottom - top > height - lane_height_) return false;
  pending_scroll_y_ = std::max(0.f, top - std::min(3 * lane_height_, (height - (bottom - top)) / 2));
  return true;
}

void TimelineView::select(SourceSlice s, bool frame_it) {
  selected_ = s.valid() && s.source < sources_.size() ? s : SourceSlice{};
  if (frame_it) frame(selected_);
}

void TimelineView::handle_input(ImVec2 cmin, ImVec2 cmax) {
  ImGuiIO& io = ImGui::GetIO();
  bool over_canvas = ImGui::IsWindowHovered() && io.MousePos.x >= cmin.x && io.MousePos.x < cmax.x &&
                     io.MousePos.y >= cmin.y && io.MousePos.y < cmax.y;
  double span = t1_ - t0_;
  if (over_canvas && io.MouseWheel != 0 && !io.KeyShift) {
    double at = t_of(io.MousePos.x), factor = std::pow(0.8, io.MouseWheel);
    zoom_to(at - (at - t0_) * factor, at + (t1_ - at) * factor);
  } else if (over_canvas && io.MouseWheel != 0) {
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * lane_height_ * 3);
  }
  if (!io.WantTextInput && ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows)) {
    double at = over_canvas ? t_of(io.MousePos.x) : (t0_ + t1_) / 2;
    auto key = [](int k) { return ImGui::IsKeyDown(k); };
    float dt = std::min(io.DeltaTime, 0.05f) * 3.f;
    if (key('W')) zoom_to(at - (at - t0_) * (1 - dt), at + (t1_ - at) * (1 - dt));
    if (key('S')) zoom_to(at - (at - t0_) * (1 + dt), at + (t1_ - at) * (1 + dt));
    if (key('A')) zoom_to(t0_ - span * dt * 0.5, t1_ - span * dt * 0.5);
    if (key('D')) zoom_to(t0_ + span * dt * 0.5, t1_ + span * dt * 0.5);
    if (ImGui::IsKeyPressed('F', false) && selected_.valid()) frame(selected_);
    if (ImGui::IsKeyPressed('0', false) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) show_all();
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) selected_ = {}, range_a_ = range_b_ = 0;
    if (follow_available && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) following_ = true;
  }
  // Drag pans; shift-drag selects a time range; a click without drag selects what is under it.
  if (over_canvas && ImGui::IsMouseClicked(0)) {
    drag_origin_ = io.MousePos;
    range_dragging_ = io.KeyShift;
    dragging_ = !io.KeyShift;
    if (range_dragging_) range_a_ = range_b_ = TimeNs(t_of(io.MousePos.x));
  }
  if (dragging_ && ImGui::IsMouseDragging(0, 2.f)) {
    double shift = double(io.MouseDelta.x) * ns_per_px_;
    zoom_to(t0_ - shift, t1_ - shift);
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
  }
  if (range_dragging_ && ImGui::IsMouseDown(0)) range_b_ = TimeNs(t_of(io.MousePos.x));
  if (ImGui::IsMouseReleased(0) && (dragging_ || range_dragging_)) {
    bool click = std::fabs(io.MousePos.x - drag_origin_.x) < 3 && std::fabs(io.MousePos.y - drag_origin_.y) < 3;
    if (click && dragging_) {
      if (hits_.fold_hovered) zoom_to(double(hits_.fold.start), double(hits_.fold.end));
      else selected_ = hits_.hovered;
    }
    if (range_a_ > range_b_) std::swap(range_a_, range_b_);
    dragging_ = range_dragging_ = false;
  }
}

}  // namespace sl::views
