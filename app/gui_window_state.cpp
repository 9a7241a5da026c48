// The views' state as JSON (state_json, for tests and the script's `state`), with the last frame's
// screen layout.
#include "app/gui.h"

#include <imgui.h>

#include <string>

#include "app/gui_tabs.h"
#include "core/names/track_names.h"
#include "core/text/json_writer.h"
#include "views/analysis_model.h"

namespace sl::gui {
namespace {

using views::Workspace;

// Screen geometry of the last frame (pixels from the window's top left), for the layout tests.
void write_layout(JsonWriter& w, Workspace& ws, views::TimelineView& tl) {
  const TraceStore& s = *ws.store();
  auto rect = [&](const char* key, views::TimelineView::Rect r) {
    w.key(key).begin_array().value(double(r.x0)).value(double(r.y0)).value(double(r.x1)).value(double(r.y1)).end_array();
  };
  w.key("layout").begin_object();
  w.field("window_width", double(ImGui::GetIO().DisplaySize.x)).field("window_height", double(ImGui::GetIO().DisplaySize.y));
  w.field("panel_collapsed", panel_collapsed(ws));
  rect("legend_rect", tl.legend_rect());
  rect("rows_rect", tl.rows_rect());
  auto [data_start, data_end] = tl.data_range();
  w.field("data_start_ns", data_start).field("data_end_ns", data_end);
  uint32_t folded = 0;
  for (uint32_t t = 0; t < s.tracks.size(); ++t) folded += tl.folded(t);
  w.field("folded_tracks", folded);
  w.key("gpu_rows").begin_array();  // GPU streams with work and where their first lane was drawn
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    if (s.tracks[t].kind == TrackKind::GpuStream && s.tracks[t].gpu_work)
      w.begin_object().field("track", t).field("y", double(tl.track_screen_y(t))).end_object();
  w.end_array();
  // The rows in display order under their headers ("Pinned", a process group's label): which
  // group a track is shown in (by what it holds, display_groups), with its label and raw ids.
  w.key("row_groups").begin_array();
  bool open = false;
  for (const views::DisplayRow& d : tl.display_order()) {
    if (d.source != 0) continue;
    if (d.kind == views::DisplayRow::PinnedHeader || d.kind == views::DisplayRow::ProcessHeader) {
      if (open) w.end_array().end_object();
      w.begin_object().field("header", d.kind == views::DisplayRow::PinnedHeader ? std::string("Pinned") : process_display_name(s, d.process));
      w.key("rows").begin_array();
      open = true;
    } else if (d.kind == views::DisplayRow::Track && open) {
      w.begin_object().field("label", track_display_name(s, d.track)).field("ids", track_raw_ids(s, d.track)).end_object();
    }
  }
  if (open) w.end_array().end_object();
  w.end_array().end_object();
}

}  // namespace

std::string state_json(Workspace& ws, const std::function<void(JsonWriter&)>& extra) {
  JsonWriter w;
  w.begin_object();
  if (extra) extra(w);
  w.field("path", ws.path()).field("loading", ws.loading()).field("error", ws.error());
  w.field("source", trace_origin_name(ws.origin())).field("notice", ws.notice());
  if (views::TimelineView* tl = ws.timeline()) {
    const TraceStore& s = *ws.store();
    const views::TimelineStats& st = tl->stats();
    w.field("view_start_ns", tl->view_start()).field("view_end_ns", tl->view_end());
    w.field("events", s.counts.events);
    w.key("truncated");
    if (const std::optional<Truncation>& cut = s.issues.truncation)
      w.begin_object().field("byte_offset", cut->byte_offset).field("events", cut->events).field("banner", describe(*cut)).end_object();
    else
      w.null();
    const views::AnalysisModel* model = ws.model();
    w.field("gpu_warning", model ? model->report.gpu_warning : std::string());
    w.key("selected");
    if (tl->selected().valid()) {
      SliceRef sel = tl->selected();
      w.begin_object().field("name", s.name(sel)).field("start_ns", s.start(sel)).field("gpu", s.is_gpu(sel));
      w.field("track", sel.track).field("index", sel.index).field("dur_ns", s.dur(sel));
      SliceRef launch = s.is_gpu(sel) ? s.launch_of(sel) : SliceRef{};
      w.key("launch");
      launch.valid() ? w.value(s.name(launch)) : w.null();
      w.field("activities", uint64_t(s.activities_of(sel).size()));
      w.field("links", uint64_t(tl->selection_links().all().size())).end_object();
    } else {
      w.null();
    }
    // The slice under the mouse last frame (its tooltip): "" unless the script hovers one.
    views::SourceSlice hovered = tl->hovered();
    w.field("hovered", hovered.valid() && hovered.source == 0 ? std::string(s.name(hovered.ref)) : std::string());
    w.field("highlights", uint64_t(tl->highlights().size()));
    // The critical-path overlay's slices (all of them: a path has at most a few thousand), and
    // how many outlines and arrows the last frame drew.
    w.key("path_slices").begin_array();
    for (SliceRef p : tl->path_slices())
      w.begin_object().field("track", p.track).field("index", p.index).field("name", s.name(p)).field("start_ns", s.start(p))
          .field("dur_ns", s.dur(p)).end_object();
    w.end_array();
    w.field("path_outlined", st.path_outlined).field("path_links_drawn", st.path_links_drawn);
    w.field("flow_links_drawn", st.flow_links_drawn);
    // The highlighted slices themselves (capped), so tests can compare them with an analysis.
    w.key("highlighted").begin_array();
    for (size_t i = 0; i < tl->highlights().size() && i < 20000; ++i) {
      SliceRef h = tl->highlights()[i];
      w.begin_object().field("track", h.track).field("index", h.index).field("name", s.name(h)).field("start_ns", s.start(h));
      w.field("dur_ns", s.dur(h)).end_object();
    }
    w.end_array();
    w.key("view");
    ws.panel() ? ws.panel()->write_state(w) : void(w.null());
    w.field("rows_drawn", st.rows_drawn).field("slices_drawn", st.slices_drawn).field("folded_blocks", st.folded_blocks);
    w.field("gaps_drawn", st.gaps_drawn).field("draw_commands", st.draw_commands);
    w.key("gaps_per_track").begin_object();
    for (uint32_t t = 0; t < s.tracks.size(); ++t)
      if (uint32_t n = tl->gaps_visible_on(t)) w.field(std::to_string(t), n);
    w.end_object();
    write_layout(w, ws, *tl);
  }
  w.end_object();
  return w.str();
}

}  // namespace sl::gui
