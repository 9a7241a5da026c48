// The tabbed lower part of the window: Details and the analysis views, all linked to the
// timeline. Owns the views of one open trace; `view NAME` and the other script commands land here.
#pragma once

#include <memory>
#include <sstream>
#include <string>

#include "core/text/json_writer.h"
#include "views/breakdown_view.h"
#include "views/critical_path_view.h"
#include "views/cupti_counters_view.h"
#include "views/idle_view.h"
#include "views/insights_view.h"
#include "views/latency_view.h"
#include "views/memory_view.h"
#include "views/patterns_view.h"

namespace sl::views {

enum class PanelTab { Details, Latency, Patterns, Idle, Breakdowns, Insights, Counters, CriticalPath, Memory };
constexpr int kLastPanelTab = int(PanelTab::Memory);

class AnalysisPanel {
public:
  // A memory snapshot (memory events and no slices) opens on the Memory tab.
  AnalysisPanel(const TraceStore& store, const AnalysisModel& model, TimelineView& timeline);

  void draw();  // fills the current window
  // Script `view NAME` (cli.md names: timeline, latency, patterns, idle, breakdown, insights, counters, diff;
  // and critical-path).
  bool show(const std::string& name);
  // Script commands other than `view`; returns "" on success or the error to report.
  std::string command(const std::string& verb, const std::string& args);
  void write_state(JsonWriter& w) const;
  PanelTab active() const { return active_; }

  LatencyView latency;
  PatternsView patterns;
  IdleView idle;
  BreakdownView breakdown;
  InsightsView insights;
  CuptiCountersView counters;
  CriticalPathView critical_path;
  MemoryView memory;
  // View > Critical path: the path overlay on the timeline (computes the path when first asked).
  void set_critical_path_overlay(bool on) { critical_path.set_overlay(ctx_, on); }

private:
  std::string critical_path_command(std::istringstream& in);
  std::string memory_command(std::istringstream& in);

  ViewContext ctx_;
  PanelTab active_ = PanelTab::Details;
  int force_ = 0;  // frames left to force active_'s tab open
};

const char* panel_tab_name(PanelTab tab);  // the `view` name: timeline, latency, ...

}  // namespace sl::views
