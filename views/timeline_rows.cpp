// The timeline's row kinds, drawn (see timeline_rows.h): a source's header, a process header, a
// lane of slices folded to pixels (with its track's header and, under a GPU stream, the idle gaps
// and their hover explanation), a counter, and the "N more levels" fold. Each row draws at screen
// y, taking its source's store and shift (store clock + shift = view clock) from the context.
#include "views/timeline_rows.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>

#include "core/analysis/idle_time.h"
#include "core/names/short_names.h"
#include "core/names/track_names.h"
#include "core/present/critical_path_palette.h"
#include "core/present/gallop.h"
#include "core/present/palette.h"
#include "core/present/time_axis.h"
#include "core/text/format.h"
#include "views/range_stats.h"
#include "views/timeline_view.h"

namespace sl::views {

// Rows are plain values, laid out afresh every frame: copying one allocates nothing.
static_assert(std::is_trivially_copyable_v<TimelineRow>);

namespace {

constexpr float kFoldPx = 3.f;  // slices narrower than this fold into a block

ImU32 with_alpha(ImU32 c, int alpha) { return (c & 0x00FFFFFF) | (ImU32(alpha) << 24); }

ImU32 row_ink(const RowContext& ctx) { return ctx.light() ? IM_COL32(30, 30, 30, 255) : IM_COL32(225, 225, 225, 255); }

// A row's label in the header column, clipped to it, `indent` pixels in.
void draw_row_label(const RowContext& ctx, float y, float indent, const std::string& label) {
  float x = ctx.header_x;
  ctx.dl->PushClipRect(ImVec2(x, y), ImVec2(x + ctx.header_width - 4, y + ctx.lane_height + 4), true);
  ctx.dl->AddText(ImVec2(x + indent, y + 2), row_ink(ctx), label.c_str());
  ctx.dl->PopClipRect();
}

bool on_path(const TimelineSourceState& src, SliceRef s) {
  if (s.track >= src.path_rows.size()) return false;
  const auto& rows = src.path_rows[s.track];
  return std::binary_search(rows.begin(), rows.end(), s.index);
}

ImU32 base_slice_color(const RowContext& ctx, const TimelineSourceState& src, SliceRef s) {
  if (src.def.color_override)
    if (std::optional<ImU32> c = src.def.color_override(s)) return *c;
  const TraceStore& store = src.store();
  const SliceColumns& c = store.slices(s.track);
  switch (ctx.color_mode) {
    case ColorMode::ByCategory: return color_for_key(store.strings.view(c.cat[s.index]), ctx.theme);
    case ColorMode::ByKernelType: {
      present::KernelKind k = present::kernel_kind(store.name(s), store.cat(s), store.is_gpu(s));
      return k == present::KernelKind::NotGpu ? (ctx.light() ? IM_COL32(205, 205, 205, 255) : IM_COL32(90, 90, 90, 255))
                                              : kernel_kind_color(k);
    }
    case ColorMode::ByName: break;
  }
  return color_for_key(store.name(s), ctx.theme);
}

// With a path shown, everything off it fades towards the background so the path stands out.
ImU32 slice_color(const RowContext& ctx, const TimelineSourceState& src, SliceRef s) {
  ImU32 c = base_slice_color(ctx, src, s);
  if (src.path.slices.empty() || on_path(src, s)) return c;
  int bg = ctx.light() ? 238 : 36;  // near the background, a touch apart so slices still read as slices
  auto fade = [&](int shift) { return ImU32((int((c >> shift) & 0xFF) * 15 + bg * 85) / 100) << shift; };
  return fade(IM_COL32_R_SHIFT) | fade(IM_COL32_G_SHIFT) | fade(IM_COL32_B_SHIFT) | (0xFFu << IM_COL32_A_SHIFT);
}

void slice_tooltip(const TimelineSourceState& src, SliceRef s) {
  const TraceStore& store = src.store();
  std::string_view name = store.name(s);
  std::string shown(name.substr(0, 300));
  if (name.size() > 300) shown += "…";
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(shown.c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextDisabled("%s · %s", std::string(store.cat(s)).c_str(), present::format_duration(double(store.dur(s))).c_str());
  ImGui::TextDisabled("starts at %s", present::format_duration(double(store.start(s))).c_str());
  if (src.def.shift) ImGui::TextDisabled("(%s on this view's clock)", present::format_duration(src.view(store.start(s))).c_str());
  ImGui::EndTooltip();
}

// Built when the hovered gap changes, so a still mouse costs nothing per frame.
void gap_tooltip(RowContext& ctx, uint32_t source, const IdleGapMark& gap) {
  RowHits::GapHover& hover = ctx.hits.gap_hover;
  if (hover.source != source || hover.track != gap.track || hover.start != gap.start)
    hover = {source, gap.track, gap.start, idle_gap_explanation(ctx.sources[source].store(), gap)};
  ImGui::SetTooltip("%s", hover.text.c_str());
}

// One line per cause: why the rule fired, in the user's words.
const char* cause_explanation(int cause) {
  switch (analysis::IdleCause(cause)) {
    case analysis::IdleCause::DataLoading: return "the next launch came late: the CPU was loading data";
    case analysis::IdleCause::HostSync: return "the next launch came late: the launching thread was blocked in a sync call";
    case analysis::IdleCause::CaptureWarmup: return "the next launch came late: graph capture, compilation or warm-up (not steady state)";
    case analysis::IdleCause::HostCompute: return "the next launch came late: the launching thread ran CPU work that launched nothing";
    case analysis::IdleCause::LaunchBound: return "the next launch came late: the thread was busy dispatching GPU work";
    case analysis::IdleCause::HostUntraced: return "the next launch came late, and the launching thread recorded nothing meanwhile";
    case analysis::IdleCause::CrossStreamWait: return "the work was queued but waited on another stream";
    case analysis::IdleCause::CollectiveWait: return "the work was queued: a collective waiting for its peers";
    case analysis::IdleCause::LaunchLatency: return "the work was queued: a short launch-to-start delay";
    case analysis::IdleCause::Other: return "the work was queued; no host or stream cause found";
  }
  return "";
}

}  // namespace

std::string idle_gap_explanation(const TraceStore& store, const IdleGapMark& gap) {
  std::string text = "idle " + present::format_duration(double(gap.end - gap.start)) + " · " + present::idle_cause_label(gap.cause) +
                     "\n" + cause_explanation(gap.cause) +
                     "\nfix: " + std::string(analysis::idle_cause_fix(analysis::IdleCause(gap.cause)));
  if (gap.host_track >= store.tracks.size()) return text;
  // The host side of the gap is W = [start, host_end): up to the launch that ended it.
  const TimeNs w_end = gap.host_end > gap.start ? std::min(gap.host_end, gap.end) : gap.end;
  const Track& host = store.tracks[gap.host_track];
  std::string thread(store.strings.view(host.name));
  if (thread.empty()) thread = "thread " + std::string(store.strings.view(host.tid_text));
  std::vector<RangeRow> ops = aggregate_range(store, gap.start, w_end, gap.host_track);
  std::sort(ops.begin(), ops.end(), [](const RangeRow& a, const RangeRow& b) { return a.self > b.self; });
  text += "\n\n" + std::string(w_end < gap.end ? "until the launch, " + present::format_duration(double(w_end - gap.start)) + ", on " : "meanwhile on ") + thread +
          (gap.host_inferred ? " (launches this stream's work; this activity has no launch link):" : " (the launching thread):");
  const double len = double(w_end - gap.start);
  auto add_line = [&](const std::string& name, TimeNs time) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%.0f%%)", 100.0 * double(time) / len);
    text += "\n  " + name + "  " + present::format_duration(double(time)) + pct;
  };
  TimeNs traced = 0;  // self times of one thread's nested slices add up to the time it is inside one
  for (const RangeRow& op : ops) traced += std::max<TimeNs>(0, op.self);
  for (size_t i = 0; i < ops.size() && i < 4 && ops[i].self > 0; ++i) {
    std::string name = present::short_name(store.strings.view(ops[i].name));
    if (name.size() > 80) name = name.substr(0, 77) + "...";
    add_line(name, ops[i].self);
  }
  if (TimeNs untraced = (w_end - gap.start) - traced; untraced > 0) add_line("(no traced op)", untraced);
  return text;
}

// --- SourceHeaderRow ---

void SourceHeaderRow::draw(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const float x = ctx.header_x, x1 = ctx.map.x1;
  ImU32 band = src.def.band ? src.def.band : (ctx.light() ? IM_COL32(205, 212, 224, 255) : IM_COL32(60, 66, 80, 255));
  ctx.dl->AddRectFilled(ImVec2(x, y), ImVec2(x1, y + height), band);
  ctx.dl->AddLine(ImVec2(x, y + height - 1), ImVec2(x1, y + height - 1), ctx.light() ? IM_COL32(120, 130, 150, 255) : IM_COL32(150, 160, 180, 255));
  ImU32 ink = ctx.light() ? IM_COL32(20, 20, 20, 255) : IM_COL32(235, 235, 235, 255);
  std::string label = (src.folded_away ? "\xE2\x96\xB8 " : "\xE2\x96\xBE ") + src.def.label;
  if (src.def.shift) label += "   (shifted " + present::format_duration(double(src.def.shift)) + " onto this clock)";
  ctx.dl->AddText(ImVec2(x + 4, y + 4), ink, label.c_str());
  if (!src.def.closable) return;
  float box = height - 6;
  ImVec2 c0(x1 - box - 4, y + 3), c1(x1 - 4, y + 3 + box);
  float thickness = over_close(ctx, y) ? 2.f : 1.f;
  ctx.dl->AddRect(c0, c1, ink, 2);
  float m = box * 0.3f;
  ctx.dl->AddLine(ImVec2(c0.x + m, c0.y + m), ImVec2(c1.x - m, c1.y - m), ink, thickness);
  ctx.dl->AddLine(ImVec2(c0.x + m, c1.y - m), ImVec2(c1.x - m, c0.y + m), ink, thickness);
}

bool SourceHeaderRow::over_close(const RowContext& ctx, float y) const {
  float box = height - 6;
  return ctx.sources[source].def.closable && ImGui::IsMouseHoveringRect(ImVec2(ctx.map.x1 - box - 4, y + 3), ImVec2(ctx.map.x1 - 4, y + 3 + box));
}

void SourceHeaderRow::hover(RowContext& ctx, float y) const {
  if (ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(ImVec2(ctx.header_x, y), ImVec2(ctx.map.x1, y + height)) && over_close(ctx, y))
    ImGui::SetTooltip("close");
}

void SourceHeaderRow::click(RowContext& ctx, float y) const {
  if (!ImGui::IsWindowHovered() || !ImGui::IsMouseHoveringRect(ImVec2(ctx.header_x, y), ImVec2(ctx.map.x1, y + height))) return;
  if (!ImGui::IsMouseClicked(0)) return;
  TimelineSourceState& src = ctx.sources[source];
  if (over_close(ctx, y)) ctx.hits.close_request = source;
  else src.folded_away = !src.folded_away;
}

// --- ProcessHeaderRow ---

size_t ProcessHeaderRow::hidden_tracks(const RowContext& ctx) const {
  const TimelineSourceState& src = ctx.sources[source];
  size_t hidden = 0;
  for (uint32_t t : src.groups()[process]) hidden += src.hidden[t];
  return hidden;
}

void ProcessHeaderRow::draw(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const TraceStore& store = src.store();
  ctx.dl->AddRectFilled(ImVec2(ctx.header_x, y), ImVec2(ctx.map.x1, y + height), ctx.light() ? IM_COL32(225, 229, 236, 255) : IM_COL32(45, 48, 56, 255));
  std::string label;
  if (process == kNone) {
    label = "Pinned (right-click a track name to unpin)";
  } else {
    label = (src.collapsed[process] ? "▸ " : "▾ ") + process_display_name(store, process);
    if (size_t hidden = hidden_tracks(ctx)) label += "  (" + std::to_string(hidden) + " hidden: right-click)";
  }
  draw_row_label(ctx, y, 4, label);
}

void ProcessHeaderRow::click(RowContext& ctx, float y) const {
  if (process == kNone) return;
  bool over = ImGui::IsMouseHoveringRect(ImVec2(ctx.header_x, y), ImVec2(ctx.header_x + ctx.header_width, y + height));
  if (!over) return;
  TimelineSourceState& src = ctx.sources[source];
  size_t hidden = hidden_tracks(ctx);
  if (ImGui::IsMouseClicked(0)) src.collapsed[process] ^= 1;
  if (hidden && ImGui::IsMouseClicked(1))
    for (uint32_t t : src.groups()[process]) src.hidden[t] = 0;
}

// --- MoreLevelsRow ---

void MoreLevelsRow::draw(RowContext& ctx, float y) const {
  bool over = ImGui::IsMouseHoveringRect(ImVec2(ctx.header_x, y), ImVec2(ctx.map.x1, y + height));
  ctx.dl->AddRectFilled(ImVec2(ctx.map.x0, y + 1), ImVec2(ctx.map.x1, y + height - 1),
                        ctx.light() ? IM_COL32(0, 0, 0, over ? 22 : 10) : IM_COL32(255, 255, 255, over ? 30 : 14));
  std::string text = "\xE2\x96\xB8 " + std::to_string(levels) + " more levels (click to unfold)";
  ctx.dl->AddText(ImVec2(ctx.header_x + 14, y + 2), ctx.light() ? IM_COL32(0, 90, 150, 255) : IM_COL32(120, 190, 240, 255), text.c_str());
}

void MoreLevelsRow::click(RowContext& ctx, float y) const {
  if (ImGui::IsMouseHoveringRect(ImVec2(ctx.header_x, y), ImVec2(ctx.map.x1, y + height)) && ImGui::IsMouseClicked(0))
    ctx.sources[source].unfolded[track] = 1;
}

// --- CounterRow: a step chart with min/max per pixel column, so dense series stay honest ---

const TimelineSourceState::CounterIndex& CounterRow::index(TimelineSourceState& src, uint32_t counter) {
  if (src.counters.size() != src.store().counters.size()) src.counters.resize(src.store().counters.size());
  const CounterSeries& s = src.store().counters[counter];
  TimelineSourceState::CounterIndex& index = src.counters[counter];
  if (index.extremes.size() != s.value.size() || index.extremes.data() != s.value.data() || index.times.size() != s.ts.size()) {
    index.extremes = present::RangeMinMax(s.value);
    index.times = present::SampledKeys(s.ts.size(), [&](size_t p) { return s.ts[p]; });
  }
  return index;
}

void CounterRow::draw(RowContext& ctx, float y) const {
  TimelineSourceState& src = ctx.sources[source];
  const CounterSeries& s = src.store().counters[counter];
  draw_row_label(ctx, y, 14, std::string(src.store().strings.view(s.name)));
  if (s.ts.empty()) return;
  const TimeMapping& map = ctx.map;
  const float x0 = map.x0, x1 = map.x1;
  auto x_at = [&](TimeNs t) { return map.x_of(src.view(t)); };
  const double shift = double(src.def.shift);
  const TimelineSourceState::CounterIndex& index = CounterRow::index(src, counter);
  const present::RangeMinMax& extremes = index.extremes;
  auto ts_at = [&](size_t p) { return s.ts[p]; };
  auto [mn, mx] = extremes.all();
  double lo = std::min(0.0, mn), hi = std::max(mx, lo + 1e-12);
  float h = height - 4;
  auto y_of = [&](double v) { return y + 2 + h - float((v - lo) / (hi - lo)) * h; };
  ImU32 fill = IM_COL32(0, 114, 178, 150);
  const TimeNs view_start = TimeNs(map.t0 - shift);
  size_t first_after = index.times.partition_point(ts_at, [&](TimeNs t) { return t <= view_start; });
  size_t i = first_after == 0 ? 0 : first_after - 1;
  for (float x = std::max(x0, x_at(s.ts[i])); x < x1 && i < s.ts.size(); x += 1) {
    double col_end = map.t_of(x + 1) - shift;  // the column's end on the store's clock
    // The column's points: i and every later one before col_end (a search from i through the
    // sampled times, and the extremes' blocks: a zoomed-out column of many points costs no walk
    // over them).
    size_t j = index.times.partition_point_from(i + 1, ts_at, [&](TimeNs t) { return double(t) < col_end; }) - 1;
    auto [vmin, vmax] = extremes.of(i, j + 1);
    ctx.dl->AddRectFilled(ImVec2(x, y_of(vmax)), ImVec2(x + 1, y + 2 + h), fill);
    if (vmin != vmax) ctx.dl->AddRectFilled(ImVec2(x, y_of(vmax)), ImVec2(x + 1, y_of(vmin) + 1), IM_COL32(0, 80, 140, 255));
    ++ctx.stats.counter_columns;
    i = j;
    if (j + 1 < s.ts.size() && double(s.ts[j + 1]) >= col_end && x_at(s.ts[j + 1]) > x + 1) {
      // hold the value until the next point
      float next = std::min(x_at(s.ts[j + 1]), x1);
      ctx.dl->AddRectFilled(ImVec2(x + 1, y_of(s.value[j])), ImVec2(next, y + 2 + h), fill);
      x = next - 1;
      ++i;
    } else if (j + 1 >= s.ts.size()) {
      break;
    } else {
      ++i;
    }
  }
}

// --- LaneRow ---

// Every lane, on screen or not: the first lane's y is its track's (flows and path links use it).
void LaneRow::laid_out(RowContext& ctx, float y) const {
  if (lane == 0) ctx.sources[source].track_y[track] = y;
}

// The first lane of a track on screen draws the track's header, separator and idle gaps (so the
// header shows while any of its lanes does), then every lane draws its slices and outlines.
void LaneRow::draw(RowContext& ctx, float y) const {
  if (ctx.header_track != track || ctx.header_source != source) {
    ctx.header_source = source, ctx.header_track = track, ctx.header_y = y;
    const Track& t = ctx.sources[source].store().tracks[track];
    if (ctx.show_idle && t.kind == TrackKind::GpuStream) draw_gaps(ctx, y, ctx.lane_height * float(std::max<uint32_t>(1, t.row_count())));
    draw_header(ctx, y);
    ctx.dl->AddLine(ImVec2(ctx.header_x, y - 1.5f), ImVec2(ctx.map.x1, y - 1.5f), ctx.light() ? IM_COL32(225, 225, 225, 255) : IM_COL32(55, 55, 55, 255));
  }
  draw_slices(ctx, y);
  draw_outlines(ctx, y);
  draw_instant_ticks(ctx, y);
}

bool LaneRow::draws_header(const RowContext& ctx, float y) const {
  return ctx.header_source == source && ctx.header_track == track && ctx.header_y == y;
}

bool LaneRow::over_header(const RowContext& ctx, float y) const {
  return draws_header(ctx, y) && ImGui::IsMouseHoveringRect(ImVec2(ctx.header_x, y), ImVec2(ctx.header_x + ctx.header_width, y + ctx.lane_height));
}

void LaneRow::draw_header(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const TraceStore& store = src.store();
  const Track& t = store.tracks[track];
  std::string label = src.pinned[track] ? track_full_name(store, track) : track_display_name(store, track);
  if (src.idle_share[track] >= 0 && ctx.show_idle) label += "  idle " + human::percent(src.idle_share[track] * 100);
  if (t.overlapping) label += "  ⚠" + std::to_string(t.overlapping);
  draw_row_label(ctx, y, 14, label);
}

// The track's tooltip over its header; the slice's under the mouse (a folded block's is shown as
// the block is found, in draw_slices, and an idle gap's in draw_gaps).
void LaneRow::hover(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const TraceStore& store = src.store();
  const Track& t = store.tracks[track];
  if (over_header(ctx, y))
    ImGui::SetTooltip("%s\n%s\n%s slices, %u lanes%s\nright-click: pin or hide", track_full_name(store, track).c_str(),
                      track_raw_ids(store, track).c_str(), human::count(int64_t(t.slices.size())).c_str(), t.row_count(),
                      t.overlapping ? "\noverlapping slices are drawn on extra lanes (⚠)" : "");
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  bool mouse_in_row = mouse.y >= y && mouse.y < y + ctx.lane_height && mouse.x >= ctx.map.x0 && mouse.x < ctx.map.x1;
  const SourceSlice& h = ctx.hits.hovered;
  if (h.valid() && h.source == source && h.ref.track == track && t.row_of(h.ref.index) == lane && !ctx.hits.fold_hovered && mouse_in_row)
    slice_tooltip(src, h.ref);
}

// A right-click on the track's header opens the view's track menu (pin, hide, fold).
void LaneRow::click(RowContext& ctx, float y) const {
  if (over_header(ctx, y) && ImGui::IsMouseClicked(1)) {
    ctx.hits.menu_source = source, ctx.hits.menu_track = track;
    ImGui::OpenPopup("track menu");
  }
}

void LaneRow::draw_gaps(RowContext& ctx, float y, float height) const {
  TimelineSourceState& src = ctx.sources[source];
  const auto& gaps = src.gaps[track];
  const TimeMapping& map = ctx.map;
  const double lo = map.t0 - double(src.def.shift), hi = map.t1 - double(src.def.shift);
  const present::SampledKeys& ends = src.gap_ends[track];
  auto end_at = [&](size_t p) { return gaps[p].end; };
  size_t i = ends.partition_point(end_at, [&](TimeNs end) { return double(end) < lo; });
  ImGuiIO& io = ImGui::GetIO();
  while (i < gaps.size() && double(gaps[i].start) <= hi) {
    const IdleGapMark& gap = gaps[i];
    float a = std::max(map.x_of(src.view(gap.start)), map.x0), b = std::min(map.x_of(src.view(gap.end)), map.x1);
    if (b - a < 1) {
      // Sub-pixel gaps: the track looks busy there, as it is. Every later gap that ends before
      // the next pixel is sub-pixel too (gaps are sorted and disjoint): skip them in one search,
      // so a zoomed-out frame costs per pixel, not per gap.
      const double next_px = map.t_of(a + 1) - double(src.def.shift);
      i = ends.partition_point_from(i + 1, end_at, [&](TimeNs end) { return double(end) < next_px; });
      continue;
    }
    ctx.dl->AddRectFilled(ImVec2(a, y), ImVec2(b, y + height), with_alpha(idle_cause_color(gap.cause), 90));
    ++ctx.stats.gaps_drawn;
    ++src.gaps_drawn[track];
    if (io.MousePos.x >= a && io.MousePos.x < b && io.MousePos.y >= y && io.MousePos.y < y + height) gap_tooltip(ctx, source, gap);
    ++i;
  }
}

// A track's instants as ticks at the top of its first lane, over its slices (drawn under them,
// the slices hid all but a pixel of each tick).
void LaneRow::draw_instant_ticks(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const auto& ts = src.store().tracks[track].instants.ts;
  if (lane != 0 || ts.empty()) return;
  const TimeMapping& map = ctx.map;
  const double shift = double(src.def.shift), lo = map.t0 - shift, hi = map.t1 - shift;
  auto sx = [&](TimeNs t) { return map.x_of(double(t) + shift); };
  const ImU32 color = ctx.light() ? IM_COL32(90, 90, 90, 220) : IM_COL32(200, 200, 200, 220);
  auto it = std::lower_bound(ts.begin(), ts.end(), TimeNs(lo));
  while (it != ts.end() && double(*it) <= hi) {
    float x = sx(*it);
    ctx.dl->AddTriangleFilled(ImVec2(x - 3, y), ImVec2(x + 3, y), ImVec2(x, y + 5), color);
    // The next tick at least 2 px on: instants closer than that share this one's (per pixel,
    // not per instant, however many a zoomed-out view holds).
    it = present::gallop_partition_point(it + 1, ts.end(), [&](TimeNs t) { return sx(t) - x < 2; });
  }
}

// Slices of one lane. Runs narrower than kFoldPx fold into one block with a count, so the work
// per row is bounded by its width in pixels whatever the number of slices. The lane's store has
// its own clock: the view window is taken onto it once (lo, hi) and each x adds the shift back.
// The slice or block under the mouse goes to ctx.hits as it is found.
void LaneRow::draw_slices(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const TraceStore& store = src.store();
  const Track& t = store.tracks[track];
  const TimeMapping& map = ctx.map;
  const float x0 = map.x0, x1 = map.x1, lane_height = ctx.lane_height;
  const double shift = double(src.def.shift), lo = map.t0 - shift, hi = map.t1 - shift;
  auto sx = [&](TimeNs ts) { return map.x_of(double(ts) + shift); };
  bool light = ctx.light();
  ImDrawList* dl = ctx.dl;
  ImGuiIO& io = ImGui::GetIO();
  bool mouse_in_row = io.MousePos.y >= y && io.MousePos.y < y + lane_height && io.MousePos.x >= x0 && io.MousePos.x < x1;
  std::shared_ptr<const ShortNames> names;  // fetched on the first label of the lane
  const TimelineSourceState::LaneIndex& index = src.lanes[track];
  if (lane >= index.rows.size()) return;
  const auto& slices = index.rows[lane];
  size_t i = index.first_ending(lane, [&](TimeNs t) { return double(t) < lo; });
  ImU32 border = light ? IM_COL32(0, 0, 0, 50) : IM_COL32(0, 0, 0, 120);
  while (i < slices.size() && double(index.start(lane, i)) <= hi) {
    const TimeNs start = index.start(lane, i);
    float sx0 = sx(start), sx1 = sx(index.end(lane, i));
    if (sx1 - sx0 < kFoldPx) {
      // Fold: everything starting within the next kFoldPx pixels joins this block.
      double limit = double(start) + kFoldPx * map.ns_per_px;
      size_t j = index.first_starting(lane, [&](TimeNs t) { return double(t) < limit; }, i);
      // Slices on a row never overlap, so only the run's last slice can be wide: it is drawn
      // on its own next time round.
      if (j - i > 1 && sx(index.end(lane, j - 1)) - sx(index.start(lane, j - 1)) >= kFoldPx) --j;
      const TimeNs last_end = index.end(lane, j - 1);
      float bx1 = std::max(sx(last_end), sx0 + 1.f);
      if (j - i == 1) {
        SliceRef s{track, slices[i]};
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), y + 1), ImVec2(std::min(bx1, x1), y + lane_height - 1), slice_color(ctx, src, s));
        if (mouse_in_row && io.MousePos.x >= sx0 - 1 && io.MousePos.x <= bx1 + 1) ctx.hits.hovered = {source, s};
        ++ctx.stats.slices_drawn;
      } else {
        // A folded block is as tall as the run is busy: zoomed far out, a GPU stream reads as a
        // utilisation chart (prefix sums: no walk over the folded slices).
        double span = double(std::max<TimeNs>(1, last_end - start));
        float fraction = float(std::clamp(double(index.busy(lane, i, j)) / span, 0.08, 1.0));
        float top = y + 1 + (lane_height - 2) * (1 - fraction);
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), y + 1), ImVec2(std::min(bx1, x1), y + lane_height - 1),
                          light ? IM_COL32(222, 224, 230, 255) : IM_COL32(52, 52, 58, 255));
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), top), ImVec2(std::min(bx1, x1), y + lane_height - 1),
                          light ? IM_COL32(120, 124, 140, 255) : IM_COL32(130, 130, 145, 255));
        if (mouse_in_row && io.MousePos.x >= sx0 && io.MousePos.x <= bx1) {
          ctx.hits.fold_hovered = true;
          ctx.hits.fold = {start + src.def.shift, last_end + src.def.shift, uint32_t(j - i)};
          ImGui::SetTooltip("%s slices folded (%s, %s busy)\nclick to zoom in", human::count(int64_t(j - i)).c_str(),
                            present::format_duration(double(last_end - start)).c_str(), human::percent(fraction * 100).c_str());
        }
        ++ctx.stats.folded_blocks;
      }
      i = j;
      continue;
    }
    const uint32_t r = slices[i];
    SliceRef s{track, r};
    ImU32 fill = slice_color(ctx, src, s);
    ImVec2 a(std::max(sx0, x0), y + 1), b(std::min(sx1, x1), y + lane_height - 1);
    dl->AddRectFilled(a, b, fill);
    dl->AddRect(a, b, border);
    if (t.slices.lane[r] > 0) dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, b.y), IM_COL32(213, 94, 0, 255), 2);
    if (b.x - a.x > 24) {
      std::string_view full = store.name(s);
      if (!names) names = store_short_names(store);
      std::string label = (*names)(full);
      dl->PushClipRect(a, b, true);
      dl->AddText(ImVec2(a.x + 3, y + 2), text_color_on(fill), label.c_str());
      dl->PopClipRect();
    }
    if (mouse_in_row && io.MousePos.x >= sx0 && io.MousePos.x < sx1) ctx.hits.hovered = {source, s};
    ++ctx.stats.slices_drawn;
    ++i;
  }
}

// Outlines on this lane: highlighted slices (search results, linked views), the path overlay's,
// then the selection.
void LaneRow::draw_outlines(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const TraceStore& store = src.store();
  const Track& t = store.tracks[track];
  if (lane >= src.lanes[track].rows.size()) return;  // an instants-only lane: nothing to outline
  const SliceColumns& c = t.slices;
  const TimeMapping& map = ctx.map;
  const double shift = double(src.def.shift), lo = map.t0 - shift, hi = map.t1 - shift;
  auto sx = [&](TimeNs ts) { return map.x_of(double(ts) + shift); };
  auto outline = [&](SliceRef s, ImU32 color, float thickness) {
    if (s.track != track || t.row_of(s.index) != lane) return;
    float a = sx(c.start[s.index]), b = std::max(sx(c.end(s.index)), a + 2);
    if (b < map.x0 || a > map.x1) return;
    ctx.dl->AddRect(ImVec2(std::max(a, map.x0) - 1, y), ImVec2(std::min(b, map.x1) + 1, y + ctx.lane_height), color, 0, 0, thickness);
  };
  const auto& highlights = src.highlights;
  if (!highlights.empty()) {
    auto first = std::partition_point(highlights.begin(), highlights.end(), [&](SliceRef s) { return double(store.end(s)) < lo; });
    int budget = 2000;  // bounded per row: highlights are for finding, not for drawing everything
    for (auto h = first; h != highlights.end() && double(store.start(*h)) <= hi && budget-- > 0; ++h)
      outline(*h, IM_COL32(230, 159, 0, 255), 2);
  }
  if (!src.path.slices.empty()) outline_path(ctx, y);
  if (ctx.selected.valid() && ctx.selected.source == source)
    outline(ctx.selected.ref, ctx.light() ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), 2.5f);
}

// The path's slices on this lane, in view: a visible outline however narrow the slice (a path
// slice inside a folded run still shows). Bounded: path slices starting in the view, capped.
void LaneRow::outline_path(RowContext& ctx, float y) const {
  const TimelineSourceState& src = ctx.sources[source];
  const TraceStore& store = src.store();
  const SliceColumns& c = store.slices(track);
  const auto& rows = src.path_rows[track];
  if (rows.empty()) return;
  const TimeMapping& map = ctx.map;
  const double shift = double(src.def.shift), lo = map.t0 - shift, hi = map.t1 - shift;
  present::Rgb rgb = present::critical_path_outline_rgb();
  ImU32 color = IM_COL32(rgb.r, rgb.g, rgb.b, 255);
  TimeNs from = TimeNs(lo) - src.path_max_dur[track];
  auto it = std::partition_point(rows.begin(), rows.end(), [&](uint32_t r) { return c.start[r] < from; });
  int budget = 4000;
  float last_b = -1e9f;
  for (; it != rows.end() && double(c.start[*it]) <= hi && budget > 0; ++it) {
    uint32_t r = *it;
    if (store.tracks[track].row_of(r) != lane || double(c.end(r)) < lo) continue;
    float a = map.x_of(src.view(c.start[r])), b = std::max(map.x_of(src.view(c.end(r))), a + 3);
    if (b <= last_b) continue;  // inside the previous outline at this zoom: nothing new to draw
    last_b = b, --budget;
    ctx.dl->AddRect(ImVec2(std::max(a, map.x0) - 1, y), ImVec2(std::min(b, map.x1) + 1, y + ctx.lane_height), color, 0, 0, 2.5f);
    ++ctx.stats.path_outlined;
  }
}

}  // namespace sl::views
