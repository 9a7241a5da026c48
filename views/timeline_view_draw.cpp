// The timeline's frame: the strips, the owner's pinned custom rows, the scrolling rows area and
// its rows, the track menu and the colour legend.
#include "views/timeline_view.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/analysis/idle_time.h"
#include "core/present/palette.h"

namespace sl::views {
namespace {

constexpr float kRulerHeight = 22.f;
constexpr float kOverviewHeight = 26.f;

}  // namespace

void TimelineView::draw(ImVec2 size) {
  stats_ = {};
  for (Source& src : sources_) {
    std::fill(src.gaps_drawn.begin(), src.gaps_drawn.end(), 0);
    std::fill(src.track_y.begin(), src.track_y.end(), NAN);
    src.screen_y = NAN;
  }
  layout_rows();
  if (pending_scroll_source_ != kNone) {
    for (const TimelineRow& r : rows_)
      if (row_base(r).source == pending_scroll_source_) {
        pending_scroll_y_ = std::max(0.f, row_base(r).y - lane_height_);
        break;
      }
    pending_scroll_source_ = kNone;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 origin = ImGui::GetCursorScreenPos();
  header_width_ = std::clamp(size.x * 0.18f, 140.f, 300.f);
  canvas_x0_ = origin.x + header_width_;
  canvas_x1_ = origin.x + size.x - ImGui::GetStyle().ScrollbarSize;
  ns_per_px_ = (t1_ - t0_) / std::max(1.f, canvas_x1_ - canvas_x0_);

  draw_overview(dl, ImVec2(canvas_x0_, origin.y), ImVec2(canvas_x1_, origin.y + kOverviewHeight));
  draw_ruler(dl, ImVec2(canvas_x0_, origin.y + kOverviewHeight), ImVec2(canvas_x1_, origin.y + kOverviewHeight + kRulerHeight));
  ImGui::Dummy(ImVec2(size.x, kOverviewHeight + kRulerHeight));
  // The legend has its own strip above the rows, so it never covers a slice.
  float legend_height = show_legend ? draw_legend(dl, ImVec2(origin.x, origin.y + kOverviewHeight + kRulerHeight), size.x) : 0;
  if (!show_legend) legend_rect_ = {};
  if (legend_height > 0) ImGui::Dummy(ImVec2(size.x, legend_height));
  chrome_height_ = kOverviewHeight + kRulerHeight + legend_height;
  // The owner's rows, pinned: they stay while the sources' rows scroll under them.
  float custom_height = 0;
  for (CustomRow* r : custom_rows_) custom_height += r->height();
  custom_rect_ = {};
  if (custom_height > 0) {
    draw_custom_rows(dl, origin.x, origin.y + chrome_height_);
    // A rule between the pinned rows and the scrolling ones, so rows passing under read as such.
    float rule = origin.y + chrome_height_ + custom_height + 2;
    dl->AddLine(ImVec2(origin.x, rule), ImVec2(canvas_x1_, rule), theme == Theme::Light ? IM_COL32(120, 130, 150, 255) : IM_COL32(150, 160, 180, 255), 2);
    custom_height += 5;
    ImGui::Dummy(ImVec2(size.x, custom_height));
  }

  ImVec2 child_size(size.x, std::max(10.f, size.y - chrome_height_ - custom_height));
  ImGui::BeginChild("rows", child_size, false, ImGuiWindowFlags_NoScrollWithMouse);
  if (pending_scroll_y_ >= 0) ImGui::SetScrollY(pending_scroll_y_), pending_scroll_y_ = -1;
  ImDrawList* rows_dl = ImGui::GetWindowDrawList();
  ImVec2 rows_min = ImGui::GetCursorScreenPos();
  float scroll_y = ImGui::GetScrollY();
  ImVec2 view_min = ImGui::GetWindowPos();
  ImVec2 view_max(view_min.x + ImGui::GetWindowWidth(), view_min.y + ImGui::GetWindowHeight());
  rows_rect_ = {canvas_x0_, view_min.y, canvas_x1_, view_max.y};
  handle_input(ImVec2(canvas_x0_, view_min.y), ImVec2(canvas_x1_, view_max.y));
  ns_per_px_ = (t1_ - t0_) / std::max(1.f, canvas_x1_ - canvas_x0_);
  draw_rows(rows_dl, ImVec2(rows_min.x, rows_min.y), view_max, scroll_y);
  for (uint32_t i = 0; i < sources_.size(); ++i)
    if (!sources_[i].path.slices.empty()) draw_path_links(rows_dl, i, canvas_x0_, canvas_x1_);
  if (show_flows) draw_flows(rows_dl, canvas_x0_, canvas_x1_);
  if (sources_.empty() && !empty_hint.empty())
    rows_dl->AddText(ImVec2(rows_min.x + 8, rows_min.y + 8), ImGui::GetColorU32(ImGuiCol_TextDisabled), empty_hint.c_str());
  ImGui::Dummy(ImVec2(size.x - 20, content_height_ + lane_height_));
  draw_track_menu();
  ImGui::EndChild();

  ImDrawList* all = ImGui::GetWindowDrawList();
  stats_.draw_commands = uint32_t(all->CmdBuffer.Size + rows_dl->CmdBuffer.Size);
  stats_.draw_vertices = uint32_t(all->VtxBuffer.Size + rows_dl->VtxBuffer.Size);
}

// The owner's rows, one under the other from y: each draws its header and its slice area; the
// mouse over one gets its hover, and a press there is remembered so that its release clicks it.
void TimelineView::draw_custom_rows(ImDrawList* dl, float x, float y) {
  ImGuiIO& io = ImGui::GetIO();
  RowContext ctx = row_context(dl, x);
  float top = y;
  bool hover_allowed = ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) && !dragging_ && !range_dragging_;
  for (size_t i = 0; i < custom_rows_.size(); ++i) {
    CustomRowSlot row(custom_rows_[i], y);
    row.draw(ctx);
    if (hover_allowed && row.contains(ctx, io.MousePos)) {
      row.hover(ctx, io.MousePos);
      if (ImGui::IsMouseClicked(0)) custom_pressed_ = i, drag_origin_ = io.MousePos, dragging_ = io.MousePos.x >= canvas_x0_;
      if (io.MouseWheel != 0 && !io.KeyShift && io.MousePos.x >= canvas_x0_) {
        double at = t_of(io.MousePos.x), factor = std::pow(0.8, io.MouseWheel);
        zoom_to(at - (at - t0_) * factor, at + (t1_ - at) * factor);
      }
    }
    y += row.height();
  }
  custom_rect_ = {canvas_x0_, top, canvas_x1_, y};
  // A release anywhere ends the press; where it did not move, the pressed row takes the click.
  if (custom_pressed_ != SIZE_MAX && ImGui::IsMouseReleased(0)) {
    bool click = std::fabs(io.MousePos.x - drag_origin_.x) < 3 && std::fabs(io.MousePos.y - drag_origin_.y) < 3;
    size_t i = std::exchange(custom_pressed_, SIZE_MAX);
    if (click && i < custom_rows_.size()) {
      float row_y = top;
      for (size_t k = 0; k < i; ++k) row_y += custom_rows_[k]->height();
      CustomRowSlot(custom_rows_[i], row_y).click(ctx, io.MousePos);
      dragging_ = false;
    }
  }
}

void TimelineView::draw_track_menu() {
  if (!ImGui::BeginPopup("track menu")) return;
  if (hits_.menu_source < sources_.size() && hits_.menu_track < sources_[hits_.menu_source].pinned.size()) {
    Source& src = sources_[hits_.menu_source];
    bool pinned = src.pinned[hits_.menu_track];
    if (ImGui::MenuItem(pinned ? "Unpin" : "Pin to top")) set_pinned(hits_.menu_source, hits_.menu_track, !pinned);
    if (ImGui::MenuItem("Hide")) set_hidden(hits_.menu_source, hits_.menu_track, true);
    if (folded(hits_.menu_source, hits_.menu_track) && ImGui::MenuItem("Unfold all levels")) set_folded(hits_.menu_source, hits_.menu_track, false);
    if (src.unfolded[hits_.menu_track] && present::folds_deep_stack(src.store().tracks[hits_.menu_track].kind, src.store().tracks[hits_.menu_track].row_count()) &&
        ImGui::MenuItem("Fold deep levels"))
      set_folded(hits_.menu_source, hits_.menu_track, true);
    if (ImGui::MenuItem("Show all hidden tracks")) std::fill(src.hidden.begin(), src.hidden.end(), 0);
  }
  ImGui::EndPopup();
}

// What the colours mean: kernel types when colouring by type, idle causes when the overlay is on.
// One strip from `min`, `width` wide, entries left to right, wrapping; returns its height (0: none).
float TimelineView::draw_legend(ImDrawList* dl, ImVec2 min, float width) {
  std::vector<std::pair<ImU32, const char*>> items;
  if (color_mode == ColorMode::ByKernelType)
    for (present::KernelKind k : {present::KernelKind::Computation, present::KernelKind::Communication, present::KernelKind::Memory, present::KernelKind::Sync, present::KernelKind::Other})
      items.push_back({kernel_kind_color(k), present::kernel_kind_name(k)});
  if (show_idle) {
    static const std::vector<std::string> causes = [] {
      std::vector<std::string> v;
      for (int c = 0; c < analysis::kIdleCauseCount; ++c) v.push_back(std::string("idle: ") + present::idle_cause_label(c));
      return v;
    }();
    for (int c = 0; c < analysis::kIdleCauseCount; ++c)
      items.push_back({(idle_cause_color(c) & 0x00FFFFFF) | 0xB0000000, causes[size_t(c)].c_str()});
  }
  legend_rect_ = {};
  if (items.empty()) return 0;
  float line = ImGui::GetFontSize() + 4, x = min.x + 6, y = min.y + 2;
  bool light = theme == Theme::Light;
  ImU32 ink = light ? IM_COL32(30, 30, 30, 255) : IM_COL32(220, 220, 220, 255);
  for (auto& [color, text] : items) {
    float item = 18 + ImGui::CalcTextSize(text).x + 16;
    if (x + item > min.x + width && x > min.x + 6) x = min.x + 6, y += line;
    dl->AddRectFilled(ImVec2(x, y + 3), ImVec2(x + 12, y + line - 4), color);
    dl->AddText(ImVec2(x + 18, y + 1), ink, text);
    x += item;
  }
  float height = y + line + 2 - min.y;
  legend_rect_ = {min.x, min.y, min.x + width, min.y + height};
  return height;
}

RowContext TimelineView::row_context(ImDrawList* dl, float header_x) {
  return RowContext{dl,         mapping(),  header_x, header_width_, lane_height_, theme, color_mode,
                    show_idle,  sources_,   selected_, hits_,        stats_};
}

// Rows off screen only note where they are (a lane: its track's y, which flows and path links
// use); the rest draw, then take hover and clicks.
// Where each labelled source's header is drawn this frame, in content coordinates. Headers
// scrolled above the view stay at its top, one under the other in source order; headers below it
// wait at the bottom edge. So with two runs in one timeline (the diff tab) both headers stay in
// view whatever the scroll: the reader always knows which run a row belongs to.
std::vector<TimelineView::StickyHeader> TimelineView::sticky_headers(float top, float bottom) const {
  std::vector<StickyHeader> headers;
  for (size_t i = 0; i < rows_.size(); ++i)
    if (const auto* h = std::get_if<SourceHeaderRow>(&rows_[i])) headers.push_back({i, h->y, h->y, h->height});
  float ceiling = top;  // the top edge, below the headers already held there
  for (StickyHeader& h : headers)
    if (h.layout_y < ceiling) h.y = ceiling, ceiling += h.height;
  float floor = bottom;  // the bottom edge, above the headers already waiting there
  for (size_t k = headers.size(); k-- > 0;) {
    StickyHeader& h = headers[k];
    if (h.y == h.layout_y && h.layout_y + h.height > floor) h.y = floor - h.height, floor = h.y;
  }
  return headers;
}

void TimelineView::draw_rows(ImDrawList* dl, ImVec2 min, ImVec2 view_max, float scroll_y) {
  (void)view_max;
  float visible_top = scroll_y - lane_height_, visible_bottom = scroll_y + ImGui::GetWindowHeight() + lane_height_;
  hits_.hovered = {};
  hits_.fold_hovered = false;
  RowContext ctx = row_context(dl, min.x);
  std::vector<StickyHeader> sticky = sticky_source_headers ? sticky_headers(scroll_y, scroll_y + ImGui::GetWindowHeight())
                                                          : std::vector<StickyHeader>{};
  auto under_sticky = [&](float mouse_y) {
    for (const StickyHeader& h : sticky)
      if (h.y != h.layout_y && mouse_y >= min.y + h.y && mouse_y < min.y + h.y + h.height) return true;
    return false;
  };
  const bool mouse_free = !under_sticky(ImGui::GetIO().MousePos.y);
  for (const TimelineRow& row : rows_) {
    const RowBase& place = row_base(row);
    float y = min.y + place.y;
    Source& src = sources_[place.source];
    if (std::isnan(src.screen_y)) src.screen_y = y;
    std::visit([&](const auto& r) { r.laid_out(ctx, y); }, row);
    if (place.y + place.height < visible_top || place.y > visible_bottom) continue;
    ++stats_.rows_drawn;
    std::visit([&](const auto& r) {
      r.draw(ctx, y);
      if (!mouse_free) return;  // a header drawn over this row takes the mouse
      r.hover(ctx, y);
      r.click(ctx, y);
    }, row);
  }
  for (const StickyHeader& h : sticky) {
    if (h.y == h.layout_y) continue;
    const auto& header = std::get<SourceHeaderRow>(rows_[h.row]);
    float y = min.y + h.y;
    header.draw(ctx, y);
    sources_[header.source].screen_y = y;
    // A click on a header that stands in for its place scrolls the source into view.
    if (ImGui::IsWindowHovered() && ImGui::IsMouseClicked(0) &&
        ImGui::IsMouseHoveringRect(ImVec2(ctx.header_x, y), ImVec2(ctx.map.x1, y + h.height)))
      scroll_to_source(header.source);
  }
}

}  // namespace sl::views
