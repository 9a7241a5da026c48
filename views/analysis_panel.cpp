#include "views/analysis_panel.h"

#include <imgui.h>

#include <sstream>

#include "views/details_panel.h"
#include "core/present/time_axis.h"

namespace sl::views {

const char* panel_tab_name(PanelTab tab) {
  switch (tab) {
    case PanelTab::Details: return "timeline";
    case PanelTab::Latency: return "latency";
    case PanelTab::Patterns: return "patterns";
    case PanelTab::Idle: return "idle";
    case PanelTab::Breakdowns: return "breakdown";
    case PanelTab::Insights: return "insights";
    case PanelTab::Counters: return "counters";
    case PanelTab::CriticalPath: return "critical-path";
    case PanelTab::Memory: return "memory";
  }
  return "";
}

AnalysisPanel::AnalysisPanel(const TraceStore& store, const AnalysisModel& model, TimelineView& timeline)
    : ctx_{store, model, timeline} {
  if (store.memory.empty()) return;
  for (const Track& t : store.tracks)
    if (t.slices.size() > 0) return;
  show("memory");
}

bool AnalysisPanel::show(const std::string& name) {
  for (int t = 0; t <= kLastPanelTab; ++t)
    if (name == panel_tab_name(PanelTab(t))) {
      active_ = PanelTab(t);
      force_ = 3;
      return true;
    }
  return false;
}

void AnalysisPanel::draw() {
  static const char* labels[] = {"Details", "Launch latency", "Kernel patterns", "Idle time", "Breakdowns", "Insights", "Counters", "Critical path", "Memory"};
  if (!ImGui::BeginTabBar("analysis", ImGuiTabBarFlags_None)) return;
  for (int t = 0; t <= kLastPanelTab; ++t) {
    ImGuiTabItemFlags flags = force_ > 0 && int(active_) == t ? ImGuiTabItemFlags_SetSelected : 0;
    if (!ImGui::BeginTabItem(labels[t], nullptr, flags)) continue;
    if (force_ == 0) active_ = PanelTab(t);
    ImGui::BeginChild("body", ImVec2(0, 0), false);
    switch (PanelTab(t)) {
      case PanelTab::Details: draw_details_panel(ctx_.store, ctx_.timeline); break;
      case PanelTab::Latency: latency.draw(ctx_); break;
      case PanelTab::Patterns: patterns.draw(ctx_); break;
      case PanelTab::Idle: idle.draw(ctx_); break;
      case PanelTab::Breakdowns: breakdown.draw(ctx_); break;
      case PanelTab::Insights: insights.draw(ctx_); break;
      case PanelTab::Counters: counters.draw(ctx_); break;
      case PanelTab::CriticalPath: critical_path.draw(ctx_); break;
      case PanelTab::Memory: memory.draw(ctx_); break;
    }
    ImGui::EndChild();
    ImGui::EndTabItem();
  }
  if (force_ > 0) --force_;
  ImGui::EndTabBar();
}

// critical_path on|off | critical_path instance N | critical_path contributor N
std::string AnalysisPanel::critical_path_command(std::istringstream& in) {
  std::string what;
  int64_t n = -1;
  in >> what;
  if (what == "on" || what == "off") return critical_path.set_overlay(ctx_, what == "on"), "";
  show("critical-path");
  if (!(in >> n)) return "critical_path wants on|off, instance N or contributor N";
  if (what == "instance") return critical_path.pick_instance(ctx_, n) ? "" : "no critical path for instance " + std::to_string(n);
  if (what == "contributor") return n >= 0 && critical_path.open_contributor(ctx_, size_t(n)) ? "" : "no contributor " + std::to_string(n);
  return "critical_path wants on|off, instance N or contributor N";
}

// memory device N | memory context N | memory block N | memory peak
std::string AnalysisPanel::memory_command(std::istringstream& in) {
  std::string what;
  size_t n = 0;
  in >> what;
  show("memory");
  if (!ctx_.model.report.memory_analysis || ctx_.model.report.memory_analysis->empty()) return "this trace has no memory events";
  if (what == "peak") return memory.show_peak(ctx_), "";
  if (!(in >> n) || (what != "device" && what != "context" && what != "block")) return "memory wants device N, context N, block N or peak";
  bool ok = what == "device" ? memory.pick_device(ctx_, n) : what == "context" ? memory.pick_context(ctx_, n) : memory.pick_block(ctx_, n);
  return ok ? "" : "no memory " + what + " " + std::to_string(n);
}

std::string AnalysisPanel::command(const std::string& verb, const std::string& args) {
  std::istringstream in(args);
  if (verb == "brush") {  // brush latency|QUANTITY LO HI (times: "12us", "1.5ms" or plain µs)
    std::string what, a, b;
    in >> what >> a >> b;
    LatencyQuantity q;
    if (what != "latency") {
      if (!parse_latency_quantity(what, q)) return "brush wants latency or one of launch_delay, launch_to_start, runtime, gpu_duration";
      latency.set_quantity(q);
    }
    double lo = 0, hi = 0;
    if (!present::parse_time(a, lo) || !present::parse_time(b, hi)) return "brush wants two times (LO HI, µs by default)";
    show("latency");
    latency.brush_range(ctx_, lo, hi);
    return "";
  }
  if (verb == "pattern") {  // pattern [fusion|sequence|repeated] N | pattern next|prev
    std::string first;
    in >> first;
    show("patterns");
    if (first == "next" || first == "prev") return patterns.step(ctx_, first == "next" ? 1 : -1), "";
    PatternKind kind = PatternKind::Fusion;
    std::string number = first;
    if (first == "fusion" || first == "sequence" || first == "repeated") {
      kind = first == "fusion" ? PatternKind::Fusion : first == "sequence" ? PatternKind::Sequences : PatternKind::Repeated;
      in >> number;
    }
    if (number.empty() || number.find_first_not_of("0123456789") != std::string::npos) return "pattern wants a row number";
    if (!patterns.select_row(ctx_, kind, std::stoul(number))) return "no pattern row " + number;
    return "";
  }
  if (verb == "operator") {  // operator NAME: the operator of the frequent-sequences table
    std::string name;
    std::getline(in >> std::ws, name);
    show("patterns");
    patterns.set_operator(ctx_, name);
    patterns.select_row(ctx_, PatternKind::Sequences, 0);  // shows the tab; no row is fine
    return "";
  }
  if (verb == "insight") {
    size_t n = 0;
    if (!(in >> n)) return "insight wants a number";
    show("insights");
    if (!insights.open(ctx_, n)) return "no insight " + std::to_string(n);
    return "";
  }
  if (verb == "idle") {  // idle STREAM CAUSE | idle next|prev
    std::string first, cause;
    in >> first >> cause;
    show("idle");
    if (first == "next" || first == "prev") return idle.step(ctx_, first == "next" ? 1 : -1), "";
    for (int c = 0; c < analysis::kIdleCauseCount; ++c)
      if (cause == analysis::idle_cause_name(analysis::IdleCause(c))) {
        if (!idle.pick(ctx_, std::stoll(first), analysis::IdleCause(c))) return "stream " + first + " has no " + cause + " gap";
        return "";
      }
    std::string names;
    for (int c = 0; c < analysis::kIdleCauseCount; ++c) names += (c ? ", " : "") + std::string(analysis::idle_cause_name(analysis::IdleCause(c)));
    return "idle wants STREAM CAUSE (" + names + ")";
  }
  if (verb == "counters") {  // counters kernel|point|operator N: as a click on that row or point
    std::string what;
    in >> what;
    show("counters");
    if (what == "click") {  // counters click X Y: a click at window pixels on the roofline
      float x = 0, y = 0;
      if (!(in >> x >> y)) return "counters click wants X Y (window pixels)";
      return counters.click_at(ctx_, x, y) ? "" : "no roofline point at " + std::to_string(x) + ", " + std::to_string(y);
    }
    size_t n = 0;
    if (!(in >> n) || (what != "kernel" && what != "point" && what != "operator"))
      return "counters wants kernel|point|operator N, or click X Y";
    bool ok = what == "kernel" ? counters.select_kernel(ctx_, n) : what == "point" ? counters.select_point(ctx_, n)
                                                                                   : counters.select_operator(ctx_, n);
    return ok ? "" : "no counters " + what + " " + std::to_string(n);
  }
  if (verb == "critical_path") return critical_path_command(in);
  if (verb == "memory") return memory_command(in);
  return "unknown command '" + verb + "'";
}

void AnalysisPanel::write_state(JsonWriter& w) const {
  w.begin_object();
  w.field("active", panel_tab_name(active_));
  w.key("latency");
  latency.write_state(w);
  w.key("patterns");
  patterns.write_state(w);
  w.key("idle");
  idle.write_state(w, &ctx_);
  w.key("breakdown");
  breakdown.write_state(w);
  w.key("insights");
  insights.write_state(w);
  w.key("counters");
  counters.write_state(w);
  w.key("critical_path");
  critical_path.write_state(w, ctx_);
  w.key("memory");
  memory.write_state(w, ctx_);
  w.end_object();
}

}  // namespace sl::views
