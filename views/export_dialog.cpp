#include "views/export_dialog.h"

#include <imgui.h>

#include <cstring>

#include "figures/cairo_output.h"
#include "core/present/time_axis.h"

namespace sl::views {
namespace {

void copy_to(char* buffer, size_t size, const std::string& text) {
  std::strncpy(buffer, text.c_str(), size - 1);
  buffer[size - 1] = 0;
}

float default_width(int theme) { return fig::make_style(fig::FigureTheme(theme)).width; }

}  // namespace

std::optional<ExportWhat> figure_of_tab(PanelTab tab) {
  switch (tab) {
    case PanelTab::Latency: return ExportWhat::Latency;
    case PanelTab::Breakdowns: return ExportWhat::Breakdown;
    case PanelTab::Idle: return ExportWhat::Idle;
    case PanelTab::Counters: return ExportWhat::Roofline;
    case PanelTab::CriticalPath: return ExportWhat::CriticalPath;
    case PanelTab::Memory: return ExportWhat::Memory;
    default: return std::nullopt;
  }
}

void ExportDialog::open(const std::string& trace_path, PanelTab tab) {
  open_ = true;
  what_ = figure_of_tab(tab).value_or(ExportWhat::Screen);
  if (defaults_for_ != trace_path) {  // a new trace: fresh defaults; the same one keeps the user's edits
    defaults_for_ = trace_path;
    copy_to(path_, sizeof path_, default_figure_path(trace_path));
    copy_to(title_, sizeof title_, fig::trace_title(trace_path));
  }
}

ExportRequest ExportDialog::request(ExportWhat what, const std::string& path, const std::string& trace_path) const {
  ExportRequest q;
  q.what = what, q.path = path;
  q.theme = fig::FigureTheme(theme);
  q.width = float(width);
  q.scale = scale;
  q.title = defaults_for_ == trace_path && title_[0] ? std::string(title_) : fig::trace_title(trace_path);
  return q;
}

const ExportResult& ExportDialog::run(const ExportSources& sources, const ExportRequest& request) {
  last_ = export_figure(sources, request);
  return *last_;
}

void ExportDialog::draw_what(const ExportSources& sources, PanelTab tab) {
  ImGui::TextDisabled("Figure");
  if (sources.diff) {  // a diff tab has one figure: both runs, the change colours and the top changes
    what_ = ExportWhat::Diff;
    int what = int(what_);
    ImGui::RadioButton(export_what_label(ExportWhat::Diff), &what, what);
    ImGui::SameLine();
    const diff::TraceDiff& d = sources.diff->diff;
    auto [a, b] = d.aligned ? diff_window(*d.aligned, sources.diff->view_start_a, sources.diff->view_end_a)
                            : std::pair<TimeNs, TimeNs>{0, 0};
    if (b > a)
      ImGui::TextDisabled("%s – %s after the compared step's start", present::format_duration(double(a)).c_str(),
                          present::format_duration(double(b)).c_str());
    else
      ImGui::TextDisabled("the whole compared step");
    return;
  }
  auto [sel_a, sel_b] = sources.timeline.range_selection();
  std::optional<ExportWhat> analysis = figure_of_tab(tab);
  // An analysis figure is offered while its tab is open; the choice falls back when it closes.
  if (what_ != ExportWhat::Screen && what_ != ExportWhat::Selection && what_ != analysis) what_ = ExportWhat::Screen;
  int what = int(what_);
  ImGui::RadioButton(export_what_label(ExportWhat::Screen), &what, int(ExportWhat::Screen));
  auto [a, b] = visible_trace_range(sources.timeline.view_start(), sources.timeline.view_end(), sources.store.end_ns);
  ImGui::SameLine();
  ImGui::TextDisabled("%zu rows, %s – %s", sources.timeline.visible_tracks().size(), present::format_duration(double(a)).c_str(),
                      present::format_duration(double(b)).c_str());
  ImGui::BeginDisabled(sel_b <= sel_a);
  ImGui::RadioButton(export_what_label(ExportWhat::Selection), &what, int(ExportWhat::Selection));
  ImGui::EndDisabled();
  ImGui::SameLine();
  if (sel_b > sel_a)
    ImGui::TextDisabled("%s – %s", present::format_duration(double(sel_a)).c_str(), present::format_duration(double(sel_b)).c_str());
  else
    ImGui::TextDisabled("none: Shift-drag on the timeline");
  if (analysis) ImGui::RadioButton(export_what_label(*analysis), &what, int(*analysis));
  what_ = ExportWhat(what);
}

void ExportDialog::draw_settings() {
  ImGui::Separator();
  ImGui::InputText("File", path_, sizeof path_);
  fig::Format format;
  bool known = fig::format_from_path(path_, format);
  ImGui::SameLine();
  if (known) ImGui::TextDisabled(format == fig::Format::Svg ? "SVG" : format == fig::Format::Pdf ? "PDF" : "PNG");
  else ImGui::TextColored(ImVec4(0.84f, 0.37f, 0, 1), "use .svg, .pdf or .png");
  ImGui::InputText("Title", title_, sizeof title_);
  const char* themes[] = {"light", "dark", "paper"};  // FigureTheme's order
  int before = theme;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  ImGui::Combo("Theme", &theme, themes, 3);
  if (theme != before && (width == 0 || width == int(default_width(before)))) width = int(default_width(theme));
  if (width == 0) width = int(default_width(theme));
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  ImGui::InputInt("Width (px)", &width, 40, 200);
  ImGui::BeginDisabled(!known || format != fig::Format::Png);
  ImGui::TextUnformatted("PNG scale");
  for (int s = 1; s <= 3; ++s) {
    ImGui::SameLine();
    ImGui::RadioButton((std::to_string(s) + "×").c_str(), &scale, s);
  }
  ImGui::SameLine();
  ImGui::TextDisabled("%d × %d px wide", width, scale);
  ImGui::EndDisabled();
}

void ExportDialog::draw(const ExportSources& sources, const std::string& trace_path, PanelTab tab) {
  if (!open_) return;
  ImGui::SetNextWindowSize(ImVec2(ImGui::GetFontSize() * 38, 0), ImGuiCond_Appearing);
  ImGuiIO& io = ImGui::GetIO();
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x / 2, io.DisplaySize.y / 3), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::Begin("Export figure", &open_, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
    draw_what(sources, tab);
    draw_settings();
    ImGui::Separator();
    // On the UI thread: a figure is bounded by the element budget, so this takes ~0.1 s.
    if (ImGui::Button("Export")) run(sources, request(what_, path_, trace_path));
    ImGui::SameLine();
    if (ImGui::Button("Close")) open_ = false;
    if (last_) {
      ImGui::PushTextWrapPos(0);
      if (last_->ok) ImGui::TextColored(ImVec4(0, 0.45f, 0.3f, 1), "%s (%.0f ms)", last_->summary().c_str(), last_->ms);
      else ImGui::TextColored(ImVec4(0.84f, 0.2f, 0, 1), "%s", last_->summary().c_str());
      ImGui::PopTextWrapPos();
    }
  }
  ImGui::End();
}

void ExportDialog::write_state(JsonWriter& w, const TraceStore* store) const {
  if (!last_) {
    w.null();
    return;
  }
  const ExportResult& r = *last_;
  w.begin_object().field("path", r.request.path).field("what", export_what_name(r.request.what)).field("ok", r.ok);
  w.field("error", r.error).field("elements", uint64_t(r.elements)).field("width", double(r.width));
  w.field("height", double(r.height)).field("ms", r.ms);
  w.field("start_ns", r.start).field("end_ns", r.end);
  w.field("slices", uint64_t(r.timeline.slices)).field("folded", uint64_t(r.timeline.folded));
  w.field("gaps", uint64_t(r.timeline.gaps)).field("fold_px", double(r.timeline.fold_px)).field("truncated", r.timeline.truncated);
  w.key("rows").begin_array();
  for (uint32_t t : r.rows) w.value(store && t < store->tracks.size() ? fig::track_label(*store, t) : std::to_string(t));
  w.end_array().key("row_tracks").begin_array();
  for (uint32_t t : r.rows) w.value(uint64_t(t));
  w.end_array().end_object();
}

}  // namespace sl::views
