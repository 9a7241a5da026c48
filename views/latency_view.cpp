#include "views/latency_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/names/short_names.h"
#include "core/present/time_axis.h"

namespace sl::views {

using namespace sl::analysis;

namespace {
const ImU32 kBar = IM_COL32(0, 114, 178, 200), kBarBrushed = IM_COL32(213, 94, 0, 230);
const ImU32 kQuantile = IM_COL32(60, 60, 60, 255), kCutoff = IM_COL32(204, 121, 167, 255);
}  // namespace

void LatencyView::recompute(ViewContext& ctx) {
  dirty_ = false;
  if (!ctx.model.report.launches) return;
  const LaunchStats& s = *ctx.model.report.launches;
  if (streams_.empty()) {  // filter choices, once per trace
    std::set<int64_t> st, it;
    for (const LaunchPair& p : s.pairs) {
      st.insert(ctx.model.table().rows[p.activity].stream);
      if (p.activity < ctx.model.iteration_of_row.size()) it.insert(ctx.model.iteration_of_row[p.activity]);
    }
    streams_.assign(st.begin(), st.end());
    iterations_.assign(it.begin(), it.end());
  }
  filter_.name = name_filter_;
  LatencyCutoffs cut{TimeNs(runtime_cutoff_us_ * 1000), TimeNs(delay_cutoff_us_ * 1000)};
  bins_ = bin_latency(ctx.model.table(), s, ctx.model.iteration_of_row, quantity_, filter_, cut);
  brush_first_ = 1, brush_last_ = 0;
  brushed_.clear();
  table_.clear();
}

void LatencyView::brush(ViewContext& ctx, size_t first, size_t last) {
  brush_first_ = first, brush_last_ = last;
  brushed_ = first <= last ? brushed_pairs(bins_, first, last) : std::vector<uint32_t>{};
  const LaunchStats& s = *ctx.model.report.launches;
  const EventTable& t = ctx.model.table();
  table_.headers = {"stream", "launch call", "launch delay", "launch to start", "GPU duration", "start", "kernel"};
  table_.clear();
  std::vector<SliceRef> refs;
  auto names = store_short_names(ctx.store);  // distinct across the trace, as in every view
  auto d = [](TimeNs v) { return DataTable::number(present::format_duration(double(v)), double(v)); };
  for (uint32_t i : brushed_) {
    const LaunchPair& p = s.pairs[i];
    const Row& k = t.rows[p.activity];
    refs.push_back(k.ref);
    table_.add_row({DataTable::number(std::to_string(k.stream), double(k.stream)), d(p.runtime), d(p.delay), d(p.to_start), d(p.gpu),
                    d(k.ts), DataTable::text((*names)(t.name(k)))});
  }
  ctx.timeline.set_highlights(std::move(refs));
}

void LatencyView::brush_range(ViewContext& ctx, double lo, double hi) {
  if (dirty_) recompute(ctx);
  auto [a, b] = bins_in_range(bins_, lo, hi);
  brush(ctx, a, b);
}

void LatencyView::draw_controls(ViewContext& ctx) {
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 11);
  if (ImGui::BeginCombo("##quantity", latency_quantity_label(quantity_))) {
    for (int q = 0; q < kLatencyQuantityCount; ++q)
      if (ImGui::Selectable(latency_quantity_label(LatencyQuantity(q)), int(quantity_) == q)) set_quantity(LatencyQuantity(q));
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  if (ImGui::RadioButton("linear", !log_counts_)) log_counts_ = false;
  ImGui::SameLine();
  if (ImGui::RadioButton("log counts", log_counts_)) log_counts_ = true;
  ImGui::SameLine(0, 20);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  if (ImGui::InputFloat("runtime cutoff µs", &runtime_cutoff_us_, 0, 0, "%.0f", ImGuiInputTextFlags_EnterReturnsTrue)) dirty_ = true;
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5);
  if (ImGui::InputFloat("delay cutoff µs", &delay_cutoff_us_, 0, 0, "%.0f", ImGuiInputTextFlags_EnterReturnsTrue)) dirty_ = true;
  ImGui::SameLine(0, 20);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  std::string stream_label = filter_.stream == -2 ? "all streams" : "stream " + std::to_string(filter_.stream);
  if (ImGui::BeginCombo("##stream", stream_label.c_str())) {
    if (ImGui::Selectable("all streams", filter_.stream == -2)) filter_.stream = -2, dirty_ = true;
    for (int64_t s : streams_)
      if (ImGui::Selectable(("stream " + std::to_string(s)).c_str(), filter_.stream == s)) filter_.stream = s, dirty_ = true;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  std::string it_label = filter_.iteration == -2 ? "all iterations" : filter_.iteration == -1 ? "outside steps" : "step " + std::to_string(filter_.iteration);
  if (ImGui::BeginCombo("##iteration", it_label.c_str())) {
    if (ImGui::Selectable("all iterations", filter_.iteration == -2)) filter_.iteration = -2, dirty_ = true;
    for (int64_t s : iterations_)
      if (ImGui::Selectable(s == -1 ? "outside steps" : ("step " + std::to_string(s)).c_str(), filter_.iteration == s))
        filter_.iteration = s, dirty_ = true;
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
  if (ImGui::InputTextWithHint("##kname", "kernel name contains", name_filter_, sizeof name_filter_)) dirty_ = true;
  if (dirty_) recompute(ctx);
  ImGui::Text("%llu launches", (unsigned long long)bins_.total);
  ImGui::SameLine(0, 16);
  ImGui::TextDisabled("median %s · p90 %s · p99 %s", present::format_duration(bins_.p50).c_str(), present::format_duration(bins_.p90).c_str(),
                      present::format_duration(bins_.p99).c_str());
  ImGui::SameLine(0, 16);
  ImGui::Text("short kernels %llu · runtime outliers %llu · launch-delay outliers %llu", (unsigned long long)bins_.short_kernels,
              (unsigned long long)bins_.runtime_outliers, (unsigned long long)bins_.launch_delay_outliers);
  help_marker("Short kernel: the launch call took no longer than the runtime cutoff and the kernel ran shorter than its launch call. "
              "Runtime outlier: launch call longer than the runtime cutoff. Launch-delay outlier: the kernel waited longer than the "
              "delay cutoff between the end of its launch call and its start on the GPU.");
  if (const auto& s = *ctx.model.report.launches; s.graph_launches) {
    ImGui::TextDisabled("%llu of these kernels were replayed by %llu CUDA graph launches (one call each, counted once): their "
                        "latency is launch → first kernel of the graph, then kernel → kernel inside the graph.",
                        (unsigned long long)s.graph_activities, (unsigned long long)s.graph_launches);
  }
}

void LatencyView::draw_histogram(ViewContext& ctx, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("hist", size);
  bool hovered = ImGui::IsItemHovered();
  const float left = 48, bottom = 34, top = 22, right = 12;
  ImVec2 a(p0.x + left, p0.y + top), b(p0.x + size.x - right, p0.y + size.y - bottom);
  ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_TableBorderLight);
  dl->AddRectFilled(a, b, ImGui::GetColorU32(ImGuiCol_FrameBg));
  size_t n = bins_.pairs.size();
  if (n == 0 || bins_.edges.size() < 2) {
    dl->AddText(ImVec2(a.x + 10, a.y + 10), text, "No launched kernels match the filters.");
    return;
  }
  double lx0 = std::log10(std::max(1.0, bins_.edges.front())), lx1 = std::log10(std::max(bins_.edges.back(), bins_.edges.front() * 1.0001 + 1));
  auto x_of = [&](double ns) { return a.x + float((std::log10(std::max(ns, 1.0)) - lx0) / (lx1 - lx0)) * (b.x - a.x); };
  double maxc = double(bins_.max_count());
  auto h_of = [&](double c) {
    if (c <= 0) return 0.f;
    double f = log_counts_ ? std::log10(1 + c) / std::log10(1 + maxc) : c / maxc;
    return float(f) * (b.y - a.y);
  };
  // Count gridlines and labels.
  for (int k = 1; k <= 4; ++k) {
    double c = log_counts_ ? std::pow(10.0, std::log10(1 + maxc) * k / 4) - 1 : maxc * k / 4;
    float y = b.y - h_of(c);
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), grid);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", c);
    dl->AddText(ImVec2(p0.x + 4, y - 7), text, buf);
  }
  // Decade ticks on the log x axis.
  for (int e = int(std::floor(lx0)); e <= int(std::ceil(lx1)); ++e) {
    for (int m : {1, 2, 5}) {
      double v = m * std::pow(10.0, e);
      if (std::log10(v) < lx0 - 1e-9 || std::log10(v) > lx1 + 1e-9) continue;
      float x = x_of(v);
      dl->AddLine(ImVec2(x, b.y), ImVec2(x, b.y + (m == 1 ? 6.f : 3.f)), text);
      if (m == 1 || lx1 - lx0 < 2.5) {
        std::string label = present::format_duration(v);
        dl->AddText(ImVec2(x - ImGui::CalcTextSize(label.c_str()).x / 2, b.y + 8), text, label.c_str());
      }
    }
  }
  std::string axis = std::string(latency_quantity_label(quantity_)) + " (log scale)";
  if (bins_.zeros) axis += ", " + std::to_string(bins_.zeros) + " at 0 in the first bar";
  dl->AddText(ImVec2((a.x + b.x - ImGui::CalcTextSize(axis.c_str()).x) / 2, b.y + 20), ImGui::GetColorU32(ImGuiCol_TextDisabled), axis.c_str());
  // Bars.
  int hover_bin = -1;
  ImVec2 mouse = ImGui::GetIO().MousePos;
  for (size_t i = 0; i < n; ++i) {
    float x0 = x_of(bins_.edges[i]), x1 = x_of(bins_.edges[i + 1]);
    if (hovered && mouse.x >= x0 && mouse.x < x1) hover_bin = int(i);
    bool in_brush = brush_first_ <= brush_last_ && i >= brush_first_ && i <= brush_last_;
    if (in_brush) dl->AddRectFilled(ImVec2(x0, a.y), ImVec2(x1, b.y), IM_COL32(213, 94, 0, 40));
    float h = h_of(double(bins_.pairs[i].size()));
    if (h > 0) dl->AddRectFilled(ImVec2(x0 + 1, b.y - std::max(h, 1.f)), ImVec2(x1 - 1, b.y), in_brush ? kBarBrushed : kBar);
  }
  // Quantiles and cutoffs.
  // Each label goes on the first text row (down from the top of the plot) where it overlaps no
  // label already placed, so close quantiles (median, p90, p99 often within a bin) stay readable.
  std::vector<float> row_end;
  float line_h = ImGui::GetTextLineHeight();
  auto vline = [&](double ns, ImU32 col, const std::string& label) {
    if (ns > bins_.edges.back()) return;
    float x = x_of(std::max(ns, bins_.edges.front()));  // a quantile of 0 sits on the first bar
    for (float y = a.y; y < b.y; y += 6) dl->AddLine(ImVec2(x, y), ImVec2(x, std::min(y + 3, b.y)), col, 1.5f);
    float w = ImGui::CalcTextSize(label.c_str()).x, lx = std::min(x + 3, b.x - w);
    size_t row = 0;
    while (row < row_end.size() && lx < row_end[row] + 6) ++row;
    if (row == row_end.size()) row_end.push_back(-1e9f);
    row_end[row] = lx + w;
    ImVec2 at(lx, a.y + 2 + float(row) * line_h);
    dl->AddRectFilled(ImVec2(at.x - 1, at.y), ImVec2(at.x + w + 1, at.y + line_h), ImGui::GetColorU32(ImGuiCol_FrameBg));
    dl->AddText(at, col, label.c_str());
  };
  vline(bins_.p50, kQuantile, "median " + present::format_duration(bins_.p50));
  vline(bins_.p90, kQuantile, "p90 " + present::format_duration(bins_.p90));
  vline(bins_.p99, kQuantile, "p99 " + present::format_duration(bins_.p99));
  if (quantity_ == LatencyQuantity::Runtime) vline(runtime_cutoff_us_ * 1000.0, kCutoff, "runtime cutoff");
  if (quantity_ == LatencyQuantity::LaunchDelay) vline(delay_cutoff_us_ * 1000.0, kCutoff, "delay cutoff");
  // Brushing: press on a bin, drag across others.
  if (hover_bin >= 0 && ImGui::IsItemClicked(ImGuiMouseButton_Left)) dragging_ = true, drag_anchor_ = size_t(hover_bin);
  if (dragging_) {
    float mx = std::clamp(mouse.x, a.x, b.x - 1);
    size_t cur = 0;
    for (size_t i = 0; i < n; ++i)
      if (mx >= x_of(bins_.edges[i])) cur = i;
    size_t lo = std::min(cur, drag_anchor_), hi = std::max(cur, drag_anchor_);
    if (lo != brush_first_ || hi != brush_last_) brush(ctx, lo, hi);
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) dragging_ = false;
  }
  if (hover_bin >= 0 && !dragging_) {
    ImGui::SetTooltip("%s – %s\n%zu kernels\nclick or drag to brush", present::format_duration(bins_.edges[size_t(hover_bin)]).c_str(),
                      present::format_duration(bins_.edges[size_t(hover_bin) + 1]).c_str(), bins_.pairs[size_t(hover_bin)].size());
  }
}

void LatencyView::draw(ViewContext& ctx) {
  if (!ctx.model.report.launches || ctx.model.report.launches->pairs.empty()) {
    ImGui::TextDisabled("This trace has no launch → kernel pairs (no correlated runtime calls), so there is no launch latency to show.");
    return;
  }
  if (dirty_) recompute(ctx);
  draw_controls(ctx);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float hist_w = std::max(300.f, avail.x * 0.55f);
  draw_histogram(ctx, ImVec2(hist_w, avail.y));
  ImGui::SameLine();
  ImGui::BeginGroup();
  if (brushed_.empty()) {
    ImGui::TextDisabled("Drag across the histogram to brush bins: their kernels are highlighted on the timeline and listed here.");
  } else {
    ImGui::Text("%zu kernels in %s – %s", brushed_.size(), present::format_duration(bins_.edges[brush_first_]).c_str(),
                present::format_duration(bins_.edges[brush_last_ + 1]).c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear")) {
      brush_first_ = 1, brush_last_ = 0, brushed_.clear(), table_.clear();
      ctx.timeline.set_highlights({});
    }
    int selected = -1;
    SliceRef sel = ctx.timeline.selected();
    for (size_t i = 0; i < brushed_.size() && sel.valid(); ++i)
      if (ctx.model.table().rows[ctx.model.report.launches->pairs[brushed_[i]].activity].ref == sel) selected = int(i);
    int clicked = table_.draw("brushed", 0, selected);
    if (clicked >= 0) {
      // Selecting the kernel frames it; the timeline draws its launch arrow for the selection.
      ctx.timeline.select(ctx.model.table().rows[ctx.model.report.launches->pairs[brushed_[size_t(clicked)]].activity].ref, true);
    }
  }
  ImGui::EndGroup();
}

void LatencyView::write_state(JsonWriter& w) const {
  w.begin_object();
  w.field("quantity", latency_quantity_key(quantity_)).field("total", bins_.total);
  w.field("p50_ns", bins_.p50).field("p90_ns", bins_.p90).field("p99_ns", bins_.p99);
  w.field("short_kernels", bins_.short_kernels).field("runtime_outliers", bins_.runtime_outliers);
  w.field("launch_delay_outliers", bins_.launch_delay_outliers);
  w.key("counts").begin_array();
  for (const auto& b : bins_.pairs) w.value(uint64_t(b.size()));
  w.end_array();
  w.key("edges_ns").begin_array();
  for (double e : bins_.edges) w.value(e);
  w.end_array();
  w.key("brushed_bins");
  if (brush_first_ <= brush_last_) w.begin_array().value(uint64_t(brush_first_)).value(uint64_t(brush_last_)).end_array();
  else w.null();
  w.field("brushed_kernels", uint64_t(brushed_.size()));
  w.end_object();
}

}  // namespace sl::views
