#include "figures/timeline_figure.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>

#include "core/names/short_names.h"
#include "core/names/track_names.h"
#include "core/present/palette.h"
#include "core/present/stack_fold.h"
#include "core/present/time_axis.h"
#include "core/store/data_range.h"
#include "figures/cairo_output.h"
#include "figures/legend.h"

namespace sl::fig {
namespace {

struct TrackRows {
  uint32_t track = kNone;
  std::string label;
  std::vector<std::vector<uint32_t>> lanes;  // per visual row: slices overlapping the range, in time order
  uint32_t more_levels = 0;                  // a folded deep stack: levels under its "N more levels" row
};

struct Group {
  std::string label;
  std::vector<TrackRows> tracks;
};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Substring (case-insensitive) or, when the pattern is a valid regex, an RE2 partial match.
class RowFilter {
public:
  explicit RowFilter(const std::string& pattern) : needle_(lower(pattern)) {
    if (pattern.empty()) return;
    RE2::Options o;
    o.set_case_sensitive(false);
    o.set_log_errors(false);
    re_ = std::make_unique<RE2>(pattern, o);
    if (!re_->ok()) re_.reset();
  }
  bool matches(const std::string& label) const {
    if (needle_.empty()) return true;
    return lower(label).find(needle_) != std::string::npos || (re_ && RE2::PartialMatch(label, *re_));
  }

private:
  std::string needle_;
  std::unique_ptr<RE2> re_;
};

// Per visual row, the slices that overlap [t0, t1]; trailing empty rows dropped. Slices deeper
// than `max_depth` (>= 0) on CPU and async rows are left out and counted in `cut`.
std::vector<std::vector<uint32_t>> lanes_in_range(const Track& track, TimeNs t0, TimeNs t1, int max_depth, size_t& cut) {
  const SliceColumns& c = track.slices;
  size_t n = size_t(std::partition_point(c.start.begin(), c.start.end(), [&](TimeNs s) { return s < t1; }) - c.start.begin());
  std::vector<std::vector<uint32_t>> lanes(track.row_count());
  if (n == 0 || track.max_end_prefix[n - 1] <= t0) return {};
  bool limit = max_depth >= 0 && track.kind != TrackKind::GpuStream;
  size_t cut_before = cut;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(c.end(i) > t0 || (c.dur[i] == 0 && c.start[i] >= t0))) continue;
    if (limit && c.depth[i] > uint32_t(max_depth)) ++cut;
    else lanes[track.row_of(i)].push_back(i);
  }
  // A cut stack leaves holes where its deeper rows were (overlapping top-level slices can sit
  // on deep rows): close them up.
  if (cut != cut_before) std::erase_if(lanes, [](const auto& lane) { return lane.empty(); });
  while (!lanes.empty() && lanes.back().empty()) lanes.pop_back();
  return lanes;
}

// A deep stack folded as on screen: its first levels kept, the rest counted in `folded`. The
// screen's state decides where the options carry it (it folds by the whole row's depth), else the
// levels in the range do.
uint32_t fold_deep_stack(const TimelineFigureOptions& o, uint32_t t, const Track& track,
                         std::vector<std::vector<uint32_t>>& lanes, size_t& folded) {
  bool fold = o.folded_track ? o.folded_track(t) : o.fold_deep_stacks && present::folds_deep_stack(track.kind, uint32_t(lanes.size()));
  if (!fold || lanes.size() <= present::kFoldedLevels) return 0;
  for (size_t lane = present::kFoldedLevels; lane < lanes.size(); ++lane) folded += lanes[lane].size();
  uint32_t more = uint32_t(lanes.size() - present::kFoldedLevels);
  lanes.resize(present::kFoldedLevels);
  return more;
}

// Where everything goes, so the passes below agree.
struct Frame {
  double t0, t1, ns_per_px;
  float x0, x1;  // plot area
  float x_of(double t) const { return x0 + float((t - t0) / ns_per_px); }
};

class Layout {
public:
  Layout(const TraceStore& store, const analysis::IdleCauses* idle, const Style& style, const TimelineFigureOptions& o,
         KeyTable* keys = nullptr)
      : store_(store), idle_(idle), s_(style), o_(o), keys_(keys ? *keys : own_keys_) {}

  bool run(Scene& scene, TimelineFigureStats& stats, std::string& error);
  // The pieces run() is made of, also used by TimelineBand.
  bool select(std::string& error);
  float label_width() const;
  float plot_height() const;
  void set_plot(float x0, float x1);
  void emit_rows_within(Scene& scene, float y, size_t budget, TimelineFigureStats& stats);

private:
  bool select_rows(std::string& error);
  void assign_keys();
  bool select_listed_rows(std::string& error);
  size_t emit_rows(Scene& out, float y0, float fold_px, TimelineFigureStats& st);
  void emit_lane(Scene& out, uint32_t track, const std::vector<uint32_t>& slices, float y, float fold_px,
                 TimelineFigureStats& st);
  void emit_gaps(Scene& out, uint32_t track, float y, float height, TimelineFigureStats& st);
  void emit_axis(Scene& out, float y_top, float y_axis);
  std::string label_for(uint32_t name_id);
  Color slice_color(SliceRef s);
  present::KernelKind kind_of(SliceRef s);

  const TraceStore& store_;
  const analysis::IdleCauses* idle_;
  const Style& s_;
  const TimelineFigureOptions& o_;
  TimeNs t0_ = 0, t1_ = 0;
  Frame f_{};
  std::vector<Group> groups_;
  std::vector<std::vector<uint32_t>> gaps_by_track_;  // indices into idle_->gaps
  std::vector<int8_t> kind_cache_;                    // per StringId, -1 unknown (GPU names)
  std::map<uint32_t, std::string> keyed_;             // name id → "K3" for long or ambiguous names
  std::shared_ptr<const ShortNames> names_;           // the trace's distinct short names, on first use
  KeyTable own_keys_;
  KeyTable& keys_;
  size_t depth_cut_ = 0, levels_folded_ = 0;
  bool kinds_seen_[6] = {}, causes_seen_[analysis::kIdleCauseCount] = {};
};

present::KernelKind Layout::kind_of(SliceRef s) {
  if (!store_.is_gpu(s)) return present::KernelKind::NotGpu;
  StringId name = store_.slices(s.track).name[s.index];
  if (kind_cache_.size() <= name) kind_cache_.resize(store_.strings.size() + 1, -1);
  if (kind_cache_[name] < 0) kind_cache_[name] = int8_t(present::kernel_kind(store_.name(s), store_.cat(s), true));
  return present::KernelKind(kind_cache_[name]);
}

// GPU work by kernel type (the legend explains it); CPU slices by a stable hash of their name.
Color Layout::slice_color(SliceRef s) {
  if (o_.slice_color)
    if (std::optional<Color> c = o_.slice_color(s)) return *c;
  present::KernelKind k = kind_of(s);
  if (k == present::KernelKind::NotGpu) return Color::of(present::key_rgb(store_.name(s), s_.dark));
  return Color::of(present::kernel_kind_rgb(k));
}

bool Layout::select_rows(std::string& error) {
  if (!o_.rows.empty()) return select_listed_rows(error);
  RowFilter filter(o_.tracks);
  const auto shown_under = display_groups(store_);  // the GUI's groups: by what a track holds
  for (uint32_t p : store_.process_order) {
    Group g;
    g.label = process_label(store_, p);
    bool whole = !o_.tracks.empty() && filter.matches(g.label);
    for (uint32_t t : shown_under[p]) {
      std::string label = track_label(store_, t);
      // The raw ids match too ("tid 19392"): rows are named for people, scripts may know the tid.
      if (!whole && !filter.matches(label) && !filter.matches(g.label + " " + label) &&
          !filter.matches(track_raw_ids(store_, t)))
        continue;
      if (o_.keep_track && !o_.keep_track(t)) continue;
      auto lanes = lanes_in_range(store_.tracks[t], t0_, t1_, o_.max_depth, depth_cut_);
      if (lanes.empty()) continue;
      uint32_t more = fold_deep_stack(o_, t, store_.tracks[t], lanes, levels_folded_);
      g.tracks.push_back({t, std::move(label), std::move(lanes), more});
    }
    if (!g.tracks.empty()) groups_.push_back(std::move(g));
  }
  // GPU streams first, the reason for the figure (their group first, and first in their group);
  // the rest in the trace's order.
  auto gpu = [&](const TrackRows& t) { return store_.tracks[t.track].kind == TrackKind::GpuStream; };
  for (Group& g : groups_) std::stable_partition(g.tracks.begin(), g.tracks.end(), gpu);
  std::stable_partition(groups_.begin(), groups_.end(), [&](const Group& g) { return gpu(g.tracks.front()); });
  if (groups_.empty()) {
    error = o_.tracks.empty() ? "no slices in the range" : "no row with slices in the range matches '" + o_.tracks + "'";
    return false;
  }
  return true;
}

// The caller's rows, in its order: a new group whenever the process changes.
bool Layout::select_listed_rows(std::string& error) {
  uint32_t last_process = kNone;
  std::vector<uint32_t> group_of(store_.tracks.size(), kNone);
  const auto shown_under = display_groups(store_);
  for (uint32_t p = 0; p < shown_under.size(); ++p)
    for (uint32_t t : shown_under[p]) group_of[t] = p;
  for (uint32_t t : o_.rows) {
    if (t >= store_.tracks.size()) {
      error = "row " + std::to_string(t) + " is not a track of this trace";
      return false;
    }
    if (o_.keep_track && !o_.keep_track(t)) continue;
    auto lanes = lanes_in_range(store_.tracks[t], t0_, t1_, o_.max_depth, depth_cut_);
    if (lanes.empty()) continue;
    uint32_t p = group_of[t];
    if (groups_.empty() || p != last_process) groups_.push_back({process_label(store_, p), {}});
    last_process = p;
    uint32_t more = fold_deep_stack(o_, t, store_.tracks[t], lanes, levels_folded_);
    groups_.back().tracks.push_back({t, track_label(store_, t), std::move(lanes), more});
  }
  if (groups_.empty()) {
    error = "none of the " + std::to_string(o_.rows.size()) + " rows has slices in the range";
    return false;
  }
  return true;
}

float Layout::plot_height() const {
  float h = 0;
  for (const Group& g : groups_) {
    h += s_.lane * 1.1f;
    for (const TrackRows& t : g.tracks) h += float(t.lanes.size() + (t.more_levels ? 1 : 0)) * s_.lane + s_.lane * 0.25f;
  }
  return h;
}

std::string Layout::label_for(uint32_t name_id) {
  auto it = keyed_.find(name_id);
  if (it != keyed_.end()) return it->second;
  if (!names_) names_ = store_short_names(store_);
  return (*names_)(store_.strings.view(name_id));
}

void Layout::emit_gaps(Scene& out, uint32_t track, float y, float height, TimelineFigureStats& st) {
  if (!idle_ || track >= gaps_by_track_.size()) return;
  for (uint32_t gi : gaps_by_track_[track]) {
    const analysis::IdleGap& g = idle_->gaps[gi];
    if (g.end <= t0_ || g.start >= t1_) continue;
    float a = std::max(f_.x_of(double(g.start)), f_.x0), b = std::min(f_.x_of(double(g.end)), f_.x1);
    if (b - a < 1) continue;  // sub-pixel gaps: the track looks busy there, as it is
    int cause = int(g.cause);
    causes_seen_[cause] = true;
    out.rect(Role::IdleGap, a, y, b - a, height, Color::of(present::idle_cause_rgb(cause), s_.dark ? 110 : 95));
    ++st.gaps;
  }
}

// One lane with the screen's folding: a run of slices narrower than `fold_px` becomes one block.
void Layout::emit_lane(Scene& out, uint32_t track, const std::vector<uint32_t>& slices, float y, float fold_px,
                       TimelineFigureStats& st) {
  const SliceColumns& c = store_.tracks[track].slices;
  float h = s_.lane - 2;
  y += 1;
  size_t i = 0;
  while (i < slices.size()) {
    uint32_t r = slices[i];
    float sx0 = f_.x_of(double(c.start[r])), sx1 = f_.x_of(double(c.end(r)));
    if (sx1 - sx0 < fold_px) {
      double limit = double(c.start[r]) + fold_px * f_.ns_per_px;
      auto end_it = std::partition_point(slices.begin() + long(i), slices.end(), [&](uint32_t q) { return double(c.start[q]) < limit; });
      size_t j = size_t(end_it - slices.begin());
      auto wide = [&](uint32_t q) { return f_.x_of(double(c.end(q))) - f_.x_of(double(c.start[q])) >= fold_px; };
      if (j - i > 1 && wide(slices[j - 1])) --j;  // only the run's last slice can be wide: it goes on its own
      uint32_t last = slices[j - 1];
      float a = std::max(sx0, f_.x0), b = std::min(std::max(f_.x_of(double(c.end(last))), sx0 + 1.f), f_.x1);
      if (j - i == 1) {
        SliceRef s{track, r};
        kinds_seen_[int(kind_of(s))] = true;
        out.rect(Role::Slice, a, y, std::max(b - a, 0.5f), h, slice_color(s));
        ++st.slices;
      } else {
        if (o_.slice_color) {  // composed figures: the colour that fills most of the run, outlined
          std::vector<std::pair<Color, TimeNs>> by_color;
          for (size_t q = i; q < j; ++q) {
            Color qc = slice_color({track, slices[q]});
            auto it = std::find_if(by_color.begin(), by_color.end(), [&](const auto& e) { return e.first == qc; });
            if (it == by_color.end()) by_color.push_back({qc, c.dur[slices[q]]});
            else it->second += c.dur[slices[q]];
          }
          Color fill = std::max_element(by_color.begin(), by_color.end(), [](auto& x, auto& y) { return x.second < y.second; })->first;
          out.rect(Role::Folded, a, y, std::max(b - a, 0.5f), h, fill, s_.outline, s_.outline_width);
          ++st.folded;
          i = j;
          continue;
        }
        // GPU runs keep the colour of the type that fills most of them; CPU runs are neutral.
        TimeNs by_kind[6] = {};
        for (size_t q = i; q < j; ++q) by_kind[int(kind_of({track, slices[q]}))] += c.dur[slices[q]];
        int k = int(std::max_element(by_kind, by_kind + 6) - by_kind);
        Color fill = k == int(present::KernelKind::NotGpu) ? s_.folded : Color::of(present::kernel_kind_rgb(present::KernelKind(k)), 170);
        if (k != int(present::KernelKind::NotGpu)) kinds_seen_[k] = true;
        // As on screen, a block is as tall as its run is busy: a stream idle 40 % of the time
        // between sub-pixel kernels reads as 60 % full, not solid (the rest in a faint band).
        TimeNs busy = 0;
        for (size_t q = i; q < j; ++q) busy += c.dur[slices[q]];
        double span = double(std::max<TimeNs>(1, c.end(last) - c.start[r]));
        float fraction = float(std::clamp(double(busy) / span, 0.08, 1.0));
        if (fraction < 0.97f) out.rect(Role::Decoration, a, y, std::max(b - a, 0.5f), h, s_.header_fill);
        out.rect(Role::Folded, a, y + h * (1 - fraction), std::max(b - a, 0.5f), h * fraction, fill);
        ++st.folded;
      }
      i = j;
      continue;
    }
    SliceRef s{track, r};
    Color fill = slice_color(s);
    kinds_seen_[int(kind_of(s))] = true;
    float a = std::max(sx0, f_.x0), b = std::min(sx1, f_.x1);
    out.rect(Role::Slice, a, y, b - a, h, fill, s_.outline, s_.outline_width);
    ++st.slices;
    if (b - a > s_.small * 2.5f) {
      std::string label = fit_text(label_for(c.name[r]), b - a - s_.small * 0.5f, s_.small);
      if (!label.empty()) {
        Color ink = present::prefers_dark_text({fill.r, fill.g, fill.b}) ? Color{20, 20, 20, 255} : Color{250, 250, 250, 255};
        out.text(Role::SliceLabel, a + s_.small * 0.25f, y + h * 0.5f + s_.small * 0.36f, label, s_.small, ink);
        ++st.labels;
      }
    }
    ++i;
  }
}

size_t Layout::emit_rows(Scene& out, float y, float fold_px, TimelineFigureStats& st) {
  float label_x = s_.pad;
  float label_w = f_.x0 - s_.pad * 1.5f;
  for (const Group& g : groups_) {
    out.rect(Role::Decoration, s_.pad, y, f_.x1 - s_.pad, s_.lane, s_.header_fill);
    out.text(Role::Label, label_x, y + s_.lane * 0.5f + s_.font * 0.36f, fit_text(g.label, f_.x1 - label_x, s_.font, true), s_.font,
             s_.ink, Anchor::Left, true);
    y += s_.lane * 1.1f;
    for (const TrackRows& t : g.tracks) {
      float height = float(t.lanes.size()) * s_.lane;
      out.line(Role::Decoration, label_x, y - s_.lane * 0.125f, f_.x1, y - s_.lane * 0.125f, s_.grid, s_.outline_width);
      if (store_.tracks[t.track].kind == TrackKind::GpuStream) emit_gaps(out, t.track, y, height, st);
      // A label too long for the column wraps onto the track's further lanes (their room is free).
      std::vector<std::string> lines = wrap_text(t.label, label_w - s_.small * 0.8f, s_.small, t.lanes.size());
      for (size_t k = 0; k < lines.size(); ++k)
        out.text(Role::Label, label_x + s_.small * 0.8f, y + s_.lane * (0.5f + float(k)) + s_.small * 0.36f, lines[k],
                 s_.small, s_.ink);
      for (size_t lane = 0; lane < t.lanes.size(); ++lane)
        emit_lane(out, t.track, t.lanes[lane], y + float(lane) * s_.lane, fold_px, st);
      st.lanes += t.lanes.size();
      if (t.more_levels) {  // the screen's fold row: what is below, and how many levels
        float ry = y + height;
        out.rect(Role::Decoration, f_.x0, ry + 1, f_.x1 - f_.x0, s_.lane - 2, s_.header_fill);
        std::string more = "\xE2\x96\xB8 " + std::to_string(t.more_levels) + " more levels";
        out.text(Role::Label, f_.x0 + s_.small * 0.4f, ry + s_.lane * 0.5f + s_.small * 0.36f, fit_text(more, f_.x1 - f_.x0, s_.small),
                 s_.small, s_.muted);
        height += s_.lane;
      }
      y += height + s_.lane * 0.25f;
    }
  }
  st.tracks = 0;
  for (const Group& g : groups_) st.tracks += g.tracks.size();
  return out.items.size();
}

void Layout::emit_axis(Scene& out, float y_top, float y_axis) {
  emit_time_axis(out, s_, f_.t0, f_.t1, f_.x0, f_.x1, y_top, y_axis, "time since trace start");
}

bool Layout::select(std::string& error) {
  // Without a range: the data, not the metadata after it (data_range.h).
  auto [first, last] = data_time_range(store_);
  t0_ = o_.end > o_.start ? o_.start : first;
  t1_ = o_.end > o_.start ? o_.end : std::max<TimeNs>(last, first + 1);
  if (!select_rows(error)) return false;
  if (idle_) {
    gaps_by_track_.assign(store_.tracks.size(), {});
    for (uint32_t i = 0; i < idle_->gaps.size(); ++i)
      if (idle_->gaps[i].track < store_.tracks.size()) gaps_by_track_[idle_->gaps[i].track].push_back(i);
  }
  return true;
}

// Label column: as wide as the longest row label, at most 28% of the figure.
float Layout::label_width() const {
  float label_w = 0;
  for (const Group& g : groups_)
    for (const TrackRows& t : g.tracks) label_w = std::max(label_w, text_width(t.label, s_.small) + s_.small * 1.6f);
  return std::min(label_w, s_.width * 0.28f);
}

void Layout::set_plot(float x0, float x1) {
  f_.x0 = x0, f_.x1 = x1;
  f_.t0 = double(t0_), f_.t1 = double(t1_);
  f_.ns_per_px = (f_.t1 - f_.t0) / std::max(1.f, f_.x1 - f_.x0);
}

// Name keys for labels whose short form is long or shared by several kernels.
void Layout::assign_keys() {
  std::map<std::string, std::vector<uint32_t>> by_short;
  if (!names_) names_ = store_short_names(store_);
  for (const Group& g : groups_)
    for (const TrackRows& t : g.tracks)
      for (const auto& lane : t.lanes)
        for (uint32_t r : lane) {
          const SliceColumns& c = store_.tracks[t.track].slices;
          if (f_.x_of(double(c.end(r))) - f_.x_of(double(c.start[r])) <= s_.small * 2.5f) continue;
          auto& ids = by_short[(*names_)(store_.strings.view(c.name[r]))];
          if (std::find(ids.begin(), ids.end(), c.name[r]) == ids.end()) ids.push_back(c.name[r]);
        }
  for (auto& [short_text, ids] : by_short) {
    bool ambiguous = ids.size() > 1;
    if (!ambiguous && short_text.size() <= 28) continue;
    for (uint32_t id : ids) {
      std::string key = keys_.key(ambiguous ? std::string(store_.strings.view(id)) : short_text);
      if (key.empty()) break;
      keyed_[id] = key;
    }
  }
}

// Level of detail: the screen's 3 px folding; wider only when the budget still overflows.
void Layout::emit_rows_within(Scene& scene, float y, size_t budget, TimelineFigureStats& stats) {
  assign_keys();
  Scene rows;
  float fold = kFoldPx;
  for (;; fold *= 2) {
    rows.items.clear();
    stats = {};
    std::fill(std::begin(kinds_seen_), std::end(kinds_seen_), false);
    std::fill(std::begin(causes_seen_), std::end(causes_seen_), false);
    emit_rows(rows, y, fold, stats);
    if (rows.items.size() <= budget || fold >= 48) break;
  }
  stats.fold_px = fold;
  stats.depth_cut = depth_cut_;
  stats.levels_folded = levels_folded_;
  if (rows.items.size() > budget) {  // still too many rows of content: keep the first ones
    rows.items.resize(budget);
    stats.truncated = true;
  }
  for (Item& i : rows.items) scene.items.push_back(std::move(i));
}

bool Layout::run(Scene& scene, TimelineFigureStats& stats, std::string& error) {
  if (!select(error)) return false;
  set_plot(s_.pad + label_width(), s_.width - s_.pad - text_width("0000 µs", s_.small) * 0.55f);  // room for the last tick label

  scene.width = s_.width;
  scene.background = s_.background;
  std::string title = o_.title + (o_.title.empty() ? "" : " · ") + present::format_duration(double(t0_)) + " – " +
                      present::format_duration(double(t1_));
  float y = s_.pad + s_.title;
  scene.text(Role::Title, s_.pad, y, fit_text(title, s_.width - 2 * s_.pad, s_.title, true), s_.title, s_.ink, Anchor::Left, true);
  y += s_.title * 0.8f;
  float rows_top = y, axis_y = rows_top + plot_height() + s_.small * 0.3f;
  emit_axis(scene, rows_top, axis_y);

  size_t fixed = scene.items.size() + 64;
  emit_rows_within(scene, rows_top, o_.max_elements > fixed ? o_.max_elements - fixed : 0, stats);

  y = axis_y + s_.small * 4.2f;
  if (stats.depth_cut) {  // never silently: the reader learns that deeper calls exist
    scene.text(Role::Label, s_.pad, y, depth_note(o_.max_depth, stats.depth_cut), s_.small, s_.muted);
    y += s_.small * 1.7f;
  }
  if (stats.levels_folded) {  // wrapped, never cut: it says how to draw what it leaves out
    for (const std::string& line : wrap_text(fold_note(stats.levels_folded), s_.width - 2 * s_.pad, s_.small, 3)) {
      scene.text(Role::Label, s_.pad, y, line, s_.small, s_.muted);
      y += s_.small * 1.3f;
    }
    y += s_.small * 0.4f;
  }
  // Legend: kernel types and idle causes that appear, the folding, then the name keys.
  Legend legend(s_);
  for (int k = 0; k < 5; ++k)
    if (kinds_seen_[k]) legend.add(Color::of(present::kernel_kind_rgb(present::KernelKind(k))), present::kernel_kind_name(present::KernelKind(k)));
  // CPU slices take a colour per name, so their swatch is a stand-in. It used to be the hash
  // colour of "CPU op", a light blue that read like the cross-stream-wait tint beside it; a
  // fixed brown is far from every kernel type and idle cause (tinted or not).
  if (kinds_seen_[int(present::KernelKind::NotGpu)]) legend.add(Color{140, 86, 75, 255}, "CPU op (each name its own colour)");
  for (int c = 0; c < analysis::kIdleCauseCount; ++c)
    if (causes_seen_[c]) legend.add(Color::of(present::idle_cause_rgb(c), s_.dark ? 110 : 95), std::string("idle: ") + present::idle_cause_label(c));
  if (stats.folded) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "runs < %.0f px folded", double(stats.fold_px));
    legend.add(s_.folded, buf);
  }
  y = legend.emit(scene, s_.pad, y, s_.width - 2 * s_.pad);
  y = emit_key_table(scene, s_, keys_.entries(), s_.pad, y, s_.width - 2 * s_.pad);
  scene.height = y + s_.pad;
  stats.elements = scene.items.size();
  return true;
}

}  // namespace

// Rows are named as in the timeline (core/names/track_names.h).
std::string process_label(const TraceStore& store, uint32_t p) { return process_display_name(store, p); }

std::string track_label(const TraceStore& store, uint32_t track) { return track_display_name(store, track); }

std::vector<std::string> wrap_text(const std::string& text, float width, float size, size_t max_lines, bool bold) {
  if (max_lines <= 1 || text_width(text, size, bold) <= width) return {fit_text(text, width, size, bold)};
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at < text.size() && lines.size() + 1 < max_lines) {
    size_t space = text.find(' ', at);
    std::string word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    std::string longer = line.empty() ? word : line + " " + word;
    if (!line.empty() && text_width(longer, size, bold) > width) {  // the word starts the next line
      lines.push_back(fit_text(line, width, size, bold));
      line.clear();
      continue;
    }
    line = longer;
    at = space == std::string::npos ? text.size() : space + 1;
  }
  std::string rest = line.empty() ? text.substr(at) : at < text.size() ? line + " " + text.substr(at) : line;
  lines.push_back(fit_text(rest, width, size, bold));
  return lines;
}

std::string fit_text(const std::string& text, float width, float size, bool bold) {
  if (text_width(text, size, bold) <= width) return text;
  // Binary search on the prefix length (in bytes, then back to a UTF-8 boundary).
  size_t lo = 0, hi = text.size();
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    while (mid > 0 && mid < text.size() && (static_cast<unsigned char>(text[mid]) & 0xC0) == 0x80) --mid;
    if (mid <= lo) break;
    if (text_width(text.substr(0, mid) + "…", size, bold) <= width) lo = mid;
    else hi = mid - 1;
  }
  while (lo > 0 && lo < text.size() && (static_cast<unsigned char>(text[lo]) & 0xC0) == 0x80) --lo;
  return lo == 0 ? std::string() : text.substr(0, lo) + "…";
}

std::string fit_text_middle(const std::string& text, float width, float size, bool bold) {
  if (text_width(text, size, bold) <= width) return text;
  auto boundary = [&](size_t at) {  // back to the start of a UTF-8 character
    while (at > 0 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
    return at;
  };
  // The most characters kept, head and tail in equal parts (the tail a little longer: it is where
  // template variants differ), found by binary search on the count.
  std::string best;
  size_t lo = 0, hi = text.size();
  while (lo < hi) {
    size_t keep = (lo + hi + 1) / 2;
    size_t head = boundary(keep * 2 / 5), tail = boundary(text.size() - (keep - keep * 2 / 5));
    std::string shown = text.substr(0, head) + "…" + text.substr(std::max(tail, head));
    if (text_width(shown, size, bold) <= width) lo = keep, best = std::move(shown);
    else hi = keep - 1;
  }
  return best;
}

void emit_time_axis(Scene& out, const Style& s, double t0, double t1, float x0, float x1, float y_top, float y_axis,
                    const std::string& caption) {
  double ns_per_px = (t1 - t0) / std::max(1.f, x1 - x0);
  float label_w = text_width("000.000 ms", s.small) + s.small * 2;
  int64_t step = present::tick_step(ns_per_px * label_w);
  int64_t first = int64_t(std::ceil(t0 / double(step))) * step;
  out.line(Role::Axis, x0, y_axis, x1, y_axis, s.ink, s.outline_width * 1.5f);
  for (int64_t t = first; double(t) <= t1; t += step) {
    float x = x0 + float((double(t) - t0) / ns_per_px);
    out.line(Role::Decoration, x, y_top, x, y_axis, s.grid, s.outline_width);
    out.line(Role::Axis, x, y_axis, x, y_axis + s.small * 0.4f, s.ink, s.outline_width * 1.5f);
    out.text(Role::Axis, x, y_axis + s.small * 1.5f, present::format_tick(t, step), s.small, s.ink, Anchor::Center);
  }
  out.text(Role::Axis, (x0 + x1) / 2, y_axis + s.small * 2.9f, caption, s.small, s.muted, Anchor::Center);
}

std::string depth_note(int max_depth, size_t cut) {
  return "stacks cut below depth " + std::to_string(max_depth) + ": " + std::to_string(cut) + (cut == 1 ? " slice" : " slices") +
         " not drawn";
}

std::string fold_note(size_t folded) {
  return "deep stacks folded to " + std::to_string(present::kFoldedLevels) + " levels: " + std::to_string(folded) +
         (folded == 1 ? " slice" : " slices") + " not drawn (--max-depth N or --tracks draws them)";
}

struct TimelineBand::Impl {
  Impl(const TraceStore& store, const Style& style, const TimelineFigureOptions& options, KeyTable& keys)
      : layout(store, nullptr, style, options, &keys) {}
  Layout layout;
};

TimelineBand::TimelineBand(const TraceStore& store, const Style& style, const TimelineFigureOptions& options, KeyTable& keys)
    : impl_(std::make_unique<Impl>(store, style, options, keys)) {}
TimelineBand::~TimelineBand() = default;
bool TimelineBand::select(std::string& error) { return impl_->layout.select(error); }
float TimelineBand::label_width() const { return impl_->layout.label_width(); }
float TimelineBand::height() const { return impl_->layout.plot_height(); }
void TimelineBand::draw(Scene& scene, float x0, float x1, float y, size_t budget, TimelineFigureStats& stats) {
  impl_->layout.set_plot(x0, x1);
  impl_->layout.emit_rows_within(scene, y, budget, stats);
}

bool timeline_figure(const TraceStore& store, const analysis::IdleCauses* idle, const Style& style,
                     const TimelineFigureOptions& options, Scene& scene, TimelineFigureStats& stats, std::string& error) {
  Layout layout(store, idle, style, options);
  return layout.run(scene, stats, error);
}

}  // namespace sl::fig
