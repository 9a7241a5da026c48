#include "figures/charts.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/names/short_names.h"
#include "core/present/palette.h"
#include "core/present/time_axis.h"
#include "figures/cairo_output.h"
#include "figures/legend.h"
#include "figures/timeline_figure.h"

namespace sl::fig {
namespace {

float emit_title(Scene& scene, const Style& s, const std::string& title) {
  scene.width = s.width;
  scene.background = s.background;
  float y = s.pad + s.title;
  // A long title wraps (at most two lines) rather than losing the figure's subject at the end.
  std::vector<std::string> lines = wrap_text(title, s.width - 2 * s.pad, s.title, 2, true);
  for (size_t i = 0; i < lines.size(); ++i)
    scene.text(Role::Title, s.pad, y + float(i) * s.title * 1.2f, lines[i], s.title, s.ink, Anchor::Left, true);
  return y + float(lines.size() - 1) * s.title * 1.2f + s.title * 0.9f;
}

// A linear axis under [x0, x1] for values 0..max: ticks at 1/2/5 steps, labels from `format`.
template <class Format>
void value_axis(Scene& scene, const Style& s, float x0, float x1, float y_top, float y, double max, Format format) {
  double px_per = (x1 - x0) / std::max(max, 1e-9);
  float label_w = text_width("000.0 ms", s.small) + s.small;
  int64_t step = present::tick_step(std::max(1.0, label_w / px_per));
  scene.line(Role::Axis, x0, y, x1, y, s.ink, s.outline_width * 1.5f);
  for (int64_t v = 0; double(v) <= max * 1.0001; v += step) {
    float x = x0 + float(double(v) * px_per);
    scene.line(Role::Decoration, x, y_top, x, y, s.grid, s.outline_width);
    scene.line(Role::Axis, x, y, x, y + s.small * 0.4f, s.ink, s.outline_width * 1.5f);
    scene.text(Role::Axis, x, y + s.small * 1.5f, format(v, step), s.small, s.ink, Anchor::Center);
  }
}

present::KernelKind kind_of(analysis::KernelType t) {
  switch (t) {
    case analysis::KernelType::Computation: return present::KernelKind::Computation;
    case analysis::KernelType::Communication: return present::KernelKind::Communication;
    case analysis::KernelType::Memory: return present::KernelKind::Memory;
    case analysis::KernelType::Sync: return present::KernelKind::Sync;
    case analysis::KernelType::Other: return present::KernelKind::Other;
  }
  return present::KernelKind::Other;
}

std::string percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", share * 100);
  return buf;
}

}  // namespace

// The quantity drawn is the launch delay (analyses.md §4: launch end → kernel start, the queue
// time, HTA's definition and the one its outlier cutoff applies to), the same one the GUI's
// latency view opens with, so a figure exported from the view and `render --view histogram`
// show the same thing.
bool histogram_figure(const analysis::LaunchStats& stats, const Style& s, const std::string& title, Scene& scene,
                      std::string& error) {
  const analysis::Histogram* h = nullptr;
  for (const auto& candidate : stats.histograms)
    if (candidate.quantity == "launch_delay") h = &candidate;
  if (!h || stats.pairs.empty() || h->edges.size() < 2) {
    error = "no kernel launches paired with GPU activity: nothing to plot";
    return false;
  }
  float y = emit_title(scene, s, title + (title.empty() ? "" : " · ") + "launch delay (" +
                                     std::to_string(stats.pairs.size()) + " launches)");
  size_t max_count = 1;
  for (const auto& bin : h->pairs) max_count = std::max(max_count, bin.size());
  float count_w = text_width(std::to_string(max_count), s.small) + s.small;
  float x0 = s.pad + s.small * 1.6f + count_w, x1 = s.width - s.pad * 2;
  float plot_top = y + s.small * 2.2f, plot_h = s.width * 0.4f, base = plot_top + plot_h;
  double lo = std::log10(h->edges.front()), hi = std::log10(h->edges.back());
  auto x_of = [&](double v) { return x0 + float((std::log10(std::max(v, h->edges.front())) - lo) / (hi - lo)) * (x1 - x0); };
  // Count axis (left), with horizontal grid.
  int64_t cstep = present::tick_step(double(max_count) / 4);
  max_count = size_t((int64_t(max_count) + cstep - 1) / cstep * cstep);  // the top gridline is a tick
  for (int64_t c = 0; c <= int64_t(max_count); c += cstep) {
    float yy = base - float(double(c) / double(max_count)) * plot_h;
    scene.line(Role::Decoration, x0, yy, x1, yy, s.grid, s.outline_width);
    scene.text(Role::Axis, x0 - s.small * 0.4f, yy + s.small * 0.35f, std::to_string(c), s.small, s.ink, Anchor::Right);
  }
  scene.text(Role::Axis, s.pad, plot_top - s.small * 0.3f, "launches", s.small, s.muted);
  Color bar = Color::of(present::kernel_kind_rgb(present::KernelKind::Computation));
  for (size_t b = 0; b + 1 < h->edges.size(); ++b) {
    if (h->pairs[b].empty()) continue;
    float a = x_of(h->edges[b]), e = x_of(h->edges[b + 1]);
    float top = base - float(double(h->pairs[b].size()) / double(max_count)) * plot_h;
    scene.rect(Role::Bar, a, top, e - a, base - top, bar, s.outline, s.outline_width);
  }
  // Log axis: decades labelled, 2× and 5× ticked.
  scene.line(Role::Axis, x0, base, x1, base, s.ink, s.outline_width * 1.5f);
  float last_label_end = -1e9f;
  for (double decade = std::pow(10.0, std::floor(lo)); decade <= h->edges.back() * 1.0001; decade *= 10)
    for (double m : {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0}) {
      double v = decade * m;
      if (v < h->edges.front() * 0.9999 || v > h->edges.back() * 1.0001) continue;
      float x = x_of(v);
      bool major = m == 1 || (hi - lo < 2.5 && (m == 2 || m == 5)) || hi - lo < 0.8;
      scene.line(Role::Axis, x, base, x, base + s.small * (major ? 0.5f : 0.3f), s.ink, s.outline_width * 1.5f);
      std::string label = present::format_duration(v);
      float half = text_width(label, s.small) / 2;
      if (major && x - half > last_label_end + s.small * 0.6f) {  // never two labels on top of each other
        scene.text(Role::Axis, x, base + s.small * 1.6f, label, s.small, s.ink, Anchor::Center);
        last_label_end = x + half;
      }
    }
  // Median, p90 and p99: each label on the first row down from the plot's top where it overlaps
  // no other, so close quantiles stay readable.
  std::vector<double> delays;
  uint64_t zeros = 0;
  for (const auto& p : stats.pairs) delays.push_back(double(p.delay)), zeros += p.delay == 0;
  std::sort(delays.begin(), delays.end());
  Color accent = Color::of(present::kernel_kind_rgb(present::KernelKind::Sync));
  std::vector<float> row_end;
  for (auto [q, name] : {std::pair{0.5, "median "}, std::pair{0.9, "p90 "}, std::pair{0.99, "p99 "}}) {
    double v = analysis::quantile_sorted(delays, q);
    float x = x_of(v);
    scene.line(Role::Decoration, x, plot_top, x, base, accent, s.outline_width * (q == 0.5 ? 3 : 1.5f));
    std::string label = name + present::format_duration(v);
    float w = text_width(label, s.small), lx = std::min(x + s.small * 0.3f, x1 - w);
    size_t row = 0;
    while (row < row_end.size() && lx < row_end[row] + s.small * 0.5f) ++row;
    if (row == row_end.size()) row_end.push_back(-1e9f);
    row_end[row] = lx + w;
    scene.text(Role::Label, lx, plot_top + s.small * (1.0f + 1.25f * float(row)), label, s.small, accent);
  }
  scene.text(Role::Axis, (x0 + x1) / 2, base + s.small * 3.0f,
             fit_text("launch delay: launch call end → kernel start (log scale)", x1 - x0, s.small), s.small, s.muted, Anchor::Center);
  float bottom = base + s.small * 3.6f;
  if (zeros) {  // a log axis has no 0: say where those launches are
    scene.text(Role::Axis, (x0 + x1) / 2, base + s.small * 4.4f,
               fit_text(std::to_string(zeros) + " launches with no delay, counted in the first bar", x1 - x0, s.small), s.small,
               s.muted, Anchor::Center);
    bottom += s.small * 1.4f;
  }
  scene.height = bottom + s.pad;
  return true;
}

bool breakdown_figure(const analysis::TemporalBreakdown& t, const analysis::KernelBreakdown& k, const Style& s,
                      const std::string& title, Scene& scene, std::string& error) {
  if (!t.valid || k.per_kernel_full.empty()) {
    error = "no GPU activity: nothing to break down";
    return false;
  }
  float y = emit_title(scene, s, title + (title.empty() ? "" : " · ") + "GPU time breakdown");
  float x0 = s.pad, x1 = s.width - s.pad;
  // 1. The GPU's span: compute, non-compute, idle.
  y += s.small * 1.2f;
  scene.text(Role::Label, x0, y, "span " + present::format_duration(double(t.span)) + " (iterations, or the trace)", s.font,
             s.ink, Anchor::Left, true);
  y += s.small * 0.6f;
  struct Part {
    TimeNs time;
    Color color;
    const char* name;
  } parts[] = {{t.compute, Color::of(present::kernel_kind_rgb(present::KernelKind::Computation)), "compute"},
               {t.non_compute, Color::of(present::kernel_kind_rgb(present::KernelKind::Memory)), "non-compute"},
               {t.idle, Color{190, 190, 190, 255}, "idle"}};
  float bar_h = s.lane * 1.2f, x = x0;
  Legend span_legend(s);
  for (const Part& p : parts) {
    double share = t.span > 0 ? double(p.time) / double(t.span) : 0;
    float w = float(share) * (x1 - x0);
    if (w > 0) scene.rect(Role::Bar, x, y, w, bar_h, p.color, s.outline, s.outline_width);
    std::string text = percent(share);
    if (w > text_width(text, s.small) + s.small * 0.6f)
      scene.text(Role::Label, x + w / 2, y + bar_h / 2 + s.small * 0.36f, text, s.small,
                 present::prefers_dark_text({p.color.r, p.color.g, p.color.b}) ? Color{20, 20, 20, 255} : Color{250, 250, 250, 255},
                 Anchor::Center);
    span_legend.add(p.color, std::string(p.name) + " " + present::format_duration(double(p.time)) + " (" + text + ")");
    x += w;
  }
  y = span_legend.emit(scene, x0, y + bar_h + s.small * 1.4f, x1 - x0);

  // 2. The kernels that take the most GPU time, coloured by type.
  std::vector<const analysis::KernelStats*> top;
  for (const auto& ks : k.per_kernel_full) top.push_back(&ks);
  std::sort(top.begin(), top.end(), [](auto* a, auto* b) { return a->sum > b->sum || (a->sum == b->sum && a->name < b->name); });
  if (top.size() > 10) top.resize(10);
  y += s.small * 1.4f;
  scene.text(Role::Label, x0, y, "Top kernels by total GPU time", s.font, s.ink, Anchor::Left, true);
  y += s.small * 0.8f;
  // Value labels ("262 ms ×120") measured, so the longest still ends inside the canvas.
  std::vector<std::string> values;
  float value_w = 0;
  for (const auto* ks : top) {
    values.push_back(present::format_duration(ks->sum) + " ×" + std::to_string(ks->count));
    value_w = std::max(value_w, text_width(values.back(), s.small) + s.small * 0.5f);
  }
  float name_w = (x1 - x0) * 0.42f, bx0 = x0 + name_w;
  double max_sum = top.front()->sum;
  bool seen[5] = {};
  float row_h = s.lane * 1.05f, plot_top = y;
  // Short names distinct among every kernel of the breakdown (variants keep their argument), cut
  // in the middle so the argument that tells variants apart stays; names that still read alike
  // get keys (K1…) whose table under the legend holds the short name.
  std::vector<std::string_view> all_names;
  for (const auto& ks : k.per_kernel_full) all_names.push_back(ks.name);
  ShortNames names(all_names);
  std::vector<std::string> shown;
  for (const auto* ks : top) shown.push_back(names(ks->name));
  KeyTable keys;
  std::vector<std::string> labels = distinct_labels(shown, name_w - s.small * 0.4f, s.small, keys);
  for (size_t i = 0; i < top.size(); ++i) {
    const analysis::KernelStats* ks = top[i];
    present::KernelKind kind = kind_of(ks->type);
    seen[int(ks->type)] = true;
    Color c = Color::of(present::kernel_kind_rgb(kind));
    float w = float(ks->sum / max_sum) * (x1 - value_w - s.small * 0.3f - bx0);
    scene.text(Role::Label, bx0 - s.small * 0.4f, y + row_h * 0.5f + s.small * 0.36f, labels[i], s.small, s.ink, Anchor::Right);
    scene.rect(Role::Bar, bx0, y + row_h * 0.12f, std::max(w, 0.5f), row_h * 0.76f, c, s.outline, s.outline_width);
    scene.text(Role::Label, bx0 + w + s.small * 0.3f, y + row_h * 0.5f + s.small * 0.36f, values[i], s.small, s.muted);
    y += row_h;
  }
  scene.line(Role::Axis, bx0, plot_top, bx0, y, s.ink, s.outline_width * 1.5f);
  Legend legend(s);
  for (int i = 0; i < 5; ++i)
    if (seen[i]) legend.add(Color::of(present::kernel_kind_rgb(kind_of(analysis::KernelType(i)))), present::kernel_kind_name(kind_of(analysis::KernelType(i))));
  y = legend.emit(scene, x0, y + s.small * 1.6f, x1 - x0);
  y = emit_key_table(scene, s, keys.entries(), x0, y, x1 - x0);
  scene.height = y + s.pad;
  return true;
}

bool idle_figure(const analysis::IdleCauses& causes, const Style& s, const std::string& title, Scene& scene,
                 std::string& error) {
  // Per stream: idle by cause, in the order the analysis lists streams.
  std::vector<int64_t> streams;
  std::map<int64_t, std::array<TimeNs, analysis::kIdleCauseCount>> idle;
  for (const auto& row : causes.rows) {
    if (!idle.count(row.stream)) streams.push_back(row.stream), idle[row.stream] = {};
    idle[row.stream][int(row.cause)] += row.idle;
  }
  if (streams.empty()) {
    error = "no idle time on any GPU stream: nothing to plot";
    return false;
  }
  float y = emit_title(scene, s, title + (title.empty() ? "" : " · ") + "GPU idle time by cause");
  double max_total = 1;
  for (int64_t st : streams) {
    TimeNs total = 0;
    for (TimeNs v : idle[st]) total += v;
    max_total = std::max(max_total, double(total));
  }
  float label_w = text_width("stream 0000", s.small) + s.small, x0 = s.pad + label_w, x1 = s.width - s.pad * 2;
  float value_w = text_width("000.0 ms", s.small) + s.small * 0.5f;
  float row_h = s.lane * 1.1f, plot_top = y + s.small * 0.5f;
  y = plot_top;
  bool seen[analysis::kIdleCauseCount] = {};
  double px_per = (x1 - value_w - x0) / max_total;
  float plot_bottom = plot_top + float(streams.size()) * row_h;
  value_axis(scene, s, x0, float(x0 + max_total * px_per), plot_top, plot_bottom, max_total,
             [](int64_t v, int64_t step) { return present::format_tick(v, step); });
  for (int64_t st : streams) {
    scene.text(Role::Label, x0 - s.small * 0.4f, y + row_h * 0.5f + s.small * 0.36f, "stream " + std::to_string(st), s.small, s.ink,
               Anchor::Right);
    float x = x0;
    TimeNs total = 0;
    for (int c = 0; c < analysis::kIdleCauseCount; ++c) {
      TimeNs v = idle[st][c];
      if (v <= 0) continue;
      seen[c] = true;
      float w = float(double(v) * px_per);
      scene.rect(Role::Bar, x, y + row_h * 0.12f, std::max(w, 0.5f), row_h * 0.76f, Color::of(present::idle_cause_rgb(c)), s.outline,
                 s.outline_width);
      x += w;
      total += v;
    }
    scene.text(Role::Label, x + s.small * 0.3f, y + row_h * 0.5f + s.small * 0.36f, present::format_duration(double(total)), s.small,
               s.muted);
    y += row_h;
  }
  scene.text(Role::Axis, (x0 + x1) / 2, y + s.small * 2.9f, "idle time", s.small, s.muted, Anchor::Center);
  Legend legend(s);
  for (int c = 0; c < analysis::kIdleCauseCount; ++c)
    if (seen[c]) legend.add(Color::of(present::idle_cause_rgb(c)), present::idle_cause_label(c));
  y = legend.emit(scene, s.pad, y + s.small * 4.6f, s.width - 2 * s.pad);
  scene.height = y + s.pad;
  return true;
}

}  // namespace sl::fig
