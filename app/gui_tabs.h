// The window's tabs (one trace, a diff of two runs, a live capture, or a job each), shared by the window
// loop (gui_window.cpp) and the automation script (gui_script.cpp).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "views/diff_view.h"
#include "views/export_dialog.h"
#include "views/job_view.h"
#include "views/live_view.h"
#include "views/workspace.h"

namespace sl::gui {

// One tab of the window: one trace, or (a diff tab) two runs and the diff view between them.
struct Tab {
  std::unique_ptr<views::Workspace> ws = std::make_unique<views::Workspace>();
  std::unique_ptr<views::Workspace> ws_b;  // the second run of a diff tab
  std::unique_ptr<views::DiffView> diff;   // declared last: destroyed before the workspaces
  std::unique_ptr<views::LiveView> live;   // a live capture tab: snapshots land in `ws`
  std::unique_ptr<views::JobView> job;     // a job tab (every rank of a run); `ws` stays empty
  std::string pending, pending_b;
  int id = 0;
  bool loaded() const { return ws->timeline() && !ws->loading() && (!ws_b || (ws_b->timeline() && !ws_b->loading())); }
  // Ready for the script: loaded, and a diff tab's diff computed. A live tab is always ready
  // (`waitlive` waits for its data); a job tab once its ranks are loaded and analysed.
  bool ready() const { return live || (job && job->ready()) || (loaded() && (!ws_b || (diff && (diff->ready() || !diff->error().empty())))); }
};

struct Tabs {
  std::vector<std::unique_ptr<Tab>> list;
  int active = 0;
  int force_select = -1;  // a tab chosen by code (script, open) rather than by a click
  int force_frames = 0;
  int next_id = 1;
  float panel_height = 0;  // the lower panel's height as the user dragged it (0: not dragged yet)
  bool help_open = false;  // the keys-and-mouse overlay (?, Help menu, script `help`)
  Tab& current() { return *list[size_t(active)]; }
  void choose(int i) { active = force_select = i, force_frames = 3; }
  Tab& add() {
    list.push_back(std::make_unique<Tab>());
    list.back()->id = next_id++;
    choose(int(list.size()) - 1);
    return *list.back();
  }
};

// Calls `use` with what the export reads in `tab`: its timeline and analyses, or in a diff tab both
// runs and their diff (the diff view's window, on A's clock). False when there is nothing to export yet.
template <class F>
bool with_export_sources(Tab& tab, F use) {
  views::Workspace& ws = *tab.ws;
  if (!ws.timeline() || !ws.store()) return false;
  views::ExportSources sources{*ws.store(), ws.model(), *ws.timeline(), ws.timeline()->show_idle};
  if (ws.panel()) sources.critical_path = ws.panel()->critical_path.path();
  if (!tab.ws_b) return use(sources), true;
  if (!tab.diff || !tab.diff->result() || !tab.ws_b->store()) return false;
  views::DiffSources diff{*ws.store(), *tab.ws_b->store(), *tab.diff->result(), ws.path(), tab.ws_b->path(),
                          tab.diff->timeline().view_start(), tab.diff->timeline().view_end()};
  sources.diff = &diff;
  use(sources);
  return true;
}

// The lower panel's tab; a live capture before its first analysis has no panel yet.
inline views::PanelTab active_tab(views::Workspace& ws) {
  return ws.panel() ? ws.panel()->active() : views::PanelTab::Details;
}

// "Sightline — trace.json.gz" (a diff: "A vs B"; a live tab: "live capture").
inline std::string window_title(const Tab& tab) {
  std::string title = "Sightline";
  auto file = [](const std::string& path) { return std::filesystem::path(path).filename().string(); };
  if (tab.live) title += " \xE2\x80\x94 live capture";
  else if (!tab.pending.empty()) title += " \xE2\x80\x94 " + file(tab.pending);
  if (tab.ws_b) title += " vs " + file(tab.pending_b);
  return title;
}

// The lower panel collapses to its tab bar while it has nothing to show: the Details tab with no
// slice selected. Another tab (a click, `view NAME`) or a selection opens it again.
inline bool panel_collapsed(views::Workspace& ws) {
  views::TimelineView* tl = ws.timeline();
  return ws.panel() && tl && ws.panel()->active() == views::PanelTab::Details && !tl->selected().valid();
}

}  // namespace sl::gui
