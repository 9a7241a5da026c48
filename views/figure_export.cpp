#include "views/figure_export.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <tuple>

#include "figures/cairo_output.h"
#include "figures/charts.h"
#include "figures/critical_path_figure.h"
#include "figures/diff_figure.h"
#include "figures/memory_figure.h"
#include "figures/roofline_figure.h"

namespace sl::views {
namespace {

namespace fs = std::filesystem;

bool fail(ExportResult& r, std::string message) {
  r.error = std::move(message);
  return false;
}

bool check_request(const ExportRequest& q, fig::Format& format, ExportResult& r) {
  if (q.path.empty()) return fail(r, "no file name given");
  if (!fig::format_from_path(q.path, format))
    return fail(r, "'" + q.path + "': the file name must end in .svg, .pdf or .png");
  if (q.width != 0 && (q.width < 200 || q.width > 20000)) return fail(r, "the width must be 200 to 20000 px");
  if (!(q.scale >= 0.25 && q.scale <= 8)) return fail(r, "the PNG scale must be 0.25 to 8");
  return true;
}

// The timeline figure of the visible rows over [start, end], with the screen's idle overlay.
bool timeline_scene(const ExportSources& src, const fig::Style& style, TimeNs start, TimeNs end, fig::Scene& scene,
                    ExportResult& r) {
  if (end <= start) return fail(r, "the range is empty");
  fig::TimelineFigureOptions o;
  o.start = start, o.end = end, o.title = r.request.title;
  o.rows = src.timeline.visible_tracks();
  o.folded_track = [&](uint32_t t) { return src.timeline.folded(t); };
  if (o.rows.empty()) return fail(r, "no rows are shown (all hidden or collapsed)");
  r.start = start, r.end = end, r.rows = o.rows;
  const analysis::IdleCauses* idle = nullptr;
  if (src.idle_overlay && src.model && src.model->report.causes) idle = &*src.model->report.causes;
  return fig::timeline_figure(src.store, idle, style, o, scene, r.timeline, r.error);
}

// As `render A B --view diff`, over the part of the compared iteration that A's timeline shows.
bool diff_scene(const ExportSources& src, const fig::Style& style, fig::Scene& scene, ExportResult& r) {
  if (!src.diff) return fail(r, "a diff figure needs a diff tab (File > Compare with...)");
  const DiffSources& d = *src.diff;
  if (!d.diff.aligned) return fail(r, "the diff has no aligned iteration to draw");
  fig::DiffFigureOptions o;
  std::tie(o.start, o.end) = diff_window(*d.diff.aligned, d.view_start_a, d.view_end_a);
  o.name_a = fig::trace_title(d.path_a), o.name_b = fig::trace_title(d.path_b);
  // The dialog's default title is A's file name; a diff's default is "A vs B" (empty here).
  o.title = r.request.title == o.name_a ? std::string() : r.request.title;
  fig::DiffFigureStats stats;
  if (!fig::diff_figure(d.a, d.b, d.diff, style, o, scene, stats, r.error)) return false;
  r.start = o.start, r.end = o.end;
  r.timeline = stats.a;
  return true;
}

// The Critical path view's iteration, or the default one when the view has not computed any.
bool critical_path_scene(const ExportSources& src, const fig::Style& style, fig::Scene& scene, ExportResult& r) {
  if (!src.model) return fail(r, "the analyses are not computed for this trace");
  const analysis::Report& report = src.model->report;
  analysis::CriticalPath computed;
  if (!src.critical_path) computed = analysis::critical_path(report.table);
  const analysis::CriticalPath& path = src.critical_path ? *src.critical_path : computed;
  fig::CriticalPathFigureOptions o;
  o.title = r.request.title;
  fig::CriticalPathFigureStats stats;
  const analysis::IdleCauses* idle = report.causes ? &*report.causes : nullptr;
  if (!fig::critical_path_figure(src.store, report.table, path, idle, style, o, scene, stats, r.error)) return false;
  r.start = path.start, r.end = path.end;
  r.timeline.tracks = stats.rows, r.timeline.slices = stats.slices;
  return true;
}

bool build_scene(const ExportSources& src, const fig::Style& style, fig::Scene& scene, ExportResult& r) {
  const analysis::Report* report = src.model ? &src.model->report : nullptr;
  const std::string& title = r.request.title;
  switch (r.request.what) {
    case ExportWhat::Screen: {
      auto [a, b] = visible_trace_range(src.timeline.view_start(), src.timeline.view_end(), src.store.end_ns);
      return timeline_scene(src, style, a, b, scene, r);
    }
    case ExportWhat::Selection: {
      auto [a, b] = src.timeline.range_selection();
      if (b <= a) return fail(r, "no range is selected (Shift-drag on the timeline, or drag on the ruler)");
      return timeline_scene(src, style, a, b, scene, r);
    }
    case ExportWhat::Latency:
      if (!report || !report->launches) return fail(r, "the launch statistics are not computed for this trace");
      return fig::histogram_figure(*report->launches, style, title, scene, r.error);
    case ExportWhat::Breakdown:
      if (!report || !report->temporal || !report->kernels) return fail(r, "the breakdowns are not computed for this trace");
      return fig::breakdown_figure(*report->temporal, *report->kernels, style, title, scene, r.error);
    case ExportWhat::Idle:
      if (!report || !report->causes) return fail(r, "the idle causes are not computed for this trace");
      return fig::idle_figure(*report->causes, style, title, scene, r.error);
    case ExportWhat::CriticalPath: return critical_path_scene(src, style, scene, r);
    case ExportWhat::Diff: return diff_scene(src, style, scene, r);
    case ExportWhat::Memory: {
      if (!report || !report->memory_analysis || report->memory_analysis->empty()) return fail(r, "this trace has no memory events");
      fig::MemoryFigureStats stats;
      return fig::memory_figure(src.store, *report->memory_analysis, style, title, scene, stats, r.error);
    }
    case ExportWhat::Roofline: {
      if (!report || !report->cupti) return fail(r, "the CUPTI counters are not computed for this trace");
      fig::RooflineFigureStats stats;
      return fig::roofline_figure(*report->cupti, analysis::roofline(*report->cupti, report->table), style, title, scene, stats,
                                  r.error);
    }
  }
  return fail(r, "unknown figure");
}

}  // namespace

const char* export_what_name(ExportWhat what) {
  switch (what) {
    case ExportWhat::Screen: return "screen";
    case ExportWhat::Selection: return "selection";
    case ExportWhat::Latency: return "latency";
    case ExportWhat::Breakdown: return "breakdown";
    case ExportWhat::Idle: return "idle";
    case ExportWhat::CriticalPath: return "critical-path";
    case ExportWhat::Diff: return "diff";
    case ExportWhat::Roofline: return "roofline";
    case ExportWhat::Memory: return "memory";
  }
  return "?";
}

const char* export_what_label(ExportWhat what) {
  switch (what) {
    case ExportWhat::Screen: return "Timeline: what is on screen";
    case ExportWhat::Selection: return "Timeline: the selected range";
    case ExportWhat::Latency: return "Launch latency histogram";
    case ExportWhat::Breakdown: return "Breakdowns (GPU time, top kernels)";
    case ExportWhat::Idle: return "Idle time by cause";
    case ExportWhat::CriticalPath: return "Critical path of the iteration, shares and what would shorten it";
    case ExportWhat::Diff: return "Diff: the compared step of both runs, by change";
    case ExportWhat::Roofline: return "Roofline (CUPTI counters)";
    case ExportWhat::Memory: return "Memory: allocated and reserved with the peak, what was live at it";
  }
  return "?";
}

bool parse_export_what(std::string_view text, ExportWhat& what) {
  for (int i = 0; i < kExportWhatCount; ++i)
    if (text == export_what_name(ExportWhat(i))) return what = ExportWhat(i), true;
  return false;
}

std::pair<TimeNs, TimeNs> visible_trace_range(double t0, double t1, TimeNs trace_end) {
  double a = std::max(0.0, std::floor(t0)), b = std::min(double(trace_end), std::ceil(t1));
  if (!(b > a)) return {0, 0};
  return {TimeNs(a), TimeNs(b)};
}

std::pair<TimeNs, TimeNs> diff_window(const diff::AlignedDiff& d, double t0, double t1) {
  const double step = double(std::max(d.chosen.dur_a(), d.chosen.dur_b()));
  double a = std::max(0.0, std::floor(t0 - double(d.chosen.start_a)));
  double b = std::min(step, std::ceil(t1 - double(d.chosen.start_a)));
  if (!(b > a) || (a <= 0 && b >= step)) return {0, 0};
  return {TimeNs(a), TimeNs(b)};
}

std::string default_figure_path(const std::string& trace_path) {
  fs::path folder = trace_path.empty() ? fs::path() : fs::path(trace_path).parent_path();
  if (folder.empty() || ::access(folder.c_str(), W_OK) != 0) folder = fs::current_path();
  return (folder / "sightline-figure.svg").string();
}

std::string ExportResult::summary() const {
  if (!ok) return "could not export: " + error;
  char buf[96];
  std::snprintf(buf, sizeof buf, ": %zu elements, %.0f×%.0f", elements, double(width), double(height));
  std::string out = "wrote " + request.path + buf;
  if (timeline.truncated) out += " (TRUNCATED to the element budget)";
  return out;
}

ExportResult export_figure(const ExportSources& sources, const ExportRequest& request) {
  auto started = std::chrono::steady_clock::now();
  ExportResult r;
  r.request = request;
  fig::Format format;
  if (!check_request(request, format, r)) return r;
  fig::Style style = fig::make_style(request.theme, request.width);
  fig::Scene scene;
  if (!build_scene(sources, style, scene, r)) return r;
  std::string error;
  if (!fig::write_scene(scene, request.path, format, request.scale, error)) {
    r.error = "cannot write " + error;
    return r;
  }
  r.ok = true;
  r.elements = scene.items.size();
  r.width = scene.width, r.height = scene.height;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return r;
}

}  // namespace sl::views
