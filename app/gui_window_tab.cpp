// The main window's content: the tab bar, and a trace tab's timeline, truncation banner, splitter
// and lower panel.
#include <imgui.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/gui_window_app.h"
#include "views/analysis_model.h"
#include "views/details_panel.h"

namespace sl::gui {
namespace {

// One line across the tab, in the warning colours: what the user must know before reading on.
void draw_banner(const char* id, const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_ChildBg, IM_COL32(255, 224, 130, 255));
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(80, 40, 0, 255));
  ImGui::BeginChild(id, ImVec2(0, ImGui::GetTextLineHeightWithSpacing() + 2 * ImGui::GetStyle().WindowPadding.y), false);
  ImGui::TextUnformatted(text.c_str());
  ImGui::EndChild();
  ImGui::PopStyleColor(2);
}

// A cut-off trace opens with what it holds, under a banner so that nobody takes it for the whole
// run (the same words as the CLI's warning).
void draw_truncation_banner(const Truncation& cut) {
  std::string text = describe(cut);
  text[0] = 'T';
  draw_banner("truncated", "Cut-off trace. " + text + ".");
}

}  // namespace

void App::draw_tab_bar() {
  if (!ImGui::BeginTabBar("traces", ImGuiTabBarFlags_AutoSelectNewTabs | ImGuiTabBarFlags_FittingPolicyScroll)) return;
  for (size_t i = 0; i < tabs_.list.size(); ++i) {
    Tab& t = *tabs_.list[i];
    std::string label = fs::path(t.pending).filename().string();
    if (t.ws_b) label = "diff: " + label + " vs " + fs::path(t.pending_b).filename().string();
    if (t.live) label = t.ws->path().empty() ? "live capture" : t.ws->path();
    if (t.job) label = "job: " + t.job->title();
    label += "###tab" + std::to_string(t.id);
    bool keep = true;
    ImGuiTabItemFlags flags = tabs_.force_select == int(i) ? ImGuiTabItemFlags_SetSelected : 0;
    if (ImGui::BeginTabItem(label.c_str(), tabs_.list.size() > 1 ? &keep : nullptr, flags)) {
      if (tabs_.force_select < 0) tabs_.active = int(i);  // a click; code-chosen tabs win this frame
      ImGui::EndTabItem();
    }
    if (!keep) close_ = int(i);
  }
  ImGui::EndTabBar();
  // SetSelected takes effect on the next frame; until the bar agrees, keep the chosen tab.
  if (tabs_.force_frames > 0 && --tabs_.force_frames == 0) tabs_.force_select = -1;
}

namespace {
constexpr float kSplitterHeight = 6;
}  // namespace

// The lower panel's height: its tab bar alone while it has nothing to show, else what the user
// dragged it to (40 % of the window until then), leaving the timeline at least 200 px.
float App::lower_panel_height(Workspace& ws) {
  const ImGuiStyle& style = ImGui::GetStyle();
  if (panel_collapsed(ws)) return ImGui::GetFrameHeight() + style.WindowPadding.y * 2 + 2;
  float window = ImGui::GetMainViewport()->WorkSize.y;
  float h = tabs_.panel_height > 0 ? tabs_.panel_height : std::max(220.f, window * 0.4f);
  return std::clamp(h, 80.f, std::max(80.f, window - 260.f));
}

// The bar between timeline and panel: dragging it resizes the panel (remembered for all tabs, and
// outside scripts for the next session).
void App::draw_splitter(float panel_height) {
  ImVec2 at = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("##panel splitter", ImVec2(ImGui::GetContentRegionAvail().x, kSplitterHeight));
  bool active = ImGui::IsItemActive(), hovered = ImGui::IsItemHovered();
  if (active) tabs_.panel_height = panel_height - ImGui::GetIO().MouseDelta.y;
  if (ImGui::IsItemDeactivated() && !automated_) {  // the next session opens with this size too
    std::error_code ec;
    fs::create_directories(state_dir(), ec);
    std::ofstream(state_dir() / "panel_height") << tabs_.panel_height << "\n";
  }
  if (active || hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeNS);
  float mid = at.y + kSplitterHeight / 2, width = ImGui::GetItemRectSize().x;
  ImGui::GetWindowDrawList()->AddLine(ImVec2(at.x + width / 2 - 30, mid), ImVec2(at.x + width / 2 + 30, mid),
                                      IM_COL32(128, 128, 128, active || hovered ? 255 : 140), 3);
}

void App::note_insights_seen(Workspace& ws) {
  if (insights_seen_ || active_tab(ws) != views::PanelTab::Insights) return;
  insights_seen_ = true;
  if (automated_) return;
  std::error_code ec;
  fs::create_directories(state_dir(), ec);
  std::ofstream(state_dir() / "seen_insights") << "1\n";
}

// A trace tab: the timeline above, the details and analyses below.
void App::draw_trace(Tab& tab, views::TimelineView& tl) {
  Workspace& ws = *tab.ws;
  if (tab.live) tab.live->draw_bar(ws);
  if (showing_sample_ && ws.path() == options_.sample)
    ImGui::TextDisabled("Showing the bundled sample trace (%s). Open your own with File > Open or drop a file here.",
                        fs::path(options_.sample).filename().c_str());
  if (const std::optional<Truncation>& cut = ws.store()->issues.truncation) draw_truncation_banner(*cut);
  // Launches but no GPU activity: the recording is incomplete (the CLI's warning, in the same words).
  if (const views::AnalysisModel* m = ws.model(); m && !m->report.gpu_warning.empty()) {
    std::string text = m->report.gpu_warning;
    text[0] = 'N';
    draw_banner("no_gpu_activity", text + " The timeline shows the CPU side only; there is no idle verdict.");
  }
  if (!ws.notice().empty()) {  // the snapshot cache's: wrapped, as it names two paths
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", ws.notice().c_str());
    ImGui::PopStyleColor();
  }
  note_insights_seen(ws);
  bool collapsed = panel_collapsed(ws), hint = collapsed && !insights_seen_;
  float panel_height = lower_panel_height(ws);
  float below = panel_height + (collapsed ? 0 : kSplitterHeight) + (hint ? ImGui::GetTextLineHeightWithSpacing() : 0);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  tl.draw(ImVec2(avail.x, avail.y - below));
  if (!collapsed) draw_splitter(panel_height);
  if (hint)
    ImGui::TextDisabled("New here? The Insights tab below lists what slows this trace down. Click a slice for its "
                        "details; press ? for keys and mouse.");
  ImGui::BeginChild("details", ImVec2(0, 0), true, collapsed ? ImGuiWindowFlags_NoScrollbar : 0);
  if (ws.panel()) {
    ws.panel()->draw();
  } else {  // a live capture before its analyses ran: the selection's details only
    ImGui::TextDisabled("Analyses run on demand (Run analyses) or when the capture ends.");
    views::draw_details_panel(*ws.store(), tl);
  }
  ImGui::EndChild();
}

// The main window: the tab bar and the active tab's content.
void App::draw_tab(Tab& tab) {
  ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("main", nullptr, ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoBringToFrontOnFocus);
  draw_tab_bar();
  Workspace& ws = *tab.ws;
  if (tab.job) {
    tab.job->draw(ImGui::GetContentRegionAvail());
  } else if (tab.diff) {
    tab.diff->draw(ImGui::GetContentRegionAvail());
  } else if (tab.ws_b) {
    bool loading = tab.ws->loading() || tab.ws_b->loading();
    ImGui::TextDisabled(loading ? "Loading both runs..." : "One of the two runs could not be loaded; nothing to compare.");
  } else if (tab.live && !ws.timeline()) {
    tab.live->draw_empty();
  } else if (views::TimelineView* tl = ws.timeline()) {
    draw_trace(tab, *tl);
  } else if (!ws.loading()) {
    ImGui::TextDisabled("No trace open. File > Open, or drop a trace (.json[.gz], .sqlite[.gz], .nsys-rep, .slsnap) here.");
  }
  ImGui::End();
}

}  // namespace sl::gui
