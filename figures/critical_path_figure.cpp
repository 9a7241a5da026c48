#include "figures/critical_path_figure.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/names/short_names.h"
#include "core/present/critical_path_palette.h"
#include "core/present/time_axis.h"
#include "figures/cairo_output.h"
#include "figures/legend.h"

namespace sl::fig {

using namespace sl::analysis;

namespace {

Color kind_color(BoundBy b) { return Color::of(present::bound_by_rgb(int(b))); }

std::string pct_text(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, pct >= 9.95 ? "%.0f%%" : "%.1f%%", pct);
  return buf;
}

class PathLayout {
public:
  PathLayout(const TraceStore& store, const EventTable& table, const CriticalPath& path, const IdleCauses* idle,
             const Style& s, const CriticalPathFigureOptions& o)
      : store_(store), table_(table), path_(path), idle_(idle), s_(s), o_(o) {}

  bool run(Scene& scene, CriticalPathFigureStats& stats, std::string& error);

private:
  struct PathRow {
    uint32_t track = 0, lanes = 1;
    float y = 0;
  };
  struct Placed {
    SliceRef ref;
    size_t row = 0;
    uint32_t lane = 0;
  };
  void place_slices();
  float rows_height() const;
  void emit_rows(Scene& scene, float y, CriticalPathFigureStats& stats);
  void emit_links(Scene& scene, CriticalPathFigureStats& stats, float min_px);
  float lane_mid(SliceRef s) const;
  float emit_strip(Scene& scene, float y, CriticalPathFigureStats& stats);
  float emit_shares(Scene& scene, float y);
  float emit_ops(Scene& scene, float y, float x, float width, CriticalPathFigureStats& stats);
  float emit_gaps(Scene& scene, float y, float x, float width, CriticalPathFigureStats& stats);
  float x_of(TimeNs t) const { return x0_ + float(double(t - t0_) / double(t1_ - t0_)) * (x1_ - x0_); }
  float lane_h() const { return s_.lane; }
  float row_gap() const { return s_.small * 0.5f; }

  const TraceStore& store_;
  const EventTable& table_;
  const CriticalPath& path_;
  const IdleCauses* idle_;
  const Style& s_;
  const CriticalPathFigureOptions& o_;
  TimeNs t0_ = 0, t1_ = 1;
  float x0_ = 0, x1_ = 0;
  std::vector<PathRow> rows_;
  std::vector<Placed> placed_;  // sorted by ref
  std::map<SliceRef, BoundBy> kind_;  // a slice's path time: what bounds most of it
};

// Rows: CPU threads (in track order), then GPU streams, so launch arrows point down. Within a row
// the path's slices nest among themselves only (a lane per nesting level of path slices).
void PathLayout::place_slices() {
  std::vector<SliceRef> slices = critical_path_slices(table_, path_);
  for (const PathContributor& c : path_contributors(table_, path_)) kind_[c.slice] = c.bound_by;
  std::vector<uint32_t> tracks;
  for (SliceRef r : slices)
    if (tracks.empty() || tracks.back() != r.track) tracks.push_back(r.track);
  std::stable_sort(tracks.begin(), tracks.end(),
                   [&](uint32_t a, uint32_t b) { return store_.tracks[a].kind != TrackKind::GpuStream && store_.tracks[b].kind == TrackKind::GpuStream; });
  std::map<uint32_t, size_t> row_of;
  for (uint32_t t : tracks) row_of[t] = rows_.size(), rows_.push_back({t, 1, 0});
  std::vector<TimeNs> open_ends;  // the enclosing path slices still open, innermost last
  uint32_t track = kNone;
  for (SliceRef r : slices) {  // by (track, index): by start within a track
    if (r.track != track) open_ends.clear(), track = r.track;
    while (!open_ends.empty() && open_ends.back() <= store_.start(r)) open_ends.pop_back();
    uint32_t lane = uint32_t(open_ends.size());
    open_ends.push_back(store_.end(r));
    PathRow& row = rows_[row_of[r.track]];
    row.lanes = std::max(row.lanes, lane + 1);
    placed_.push_back({r, row_of[r.track], lane});
  }
}

float PathLayout::rows_height() const {
  float h = 0;
  for (const PathRow& r : rows_) h += float(r.lanes) * lane_h() + row_gap();
  return h;
}

float PathLayout::lane_mid(SliceRef s) const {
  auto it = std::lower_bound(placed_.begin(), placed_.end(), s, [](const Placed& p, SliceRef r) { return p.ref < r; });
  if (it == placed_.end() || it->ref != s) return NAN;
  return rows_[it->row].y + (float(it->lane) + 0.5f) * lane_h();
}

// Row labels, then the path's slices in their kind's colour (slices with no time of their own,
// e.g. a launch call whose start only passes the path on, in the dependency grey), named where
// the name fits. Over the budget, the narrowest slices are left out (and counted).
void PathLayout::emit_rows(Scene& scene, float y, CriticalPathFigureStats& stats) {
  for (PathRow& r : rows_) {
    r.y = y;
    scene.text(Role::Label, x0_ - s_.small * 0.4f, y + lane_h() * 0.5f + s_.small * 0.36f,
               fit_text(track_label(store_, r.track), x0_ - s_.pad - s_.small * 0.5f, s_.small), s_.small, s_.ink, Anchor::Right);
    scene.line(Role::Decoration, x0_, y + float(r.lanes) * lane_h() + row_gap() * 0.5f, x1_, y + float(r.lanes) * lane_h() + row_gap() * 0.5f,
               s_.grid, s_.outline_width);
    y += float(r.lanes) * lane_h() + row_gap();
  }
  stats.rows = rows_.size();
  size_t budget = o_.max_elements / 3;
  float min_px = 0;
  if (placed_.size() > budget) {
    std::vector<float> widths;
    for (const Placed& p : placed_) widths.push_back(x_of(store_.end(p.ref)) - x_of(store_.start(p.ref)));
    std::nth_element(widths.begin(), widths.begin() + long(placed_.size() - budget), widths.end());
    min_px = widths[placed_.size() - budget];
  }
  auto names = store_short_names(store_);
  for (const Placed& p : placed_) {
    float a = x_of(store_.start(p.ref)), b = x_of(store_.end(p.ref));
    if (b - a < min_px) {
      ++stats.skipped;
      continue;
    }
    auto kind = kind_.find(p.ref);
    present::Rgb rgb = present::bound_by_rgb(int(kind == kind_.end() ? BoundBy::Dependency : kind->second));
    float top = rows_[p.row].y + float(p.lane) * lane_h();
    // Narrow slices get no outline: on hundreds of them the strokes would turn the row black.
    bool outlined = b - a > 3 * s_.outline_width + 1;
    scene.rect(Role::Slice, a, top + 0.5f, std::max(b - a, 0.8f), lane_h() - 1, Color::of(rgb), outlined ? s_.outline : Color{0, 0, 0, 0},
               outlined ? s_.outline_width : 0);
    ++stats.slices;
    if (b - a > s_.small * 3) {
      std::string label = fit_text((*names)(store_.name(p.ref)), b - a - s_.small * 0.4f, s_.small);
      if (label.size() > 3)
        scene.text(Role::SliceLabel, a + s_.small * 0.2f, top + lane_h() * 0.5f + s_.small * 0.36f, label, s_.small,
                   present::prefers_dark_text(rgb) ? Color{25, 25, 25, 255} : Color{255, 255, 255, 255});
    }
  }
  emit_links(scene, stats, min_px);
}

// Links between slices as straight arrows from node to node, in their kind's colour.
void PathLayout::emit_links(Scene& scene, CriticalPathFigureStats& stats, float min_px) {
  float head = s_.small * 0.55f, width = std::max(0.8f, s_.outline_width * 2.2f);
  for (const CriticalPathLink& l : critical_path_links(table_, path_)) {
    float ya = lane_mid(l.from), yb = lane_mid(l.to);
    float xa = x_of(l.from_ts), xb = x_of(l.to_ts);
    float dx = xb - xa, dy = yb - ya, len = std::sqrt(dx * dx + dy * dy);
    if (std::isnan(ya) || std::isnan(yb) || len < std::max(2.f, min_px)) {
      ++stats.skipped;
      continue;
    }
    Color c = kind_color(l.bound_by);
    scene.line(Role::Decoration, xa, ya, xb, yb, c, width);
    float ux = dx / len, uy = dy / len;  // arrowhead: two strokes back from the tip at ±28°
    for (float side : {-1.f, 1.f}) {
      float cx = -ux * 0.883f - side * uy * 0.469f, cy = -uy * 0.883f + side * ux * 0.469f;
      scene.line(Role::Decoration, xb, yb, xb + cx * head, yb + cy * head, c, width);
    }
    ++stats.links;
  }
}

// The path as one row: each edge with time, from its first node's time to its second's, in its
// colour (zero-time dependency edges leave their span in the grid colour: a wait).
// Edges under half a pixel merge into their neighbour of the same kind (the element budget).
float PathLayout::emit_strip(Scene& scene, float y, CriticalPathFigureStats& stats) {
  float h = s_.lane * 0.9f;
  scene.text(Role::Label, x0_ - s_.small * 0.4f, y + h * 0.5f + s_.small * 0.36f, "critical path", s_.small, s_.ink, Anchor::Right, true);
  scene.rect(Role::Decoration, x0_, y, x1_ - x0_, h, s_.grid);
  auto node_ts = [&](uint32_t row, bool start) { return start ? table_.rows[row].ts : table_.rows[row].end(); };
  for (const CriticalPathEdge& e : path_.path) {
    if (e.weight <= 0) continue;
    float a = x_of(node_ts(e.from_row, e.from_start)), b = x_of(node_ts(e.to_row, e.to_start));
    if (!scene.items.empty() && stats.strip_segments > 0) {
      Item& last = scene.items.back();
      if (last.fill == kind_color(e.bound_by) && last.x + last.w >= a - 0.5f) {
        last.w = std::max(last.w, b - last.x);
        continue;
      }
    }
    scene.rect(Role::Bar, a, y, std::max(b - a, 0.6f), h, kind_color(e.bound_by));
    ++stats.strip_segments;
  }
  return y + h;
}

// One 100% bar of the shares, the percentages on it where they fit, and the legend under it.
float PathLayout::emit_shares(Scene& scene, float y) {
  scene.text(Role::Label, s_.pad, y, "Where the path's time goes", s_.font, s_.ink, Anchor::Left, true);
  y += s_.small * 0.7f;
  float x = s_.pad, width = s_.width - 2 * s_.pad, h = s_.lane * 1.1f;
  Legend legend(s_);
  for (const CriticalPathShare& share : path_.summary) {
    if (share.sum <= 0) continue;
    float w = float(share.pct / 100.0) * width;
    Color c = kind_color(share.bound_by);
    scene.rect(Role::Bar, x, y, w, h, c, s_.background, s_.outline_width);
    std::string label = pct_text(share.pct);
    if (text_width(label, s_.small, true) + s_.small * 0.6f < w)
      scene.text(Role::Label, x + w / 2, y + h * 0.5f + s_.small * 0.36f, label,
                 s_.small, present::prefers_dark_text(present::bound_by_rgb(int(share.bound_by))) ? Color{25, 25, 25, 255} : Color{255, 255, 255, 255},
                 Anchor::Center, true);
    x += w;
    legend.add(c, std::string(present::bound_by_label(int(share.bound_by))) + " " + pct_text(share.pct) + " (" +
                      present::format_duration(double(share.sum)) + ")");
  }
  return legend.emit(scene, s_.pad, y + h + s_.small * 1.1f, width);
}

// The ops on the path by time: a bar each, the name left of it, the time and share right.
float PathLayout::emit_ops(Scene& scene, float y, float x, float width, CriticalPathFigureStats& stats) {
  std::vector<PathOp> ops = path_ops(table_, path_contributors(table_, path_));
  if (ops.size() > o_.top) ops.resize(o_.top);
  scene.text(Role::Label, x, y, fit_text("What would shorten it: the ops on the path, by time", width, s_.font, true), s_.font, s_.ink,
             Anchor::Left, true);
  y += s_.small * 0.6f;
  auto names = store_short_names(store_);
  float row_h = s_.small * 1.45f, name_w = width * 0.56f, value_w = text_width("00.00 ms 00%", s_.small);
  float bar_x = x + name_w + s_.small * 0.4f, bar_w = std::max(10.f, width - name_w - value_w - s_.small * 0.8f);
  TimeNs max = ops.empty() ? 1 : std::max<TimeNs>(1, ops.front().time);
  for (const PathOp& op : ops) {
    float base = y + row_h * 0.5f + s_.small * 0.36f;
    scene.text(Role::Label, x + name_w, base, fit_text_middle((*names)(op.name), name_w, s_.small), s_.small, s_.ink, Anchor::Right);
    float w = float(double(op.time) / double(max)) * bar_w;
    auto kind = kind_.find(op.longest);
    Color bar = kind_color(kind == kind_.end() ? BoundBy::Dependency : kind->second);
    scene.rect(Role::Bar, bar_x, y + row_h * 0.15f, std::max(w, 0.6f), row_h * 0.7f, bar);
    std::string value = present::format_duration(double(op.time)) + " " +
                        pct_text(path_.length > 0 ? 100.0 * double(op.time) / double(path_.length) : 0);
    scene.text(Role::Label, bar_x + w + s_.small * 0.3f, base, value, s_.small, s_.muted);
    y += row_h;
    ++stats.ops;
  }
  if (ops.empty()) scene.text(Role::Label, x, y + s_.small * 1.2f, "no op time on the path", s_.small, s_.muted), y += row_h;
  return y;
}

// The GPU waits on the path, longest first: length, what it waited for, the idle cause.
float PathLayout::emit_gaps(Scene& scene, float y, float x, float width, CriticalPathFigureStats& stats) {
  std::vector<PathGpuGap> gaps = idle_ ? path_gpu_gaps(table_, path_, *idle_) : std::vector<PathGpuGap>{};
  scene.text(Role::Label, x, y, fit_text("... and the GPU's waits on the path, with their idle cause", width, s_.font, true), s_.font,
             s_.ink, Anchor::Left, true);
  y += s_.small * 0.6f;
  float row_h = s_.small * 1.45f, len_w = text_width("000.0 µs", s_.small), sw = s_.small * 0.8f;
  auto names = store_short_names(store_);
  if (gaps.empty()) {
    scene.text(Role::Label, x, y + row_h * 0.5f + s_.small * 0.36f, "the GPU never waits on this path", s_.small, s_.muted);
    return y + row_h;
  }
  size_t shown = std::min(gaps.size(), o_.top);
  for (size_t i = 0; i < shown; ++i) {
    const PathGpuGap& g = gaps[i];
    float base = y + row_h * 0.5f + s_.small * 0.36f;
    scene.text(Role::Label, x + len_w, base, present::format_duration(double(g.length())), s_.small, s_.ink, Anchor::Right);
    Color c = g.cause >= 0 ? Color::of(present::idle_cause_rgb(g.cause)) : s_.grid;
    scene.rect(Role::Legend, x + len_w + s_.small * 0.5f, base - sw * 0.9f, sw, sw, c, s_.outline, s_.outline_width);
    std::string cause = g.cause >= 0 ? present::idle_cause_label(g.cause) : "no idle gap (stream busy)";
    std::string prefix = cause + " · before ";
    float tx = x + len_w + s_.small * 0.5f + sw + s_.small * 0.4f;
    float room = x + width - tx - text_width(prefix, s_.small);
    scene.text(Role::Label, tx, base, prefix + fit_text_middle((*names)(store_.name(g.kernel)), room, s_.small), s_.small, s_.ink);
    y += row_h;
    ++stats.gaps;
  }
  if (gaps.size() > shown) {
    TimeNs rest = 0;
    for (size_t i = shown; i < gaps.size(); ++i) rest += gaps[i].length();
    scene.text(Role::Label, x, y + row_h * 0.5f + s_.small * 0.36f,
               fit_text("+ " + std::to_string(gaps.size() - shown) + " shorter waits, " + present::format_duration(double(rest)), width, s_.small),
               s_.small, s_.muted);
    y += row_h;
  }
  return y;
}

bool PathLayout::run(Scene& scene, CriticalPathFigureStats& stats, std::string& error) {
  if (!path_.valid) {
    error = path_.note.empty() ? "no critical path" : path_.note;
    return false;
  }
  t0_ = path_.start, t1_ = std::max(path_.end, path_.start + 1);
  place_slices();
  scene.width = s_.width;
  scene.background = s_.background;
  std::vector<SliceRef> instances = annotation_instances(table_, path_.annotation);
  std::string instance = path_.annotation.empty()                   ? std::string("the whole trace")
                         : size_t(path_.instance) < instances.size() ? std::string(store_.name(instances[size_t(path_.instance)]))
                                                                     : path_.annotation + " " + std::to_string(path_.instance);
  std::string title = "Critical path of " + instance + ": " + present::format_duration(double(path_.length));
  float y = s_.pad + s_.title;
  scene.text(Role::Title, s_.pad, y, fit_text(title, s_.width - 2 * s_.pad, s_.title, true), s_.title, s_.ink, Anchor::Left, true);
  y += s_.title * 0.5f;
  std::string sub = (o_.title.empty() ? "" : o_.title + " · ") + "the path's slices by what bounds their time";
  scene.text(Role::Label, s_.pad, y + s_.small, fit_text(sub, s_.width - 2 * s_.pad, s_.small), s_.small, s_.muted);
  y += s_.small * 2;

  float label_w = text_width("critical path", s_.small, true) + s_.small;
  for (const PathRow& r : rows_) label_w = std::max(label_w, std::min(s_.width * 0.32f, text_width(track_label(store_, r.track), s_.small) + s_.small));
  x0_ = s_.pad + label_w;
  x1_ = s_.width - s_.pad - text_width("0000 µs", s_.small) * 0.55f;
  float rows_top = y, strip_y = rows_top + rows_height() + s_.small * 0.3f;
  float axis_y = strip_y + s_.lane * 0.9f + s_.small * 0.3f;
  emit_time_axis(scene, s_, double(t0_), double(t1_), x0_, x1_, rows_top, axis_y, "time since the trace start");
  emit_rows(scene, rows_top, stats);
  emit_strip(scene, strip_y, stats);
  y = axis_y + s_.small * 4.4f;
  y = emit_shares(scene, y) + s_.small * 1.6f;
  float width = s_.width - 2 * s_.pad;
  y = emit_ops(scene, y, s_.pad, width, stats) + s_.small * 1.4f;
  y = emit_gaps(scene, y, s_.pad, width, stats);
  scene.height = y + s_.pad;
  return true;
}

}  // namespace

bool critical_path_figure(const TraceStore& store, const EventTable& table, const CriticalPath& path, const IdleCauses* idle,
                          const Style& style, const CriticalPathFigureOptions& options, Scene& scene,
                          CriticalPathFigureStats& stats, std::string& error) {
  PathLayout layout(store, table, path, idle, style, options);
  return layout.run(scene, stats, error);
}

}  // namespace sl::fig
