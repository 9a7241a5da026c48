#include "figures/diff_figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "figures/cairo_output.h"
#include "figures/legend.h"
#include "core/present/diff_palette.h"
#include "core/present/time_axis.h"

namespace sl::fig {
namespace {

// The GUI's run header bands: A in Okabe–Ito blue, B in orange, both faint; made opaque over the
// background so the gridlines drawn first stay under them.
const Color kBandA{0, 114, 178, 40}, kBandB{230, 159, 0, 50};

Color over(Color top, Color below) {
  auto ch = [&](uint8_t t, uint8_t b) { return uint8_t((t * top.a + b * (255 - top.a) + 127) / 255); };
  return {ch(top.r, below.r), ch(top.g, below.g), ch(top.b, below.b), 255};
}

std::string step_name(std::optional<int64_t> n) { return n ? "ProfilerStep#" + std::to_string(*n) : "whole trace"; }

std::string percent_change(TimeNs a, TimeNs b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * double(b - a) / double(std::max<TimeNs>(a, 1)));
  return buf;
}

// One run's band: its rows, with the header line, drawn where the figure says.
struct Run {
  const TraceStore* store = nullptr;
  TimeNs step_start = 0, step_dur = 0;
  std::string header;
  Color band;
  present::ChangeTints tints;
  TimelineFigureOptions options;
  std::unique_ptr<TimelineBand> rows;
};

class DiffLayout {
public:
  DiffLayout(const TraceStore& a, const TraceStore& b, const diff::TraceDiff& d, const Style& s, const DiffFigureOptions& o)
      : a_(a), b_(b), d_(d), s_(s), o_(o) {}
  bool run(Scene& scene, DiffFigureStats& stats, std::string& error);

private:
  bool prepare(Run& run, const TraceStore& store, bool is_b, std::string& error);
  float emit_run(Scene& scene, Run& run, float y, size_t budget, TimelineFigureStats& stats);
  float emit_bars(Scene& scene, float y, DiffFigureStats& stats);
  std::vector<std::string> bar_labels(const std::vector<const diff::AlignedOp*>& ops, const std::map<std::string, int>& uses,
                                      float width);

  const TraceStore &a_, &b_;
  const diff::TraceDiff& d_;
  const Style& s_;
  const DiffFigureOptions& o_;
  Run runs_[2];
  KeyTable keys_;
  TimeNs r0_ = 0, r1_ = 0;  // the window, relative to each step's start
  float x0_ = 0, x1_ = 0;
};

bool DiffLayout::prepare(Run& run, const TraceStore& store, bool is_b, std::string& error) {
  const diff::AlignedDiff& d = *d_.aligned;
  run.store = &store;
  run.step_start = is_b ? d.chosen.start_b : d.chosen.start_a;
  run.step_dur = is_b ? d.chosen.dur_b() : d.chosen.dur_a();
  run.header = std::string(is_b ? "B (test)" : "A (control)") + " · " + (is_b ? o_.name_b : o_.name_a);
  run.band = over(is_b ? kBandB : kBandA, s_.background);
  run.tints = present::ChangeTints(store, d, is_b);
  uint32_t main = diff::main_thread(store, is_b ? d.chosen.b : d.chosen.a);
  TimelineFigureOptions& t = run.options;
  t.start = run.step_start + r0_, t.end = run.step_start + r1_;
  t.tracks = o_.tracks;
  t.max_depth = o_.max_depth;
  t.max_elements = o_.max_elements;
  t.keep_track = [&store, main](uint32_t track) { return track == main || store.tracks[track].kind == TrackKind::GpuStream; };
  const present::ChangeTints* tints = &run.tints;
  t.slice_color = [&store, tints](SliceRef r) -> std::optional<Color> { return Color::of(tints->of(store, r)); };
  run.rows = std::make_unique<TimelineBand>(store, s_, t, keys_);
  std::string why;
  if (!run.rows->select(why)) {
    error = std::string(is_b ? "run B" : "run A") + ": " + why;
    return false;
  }
  return true;
}

float DiffLayout::emit_run(Scene& scene, Run& run, float y, size_t budget, TimelineFigureStats& stats) {
  scene.rect(Role::Decoration, s_.pad, y, s_.width - 2 * s_.pad, s_.lane, run.band);
  scene.text(Role::Label, s_.pad + s_.small * 0.4f, y + s_.lane * 0.5f + s_.font * 0.36f,
             fit_text(run.header, s_.width - 2 * s_.pad - s_.small, s_.font, true), s_.font, s_.ink, Anchor::Left, true);
  y += s_.lane * 1.25f;
  float top = y, height = run.rows->height();
  run.rows->draw(scene, x0_, x1_, y, budget, stats);
  // Where this run's step ends, when the window reaches it: the shorter run's tail is the next step.
  double ns_per_px = double(r1_ - r0_) / std::max(1.f, x1_ - x0_);
  TimeNs end = run.step_dur;
  if (end > r0_ && end < r1_) {
    float x = x0_ + float(double(end - r0_) / ns_per_px);
    scene.line(Role::Decoration, x, top - s_.small * 0.2f, x, top + height, s_.ink, s_.outline_width * 2.5f);
    // Left of the line, unless that runs into the row labels (a step much shorter than the window).
    bool left = x - s_.small * 0.3f - text_width("step end", s_.small) > x0_;
    scene.text(Role::Label, left ? x - s_.small * 0.3f : x + s_.small * 0.3f, top + s_.small * 0.9f, "step end", s_.small, s_.ink,
               left ? Anchor::Right : Anchor::Left);
  }
  return top + height;
}

// One label per bar, each different from the others: the name when it fits (cut in the middle
// otherwise, or a key whose table entry is the name). A name on several bars gets a key whose
// entry is its call path, where the paths differ; where they do not (the same call made again),
// or the key table is full, the bars are numbered "#1", "#2"... So no two bars and no two key
// entries read alike.
std::vector<std::string> DiffLayout::bar_labels(const std::vector<const diff::AlignedOp*>& ops, const std::map<std::string, int>& uses,
                                                float width) {
  float room = s_.width - 2 * s_.pad - s_.small * 3;
  std::map<std::pair<std::string, std::string>, int> same_path;  // (name, shown path) → bars
  std::vector<std::string> paths;
  for (const diff::AlignedOp* op : ops) {
    paths.push_back(uses.at(op->name) > 1 ? fit_path(op->path, room, s_.small) : std::string());
    ++same_path[{op->name, paths.back()}];
  }
  std::map<std::string, int> numbered;
  std::vector<std::string> labels;
  for (size_t n = 0; n < ops.size(); ++n) {
    const std::string& name = ops[n]->name;
    std::string suffix;
    if (uses.at(name) > 1) {
      std::string key = same_path[{name, paths[n]}] > 1 ? "" : keys_.key(paths[n]);
      suffix = key.empty() ? " #" + std::to_string(++numbered[name]) : " (" + key + ")";
    } else if (text_width(name, s_.small) > width) {
      if (std::string key = keys_.key(name); !key.empty()) {
        labels.push_back(key);
        continue;
      }
    }
    labels.push_back(fit_text_middle(name, width - text_width(suffix, s_.small), s_.small) + suffix);
  }
  return labels;
}

// Inclusive-time change of the operators that changed most, largest increase first, on a signed
// axis around zero.
float DiffLayout::emit_bars(Scene& scene, float y, DiffFigureStats& stats) {
  const diff::AlignedDiff& d = *d_.aligned;
  // The same ranking as `sightline diff`'s inclusive_regressions / inclusive_improvements.
  diff::InclusiveChanges changes = diff::largest_inclusive_changes(a_, d, o_.top);
  std::vector<const diff::AlignedOp*> ops;
  for (uint32_t i : changes.increases) ops.push_back(&d.ops[i]);
  for (auto it = changes.decreases.rbegin(); it != changes.decreases.rend(); ++it) ops.push_back(&d.ops[*it]);
  std::string heading = "Largest changes in inclusive time, B − A (top " + std::to_string(o_.top) + " each way)";
  for (const std::string& line : wrap_text(heading, s_.width - 2 * s_.pad, s_.font, 2, true)) {  // never cut: two lines
    scene.text(Role::Label, s_.pad, y, line, s_.font, s_.ink, Anchor::Left, true);
    y += s_.font * 1.25f;
  }
  y -= s_.font * 1.25f;
  y += s_.small * 0.8f;
  if (ops.empty()) {
    scene.text(Role::Label, s_.pad, y + s_.small * 1.2f, "no matched operator changed its time", s_.small, s_.muted);
    return y + s_.small * 2.4f;
  }
  // Names: the operator's name, keyed when it does not fit; repeated names get a key whose table
  // entry is the call path that tells them apart.
  std::map<std::string, int> uses;
  for (auto* op : ops) ++uses[op->name];
  float name_w = (s_.width - 2 * s_.pad) * 0.34f, bx0 = s_.pad + name_w + s_.small * 0.4f, bx1 = s_.width - s_.pad;
  float value_w = text_width("+000.000 ms", s_.small) + s_.small * 0.6f;
  double max_abs = 1;
  for (auto* op : ops) max_abs = std::max(max_abs, std::abs(double(op->delta())));
  bool any_negative = ops.back()->delta() < 0, any_positive = ops.front()->delta() > 0;
  // Zero sits where both sides fit: at the left edge when nothing improved, the right when nothing regressed.
  float left = any_negative ? value_w : 0, right = any_positive ? value_w : 0;
  float span = bx1 - bx0 - left - right;
  float neg_share = any_negative && any_positive ? 0.5f : any_negative ? 1.f : 0.f;
  float zero = bx0 + left + span * neg_share;
  double px_per = span * (any_negative && any_positive ? 0.5 : 1.0) / max_abs;
  float row_h = s_.lane * 1.05f, plot_top = y;
  std::vector<std::string> labels = bar_labels(ops, uses, name_w - s_.small * 0.4f);
  for (size_t n = 0; n < ops.size(); ++n) {
    const diff::AlignedOp* op = ops[n];
    const std::string& label = labels[n];
    float mid = y + row_h * 0.5f + s_.small * 0.36f;
    scene.text(Role::Label, bx0 - s_.small * 0.4f, mid, label, s_.small, s_.ink, Anchor::Right);
    TimeNs delta = op->delta();
    float w = std::max(0.5f, float(std::abs(double(delta)) * px_per));
    float x = delta >= 0 ? zero : zero - w;
    scene.rect(Role::Bar, x, y + row_h * 0.14f, w, row_h * 0.72f, Color::of(present::change_rgb(op->dur_a, op->dur_b)), s_.outline,
               s_.outline_width);
    if (delta >= 0) scene.text(Role::Label, zero + w + s_.small * 0.3f, mid, signed_ms(delta), s_.small, s_.muted);
    else scene.text(Role::Label, zero - w - s_.small * 0.3f, mid, signed_ms(delta), s_.small, s_.muted, Anchor::Right);
    ++stats.bars;
    y += row_h;
  }
  scene.line(Role::Axis, zero, plot_top, zero, y, s_.ink, s_.outline_width * 1.5f);
  scene.text(Role::Axis, zero, y + s_.small * 1.3f, "inclusive time (children included), B − A", s_.small, s_.muted,
             zero < (bx0 + bx1) / 2 ? Anchor::Left : Anchor::Right);
  return y + s_.small * 2.2f;
}

bool DiffLayout::run(Scene& scene, DiffFigureStats& stats, std::string& error) {
  if (!d_.aligned) {
    error = "the diff figure needs the aligned diff (Sightline mode)";
    return false;
  }
  const diff::AlignedDiff& d = *d_.aligned;
  TimeNs longest = std::max(d.chosen.dur_a(), d.chosen.dur_b());
  r0_ = o_.end > o_.start ? o_.start : 0;
  r1_ = o_.end > o_.start ? o_.end : std::max<TimeNs>(longest, 1);
  if (!prepare(runs_[0], a_, false, error) || !prepare(runs_[1], b_, true, error)) return false;
  x0_ = s_.pad + std::max(runs_[0].rows->label_width(), runs_[1].rows->label_width());
  x1_ = s_.width - s_.pad - text_width("0000 µs", s_.small) * 0.55f;

  scene.width = s_.width;
  scene.background = s_.background;
  // Title "A vs B"; two lines ("A vs" / "B") when the names are too long for one.
  std::string title = o_.title.empty() ? o_.name_a + " vs " + o_.name_b : o_.title;
  float y = s_.pad + s_.title, room = s_.width - 2 * s_.pad;
  if (o_.title.empty() && text_width(title, s_.title, true) > room) {
    scene.text(Role::Title, s_.pad, y, fit_text(o_.name_a + " vs", room, s_.title, true), s_.title, s_.ink, Anchor::Left, true);
    y += s_.title * 1.25f;
    title = o_.name_b;
  }
  scene.text(Role::Title, s_.pad, y, fit_text(title, room, s_.title, true), s_.title, s_.ink, Anchor::Left, true);
  // One-line summary: which steps, how long each, how much of the call tree matched.
  y += s_.small * 1.6f;
  // The headline is the steady-state mean (warm-up step excluded, run_summary.h), not the one
  // step drawn: a first step can be slower than the run it stands for.
  char line[256];
  const diff::RunSummary* sa = d_.summary_a ? &*d_.summary_a : nullptr;
  const diff::RunSummary* sb = d_.summary_b ? &*d_.summary_b : nullptr;
  std::string drawn = "drawn: " + (d.chosen.a == d.chosen.b ? step_name(d.chosen.a) : step_name(d.chosen.a) + " vs " + step_name(d.chosen.b));
  if (sa && sb && sa->steady_step_time && sb->steady_step_time) {
    // Two lines: the headline, then which steps it is over and which one is drawn.
    std::snprintf(line, sizeof line, "mean step %.3f ms → %.3f ms (%+.1f%%)", *sa->steady_step_time / 1e6,
                  *sb->steady_step_time / 1e6, diff::steady_step_change_pct(*sa, *sb).value_or(0));
    scene.text(Role::Label, s_.pad, y, fit_text(line, room, s_.small), s_.small, s_.ink);
    y += s_.small * 1.3f;
    char which[160];
    std::snprintf(which, sizeof which, "steady state: steps %s vs %s · %.0f%% matched",
                  diff::iteration_list_text(sa->steady_iterations).c_str(), diff::iteration_list_text(sb->steady_iterations).c_str(),
                  d.matched_fraction * 100);
    std::string rest = std::string(which) + " · " + drawn + (d_.gpu_warning.empty() ? "" : " · different GPUs!");
    for (const std::string& text : wrap_text(rest, room, s_.small, 2)) {  // wrapped: what is drawn is never cut off
      scene.text(Role::Label, s_.pad, y, text, s_.small, s_.muted);
      y += s_.small * 1.3f;
    }
    y -= s_.small * 0.4f;
  } else {  // no steps to average: the one pair drawn
    std::snprintf(line, sizeof line, "step %.3f ms → %.3f ms (%s) · %.0f%% matched", double(d.chosen.dur_a()) / 1e6,
                  double(d.chosen.dur_b()) / 1e6, percent_change(d.chosen.dur_a(), d.chosen.dur_b()).c_str(), d.matched_fraction * 100);
    std::string steps = drawn + (d_.gpu_warning.empty() ? "" : " · different GPUs!");
    std::string summary = steps + " · " + line;
    if (text_width(summary, s_.small) > room) {  // narrow figures: the steps on a line of their own
      scene.text(Role::Label, s_.pad, y, fit_text(steps, room, s_.small), s_.small, s_.muted);
      y += s_.small * 1.3f;
      summary = line;
    }
    scene.text(Role::Label, s_.pad, y, fit_text(summary, room, s_.small), s_.small, s_.muted);
    y += s_.small * 0.9f;
  }

  size_t reserve = scene.items.size() + 200 + 6 * 2 * o_.top;
  size_t budget = o_.max_elements > reserve ? (o_.max_elements - reserve) / 2 : 0;
  // The axis (and its gridlines) first, under the runs: their heights are known before drawing.
  float rows_top = y;
  float axis_y = y + 2 * s_.lane * 1.25f + runs_[0].rows->height() + s_.small * 0.6f + runs_[1].rows->height() + s_.small * 0.3f;
  emit_time_axis(scene, s_, double(r0_), double(r1_), x0_, x1_, rows_top, axis_y, "time since the compared step's start");
  y = emit_run(scene, runs_[0], y, budget, stats.a) + s_.small * 0.6f;
  emit_run(scene, runs_[1], y, budget, stats.b);
  y = axis_y + s_.small * 4.2f;
  size_t cut = stats.a.depth_cut + stats.b.depth_cut;
  if (cut) {
    scene.text(Role::Label, s_.pad, y, depth_note(o_.max_depth, cut) + " (both runs)", s_.small, s_.muted);
    y += s_.small * 1.7f;
  }
  Legend legend(s_);
  for (int c = 0; c < present::kChangeCount; ++c)
    legend.add(Color::of(present::change_swatch(present::Change(c))), present::change_label(present::Change(c)));
  if (stats.a.folded + stats.b.folded) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "runs < %.0f px folded", double(std::max(stats.a.fold_px, stats.b.fold_px)));
    legend.add(s_.folded, buf);
  }
  y = legend.emit(scene, s_.pad, y, s_.width - 2 * s_.pad) + s_.small * 1.2f;
  y = emit_bars(scene, y, stats);
  y = emit_key_table(scene, s_, keys_.entries(), s_.pad, y, s_.width - 2 * s_.pad);
  scene.height = y + s_.pad;
  stats.elements = scene.items.size();
  return true;
}

}  // namespace

std::string fit_path(const std::string& path, float width, float size) {
  static const std::string sep = " > ", ellipsis = "… > ";
  std::string shown = path;
  size_t from = 0;
  while (text_width(shown, size) > width) {
    size_t next = path.find(sep, from);
    if (next == std::string::npos) return fit_text_middle(shown, width, size);
    from = next + sep.size();
    shown = ellipsis + path.substr(from);
  }
  return shown;
}

std::string signed_ms(TimeNs delta) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%.3f ms", delta < 0 ? "−" : "+", std::abs(double(delta)) / 1e6);
  return buf;
}

bool diff_figure(const TraceStore& a, const TraceStore& b, const diff::TraceDiff& d, const Style& style,
                 const DiffFigureOptions& options, Scene& scene, DiffFigureStats& stats, std::string& error) {
  stats = {};
  DiffLayout layout(a, b, d, style, options);
  return layout.run(scene, stats, error);
}

}  // namespace sl::fig
