#include "figures/heatmap_figure.h"

#include <algorithm>
#include <cmath>

#include "core/present/time_axis.h"
#include "figures/cairo_output.h"
#include "figures/ranks_figure.h"
#include "figures/timeline_figure.h"

namespace sl::fig {
namespace {

constexpr int kLevels = present::kHeatLevels;
constexpr float kMaxPlotHeight = 360;  // px: past this, ranks fold into bands

int level_of(const present::HeatmapMatrix& m, TimeNs v) { return present::heatmap_level(m, v); }
Color level_color(int level) { return Color::of(present::heatmap_level_rgb(level)); }

// "rank 5"; a band of consecutive ranks "ranks 0–63"; a band of a sorted order (its ranks
// anywhere in the job) "64 ranks".
std::string band_label(const present::HeatmapMatrix& m, const present::HeatmapBands& h, size_t band) {
  const present::Band& b = h.rows[band];
  int64_t first = m.ranks[h.order[b.first]], last = m.ranks[h.order[b.last - 1]];
  if (b.last - b.first == 1) return "rank " + std::to_string(first);
  bool consecutive = true;
  for (size_t i = b.first + 1; i < b.last && consecutive; ++i) consecutive = m.ranks[h.order[i]] == m.ranks[h.order[i - 1]] + 1;
  if (!consecutive) return std::to_string(b.last - b.first) + " ranks";
  return "ranks " + std::to_string(first) + "–" + std::to_string(last);
}

// The colour scale in [x, x1): kLevels swatches from min to max (narrower when the width is
// short), their values at both ends, and the swatch of an absent cell. Returns the y below it.
float emit_scale(Scene& scene, const Style& s, const present::HeatmapMatrix& m, float x, float x1, float y, const std::string& absent) {
  float h = s.small * 0.9f, gap = s.small * 0.4f;
  std::string lo = present::format_duration(double(m.min_value)), hi = present::format_duration(double(m.max_value));
  if (lo == hi && m.max_value > m.min_value) {  // ends that read alike: as many digits as tell them apart
    int64_t step = 1;
    while (step * 10 <= m.max_value - m.min_value) step *= 10;
    lo = present::format_tick(m.min_value, step), hi = present::format_tick(m.max_value, step);
  }
  float fixed = text_width(lo, s.small) + text_width(hi, s.small) + text_width(absent, s.small) + h + 4 * gap + s.small * 1.5f;
  float w = std::clamp((x1 - x - fixed) / float(kLevels), 1.f, s.small * 0.6f);
  scene.text(Role::Legend, x, y, lo, s.small, s.ink);
  float sx = x + text_width(lo, s.small) + gap;
  for (int l = 0; l < kLevels; ++l) scene.rect(Role::Legend, sx + float(l) * w, y - h * 0.9f, w, h, level_color(l));
  sx += float(kLevels) * w + gap;
  scene.text(Role::Legend, sx, y, hi, s.small, s.ink);
  sx += text_width(hi, s.small) + s.small * 1.5f;
  scene.rect(Role::Legend, sx, y - h * 0.9f, h, h, level_color(-1), s.outline, s.outline_width);
  scene.text(Role::Legend, sx + h + gap, y, absent, s.small, s.ink);
  return y + s.small * 1.6f;
}

struct Panel {
  std::string heading, columns_name, absent, none;  // none: said when the matrix has no column
};

// One heatmap under `y`: heading, rows, column labels, scale. Returns the y below it.
float emit_panel(Scene& scene, const Style& s, const analysis::JobOverview& ov, const present::HeatmapMatrix& m,
                 const Panel& p, present::RowOrder order, float y, HeatmapFigureStats& stats) {
  scene.text(Role::Label, s.pad, y, fit_text(p.heading, s.width - 2 * s.pad, s.font, true), s.font, s.ink, Anchor::Left, true);
  y += s.small * 0.8f;
  if (m.columns == 0) {
    y += s.small * 1.2f;
    scene.text(Role::Label, s.pad, y, fit_text(p.none, s.width - 2 * s.pad, s.small), s.small, s.muted);
    return y + s.small * 1.8f;
  }
  size_t n = m.rows();
  float row_h = std::clamp(s.lane * 12.f / float(n), 1.f, s.lane);
  size_t max_rows = size_t(std::max(1.f, std::floor(kMaxPlotHeight / row_h)));
  // The widest label a row can get ("ranks 1000–1023" when rows fold), so that columns fold to
  // whole pixels of the plot: a worst cell never falls between two pixels.
  std::string top_rank = std::to_string(m.ranks.back());
  std::string widest_label = n > max_rows ? "ranks " + top_rank + "–" + top_rank : "rank " + top_rank;
  float x0 = std::round(s.pad + text_width(widest_label, s.small) + s.small * 0.5f), x1 = s.width - s.pad;
  present::HeatmapBands h = present::bin_heatmap(m, present::order_rows(m, order), max_rows, size_t(std::max(1.f, x1 - x0)));
  std::vector<std::string> row_labels;
  for (size_t br = 0; br < h.rows.size(); ++br) row_labels.push_back(band_label(m, h, br));
  if (h.rows.size() < n) row_h = std::min(kMaxPlotHeight / float(h.rows.size()), s.lane);
  float col_w = (x1 - x0) / float(h.columns.size());
  stats.row_bands = std::max(stats.row_bands, h.rows.size());
  // Row labels wherever they do not overlap the previous one.
  float next_label_y = -1;
  for (size_t br = 0; br < h.rows.size(); ++br) {
    float ry = y + float(br) * row_h;
    float baseline = ry + row_h * 0.5f + s.small * 0.36f;
    if (baseline - s.small * 1.05f >= next_label_y || br == 0) {
      scene.text(Role::Label, x0 - s.small * 0.4f, baseline, row_labels[br], s.small, s.ink, Anchor::Right);
      next_label_y = baseline;
    }
    // Edges on whole pixels: cells of a pixel or less would otherwise blend with the background.
    float top = std::round(ry), bottom = std::round(ry + row_h);
    auto edge = [&](size_t bc) { return std::round(x0 + float(bc) * col_w); };
    for (size_t bc = 0; bc < h.columns.size();) {
      int level = level_of(m, h.at(br, bc));
      size_t end = bc + 1;
      while (end < h.columns.size() && level_of(m, h.at(br, end)) == level) ++end;
      scene.rect(Role::Slice, edge(bc), top, edge(end) - edge(bc), bottom - top, level_color(level));
      ++stats.cells;
      bc = end;
    }
  }
  y += float(h.rows.size()) * row_h;
  // Column labels: every k-th, so that the widest fits its stride.
  float widest = 0;
  std::vector<std::string> labels;
  for (const present::Band& b : h.columns) {
    labels.push_back(present::heatmap_column_label(m, ov, b.first));
    widest = std::max(widest, text_width(labels.back(), s.small));
  }
  size_t stride = size_t(std::ceil((widest + s.small) / col_w));
  for (size_t bc = 0; bc < h.columns.size(); bc += std::max<size_t>(stride, 1))
    scene.text(Role::Axis, x0 + (float(bc) + 0.5f) * col_w, y + s.small * 1.3f, labels[bc], s.small, s.ink, Anchor::Center);
  y += s.small * 2.6f;
  std::string under = p.columns_name + "; rows by " + present::row_order_name(order) + (h.columns.size() < m.columns ? " (" + std::to_string(m.columns) + ", the worst of each band)" : "");
  if (h.rows.size() < n) under += "; " + std::to_string(n) + " ranks in " + std::to_string(h.rows.size()) + " bands (worst cell shown)";
  scene.text(Role::Axis, (x0 + x1) / 2, y, fit_text(under, x1 - x0, s.small), s.small, s.muted, Anchor::Center);
  y += s.small * 1.8f;
  return emit_scale(scene, s, m, s.pad, x1, y, p.absent) + s.small;
}

Panel panel_of(present::HeatmapKind kind) {
  switch (kind) {
    case present::HeatmapKind::StepTime:
      return {"Iteration time per rank and step", "ProfilerStep", "no such step", "no rank has ProfilerStep#N steps"};
    case present::HeatmapKind::CollectiveWait:
      return {"Wait in collectives per rank and instance", "collective instances, by first arrival", "not in it",
              "no collective was matched across the ranks"};
    case present::HeatmapKind::StepWaits:
      return {"Wait in collectives per rank and step", "ProfilerStep (each collective in the step holding its call)", "no such step",
              "no rank has ProfilerStep#N step starts (a fleet summary older than format 2)"};
  }
  return {};
}

}  // namespace

bool heatmap_figure(const analysis::JobOverview& ov, const Style& s, const HeatmapFigureOptions& o, Scene& scene,
                    HeatmapFigureStats& stats, std::string& error) {
  if (ov.ranks.empty()) {
    error = "no rank of the job loaded: nothing to plot";
    return false;
  }
  float y = begin_job_figure(s, o.title, "rank heatmaps", scene) + s.title * 0.9f + s.font;
  bool first = true;
  for (present::HeatmapKind kind : o.kinds) {
    present::HeatmapMatrix m = present::heatmap_of(kind, ov, o.node_of_rank);
    stats.ranks = m.rows();
    if (kind == present::HeatmapKind::CollectiveWait) stats.collectives = m.columns;
    else stats.steps = std::max(stats.steps, m.columns);
    if (!first) y += s.font;
    first = false;
    y = emit_panel(scene, s, ov, m, panel_of(kind), o.order, y, stats);
  }
  scene.height = y + s.pad;
  return true;
}

}  // namespace sl::fig
