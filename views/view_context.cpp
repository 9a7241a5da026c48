#include "views/view_context.h"

#include <imgui.h>

#include <algorithm>

namespace sl::views {

void show_on_timeline(TimelineView& timeline, SliceRef ref, TimeNs t0, TimeNs t1) {
  if (ref.valid()) timeline.select(ref, true);  // frames it: expands its process, scrolls its row in
  double len = std::max<double>(double(t1 - t0), 1000);
  timeline.zoom_to(double(t0) - len * 0.25, double(t1) + len * 0.25);
}

void section_title(const char* text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextUnformatted(text);
  ImGui::PopStyleColor();
  ImGui::Separator();
}

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

}  // namespace sl::views
