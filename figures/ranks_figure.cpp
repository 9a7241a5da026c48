#include "figures/ranks_figure.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "figures/cairo_output.h"
#include "figures/legend.h"
#include "figures/timeline_figure.h"
#include "core/present/palette.h"
#include "core/present/time_axis.h"

namespace sl::fig {
namespace {

// The GPU-busy bar: Okabe–Ito blue, readable over every idle-cause colour.
constexpr present::Rgb kBusy{0, 114, 178};
constexpr Color kLast{213, 30, 30, 255};

// Columns of equal (quantised busy, cause) drawn as one rectangle each: the element count is
// bounded by the figure width, never by the number of kernels.
size_t emit_profile(Scene& scene, const analysis::RankBins& bins, float x0, float col_w, float y, float h) {
  size_t runs = 0, n = bins.busy.size();
  auto level = [&](size_t i) { return int(std::lround(bins.busy[i] * 16)); };
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && level(j) == level(i) && bins.cause[j] == bins.cause[i]) ++j;
    float x = x0 + float(i) * col_w, w = float(j - i) * col_w;
    if (bins.cause[i] >= 0 && level(i) < 16)
      scene.rect(Role::IdleGap, x, y, w, h, Color::of(present::idle_cause_rgb(bins.cause[i]), 150));
    if (level(i) > 0) {
      float bh = h * float(level(i)) / 16.f;
      scene.rect(Role::Slice, x, y + h - bh, w, bh, Color::of(kBusy));
    }
    ++runs;
    i = j;
  }
  return runs;
}

const analysis::CollectiveInstance* worst_skew(const analysis::CollectiveAnalysis& a, TimeNs t0, TimeNs t1) {
  const analysis::CollectiveInstance* worst = nullptr;
  for (const auto& in : a.instances) {
    if (in.arrivals.empty() || in.arrivals.front().arrival < t0 || in.arrivals.front().arrival > t1) continue;
    if (!worst || in.skew > worst->skew) worst = &in;
  }
  return worst && worst->skew > 0 ? worst : nullptr;
}

}  // namespace

float begin_job_figure(const Style& s, const std::string& title, const std::string& what, Scene& scene) {
  scene.width = s.width;
  scene.background = s.background;
  float y = s.pad + s.title;
  std::string line = (title.empty() ? "" : title + " · ") + what;
  scene.text(Role::Title, s.pad, y, fit_text(line, s.width - 2 * s.pad, s.title, true), s.title, s.ink, Anchor::Left, true);
  return y;
}

bool ranks_figure(const Job& job, const analysis::JobOverview& ov, const Style& s, const RanksFigureOptions& o, Scene& scene,
                  RanksFigureStats& stats, std::string& error) {
  if (ov.ranks.empty()) {
    error = "no rank of the job loaded: nothing to plot";
    return false;
  }
  TimeNs t0 = o.start, t1 = o.end > 0 ? o.end : ov.span;
  if (t1 <= t0) {
    error = "the range holds no time of the job (it ends at " + present::format_duration(double(ov.span)) + ")";
    return false;
  }
  float y = begin_job_figure(s, o.title, "ranks", scene) + s.title * 0.9f + s.small;

  size_t n = job.ranks.size();
  // Rows shrink with the rank count so that a figure stays about one page tall.
  float row_h = std::clamp(s.lane * 18.f / float(std::max<size_t>(n, 1)), 2.f, s.lane * 1.2f);
  float gap = row_h >= 8 ? row_h * 0.15f : 0;
  float label_w = text_width("rank 0000", s.small) + s.small * 0.5f;
  float bars_w = std::round(s.width * 0.2f);
  float x0 = s.pad + label_w, x1 = s.width - s.pad - bars_w - s.small;
  float bars_x0 = x1 + s.small * 1.5f, bars_x1 = s.width - s.pad - text_width("000.0 ms", s.small);
  int columns = std::max(1, int((x1 - x0) / 2));  // 2 px columns
  float col_w = (x1 - x0) / float(columns);
  stats.columns = size_t(columns);

  TimeNs most_delay = 1;
  for (const auto& r : ov.collectives.stragglers) most_delay = std::max(most_delay, r.delay_caused);
  // Right-aligned to the figure's edge, named as the stragglers table names it (delay_caused).
  scene.text(Role::Label, s.width - s.pad, y - s.small * 0.3f, fit_text("delay caused", s.width - s.pad - bars_x0, s.small),
             s.small, s.muted, Anchor::Right);
  float plot_top = y;
  const analysis::CollectiveInstance* marked = worst_skew(ov.collectives, t0, t1);
  bool seen[analysis::kIdleCauseCount] = {};
  std::unordered_map<int64_t, const analysis::StragglerRow*> straggler_by_rank;  // rows × stragglers otherwise
  for (const auto& row : ov.collectives.stragglers) straggler_by_rank.emplace(row.rank, &row);
  for (const JobRank& jr : job.ranks) {
    bool label_rows = row_h >= s.small * 0.8f || n <= 32;
    if (label_rows && row_h >= s.small * 0.6f)
      scene.text(Role::Label, x0 - s.small * 0.4f, y + row_h * 0.5f + s.small * 0.36f, "rank " + std::to_string(jr.rank), s.small,
                 s.ink, Anchor::Right);
    auto it = std::find_if(ov.ranks.begin(), ov.ranks.end(), [&](const auto& r) { return r.rank == jr.rank; });
    if (it == ov.ranks.end()) {  // failed (a fleet's summarised ranks have rows though not loaded)
      ++stats.failed;
      scene.text(Role::Label, x0 + s.small * 0.3f, y + row_h * 0.5f + s.small * 0.36f,
                 fit_text("failed to load: " + jr.error.message, x1 - x0, s.small), s.small, kLast);
      y += row_h + gap;
      continue;
    }
    ++stats.ranks;
    analysis::RankBins bins = analysis::bin_rank(*it, t0, t1, columns);
    for (int8_t c : bins.cause)
      if (c >= 0) seen[c] = true;
    stats.runs += emit_profile(scene, bins, x0, col_w, y, row_h);
    if (const analysis::StragglerRow* sr = straggler_by_rank[jr.rank]) {
      float w = float(double(sr->delay_caused) / double(most_delay)) * (bars_x1 - bars_x0);
      if (sr->delay_caused > 0) scene.rect(Role::Bar, bars_x0, y, std::max(w, 0.5f), row_h, s.muted);
      if (row_h >= s.small * 0.6f)
        scene.text(Role::Label, bars_x0 + w + s.small * 0.3f, y + row_h * 0.5f + s.small * 0.36f,
                   present::format_duration(double(sr->delay_caused)), s.small, s.muted);
    }
    y += row_h + gap;
  }
  float plot_bottom = y - gap;
  // The worst-skew collective in range: each rank's arrival, the last rank's in red.
  double px_per_ns = double(x1 - x0) / double(t1 - t0);
  if (marked) {
    for (const auto& a : marked->arrivals) {
      size_t row = size_t(std::find_if(job.ranks.begin(), job.ranks.end(), [&](const JobRank& r) { return r.rank == a.rank; }) -
                          job.ranks.begin());
      float x = x0 + float(double(a.arrival - t0) * px_per_ns), ry = plot_top + float(row) * (row_h + gap);
      scene.line(Role::Decoration, x, ry, x, ry + row_h, a.rank == marked->last_rank ? kLast : s.ink, s.outline_width * 3);
    }
  }
  // Time axis (job clock).
  float label_px = text_width("000.0 ms", s.small) + s.small;
  int64_t step = present::tick_step(label_px / px_per_ns);
  scene.line(Role::Axis, x0, plot_bottom + 2, x1, plot_bottom + 2, s.ink, s.outline_width * 1.5f);
  for (int64_t v = (t0 + step - 1) / step * step; v <= t1; v += step) {
    float x = x0 + float(double(v - t0) * px_per_ns);
    scene.line(Role::Axis, x, plot_bottom + 2, x, plot_bottom + 2 + s.small * 0.4f, s.ink, s.outline_width * 1.5f);
    scene.text(Role::Axis, x, plot_bottom + 2 + s.small * 1.5f, present::format_tick(v, step), s.small, s.ink, Anchor::Center);
  }
  y = plot_bottom + s.small * 3.2f;
  std::string clock = ov.collectives.aligned ? "job time (clocks aligned on collectives)" : "job time";
  scene.text(Role::Axis, (x0 + x1) / 2, y, fit_text(clock, x1 - x0, s.small), s.small, s.muted, Anchor::Center);
  if (marked) {
    y += s.small * 1.4f;
    std::string mark = "marked: worst skew, " + marked->name + " #" + std::to_string(marked->instance) + ", " +
                       present::format_duration(double(marked->skew)) + ", last rank " + std::to_string(marked->last_rank) + " (red)";
    scene.text(Role::Axis, (x0 + x1) / 2, y, fit_text(mark, s.width - 2 * s.pad, s.small), s.small, s.muted, Anchor::Center);
  }
  Legend legend(s);
  legend.add(Color::of(kBusy), "GPU busy (height)");
  for (int c = 0; c < analysis::kIdleCauseCount; ++c)
    if (seen[c]) legend.add(Color::of(present::idle_cause_rgb(c), 150), std::string("idle: ") + present::idle_cause_label(c));
  y = legend.emit(scene, s.pad, y + s.small * 1.2f, s.width - 2 * s.pad);
  scene.height = y + s.pad;
  return true;
}

}  // namespace sl::fig
