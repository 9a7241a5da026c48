#include "views/cupti_counters_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/names/short_names.h"
#include "core/present/series_palette.h"
#include "core/text/format.h"

namespace sl::views {

using namespace sl::analysis;

namespace {

// "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum" → "ffma": the table headers stay narrow.
std::string metric_header(const std::string& metric) {
  constexpr std::string_view prefix = "smsp__sass_thread_inst_executed_op_", suffix = "_pred_on.sum";
  std::string_view m = metric;
  if (m.starts_with(prefix) && m.ends_with(suffix)) return std::string(m.substr(prefix.size(), m.size() - prefix.size() - suffix.size()));
  return metric;
}

Cell optional_number(std::optional<double> v, std::string_view unit) {
  if (!v) return DataTable::number("—", -1);
  return DataTable::number(si(*v, unit), *v);
}

Cell seconds_cell(std::optional<double> seconds) {
  if (!seconds) return DataTable::number("—", -1);
  return DataTable::number(human::duration(*seconds * 1e9), *seconds);
}

Cell intensity_cell(std::optional<double> flops_per_byte) {
  if (!flops_per_byte) return DataTable::number("—", -1);
  return DataTable::number(human::number(*flops_per_byte), *flops_per_byte);
}

// Achieved FLOP/s as a share of the roof at the kernel's intensity, when both are known.
Cell roof_share_cell(const Roofline& r, const std::optional<RooflinePoint>& p) {
  if (!p) return DataTable::number("—", -1);
  std::optional<double> roof = attainable(r.peak, p->precision, p->intensity);
  if (!roof) return DataTable::number("—", -1);
  double pct = 100 * p->throughput / *roof;
  return DataTable::number(human::percent(pct), pct);
}

ImU32 group_color(const Roofline& r, size_t group, int alpha = 255) {
  present::Rgb c = r.groups[group].op == kOtherOperators ? present::rest_rgb() : present::series_rgb(group);
  return IM_COL32(c.r, c.g, c.b, alpha);
}

// The plot rectangle and its log-log mapping (as figures/roofline_figure.cpp).
struct PlotArea {
  ImVec2 min, max;
  RooflineAxes axes;
  float x_of(double v) const {
    return min.x + float((std::log10(v) - axes.x_lo) / (axes.x_hi - axes.x_lo)) * (max.x - min.x);
  }
  float y_of(double v) const {
    return max.y - float((std::log10(v) - axes.y_lo) / (axes.y_hi - axes.y_lo)) * (max.y - min.y);
  }
};

void draw_plot_axes(ImDrawList* dl, const PlotArea& p) {
  ImU32 grid = ImGui::GetColorU32(ImGuiCol_Border), text = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (int e = p.axes.x_lo; e <= p.axes.x_hi; ++e) {
    float x = p.x_of(std::pow(10.0, e));
    dl->AddLine(ImVec2(x, p.min.y), ImVec2(x, p.max.y), grid);
    std::string label = decade_label(e, false);
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(label.c_str()).x / 2, p.max.y + 2), text, label.c_str());
  }
  for (int e = p.axes.y_lo; e <= p.axes.y_hi; ++e) {
    float y = p.y_of(std::pow(10.0, e));
    dl->AddLine(ImVec2(p.min.x, y), ImVec2(p.max.x, y), grid);
    std::string label = decade_label(e, true);
    ImVec2 size = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(p.min.x - size.x - 4, y - size.y / 2), text, label.c_str());
  }
}

// As the figure: compute roofs from their ridge rightwards, labelled at the left edge (above the
// line, or under it at the plot's top) where neither the slope nor any point is; the DRAM slope
// labelled above its middle.
void draw_roofs(ImDrawList* dl, const PlotArea& p, const Roofline& r) {
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  float line_h = ImGui::GetTextLineHeight();
  double x_min = std::pow(10.0, p.axes.x_lo), x_max = std::pow(10.0, p.axes.x_hi);
  double y_min = std::pow(10.0, p.axes.y_lo), y_max = std::pow(10.0, p.axes.y_hi), top = 0;
  for (Precision q : drawn_roofs(r)) {
    double flops = *r.peak.flops[int(q)];
    top = std::max(top, flops);
    std::optional<double> ridge = r.peak.ridge(q);
    float x0 = ridge ? p.x_of(std::clamp(*ridge, x_min, x_max)) : p.min.x, y = p.y_of(flops);
    ImU32 c = q == Precision::Fp32 ? ink : muted;
    dl->AddLine(ImVec2(p.min.x, y), ImVec2(x0, y), ImGui::GetColorU32(ImGuiCol_Border));
    dl->AddLine(ImVec2(x0, y), ImVec2(p.max.x, y), c, 2);
    std::string label = std::string(precision_name(q)) + " " + si(flops, "FLOP/s");
    dl->AddText(ImVec2(p.min.x + 4, y - line_h - 1 < p.min.y ? y + 1 : y - line_h - 1), c, label.c_str());
  }
  if (!r.peak.bytes_per_s) return;
  double bw = *r.peak.bytes_per_s;
  double a = std::max(x_min, y_min / bw), b = std::min(x_max, std::min(top > 0 ? top : y_max, y_max) / bw);
  if (!(b > a)) return;
  ImVec2 from(p.x_of(a), p.y_of(a * bw)), to(p.x_of(b), p.y_of(b * bw));
  dl->AddLine(from, to, ink, 2);
  std::string label = "DRAM " + si(bw, "B/s");
  float w = ImGui::CalcTextSize(label.c_str()).x;
  float xm = std::max((from.x + to.x) / 2, p.min.x + w + 8), ym = from.y + (to.y - from.y) * (xm - from.x) / std::max(to.x - from.x, 1.f);
  dl->AddText(ImVec2(xm - w - 4, ym - line_h - 2), ink, label.c_str());
}

}  // namespace

void CuptiCountersView::build(const ViewContext& ctx) {
  built_ = true;
  if (!ctx.model.report.cupti) return;
  counters_ = &*ctx.model.report.cupti;
  const CuptiCounters& c = *counters_;
  roof_ = roofline(c, ctx.model.table());
  point_of_kernel_.assign(c.kernels.size(), -1);
  for (size_t i = 0; i < roof_.points.size(); ++i) point_of_kernel_[roof_.points[i].kernel] = int(i);
  auto names = store_short_names(ctx.store);

  kernel_table_.headers = {"kernel", "operator", "FLOPs", "DRAM bytes", "time", "FLOP/s", "FLOP/B", "of roof"};
  for (const std::string& m : c.metrics) kernel_table_.headers.push_back(metric_header(m));
  for (size_t i = 0; i < c.kernels.size(); ++i) {
    const CuptiKernelCounters& k = c.kernels[i];
    std::optional<RooflinePoint> point;
    if (point_of_kernel_[i] >= 0) point = roof_.points[size_t(point_of_kernel_[i])];
    std::vector<Cell> row = {DataTable::text((*names)(k.kernel)), DataTable::text(k.bottom_op),
                             optional_number(k.flops, ""), optional_number(k.dram_bytes, "B"), seconds_cell(k.seconds),
                             optional_number(per_second(k.flops, k.seconds), "FLOP/s"), intensity_cell(intensity(k.flops, k.dram_bytes)),
                             roof_share_cell(roof_, point)};
    for (const std::optional<double>& v : k.values) row.push_back(v ? DataTable::number(human::number(*v), *v) : DataTable::number("—", -1));
    kernel_table_.add_row(std::move(row));
  }
  op_table_.headers = {"operator", "kernels", "FLOPs", "DRAM bytes", "time", "FLOP/s", "FLOP/B"};
  for (const std::string& m : c.metrics) op_table_.headers.push_back(metric_header(m));
  for (const CuptiOperatorCounters& o : c.operators) {
    std::vector<Cell> row = {DataTable::text(o.op.empty() ? "(no operator)" : o.op),
                             DataTable::number(human::count(int64_t(o.kernels)), double(o.kernels)),
                             optional_number(o.flops, ""), optional_number(o.dram_bytes, "B"), seconds_cell(o.seconds),
                             optional_number(per_second(o.flops, o.seconds), "FLOP/s"), intensity_cell(intensity(o.flops, o.dram_bytes))};
    for (double v : o.sums) row.push_back(DataTable::number(human::number(v), v));
    op_table_.add_row(std::move(row));
  }
}

bool CuptiCountersView::select_kernel(ViewContext& ctx, size_t kernel) {
  if (!built_) build(ctx);
  if (!counters_ || kernel >= counters_->kernels.size()) return false;
  selected_kernel_ = int(kernel);
  selected_op_ = -1;
  if (operators_tab_) switch_tab_ = 3, operators_tab_ = false;
  kernel_table_.reveal(int(kernel));
  const CuptiKernelCounters& k = counters_->kernels[kernel];
  ctx.timeline.set_highlights({});
  show_on_timeline(ctx.timeline, ctx.model.table().rows[k.row].ref, k.ts, k.ts + k.dur);
  return true;
}

bool CuptiCountersView::select_point(ViewContext& ctx, size_t point) {
  if (!built_) build(ctx);
  if (point >= roof_.points.size()) return false;
  return select_kernel(ctx, roof_.points[point].kernel);
}

bool CuptiCountersView::select_operator(ViewContext& ctx, size_t row) {
  if (!built_) build(ctx);
  if (!counters_ || row >= counters_->operators.size()) return false;
  const std::string& op = counters_->operators[row].op;
  std::vector<SliceRef> kernels;
  const CuptiKernelCounters* first = nullptr;
  for (const CuptiKernelCounters& k : counters_->kernels)
    if (k.bottom_op == op) {
      kernels.push_back(ctx.model.table().rows[k.row].ref);
      if (!first) first = &k;
    }
  selected_op_ = int(row);
  selected_kernel_ = -1;
  if (!operators_tab_) switch_tab_ = 3, operators_tab_ = true;
  ctx.timeline.set_highlights(std::move(kernels));
  if (first) show_on_timeline(ctx.timeline, ctx.model.table().rows[first->row].ref, first->ts, first->ts + first->dur);
  return true;
}

void CuptiCountersView::draw_tables(ViewContext& ctx) {
  if (!ImGui::BeginTabBar("counter_tables")) return;
  ImGuiTabItemFlags kernels_flag = switch_tab_ && !operators_tab_ ? ImGuiTabItemFlags_SetSelected : 0;
  ImGuiTabItemFlags ops_flag = switch_tab_ && operators_tab_ ? ImGuiTabItemFlags_SetSelected : 0;
  if (ImGui::BeginTabItem("Kernels", nullptr, kernels_flag)) {
    if (!switch_tab_) operators_tab_ = false;
    int clicked = kernel_table_.draw("kernels", 0, selected_kernel_);
    if (clicked >= 0) select_kernel(ctx, size_t(clicked));
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("Operators", nullptr, ops_flag)) {
    if (!switch_tab_) operators_tab_ = true;
    if (op_table_.rows.empty()) ImGui::TextDisabled("Per-operator sums are computed in Sightline mode.");
    int clicked = op_table_.draw("operators", 0, selected_op_);
    if (clicked >= 0) select_operator(ctx, size_t(clicked));
    ImGui::EndTabItem();
  }
  if (switch_tab_ > 0) --switch_tab_;
  ImGui::EndTabBar();
}

void CuptiCountersView::draw_point_tooltip(const ViewContext& ctx, const RooflinePoint& p) const {
  const CuptiKernelCounters& k = counters_->kernels[p.kernel];
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
  ImGui::TextUnformatted((*store_short_names(ctx.store))(k.kernel).c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextDisabled("operator: %s", k.bottom_op.empty() ? "(none)" : k.bottom_op.c_str());
  ImGui::Text("%s FLOP (%s)  ·  %s DRAM  ·  %s", si(p.flops, "").c_str(), precision_name(p.precision), si(p.bytes, "B").c_str(),
              human::duration(p.seconds * 1e9).c_str());
  ImGui::Text("%s  ·  %s FLOP/B", si(p.throughput, "FLOP/s").c_str(), human::number(p.intensity).c_str());
  if (std::optional<double> roof = attainable(roof_.peak, p.precision, p.intensity))
    ImGui::Text("%.1f%% of the %s roof there (%s)", 100 * p.throughput / *roof, precision_name(p.precision), si(*roof, "FLOP/s").c_str());
  ImGui::TextDisabled("click: select it on the timeline");
  ImGui::EndTooltip();
}

bool CuptiCountersView::click_at(ViewContext& ctx, float x, float y) {
  int hit = point_at(drawn_, x, y, ImGui::GetFontSize() * 0.6f);
  return hit >= 0 && select_point(ctx, size_t(hit));
}

void CuptiCountersView::draw_roofline(ViewContext& ctx) {
  ImGui::TextUnformatted("Roofline");
  help_marker("Arithmetic intensity (FLOP per DRAM byte, log) against achieved FLOP/s (log), one point per kernel, "
              "coloured by operator. Roofs come from deviceProperties: numSms × FMA/clock/SM (by compute capability) × 2 × "
              "clockRate, and memoryBandwidth or 2 × memoryClockRate × memoryBusWidth / 8. Tensor cores are not counted.");
  ImGui::SameLine();
  std::string roofs;
  for (Precision q : drawn_roofs(roof_)) roofs += std::string(precision_name(q)) + " " + si(*roof_.peak.flops[int(q)], "FLOP/s") + "  ·  ";
  if (roof_.peak.bytes_per_s) roofs += "DRAM " + si(*roof_.peak.bytes_per_s, "B/s");
  if (!roofs.empty()) ImGui::TextDisabled("%s", roofs.c_str());
  else ImGui::TextWrapped("No roof: %s; %s.", roof_.peak.compute_note.c_str(), roof_.peak.memory_note.c_str());
  if (ImGui::TreeNode("How the roofs were derived")) {
    for (const std::string& line : roof_derivation(roof_.peak, drawn_roofs(roof_))) ImGui::BulletText("%s", line.c_str());
    ImGui::TreePop();
  }
  if (!roof_.note.empty()) ImGui::TextWrapped("%s", roof_.note.c_str());
  drawn_.clear();
  hovered_point_ = -1;
  if (roof_.points.empty()) return;
  ImVec2 avail = ImGui::GetContentRegionAvail();
  ImVec2 size(std::max(avail.x, 1.f), std::max(avail.y, 160.f));
  float pad_left = ImGui::CalcTextSize("100 G").x + 8, pad_bottom = ImGui::GetTextLineHeight() * 2.5f;
  ImVec2 origin = ImGui::GetCursorScreenPos();
  PlotArea p{ImVec2(origin.x + pad_left, origin.y + 4), ImVec2(origin.x + size.x - 8, origin.y + size.y - pad_bottom), roof_.axes};
  ImGui::InvisibleButton("roofline_plot", size);
  bool hovered = ImGui::IsItemHovered(), clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  draw_plot_axes(dl, p);
  draw_roofs(dl, p, roof_);
  ImU32 edge = ImGui::GetColorU32(ImGuiCol_Text);
  float radius = ImGui::GetFontSize() * 0.3f;
  for (const RooflinePoint& pt : roof_.points) {
    ImVec2 c(p.x_of(pt.intensity), p.y_of(pt.throughput));
    drawn_.push_back({c.x, c.y});
    bool selected = int(pt.kernel) == selected_kernel_;
    dl->AddCircleFilled(c, selected ? radius * 1.6f : radius, group_color(roof_, pt.group, 230));
    dl->AddCircle(c, selected ? radius * 1.6f : radius, edge, 0, selected ? 2.f : 1.f);
  }
  std::string titles = "x: arithmetic intensity (FLOP per DRAM byte)    y: achieved FLOP/s";
  dl->AddText(ImVec2((p.min.x + p.max.x - ImGui::CalcTextSize(titles.c_str()).x) / 2, p.max.y + ImGui::GetTextLineHeight() * 1.2f),
              ImGui::GetColorU32(ImGuiCol_TextDisabled), titles.c_str());
  dl->PopClipRect();
  if (!hovered) return;
  ImVec2 mouse = ImGui::GetMousePos();
  hovered_point_ = point_at(drawn_, mouse.x, mouse.y, ImGui::GetFontSize() * 0.6f);
  if (hovered_point_ < 0) return;
  draw_point_tooltip(ctx, roof_.points[size_t(hovered_point_)]);
  if (clicked) select_point(ctx, size_t(hovered_point_));
}

void CuptiCountersView::draw(ViewContext& ctx) {
  if (!built_) build(ctx);
  if (!counters_ || counters_->kernels.empty()) {
    ImGui::TextUnformatted("No CUPTI counters in this trace.");
    ImGui::TextDisabled("%s", counters_ && !counters_->note.empty() ? counters_->note.c_str()
                                                                    : "The counter analysis was not run on this trace.");
    ImGui::TextWrapped("Counters come from traces collected with the CUPTI range profiler (PyTorch: torch.profiler with "
                       "experimental_config=_ExperimentalConfig(profiler_metrics=[...])): each kernel is then one "
                       "cuda_profiler_range event whose args are its metric values.");
    return;
  }
  const CuptiCounters& c = *counters_;
  ImGui::Text("%zu kernels profiled, %zu metrics, %zu operators  ·  %s", c.kernels.size(), c.metrics.size(), c.operators.size(),
              roof_.has_device ? roof_.peak.name.c_str() : "no deviceProperties");
  help_marker("Each cuda_profiler_range is tied to the i-th kernel launch (by start), as HTA does. FLOPs: SASS FP "
              "instruction counts, FMA counted twice. DRAM bytes: dram__bytes_read.sum + dram__bytes_write.sum. Time: "
              "gpu__time_duration.sum (the ranges' own times are synthetic).");
  float left = ImGui::GetContentRegionAvail().x * 0.56f;
  ImGui::BeginChild("counter_tables_pane", ImVec2(left, 0), false);
  draw_tables(ctx);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("roofline_pane", ImVec2(0, 0), true);
  draw_roofline(ctx);
  ImGui::EndChild();
}

void CuptiCountersView::write_state(JsonWriter& w) const {
  w.begin_object();
  w.field("built", built_);
  w.field("kernels", uint64_t(counters_ ? counters_->kernels.size() : 0));
  w.field("operators", uint64_t(counters_ ? counters_->operators.size() : 0));
  w.field("note", counters_ ? counters_->note : std::string());
  w.field("roofline_note", roof_.note);
  w.key("kernel_rows").begin_array();
  if (counters_)
    for (const CuptiKernelCounters& k : counters_->kernels) {
      w.begin_object().field("kernel", k.kernel).field("operator", k.bottom_op);
      w.key("flops"), k.flops ? w.value(*k.flops) : w.null();
      w.end_object();
    }
  w.end_array();
  w.key("operator_rows").begin_array();
  if (counters_)
    for (const CuptiOperatorCounters& o : counters_->operators) w.begin_object().field("operator", o.op).field("kernels", o.kernels).end_object();
  w.end_array();
  w.key("peak").begin_object();
  w.key("fp32_flops"), roof_.peak.flops[int(Precision::Fp32)] ? w.value(*roof_.peak.flops[int(Precision::Fp32)]) : w.null();
  w.key("bytes_per_s"), roof_.peak.bytes_per_s ? w.value(*roof_.peak.bytes_per_s) : w.null();
  w.field("compute_note", roof_.peak.compute_note).field("memory_note", roof_.peak.memory_note);
  w.end_object();
  w.key("points").begin_array();
  for (size_t i = 0; i < roof_.points.size(); ++i) {
    const RooflinePoint& p = roof_.points[i];
    w.begin_object().field("kernel", uint64_t(p.kernel)).field("name", counters_->kernels[p.kernel].kernel);
    w.field("operator", roof_.groups[p.group].op).field("intensity", p.intensity).field("flops_per_s", p.throughput);
    if (i < drawn_.size()) w.field("x", double(drawn_[i].first)).field("y", double(drawn_[i].second));
    w.end_object();
  }
  w.end_array();
  w.key("selected_kernel");
  selected_kernel_ >= 0 ? w.value(int64_t(selected_kernel_)) : w.null();
  w.key("selected_operator");
  selected_op_ >= 0 ? w.value(int64_t(selected_op_)) : w.null();
  w.field("tab", operators_tab_ ? "operators" : "kernels");
  w.end_object();
}

}  // namespace sl::views
