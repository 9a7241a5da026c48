#include "views/insights_view.h"

#include <imgui.h>

#include "core/present/time_axis.h"

namespace sl::views {

void InsightsView::compute(ViewContext& ctx) {
  computed_ = true;
  options_.starvation_gap = TimeNs(double(starvation_us_) * 1000);
  insights_ = find_insights(ctx.model, options_);
  opened_ = -1;
}

bool InsightsView::open(ViewContext& ctx, size_t index) {
  if (!computed_) compute(ctx);
  if (index >= insights_.size()) return false;
  opened_ = int(index);
  const Insight& in = insights_[index];
  show_on_timeline(ctx.timeline, in.ref, in.t0, in.t1);
  return true;
}

int draw_insight_cards(const std::vector<Insight>& insights, int opened) {
  int clicked = -1;
  if (insights.empty()) return clicked;
  ImGui::BeginChild("list");
  TimeNs top = std::max<TimeNs>(insights.front().cost, 1);
  float wrap = ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 10;
  for (size_t i = 0; i < insights.size(); ++i) {
    const Insight& in = insights[i];
    ImGui::PushID(int(i));
    ImVec2 start = ImGui::GetCursorScreenPos();
    ImGui::BeginGroup();
    ImGui::Text("%zu.", i + 1);
    ImGui::SameLine(ImGui::GetFontSize() * 2.2f);
    ImGui::BeginGroup();
    ImGui::PushTextWrapPos(ImGui::GetCursorPosX() + wrap);
    ImGui::TextUnformatted(in.title.c_str());
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextUnformatted(in.detail.c_str());
    ImGui::PopStyleColor();
    ImGui::PopTextWrapPos();
    ImGui::EndGroup();
    ImGui::EndGroup();
    ImVec2 end = ImGui::GetItemRectMax();
    // Cost column: a bar relative to the costliest finding, and the time.
    float cx = start.x + ImGui::GetFontSize() * 3 + wrap;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    float bw = ImGui::GetFontSize() * 6 * float(double(in.cost) / double(top));
    dl->AddRectFilled(ImVec2(cx, start.y + 2), ImVec2(cx + bw, start.y + ImGui::GetFontSize()), IM_COL32(213, 94, 0, 200));
    std::string cost = present::format_duration(double(in.cost));
    dl->AddText(ImVec2(cx, start.y + ImGui::GetFontSize() + 2), ImGui::GetColorU32(ImGuiCol_Text), cost.c_str());
    ImGui::SetCursorScreenPos(start);
    float row_h = std::max(end.y - start.y, ImGui::GetFontSize() * 2.4f);
    if (ImGui::Selectable("##card", opened == int(i), ImGuiSelectableFlags_AllowItemOverlap,
                          ImVec2(ImGui::GetContentRegionAvail().x, row_h)))
      clicked = int(i);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show on the timeline: %s at %s", present::format_duration(double(in.t1 - in.t0)).c_str(),
                                                  present::format_duration(double(in.t0)).c_str());
    ImGui::Separator();
    ImGui::PopID();
  }
  ImGui::EndChild();
  return clicked;
}

void InsightsView::draw(ViewContext& ctx) {
  if (!computed_) compute(ctx);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  if (ImGui::InputFloat("starvation threshold µs", &starvation_us_, 0, 0, "%.0f", ImGuiInputTextFlags_EnterReturnsTrue)) compute(ctx);
  ImGui::SameLine(0, 20);
  ImGui::TextDisabled("%zu findings, ranked by the time each costs. Click one to see where it happens.", insights_.size());
  if (insights_.empty()) {
    ImGui::TextDisabled("Nothing stands out: no long GPU gaps, host-bound steps, synchronising calls or fusable chains were found.");
    return;
  }
  if (int clicked = draw_insight_cards(insights_, opened_); clicked >= 0) open(ctx, size_t(clicked));
}

void InsightsView::write_state(JsonWriter& w) const {
  w.begin_object().field("count", uint64_t(insights_.size())).field("opened", opened_);
  w.key("findings").begin_array();
  for (const Insight& in : insights_)
    w.begin_object().field("kind", in.kind).field("title", in.title).field("cost_ns", in.cost).field("t0_ns", in.t0).field("t1_ns", in.t1).end_object();
  w.end_array().end_object();
}

}  // namespace sl::views
