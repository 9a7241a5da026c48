// The timeline's row kinds, drawn: a source's header, process and track headers, a lane of
// slices (folded to pixels), the "N more levels" fold, a counter, and the idle gaps under a GPU
// stream with their hover explanation. Each draws one row of `rows_` at screen y, taking its
// source's store and shift (store clock + shift = view clock) from the row.
#include <algorithm>
#include <cmath>
#include <string>

#include "core/analysis/idle_time.h"
#include "core/format.h"
#include "core/present/gallop.h"
#include "core/present/palette.h"
#include "core/present/time_axis.h"
#include "core/short_names.h"
#include "core/track_names.h"
#include "views/range_stats.h"
#include "views/timeline_view.h"

namespace sl::views {
namespace {

constexpr float kFoldPx = 3.f;  // slices narrower than this fold into a block

ImU32 with_alpha(ImU32 c, int alpha) { return (c & 0x00FFFFFF) | (ImU32(alpha) << 24); }

}  // namespace

// A source's header across the whole width: its label in its band colour, a click folds or
// unfolds the source, and a closable source has a close box at the right.
void TimelineView::draw_source_header(ImDrawList* dl, const Row& row, float x, float y) {
  Source& src = sources_[row.source];
  bool light = theme == Theme::Light;
  ImU32 band = src.def.band ? src.def.band : (light ? IM_COL32(205, 212, 224, 255) : IM_COL32(60, 66, 80, 255));
  ImVec2 a(x, y), b(canvas_x1_, y + row.height);
  dl->AddRectFilled(a, b, band);
  dl->AddLine(ImVec2(x, b.y - 1), ImVec2(canvas_x1_, b.y - 1), light ? IM_COL32(120, 130, 150, 255) : IM_COL32(150, 160, 180, 255));
  ImU32 ink = light ? IM_COL32(20, 20, 20, 255) : IM_COL32(235, 235, 235, 255);
  std::string label = (src.folded_away ? "\xE2\x96\xB8 " : "\xE2\x96\xBE ") + src.def.label;
  if (src.def.shift) label += "   (shifted " + present::format_duration(double(src.def.shift)) + " onto this clock)";
  dl->AddText(ImVec2(x + 4, y + 4), ink, label.c_str());
  float box = row.height - 6;
  ImVec2 c0(canvas_x1_ - box - 4, y + 3), c1(canvas_x1_ - 4, y + 3 + box);
  bool over_close = src.def.closable && ImGui::IsMouseHoveringRect(c0, c1);
  if (src.def.closable) {
    dl->AddRect(c0, c1, ink, 2);
    float m = box * 0.3f;
    dl->AddLine(ImVec2(c0.x + m, c0.y + m), ImVec2(c1.x - m, c1.y - m), ink, over_close ? 2.f : 1.f);
    dl->AddLine(ImVec2(c0.x + m, c1.y - m), ImVec2(c1.x - m, c0.y + m), ink, over_close ? 2.f : 1.f);
  }
  if (!ImGui::IsWindowHovered() || !ImGui::IsMouseHoveringRect(a, b)) return;
  if (over_close) ImGui::SetTooltip("close");
  if (!ImGui::IsMouseClicked(0)) return;
  if (over_close) close_request_ = row.source;
  else src.folded_away = !src.folded_away;
}

// The fold of a deep track: "▸ N more levels" across the row; a click unfolds it.
void TimelineView::draw_more_levels(ImDrawList* dl, const Row& row, float x, float y) {
  bool light = theme == Theme::Light;
  ImVec2 a(x, y), b(canvas_x1_, y + row.height);
  bool over = ImGui::IsMouseHoveringRect(a, b);
  dl->AddRectFilled(ImVec2(canvas_x0_, y + 1), ImVec2(canvas_x1_, y + row.height - 1),
                    light ? IM_COL32(0, 0, 0, over ? 22 : 10) : IM_COL32(255, 255, 255, over ? 30 : 14));
  std::string text = "\xE2\x96\xB8 " + std::to_string(row.lane_row) + " more levels (click to unfold)";
  dl->AddText(ImVec2(x + 14, y + 2), light ? IM_COL32(0, 90, 150, 255) : IM_COL32(120, 190, 240, 255), text.c_str());
  if (over && ImGui::IsMouseClicked(0)) sources_[row.source].unfolded[row.track] = 1;
}

void TimelineView::draw_header(ImDrawList* dl, const Row& row, float x, float y, float width) {
  Source& src = sources_[row.source];
  const TraceStore& store = src.store();
  bool light = theme == Theme::Light;
  ImU32 ink = light ? IM_COL32(30, 30, 30, 255) : IM_COL32(225, 225, 225, 255);
  std::string label;
  if (row.kind == Row::ProcessHeader && row.process == kNone) {
    label = "Pinned (right-click a track name to unpin)";
  } else if (row.kind == Row::ProcessHeader) {
    const Process& p = store.processes[row.process];
    label = (src.collapsed[row.process] ? "▸ " : "▾ ") + process_display_name(store, row.process);
    size_t hidden = 0;
    for (uint32_t t : p.tracks) hidden += src.hidden[t];
    bool over = ImGui::IsMouseHoveringRect(ImVec2(x, y), ImVec2(x + width, y + row.height));
    if (hidden) label += "  (" + std::to_string(hidden) + " hidden: right-click)";
    if (over && ImGui::IsMouseClicked(0)) src.collapsed[row.process] ^= 1;
    if (over && hidden && ImGui::IsMouseClicked(1))
      for (uint32_t t : p.tracks) src.hidden[t] = 0;
  } else if (row.kind == Row::Counter) {
    label = std::string(store.strings.view(store.counters[row.counter].name));
  } else {
    const Track& t = store.tracks[row.track];
    label = src.pinned[row.track] ? track_full_name(store, row.track) : track_display_name(store, row.track);
    if (src.idle_share[row.track] >= 0 && show_idle) {
      label += "  idle " + human::percent(src.idle_share[row.track] * 100);
    }
    if (t.overlapping) label += "  ⚠" + std::to_string(t.overlapping);
  }
  dl->PushClipRect(ImVec2(x, y), ImVec2(x + width - 4, y + lane_height_ + 4), true);
  dl->AddText(ImVec2(x + (row.kind == Row::ProcessHeader ? 4 : 14), y + 2), ink, label.c_str());
  dl->PopClipRect();
  if (row.kind == Row::Lane && ImGui::IsMouseHoveringRect(ImVec2(x, y), ImVec2(x + width, y + lane_height_))) {
    if (ImGui::IsMouseClicked(1)) {
      menu_source_ = row.source, menu_track_ = row.track;
      ImGui::OpenPopup("track menu");
    }
    const Track& t = store.tracks[row.track];
    ImGui::SetTooltip("%s\n%s\n%s slices, %u lanes%s\nright-click: pin or hide", track_full_name(store, row.track).c_str(),
                      track_raw_ids(store, row.track).c_str(), human::count(int64_t(t.slices.size())).c_str(), t.row_count(),
                      t.overlapping ? "\noverlapping slices are drawn on extra lanes (⚠)" : "");
  }
}

// Slices of one lane. Runs narrower than kFoldPx fold into one block with a count, so the work
// per row is bounded by its width in pixels whatever the number of slices. The lane's store has
// its own clock: the view window is taken onto it once (lo, hi) and each x adds the shift back.
void TimelineView::draw_lane(ImDrawList* dl, const Row& row, float x0, float y, float x1) {
  const Source& src = sources_[row.source];
  const TraceStore& store = src.store();
  const Track& track = store.tracks[row.track];
  const SliceColumns& c = track.slices;
  const double shift = double(src.def.shift), lo = t0_ - shift, hi = t1_ - shift;
  auto sx = [&](TimeNs t) { return x_of(double(t) + shift); };
  bool light = theme == Theme::Light;
  ImGuiIO& io = ImGui::GetIO();
  bool mouse_in_row = io.MousePos.y >= y && io.MousePos.y < y + lane_height_ && io.MousePos.x >= x0 && io.MousePos.x < x1;
  std::shared_ptr<const ShortNames> names;  // fetched on the first label of the lane
  if (row.lane_row == 0 && track.instants.size()) {  // instants as ticks at the top of the track
    const auto& ts = track.instants.ts;
    auto it = std::lower_bound(ts.begin(), ts.end(), TimeNs(lo));
    float last_x = -1e9f;
    for (; it != ts.end() && double(*it) <= hi; ++it) {
      float x = sx(*it);
      if (x - last_x < 2) continue;
      last_x = x;
      dl->AddTriangleFilled(ImVec2(x - 3, y), ImVec2(x + 3, y), ImVec2(x, y + 5), light ? IM_COL32(90, 90, 90, 220) : IM_COL32(200, 200, 200, 220));
    }
  }
  if (row.lane_row >= src.lanes[row.track].rows.size()) return;
  const auto& slices = src.lanes[row.track].rows[row.lane_row];
  auto it = std::partition_point(slices.begin(), slices.end(), [&](uint32_t r) { return double(c.end(r)) < lo; });
  size_t i = size_t(it - slices.begin());
  ImU32 border = light ? IM_COL32(0, 0, 0, 50) : IM_COL32(0, 0, 0, 120);
  while (i < slices.size() && double(c.start[slices[i]]) <= hi) {
    uint32_t r = slices[i];
    float sx0 = sx(c.start[r]), sx1 = sx(c.end(r));
    if (sx1 - sx0 < kFoldPx) {
      // Fold: everything starting within the next kFoldPx pixels joins this block.
      double limit = double(c.start[r]) + kFoldPx * ns_per_px_;
      auto end_it = present::gallop_partition_point(slices.begin() + i, slices.end(), [&](uint32_t q) { return double(c.start[q]) < limit; });
      size_t j = size_t(end_it - slices.begin());
      // Slices on a row never overlap, so only the run's last slice can be wide: it is drawn
      // on its own next time round.
      if (j - i > 1 && sx(c.end(slices[j - 1])) - sx(c.start[slices[j - 1]]) >= kFoldPx) --j;
      uint32_t last = slices[j - 1];
      float bx1 = std::max(sx(c.end(last)), sx0 + 1.f);
      if (j - i == 1) {
        SliceRef s{row.track, r};
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), y + 1), ImVec2(std::min(bx1, x1), y + lane_height_ - 1), slice_color(src, s));
        if (mouse_in_row && io.MousePos.x >= sx0 - 1 && io.MousePos.x <= bx1 + 1) hovered_ = {row.source, s};
        ++stats_.slices_drawn;
      } else {
        // A folded block is as tall as the run is busy: zoomed far out, a GPU stream reads as a
        // utilisation chart (prefix sums: no walk over the folded slices).
        const auto& busy = src.lanes[row.track].busy[row.lane_row];
        double span = double(std::max<TimeNs>(1, c.end(last) - c.start[r]));
        float fraction = float(std::clamp(double(busy[j] - busy[i]) / span, 0.08, 1.0));
        float top = y + 1 + (lane_height_ - 2) * (1 - fraction);
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), y + 1), ImVec2(std::min(bx1, x1), y + lane_height_ - 1),
                          light ? IM_COL32(222, 224, 230, 255) : IM_COL32(52, 52, 58, 255));
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), top), ImVec2(std::min(bx1, x1), y + lane_height_ - 1),
                          light ? IM_COL32(120, 124, 140, 255) : IM_COL32(130, 130, 145, 255));
        if (mouse_in_row && io.MousePos.x >= sx0 && io.MousePos.x <= bx1) {
          fold_hovered_ = true;
          fold_hover_ = {c.start[r] + src.def.shift, c.end(last) + src.def.shift, uint32_t(j - i)};
          ImGui::SetTooltip("%s slices folded (%s, %s busy)\nclick to zoom in", human::count(int64_t(j - i)).c_str(),
                            present::format_duration(double(c.end(last) - c.start[r])).c_str(), human::percent(fraction * 100).c_str());
        }
        ++stats_.folded_blocks;
      }
      i = j;
      continue;
    }
    SliceRef s{row.track, r};
    ImU32 fill = slice_color(src, s);
    ImVec2 a(std::max(sx0, x0), y + 1), b(std::min(sx1, x1), y + lane_height_ - 1);
    dl->AddRectFilled(a, b, fill);
    dl->AddRect(a, b, border);
    if (track.slices.lane[r] > 0) dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, b.y), IM_COL32(213, 94, 0, 255), 2);
    if (b.x - a.x > 24) {
      std::string_view full = store.name(s);
      if (!names) names = store_short_names(store);
      std::string label = (*names)(full);
      dl->PushClipRect(a, b, true);
      dl->AddText(ImVec2(a.x + 3, y + 2), text_color_on(fill), label.c_str());
      dl->PopClipRect();
    }
    if (mouse_in_row && io.MousePos.x >= sx0 && io.MousePos.x < sx1) hovered_ = {row.source, s};
    ++stats_.slices_drawn;
    ++i;
  }
  // Outline highlighted and selected slices on this row (search results, linked views).
  auto outline = [&](SliceRef s, ImU32 color, float thickness) {
    if (s.track != row.track || track.row_of(s.index) != row.lane_row) return;
    float a = sx(c.start[s.index]), b = std::max(sx(c.end(s.index)), a + 2);
    if (b < x0 || a > x1) return;
    dl->AddRect(ImVec2(std::max(a, x0) - 1, y), ImVec2(std::min(b, x1) + 1, y + lane_height_), color, 0, 0, thickness);
  };
  const auto& highlights = src.highlights;
  if (!highlights.empty()) {
    auto first = std::partition_point(highlights.begin(), highlights.end(), [&](SliceRef s) { return double(store.end(s)) < lo; });
    int budget = 2000;  // bounded per row: highlights are for finding, not for drawing everything
    for (auto h = first; h != highlights.end() && double(store.start(*h)) <= hi && budget-- > 0; ++h)
      outline(*h, IM_COL32(230, 159, 0, 255), 2);
  }
  if (!src.path.slices.empty()) outline_path(dl, row, x0, y, x1);
  if (selected_.valid() && selected_.source == row.source)
    outline(selected_.ref, light ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), 2.5f);
  if (hovered_.valid() && hovered_.source == row.source && hovered_.ref.track == row.track &&
      track.row_of(hovered_.ref.index) == row.lane_row && !fold_hovered_ && mouse_in_row)
    slice_tooltip(src, hovered_.ref);
}

void TimelineView::slice_tooltip(const Source& src, SliceRef s) {
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

void TimelineView::draw_gaps(ImDrawList* dl, uint32_t source, uint32_t track, float x0, float y, float x1, float height) {
  Source& src = sources_[source];
  const auto& gaps = src.gaps[track];
  const double lo = t0_ - double(src.def.shift), hi = t1_ - double(src.def.shift);
  auto it = std::partition_point(gaps.begin(), gaps.end(), [&](const IdleGapMark& g) { return double(g.end) < lo; });
  ImGuiIO& io = ImGui::GetIO();
  while (it != gaps.end() && double(it->start) <= hi) {
    float a = std::max(x_of(src.view(it->start)), x0), b = std::min(x_of(src.view(it->end)), x1);
    if (b - a < 1) {
      // Sub-pixel gaps: the track looks busy there, as it is. Every later gap that ends before
      // the next pixel is sub-pixel too (gaps are sorted and disjoint): skip them in one search,
      // so a zoomed-out frame costs per pixel, not per gap.
      const double next_px = t_of(a + 1) - double(src.def.shift);
      it = present::gallop_partition_point(it + 1, gaps.end(), [&](const IdleGapMark& g) { return double(g.end) < next_px; });
      continue;
    }
    dl->AddRectFilled(ImVec2(a, y), ImVec2(b, y + height), with_alpha(idle_cause_color(it->cause), 90));
    ++stats_.gaps_drawn;
    ++src.gaps_drawn[track];
    if (io.MousePos.x >= a && io.MousePos.x < b && io.MousePos.y >= y && io.MousePos.y < y + height) gap_tooltip(source, *it);
    ++it;
  }
}

namespace {

// One line per cause: why the rule fired, in the user's words.
const char* cause_explanation(int cause) {
  switch (analysis::IdleCause(cause)) {
    case analysis::IdleCause::DataLoading: return "the next launch came late: the CPU was loading data";
    case analysis::IdleCause::HostSync: return "the next launch came late: the launching thread was blocked in a sync call";
    case analysis::IdleCause::HostLaunchBound: return "the next launch came late: the CPU was busy elsewhere";
    case analysis::IdleCause::CrossStreamWait: return "the work was queued but waited on another stream";
    case analysis::IdleCause::LaunchLatency: return "the work was queued: a short launch-to-start delay";
    case analysis::IdleCause::Other: return "the work was queued; no host or stream cause found";
    case analysis::IdleCause::CollectiveWait: return "this stream runs only collectives: waiting for the next one";
  }
  return "";
}

}  // namespace

std::string idle_gap_explanation(const TraceStore& store, const IdleGapMark& gap) {
  std::string text = "idle " + present::format_duration(double(gap.end - gap.start)) + " · " + present::idle_cause_label(gap.cause) +
                     "\n" + cause_explanation(gap.cause);
  if (gap.host_track >= store.tracks.size()) return text;
  const Track& host = store.tracks[gap.host_track];
  std::string thread(store.strings.view(host.name));
  if (thread.empty()) thread = "thread " + std::string(store.strings.view(host.tid_text));
  std::vector<RangeRow> ops = aggregate_range(store, gap.start, gap.end, gap.host_track);
  std::sort(ops.begin(), ops.end(), [](const RangeRow& a, const RangeRow& b) { return a.self > b.self; });
  text += "\n\nmeanwhile on " + thread +
          (gap.host_inferred ? " (launches this stream's work; this activity has no launch link):" : " (the launching thread):");
  const double len = double(gap.end - gap.start);
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
  if (TimeNs untraced = (gap.end - gap.start) - traced; untraced > 0) add_line("(no traced op)", untraced);
  return text;
}

// Built when the hovered gap changes, so a still mouse costs nothing per frame.
void TimelineView::gap_tooltip(uint32_t source, const IdleGapMark& gap) {
  if (gap_hover_.source != source || gap_hover_.track != gap.track || gap_hover_.start != gap.start)
    gap_hover_ = {source, gap.track, gap.start, idle_gap_explanation(sources_[source].store(), gap)};
  ImGui::SetTooltip("%s", gap_hover_.text.c_str());
}

// A counter's extremes index, built the first time it is drawn (the view is rebuilt when its
// store changes; the size check guards a series that grew anyway).
const present::RangeMinMax& TimelineView::counter_extremes(Source& src, uint32_t counter) {
  if (src.counter_extremes.size() != src.store().counters.size()) src.counter_extremes.resize(src.store().counters.size());
  const std::vector<double>& values = src.store().counters[counter].value;
  present::RangeMinMax& index = src.counter_extremes[counter];
  if (index.size() != values.size() || index.data() != values.data()) index = present::RangeMinMax(values);
  return index;
}

// Counters as step charts with min/max per pixel column, so dense series stay honest.
void TimelineView::draw_counter(ImDrawList* dl, const Row& row, float x0, float y, float x1) {
  Source& src = sources_[row.source];
  const CounterSeries& s = src.store().counters[row.counter];
  if (s.ts.empty()) return;
  auto x_at = [&](TimeNs t) { return x_of(src.view(t)); };
  const double shift = double(src.def.shift);
  const present::RangeMinMax& extremes = counter_extremes(src, row.counter);
  auto [mn, mx] = extremes.all();
  double lo = std::min(0.0, mn), hi = std::max(mx, lo + 1e-12);
  float h = row.height - 4;
  auto y_of = [&](double v) { return y + 2 + h - float((v - lo) / (hi - lo)) * h; };
  ImU32 fill = IM_COL32(0, 114, 178, 150);
  auto it = std::upper_bound(s.ts.begin(), s.ts.end(), TimeNs(t0_ - shift));
  size_t i = it == s.ts.begin() ? 0 : size_t(it - s.ts.begin()) - 1;
  for (float x = std::max(x0, x_at(s.ts[i])); x < x1 && i < s.ts.size(); x += 1) {
    double col_end = t_of(x + 1) - shift;  // the column's end on the store's clock
    // The column's points: i and every later one before col_end (a galloping search and the
    // extremes' blocks, so a zoomed-out column of many points costs no walk over them).
    size_t j = size_t(present::gallop_partition_point(s.ts.begin() + i + 1, s.ts.end(), [&](TimeNs t) { return double(t) < col_end; }) -
                      s.ts.begin()) - 1;
    auto [vmin, vmax] = extremes.of(i, j + 1);
    dl->AddRectFilled(ImVec2(x, y_of(vmax)), ImVec2(x + 1, y + 2 + h), fill);
    if (vmin != vmax) dl->AddRectFilled(ImVec2(x, y_of(vmax)), ImVec2(x + 1, y_of(vmin) + 1), IM_COL32(0, 80, 140, 255));
    ++stats_.counter_columns;
    i = j;
    if (j + 1 < s.ts.size() && double(s.ts[j + 1]) >= col_end && x_at(s.ts[j + 1]) > x + 1) {
      // hold the value until the next point
      float next = std::min(x_at(s.ts[j + 1]), x1);
      dl->AddRectFilled(ImVec2(x + 1, y_of(s.value[j])), ImVec2(next, y + 2 + h), fill);
      x = next - 1;
      ++i;
    } else if (j + 1 >= s.ts.size()) {
      break;
    } else {
      ++i;
    }
  }
}

}  // namespace sl::views
