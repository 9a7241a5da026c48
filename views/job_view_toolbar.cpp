// A job tab's toolbar (clocks, alignment, collective stepping, the selection's summary) and
// its export of the rank overview figure.
#include "views/job_view.h"

#include <algorithm>
#include <cstdio>

#include "core/present/time_axis.h"
#include "figures/cairo_output.h"
#include "figures/ranks_figure.h"
#include "views/job_view_text.h"

namespace sl::views {

void JobView::draw_toolbar() {
  const auto& a = overview_.collectives;
  TimeNs largest = 0;
  for (TimeNs o : a.offsets) largest = std::max(largest, o < 0 ? -o : o);
  // A fleet tab counts its summarised ranks (their stores load on expand).
  ImGui::Text("%zu ranks (%zu %s) · %zu collective instances · clocks %s (largest offset %s)", job_->ranks.size(),
              fleet_ ? overview_.ranks.size() : job_->loaded_count(), fleet_ ? "summarised" : "loaded", a.instances.size(),
              a.aligned ? "aligned on collectives" : "raw", ms(largest).c_str());
  if (ImGui::IsItemHovered() && !a.offsets.empty()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted("Clock offsets estimated from collective ends (added to each rank's clock):");
    for (size_t i = 0; i < a.offsets.size() && i < a.ranks.size(); ++i)
      ImGui::Text("rank %lld: %s", (long long)a.ranks[i], present::format_duration(double(a.offsets[i])).c_str());
    ImGui::EndTooltip();
  }
  if (rank_loading_ >= 0) {
    ImGui::SameLine();
    ImGui::TextDisabled("· loading rank %lld…", (long long)rank_loading_);
  }
  ImGui::SameLine();
  bool aligned = a.aligned;
  ImGui::BeginDisabled(realigning_);
  if (ImGui::Checkbox(realigning_ ? "Align clocks (working...)" : "Align clocks", &aligned))
    realign(aligned ? analysis::Align::Collectives : analysis::Align::None);
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (ImGui::SmallButton("Export figure...")) {
    if (!export_path_[0]) std::snprintf(export_path_, sizeof export_path_, "%s-ranks.pdf", title_.c_str());
    export_message_.clear();
    ImGui::OpenPopup("Export the rank overview");
  }
  draw_export_popup();
  ImGui::SameLine();
  if (ImGui::SmallButton("Show all")) timeline_.show_all();
  bool any = !a.instances.empty();
  ImGui::BeginDisabled(!any);
  if (ImGui::SmallButton("< Prev")) step_instance(-1);
  ImGui::SameLine();
  if (ImGui::SmallButton("Next >")) step_instance(1);
  ImGui::SameLine();
  if (ImGui::SmallButton("Worst skew")) select_worst_skew();
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (selected_ >= 0) {
    const auto& in = a.instances[size_t(selected_)];
    ImGui::Text("%s #%llu (group %s): skew %s, last rank %lld%s%s%s", in.name.c_str(), (unsigned long long)in.instance,
                in.group.c_str(), ms(in.skew).c_str(), (long long)in.last_rank, in.last_cause.empty() ? "" : " after ",
                analysis::cause_phrase(in.last_cause).c_str(), in.missing.empty() ? "" : " · some ranks missing");
  } else {
    ImGui::TextDisabled(any ? "Click a collective in a row (or a kernel of an expanded rank) to link it across ranks."
                            : "No collectives matched across ranks.");
  }
}

std::string JobView::export_figure(const std::string& path) const {
  if (!job_) return "the job is not loaded";
  fig::Format format;
  if (!fig::format_from_path(path, format)) return "the file must end in .svg, .pdf or .png";
  fig::RanksFigureOptions options;
  options.start = TimeNs(std::max(0.0, timeline_.view_start())), options.end = TimeNs(timeline_.view_end());
  options.title = title_;
  fig::Scene scene;
  fig::RanksFigureStats stats;
  std::string error;
  if (!fig::ranks_figure(*job_, overview_, fig::make_style(fig::FigureTheme::Paper), options, scene, stats, error)) return error;
  if (!fig::write_scene(scene, path, format, 1, error)) return "cannot write " + error;
  return "";
}

void JobView::draw_export_popup() {
  if (!ImGui::BeginPopup("Export the rank overview")) return;
  ImGui::TextUnformatted("The rank overview of the visible time window with the straggler bars, as `render DIR --view ranks`.");
  ImGui::SetNextItemWidth(420);
  ImGui::InputText("file (.pdf, .svg, .png)", export_path_, sizeof export_path_);
  if (ImGui::Button("Save")) {
    std::string error = export_figure(export_path_);
    export_message_ = error.empty() ? std::string("wrote ") + export_path_ : error;
  }
  if (!export_message_.empty()) ImGui::TextUnformatted(export_message_.c_str());
  ImGui::EndPopup();
}

}  // namespace sl::views
