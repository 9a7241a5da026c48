#include "views/memory_view.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "core/present/series_palette.h"
#include "core/present/time_axis.h"
#include "core/text/format.h"

namespace sl::views {

using namespace sl::memory;
using present::ContextColumns;
using present::kOtherContexts;

namespace {

ImU32 band_color(const ContextColumns& c, size_t band, bool dimmed) {
  present::Rgb rgb = c.bands[band] == kOtherContexts ? present::rest_rgb() : present::series_rgb(band);
  return IM_COL32(rgb.r, rgb.g, rgb.b, dimmed ? 70 : 235);
}

std::string band_name(const TraceStore& store, StringId context) {
  return context == kOtherContexts ? "(other contexts)" : context_name(store, context);
}

Cell bytes_cell(int64_t b) { return DataTable::number(human::bytes(b), double(b)); }
Cell count_cell(uint64_t n) { return DataTable::number(human::count(int64_t(n)), double(n)); }
Cell time_cell(TimeNs t) { return DataTable::number(human::duration(t), double(t)); }

// The largest reserved memory the device ever had: the plot's scale stays put while zooming.
int64_t scale_of(const DeviceMemory& d) {
  int64_t top = std::max<int64_t>(d.peak_allocated, 1);
  for (const MemoryPoint& p : d.timeline) top = std::max(top, std::max(p.allocated, p.reserved));
  return top;
}

}  // namespace

const MemoryAnalysis* MemoryView::analysis(const ViewContext& ctx) const {
  const auto& a = ctx.model.report.memory_analysis;
  return a && !a->empty() ? &*a : nullptr;
}

const DeviceMemory* MemoryView::device(const ViewContext& ctx) const {
  const MemoryAnalysis* a = analysis(ctx);
  return a && device_ < a->devices.size() ? &a->devices[device_] : nullptr;
}

void MemoryView::build_tables(ViewContext& ctx) {
  built_ = true;
  bands_ = {};
  lines_.clear();
  index_.reset();
  context_selected_ = false, block_ = -1, peak_row_ = leak_row_ = churn_row_ = block_row_ = -1;
  context_blocks_.clear(), blocks_.clear();
  for (DataTable* t : {&at_peak_, &leaks_, &churn_, &iterations_}) t->clear();
  peak_contexts_.clear(), leak_contexts_.clear(), churn_contexts_.clear();
  const DeviceMemory* d = device(ctx);
  if (!d) return;
  index_ = std::make_unique<present::ContextBands>(*analysis(ctx), *d);
  const TraceStore& store = ctx.store;
  at_peak_.headers = {"allocating context", "bytes at the peak", "share", "blocks"};
  for (const ContextBytes& c : d->at_peak) {
    double share = d->peak_allocated > 0 ? double(c.bytes) / double(d->peak_allocated) : 0;
    at_peak_.add_row({DataTable::text(context_name(store, c.context)), bytes_cell(c.bytes),
                      DataTable::number(human::percent(share * 100), share), count_cell(c.blocks)});
    peak_contexts_.push_back(c.context);
  }
  leaks_.headers = {"allocating context", "live at the end", "blocks", "first allocated"};
  for (const ContextBytes& c : d->leaks) {
    leaks_.add_row({DataTable::text(context_name(store, c.context)), bytes_cell(c.bytes), count_cell(c.blocks), time_cell(c.first_alloc)});
    leak_contexts_.push_back(c.context);
  }
  churn_.headers = {"allocating context", "short-lived", "allocations", "short-lived bytes"};
  for (const ChurnContext& c : d->churn) {
    churn_.add_row({DataTable::text(context_name(store, c.context)), count_cell(c.short_lived), count_cell(c.allocations),
                    bytes_cell(c.short_lived_bytes)});
    churn_contexts_.push_back(c.context);
  }
  iterations_.headers = {"step", "length", "peak", "live at the step's end"};
  for (const IterationMemory& it : d->iterations)
    iterations_.add_row({DataTable::number("step " + std::to_string(it.number), double(it.number)), time_cell(it.end - it.start),
                         bytes_cell(it.peak), bytes_cell(it.live_at_end)});
}

// The first device that is not the CPU: what a user opening the view asks about.
static size_t first_gpu(const MemoryAnalysis& a) {
  for (size_t i = 0; i < a.devices.size(); ++i)
    if (a.devices[i].device_type != kMemoryCpu) return i;
  return 0;
}

bool MemoryView::pick_device(ViewContext& ctx, size_t index) {
  const MemoryAnalysis* a = analysis(ctx);
  if (!a || index >= a->devices.size()) return false;
  device_ = index;
  build_tables(ctx);
  return true;
}

void MemoryView::select_context(ViewContext& ctx, StringId context) {
  const MemoryAnalysis* a = analysis(ctx);
  const DeviceMemory* d = device(ctx);
  if (!a || !d) return;
  context_ = context, context_selected_ = true, block_row_ = -1;
  context_blocks_.clear();
  for (uint32_t row : d->block_rows)
    if (a->blocks[row].context == context) context_blocks_.push_back(row);
  std::stable_sort(context_blocks_.begin(), context_blocks_.end(),
                   [&](uint32_t x, uint32_t y) { return a->blocks[x].size > a->blocks[y].size; });
  blocks_.clear();
  blocks_.headers = {"size", "allocated at", "freed at", "lifetime"};
  for (uint32_t row : context_blocks_) {
    const MemoryBlock& b = a->blocks[row];
    bool live = b.live_at_end();
    blocks_.add_row({bytes_cell(b.size), time_cell(b.alloc), live ? DataTable::number("live at the end", 1e30) : time_cell(b.free),
                     live ? DataTable::number("-", 1e30) : time_cell(b.free - b.alloc)});
  }
}

void MemoryView::select_block(ViewContext& ctx, int64_t block) {
  const MemoryAnalysis* a = analysis(ctx);
  if (!a || block < 0 || size_t(block) >= a->blocks.size()) return;
  block_ = block;
  const MemoryBlock& b = a->blocks[size_t(block)];
  TimeNs end = b.live_at_end() ? std::max(b.alloc + 1, latest_end(ctx.store)) : b.free;
  // The allocating op, where the event sits on a thread the timeline shows (Kineto).
  SliceRef op;
  if (b.alloc_event >= 0 && ctx.store.memory.track[size_t(b.alloc_event)] != kNone)
    op = ctx.store.slice_at(ctx.store.memory.track[size_t(b.alloc_event)], b.alloc);
  show_on_timeline(ctx.timeline, op, b.alloc, end);
  ctx.timeline.set_range(b.alloc, end);
}

bool MemoryView::pick_context(ViewContext& ctx, size_t row) {
  if (!built_) device_ = first_gpu(*analysis(ctx)), build_tables(ctx);
  if (row >= peak_contexts_.size()) return false;
  peak_row_ = int(row);
  select_context(ctx, peak_contexts_[row]);
  return true;
}

bool MemoryView::pick_block(ViewContext& ctx, size_t row) {
  if (row >= context_blocks_.size()) return false;
  block_row_ = int(row);
  select_block(ctx, context_blocks_[row]);
  return true;
}

void MemoryView::show_peak(ViewContext& ctx) {
  if (!built_) device_ = first_gpu(*analysis(ctx)), build_tables(ctx);
  const DeviceMemory* d = device(ctx);
  if (!d) return;
  double half = std::max(1e3, (ctx.timeline.view_end() - ctx.timeline.view_start()) / 20);
  ctx.timeline.zoom_to(double(d->peak_ts) - half, double(d->peak_ts) + half);
}

std::string MemoryView::block_text(const ViewContext& ctx, const MemoryBlock& b) const {
  const TraceStore& store = ctx.store;
  std::string s = human::bytes(b.size) + " allocated at " + human::duration(b.alloc);
  s += b.live_at_end() ? ", live at the end" : ", freed at " + human::duration(b.free) + " (lived " + human::duration(b.free - b.alloc) + ")";
  s += "\ncontext: " + context_name(store, b.context);
  uint32_t stack = b.alloc_event >= 0 ? store.memory.stack[size_t(b.alloc_event)] : kNone;
  if (stack != kNone && stack < store.memory.stack_count()) {
    uint32_t first = store.memory.stack_offsets[stack], last = store.memory.stack_offsets[stack + 1];
    if (whole_stacks_) {
      s += "\nstack (innermost first):";
      for (uint32_t i = first; i < last && i < first + 40; ++i) s += "\n  " + std::string(store.strings.view(store.memory.frames[i]));
      if (last - first > 40) s += "\n  … " + std::to_string(last - first - 40) + " more frames";
    } else {
      s += "\n(" + std::to_string(last - first) + " frames; \"whole stacks\" shows them)";
    }
  }
  return s;
}

void MemoryView::refresh_columns(TimeNs t0, TimeNs t1, int columns) {
  if (bands_.t0 == t0 && bands_.t1 == t1 && bands_.columns == columns && !lines_.empty()) return;
  bands_ = index_->columns(t0, t1, columns);
  lines_ = index_->lines(t0, t1, columns);
}

void MemoryView::draw_summary(ViewContext& ctx) {
  const MemoryAnalysis& a = *analysis(ctx);
  const DeviceMemory& d = *device(ctx);
  if (a.devices.size() > 1) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (ImGui::BeginCombo("##device", d.label.c_str())) {
      for (size_t i = 0; i < a.devices.size(); ++i)
        if (ImGui::Selectable(a.devices[i].label.c_str(), i == device_)) pick_device(ctx, i);
      ImGui::EndCombo();
    }
    ImGui::SameLine();
  } else {
    ImGui::TextUnformatted(d.label.c_str());
    ImGui::SameLine();
  }
  std::string line = "peak " + human::bytes(d.peak_allocated) + " allocated at " + human::duration(d.peak_ts);
  if (d.reserved_known) line += ", " + human::bytes(d.peak_reserved) + " reserved (" + human::bytes(d.fragmentation) + " unused)";
  if (d.capacity) line += ", of " + human::bytes(*d.capacity);
  line += " · " + human::count(int64_t(d.blocks)) + " blocks";
  ImGui::TextUnformatted(line.c_str());
  ImGui::SameLine();
  if (ImGui::SmallButton("Show the peak")) show_peak(ctx);
  ImGui::SameLine();
  ImGui::Checkbox("whole stacks", &whole_stacks_);
  help_marker("Blocks are grouped by their allocating context: the enclosing op (Kineto), or the first stack frame outside "
              "the allocator and PyTorch (snapshots). The whole stack shows in the hover text when this is on. The bands "
              "show the blocks live at each pixel column's middle; the allocated line, each column's maximum.");
}

// The plot lies under the timeline's time axis (same pixels, same range), so a peak here is
// above its cause there; the space left of it, under the timeline's row labels, holds the legend.
void MemoryView::draw_plot(ViewContext& ctx, ImVec2 size) {
  const MemoryAnalysis& a = *analysis(ctx);
  const DeviceMemory& d = *device(ctx);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::InvisibleButton("memory plot", size);
  bool hovered = ImGui::IsItemHovered();
  auto [axis0, axis1] = ctx.timeline.canvas_x();
  double v0 = ctx.timeline.view_start(), v1 = ctx.timeline.view_end();
  float x0 = origin.x, x1 = origin.x + size.x;
  if (axis1 - axis0 > 50 && axis0 >= origin.x && axis1 <= x1 + 1) {  // the timeline's axis fits: align on it
    x0 = axis0, x1 = std::min(axis1, x1);
  }
  TimeNs t0 = TimeNs(v0), t1 = std::max<TimeNs>(TimeNs(v1), t0 + 1);
  int columns = std::max(1, int(x1 - x0));
  refresh_columns(t0, t1, columns);
  float top = origin.y, bottom = origin.y + size.y;
  dl->AddRectFilled(ImVec2(x0, top), ImVec2(x1, bottom), ImGui::GetColorU32(ImGuiCol_FrameBg));
  double scale = double(scale_of(d));
  auto y_of = [&](double bytes) { return bottom - float(bytes / scale) * (size.y - 4); };
  // The live blocks, stacked by context band: per band, runs of columns whose band spans the
  // same pixels are one rectangle (a zoomed-in plot is a few rectangles, not columns × bands).
  size_t selected_band = context_selected_ ? bands_.band_of(context_) : SIZE_MAX;
  std::vector<double> stacked(size_t(columns), 0);
  for (size_t k = 0; k < bands_.band_count(); ++k) {
    ImU32 color = band_color(bands_, k, selected_band != SIZE_MAX && k != selected_band);
    int run = -1;
    float run_top = 0, run_bottom = 0;
    auto flush = [&](int end) {
      if (run >= 0 && run_bottom - run_top >= 0.5f)
        dl->AddRectFilled(ImVec2(x0 + float(run), run_top), ImVec2(x0 + float(end), run_bottom), color);
      run = -1;
    };
    for (int c = 0; c < columns; ++c) {
      double v = double(std::max<int64_t>(bands_.at(c, k), 0));
      float top = std::round(y_of(stacked[size_t(c)] + v)), bottom = std::round(y_of(stacked[size_t(c)]));
      stacked[size_t(c)] += v;
      if (run >= 0 && (top != run_top || bottom != run_bottom)) flush(c);
      if (run < 0) run = c, run_top = top, run_bottom = bottom;
    }
    flush(columns);
  }
  // Allocated (each column's maximum) and reserved as lines over the bands.
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  for (int c = 1; c < columns; ++c) {
    float x = x0 + float(c);
    dl->AddLine(ImVec2(x - 1, y_of(double(lines_[c - 1].allocated))), ImVec2(x, y_of(double(lines_[c].allocated))), ink, 1.5f);
    if (d.reserved_known)
      dl->AddLine(ImVec2(x - 1, y_of(double(lines_[c - 1].reserved))), ImVec2(x, y_of(double(lines_[c].reserved))), muted, 1.f);
  }
  const ImU32 red = IM_COL32(214, 39, 40, 255);
  if (d.peak_ts >= t0 && d.peak_ts < t1) {
    float x = x0 + float(double(d.peak_ts - t0) / double(t1 - t0) * (x1 - x0));
    dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), red, 1.5f);
    std::string label = "peak " + human::bytes(d.peak_allocated);
    float w = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(std::min(x + 4, x1 - w - 4), top + 2), red, label.c_str());
  }
  std::string scale_text = human::bytes(int64_t(scale));
  dl->AddText(ImVec2(x0 + 4, top + 2), muted, scale_text.c_str());
  draw_legend(ctx, ImVec2(origin.x, top), x0 - origin.x - 8);
  if (!hovered || ImGui::GetIO().MousePos.x < x0 || ImGui::GetIO().MousePos.x >= x1) return;
  // Hover: the band under the mouse and its largest block at that instant; click selects it.
  ImVec2 mouse = ImGui::GetIO().MousePos;
  int c = std::clamp(int(mouse.x - x0), 0, columns - 1);
  double at = (bottom - mouse.y) / (size.y - 4) * scale, below = 0;
  TimeNs t = t0 + TimeNs((double(c) + 0.5) * double(t1 - t0) / columns);
  for (size_t k = 0; k < bands_.band_count(); ++k) {
    double v = double(bands_.at(c, k));
    if (v <= 0 || at < below || at >= below + v) {
      below += std::max(v, 0.0);
      continue;
    }
    int64_t block = index_->largest_block_at(k, t);
    std::string tip = band_name(ctx.store, bands_.bands[k]) + ": " + human::bytes(int64_t(v)) + " live at " + human::duration(t);
    if (block >= 0) tip += "\nlargest block: " + block_text(ctx, a.blocks[size_t(block)]) + "\nclick: select this block";
    ImGui::SetTooltip("%s", tip.c_str());
    if (ImGui::IsItemClicked() && block >= 0) {
      select_context(ctx, a.blocks[size_t(block)].context);
      auto it = std::find(context_blocks_.begin(), context_blocks_.end(), uint32_t(block));
      block_row_ = it == context_blocks_.end() ? -1 : int(it - context_blocks_.begin());
      if (block_row_ >= 0) blocks_.reveal(block_row_);
      select_block(ctx, block);
    }
    return;
  }
  ImGui::SetTooltip("%s: %s allocated (most in this column)", human::duration(t).c_str(), human::bytes(lines_[size_t(c)].allocated).c_str());
}

// The bands' colours and contexts, top band first as stacked, and the two lines.
void MemoryView::draw_legend(const ViewContext& ctx, ImVec2 at, float width) const {
  if (width < 60) return;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float line = ImGui::GetTextLineHeight(), y = at.y;
  ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), muted = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  auto entry = [&](ImU32 color, bool is_line, const std::string& text) {
    if (is_line) dl->AddLine(ImVec2(at.x, y + line / 2), ImVec2(at.x + 10, y + line / 2), color, 2.f);
    else dl->AddRectFilled(ImVec2(at.x, y + 2), ImVec2(at.x + 10, y + line - 2), color);
    dl->PushClipRect(ImVec2(at.x + 14, y), ImVec2(at.x + width, y + line), true);
    dl->AddText(ImVec2(at.x + 14, y), ink, text.c_str());
    dl->PopClipRect();
    y += line;
  };
  entry(ink, true, "allocated (column maximum)");
  if (device(ctx)->reserved_known) entry(muted, true, "reserved");
  for (size_t k = bands_.band_count(); k-- > 0;) entry(band_color(bands_, k, false), false, band_name(ctx.store, bands_.bands[k]));
}

void MemoryView::draw_tables(ViewContext& ctx) {
  if (!ImGui::BeginTabBar("memory tables")) return;
  auto context_table = [&](const char* label, const char* id, DataTable& table, const std::vector<StringId>& contexts, int& selected) {
    if (!ImGui::BeginTabItem(label)) return;
    int half = int(ImGui::GetContentRegionAvail().x * (context_selected_ ? 0.55f : 1.f));
    ImGui::BeginChild(id, ImVec2(float(half), 0));
    int clicked = table.draw(id, 0, selected);
    if (clicked >= 0) selected = clicked, select_context(ctx, contexts[size_t(clicked)]);
    ImGui::EndChild();
    if (context_selected_) {
      ImGui::SameLine();
      ImGui::BeginChild("blocks of context", ImVec2(0, 0));
      ImGui::TextUnformatted(("blocks of " + context_name(ctx.store, context_)).c_str());
      int b = blocks_.draw("blocks", 0, block_row_);
      if (b >= 0) pick_block(ctx, size_t(b));
      ImGui::EndChild();
    }
    ImGui::EndTabItem();
  };
  context_table("At the peak", "at peak", at_peak_, peak_contexts_, peak_row_);
  context_table("Leaks", "leaks", leaks_, leak_contexts_, leak_row_);
  context_table("Churn", "churn", churn_, churn_contexts_, churn_row_);
  if (ImGui::BeginTabItem("Per iteration")) {
    const DeviceMemory* d = device(ctx);
    int clicked = iterations_.draw("iterations", 0, -1);
    if (clicked >= 0 && d && size_t(clicked) < d->iterations.size())
      show_on_timeline(ctx.timeline, {}, d->iterations[size_t(clicked)].start, d->iterations[size_t(clicked)].end);
    ImGui::EndTabItem();
  }
  ImGui::EndTabBar();
}

void MemoryView::draw(ViewContext& ctx) {
  if (!analysis(ctx)) {
    ImGui::TextWrapped("No memory events in this trace. Record with torch.profiler's profile_memory=True (Kineto [memory] "
                       "events), or open a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot) with File > Open.");
    return;
  }
  if (!built_) device_ = first_gpu(*analysis(ctx)), build_tables(ctx);
  if (!device(ctx)) return;
  draw_summary(ctx);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  draw_plot(ctx, ImVec2(avail.x, std::max(80.f, avail.y * 0.45f)));
  draw_tables(ctx);
}

void MemoryView::write_state(JsonWriter& w, const ViewContext& ctx) const {
  w.begin_object();
  const DeviceMemory* d = device(ctx);
  w.field("devices", uint64_t(analysis(ctx) ? analysis(ctx)->devices.size() : 0));
  if (d) {
    w.field("device", d->label).field("peak_allocated", d->peak_allocated).field("peak_ts_ns", d->peak_ts);
    w.field("columns", int64_t(bands_.columns)).field("max_column_bytes", bands_.max_total);
    w.key("bands").begin_array();
    for (StringId b : bands_.bands) w.value(band_name(ctx.store, b));
    w.end_array();
    w.field("at_peak_rows", uint64_t(at_peak_.rows.size()));
    if (context_selected_) w.field("context", context_name(ctx.store, context_)).field("context_blocks", uint64_t(context_blocks_.size()));
    if (block_ >= 0) {
      const MemoryBlock& b = analysis(ctx)->blocks[size_t(block_)];
      w.key("block").begin_object().field("size", b.size).field("alloc_ns", b.alloc);
      if (!b.live_at_end()) w.field("free_ns", b.free);
      w.end_object();
    }
  }
  w.end_object();
}

}  // namespace sl::views
