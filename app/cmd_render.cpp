// `sightline render TRACE -o FIG.svg|pdf|png`: figures for papers and slides, headless (Cairo,
// no window, no OpenGL, no DISPLAY needed).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "app/commands.h"
#include "core/analysis/common.h"
#include "core/analysis/idle_time.h"
#include "core/analysis/kernel_breakdown.h"
#include "core/analysis/launch_stats.h"
#include "core/analysis/temporal_breakdown.h"
#include "core/trace_loader.h"
#include "figures/cairo_output.h"
#include "figures/charts.h"
#include "figures/timeline_figure.h"
#include "views/time_axis.h"

namespace sl::cli {
namespace {

struct RenderOptions {
  std::string trace, output, range, tracks, title;
  std::string view = "timeline", theme = "paper";
  float width = 0;
  double scale = 1;
  bool quiet = false;
};

int usage(const std::string& message) {
  std::fprintf(stderr, "sightline render: %s\n", message.c_str());
  return 2;
}

// "START:END" with units on either side ("12.5ms:14ms", "3s:4s", raw µs "1500:2500").
bool parse_range(const std::string& text, TimeNs& start, TimeNs& end) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  double a = 0, b = 0;
  if (!views::parse_time(text.substr(0, colon), a) || !views::parse_time(text.substr(colon + 1), b)) return false;
  if (!(b > a) || a < 0) return false;
  start = TimeNs(a), end = TimeNs(b);
  return true;
}

int render(const RenderOptions& o) {
  auto started = std::chrono::steady_clock::now();
  fig::Format format;
  if (!fig::format_from_path(o.output, format)) return usage("-o wants a .svg, .pdf or .png file, got '" + o.output + "'");
  fig::FigureTheme theme;
  if (!fig::parse_theme(o.theme, theme)) return usage("--theme wants light, dark or paper, got '" + o.theme + "'");
  if (o.view == "diff") return usage("--view diff is not available yet (it needs two traces; see issue 8)");
  TimeNs start = 0, end = 0;
  if (!o.range.empty() && !parse_range(o.range, start, end))
    return usage("--range wants START:END with START < END, e.g. 12.5ms:14ms, 3s:4s or raw µs 1500:2500; got '" + o.range + "'");
  if (o.width != 0 && (o.width < 200 || o.width > 20000)) return usage("--width wants 200 to 20000 px");
  if (!(o.scale >= 0.25 && o.scale <= 8)) return usage("--scale wants 0.25 to 8");

  LoadResult loaded = load_trace(o.trace);
  if (!loaded.ok()) {
    std::fprintf(stderr, "sightline: %s\n", loaded.error.to_string().c_str());
    return 1;
  }
  const TraceStore& store = *loaded.store;
  if (end > 0 && start >= store.end_ns) {
    std::fprintf(stderr, "sightline render: --range starts at %s, after the trace ends (%s)\n",
                 views::format_duration(double(start)).c_str(), views::format_duration(double(store.end_ns)).c_str());
    return 2;
  }
  fig::Style style = fig::make_style(theme, o.width);
  std::string title = o.title.empty() ? std::filesystem::path(o.trace).filename().string() : o.title;
  for (const char* ext : {".gz", ".json"})
    if (o.title.empty() && title.size() > strlen(ext) && title.ends_with(ext)) title.resize(title.size() - strlen(ext));

  analysis::EventTable table = analysis::build_table(store, analysis::TableOptions{});
  fig::Scene scene;
  std::string error;
  bool ok = false;
  fig::TimelineFigureStats stats;
  if (o.view == "timeline") {
    analysis::IdleCauses idle = analysis::idle_causes(table);
    fig::TimelineFigureOptions options;
    options.start = start, options.end = end, options.tracks = o.tracks, options.title = title;
    ok = fig::timeline_figure(store, &idle, style, options, scene, stats, error);
  } else if (o.view == "histogram") {
    ok = fig::histogram_figure(analysis::launch_stats(table), style, title, scene, error);
  } else if (o.view == "breakdown") {
    ok = fig::breakdown_figure(analysis::temporal_breakdown(table), analysis::kernel_breakdown(table), style, title, scene, error);
  } else if (o.view == "idle") {
    ok = fig::idle_figure(analysis::idle_causes(table), style, title, scene, error);
  } else {
    return usage("--view wants timeline, histogram, breakdown, idle or diff; got '" + o.view + "'");
  }
  if (!ok) {
    std::fprintf(stderr, "sightline render: %s\n", error.c_str());
    return 1;
  }
  if (!fig::write_scene(scene, o.output, format, o.scale, error)) {
    std::fprintf(stderr, "sightline render: cannot write %s\n", error.c_str());
    return 1;
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  if (!o.quiet) {
    std::error_code ec;
    auto bytes = std::filesystem::file_size(o.output, ec);
    std::fprintf(stderr, "wrote %s: %zu elements", o.output.c_str(), scene.items.size());
    if (o.view == "timeline")
      std::fprintf(stderr, " (%zu rows, %zu slices, %zu folded runs, %zu idle gaps, fold %.0f px%s)", stats.tracks, stats.slices,
                   stats.folded, stats.gaps, double(stats.fold_px), stats.truncated ? ", TRUNCATED to the element budget" : "");
    std::fprintf(stderr, ", %.0f×%.0f px, %llu bytes, %.0f ms\n", double(scene.width), double(scene.height),
                 (unsigned long long)bytes, ms);
  }
  return 0;
}

}  // namespace

void register_render(CLI::App& app) {
  auto* cmd = app.add_subcommand("render", "Write a figure (SVG, PDF or PNG) of a trace: timeline, histogram, breakdown, idle");
  auto o = std::make_shared<RenderOptions>();
  cmd->add_option("trace", o->trace, "Trace file (.json or .json.gz)")->required();
  cmd->add_option("-o,--output", o->output, "Figure file: .svg, .pdf or .png")->required();
  cmd->add_option("--range", o->range, "Time range START:END (12.5ms:14ms, 3s:4s, raw µs); timeline only");
  cmd->add_option("--tracks", o->tracks, "Rows whose label contains PATTERN (case-insensitive) or matches it as a regex");
  cmd->add_option("--view", o->view, "timeline (default), histogram, breakdown, idle, diff");
  cmd->add_option("--width", o->width, "Figure width in px (default: paper 640, light/dark 1200)");
  cmd->add_option("--scale", o->scale, "PNG pixels per px, e.g. 2 for slides (default 1)");
  cmd->add_option("--theme", o->theme, "paper (default), light or dark");
  cmd->add_option("--title", o->title, "Title (default: the trace's file name)");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not report what was written");
  cmd->callback([o] { exit_code = render(*o); });
}

}  // namespace sl::cli
