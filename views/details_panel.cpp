#include "views/details_panel.h"

#include <imgui.h>

#include <utility>

#include "core/analysis/launch_stats.h"
#include "core/names/short_names.h"
#include "core/names/track_names.h"
#include "core/present/time_axis.h"

namespace sl::views {
namespace {

void link_button(const TraceStore& store, TimelineView& timeline, const char* role, SliceRef target, int id) {
  ImGui::PushID(id);
  std::string label = std::string(role) + ": " + (*store_short_names(store))(store.name(target)) + "  (" +
                      present::format_duration(double(store.dur(target))) + ")";
  if (ImGui::SmallButton(label.c_str())) timeline.select(target, true);
  ImGui::PopID();
}

// After a GPU activity's "launched by": how long after its launch it started, and for a CUDA
// graph's launch why that is not a launch latency.
void launch_note(const TraceStore& store, SliceRef activity, SliceRef launch) {
  ImGui::SameLine();
  ImGui::TextDisabled("launch → start %s", present::format_duration(double(store.start(activity) - store.start(launch))).c_str());
  if (analysis::is_graph_launch_name(store.name(launch)))  // one call, many kernels: its latency is not this kernel's
    ImGui::TextDisabled("replayed by a CUDA graph launch (one call for %zu activities); the launch statistics measure "
                        "kernel → kernel inside the graph",
                        store.activities_of(launch).size());
}

}  // namespace

void draw_details_panel(const TraceStore& store, TimelineView& timeline) {
  SliceRef s = timeline.selected();
  if (!s.valid()) {
    ImGui::TextDisabled("Click a slice to see its details. Shift-drag selects a time range.");
    return;
  }
  const present::SliceChildren& children = timeline.selection_children();
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(std::string(store.name(s)).c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::BeginTable("timing", 2, ImGuiTableFlags_SizingFixedFit)) {
    auto row = [](const char* k, const std::string& v) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", k);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(v.c_str());
    };
    row("category", std::string(store.cat(s)));
    row("start", present::format_duration(double(store.start(s))) + " from trace start");
    row("duration", present::format_duration(double(store.dur(s))));
    row("self time", present::format_duration(double(children.self_time())));
    row("track", track_full_name(store, s.track) + "  (" + track_raw_ids(store, s.track) + ")");
    if (auto c = store.correlation_id(s)) row("correlation", std::to_string(*c));
    ImGui::EndTable();
  }
  int id = 0;
  // Links in their far end's time order, each pair once (a launch's flow to its kernel is its
  // "runs" link), the first few of each kind: a CUDA graph's launch runs thousands of kernels.
  using Kind = present::SliceLinks::Kind;
  const present::SliceLinks& links = timeline.selection_links();
  for (auto [kind, role] : {std::pair{Kind::LaunchedBy, "launched by"}, {Kind::Runs, "runs"}, {Kind::FlowFrom, "flow from"},
                            {Kind::FlowTo, "flow to"}}) {
    for (uint32_t i : links.first(kind)) {
      SliceRef far = links.all()[i].far();
      link_button(store, timeline, role, far, id++);
      if (kind == Kind::LaunchedBy) launch_note(store, s, far);
    }
    if (links.count(kind) > links.first(kind).size())
      ImGui::TextDisabled("… %zu more", links.count(kind) - links.first(kind).size());
  }
  if (children.count() > 0 && ImGui::CollapsingHeader(("Children (" + std::to_string(children.count()) + ")").c_str())) {
    for (SliceRef child : children.first()) link_button(store, timeline, "child", child, id++);
    if (children.count() > children.first().size()) ImGui::TextDisabled("… %zu more", children.count() - children.first().size());
  }
  if (ImGui::CollapsingHeader("Parents", ImGuiTreeNodeFlags_DefaultOpen)) {
    int depth = 0;
    for (SliceRef p = store.parent(s); p.valid() && depth < 64; p = store.parent(p), ++depth)
      link_button(store, timeline, "in", p, id++);
    if (depth == 0) ImGui::TextDisabled("top level");
  }
  uint32_t args = store.slices(s.track).args[s.index];
  if (args != kNone && ImGui::CollapsingHeader("Args", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (ImGui::BeginTable("args", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingStretchProp)) {
      for (const auto& [k, v] : store.decode_args(args)) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", k.c_str());
        ImGui::TableNextColumn();
        ImGui::PushTextWrapPos(0);
        ImGui::TextUnformatted(v.c_str());
        ImGui::PopTextWrapPos();
      }
      ImGui::EndTable();
    }
  }
}

}  // namespace sl::views
