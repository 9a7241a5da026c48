#include "views/critical_path_view.h"

#include <imgui.h>

#include "core/names/short_names.h"
#include "core/present/critical_path_palette.h"
#include "core/present/time_axis.h"
#include "core/text/format.h"

namespace sl::views {

using namespace sl::analysis;

namespace {

constexpr const char* kAnnotation = "ProfilerStep";  // the GUI's iteration; the CLI takes --annotation

ImU32 im_color(present::Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); }

std::string duration(TimeNs ns) { return present::format_duration(double(ns)); }

std::string percent_of(TimeNs part, TimeNs whole) { return whole > 0 ? human::percent(100.0 * double(part) / double(whole)) : "-"; }

std::string stream_label(const TraceStore& store, SliceRef s) {
  const Track& t = store.tracks[s.track];
  return t.kind == TrackKind::GpuStream ? "stream " + std::to_string(t.stream) : "";
}

}  // namespace

void CriticalPathView::compute(ViewContext& ctx) {
  computed_ = true;
  const EventTable& table = ctx.model.table();
  instances_ = annotation_instances(table, kAnnotation);
  CriticalPathOptions options;
  options.annotation = kAnnotation;
  if (instance_ >= 0) options.instance = instance_;
  path_ = critical_path(table, options);
  contributors_ = path_.valid ? path_contributors(table, path_) : std::vector<PathContributor>{};
  slice_count_ = path_.valid ? critical_path_slices(table, path_).size() : 0;
  ops_ = path_ops(table, contributors_);
  gaps_ = path_.valid && ctx.model.report.causes ? path_gpu_gaps(table, path_, *ctx.model.report.causes)
                                                 : std::vector<PathGpuGap>{};
  fill_tables(ctx);
  opened_ = -1;
  update_overlay(ctx);
}

void CriticalPathView::fill_tables(ViewContext& ctx) {
  const TraceStore& store = ctx.store;
  auto names = store_short_names(store);
  auto name_of = [&](SliceRef s) { return (*names)(store.name(s)); };
  contributor_table_.clear();
  contributor_table_.headers = {"slice", "kind", "on path", "share", "starts at"};
  for (const PathContributor& c : contributors_)
    contributor_table_.add_row({DataTable::text(name_of(c.slice)), DataTable::text(present::bound_by_label(int(c.bound_by))),
                                DataTable::number(duration(c.time), double(c.time)),
                                DataTable::number(percent_of(c.time, path_.length), double(c.time)),
                                DataTable::number(duration(store.start(c.slice)), double(store.start(c.slice)))});
  op_table_.clear();
  op_table_.headers = {"op", "instances", "on path", "share"};
  for (const PathOp& op : ops_)
    op_table_.add_row({DataTable::text((*names)(op.name)), DataTable::number(std::to_string(op.count), double(op.count)),
                       DataTable::number(duration(op.time), double(op.time)),
                       DataTable::number(percent_of(op.time, path_.length), double(op.time))});
  gap_table_.clear();
  gap_table_.headers = {"GPU waits", "for", "idle cause", "before"};
  for (const PathGpuGap& g : gaps_)
    gap_table_.add_row({DataTable::number(duration(g.length()), double(g.length())),
                        DataTable::text(present::bound_by_label(int(g.bound_by))),
                        DataTable::text(g.cause >= 0 ? present::idle_cause_label(g.cause) : "(no idle gap: the stream was busy)"),
                        DataTable::text(stream_label(store, g.kernel) + ": " + name_of(g.kernel))});
}

void CriticalPathView::update_overlay(ViewContext& ctx) {
  PathOverlay overlay;
  if (overlay_ && path_.valid) {
    const EventTable& table = ctx.model.table();
    overlay.slices = critical_path_slices(table, path_);
    for (const CriticalPathLink& l : critical_path_links(table, path_))
      overlay.links.push_back({l.from, l.to, l.from_ts, l.to_ts, im_color(present::bound_by_rgb(int(l.bound_by)))});
    // Deep Python stacks start folded; the path's ops sit below the fold, so their rows open.
    for (SliceRef s : overlay.slices)
      if (ctx.timeline.folded(s.track) && ctx.store.slices(s.track).depth[s.index] >= TimelineView::kFoldedLevels)
        ctx.timeline.set_folded(s.track, false);
  }
  ctx.timeline.set_path(std::move(overlay));
}

void CriticalPathView::set_overlay(ViewContext& ctx, bool on) {
  overlay_ = on;
  if (!computed_) compute(ctx);
  else update_overlay(ctx);
}

bool CriticalPathView::pick_instance(ViewContext& ctx, int64_t instance) {
  if (!computed_) compute(ctx);
  if (instance < 0 || instance >= int64_t(instances_.size())) return false;
  instance_ = instance;
  compute(ctx);
  return path_.valid;
}

bool CriticalPathView::open_contributor(ViewContext& ctx, size_t index) {
  if (!computed_) compute(ctx);
  if (index >= contributors_.size()) return false;
  SliceRef s = contributors_[index].slice;
  show_on_timeline(ctx.timeline, s, ctx.store.start(s), ctx.store.end(s));
  opened_ = int(index);
  contributor_table_.reveal(opened_);
  return true;
}

bool CriticalPathView::whole_trace() const { return path_.annotation.empty() || size_t(path_.instance) >= instances_.size(); }

std::string CriticalPathView::instance_name(const TraceStore& store) const {
  return whole_trace() ? "Whole trace" : std::string(store.name(instances_[size_t(path_.instance)]));
}

TimeNs CriticalPathView::instance_length(const TraceStore& store) const {
  return whole_trace() ? store.end_ns : store.dur(instances_[size_t(path_.instance)]);
}

void CriticalPathView::draw_header(ViewContext& ctx) {
  ImGui::TextUnformatted("Iteration");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  std::string current = path_.valid ? instance_name(ctx.store) : "-";
  if (ImGui::BeginCombo("##instance", current.c_str())) {
    for (size_t i = 0; i < instances_.size(); ++i) {
      std::string label = std::string(ctx.store.name(instances_[i])) + "  (" + duration(ctx.store.dur(instances_[i])) + ")";
      if (ImGui::Selectable(label.c_str(), path_.valid && int64_t(i) == path_.instance)) pick_instance(ctx, int64_t(i));
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  bool on = overlay_;
  if (ImGui::Checkbox("Show on timeline", &on)) set_overlay(ctx, on);
  help_marker("Outlines the path's slices on the timeline, draws its links (launch, kernel to kernel, waits) as arrows "
              "in their category's colour and dims everything else.");
  if (!path_.valid) return;
  ImGui::SameLine();
  ImGui::Text("  path %s of %s iteration · %zu slices", duration(path_.length).c_str(),
              duration(instance_length(ctx.store)).c_str(), slice_count_);
}

// One stacked bar of the shares, then a row per category with its colour.
void CriticalPathView::draw_shares() {
  section_title("Where the path's time goes");
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  float width = std::max(200.f, ImGui::GetContentRegionAvail().x - 8), height = ImGui::GetFontSize() * 1.4f;
  ImGui::Dummy(ImVec2(width, height));
  float x = p.x;
  for (const CriticalPathShare& s : path_.summary) {
    float w = float(s.pct / 100.0) * width;
    if (w <= 0) continue;
    ImU32 c = im_color(present::bound_by_rgb(int(s.bound_by)));
    dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + w, p.y + height), c);
    if (w > 44) dl->AddText(ImVec2(x + 4, p.y + (height - ImGui::GetFontSize()) / 2), text_color_on(c), human::percent(s.pct).c_str());
    x += w;
  }
  if (!ImGui::BeginTable("shares", 4, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
  for (const char* h : {"category", "time", "edges", "share"}) ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const CriticalPathShare& s : path_.summary) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImVec2 q = ImGui::GetCursorScreenPos();
    float sw = ImGui::GetFontSize() * 0.8f;
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(q.x, q.y + 2), ImVec2(q.x + sw, q.y + 2 + sw), im_color(present::bound_by_rgb(int(s.bound_by))));
    ImGui::Dummy(ImVec2(sw, sw));
    ImGui::SameLine();
    ImGui::TextUnformatted(present::bound_by_label(int(s.bound_by)));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(duration(s.sum).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%llu", (unsigned long long)s.count);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(human::percent(s.pct).c_str());
  }
  ImGui::EndTable();
}

// Three columns: the longest contributors, then what would shorten the iteration: the ops on the
// path by time and the GPU's waits on it with their idle cause. A click goes there on the timeline.
void CriticalPathView::draw_tables(ViewContext& ctx) {
  float column = std::max(120.f, (ImGui::GetContentRegionAvail().x - 16) / 3), rows_h = ImGui::GetContentRegionAvail().y;
  ImGui::BeginChild("contributors", ImVec2(column, rows_h), false);
  section_title("Longest contributors (click: show on the timeline)");
  if (int clicked = contributor_table_.draw("contributor_table", 0, opened_); clicked >= 0) open_contributor(ctx, size_t(clicked));
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("ops", ImVec2(column, rows_h), false);
  section_title("What would shorten it: ops on the path by time");
  if (int clicked = op_table_.draw("op_table", 0, -1); clicked >= 0) {
    SliceRef s = ops_[size_t(clicked)].longest;
    show_on_timeline(ctx.timeline, s, ctx.store.start(s), ctx.store.end(s));
  }
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("gpu_waits", ImVec2(0, rows_h), false);
  section_title("... and the GPU's waits on the path: idle cause");
  if (gaps_.empty()) ImGui::TextDisabled("The GPU never waits on this path.");
  else if (int clicked = gap_table_.draw("gap_table", 0, -1); clicked >= 0) {
    const PathGpuGap& g = gaps_[size_t(clicked)];
    show_on_timeline(ctx.timeline, g.kernel, g.start, g.end);
  }
  ImGui::EndChild();
}

void CriticalPathView::draw(ViewContext& ctx) {
  if (!computed_) compute(ctx);
  draw_header(ctx);
  // Without ProfilerStep the note says the path is of the whole trace; else it says why none.
  if (!path_.note.empty()) {
    ImGui::Spacing();
    ImGui::TextWrapped("%s%s", path_.valid ? "" : "No critical path: ", path_.note.c_str());
  }
  if (!path_.valid) return;
  draw_shares();
  ImGui::Spacing();
  draw_tables(ctx);
}

void CriticalPathView::write_state(JsonWriter& w, const ViewContext& ctx) const {
  w.begin_object().field("computed", computed_).field("valid", path_.valid).field("note", path_.note);
  w.field("overlay", overlay_).field("instance", path_.instance).field("instances", uint64_t(instances_.size()));
  w.field("start_ns", path_.start).field("end_ns", path_.end).field("length_ns", path_.length);
  w.key("summary").begin_array();
  for (const CriticalPathShare& s : path_.summary)
    w.begin_object().field("bound_by", bound_by_name(s.bound_by)).field("sum_ns", s.sum).field("count", s.count).field("pct", s.pct).end_object();
  w.end_array();
  w.key("contributors").begin_array();
  for (size_t i = 0; i < contributors_.size() && i < 20; ++i)
    w.begin_object().field("name", ctx.store.name(contributors_[i].slice)).field("start_ns", ctx.store.start(contributors_[i].slice))
        .field("time_ns", contributors_[i].time).end_object();
  w.end_array();
  w.key("ops").begin_array();
  for (size_t i = 0; i < ops_.size() && i < 10; ++i)
    w.begin_object().field("name", ops_[i].name).field("time_ns", ops_[i].time).field("count", ops_[i].count).end_object();
  w.end_array();
  w.key("gpu_gaps").begin_array();
  for (const PathGpuGap& g : gaps_)
    w.begin_object().field("start_ns", g.start).field("end_ns", g.end)
        .field("cause", g.cause >= 0 ? std::string(idle_cause_name(IdleCause(g.cause))) : std::string()).end_object();
  w.end_array();
  w.field("opened", opened_).end_object();
}

}  // namespace sl::views
