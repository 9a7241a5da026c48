// The timeline's sources and their per-track state (pins, hidden rows, folds, highlights, idle
// gaps, the path), the state kept across a store swap, and find. Layout, input and drawing live
// in timeline_view_*.cpp; each row kind is a class in timeline_rows.{h,cpp}.
#include "views/timeline_view.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <tuple>
#include <unordered_map>

#include "core/names/short_names.h"
#include "core/store/data_range.h"

namespace sl::views {
namespace {

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
  // An Nsight report opens on its GPU work (gpu_time_range), not on seconds of idle time around it.
  if (store.meta.format.starts_with("nsys"))
    if (auto gpu = gpu_time_range(store)) {
      double span = std::max<double>(double(gpu->second - gpu->first), 1000.0);
      zoom_to(double(gpu->first) - span * 0.02, double(gpu->second) + span * 0.02);
    }
}

namespace {
// CPU time of this thread, as `bench frame` times frames: what preparing costs us, not time lost
// to other processes.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}
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
  // holding only instants (Kineto's markers) collapsed; counters-only ones (a snapshot's memory
  // rows) stay open. Everything else keeps the trace's order.
  uint32_t gpu_streams = 0;
  for (const Track& t : store.tracks) gpu_streams += t.kind == TrackKind::GpuStream && t.gpu_work;
  if (gpu_streams <= 16)
    for (uint32_t t = 0; t < store.tracks.size(); ++t)
      src.pinned[t] = store.tracks[t].kind == TrackKind::GpuStream && store.tracks[t].gpu_work;
  for (uint32_t p = 0; p < store.processes.size(); ++p) {
    bool slices = false;
    for (uint32_t t : store.processes[p].tracks) slices |= store.tracks[t].slices.size() > 0;
    bool counters_only = store.processes[p].tracks.empty() &&
                         std::any_of(store.counters.begin(), store.counters.end(), [p](const CounterSeries& c) { return c.process == p; });
    src.collapsed[p] = !slices && !counters_only;
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

bool TimelineView::folded(uint32_t source, uint32_t track) const {
  if (source >= sources_.size()) return false;
  const Source& src = sources_[source];
  if (track >= src.unfolded.size() || src.unfolded[track]) return false;
  const Track& t = src.store().tracks[track];
  return present::folds_deep_stack(t.kind, t.row_count());
}

void TimelineView::set_folded(uint32_t source, uint32_t track, bool folded) {
  if (source < sources_.size() && track < sources_[source].unfolded.size()) sources_[source].unfolded[track] = !folded;
}

bool TimelineView::hidden(uint32_t track) const {
  return !sources_.empty() && track < sources_[0].hidden.size() && sources_[0].hidden[track];
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

}  // namespace sl::views
