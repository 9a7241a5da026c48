// What floats over the main window: find, import issues, keys-and-mouse help, loading progress, the
// file browser, the export dialog and the error popup.
#include <imgui.h>

#include <string>

#include "app/gui_window_app.h"
#include "core/import/nsys/nsys_loader.h"
#include "core/report/issue_classes.h"
#include "views/range_stats.h"

namespace sl::gui {
namespace {

void draw_issues(Workspace& ws, Ui& ui) {
  if (!ui.issues_open || !ws.store()) return;
  ImGui::SetNextWindowSize(ImVec2(560, 320), ImGuiCond_FirstUseEver);
  if (ImGui::Begin("Import issues", &ui.issues_open)) {
    ImGui::TextWrapped("What the loader could not place exactly as written. Nothing is dropped silently: "
                       "skipped events are counted here with the byte offsets of the first examples.");
    if (ImGui::BeginTable("issues", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders)) {
      ImGui::TableSetupColumn("kind");
      ImGui::TableSetupColumn("count");
      ImGui::TableSetupColumn("first at byte");
      ImGui::TableSetupColumn("normal? why");
      ImGui::TableHeadersRow();
      const ImportIssues& issues = ws.store()->issues;
      for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) {
        uint64_t n = issues.count(IssueKind(k));
        if (!n) continue;
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(std::string(issue_name(IssueKind(k))).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%llu", (unsigned long long)n);
        ImGui::TableNextColumn();
        std::string offsets;
        for (uint64_t o : issues.examples(IssueKind(k))) offsets += std::to_string(o) + " ";
        ImGui::TextUnformatted(offsets.c_str());
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", std::string(issue_reason(IssueKind(k))).c_str());
      }
      ImGui::EndTable();
    }
    // Nsight reports: tables not mapped and what the report lacks (as `info` prints them).
    std::string nsys = nsys_info_text(ws.store()->meta);
    if (!nsys.empty()) {
      ImGui::Separator();
      ImGui::TextWrapped("%s", nsys.c_str());
    }
  }
  ImGui::End();
}

// Find over `tl`: the trace's timeline, or in a diff tab the diff's one timeline (both runs).
void draw_find(views::TimelineView* tl, Ui& ui) {
  if (!ui.find_open || !tl) return;
  ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x - 520, 60), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(500, 0), ImGuiCond_Always);
  if (ImGui::Begin("Find", &ui.find_open, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize)) {
    if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
    bool enter = ImGui::InputText("##find", ui.find_text, sizeof ui.find_text, ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    bool regex_changed = ImGui::Checkbox("regex", &ui.find_regex);
    static std::string last;
    std::string now = std::string(ui.find_text) + (ui.find_regex ? "\x01" : "");
    if (now != last || regex_changed) {
      last = now;
      tl->find(ui.find_text, ui.find_regex);
    } else if (enter) {
      tl->step_match(ImGui::GetIO().KeyShift ? -1 : 1);
      ImGui::SetKeyboardFocusHere(-1);
    }
    size_t n = tl->match_count();
    ImGui::TextDisabled(n ? "%zu of %zu matches (Enter / Shift+Enter)" : "no matches", n ? tl->match_index() + 1 : 0, n);
  }
  ImGui::End();
}

// The keys and mouse gestures, in one overlay (`?`, Help > Keys and mouse).
void draw_help(bool& open) {
  if (!open) return;
  static const char* kHelp[][2] = {
      {"Mouse wheel", "zoom around the pointer"},
      {"Shift + wheel", "scroll the rows"},
      {"Drag", "pan"},
      {"Shift + drag, or drag on the ruler", "select a time range (its statistics open)"},
      {"Click a slice", "select it: details below, launch and flow arrows"},
      {"Click a process name", "fold or unfold the process"},
      {"Click \xE2\x80\x9CN more levels\xE2\x80\x9D", "unfold a deep Python stack"},
      {"Right-click a track name", "pin to top, hide, fold levels"},
      {"W / S, A / D", "zoom in / out, pan left / right"},
      {"F", "frame the selected slice"},
      {"0 or Home", "show everything"},
      {"Esc", "clear the selection and the range"},
      {"Ctrl+F", "find slices by name (Enter: next match)"},
      {"Ctrl+O / Ctrl+E", "open a trace / export a figure"},
      {"Drag the bar above the panel", "resize the panel"},
      {"?", "this help"},
  };
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x / 2, io.DisplaySize.y / 2), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("Keys and mouse", &open, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse)) {
    if (ImGui::BeginTable("help", 2, ImGuiTableFlags_RowBg)) {
      for (const auto& [keys, what] : kHelp) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(keys);
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", what);
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled("The Insights tab lists what slows the trace down; each finding opens where it happens.");
  }
  ImGui::End();
}

void draw_loading(Workspace& ws) {
  if (!ws.loading()) return;
  const views::LoadState& s = ws.load_state();
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x / 2, io.DisplaySize.y / 2), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(460, 0));
  ImGui::Begin("Loading", nullptr, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoSavedSettings);
  double total = double(s.bytes_total.load()), done = double(s.bytes_done.load());
  float fraction = total > 0 ? float(done / total) : 0.f;
  double elapsed = ImGui::GetTime() - s.started;
  ImGui::Text("%s", s.phase.load());
  ImGui::ProgressBar(fraction, ImVec2(-1, 0));
  ImGui::Text("%.1f of %.1f MB · %llu events · %.1f s", done / 1e6, total / 1e6, (unsigned long long)s.events.load(), elapsed);
  if (fraction > 0.02f) ImGui::Text("about %.1f s left", elapsed / fraction * (1 - fraction));
  if (ImGui::Button("Cancel")) ws.cancel();
  ImGui::End();
}

}  // namespace

// What floats over the main window: find, issues, range statistics, export, loading, the browser.
void App::draw_windows(Tab& tab) {
  Workspace& ws = *tab.ws;
  draw_find(tab.diff ? &tab.diff->timeline() : ws.timeline(), ui_);
  draw_issues(ws, ui_);
  if (ws.timeline() && !tab.ws_b) views::draw_range_window(*ws.store(), *ws.timeline());
  if (ui_.exporter.is_open())
    with_export_sources(tab, [&](const views::ExportSources& s) { ui_.exporter.draw(s, ws.path(), active_tab(ws)); });
  draw_loading(ws);
  if (tab.live) tab.live->draw_save_popup();
  if (tab.ws_b) draw_loading(*tab.ws_b);
  if (ui_.browser_open) {
    if (auto chosen = ui_.browser.draw(&ui_.browser_open)) {
      if (ui_.browser_compare && ws.store()) open_diff(ws.path(), *chosen);
      else open(*chosen);
    }
  }
  draw_help(tabs_.help_open);
  draw_error_popup(tab);
}

void App::draw_error_popup(Tab& tab) {
  Workspace* failed = !tab.ws->error().empty()                       ? tab.ws.get()
                      : tab.ws_b && !tab.ws_b->error().empty() ? tab.ws_b.get()
                                                               : nullptr;
  if (failed) ImGui::OpenPopup("Could not open the trace");
  if (!ImGui::BeginPopupModal("Could not open the trace", nullptr, ImGuiWindowFlags_AlwaysAutoResize)) return;
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  if (failed) ImGui::TextUnformatted(failed->error().c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::Button("OK")) {
    if (failed) failed->dismiss_error();
    if (tabs_.list.size() > 1) close_ = tabs_.active;  // the tab never got its trace
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

}  // namespace sl::gui
