// The main menu bar (File, View, Help, the import-issues badge) and the keyboard shortcuts that
// stand for its items.
#include <glad/gl.h>
// glad first: GLFW must not include its own GL header.
#include <GLFW/glfw3.h>
#include <imgui.h>

#include <filesystem>

#include "app/gui_window_app.h"
#include "core/import/nsys/nsys_loader.h"
#include "core/report/issue_classes.h"

namespace sl::gui {

void draw_menu(Workspace& ws, views::JobView* job, Ui& ui, GLFWwindow* window, const std::function<void(const std::string&)>& open,
               views::LiveView* live, bool live_open, const std::function<void()>& toggle_live, bool& help_open) {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) ui.browser_open = true, ui.browser_compare = false;
    if (ImGui::MenuItem("Open folder (a job)...")) ui.browser_open = true, ui.browser_compare = false;
    if (ImGui::MenuItem("Live capture...", nullptr, live_open)) toggle_live();
    if (ImGui::MenuItem("Save capture as...", nullptr, false, live && live->can_save())) live->open_save_popup();
    if (ImGui::MenuItem("Save live snapshot...", nullptr, false, live && live->can_save_snapshot())) live->open_snapshot_popup();
    if (ImGui::MenuItem("Compare with...", nullptr, false, ws.store() != nullptr))
      ui.browser_open = true, ui.browser_compare = true;
    if (ImGui::BeginMenu("Recent", !ui.recent.empty())) {
      for (const auto& r : ui.recent)
        if (ImGui::MenuItem(r.c_str())) open(r);
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Export figure...", "Ctrl+E", false, ws.timeline() != nullptr))
      ui.exporter.open(ws.path(), active_tab(ws));
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) glfwSetWindowShouldClose(window, 1);
    ImGui::EndMenu();
  }
  views::TimelineView* tl = job ? &job->timeline() : ws.timeline();
  if (tl && ImGui::BeginMenu("View")) {
    if (job) {  // a job tab: its lower views, then the options of its timeline (overview and expanded ranks)
      if (ImGui::MenuItem("Ranks", nullptr, std::string(job->active_view()) == "ranks")) job->show_view("ranks");
      if (ImGui::MenuItem("Insights", nullptr, std::string(job->active_view()) == "insights")) job->show_view("insights");
      ImGui::Separator();
    }
    if (ImGui::MenuItem("Colour by name", nullptr, tl->color_mode == views::ColorMode::ByName)) tl->color_mode = views::ColorMode::ByName;
    if (ImGui::MenuItem("Colour by category", nullptr, tl->color_mode == views::ColorMode::ByCategory)) tl->color_mode = views::ColorMode::ByCategory;
    if (ImGui::MenuItem("Colour by kernel type", nullptr, tl->color_mode == views::ColorMode::ByKernelType)) tl->color_mode = views::ColorMode::ByKernelType;
    ImGui::Separator();
    ImGui::MenuItem("Idle-cause overlay", nullptr, &tl->show_idle);
    ImGui::MenuItem("Launch and flow arrows", nullptr, &tl->show_flows);
    if (views::AnalysisPanel* panel = ws.panel())
      if (ImGui::MenuItem("Critical path", nullptr, panel->critical_path.overlay()))
        panel->set_critical_path_overlay(!panel->critical_path.overlay());
    ImGui::Separator();
    if (ImGui::MenuItem("Dark theme", nullptr, tl->theme == views::Theme::Dark)) {
      tl->theme = tl->theme == views::Theme::Dark ? views::Theme::Light : views::Theme::Dark;
      views::apply_theme(tl->theme);
    }
    if (ImGui::MenuItem("Find...", "Ctrl+F")) ui.find_open = true;
    if (ImGui::MenuItem("Show everything", "0")) tl->show_all();
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    if (ImGui::MenuItem("Keys and mouse", "?")) help_open = true;
    ImGui::EndMenu();
  }
  if (TraceStore* s = ws.store()) {
    ImGui::Separator();
    ImGui::TextDisabled("%s", fs::path(ws.path()).filename().c_str());
    // Alarm colour only for issues worth a look; the half flows every Kineto trace has are
    // listed as normal, in a quiet colour (core/report/issue_classes.h).
    uint64_t issues = s->issues.total(), attention = attention_issues(s->issues);
    if (attention) {
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(213, 94, 0, 255));
      if (ImGui::SmallButton(import_badge_label(s->issues).c_str())) ui.issues_open = true;
      ImGui::PopStyleColor();
    } else if (issues || !nsys_info_text(s->meta).empty()) {
      // An Nsight report without issues still lists its unmapped tables and what it lacks there.
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      if (ImGui::SmallButton(issues ? import_badge_label(s->issues).c_str() : "import: notes")) ui.issues_open = true;
      ImGui::PopStyleColor();
      if (ImGui::IsItemHovered() && issues)
        ImGui::SetTooltip("%llu import notes that are normal in profiler traces (half launch flows); click for details",
                          (unsigned long long)issues);
      else if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Nsight Systems tables not mapped, and what the report lacks; click for details");
    }
  }
  ImGui::EndMainMenuBar();
}

void App::handle_shortcuts(Workspace& ws) {
  ImGuiIO& io = ImGui::GetIO();
  if (!io.KeyCtrl) return;
  if (ImGui::IsKeyPressed('F', false)) ui_.find_open = true;
  if (ImGui::IsKeyPressed('O', false)) ui_.browser_open = true, ui_.browser_compare = false;
  if (ImGui::IsKeyPressed('Q', false)) glfwSetWindowShouldClose(window_, 1);
  if (ImGui::IsKeyPressed('E', false) && ws.timeline()) ui_.exporter.open(ws.path(), active_tab(ws));
}

void App::toggle_help_on_key() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput) return;
  for (ImWchar c : io.InputQueueCharacters)
    if (c == '?') tabs_.help_open = !tabs_.help_open;
  if (ImGui::IsKeyPressed(GLFW_KEY_F1, false)) tabs_.help_open = !tabs_.help_open;
}

}  // namespace sl::gui
