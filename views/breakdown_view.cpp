#include "views/breakdown_view.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "core/analysis/kernel_breakdown.h"
#include "core/names/short_names.h"
#include "core/present/time_axis.h"
#include "core/text/format.h"
#include "views/pattern_model.h"

namespace sl::views {

using namespace sl::analysis;

namespace {

std::string fixed(double v, int digits, const char* suffix = "") {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f%s", digits, v, suffix);
  return b;
}

Cell dur_cell(double ns) { return DataTable::number(present::format_duration(ns), ns); }

const ImU32 kCompute = IM_COL32(0, 114, 178, 255), kComm = IM_COL32(230, 159, 0, 255),
            kMemory = IM_COL32(0, 158, 115, 255), kIdle = IM_COL32(200, 200, 200, 255);

}  // namespace

DurationDistribution duration_distribution(const TraceStore& store, const std::vector<SliceRef>& slices, size_t bins) {
  DurationDistribution d;
  if (slices.empty()) return d;
  std::vector<double> durations;
  for (SliceRef s : slices) durations.push_back(double(store.dur(s)));
  std::sort(durations.begin(), durations.end());
  d.median = durations[durations.size() / 2];
  d.edges = log_bins(std::max(1.0, durations.front()), std::max(2.0, durations.back()), bins);
  d.counts.assign(d.edges.size() - 1, 0);
  for (double v : durations) ++d.counts[std::min(bin_of(d.edges, v), d.counts.size() - 1)];
  return d;
}

void BreakdownView::draw_distribution(ImVec2 size) {
  if (distribution_.counts.empty()) return;
  ImGui::Text("Duration distribution of %s (median %s)", distribution_name_.c_str(), present::format_duration(distribution_.median).c_str());
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 a = ImGui::GetCursorScreenPos();
  float w = std::max(100.f, size.x - 20), h = std::max(40.f, size.y - ImGui::GetFontSize() * 3);
  uint32_t peak = *std::max_element(distribution_.counts.begin(), distribution_.counts.end());
  float bar = w / float(distribution_.counts.size());
  for (size_t i = 0; i < distribution_.counts.size(); ++i) {
    float height = peak ? h * float(distribution_.counts[i]) / float(peak) : 0;
    ImVec2 p0(a.x + bar * float(i) + 1, a.y + h - height), p1(a.x + bar * float(i + 1) - 1, a.y + h);
    dl->AddRectFilled(p0, p1, kCompute);
    if (ImGui::IsMouseHoveringRect(ImVec2(p0.x, a.y), p1))
      ImGui::SetTooltip("%u launches between %s and %s", distribution_.counts[i], present::format_duration(distribution_.edges[i]).c_str(),
                        present::format_duration(distribution_.edges[i + 1]).c_str());
  }
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddLine(ImVec2(a.x, a.y + h), ImVec2(a.x + w, a.y + h), ink);
  for (size_t i = 0; i < distribution_.edges.size(); i += std::max<size_t>(1, distribution_.edges.size() / 6))
    dl->AddText(ImVec2(a.x + bar * float(i), a.y + h + 2), ink, present::format_duration(distribution_.edges[i]).c_str());
  ImGui::Dummy(ImVec2(w, h + ImGui::GetFontSize() + 4));
}

void BreakdownView::build(ViewContext& ctx) {
  built_ = true;
  const Report& r = ctx.model.report;
  kernels_.headers = {"type", "count", "total", "mean", "median", "p95", "share", "kernel"};
  if (r.kernels) {
    double total = 0;
    for (const KernelStats& k : r.kernels->per_kernel_full) total += k.sum;
    auto names = store_short_names(ctx.store);  // distinct: variants of one template keep their argument
    for (const KernelStats& k : r.kernels->per_kernel_full)
      kernels_.add_row({DataTable::text(std::string(kernel_type_name(k.type))),
                        DataTable::number(human::count(int64_t(k.count)), double(k.count)), dur_cell(k.sum), dur_cell(k.mean),
                        dur_cell(k.median.value_or(0)), dur_cell(k.p95.value_or(0)),
                        DataTable::number(fixed(total > 0 ? k.sum / total * 100 : 0, 1, "%"), total > 0 ? k.sum / total : 0),
                        DataTable::text((*names)(k.name))});
    types_.headers = {"kernel type (overlaps split out)", "time", "share"};
    for (const KernelTypeShare& s : r.kernels->by_type)
      types_.add_row({DataTable::text(s.label), dur_cell(double(s.time)), DataTable::number(fixed(s.pct, 1, "%"), s.pct)});
  }
  // TKLQT (with queue time) beside the queue-free host orchestration the HDBI uses: a long TKLQT
  // on a device-bound step is the device's queue, not the host.
  coupling_.headers = {"iteration", "kernels", "TKLQT (incl. queue)", "host orchestration", "mean kernel", "GPU busy", "latency", "utilisation", "HDBI", "verdict"};
  if (r.coupling)
    for (const CouplingRow& c : r.coupling->rows) {
      coupling_iteration_.push_back(c.iteration.value_or(-1));
      coupling_.add_row({c.iteration ? DataTable::number("step " + std::to_string(*c.iteration), double(*c.iteration))
                                     : DataTable::number("whole trace", 1e18),
                         DataTable::number(human::count(int64_t(c.kernels)), double(c.kernels)), dur_cell(double(c.tklqt)),
                         dur_cell(double(c.host_orchestration)), dur_cell(c.akd),
                         dur_cell(double(c.gpu_busy)), dur_cell(double(c.latency)),
                         DataTable::number(fixed(c.utilization * 100, 1, "%"), c.utilization), DataTable::number(fixed(c.hdbi, 2), c.hdbi),
                         DataTable::text(verdict_text(c))});
    }
}

void BreakdownView::go_to_iteration(ViewContext& ctx, int64_t number) {
  iteration_selected_ = number;
  for (const Iteration& it : ctx.store.iterations)
    if (it.number == number) show_on_timeline(ctx.timeline, it.slice, it.start, it.end);
}

void BreakdownView::draw_iterations(ViewContext& ctx, ImVec2 size) {
  const auto& its = ctx.model.iterations;
  section_title("Per iteration: step time by what the GPU did");
  if (its.empty()) {
    ImGui::TextDisabled("No ProfilerStep iterations in this trace.");
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  size.y -= ImGui::GetTextLineHeightWithSpacing() * 2.5f;
  ImGui::InvisibleButton("iters", size);
  TimeNs longest = 1;
  for (const auto& s : its) longest = std::max(longest, s.end - s.start);
  float slot = size.x / float(its.size()), bar = std::min(slot * 0.7f, 60.f);
  ImVec2 mouse = ImGui::GetIO().MousePos;
  float bottom = p.y + size.y - ImGui::GetTextLineHeight() - 4;
  float height = bottom - p.y - 4;
  for (size_t i = 0; i < its.size(); ++i) {
    const IterationSplit& s = its[i];
    float x = p.x + slot * float(i) + (slot - bar) / 2, y = bottom;
    auto seg = [&](TimeNs v, ImU32 c) {
      float h = float(double(v) / double(longest)) * height;
      dl->AddRectFilled(ImVec2(x, y - h), ImVec2(x + bar, y), c);
      y -= h;
    };
    seg(s.compute, kCompute), seg(s.communication, kComm), seg(s.memory, kMemory), seg(s.idle, kIdle);
    if (s.iteration == iteration_selected_) dl->AddRect(ImVec2(x - 2, y - 2), ImVec2(x + bar + 2, bottom + 1), ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 2);
    std::string label = "step " + std::to_string(s.iteration);
    dl->AddText(ImVec2(x + (bar - ImGui::CalcTextSize(label.c_str()).x) / 2, bottom + 2), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
    bool over = ImGui::IsItemHovered() && mouse.x >= p.x + slot * float(i) && mouse.x < p.x + slot * float(i + 1);
    if (over) {
      double step = double(s.end - s.start);
      auto part = [&](TimeNs t) { return present::format_duration(double(t)) + " (" + human::percent(double(t) / step * 100) + ")"; };
      ImGui::SetTooltip("step %lld: %s\ncompute %s\ncommunication %s\nmemory %s\nGPU idle %s\nclick: show on the timeline",
                        (long long)s.iteration, present::format_duration(step).c_str(), part(s.compute).c_str(), part(s.communication).c_str(),
                        part(s.memory).c_str(), part(s.idle).c_str());
      if (ImGui::IsItemClicked()) go_to_iteration(ctx, s.iteration);
    }
  }
  auto swatch = [](ImU32 c, const char* label) {
    ImVec2 q = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(q, ImVec2(q.x + h, q.y + h), c);
    ImGui::Dummy(ImVec2(h, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
    ImGui::SameLine(0, 14);
  };
  swatch(kCompute, "compute"), swatch(kComm, "communication"), swatch(kMemory, "memory"), swatch(kIdle, "GPU idle");
  ImGui::NewLine();
}

void BreakdownView::draw_overview(ViewContext& ctx) {
  const Report& r = ctx.model.report;
  float w = ImGui::GetContentRegionAvail().x;
  ImGui::BeginChild("left", ImVec2(w * 0.42f, 0));
  section_title("Temporal breakdown (over the iterations, or the trace when there are none)");
  if (r.temporal && r.temporal->valid) {
    const TemporalBreakdown& t = *r.temporal;
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImVec2 p = ImGui::GetCursorScreenPos();
    float bw = ImGui::GetContentRegionAvail().x, h = ImGui::GetFrameHeight();
    ImGui::Dummy(ImVec2(bw, h));
    float x = p.x;
    for (auto [v, c] : {std::pair{t.compute, kCompute}, std::pair{t.non_compute, kMemory}, std::pair{t.idle, kIdle}}) {
      float seg = float(double(v) / double(std::max<TimeNs>(t.span, 1))) * bw;
      dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + seg, p.y + h), c);
      x += seg;
    }
    ImGui::Text("span %s: compute %s (%.1f%%), non-compute %s (%.1f%%), idle %s (%.1f%%)", present::format_duration(double(t.span)).c_str(),
                present::format_duration(double(t.compute)).c_str(), t.compute_pct, present::format_duration(double(t.non_compute)).c_str(),
                t.non_compute_pct, present::format_duration(double(t.idle)).c_str(), t.idle_pct);
  } else {
    ImGui::TextDisabled("No GPU activity.");
  }
  if (r.overlap && r.overlap->overlap_pct)
    ImGui::Text("communication %s, %.1f%% of it overlapped by compute", present::format_duration(double(r.overlap->communication)).c_str(),
                *r.overlap->overlap_pct);
  ImGui::Spacing();
  section_title("Kernel types, overlaps split out");
  types_.draw("types", 0, -1);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("right", ImVec2(0, 0));
  draw_iterations(ctx, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
}

void BreakdownView::draw(ViewContext& ctx) {
  if (!built_) build(ctx);
  if (!ImGui::BeginTabBar("breakdowns")) return;
  if (ImGui::BeginTabItem("Overview")) {
    draw_overview(ctx);
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("Per kernel")) {
    float avail = ImGui::GetContentRegionAvail().y;
    int clicked = kernels_.draw("kernels", distribution_.counts.empty() ? 0 : avail * 0.55f, kernel_selected_);
    if (clicked >= 0 && ctx.model.report.kernels) {
      kernel_selected_ = clicked;
      const std::string& name = ctx.model.report.kernels->per_kernel_full[size_t(clicked)].name;
      auto occ = kernel_occurrences(ctx.model.table(), name);
      std::vector<SliceRef> kernels = occurrence_kernels(occ);
      distribution_ = duration_distribution(ctx.store, kernels);  // once per click, not per frame
      distribution_name_ = (*store_short_names(ctx.store))(name);
      ctx.timeline.set_highlights(std::move(kernels));
      if (!occ.empty()) ctx.timeline.select(occ.front().anchor, true);
    }
    draw_distribution(ImGui::GetContentRegionAvail());
    ImGui::EndTabItem();
  }
  if (ImGui::BeginTabItem("CPU–GPU coupling")) {
    ImGui::TextDisabled("TKLQT: total launch-to-start queue time. HDBI: host/device balance (0 host-bound … 1 device-bound).");
    int clicked = coupling_.draw("coupling", 0, coupling_selected_);
    if (clicked >= 0) {
      coupling_selected_ = clicked;
      if (coupling_iteration_[size_t(clicked)] >= 0) go_to_iteration(ctx, coupling_iteration_[size_t(clicked)]);
      else ctx.timeline.show_all();
    }
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

void BreakdownView::write_state(JsonWriter& w) const {
  w.begin_object().field("kernels", uint64_t(kernels_.rows.size())).field("coupling_rows", uint64_t(coupling_.rows.size()));
  w.field("iteration", iteration_selected_).end_object();
}

}  // namespace sl::views
