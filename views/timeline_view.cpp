// The timeline: sources, layout, input, ruler, overview strip, legend, flows and path links.
// Each row kind (source and process headers, lanes, counters, folds, idle gaps) is a class in
// timeline_rows.{h,cpp}.
#include "views/timeline_view.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/analysis/idle_time.h"
#include "core/data_range.h"
#include "core/present/palette.h"
#include "core/present/time_axis.h"
#include "core/short_names.h"

namespace sl::views {
namespace {

constexpr float kRulerHeight = 22.f;
constexpr float kOverviewHeight = 26.f;

bool icontains(std::string_view text, std::string_view needle_lower) {
  return std::search(text.begin(), text.end(), needle_lower.begin(), needle_lower.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

}  // namespace

TimelineView::TimelineView(const TraceStore& store) {
  TimelineSource source;
  source.store = &store;
  add_source(std::move(source));
  show_all();
}

namespace {
// CPU time of this thread, as `bench frame` times frames: what preparing costs us, not time lost
// to other processes.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// The arrows a frame drew, by the 2-px cells of their ends: zoomed out, hundreds of arrows land
// on one spot, and drawing one of them shows them all.
class ArrowCells {
public:
  // True for the first arrow with ends in these cells.
  bool first(ImVec2 a, ImVec2 b) { return drawn_.insert(cell(a.x) << 48 | cell(a.y) << 32 | cell(b.x) << 16 | cell(b.y)).second; }

private:
  static uint64_t cell(float v) { return uint64_t(uint16_t(int(v) / 2)); }
  std::unordered_set<uint64_t> drawn_;
};
}  // namespace

uint32_t TimelineView::add_source(TimelineSource def, uint32_t at) {
  const double began = thread_cpu_ms();
  const TraceStore& store = *def.store;
  Source src;
  src.def = std::move(def);
  src.collapsed.assign(store.processes.size(), 0);
  src.pinned.assign(store.tracks.size(), 0);
  src.hidden.assign(store.tracks.size(), 0);
  // Start where the question is: GPU streams pinned on top (right-click to unpin), processes
  // holding only instants (Kineto's markers) collapsed. Everything else keeps the trace's order.
  uint32_t gpu_streams = 0;
  for (const Track& t : store.tracks) gpu_streams += t.kind == TrackKind::GpuStream && t.gpu_work;
  if (gpu_streams <= 16)
    for (uint32_t t = 0; t < store.tracks.size(); ++t)
      src.pinned[t] = store.tracks[t].kind == TrackKind::GpuStream && store.tracks[t].gpu_work;
  for (uint32_t p = 0; p < store.processes.size(); ++p) {
    bool slices = false;
    for (uint32_t t : store.processes[p].tracks) slices |= store.tracks[t].slices.size() > 0;
    src.collapsed[p] = !slices;
  }
  src.gaps.resize(store.tracks.size());
  src.gap_ends.resize(store.tracks.size());
  src.gaps_drawn.assign(store.tracks.size(), 0);
  src.idle_share.assign(store.tracks.size(), -1);
  src.track_y.assign(store.tracks.size(), NAN);
  src.unfolded.assign(store.tracks.size(), 0);
  std::tie(src.data_start, src.data_end) = data_time_range(store);
  build_lane_index(src);
  // The rest of what drawing needs once, here rather than in the frame that first needs it (on
  // the 10 GB synthetic trace: 11 ms in the first frame, and 20 ms in the first frame with a
  // label, which walked every slice's name).
  for (uint32_t c = 0; c < store.counters.size(); ++c) CounterRow::index(src, c);
  store_short_names(store);
  at = std::min<uint32_t>(at, uint32_t(sources_.size()));
  reindex_sources(at, +1);
  sources_.insert(sources_.begin() + at, std::move(src));
  update_data_range();
  prepare_ms_ += thread_cpu_ms() - began;
  return at;
}

void TimelineView::remove_source(uint32_t source) {
  if (source >= sources_.size()) return;
  sources_.erase(sources_.begin() + source);
  reindex_sources(source, -1);
  update_data_range();
}

// Sources at or after `at` move by `delta`; what named the removed one (delta < 0) is dropped.
void TimelineView::reindex_sources(uint32_t at, int delta) {
  auto fix = [&](SourceSlice& s) {
    if (s.source == kNone || s.source < at) return;
    if (delta < 0 && s.source == at) s = {};
    else s.source = uint32_t(int(s.source) + delta);
  };
  fix(selected_);
  hits_.hovered = {};
  hits_.gap_hover = {};
  hits_.menu_source = hits_.menu_track = kNone;
  if (pending_scroll_source_ != kNone && pending_scroll_source_ >= at) pending_scroll_source_ = kNone;
  for (SourceSlice& m : matches_) fix(m);
  matches_.erase(std::remove_if(matches_.begin(), matches_.end(), [](const SourceSlice& m) { return !m.valid(); }), matches_.end());
  match_cursor_ = std::min(match_cursor_, matches_.empty() ? 0 : matches_.size() - 1);
}

void TimelineView::update_data_range() {
  ++sources_version_;  // called whenever sources come or go
  if (fixed_range_) return;
  bool any = false;
  for (const Source& s : sources_) {
    TimeNs a = s.data_start + s.def.shift, b = s.data_end + s.def.shift;
    data_start_ = any ? std::min(data_start_, a) : a;
    data_end_ = any ? std::max(data_end_, b) : b;
    any = true;
  }
}

// Per track and visual row, the slices in time order: slices on one row never overlap, so both
// starts and ends are sorted and a search finds the first visible one.
void TimelineView::build_lane_index(Source& src) {
  const TraceStore& store = src.store();
  src.lanes.clear();
  src.lanes.reserve(store.tracks.size());
  for (const Track& track : store.tracks)
    src.lanes.emplace_back(track.slices, track.row_count(), [&](uint32_t i) { return track.row_of(i); });
}

void TimelineView::show_all() {
  double span = std::max<double>(double(data_end_ - data_start_), 1000.0);
  zoom_to(double(data_start_) - span * 0.01, double(data_start_) + span * 1.01);
}

bool TimelineView::folded(uint32_t source, uint32_t track) const {
  if (source >= sources_.size()) return false;
  const Source& src = sources_[source];
  if (track >= src.unfolded.size() || src.unfolded[track]) return false;
  const Track& t = src.store().tracks[track];
  // Folding fewer than kFoldedLevels levels is not worth a fold row; GPU streams are never deep.
  return t.kind != TrackKind::GpuStream && t.row_count() >= 2 * kFoldedLevels;
}

void TimelineView::set_folded(uint32_t source, uint32_t track, bool folded) {
  if (source < sources_.size() && track < sources_[source].unfolded.size()) sources_[source].unfolded[track] = !folded;
}

bool TimelineView::hidden(uint32_t track) const {
  return !sources_.empty() && track < sources_[0].hidden.size() && sources_[0].hidden[track];
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
  if (sources_.empty()) return s;
  const Source& src = sources_[0];
  const TraceStore& store = src.store();
  if (SliceRef sel = selected(); sel.valid()) {
    s.selected_track = track_key(store, sel.track);
    s.selected_start = store.start(sel);
    s.selected_name = std::string(store.name(sel));
  }
  for (uint32_t t = 0; t < store.tracks.size(); ++t)
    s.rows.emplace_back(track_key(store, t), uint8_t(src.pinned[t] | src.hidden[t] << 1));
  for (uint32_t p = 0; p < store.processes.size(); ++p)
    s.processes.emplace_back(std::string(store.strings.view(store.processes[p].pid_text)), src.collapsed[p]);
  return s;
}

void TimelineView::restore_state(const TimelineViewState& s) {
  t0_ = s.t0, t1_ = s.t1, following_ = s.following;
  range_a_ = s.range_a, range_b_ = s.range_b;
  selected_ = {};
  if (sources_.empty()) return;
  Source& src = sources_[0];
  const TraceStore& store = src.store();
  std::unordered_map<std::string, uint8_t> rows(s.rows.begin(), s.rows.end());
  std::unordered_map<std::string, uint8_t> processes(s.processes.begin(), s.processes.end());
  for (uint32_t t = 0; t < store.tracks.size(); ++t) {
    std::string key = track_key(store, t);
    if (auto it = rows.find(key); it != rows.end()) src.pinned[t] = it->second & 1, src.hidden[t] = it->second >> 1 & 1;
    if (key != s.selected_track) continue;
    // The same slice in the new store: same track, start and name (slices are sorted by start).
    const SliceColumns& c = store.tracks[t].slices;
    auto at = std::lower_bound(c.start.begin(), c.start.end(), s.selected_start);
    for (; at != c.start.end() && *at == s.selected_start; ++at) {
      SliceRef ref{t, uint32_t(at - c.start.begin())};
      if (store.name(ref) == s.selected_name) selected_ = {0, ref};
    }
  }
  for (uint32_t p = 0; p < store.processes.size(); ++p)
    if (auto it = processes.find(std::string(store.strings.view(store.processes[p].pid_text))); it != processes.end())
      src.collapsed[p] = it->second;
}

void TimelineView::frame(SourceSlice ss) {
  if (!ss.valid() || ss.source >= sources_.size()) return;
  Source& src = sources_[ss.source];
  const TraceStore& store = src.store();
  SliceRef s = ss.ref;
  double start = src.view(store.start(s)), dur = std::max<double>(double(store.dur(s)), 100);
  zoom_to(start - dur * 0.5, start + dur * 1.5);
  src.folded_away = false;
  src.collapsed[store.tracks[s.track].process] = 0;
  if (folded(ss.source, s.track) && store.tracks[s.track].row_of(s.index) >= kFoldedLevels) src.unfolded[s.track] = 1;
  layout_rows();
  for (const TimelineRow& r : rows_)
    if (const auto* lane = std::get_if<LaneRow>(&r); lane && lane->source == ss.source && lane->track == s.track) {
      pending_scroll_y_ = std::max(0.f, lane->y - 3 * lane_height_);
      break;
    }
}

void TimelineView::scroll_to_source(uint32_t source) { pending_scroll_source_ = source; }

bool TimelineView::scroll_to_show(const std::vector<SourceSlice>& slices) {
  layout_rows();
  float top = INFINITY, bottom = -INFINITY;
  for (const SourceSlice& ss : slices) {
    if (!ss.valid() || ss.source >= sources_.size()) return false;
    auto first = std::find_if(rows_.begin(), rows_.end(), [&](const TimelineRow& r) {
      const auto* lane = std::get_if<LaneRow>(&r);
      return lane && lane->source == ss.source && lane->track == ss.ref.track && lane->lane == 0;
    });
    if (first == rows_.end()) return false;  // hidden, or its source or process folded away
    uint32_t lane = sources_[ss.source].store().tracks[ss.ref.track].row_of(ss.ref.index);
    if (folded(ss.source, ss.ref.track)) lane = std::min(lane, kFoldedLevels);  // its "N more levels" row
    float y = row_base(*first).y + float(lane) * lane_height_;
    top = std::min(top, y), bottom = std::max(bottom, y + lane_height_);
  }
  float height = rows_rect_.y1 - rows_rect_.y0;
  if (slices.empty() || height <= 0 || bottom - top > height - lane_height_) return false;
  pending_scroll_y_ = std::max(0.f, top - std::min(3 * lane_height_, (height - (bottom - top)) / 2));
  return true;
}

void TimelineView::select(SourceSlice s, bool frame_it) {
  selected_ = s.valid() && s.source < sources_.size() ? s : SourceSlice{};
  if (frame_it) frame(selected_);
}

const std::vector<SliceRef>& TimelineView::highlights(uint32_t source) const {
  static const std::vector<SliceRef> none;
  return source < sources_.size() ? sources_[source].highlights : none;
}

void TimelineView::set_highlights(uint32_t source, std::vector<SliceRef> slices) {
  if (source >= sources_.size()) return;
  const TraceStore& store = sources_[source].store();
  std::sort(slices.begin(), slices.end(), [&](SliceRef a, SliceRef b) { return store.start(a) < store.start(b); });
  sources_[source].highlights = std::move(slices);
  rebuild_matches();
}

// What step_match walks: every source's highlights on the view clock.
void TimelineView::rebuild_matches() {
  matches_.clear();
  for (uint32_t i = 0; i < sources_.size(); ++i)
    for (SliceRef r : sources_[i].highlights) matches_.push_back({i, r});
  auto at = [&](const SourceSlice& m) { return sources_[m.source].view(sources_[m.source].store().start(m.ref)); };
  if (sources_.size() > 1) std::stable_sort(matches_.begin(), matches_.end(), [&](const auto& a, const auto& b) { return at(a) < at(b); });
  match_cursor_ = 0;
}

const std::vector<SliceRef>& TimelineView::path_slices() const {
  static const std::vector<SliceRef> none;
  return sources_.empty() ? none : sources_[0].path.slices;
}

void TimelineView::set_path(PathOverlay path) {
  if (sources_.empty()) return;
  Source& src = sources_[0];
  const TraceStore& store = src.store();
  std::sort(path.slices.begin(), path.slices.end());
  path.slices.erase(std::unique(path.slices.begin(), path.slices.end()), path.slices.end());
  auto min_ts = [](const PathOverlay::Link& l) { return std::min(l.from_ts, l.to_ts); };
  std::sort(path.links.begin(), path.links.end(), [&](const auto& a, const auto& b) { return min_ts(a) < min_ts(b); });
  src.path_rows.assign(store.tracks.size(), {});
  src.path_max_dur.assign(store.tracks.size(), 0);
  for (SliceRef s : path.slices) {  // sorted by (track, index): rows come by start within a track
    src.path_rows[s.track].push_back(s.index);
    src.path_max_dur[s.track] = std::max(src.path_max_dur[s.track], store.dur(s));
  }
  src.path_max_span = 0;
  for (const auto& l : path.links) src.path_max_span = std::max(src.path_max_span, std::abs(l.to_ts - l.from_ts));
  src.path = std::move(path);
}

void TimelineView::set_idle_gaps(uint32_t source, std::vector<IdleGapMark> gaps) {
  if (source >= sources_.size()) return;
  Source& src = sources_[source];
  const TraceStore& store = src.store();
  for (auto& g : src.gaps) g.clear();
  std::vector<TimeNs> idle(store.tracks.size(), 0);
  for (const IdleGapMark& g : gaps)
    if (g.track < src.gaps.size()) {
      src.gaps[g.track].push_back(g);
      idle[g.track] += g.end - g.start;
    }
  for (uint32_t t = 0; t < src.gaps.size(); ++t) {
    auto& list = src.gaps[t];
    std::sort(list.begin(), list.end(), [](const IdleGapMark& a, const IdleGapMark& b) { return a.start < b.start; });
    src.gap_ends[t] = present::SampledKeys(list.size(), [&](size_t p) { return list[p].end; });
    // Over the idle window: edge gaps (before the first and after the last activity) widen the
    // track's own span, so the share matches the temporal breakdown per stream.
    const SliceColumns& c = store.tracks[t].slices;
    if (!c.size() || list.empty()) {
      src.idle_share[t] = -1;
      continue;
    }
    TimeNs first = std::min(c.start.front(), list.front().start), last = store.tracks[t].max_end_prefix.back();
    for (const IdleGapMark& g : list) last = std::max(last, g.end);
    src.idle_share[t] = last > first ? double(idle[t]) / double(last - first) : -1;
  }
}

uint32_t TimelineView::gaps_visible_on(uint32_t track) const {
  return !sources_.empty() && track < sources_[0].gaps_drawn.size() ? sources_[0].gaps_drawn[track] : 0;
}

size_t TimelineView::find(const std::string& text, bool regex) {
  for (Source& src : sources_) src.highlights.clear();
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
    for (Source& src : sources_) {
      const TraceStore& store = src.store();
      std::vector<SliceRef> matches;
      // Names are interned: test each distinct name once, then take its slices.
      for (StringId id = 1; id < store.strings.size(); ++id) {
        std::string_view name = store.strings.view(id);
        bool hit = re ? RE2::PartialMatch(name, *re) : (!regex && icontains(name, lower));
        if (!hit) continue;
        auto refs = store.slices_named(id);
        matches.insert(matches.end(), refs.begin(), refs.end());
      }
      std::sort(matches.begin(), matches.end(), [&](SliceRef x, SliceRef y) { return store.start(x) < store.start(y); });
      src.highlights = std::move(matches);
    }
  }
  rebuild_matches();
  if (!matches_.empty()) select(matches_.front(), true);
  return matches_.size();
}

void TimelineView::step_match(int direction) {
  if (matches_.empty()) return;
  size_t n = matches_.size();
  match_cursor_ = (match_cursor_ + n + (direction < 0 ? -1 : 1)) % n;
  select(matches_[match_cursor_], true);
}

void TimelineView::set_pinned(uint32_t source, uint32_t track, bool pinned) {
  if (source >= sources_.size() || track >= sources_[source].pinned.size()) return;
  sources_[source].pinned[track] = pinned, sources_[source].hidden[track] = 0;
}

void TimelineView::set_hidden(uint32_t source, uint32_t track, bool hidden) {
  if (source >= sources_.size() || track >= sources_[source].hidden.size()) return;
  sources_[source].hidden[track] = hidden, sources_[source].pinned[track] = 0;
}

void TimelineView::add_track_rows(uint32_t source, uint32_t t, float& y) {
  const Track& track = sources_[source].store().tracks[t];
  uint32_t lanes = std::max<uint32_t>(track.row_count(), track.instants.size() ? 1 : 0);
  uint32_t shown = folded(source, t) ? kFoldedLevels : lanes;
  for (uint32_t lane = 0; lane < shown; ++lane) y += place_row(LaneRow(source, t, lane, y, lane_height_));
  if (shown < lanes) y += place_row(MoreLevelsRow(source, t, lanes - shown, y, lane_height_));
  if (lanes) y += 3;  // a little air between tracks
}

// One source's rows in display order: pinned tracks, then process groups (collapsible) with their
// tracks' lanes and counters. Tracks with neither slices nor instants take no row.
std::vector<DisplayRow> TimelineView::source_order(uint32_t source) const {
  const Source& src = sources_[source];
  const TraceStore& store = src.store();
  std::vector<DisplayRow> out;
  auto drawn = [&](uint32_t t) { return store.tracks[t].slices.size() || store.tracks[t].instants.size(); };
  if (std::count(src.pinned.begin(), src.pinned.end(), 1)) {
    out.push_back({DisplayRow::PinnedHeader, kNone, kNone, kNone, source});
    for (uint32_t t = 0; t < store.tracks.size(); ++t)
      if (src.pinned[t] && drawn(t)) out.push_back({DisplayRow::Track, store.tracks[t].process, t, kNone, source});
  }
  for (uint32_t p : store.process_order) {
    const Process& process = store.processes[p];
    bool has_content = false;
    for (uint32_t t : process.tracks) has_content |= drawn(t);
    for (const CounterSeries& c : store.counters) has_content |= c.process == p;
    if (!has_content) continue;
    out.push_back({DisplayRow::ProcessHeader, p, kNone, kNone, source});
    if (src.collapsed[p]) continue;
    for (uint32_t t : process.tracks)
      if (!src.pinned[t] && !src.hidden[t] && drawn(t)) out.push_back({DisplayRow::Track, p, t, kNone, source});
    for (uint32_t c = 0; c < store.counters.size(); ++c)
      if (store.counters[c].process == p) out.push_back({DisplayRow::Counter, p, kNone, c, source});
  }
  return out;
}

// Every source in order, each under its header when it has a label (a folded source: the header only).
std::vector<DisplayRow> TimelineView::display_order() const {
  std::vector<DisplayRow> out;
  for (uint32_t i = 0; i < sources_.size(); ++i) {
    if (!sources_[i].def.label.empty()) {
      out.push_back({DisplayRow::SourceHeader, kNone, kNone, kNone, i});
      if (sources_[i].folded_away) continue;
    }
    std::vector<DisplayRow> rows = source_order(i);
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

std::vector<uint32_t> TimelineView::visible_tracks() const {
  std::vector<uint32_t> out;
  if (sources_.empty()) return out;
  for (const DisplayRow& r : source_order(0))
    if (r.kind == DisplayRow::Track) out.push_back(r.track);
  return out;
}

void TimelineView::layout_rows() {
  rows_.clear();
  lane_height_ = ImGui::GetFontSize() + 5;
  float y = 0;
  for (const DisplayRow& d : display_order()) {
    switch (d.kind) {
      case DisplayRow::SourceHeader:
        if (d.source > 0) y += 6;  // sources apart
        y += place_row(SourceHeaderRow(d.source, y, lane_height_));
        break;
      case DisplayRow::PinnedHeader:
      case DisplayRow::ProcessHeader:
        y += place_row(ProcessHeaderRow(d.source, d.process, y, lane_height_));
        break;
      case DisplayRow::Track: add_track_rows(d.source, d.track, y); break;
      case DisplayRow::Counter:
        y += place_row(CounterRow(d.source, d.counter, y, lane_height_));
        break;
    }
  }
  content_height_ = y;
}

float TimelineView::track_screen_y(uint32_t source, uint32_t track) const {
  if (source >= sources_.size() || track >= sources_[source].track_y.size()) return NAN;
  return sources_[source].track_y[track];
}

float TimelineView::row_y_of(uint32_t source, SliceRef s) const {
  float base = track_screen_y(source, s.track);
  if (std::isnan(base)) return NAN;
  uint32_t row = sources_[source].store().tracks[s.track].row_of(s.index);
  if (folded(source, s.track)) row = std::min(row, kFoldedLevels);  // below the fold: its "N more levels" row
  return base + float(row) * lane_height_;
}

void TimelineView::draw(ImVec2 size) {
  stats_ = {};
  for (Source& src : sources_) {
    std::fill(src.gaps_drawn.begin(), src.gaps_drawn.end(), 0);
    std::fill(src.track_y.begin(), src.track_y.end(), NAN);
    src.screen_y = NAN;
  }
  layout_rows();
  if (pending_scroll_source_ != kNone) {
    for (const TimelineRow& r : rows_)
      if (row_base(r).source == pending_scroll_source_) {
        pending_scroll_y_ = std::max(0.f, row_base(r).y - lane_height_);
        break;
      }
    pending_scroll_source_ = kNone;
  }
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
  chrome_height_ = kOverviewHeight + kRulerHeight + legend_height;
  // The owner's rows, pinned: they stay while the sources' rows scroll under them.
  float custom_height = 0;
  for (CustomRow* r : custom_rows_) custom_height += r->height();
  custom_rect_ = {};
  if (custom_height > 0) {
    draw_custom_rows(dl, origin.x, origin.y + chrome_height_);
    // A rule between the pinned rows and the scrolling ones, so rows passing under read as such.
    float rule = origin.y + chrome_height_ + custom_height + 2;
    dl->AddLine(ImVec2(origin.x, rule), ImVec2(canvas_x1_, rule), theme == Theme::Light ? IM_COL32(120, 130, 150, 255) : IM_COL32(150, 160, 180, 255), 2);
    custom_height += 5;
    ImGui::Dummy(ImVec2(size.x, custom_height));
  }

  ImVec2 child_size(size.x, std::max(10.f, size.y - chrome_height_ - custom_height));
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
  for (uint32_t i = 0; i < sources_.size(); ++i)
    if (!sources_[i].path.slices.empty()) draw_path_links(rows_dl, i, canvas_x0_, canvas_x1_);
  if (show_flows) draw_flows(rows_dl, canvas_x0_, canvas_x1_);
  if (sources_.empty() && !empty_hint.empty())
    rows_dl->AddText(ImVec2(rows_min.x + 8, rows_min.y + 8), ImGui::GetColorU32(ImGuiCol_TextDisabled), empty_hint.c_str());
  ImGui::Dummy(ImVec2(size.x - 20, content_height_ + lane_height_));
  draw_track_menu();
  ImGui::EndChild();

  ImDrawList* all = ImGui::GetWindowDrawList();
  stats_.draw_commands = uint32_t(all->CmdBuffer.Size + rows_dl->CmdBuffer.Size);
  stats_.draw_vertices = uint32_t(all->VtxBuffer.Size + rows_dl->VtxBuffer.Size);
}

// The owner's rows, one under the other from y: each draws its header and its slice area; the
// mouse over one gets its hover, and a press there is remembered so that its release clicks it.
void TimelineView::draw_custom_rows(ImDrawList* dl, float x, float y) {
  ImGuiIO& io = ImGui::GetIO();
  RowContext ctx = row_context(dl, x);
  float top = y;
  bool hover_allowed = ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) && !dragging_ && !range_dragging_;
  for (size_t i = 0; i < custom_rows_.size(); ++i) {
    CustomRowSlot row(custom_rows_[i], y);
    row.draw(ctx);
    if (hover_allowed && row.contains(ctx, io.MousePos)) {
      row.hover(ctx, io.MousePos);
      if (ImGui::IsMouseClicked(0)) custom_pressed_ = i, drag_origin_ = io.MousePos, dragging_ = io.MousePos.x >= canvas_x0_;
      if (io.MouseWheel != 0 && !io.KeyShift && io.MousePos.x >= canvas_x0_) {
        double at = t_of(io.MousePos.x), factor = std::pow(0.8, io.MouseWheel);
        zoom_to(at - (at - t0_) * factor, at + (t1_ - at) * factor);
      }
    }
    y += row.height();
  }
  custom_rect_ = {canvas_x0_, top, canvas_x1_, y};
  // A release anywhere ends the press; where it did not move, the pressed row takes the click.
  if (custom_pressed_ != SIZE_MAX && ImGui::IsMouseReleased(0)) {
    bool click = std::fabs(io.MousePos.x - drag_origin_.x) < 3 && std::fabs(io.MousePos.y - drag_origin_.y) < 3;
    size_t i = std::exchange(custom_pressed_, SIZE_MAX);
    if (click && i < custom_rows_.size()) {
      float row_y = top;
      for (size_t k = 0; k < i; ++k) row_y += custom_rows_[k]->height();
      CustomRowSlot(custom_rows_[i], row_y).click(ctx, io.MousePos);
      dragging_ = false;
    }
  }
}

void TimelineView::draw_track_menu() {
  if (!ImGui::BeginPopup("track menu")) return;
  if (hits_.menu_source < sources_.size() && hits_.menu_track < sources_[hits_.menu_source].pinned.size()) {
    Source& src = sources_[hits_.menu_source];
    bool pinned = src.pinned[hits_.menu_track];
    if (ImGui::MenuItem(pinned ? "Unpin" : "Pin to top")) set_pinned(hits_.menu_source, hits_.menu_track, !pinned);
    if (ImGui::MenuItem("Hide")) set_hidden(hits_.menu_source, hits_.menu_track, true);
    if (folded(hits_.menu_source, hits_.menu_track) && ImGui::MenuItem("Unfold all levels")) set_folded(hits_.menu_source, hits_.menu_track, false);
    if (src.unfolded[hits_.menu_track] && src.store().tracks[hits_.menu_track].row_count() >= 2 * kFoldedLevels &&
        ImGui::MenuItem("Fold deep levels"))
      set_folded(hits_.menu_source, hits_.menu_track, true);
    if (ImGui::MenuItem("Show all hidden tracks")) std::fill(src.hidden.begin(), src.hidden.end(), 0);
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
      if (hits_.fold_hovered) zoom_to(double(hits_.fold.start), double(hits_.fold.end));
      else selected_ = hits_.hovered;
    }
    if (range_a_ > range_b_) std::swap(range_a_, range_b_);
    dragging_ = range_dragging_ = false;
  }
}

void TimelineView::draw_ruler(ImDrawList* dl, ImVec2 min, ImVec2 max) {
  bool light = theme == Theme::Light;
  dl->AddRectFilled(ImVec2(min.x - header_width_, min.y), max, light ? IM_COL32(245, 245, 245, 255) : IM_COL32(35, 35, 38, 255));
  // One ruler on the view clock for every row (a source's shift puts its times on it).
  int64_t step = present::tick_step(ns_per_px_ * 110);
  int64_t first = int64_t(std::floor(t0_ / double(step))) * step;
  ImU32 ink = light ? IM_COL32(60, 60, 60, 255) : IM_COL32(210, 210, 210, 255);
  for (int64_t shown = first; double(shown) <= t1_; shown += step) {
    float x = x_of(double(shown));
    if (x < min.x) continue;
    dl->AddLine(ImVec2(x, max.y - 6), ImVec2(x, max.y), ink);
    std::string label = present::format_tick(shown, step);
    // A label the edge would cut ("3.0" for "3.00 ms") is left out; its tick stays.
    if (x + 3 + ImGui::CalcTextSize(label.c_str()).x <= max.x) dl->AddText(ImVec2(x + 3, min.y + 3), ink, label.c_str());
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

// Which overview columns hold GPU work of any source. The strip shows the whole data range, so
// zoom and pan never change it: it is rebuilt only for a new width, data range or set of sources
// (one search per column and stream, from the last column's answer through the lane's sampled
// starts; per frame, as plain binary searches, this cost 20 ms on a 10 GB trace).
const std::vector<uint8_t>& TimelineView::overview_busy(int columns) {
  OverviewKey key{columns, data_start_, data_end_, sources_version_};
  if (overview_key_ == key) return overview_busy_;
  overview_key_ = key;
  overview_busy_.assign(size_t(columns), 0);
  double offset = double(data_start_), per_col = std::max<double>(double(data_end_ - data_start_), 1) / columns;
  for (const Source& src : sources_)
    for (uint32_t t = 0; t < src.store().tracks.size(); ++t) {
      const Track& track = src.store().tracks[t];
      if (track.kind != TrackKind::GpuStream || src.lanes[t].rows.empty()) continue;
      const Source::LaneIndex& lanes = src.lanes[t];
      const size_t slices = lanes.rows[0].size();
      double base = offset - double(src.def.shift);  // column edges on the store's clock
      size_t p = 0;  // the first slice ending after the column's start: moves right with the columns
      for (int col = 0; col < columns; ++col) {
        TimeNs a = TimeNs(base + col * per_col), b = TimeNs(base + (col + 1) * per_col);
        p = lanes.first_ending(0, [&](TimeNs end) { return end <= a; }, p);
        if (p != slices && lanes.start(0, p) < b) overview_busy_[size_t(col)] = 1;
      }
    }
  return overview_busy_;
}

// The overview strip: GPU busy density over the whole data range (every source's streams), with
// the current view marked.
void TimelineView::draw_overview(ImDrawList* dl, ImVec2 min, ImVec2 max) {
  bool light = theme == Theme::Light;
  dl->AddRectFilled(ImVec2(min.x - header_width_, min.y), max, light ? IM_COL32(232, 234, 238, 255) : IM_COL32(28, 28, 32, 255));
  // The strip spans the data (data_range), labelled with it: the trace's own time range.
  std::string range = present::format_duration(double(data_start_)) + " \xE2\x80\x93 " + present::format_duration(double(data_end_));
  dl->AddText(ImVec2(min.x - header_width_ + 6, min.y + 5), light ? IM_COL32(90, 90, 90, 255) : IM_COL32(180, 180, 180, 255), range.c_str());
  double offset = double(data_start_), total = std::max<double>(double(data_end_ - data_start_), 1);
  int columns = std::max(1, int(max.x - min.x));
  // The owner's profile (a job: mean busy over its ranks, in [0, 1]) or the sources' streams (0/1).
  auto bar = [&](int col, float fraction) {  // at least a pixel: a little busy is not none
    dl->AddRectFilled(ImVec2(min.x + col, max.y - 4 - std::max(1.f, 14 * fraction)), ImVec2(min.x + col + 1, max.y - 4),
                      IM_COL32(0, 114, 178, 200));
  };
  if (overview_profile) {
    const std::vector<float>& busy = overview_profile(data_start_, data_end_, columns);
    for (int col = 0; col < columns && col < int(busy.size()); ++col)
      if (busy[size_t(col)] > 0) bar(col, busy[size_t(col)]);
  } else {
    const std::vector<uint8_t>& busy = overview_busy(columns);
    for (int col = 0; col < columns; ++col)
      if (busy[col]) bar(col, 1);
  }
  float a = min.x + float((t0_ - offset) / total) * (max.x - min.x), b = min.x + float((t1_ - offset) / total) * (max.x - min.x);
  dl->AddRect(ImVec2(std::max(a, min.x), min.y + 1), ImVec2(std::min(b, max.x), max.y - 1), IM_COL32(213, 94, 0, 255), 0, 0, 2);
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseHoveringRect(min, max) && ImGui::IsMouseDown(0) && !dragging_ && !range_dragging_) {
    double center = offset + double(io.MousePos.x - min.x) / double(max.x - min.x) * total, half = (t1_ - t0_) / 2;
    zoom_to(center - half, center + half);
  }
}

RowContext TimelineView::row_context(ImDrawList* dl, float header_x) {
  return RowContext{dl,         mapping(),  header_x, header_width_, lane_height_, theme, color_mode,
                    show_idle,  sources_,   selected_, hits_,        stats_};
}

// Rows off screen only note where they are (a lane: its track's y, which flows and path links
// use); the rest draw, then take hover and clicks.
void TimelineView::draw_rows(ImDrawList* dl, ImVec2 min, ImVec2 view_max, float scroll_y) {
  (void)view_max;
  float visible_top = scroll_y - lane_height_, visible_bottom = scroll_y + ImGui::GetWindowHeight() + lane_height_;
  hits_.hovered = {};
  hits_.fold_hovered = false;
  RowContext ctx = row_context(dl, min.x);
  for (const TimelineRow& row : rows_) {
    const RowBase& place = row_base(row);
    float y = min.y + place.y;
    Source& src = sources_[place.source];
    if (std::isnan(src.screen_y)) src.screen_y = y;
    std::visit([&](const auto& r) { r.laid_out(ctx, y); }, row);
    if (place.y + place.height < visible_top || place.y > visible_bottom) continue;
    ++stats_.rows_drawn;
    std::visit([&](const auto& r) {
      r.draw(ctx, y);
      r.hover(ctx, y);
      r.click(ctx, y);
    }, row);
  }
}

// What is found once per selection (SliceLinks, SliceChildren), brought up to date.
template <class Facts>
const Facts& TimelineView::of_selection(Facts& facts) {
  if (selected_.valid() && selected_.source < sources_.size())
    facts.update(sources_[selected_.source].store(), selected_.ref, sources_version_);
  else
    facts = {};
  return facts;
}
const present::SliceLinks& TimelineView::selection_links() { return of_selection(selection_links_); }
const present::SliceChildren& TimelineView::selection_children() { return of_selection(selection_children_); }

// Arrows for the selection only: its launch → GPU activities, or the launch of a GPU activity,
// plus trace flows into and out of it. Flows stay within the selection's source. An end off
// screen is drawn to the edge. Bounded by pixels: a CUDA graph's launch has an arrow per kernel
// (thousands), so past the budget only the arrows whose far end is in view are drawn, with the
// nearest one out of view on each side, a sample of them when even those are too many, and an
// arrow whose ends fall on the 2-px cells of one already drawn is skipped.
void TimelineView::draw_flows(ImDrawList* dl, float x0, float x1) {
  const present::SliceLinks& links = selection_links();
  if (links.all().empty()) return;
  const Source& src = sources_[selected_.source];
  const TraceStore& store = src.store();
  constexpr size_t kBudget = 256, kLooked = 4 * kBudget;
  std::span<const present::SliceLinks::Link> shown = links.all();
  if (shown.size() > kBudget) {
    const double shift = double(src.def.shift);
    auto [begin, end] = links.around(TimeNs(std::floor(t0_ - shift)), TimeNs(std::ceil(t1_ - shift)));
    shown = shown.subspan(begin, end - begin);
  }
  ImU32 ink = IM_COL32(213, 94, 0, 230);
  ArrowCells cells;
  const size_t looked = std::min(shown.size(), kLooked);
  for (size_t k = 0, budget = kBudget; k < looked && budget > 0; ++k) {
    // Evenly through the range when it is longer than kLooked, its first and last included.
    const auto& l = shown[looked < shown.size() ? k * (shown.size() - 1) / (looked - 1) : k];
    float ya = row_y_of(selected_.source, l.from), yb = row_y_of(selected_.source, l.to);
    if (std::isnan(ya) || std::isnan(yb)) continue;
    ImVec2 a(std::clamp(x_of(src.view(store.start(l.from))), x0, x1), ya + lane_height_ * 0.5f);
    ImVec2 b(std::clamp(x_of(src.view(store.start(l.to))), x0, x1), yb + lane_height_ * 0.5f);
    if (!cells.first(a, b)) continue;
    --budget;
    ++stats_.flow_links_drawn;
    float bend = std::max(20.f, std::fabs(b.x - a.x) * 0.3f);
    dl->AddBezierCubic(a, ImVec2(a.x + bend, a.y), ImVec2(b.x - bend, b.y), b, ink, 1.8f);
    dl->AddTriangleFilled(ImVec2(b.x, b.y), ImVec2(b.x - 7, b.y - 4), ImVec2(b.x - 7, b.y + 4), ink);
  }
}

// The path's links between slices whose span meets the view, as arrows in their kind's colour;
// an end off screen is drawn to the edge. Bounded by pixels: links under a pixel are skipped, and
// so is a link whose ends fall on the same 2-px cells as one already drawn (zoomed out, hundreds
// of launches stack on one spot), then a budget.
void TimelineView::draw_path_links(ImDrawList* dl, uint32_t source, float x0, float x1) {
  const Source& src = sources_[source];
  const double shift = double(src.def.shift), lo = t0_ - shift, hi = t1_ - shift;
  auto min_ts = [](const PathOverlay::Link& l) { return std::min(l.from_ts, l.to_ts); };
  TimeNs from = TimeNs(lo) - src.path_max_span;
  auto it = std::partition_point(src.path.links.begin(), src.path.links.end(), [&](const auto& l) { return min_ts(l) < from; });
  ArrowCells cells;
  int budget = 600;
  for (; it != src.path.links.end() && double(min_ts(*it)) <= hi && budget > 0; ++it) {
    const PathOverlay::Link& l = *it;
    if (double(std::max(l.from_ts, l.to_ts)) < lo) continue;
    float ya = row_y_of(source, l.from), yb = row_y_of(source, l.to);
    if (std::isnan(ya) || std::isnan(yb)) continue;
    ImVec2 a(std::clamp(x_of(src.view(l.from_ts)), x0, x1), ya + lane_height_ * 0.5f);
    ImVec2 b(std::clamp(x_of(src.view(l.to_ts)), x0, x1), yb + lane_height_ * 0.5f);
    if (std::fabs(b.x - a.x) < 1 && std::fabs(b.y - a.y) < 1) continue;
    if (!cells.first(a, b)) continue;
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
