#include "views/idle_view.h"

#include <imgui.h>

#include <algorithm>
#include <map>

#include "core/names/short_names.h"
#include "core/present/time_axis.h"

namespace sl::views {

using namespace sl::analysis;

std::vector<uint32_t> gaps_longest_first(const IdleCauses& causes, int64_t stream, IdleCause cause) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < causes.gaps.size(); ++i)
    if (causes.gaps[i].stream == stream && causes.gaps[i].cause == cause) out.push_back(i);
  std::stable_sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) { return causes.gaps[a].length() > causes.gaps[b].length(); });
  return out;
}

namespace {

const char* cause_label(IdleCause c) { return present::idle_cause_label(int(c)); }

ImU32 category_color(IdleCategory c) {
  switch (c) {
    case IdleCategory::HostWait: return IM_COL32(86, 100, 140, 255);
    case IdleCategory::KernelWait: return IM_COL32(150, 205, 195, 255);
    case IdleCategory::Other: return IM_COL32(160, 160, 160, 255);
  }
  return 0;
}

// One horizontal stacked bar; returns the index of the clicked segment or -1.
int stacked_bar(const char* id, ImVec2 size, const std::vector<std::pair<double, ImU32>>& parts,
                const std::vector<std::string>& tips, int highlighted) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton(id, size);
  double total = 0;
  for (auto& [v, c] : parts) total += v;
  int clicked = -1;
  float x = p.x;
  ImVec2 mouse = ImGui::GetIO().MousePos;
  for (size_t i = 0; i < parts.size(); ++i) {
    float w = total > 0 ? float(parts[i].first / total) * size.x : 0;
    if (w <= 0) continue;
    ImVec2 a(x, p.y), b(x + w, p.y + size.y);
    dl->AddRectFilled(a, b, parts[i].second);
    bool over = ImGui::IsItemHovered() && mouse.x >= a.x && mouse.x < b.x;
    if (over || int(i) == highlighted) dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 2.f);
    if (over) {
      ImGui::SetTooltip("%s", tips[i].c_str());
      if (ImGui::IsItemClicked()) clicked = int(i);
    }
    if (w > 40) {
      char pct[16];
      std::snprintf(pct, sizeof pct, "%.0f%%", parts[i].first / total * 100);
      dl->AddText(ImVec2(a.x + 4, a.y + (size.y - ImGui::GetFontSize()) / 2), text_color_on(parts[i].second), pct);
    }
    x += w;
  }
  return clicked;
}

}  // namespace

bool IdleView::pick(ViewContext& ctx, int64_t stream, IdleCause cause) {
  if (!ctx.model.report.causes) return false;
  auto gaps = gaps_longest_first(*ctx.model.report.causes, stream, cause);
  if (gaps.empty()) return false;
  picked_ = true;
  stream_ = stream, cause_ = cause, gaps_ = std::move(gaps);
  table_.clear();
  table_.headers = {"#", "length", "start", "ends with"};
  const EventTable& t = ctx.model.table();
  for (size_t i = 0; i < gaps_.size(); ++i) {
    const IdleGap& g = ctx.model.report.causes->gaps[gaps_[i]];
    std::string next = g.next >= 0 ? (*store_short_names(ctx.store))(t.name(t.rows[size_t(g.next)])) : "";
    table_.add_row({DataTable::number(std::to_string(i + 1), double(i)), DataTable::number(present::format_duration(double(g.length())), double(g.length())),
                    DataTable::number(present::format_duration(double(g.start)), double(g.start)), DataTable::text(next)});
  }
  go_to(ctx, 0);
  return true;
}

void IdleView::go_to(ViewContext& ctx, size_t i) {
  if (i >= gaps_.size()) return;
  cursor_ = i;
  const IdleGap& g = ctx.model.report.causes->gaps[gaps_[i]];
  SliceRef next = g.next >= 0 ? ctx.model.table().rows[size_t(g.next)].ref : SliceRef{};
  show_on_timeline(ctx.timeline, next, g.start, g.end);
  table_.reveal(int(i));
}

void IdleView::step(ViewContext& ctx, int direction) {
  if (gaps_.empty()) return;
  size_t n = gaps_.size();
  go_to(ctx, (cursor_ + n + (direction < 0 ? n - 1 : 1)) % n);
}

void IdleView::draw_stream(ViewContext& ctx, int64_t stream, float bar_w) {
  const IdleCauses& causes = *ctx.model.report.causes;
  std::vector<std::pair<double, ImU32>> parts;
  std::vector<std::string> tips;
  std::vector<IdleCause> which;
  TimeNs idle = 0;
  for (const IdleCauseRow& r : causes.rows)
    if (r.stream == stream) idle += r.idle;
  int highlighted = -1;
  for (const IdleCauseRow& r : causes.rows) {
    if (r.stream != stream) continue;
    if (picked_ && stream_ == stream && cause_ == r.cause) highlighted = int(parts.size());
    parts.push_back({double(r.idle), idle_cause_color(int(r.cause))});
    char tip[256];
    std::snprintf(tip, sizeof tip, "%s: %s in %llu gaps (%.1f%% of the stream's idle time)\nclick: step through them, longest first",
                  cause_label(r.cause), present::format_duration(double(r.idle)).c_str(), (unsigned long long)r.count, r.share * 100);
    tips.push_back(tip);
    which.push_back(r.cause);
  }
  ImGui::AlignTextToFramePadding();
  ImGui::Text("stream %lld", (long long)stream);
  ImGui::SameLine(ImGui::GetFontSize() * 6);
  // Share of the idle window (the temporal breakdown's per-stream idle_pct: same window, same sum).
  const TimeNs window = causes.window.end - causes.window.start;
  if (window > 0) ImGui::TextDisabled("%9s idle, %.0f%%", present::format_duration(double(idle)).c_str(), 100.0 * double(idle) / double(window));
  else ImGui::TextDisabled("%9s idle", present::format_duration(double(idle)).c_str());
  ImGui::SameLine(ImGui::GetFontSize() * 14);
  ImGui::PushID(int(stream));
  int clicked = stacked_bar("causes", ImVec2(bar_w, ImGui::GetFrameHeight()), parts, tips, highlighted);
  if (clicked >= 0) pick(ctx, stream, which[size_t(clicked)]);
  // HTA's categories for the same stream, beside it.
  std::vector<std::pair<double, ImU32>> hta;
  std::vector<std::string> hta_tips;
  if (ctx.model.report.idle)
    for (const IdleBreakdownRow& r : *ctx.model.report.idle) {
      if (r.stream != stream) continue;
      hta.push_back({double(r.idle), category_color(r.category)});
      hta_tips.push_back(std::string(idle_category_name(r.category)) + ": " + present::format_duration(double(r.idle)) + " (HTA categories)");
    }
  ImGui::SameLine(0, 24);
  stacked_bar("hta", ImVec2(bar_w * 0.5f, ImGui::GetFrameHeight()), hta, hta_tips, -1);
  ImGui::PopID();
}

void IdleView::draw(ViewContext& ctx) {
  if (!ctx.model.report.causes || ctx.model.report.causes->gaps.empty()) {
    ImGui::TextDisabled("No idle time on the GPU streams of this trace.");
    return;
  }
  const IdleCauses& causes = *ctx.model.report.causes;
  std::vector<int64_t> streams;
  for (const IdleCauseRow& r : causes.rows)
    if (std::find(streams.begin(), streams.end(), r.stream) == streams.end()) streams.push_back(r.stream);
  float avail = ImGui::GetContentRegionAvail().x;
  float left_w = avail * (picked_ ? 0.62f : 1.f);
  ImGui::BeginChild("bars", ImVec2(left_w, 0));
  float bar_w = std::max(120.f, (left_w - ImGui::GetFontSize() * 16) / 1.5f);
  ImGui::SameLine(ImGui::GetFontSize() * 14);
  ImGui::TextDisabled("idle causes (Sightline) — click a cause");
  ImGui::SameLine(ImGui::GetFontSize() * 14 + bar_w + 24);
  ImGui::TextDisabled("HTA categories");
  ImGui::NewLine();
  for (int64_t s : streams) draw_stream(ctx, s, bar_w);
  ImGui::Spacing();
  // Legends.
  // Ten causes do not fit one line of a narrow panel: a swatch that would pass the right edge
  // starts the next line.
  auto swatch = [](ImU32 c, const char* label) {
    const float h = ImGui::GetTextLineHeight();
    const float need = h + ImGui::GetStyle().ItemSpacing.x + ImGui::CalcTextSize(label).x;
    if (ImGui::GetCursorPosX() + need > ImGui::GetWindowContentRegionMax().x && ImGui::GetCursorPosX() > ImGui::GetStyle().WindowPadding.x + 1)
      ImGui::NewLine();
    ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + h, p.y + h), c);
    ImGui::Dummy(ImVec2(h, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
    ImGui::SameLine(0, 14);
  };
  for (int c = 0; c < kIdleCauseCount; ++c) swatch(idle_cause_color(c), cause_label(IdleCause(c)));
  ImGui::NewLine();
  swatch(category_color(IdleCategory::HostWait), "host_wait");
  swatch(category_color(IdleCategory::KernelWait), "kernel_wait");
  swatch(category_color(IdleCategory::Other), "other (HTA)");
  ImGui::NewLine();
  ImGui::EndChild();
  if (!picked_) return;
  ImGui::SameLine();
  ImGui::BeginChild("gaps", ImVec2(0, 0), true);
  const IdleGap& g = causes.gaps[gaps_[cursor_]];
  ImGui::Text("stream %lld · %s", (long long)stream_, cause_label(cause_));
  if (ImGui::ArrowButton("prev", ImGuiDir_Left)) step(ctx, -1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("next", ImGuiDir_Right)) step(ctx, 1);
  ImGui::SameLine();
  ImGui::Text("gap %zu of %zu · %s at %s", cursor_ + 1, gaps_.size(), present::format_duration(double(g.length())).c_str(),
              present::format_duration(double(g.start)).c_str());
  int clicked = table_.draw("gaps", 0, int(cursor_));
  if (clicked >= 0) go_to(ctx, size_t(clicked));
  ImGui::EndChild();
}

void IdleView::write_state(JsonWriter& w, const ViewContext* ctx) const {
  w.begin_object();
  w.field("picked", picked_);
  if (picked_ && ctx) {
    const IdleGap& g = ctx->model.report.causes->gaps[gaps_[cursor_]];
    w.field("stream", stream_).field("cause", idle_cause_name(cause_)).field("gaps", uint64_t(gaps_.size()));
    w.field("gap", uint64_t(cursor_)).field("gap_start_ns", g.start).field("gap_end_ns", g.end);
  }
  w.end_object();
}

}  // namespace sl::views
