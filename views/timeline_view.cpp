#include "views/timeline_view.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/analysis/idle_time.h"
#include "core/data_range.h"
#include "core/format.h"
#include "core/short_names.h"
#include "core/track_names.h"
#include "core/present/critical_path_palette.h"
#include "core/present/palette.h"
#include "views/range_stats.h"
#include "core/present/time_axis.h"

namespace sl::views {
namespace {

constexpr float kFoldPx = 3.f;       // slices narrower than this fold into a block
constexpr float kRulerHeight = 22.f;
constexpr float kOverviewHeight = 26.f;

ImU32 with_alpha(ImU32 c, int alpha) { return (c & 0x00FFFFFF) | (ImU32(alpha) << 24); }

bool icontains(std::string_view text, std::string_view needle_lower) {
  return std::search(text.begin(), text.end(), needle_lower.begin(), needle_lower.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

}  // namespace

TimelineView::TimelineView(const TraceStore& store) : store_(store) {
  collapsed_.assign(store.processes.size(), 0);
  pinned_.assign(store.tracks.size(), 0);
  hidden_.assign(store.tracks.size(), 0);
  // Start where the question is: GPU streams pinned on top (right-click to unpin), processes
  // holding only instants (Kineto's markers) collapsed. Everything else keeps the trace's order.
  uint32_t gpu_streams = 0;
  for (const Track& t : store.tracks) gpu_streams += t.kind == TrackKind::GpuStream && t.gpu_work;
  if (gpu_streams <= 16)
    for (uint32_t t = 0; t < store.tracks.size(); ++t)
      pinned_[t] = store.tracks[t].kind == TrackKind::GpuStream && store.tracks[t].gpu_work;
  for (uint32_t p = 0; p < store.processes.size(); ++p) {
    bool slices = false;
    for (uint32_t t : store.processes[p].tracks) slices |= store.tracks[t].slices.size() > 0;
    collapsed_[p] = !slices;
  }
  gaps_.resize(store.tracks.size());
  gaps_drawn_.assign(store.tracks.size(), 0);
  idle_share_.assign(store.tracks.size(), -1);
  track_y_.assign(store.tracks.size(), NAN);
  unfolded_.assign(store.tracks.size(), 0);
  std::tie(data_start_, data_end_) = data_time_range(store);
  build_lane_index();
  show_all();
}

// Per track and visual row, the slices in time order: slices on one row never overlap, so both
// starts and ends are sorted and a binary search finds the first visible one.
void TimelineView::build_lane_index() {
  lanes_.resize(store_.tracks.size());
  for (uint32_t t = 0; t < store_.tracks.size(); ++t) {
    const Track& track = store_.tracks[t];
    auto& rows = lanes_[t].rows;
    rows.assign(track.row_count(), {});
    for (uint32_t i = 0; i < track.slices.size(); ++i) rows[track.row_of(i)].push_back(i);
    auto& busy = lanes_[t].busy;
    busy.assign(rows.size(), {});
    for (size_t r = 0; r < rows.size(); ++r) {
      TimeNs sum = 0;
      busy[r].reserve(rows[r].size() + 1);
      busy[r].push_back(0);
      for (uint32_t i : rows[r]) busy[r].push_back(sum += track.slices.dur[i]);
    }
  }
}

void TimelineView::show_all() {
  double span = std::max<double>(double(data_end_ - data_start_), 1000.0);
  zoom_to(double(data_start_) - span * 0.01, double(data_start_) + span * 1.01);
}

bool TimelineView::folded(uint32_t track) const {
  if (track >= unfolded_.size() || unfolded_[track]) return false;
  const Track& t = store_.tracks[track];
  // Folding fewer than kFoldedLevels levels is not worth a fold row; GPU streams are never deep.
  return t.kind != TrackKind::GpuStream && t.row_count() >= 2 * kFoldedLevels;
}

void TimelineView::set_folded(uint32_t track, bool folded) {
  if (track < unfolded_.size()) unfolded_[track] = !folded;
}

void TimelineView::zoom_to(double t0, double t1) {
  if (t1 - t0 < 10) {  // never closer than 10 ns across the view
    double mid = (t0 + t1) / 2;
    t0 = mid - 5, t1 = mid + 5;
  }
  t0_ = t0, t1_ = t1;
  following_ = false;
}

void TimelineView::follow(TimeNs end) {
  if (!following_) return;
  double width = t1_ - t0_;
  t1_ = double(end), t0_ = t1_ - width;
}

std::string track_key(const TraceStore& store, uint32_t t) {
  const Track& track = store.tracks[t];
  const Process& p = store.processes[track.process];
  return std::string(store.strings.view(p.pid_text)) + "|" + std::to_string(int(track.kind)) + "|" +
         std::string(store.strings.view(track.tid_text)) + "|" + std::to_string(track.device) + "|" +
         std::to_string(track.stream) + "|" + std::string(store.strings.view(track.name));
}

TimelineViewState TimelineView::save_state() const {
  TimelineViewState s;
  s.t0 = t0_, s.t1 = t1_, s.following = following_;
  s.range_a = range_a_, s.range_b = range_b_;
  if (selected_.valid()) {
    s.selected_track = track_key(store_, selected_.track);
    s.selected_start = store_.start(selected_);
    s.selected_name = std::string(store_.name(selected_));
  }
  for (uint32_t t = 0; t < store_.tracks.size(); ++t)
    s.rows.emplace_back(track_key(store_, t), uint8_t(pinned_[t] | hidden_[t] << 1));
  for (uint32_t p = 0; p < store_.processes.size(); ++p)
    s.processes.emplace_back(std::string(store_.strings.view(store_.processes[p].pid_text)), collapsed_[p]);
  return s;
}

void TimelineView::restore_state(const TimelineViewState& s) {
  t0_ = s.t0, t1_ = s.t1, following_ = s.following;
  range_a_ = s.range_a, range_b_ = s.range_b;
  std::unordered_map<std::string, uint8_t> rows(s.rows.begin(), s.rows.end());
  std::unordered_map<std::string, uint8_t> processes(s.processes.begin(), s.processes.end());
  selected_ = {};
  for (uint32_t t = 0; t < store_.tracks.size(); ++t) {
    std::string key = track_key(store_, t);
    if (auto it = rows.find(key); it != rows.end()) pinned_[t] = it->second & 1, hidden_[t] = it->second >> 1 & 1;
    if (key != s.selected_track) continue;
    // The same slice in the new store: same track, start and name (slices are sorted by start).
    const SliceColumns& c = store_.tracks[t].slices;
    auto at = std::lower_bound(c.start.begin(), c.start.end(), s.selected_start);
    for (; at != c.start.end() && *at == s.selected_start; ++at) {
      SliceRef ref{t, uint32_t(at - c.start.begin())};
      if (store_.name(ref) == s.selected_name) selected_ = ref;
    }
  }
  for (uint32_t p = 0; p < store_.processes.size(); ++p)
    if (auto it = processes.find(std::string(store_.strings.view(store_.processes[p].pid_text))); it != processes.end())
      collapsed_[p] = it->second;
}

void TimelineView::frame(SliceRef s) {
  if (!s.valid()) return;
  double start = double(store_.start(s)), dur = std::max<double>(double(store_.dur(s)), 100);
  zoom_to(start - dur * 0.5, start + dur * 1.5);
  if (collapsed_[store_.tracks[s.track].process]) collapsed_[store_.tracks[s.track].process] = 0;
  if (folded(s.track) && store_.tracks[s.track].row_of(s.index) >= kFoldedLevels) unfolded_[s.track] = 1;
  layout_rows();
  for (const Row& r : rows_)
    if (r.kind == Row::Lane && r.track == s.track) {
      pending_scroll_y_ = std::max(0.f, r.y - 3 * lane_height_);
      break;
    }
}

void TimelineView::select(SliceRef s, bool frame_it) {
  selected_ = s;
  if (frame_it) frame(s);
}

void TimelineView::set_highlights(std::vector<SliceRef> slices) {
  std::sort(slices.begin(), slices.end(), [&](SliceRef a, SliceRef b) { return store_.start(a) < store_.start(b); });
  highlights_ = std::move(slices);
  match_cursor_ = 0;
}

void TimelineView::set_path(PathOverlay path) {
  std::sort(path.slices.begin(), path.slices.end());
  path.slices.erase(std::unique(path.slices.begin(), path.slices.end()), path.slices.end());
  auto min_ts = [](const PathOverlay::Link& l) { return std::min(l.from_ts, l.to_ts); };
  std::sort(path.links.begin(), path.links.end(), [&](const auto& a, const auto& b) { return min_ts(a) < min_ts(b); });
  path_rows_.assign(store_.tracks.size(), {});
  path_max_dur_.assign(store_.tracks.size(), 0);
  for (SliceRef s : path.slices) {  // sorted by (track, index): rows come by start within a track
    path_rows_[s.track].push_back(s.index);
    path_max_dur_[s.track] = std::max(path_max_dur_[s.track], store_.dur(s));
  }
  path_max_span_ = 0;
  for (const auto& l : path.links) path_max_span_ = std::max(path_max_span_, std::abs(l.to_ts - l.from_ts));
  path_ = std::move(path);
}

bool TimelineView::on_path(SliceRef s) const {
  if (s.track >= path_rows_.size()) return false;
  const auto& rows = path_rows_[s.track];
  return std::binary_search(rows.begin(), rows.end(), s.index);
}

void TimelineView::set_idle_gaps(std::vector<IdleGapMark> gaps) {
  for (auto& g : gaps_) g.clear();
  std::vector<TimeNs> idle(store_.tracks.size(), 0);
  for (const IdleGapMark& g : gaps)
    if (g.track < gaps_.size()) {
      gaps_[g.track].push_back(g);
      idle[g.track] += g.end - g.start;
    }
  for (uint32_t t = 0; t < gaps_.size(); ++t) {
    auto& list = gaps_[t];
    std::sort(list.begin(), list.end(), [](const IdleGapMark& a, const IdleGapMark& b) { return a.start < b.start; });
    // Over the idle window: edge gaps (before the first and after the last activity) widen the
    // track's own span, so the share matches the temporal breakdown per stream.
    const SliceColumns& c = store_.tracks[t].slices;
    if (!c.size() || list.empty()) {
      idle_share_[t] = -1;
      continue;
    }
    TimeNs first = std::min(c.start.front(), list.front().start), last = store_.tracks[t].max_end_prefix.back();
    for (const IdleGapMark& g : list) last = std::max(last, g.end);
    idle_share_[t] = last > first ? double(idle[t]) / double(last - first) : -1;
  }
}

uint32_t TimelineView::gaps_visible_on(uint32_t track) const {
  return track < gaps_drawn_.size() ? gaps_drawn_[track] : 0;
}

size_t TimelineView::find(const std::string& text, bool regex) {
  std::vector<SliceRef> matches;
  if (!text.empty()) {
    std::string lower(text);
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    std::unique_ptr<RE2> re;
    if (regex) {
      RE2::Options options;
      options.set_case_sensitive(false);
      options.set_log_errors(false);
      re = std::make_unique<RE2>(text, options);
      if (!re->ok()) re.reset();
    }
    // Names are interned: test each distinct name once, then take its slices.
    for (StringId id = 1; id < store_.strings.size(); ++id) {
      std::string_view name = store_.strings.view(id);
      bool hit = re ? RE2::PartialMatch(name, *re) : (!regex && icontains(name, lower));
      if (!hit) continue;
      auto refs = store_.slices_named(id);
      matches.insert(matches.end(), refs.begin(), refs.end());
    }
  }
  set_highlights(std::move(matches));
  if (!highlights_.empty()) select(highlights_.front(), true);
  return highlights_.size();
}

void TimelineView::step_match(int direction) {
  if (highlights_.empty()) return;
  size_t n = highlights_.size();
  match_cursor_ = (match_cursor_ + n + (direction < 0 ? -1 : 1)) % n;
  select(highlights_[match_cursor_], true);
}

// With a path shown, everything off it fades towards the background so the path stands out.
ImU32 TimelineView::slice_color(SliceRef s) const {
  ImU32 c = base_slice_color(s);
  if (!path_shown() || on_path(s)) return c;
  int bg = theme == Theme::Light ? 238 : 36;  // near the background, a touch apart so slices still read as slices
  auto fade = [&](int shift) { return ImU32((int((c >> shift) & 0xFF) * 15 + bg * 85) / 100) << shift; };
  return fade(IM_COL32_R_SHIFT) | fade(IM_COL32_G_SHIFT) | fade(IM_COL32_B_SHIFT) | (0xFFu << IM_COL32_A_SHIFT);
}

ImU32 TimelineView::base_slice_color(SliceRef s) const {
  if (color_override)
    if (std::optional<ImU32> c = color_override(s)) return *c;
  const SliceColumns& c = store_.slices(s.track);
  switch (color_mode) {
    case ColorMode::ByCategory: return color_for_key(store_.strings.view(c.cat[s.index]), theme);
    case ColorMode::ByKernelType: {
      present::KernelKind k = present::kernel_kind(store_.name(s), store_.cat(s), store_.is_gpu(s));
      return k == present::KernelKind::NotGpu ? (theme == Theme::Light ? IM_COL32(205, 205, 205, 255) : IM_COL32(90, 90, 90, 255))
                                     : kernel_kind_color(k);
    }
    case ColorMode::ByName: break;
  }
  return color_for_key(store_.name(s), theme);
}

void TimelineView::set_pinned(uint32_t track, bool pinned) {
  if (track < pinned_.size()) pinned_[track] = pinned, hidden_[track] = 0;
}

void TimelineView::set_hidden(uint32_t track, bool hidden) {
  if (track < hidden_.size()) hidden_[track] = hidden, pinned_[track] = 0;
}

void TimelineView::add_track_rows(uint32_t t, float& y) {
  const Track& track = store_.tracks[t];
  uint32_t lanes = std::max<uint32_t>(track.row_count(), track.instants.size() ? 1 : 0);
  uint32_t shown = folded(t) ? kFoldedLevels : lanes;
  for (uint32_t lane = 0; lane < shown; ++lane) {
    rows_.push_back({Row::Lane, track.process, t, lane, kNone, y, lane_height_});
    y += lane_height_;
  }
  if (shown < lanes) {  // lane_row: how many levels the fold hides
    rows_.push_back({Row::MoreLevels, track.process, t, lanes - shown, kNone, y, lane_height_});
    y += lane_height_;
  }
  if (lanes) y += 3;  // a little air between tracks
}

// Rows in display order: pinned tracks, then process groups (collapsible) with their tracks'
// lanes and counters. Tracks with neither slices nor instants take no row.
std::vector<DisplayRow> TimelineView::display_order() const {
  std::vector<DisplayRow> out;
  auto drawn = [&](uint32_t t) { return store_.tracks[t].slices.size() || store_.tracks[t].instants.size(); };
  if (std::count(pinned_.begin(), pinned_.end(), 1)) {
    out.push_back({DisplayRow::PinnedHeader});
    for (uint32_t t = 0; t < store_.tracks.size(); ++t)
      if (pinned_[t] && drawn(t)) out.push_back({DisplayRow::Track, store_.tracks[t].process, t});
  }
  for (uint32_t p : store_.process_order) {
    const Process& process = store_.processes[p];
    bool has_content = false;
    for (uint32_t t : process.tracks) has_content |= drawn(t);
    for (const CounterSeries& c : store_.counters) has_content |= c.process == p;
    if (!has_content) continue;
    out.push_back({DisplayRow::ProcessHeader, p});
    if (collapsed_[p]) continue;
    for (uint32_t t : process.tracks)
      if (!pinned_[t] && !hidden_[t] && drawn(t)) out.push_back({DisplayRow::Track, p, t});
    for (uint32_t c = 0; c < store_.counters.size(); ++c)
      if (store_.counters[c].process == p) out.push_back({DisplayRow::Counter, p, kNone, c});
  }
  return out;
}

std::vector<uint32_t> TimelineView::visible_tracks() const {
  std::vector<uint32_t> out;
  for (const DisplayRow& r : display_order())
    if (r.kind == DisplayRow::Track) out.push_back(r.track);
  return out;
}

void TimelineView::layout_rows() {
  rows_.clear();
  lane_height_ = ImGui::GetFontSize() + 5;
  float y = 0;
  for (const DisplayRow& d : display_order()) {
    switch (d.kind) {
      case DisplayRow::PinnedHeader:
      case DisplayRow::ProcessHeader:
        rows_.push_back({Row::ProcessHeader, d.process, kNone, 0, kNone, y, lane_height_ + 2});
        y += lane_height_ + 2;
        break;
      case DisplayRow::Track: add_track_rows(d.track, y); break;
      case DisplayRow::Counter:
        rows_.push_back({Row::Counter, d.process, kNone, 0, d.counter, y, lane_height_ * 2.5f});
        y += lane_height_ * 2.5f;
        break;
    }
  }
  content_height_ = y;
}

float TimelineView::row_y_of(SliceRef s) const {
  float base = s.track < track_y_.size() ? track_y_[s.track] : NAN;
  if (std::isnan(base)) return NAN;
  uint32_t row = store_.tracks[s.track].row_of(s.index);
  if (folded(s.track)) row = std::min(row, kFoldedLevels);  // below the fold: its "N more levels" row
  return base + float(row) * lane_height_;
}

void TimelineView::draw(ImVec2 size) {
  stats_ = {};
  std::fill(gaps_drawn_.begin(), gaps_drawn_.end(), 0);
  std::fill(track_y_.begin(), track_y_.end(), NAN);
  layout_rows();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 origin = ImGui::GetCursorScreenPos();
  header_width_ = std::clamp(size.x * 0.18f, 140.f, 300.f);
  canvas_x0_ = origin.x + header_width_;
  canvas_x1_ = origin.x + size.x - ImGui::GetStyle().ScrollbarSize;
  ns_per_px_ = (t1_ - t0_) / std::max(1.f, canvas_x1_ - canvas_x0_);

  draw_overview(dl, ImVec2(canvas_x0_, origin.y), ImVec2(canvas_x1_, origin.y + kOverviewHeight));
  draw_ruler(dl, ImVec2(canvas_x0_, origin.y + kOverviewHeight), ImVec2(canvas_x1_, origin.y + kOverviewHeight + kRulerHeight));
  ImGui::Dummy(ImVec2(size.x, kOverviewHeight + kRulerHeight));
  // The legend has its own strip above the rows, so it never covers a slice.
  float legend_height = show_legend ? draw_legend(dl, ImVec2(origin.x, origin.y + kOverviewHeight + kRulerHeight), size.x) : 0;
  if (!show_legend) legend_rect_ = {};
  if (legend_height > 0) ImGui::Dummy(ImVec2(size.x, legend_height));

  ImVec2 child_size(size.x, std::max(10.f, size.y - kOverviewHeight - kRulerHeight - legend_height));
  ImGui::BeginChild("rows", child_size, false, ImGuiWindowFlags_NoScrollWithMouse);
  if (pending_scroll_y_ >= 0) ImGui::SetScrollY(pending_scroll_y_), pending_scroll_y_ = -1;
  ImDrawList* rows_dl = ImGui::GetWindowDrawList();
  ImVec2 rows_min = ImGui::GetCursorScreenPos();
  float scroll_y = ImGui::GetScrollY();
  ImVec2 view_min = ImGui::GetWindowPos();
  ImVec2 view_max(view_min.x + ImGui::GetWindowWidth(), view_min.y + ImGui::GetWindowHeight());
  rows_rect_ = {canvas_x0_, view_min.y, canvas_x1_, view_max.y};
  handle_input(ImVec2(canvas_x0_, view_min.y), ImVec2(canvas_x1_, view_max.y));
  ns_per_px_ = (t1_ - t0_) / std::max(1.f, canvas_x1_ - canvas_x0_);
  draw_rows(rows_dl, ImVec2(rows_min.x, rows_min.y), view_max, scroll_y);
  if (path_shown()) draw_path_links(rows_dl, canvas_x0_, canvas_x1_);
  if (show_flows) draw_flows(rows_dl, canvas_x0_, canvas_x1_);
  ImGui::Dummy(ImVec2(size.x - 20, content_height_ + lane_height_));
  draw_track_menu();
  ImGui::EndChild();

  ImDrawList* all = ImGui::GetWindowDrawList();
  stats_.draw_commands = uint32_t(all->CmdBuffer.Size + rows_dl->CmdBuffer.Size);
  stats_.draw_vertices = uint32_t(all->VtxBuffer.Size + rows_dl->VtxBuffer.Size);
}

void TimelineView::draw_track_menu() {
  if (!ImGui::BeginPopup("track menu")) return;
  if (menu_track_ < pinned_.size()) {
    bool pinned = pinned_[menu_track_];
    if (ImGui::MenuItem(pinned ? "Unpin" : "Pin to top")) set_pinned(menu_track_, !pinned);
    if (ImGui::MenuItem("Hide")) set_hidden(menu_track_, true);
    if (folded(menu_track_) && ImGui::MenuItem("Unfold all levels")) set_folded(menu_track_, false);
    if (unfolded_[menu_track_] && store_.tracks[menu_track_].row_count() >= 2 * kFoldedLevels &&
        ImGui::MenuItem("Fold deep levels"))
      set_folded(menu_track_, true);
    if (ImGui::MenuItem("Show all hidden tracks")) std::fill(hidden_.begin(), hidden_.end(), 0);
  }
  ImGui::EndPopup();
}

// What the colours mean: kernel types when colouring by type, idle causes when the overlay is on.
// One strip from `min`, `width` wide, entries left to right, wrapping; returns its height (0: none).
float TimelineView::draw_legend(ImDrawList* dl, ImVec2 min, float width) {
  std::vector<std::pair<ImU32, const char*>> items;
  if (color_mode == ColorMode::ByKernelType)
    for (present::KernelKind k : {present::KernelKind::Computation, present::KernelKind::Communication, present::KernelKind::Memory, present::KernelKind::Sync, present::KernelKind::Other})
      items.push_back({kernel_kind_color(k), present::kernel_kind_name(k)});
  if (show_idle) {
    static const char* causes[] = {"idle: data loading",   "idle: host sync", "idle: host launch-bound",
                                   "idle: cross-stream wait", "idle: launch latency", "idle: other",
                                   "idle: collective wait"};
    static_assert(std::size(causes) == analysis::kIdleCauseCount);
    for (int c = 0; c < analysis::kIdleCauseCount; ++c)
      items.push_back({(idle_cause_color(c) & 0x00FFFFFF) | 0xB0000000, causes[c]});
  }
  legend_rect_ = {};
  if (items.empty()) return 0;
  float line = ImGui::GetFontSize() + 4, x = min.x + 6, y = min.y + 2;
  bool light = theme == Theme::Light;
  ImU32 ink = light ? IM_COL32(30, 30, 30, 255) : IM_COL32(220, 220, 220, 255);
  for (auto& [color, text] : items) {
    float item = 18 + ImGui::CalcTextSize(text).x + 16;
    if (x + item > min.x + width && x > min.x + 6) x = min.x + 6, y += line;
    dl->AddRectFilled(ImVec2(x, y + 3), ImVec2(x + 12, y + line - 4), color);
    dl->AddText(ImVec2(x + 18, y + 1), ink, text);
    x += item;
  }
  float height = y + line + 2 - min.y;
  legend_rect_ = {min.x, min.y, min.x + width, min.y + height};
  return height;
}

void TimelineView::handle_input(ImVec2 cmin, ImVec2 cmax) {
  ImGuiIO& io = ImGui::GetIO();
  bool over_canvas = ImGui::IsWindowHovered() && io.MousePos.x >= cmin.x && io.MousePos.x < cmax.x &&
                     io.MousePos.y >= cmin.y && io.MousePos.y < cmax.y;
  double span = t1_ - t0_;
  if (over_canvas && io.MouseWheel != 0 && !io.KeyShift) {
    double at = t_of(io.MousePos.x), factor = std::pow(0.8, io.MouseWheel);
    zoom_to(at - (at - t0_) * factor, at + (t1_ - at) * factor);
  } else if (over_canvas && io.MouseWheel != 0) {
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * lane_height_ * 3);
  }
  if (!io.WantTextInput && ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows)) {
    double at = over_canvas ? t_of(io.MousePos.x) : (t0_ + t1_) / 2;
    auto key = [](int k) { return ImGui::IsKeyDown(k); };
    float dt = std::min(io.DeltaTime, 0.05f) * 3.f;
    if (key('W')) zoom_to(at - (at - t0_) * (1 - dt), at + (t1_ - at) * (1 - dt));
    if (key('S')) zoom_to(at - (at - t0_) * (1 + dt), at + (t1_ - at) * (1 + dt));
    if (key('A')) zoom_to(t0_ - span * dt * 0.5, t1_ - span * dt * 0.5);
    if (key('D')) zoom_to(t0_ + span * dt * 0.5, t1_ + span * dt * 0.5);
    if (ImGui::IsKeyPressed('F', false) && selected_.valid()) frame(selected_);
    if (ImGui::IsKeyPressed('0', false) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) show_all();
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false)) selected_ = {}, range_a_ = range_b_ = 0;
    if (follow_available && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) following_ = true;
  }
  // Drag pans; shift-drag selects a time range; a click without drag selects what is under it.
  if (over_canvas && ImGui::IsMouseClicked(0)) {
    drag_origin_ = io.MousePos;
    range_dragging_ = io.KeyShift;
    dragging_ = !io.KeyShift;
    if (range_dragging_) range_a_ = range_b_ = TimeNs(t_of(io.MousePos.x));
  }
  if (dragging_ && ImGui::IsMouseDragging(0, 2.f)) {
    double shift = double(io.MouseDelta.x) * ns_per_px_;
    zoom_to(t0_ - shift, t1_ - shift);
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
  }
  if (range_dragging_ && ImGui::IsMouseDown(0)) range_b_ = TimeNs(t_of(io.MousePos.x));
  if (ImGui::IsMouseReleased(0) && (dragging_ || range_dragging_)) {
    bool click = std::fabs(io.MousePos.x - drag_origin_.x) < 3 && std::fabs(io.MousePos.y - drag_origin_.y) < 3;
    if (click && dragging_) {
      if (fold_hovered_) zoom_to(double(fold_hover_.start), double(fold_hover_.end));
      else selected_ = hovered_;
    }
    if (range_a_ > range_b_) std::swap(range_a_, range_b_);
    dragging_ = range_dragging_ = false;
  }
}

void TimelineView::draw_ruler(ImDrawList* dl, ImVec2 min, ImVec2 max) {
  bool light = theme == Theme::Light;
  dl->AddRectFilled(ImVec2(min.x - header_width_, min.y), max, light ? IM_COL32(245, 245, 245, 255) : IM_COL32(35, 35, 38, 255));
  int64_t step = present::tick_step(ns_per_px_ * 110);
  // `shown` is on the ruler's clock (store time + ruler_offset), so ticks fall on its round values.
  int64_t first = int64_t(std::floor((t0_ + double(ruler_offset)) / double(step))) * step;
  ImU32 ink = light ? IM_COL32(60, 60, 60, 255) : IM_COL32(210, 210, 210, 255);
  for (int64_t shown = first; double(shown - ruler_offset) <= t1_; shown += step) {
    float x = x_of(double(shown - ruler_offset));
    if (x < min.x) continue;
    dl->AddLine(ImVec2(x, max.y - 6), ImVec2(x, max.y), ink);
    std::string label = present::format_tick(shown, step);
    dl->AddText(ImVec2(x + 3, min.y + 3), ink, label.c_str());
  }
  // Dragging on the ruler selects a time range (as shift-drag does on the rows).
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseHoveringRect(min, max) && ImGui::IsMouseClicked(0)) {
    range_dragging_ = true;
    range_a_ = range_b_ = TimeNs(t_of(io.MousePos.x));
  }
  std::string span = "view " + present::format_duration(t1_ - t0_);
  dl->AddText(ImVec2(min.x - header_width_ + 6, min.y + 3), ink, span.c_str());
  if (range_b_ > range_a_ || range_dragging_) {
    float a = x_of(double(std::min(range_a_, range_b_))), b = x_of(double(std::max(range_a_, range_b_)));
    dl->AddRectFilled(ImVec2(a, min.y), ImVec2(b, max.y), IM_COL32(0, 114, 178, 60));
    std::string len = present::format_duration(double(std::llabs(range_b_ - range_a_)));
    dl->AddText(ImVec2(a + 4, min.y + 3), IM_COL32(0, 80, 140, 255), len.c_str());
  }
}

// The overview strip: GPU busy density over the whole trace, with the current view marked.
void TimelineView::draw_overview(ImDrawList* dl, ImVec2 min, ImVec2 max) {
  bool light = theme == Theme::Light;
  dl->AddRectFilled(ImVec2(min.x - header_width_, min.y), max, light ? IM_COL32(232, 234, 238, 255) : IM_COL32(28, 28, 32, 255));
  // The strip spans the data (data_range), labelled with it: the trace's own time range.
  std::string range = present::format_duration(double(data_start_)) + " \xE2\x80\x93 " + present::format_duration(double(data_end_));
  dl->AddText(ImVec2(min.x - header_width_ + 6, min.y + 5), light ? IM_COL32(90, 90, 90, 255) : IM_COL32(180, 180, 180, 255), range.c_str());
  double offset = double(data_start_), total = std::max<double>(double(data_end_ - data_start_), 1);
  int columns = std::max(1, int(max.x - min.x));
  double per_col = total / columns;
  std::vector<float> busy(columns, 0.f);
  for (uint32_t t = 0; t < store_.tracks.size(); ++t) {
    const Track& track = store_.tracks[t];
    if (track.kind != TrackKind::GpuStream || lanes_[t].rows.empty()) continue;
    const auto& row = lanes_[t].rows[0];
    const SliceColumns& c = track.slices;
    // Pixel-bounded: one binary search per column, not a walk over every kernel.
    for (int col = 0; col < columns; ++col) {
      TimeNs a = TimeNs(offset + col * per_col), b = TimeNs(offset + (col + 1) * per_col);
      auto it = std::partition_point(row.begin(), row.end(), [&](uint32_t r) { return c.end(r) <= a; });
      if (it != row.end() && c.start[*it] < b) busy[col] = std::max(busy[col], 1.f);
    }
  }
  for (int col = 0; col < columns; ++col)
    if (busy[col] > 0)
      dl->AddRectFilled(ImVec2(min.x + col, max.y - 4 - 14 * busy[col]), ImVec2(min.x + col + 1, max.y - 4), IM_COL32(0, 114, 178, 200));
  float a = min.x + float((t0_ - offset) / total) * (max.x - min.x), b = min.x + float((t1_ - offset) / total) * (max.x - min.x);
  dl->AddRect(ImVec2(std::max(a, min.x), min.y + 1), ImVec2(std::min(b, max.x), max.y - 1), IM_COL32(213, 94, 0, 255), 0, 0, 2);
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseHoveringRect(min, max) && ImGui::IsMouseDown(0) && !dragging_ && !range_dragging_) {
    double center = offset + double(io.MousePos.x - min.x) / double(max.x - min.x) * total, half = (t1_ - t0_) / 2;
    zoom_to(center - half, center + half);
  }
}

void TimelineView::draw_rows(ImDrawList* dl, ImVec2 min, ImVec2 view_max, float scroll_y) {
  float visible_top = scroll_y - lane_height_, visible_bottom = scroll_y + (view_max.y - min.y - scroll_y) + lane_height_;
  visible_bottom = scroll_y + ImGui::GetWindowHeight() + lane_height_;
  hovered_ = {};
  fold_hovered_ = false;
  bool light = theme == Theme::Light;
  uint32_t last_track = kNone;
  for (const Row& row : rows_) {
    float y = min.y + row.y;
    if (row.kind == Row::Lane && row.lane_row == 0) track_y_[row.track] = y;
    if (row.y + row.height < visible_top || row.y > visible_bottom) continue;
    ++stats_.rows_drawn;
    if (row.kind == Row::ProcessHeader) {
      dl->AddRectFilled(ImVec2(min.x, y), ImVec2(canvas_x1_, y + row.height), light ? IM_COL32(225, 229, 236, 255) : IM_COL32(45, 48, 56, 255));
      draw_header(dl, row, min.x, y, header_width_);
      continue;
    }
    if (row.kind == Row::MoreLevels) {
      draw_more_levels(dl, row, min.x, y);
      continue;
    }
    if (row.kind == Row::Counter) {
      draw_header(dl, row, min.x, y, header_width_);
      draw_counter(dl, row, canvas_x0_, y, canvas_x1_);
      continue;
    }
    if (row.track != last_track) {
      last_track = row.track;
      const Track& t = store_.tracks[row.track];
      float height = lane_height_ * float(std::max<uint32_t>(1, t.row_count()));
      if (show_idle && t.kind == TrackKind::GpuStream) draw_gaps(dl, row.track, canvas_x0_, y, canvas_x1_, height);
      draw_header(dl, row, min.x, y, header_width_);
      dl->AddLine(ImVec2(min.x, y - 1.5f), ImVec2(canvas_x1_, y - 1.5f), light ? IM_COL32(225, 225, 225, 255) : IM_COL32(55, 55, 55, 255));
    }
    draw_lane(dl, row, canvas_x0_, y, canvas_x1_);
  }
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
  if (over && ImGui::IsMouseClicked(0)) unfolded_[row.track] = 1;
}

void TimelineView::draw_header(ImDrawList* dl, const Row& row, float x, float y, float width) {
  bool light = theme == Theme::Light;
  ImU32 ink = light ? IM_COL32(30, 30, 30, 255) : IM_COL32(225, 225, 225, 255);
  std::string label;
  if (row.kind == Row::ProcessHeader && row.process == kNone) {
    label = "Pinned (right-click a track name to unpin)";
  } else if (row.kind == Row::ProcessHeader) {
    const Process& p = store_.processes[row.process];
    label = (collapsed_[row.process] ? "▸ " : "▾ ") + process_display_name(store_, row.process);
    size_t hidden = 0;
    for (uint32_t t : p.tracks) hidden += hidden_[t];
    bool over = ImGui::IsMouseHoveringRect(ImVec2(x, y), ImVec2(x + width, y + row.height));
    if (hidden) label += "  (" + std::to_string(hidden) + " hidden: right-click)";
    if (over && ImGui::IsMouseClicked(0)) collapsed_[row.process] ^= 1;
    if (over && hidden && ImGui::IsMouseClicked(1))
      for (uint32_t t : p.tracks) hidden_[t] = 0;
  } else if (row.kind == Row::Counter) {
    label = std::string(store_.strings.view(store_.counters[row.counter].name));
  } else {
    const Track& t = store_.tracks[row.track];
    label = pinned_[row.track] ? track_full_name(store_, row.track) : track_display_name(store_, row.track);
    if (idle_share_[row.track] >= 0 && show_idle) {
      label += "  idle " + human::percent(idle_share_[row.track] * 100);
    }
    if (t.overlapping) label += "  ⚠" + std::to_string(t.overlapping);
  }
  dl->PushClipRect(ImVec2(x, y), ImVec2(x + width - 4, y + lane_height_ + 4), true);
  dl->AddText(ImVec2(x + (row.kind == Row::ProcessHeader ? 4 : 14), y + 2), ink, label.c_str());
  dl->PopClipRect();
  if (row.kind == Row::Lane && ImGui::IsMouseHoveringRect(ImVec2(x, y), ImVec2(x + width, y + lane_height_))) {
    if (ImGui::IsMouseClicked(1)) {
      menu_track_ = row.track;
      ImGui::OpenPopup("track menu");
    }
    const Track& t = store_.tracks[row.track];
    ImGui::SetTooltip("%s\n%s\n%s slices, %u lanes%s\nright-click: pin or hide", track_full_name(store_, row.track).c_str(),
                      track_raw_ids(store_, row.track).c_str(), human::count(int64_t(t.slices.size())).c_str(), t.row_count(),
                      t.overlapping ? "\noverlapping slices are drawn on extra lanes (⚠)" : "");
  }
}

// Slices of one lane. Runs narrower than kFoldPx fold into one block with a count, so the work
// per row is bounded by its width in pixels whatever the number of slices.
void TimelineView::draw_lane(ImDrawList* dl, const Row& row, float x0, float y, float x1) {
  const Track& track = store_.tracks[row.track];
  const SliceColumns& c = track.slices;
  bool light = theme == Theme::Light;
  ImGuiIO& io = ImGui::GetIO();
  bool mouse_in_row = io.MousePos.y >= y && io.MousePos.y < y + lane_height_ && io.MousePos.x >= x0 && io.MousePos.x < x1;
  std::shared_ptr<const ShortNames> names;  // fetched on the first label of the lane
  if (row.lane_row == 0 && track.instants.size()) {  // instants as ticks at the top of the track
    const auto& ts = track.instants.ts;
    auto it = std::lower_bound(ts.begin(), ts.end(), TimeNs(t0_));
    float last_x = -1e9f;
    for (; it != ts.end() && double(*it) <= t1_; ++it) {
      float x = x_of(double(*it));
      if (x - last_x < 2) continue;
      last_x = x;
      dl->AddTriangleFilled(ImVec2(x - 3, y), ImVec2(x + 3, y), ImVec2(x, y + 5), light ? IM_COL32(90, 90, 90, 220) : IM_COL32(200, 200, 200, 220));
    }
  }
  if (row.lane_row >= lanes_[row.track].rows.size()) return;
  const auto& slices = lanes_[row.track].rows[row.lane_row];
  auto it = std::partition_point(slices.begin(), slices.end(), [&](uint32_t r) { return double(c.end(r)) < t0_; });
  size_t i = size_t(it - slices.begin());
  ImU32 border = light ? IM_COL32(0, 0, 0, 50) : IM_COL32(0, 0, 0, 120);
  while (i < slices.size() && double(c.start[slices[i]]) <= t1_) {
    uint32_t r = slices[i];
    float sx0 = x_of(double(c.start[r])), sx1 = x_of(double(c.end(r)));
    if (sx1 - sx0 < kFoldPx) {
      // Fold: everything starting within the next kFoldPx pixels joins this block.
      double limit = double(c.start[r]) + kFoldPx * ns_per_px_;
      auto end_it = std::partition_point(slices.begin() + i, slices.end(), [&](uint32_t q) { return double(c.start[q]) < limit; });
      size_t j = size_t(end_it - slices.begin());
      // Slices on a row never overlap, so only the run's last slice can be wide: it is drawn
      // on its own next time round.
      if (j - i > 1 && x_of(double(c.end(slices[j - 1]))) - x_of(double(c.start[slices[j - 1]])) >= kFoldPx) --j;
      uint32_t last = slices[j - 1];
      float bx1 = std::max(x_of(double(c.end(last))), sx0 + 1.f);
      if (j - i == 1) {
        SliceRef s{row.track, r};
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), y + 1), ImVec2(std::min(bx1, x1), y + lane_height_ - 1), slice_color(s));
        if (mouse_in_row && io.MousePos.x >= sx0 - 1 && io.MousePos.x <= bx1 + 1) hovered_ = s;
        ++stats_.slices_drawn;
      } else {
        // A folded block is as tall as the run is busy: zoomed far out, a GPU stream reads as a
        // utilisation chart (prefix sums: no walk over the folded slices).
        const auto& busy = lanes_[row.track].busy[row.lane_row];
        double span = double(std::max<TimeNs>(1, c.end(last) - c.start[r]));
        float fraction = float(std::clamp(double(busy[j] - busy[i]) / span, 0.08, 1.0));
        float top = y + 1 + (lane_height_ - 2) * (1 - fraction);
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), y + 1), ImVec2(std::min(bx1, x1), y + lane_height_ - 1),
                          light ? IM_COL32(222, 224, 230, 255) : IM_COL32(52, 52, 58, 255));
        dl->AddRectFilled(ImVec2(std::max(sx0, x0), top), ImVec2(std::min(bx1, x1), y + lane_height_ - 1),
                          light ? IM_COL32(120, 124, 140, 255) : IM_COL32(130, 130, 145, 255));
        if (mouse_in_row && io.MousePos.x >= sx0 && io.MousePos.x <= bx1) {
          fold_hovered_ = true;
          fold_hover_ = {c.start[r], c.end(last), uint32_t(j - i)};
          ImGui::SetTooltip("%s slices folded (%s, %s busy)\nclick to zoom in", human::count(int64_t(j - i)).c_str(),
                            present::format_duration(double(c.end(last) - c.start[r])).c_str(), human::percent(fraction * 100).c_str());
        }
        ++stats_.folded_blocks;
      }
      i = j;
      continue;
    }
    SliceRef s{row.track, r};
    ImU32 fill = slice_color(s);
    ImVec2 a(std::max(sx0, x0), y + 1), b(std::min(sx1, x1), y + lane_height_ - 1);
    dl->AddRectFilled(a, b, fill);
    dl->AddRect(a, b, border);
    if (track.slices.lane[r] > 0) dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, b.y), IM_COL32(213, 94, 0, 255), 2);
    if (b.x - a.x > 24) {
      std::string_view full = store_.name(s);
      if (!names) names = store_short_names(store_);
      std::string label = (*names)(full);
      ImVec2 text_size = ImGui::CalcTextSize(label.c_str());
      dl->PushClipRect(a, b, true);
      dl->AddText(ImVec2(a.x + 3, y + 2), text_color_on(fill), label.c_str());
      dl->PopClipRect();
      (void)text_size;
    }
    if (mouse_in_row && io.MousePos.x >= sx0 && io.MousePos.x < sx1) hovered_ = s;
    ++stats_.slices_drawn;
    ++i;
  }
  // Outline highlighted and selected slices on this row (search results, linked views).
  auto outline = [&](SliceRef s, ImU32 color, float thickness) {
    if (s.track != row.track || track.row_of(s.index) != row.lane_row) return;
    float a = x_of(double(c.start[s.index])), b = std::max(x_of(double(c.end(s.index))), a + 2);
    if (b < x0 || a > x1) return;
    dl->AddRect(ImVec2(std::max(a, x0) - 1, y), ImVec2(std::min(b, x1) + 1, y + lane_height_), color, 0, 0, thickness);
  };
  if (!highlights_.empty()) {
    auto lo = std::partition_point(highlights_.begin(), highlights_.end(), [&](SliceRef s) { return double(store_.end(s)) < t0_; });
    int budget = 2000;  // bounded per row: highlights are for finding, not for drawing everything
    for (auto h = lo; h != highlights_.end() && double(store_.start(*h)) <= t1_ && budget-- > 0; ++h)
      outline(*h, IM_COL32(230, 159, 0, 255), 2);
  }
  if (path_shown()) outline_path(dl, row, x0, y, x1);
  if (selected_.valid()) outline(selected_, light ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255), 2.5f);
  if (hovered_.valid() && hovered_.track == row.track && track.row_of(hovered_.index) == row.lane_row && !fold_hovered_ &&
      mouse_in_row)
    slice_tooltip(hovered_);
}

void TimelineView::slice_tooltip(SliceRef s) {
  std::string_view name = store_.name(s);
  std::string shown(name.substr(0, 300));
  if (name.size() > 300) shown += "…";
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
  ImGui::TextUnformatted(shown.c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextDisabled("%s · %s", std::string(store_.cat(s)).c_str(), present::format_duration(double(store_.dur(s))).c_str());
  ImGui::TextDisabled("starts at %s", present::format_duration(double(store_.start(s))).c_str());
  ImGui::EndTooltip();
}

void TimelineView::draw_gaps(ImDrawList* dl, uint32_t track, float x0, float y, float x1, float height) {
  const auto& gaps = gaps_[track];
  auto it = std::partition_point(gaps.begin(), gaps.end(), [&](const IdleGapMark& g) { return double(g.end) < t0_; });
  ImGuiIO& io = ImGui::GetIO();
  for (; it != gaps.end() && double(it->start) <= t1_; ++it) {
    float a = std::max(x_of(double(it->start)), x0), b = std::min(x_of(double(it->end)), x1);
    if (b - a < 1) continue;  // sub-pixel gaps: the track looks busy there, as it is
    dl->AddRectFilled(ImVec2(a, y), ImVec2(b, y + height), with_alpha(idle_cause_color(it->cause), 90));
    ++stats_.gaps_drawn;
    ++gaps_drawn_[track];
    if (io.MousePos.x >= a && io.MousePos.x < b && io.MousePos.y >= y && io.MousePos.y < y + height) gap_tooltip(*it);
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
void TimelineView::gap_tooltip(const IdleGapMark& gap) {
  if (gap_hover_.track != gap.track || gap_hover_.start != gap.start)
    gap_hover_ = {gap.track, gap.start, idle_gap_explanation(store_, gap)};
  ImGui::SetTooltip("%s", gap_hover_.text.c_str());
}

// Counters as step charts with min/max per pixel column, so dense series stay honest.
void TimelineView::draw_counter(ImDrawList* dl, const Row& row, float x0, float y, float x1) {
  const CounterSeries& s = store_.counters[row.counter];
  if (s.ts.empty()) return;
  auto [mn, mx] = std::minmax_element(s.value.begin(), s.value.end());
  double lo = std::min(0.0, *mn), hi = std::max(*mx, lo + 1e-12);
  float h = row.height - 4;
  auto y_of = [&](double v) { return y + 2 + h - float((v - lo) / (hi - lo)) * h; };
  ImU32 fill = IM_COL32(0, 114, 178, 150);
  auto it = std::upper_bound(s.ts.begin(), s.ts.end(), TimeNs(t0_));
  size_t i = it == s.ts.begin() ? 0 : size_t(it - s.ts.begin()) - 1;
  for (float x = std::max(x0, x_of(double(s.ts[i]))); x < x1 && i < s.ts.size(); x += 1) {
    double col_end = t_of(x + 1);
    double vmin = s.value[i], vmax = s.value[i];
    size_t j = i;
    while (j + 1 < s.ts.size() && double(s.ts[j + 1]) < col_end) {
      ++j;
      vmin = std::min(vmin, s.value[j]);
      vmax = std::max(vmax, s.value[j]);
    }
    dl->AddRectFilled(ImVec2(x, y_of(vmax)), ImVec2(x + 1, y + 2 + h), fill);
    if (vmin != vmax) dl->AddRectFilled(ImVec2(x, y_of(vmax)), ImVec2(x + 1, y_of(vmin) + 1), IM_COL32(0, 80, 140, 255));
    ++stats_.counter_columns;
    i = j;
    if (j + 1 < s.ts.size() && double(s.ts[j + 1]) >= col_end && x_of(double(s.ts[j + 1])) > x + 1) {
      // hold the value until the next point
      float next = std::min(x_of(double(s.ts[j + 1])), x1);
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

// Arrows for the selection only: its launch → GPU activities, or the launch of a GPU activity,
// plus trace flows into and out of it. An end off screen is drawn to the edge.
void TimelineView::draw_flows(ImDrawList* dl, float x0, float x1) {
  if (!selected_.valid()) return;
  std::vector<std::pair<SliceRef, SliceRef>> links;
  if (store_.is_gpu(selected_)) {
    if (SliceRef l = store_.launch_of(selected_); l.valid()) links.push_back({l, selected_});
  } else {
    for (SliceRef a : store_.activities_of(selected_)) links.push_back({selected_, a});
  }
  for (uint32_t f : store_.flows_from(selected_)) links.push_back({store_.flows[f].from, store_.flows[f].to});
  for (uint32_t f : store_.flows_to(selected_)) links.push_back({store_.flows[f].from, store_.flows[f].to});
  ImU32 ink = IM_COL32(213, 94, 0, 230);
  int budget = 256;
  for (auto [from, to] : links) {
    if (budget-- == 0) break;
    float ya = row_y_of(from), yb = row_y_of(to);
    if (std::isnan(ya) || std::isnan(yb)) continue;
    ImVec2 a(std::clamp(x_of(double(store_.start(from))), x0, x1), ya + lane_height_ * 0.5f);
    ImVec2 b(std::clamp(x_of(double(store_.start(to))), x0, x1), yb + lane_height_ * 0.5f);
    float bend = std::max(20.f, std::fabs(b.x - a.x) * 0.3f);
    dl->AddBezierCubic(a, ImVec2(a.x + bend, a.y), ImVec2(b.x - bend, b.y), b, ink, 1.8f);
    dl->AddTriangleFilled(ImVec2(b.x, b.y), ImVec2(b.x - 7, b.y - 4), ImVec2(b.x - 7, b.y + 4), ink);
  }
}

// The path's slices on this lane, in view: a visible outline however narrow the slice (a path
// slice inside a folded run still shows). Bounded: path slices starting in the view, capped.
void TimelineView::outline_path(ImDrawList* dl, const Row& row, float x0, float y, float x1) {
  const SliceColumns& c = store_.slices(row.track);
  const auto& rows = path_rows_[row.track];
  if (rows.empty()) return;
  present::Rgb rgb = present::critical_path_outline_rgb();
  ImU32 color = IM_COL32(rgb.r, rgb.g, rgb.b, 255);
  TimeNs from = TimeNs(t0_) - path_max_dur_[row.track];
  auto it = std::partition_point(rows.begin(), rows.end(), [&](uint32_t r) { return c.start[r] < from; });
  int budget = 4000;
  float last_b = -1e9f;
  for (; it != rows.end() && double(c.start[*it]) <= t1_ && budget > 0; ++it) {
    uint32_t r = *it;
    if (store_.tracks[row.track].row_of(r) != row.lane_row || double(c.end(r)) < t0_) continue;
    float a = x_of(double(c.start[r])), b = std::max(x_of(double(c.end(r))), a + 3);
    if (b <= last_b) continue;  // inside the previous outline at this zoom: nothing new to draw
    last_b = b, --budget;
    dl->AddRect(ImVec2(std::max(a, x0) - 1, y), ImVec2(std::min(b, x1) + 1, y + lane_height_), color, 0, 0, 2.5f);
    ++stats_.path_outlined;
  }
}

// The path's links between slices whose span meets the view, as arrows in their kind's colour;
// an end off screen is drawn to the edge. Bounded by pixels: links under a pixel are skipped, and
// so is a link whose ends fall on the same 2-px cells as one already drawn (zoomed out, hundreds
// of launches stack on one spot), then a budget.
void TimelineView::draw_path_links(ImDrawList* dl, float x0, float x1) {
  auto min_ts = [](const PathOverlay::Link& l) { return std::min(l.from_ts, l.to_ts); };
  TimeNs from = TimeNs(t0_) - path_max_span_;
  auto it = std::partition_point(path_.links.begin(), path_.links.end(), [&](const auto& l) { return min_ts(l) < from; });
  std::unordered_set<uint64_t> drawn;
  auto cell = [](float v) { return uint64_t(uint16_t(int(v) / 2)); };
  int budget = 600;
  for (; it != path_.links.end() && double(min_ts(*it)) <= t1_ && budget > 0; ++it) {
    const PathOverlay::Link& l = *it;
    if (double(std::max(l.from_ts, l.to_ts)) < t0_) continue;
    float ya = row_y_of(l.from), yb = row_y_of(l.to);
    if (std::isnan(ya) || std::isnan(yb)) continue;
    ImVec2 a(std::clamp(x_of(double(l.from_ts)), x0, x1), ya + lane_height_ * 0.5f);
    ImVec2 b(std::clamp(x_of(double(l.to_ts)), x0, x1), yb + lane_height_ * 0.5f);
    if (std::fabs(b.x - a.x) < 1 && std::fabs(b.y - a.y) < 1) continue;
    if (!drawn.insert(cell(a.x) << 48 | cell(a.y) << 32 | cell(b.x) << 16 | cell(b.y)).second) continue;
    --budget;
    ++stats_.path_links_drawn;
    if (a.y == b.y || std::fabs(b.x - a.x) < 4) {
      dl->AddLine(a, b, l.color, 2.f);
    } else {
      float bend = std::clamp(std::fabs(b.x - a.x) * 0.3f, 6.f, 40.f);
      dl->AddBezierCubic(a, ImVec2(a.x + bend, a.y), ImVec2(b.x - bend, b.y), b, l.color, 2.f, 12);
    }
    float dir = b.x >= a.x ? 1.f : -1.f;
    dl->AddTriangleFilled(b, ImVec2(b.x - 7 * dir, b.y - 4), ImVec2(b.x - 7 * dir, b.y + 4), l.color);
  }
}

}  // namespace sl::views
