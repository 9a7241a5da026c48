#include "views/diff_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/present/diff_palette.h"
#include "core/present/time_axis.h"

namespace sl::views {
namespace {

ImU32 im(present::Rgb c) { return IM_COL32(c.r, c.g, c.b, 255); }
ImU32 change_color(TimeNs a, TimeNs b) { return im(present::change_rgb(a, b)); }

std::string ms(double ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  return buf;
}

std::string signed_ms(double ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%+.3f ms", ns / 1e6);
  return buf;
}

double first_step_start(const TraceStore& s) { return s.iterations.empty() ? 0.0 : double(s.iterations.front().start); }

}  // namespace

DiffView::DiffView(Workspace& a, Workspace& b) : a_(a), b_(b) {
  default_offset_ = offset_ = first_step_start(*b.store()) - first_step_start(*a.store());
  // The diff reads both stores, which stay put while this view lives (a diff tab never reloads).
  thread_ = std::thread([this] {
    std::unique_ptr<diff::TraceDiff> d;
    std::string err;
    try {
      d = std::make_unique<diff::TraceDiff>(diff::trace_diff(*a_.store(), *b_.store(), {}));
    } catch (const std::exception& e) {
      err = e.what();
    }
    std::lock_guard lock(mutex_);
    finished_ = std::move(d);
    finished_error_ = err;
    computing_ = false;
  });
  // One timeline, A on its own clock (the view clock), B under it moved back by the offset.
  auto add = [&](Workspace& ws, const char* role, ImU32 band) {
    TimelineSource source;
    source.store = ws.store(), source.band = band;
    source.label = std::string(role) + ": " + std::filesystem::path(ws.path()).filename().string();
    uint32_t i = timeline_.add_source(std::move(source));
    if (ws.model() && ws.model()->report.causes) timeline_.set_idle_gaps(i, idle_gap_marks(*ws.model()->report.causes));
  };
  add(a_, "A (control)", IM_COL32(160, 200, 228, 255));
  add(b_, "B (test)", IM_COL32(244, 208, 150, 255));
  timeline_.show_legend = false;  // the header has the legend
  timeline_.sticky_source_headers = true;  // whatever a row selection scrolls to, both runs stay named
  timeline_.show_all();
  set_offset(offset_);
}

DiffView::~DiffView() {
  if (thread_.joinable()) thread_.join();
}

bool DiffView::poll() {
  if (computing_ || diff_ || !error_.empty()) return false;
  std::lock_guard lock(mutex_);
  if (thread_.joinable()) thread_.join();
  error_ = finished_error_.empty() && !finished_ ? "the diff produced nothing" : finished_error_;
  diff_ = std::move(finished_);
  if (diff_ && diff_->aligned) {
    const diff::IterationPair& p = diff_->aligned->chosen;
    if (p.a || p.b) default_offset_ = offset_ = double(p.start_b) - double(p.start_a);
    error_.clear();
  } else if (diff_) {
    error_ = "no aligned diff (Sightline mode) for these traces";
  }
  set_offset(offset_);
  rebuild_rows();
  build_colors();
  return true;
}

void DiffView::build_colors() {
  tints_a_ = {}, tints_b_ = {};
  if (!diff_ || !diff_->aligned) return;
  tints_a_ = present::ChangeTints(*a_.store(), *diff_->aligned, false);
  tints_b_ = present::ChangeTints(*b_.store(), *diff_->aligned, true);
  timeline_.set_color_override(kA, [this](SliceRef r) { return tint(*a_.store(), tints_a_, r); });
  timeline_.set_color_override(kB, [this](SliceRef r) { return tint(*b_.store(), tints_b_, r); });
}

std::optional<ImU32> DiffView::tint(const TraceStore& s, const present::ChangeTints& tints, SliceRef r) const {
  if (!diff_colors) return std::nullopt;
  return im(tints.of(s, r));
}

void DiffView::rebuild_rows() {
  rows_.clear();
  selected_row_ = -1;
  if (!diff_ || !diff_->aligned) return;
  const auto& ops = diff_->aligned->ops;
  std::map<std::string, size_t> by_name;
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const diff::AlignedOp& op = ops[i];
    if (!filter_.empty()) {
      std::string lower = op.name;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      if (lower.find(filter_) == std::string::npos) continue;
    }
    Row* row = nullptr;
    if (grouped_) {
      auto [it, added] = by_name.try_emplace(op.name, rows_.size());
      if (added) rows_.emplace_back().name = op.name;
      row = &rows_[it->second];
    } else {
      row = &rows_.emplace_back();
      row->name = op.name;
    }
    row->dur_a += op.dur_a, row->dur_b += op.dur_b, ++row->count;
    row->self_a += op.self_a, row->self_b += op.self_b;
    row->ops.push_back(i);
  }
  sort_rows();
}

void DiffView::sort_rows() {
  auto value = [&](const Row& r) -> double {
    switch (sort_column_) {
      case 1: return double(r.dur_a);
      case 2: return double(r.dur_b);
      case 4: return double(r.delta()) / double(std::max<TimeNs>(r.dur_a, 1));
      case 5: return double(r.self_delta());
      case 6: return double(r.count);
      default: return double(r.delta());
    }
  };
  std::stable_sort(rows_.begin(), rows_.end(), [&](const Row& x, const Row& y) {
    if (sort_column_ == 0) return sort_ascending_ ? x.name < y.name : x.name > y.name;
    return sort_ascending_ ? value(x) < value(y) : value(x) > value(y);
  });
}

void DiffView::set_grouped(bool grouped) {
  grouped_ = grouped;
  rebuild_rows();
}

void DiffView::set_filter(const std::string& text) {
  filter_ = text;
  std::transform(filter_.begin(), filter_.end(), filter_.begin(), ::tolower);
  std::snprintf(filter_text_, sizeof filter_text_, "%s", text.c_str());
  rebuild_rows();
}

void DiffView::set_offset(double ns) {
  offset_ = ns;
  timeline_.set_shift(kB, -TimeNs(std::llround(ns)));  // B's clock - offset = the view (A's) clock
}

bool DiffView::select_row(size_t i) {
  if (i >= rows_.size() || !diff_) return false;
  selected_row_ = int(i);
  const Row& row = rows_[i];
  const auto& ops = diff_->aligned->ops;
  std::vector<SliceRef> ha, hb;
  uint32_t lead = row.ops.front();  // the occurrence that changed most is framed
  for (uint32_t k : row.ops) {
    ha.push_back(ops[k].a), hb.push_back(ops[k].b);
    if (std::abs(ops[k].delta()) > std::abs(ops[lead].delta())) lead = k;
  }
  timeline_.set_highlights(kA, ha);
  timeline_.set_highlights(kB, hb);
  const diff::AlignedOp& op = ops[lead];
  release_matched_rows();
  matched_a_ = SourceSlice{kA, op.a}, matched_b_ = SourceSlice{kB, op.b};
  timeline_.frame(matched_b_);  // unfolds B's row (and opens its process and source)
  timeline_.select(matched_a_, true);  // the same for A's
  // One window that shows both occurrences, B shifted by the offset.
  const TraceStore &sa = *a_.store(), &sb = *b_.store();
  double t0 = std::min(double(sa.start(op.a)), double(sb.start(op.b)) - offset_);
  double t1 = std::max(double(sa.start(op.a) + sa.dur(op.a)), double(sb.start(op.b) + sb.dur(op.b)) - offset_);
  double pad = std::max(100.0, (t1 - t0) * 0.25);
  timeline_.zoom_to(t0 - pad, t1 + pad);
  show_matched_rows(matched_a_, matched_b_);
  return true;
}

// Both matched rows in view at once, which one vertical scroll cannot promise: B's rows lie under
// all of A's. While the row is selected, each side's matched track is pinned at the top of its
// source (right under its "A (control)" / "B (test)" header, so the two read as a pair), and the
// view scrolls so both show. When A's other rows still push B's out of the rows area, A's process
// groups collapse to their headers (the pinned track stays; a click on a header opens it again)
// rather than leaving B's half of the comparison off screen. The next selection undoes what this
// did, never what the user did (a track the user pinned stays pinned).
void DiffView::show_matched_rows(SourceSlice a, SourceSlice b) {
  for (SourceSlice m : {a, b})
    if (!timeline_.pinned(m.source, m.ref.track)) {
      timeline_.set_pinned(m.source, m.ref.track, true);
      pinned_for_row_.emplace_back(m.source, m.ref.track);
    }
  if (timeline_.scroll_to_show({a, b})) return;
  const TraceStore& sa = *a_.store();
  for (uint32_t p = 0; p < sa.processes.size(); ++p)
    if (!timeline_.collapsed(kA, p)) {
      timeline_.set_collapsed(kA, p, true);
      collapsed_for_row_.push_back(p);
    }
  if (!timeline_.scroll_to_show({a, b})) timeline_.scroll_to_show({a});  // still too tall (a very deep stack): A's
}

void DiffView::release_matched_rows() {
  for (auto [source, track] : pinned_for_row_) timeline_.set_pinned(source, track, false);
  for (uint32_t p : collapsed_for_row_) timeline_.set_collapsed(kA, p, false);
  pinned_for_row_.clear(), collapsed_for_row_.clear();
}

void DiffView::draw(ImVec2 size) {
  // The View menu sets A's own timeline (the tab's workspace); the diff's timeline takes its display settings.
  const TimelineView& own = *a_.timeline();
  timeline_.theme = own.theme, timeline_.color_mode = own.color_mode;
  timeline_.show_idle = own.show_idle, timeline_.show_flows = own.show_flows;
  ImGui::BeginChild("diffview", size, false, ImGuiWindowFlags_NoScrollbar);
  draw_header();
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float bottom = std::max(240.f, avail.y * 0.38f);
  draw_timeline(ImVec2(avail.x, std::max(240.f, avail.y - bottom)));
  float table_width = avail.x * 0.62f;
  ImGui::BeginChild("difftable", ImVec2(table_width, 0), true);
  draw_table();
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("diffsummary", ImVec2(0, 0), true);
  draw_summary();
  ImGui::EndChild();
  ImGui::EndChild();
}

void DiffView::draw_header() {
  ImGui::TextUnformatted("Offset B - A");
  ImGui::SameLine();
  double offset_ms = offset_ / 1e6;
  ImGui::SetNextItemWidth(140);
  if (ImGui::InputDouble("ms##offset", &offset_ms, 0.1, 1.0, "%.3f", ImGuiInputTextFlags_EnterReturnsTrue)) set_offset(offset_ms * 1e6);
  ImGui::SameLine();
  if (ImGui::Button("Align iteration starts")) set_offset(default_offset_);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Offset so that the compared iterations (first ProfilerStep pair) start together");
  ImGui::SameLine();
  ImGui::Checkbox("Colour by change", &diff_colors);
  if (diff_colors) {
    // Short labels keep the header on one line; the full definition is the tooltip.
    auto swatch = [](present::Change change) {
      ImGui::SameLine();
      ImGui::BeginGroup();
      ImVec2 p = ImGui::GetCursorScreenPos();
      float h = ImGui::GetTextLineHeight();
      ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + h, p.y + 3 + h - 2),
                                                im(present::change_swatch(change)), 2);
      ImGui::Dummy(ImVec2(h, h));
      ImGui::SameLine(0, 4);
      ImGui::TextUnformatted(present::change_short_label(change));
      ImGui::EndGroup();
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", present::change_label(change));
    };
    for (int c = 0; c < present::kChangeCount - 1; ++c) swatch(present::Change(c));
  }
  if (computing_) {
    ImGui::SameLine();
    ImGui::TextDisabled("  computing the diff...");
  } else if (!error_.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.84f, 0.37f, 0, 1), "  %s", error_.c_str());
  } else if (diff_ && diff_->aligned) {
    const diff::AlignedDiff& d = *diff_->aligned;
    auto step = [](std::optional<int64_t> n) { return n ? "ProfilerStep#" + std::to_string(*n) : std::string("whole trace"); };
    ImGui::SameLine();
    ImGui::TextDisabled("  %s vs %s, %.0f%% matched", step(d.chosen.a).c_str(), step(d.chosen.b).c_str(),
                        d.matched_fraction * 100);
  }
  if (diff_ && !diff_->gpu_warning.empty())  // a banner: times from two GPUs are not one change
    ImGui::TextColored(ImVec4(0.84f, 0.37f, 0, 1), "Warning: %s", diff_->gpu_warning.c_str());
}

void DiffView::draw_timeline(ImVec2 size) {
  ImGui::BeginChild("tl", size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  timeline_.draw(ImGui::GetContentRegionAvail());
  ImGui::EndChild();
}

void DiffView::draw_table() {
  if (!diff_) {
    ImGui::TextDisabled(computing_ ? "Aligning the two runs..." : "No diff.");
    return;
  }
  ImGui::SetNextItemWidth(240);
  if (ImGui::InputTextWithHint("##filter", "filter operators", filter_text_, sizeof filter_text_)) set_filter(filter_text_);
  ImGui::SameLine();
  bool grouped = grouped_;
  if (ImGui::Checkbox("Group by operator", &grouped)) set_grouped(grouped);
  ImGui::SameLine();
  ImGui::TextDisabled("%zu rows", rows_.size());
  ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Sortable |
                          ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("aligned", 7, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("operator", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("A");
  ImGui::TableSetupColumn("B");
  ImGui::TableSetupColumn("delta", ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("delta %");
  ImGui::TableSetupColumn("self delta", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
  ImGui::TableSetupColumn("n");
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty && specs->SpecsCount > 0) {
    sort_column_ = specs->Specs[0].ColumnIndex;
    sort_ascending_ = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
    sort_rows();
    selected_row_ = -1;
    specs->SpecsDirty = false;
  }
  ImGuiListClipper clipper;
  clipper.Begin(int(rows_.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const Row& r = rows_[size_t(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(i);
      // The label is drawn apart: operator names such as "## forward ##" would read as ImGui IDs.
      if (ImGui::Selectable("##row", selected_row_ == i, ImGuiSelectableFlags_SpanAllColumns)) select_row(size_t(i));
      if (ImGui::IsItemHovered() && !grouped_) ImGui::SetTooltip("%s", diff_->aligned->ops[r.ops.front()].path.c_str());
      ImGui::SameLine(0, 0);
      ImGui::TextUnformatted(r.name.c_str());
      ImGui::PopID();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ms(double(r.dur_a)).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ms(double(r.dur_b)).c_str());
      ImGui::TableNextColumn();
      ImU32 c = change_color(r.dur_a, r.dur_b);
      ImGui::PushStyleColor(ImGuiCol_Text, present::change_of(r.dur_a, r.dur_b) == present::Change::Same ? ImGui::GetColorU32(ImGuiCol_Text) : c);
      ImGui::TextUnformatted(signed_ms(double(r.delta())).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%+.1f%%", 100.0 * double(r.delta()) / double(std::max<TimeNs>(r.dur_a, 1)));
      ImGui::PopStyleColor();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(signed_ms(double(r.self_delta())).c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%u", r.count);
    }
  }
  ImGui::EndTable();
}

void DiffView::draw_summary() {
  if (!diff_ || !diff_->summary_a || !diff_->summary_b) {
    ImGui::TextDisabled("Run summary: waiting for the diff.");
    return;
  }
  const diff::RunSummary &a = *diff_->summary_a, &b = *diff_->summary_b;
  ImGui::TextUnformatted("Run summary (A = control, B = test)");
  if (!ImGui::BeginTable("summary", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("metric", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("A");
  ImGui::TableSetupColumn("B");
  ImGui::TableSetupColumn("B - A");
  ImGui::TableHeadersRow();
  auto row = [](const char* name, const std::string& x, const std::string& y, const std::string& d) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(name);
    for (const std::string* s : {&x, &y, &d}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(s->c_str());
    }
  };
  auto time_row = [&](const char* name, double x, double y) { row(name, ms(x), ms(y), signed_ms(y - x)); };
  auto pct_row = [&](const char* name, double x, double y) {
    char bx[32], by[32], bd[32];
    std::snprintf(bx, sizeof bx, "%.1f%%", x), std::snprintf(by, sizeof by, "%.1f%%", y), std::snprintf(bd, sizeof bd, "%+.1f pt", y - x);
    row(name, bx, by, bd);
  };
  auto count_row = [&](const char* name, uint64_t x, uint64_t y) {
    char d[32];
    std::snprintf(d, sizeof d, "%+lld", (long long)y - (long long)x);
    row(name, std::to_string(x), std::to_string(y), d);
  };
  if (a.steady_step_time && b.steady_step_time) {  // the headline: warm-up step excluded
    std::string name = "mean step, steady state (steps " + diff::iteration_list_text(a.steady_iterations) + " vs " +
                       diff::iteration_list_text(b.steady_iterations) + ")";
    time_row(name.c_str(), *a.steady_step_time, *b.steady_step_time);
  }
  if (a.step_time && b.step_time) time_row("step time (compared)", double(*a.step_time), double(*b.step_time));
  if (a.mean_step_time && b.mean_step_time) time_row("mean step time (all steps)", *a.mean_step_time, *b.mean_step_time);
  count_row("iterations", a.iterations, b.iterations);
  if (a.temporal.valid && b.temporal.valid) {
    pct_row("GPU compute", a.temporal.compute_pct, b.temporal.compute_pct);
    pct_row("GPU non-compute", a.temporal.non_compute_pct, b.temporal.non_compute_pct);
    pct_row("GPU idle", a.temporal.idle_pct, b.temporal.idle_pct);
  }
  time_row("idle total (all streams)", double(a.idle_total), double(b.idle_total));
  for (int c = 0; c < analysis::kIdleCauseCount; ++c) {
    std::string name = "  idle: ";
    name.append(analysis::idle_cause_name(analysis::IdleCause(c)));
    time_row(name.c_str(), double(a.idle_by_cause[size_t(c)]), double(b.idle_by_cause[size_t(c)]));
  }
  count_row("kernels", a.kernels, b.kernels);
  count_row("launch pairs", a.launch_pairs, b.launch_pairs);
  time_row("launch delay (median)", a.launch_delay_median, b.launch_delay_median);
  time_row("launch → start (median)", a.launch_to_start_median, b.launch_to_start_median);
  ImGui::EndTable();
}

void DiffView::write_state(JsonWriter& w) const {
  w.begin_object();
  w.field("ready", diff_ != nullptr).field("error", error_).field("offset_ns", offset_).field("grouped", grouped_);
  w.field("rows", uint64_t(rows_.size())).field("selected_row", int64_t(selected_row_));
  // The headline and the banner, as the view shows them (tests compare with `sightline diff`).
  w.field("gpu_warning", diff_ ? diff_->gpu_warning : std::string());
  w.key("steady_state");
  if (diff_ && diff_->summary_a && diff_->summary_b && diff_->summary_a->steady_step_time && diff_->summary_b->steady_step_time) {
    const diff::RunSummary &a = *diff_->summary_a, &b = *diff_->summary_b;
    w.begin_object().field("iterations_a", diff::iteration_list_text(a.steady_iterations));
    w.field("iterations_b", diff::iteration_list_text(b.steady_iterations));
    w.field("mean_step_a_ns", *a.steady_step_time).field("mean_step_b_ns", *b.steady_step_time).end_object();
  } else {
    w.null();
  }
  w.key("selected");
  if (selected_row_ >= 0) {
    const Row& r = rows_[size_t(selected_row_)];
    w.begin_object().field("name", r.name).field("dur_a_ns", r.dur_a).field("dur_b_ns", r.dur_b);
    w.field("self_a_ns", r.self_a).field("self_b_ns", r.self_b).field("count", uint64_t(r.count)).end_object();
  } else {
    w.null();
  }
  // Each run's window on its own clock (B's is A's plus the offset) and its highlighted slices.
  auto side = [&](const char* name, Workspace& ws, uint32_t source) {
    const TraceStore& s = *ws.store();
    double shift = double(timeline_.source(source).shift);
    w.key(name).begin_object().field("path", ws.path()).field("view_start_ns", timeline_.view_start() - shift);
    w.field("view_end_ns", timeline_.view_end() - shift).field("shift_ns", timeline_.source(source).shift);
    const std::vector<SliceRef>& highlights = timeline_.highlights(source);
    w.key("highlighted").begin_array();
    for (size_t i = 0; i < highlights.size() && i < 2000; ++i) {
      SliceRef h = highlights[i];
      w.begin_object().field("track", h.track).field("index", h.index).field("name", s.name(h)).field("start_ns", s.start(h));
      w.field("dur_ns", s.dur(h)).end_object();
    }
    w.end_array().field("highlights", uint64_t(highlights.size()));
    // Where its rows start on screen (its header), last frame: B's lie below A's on the one timeline.
    float y = timeline_.source_screen_y(source);
    w.field("header_y", std::isnan(y) ? -1.0 : double(y));
    // The selected row's matched track (framed, pinned while selected) and its first lane's y, last frame.
    SourceSlice m = source == kA ? matched_a_ : matched_b_;
    float my = m.valid() ? timeline_.track_screen_y(source, m.ref.track) : NAN;
    w.field("matched_track", m.valid() ? int64_t(m.ref.track) : int64_t(-1)).field("matched_track_y", std::isnan(my) ? -1.0 : double(my));
    w.field("matched_pinned", m.valid() && timeline_.pinned(source, m.ref.track)).end_object();
  };
  TimelineView::Rect rows = timeline_.rows_rect();
  w.key("rows_rect").begin_array().value(double(rows.x0)).value(double(rows.y0)).value(double(rows.x1)).value(double(rows.y1)).end_array();
  side("a", a_, kA);
  side("b", b_, kB);
  w.end_object();
}

}  // namespace sl::views
