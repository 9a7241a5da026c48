// `sightline render TRACE -o FIG.svg|pdf|png`: figures for papers and slides, headless (Cairo,
// no window, no OpenGL, no DISPLAY needed).
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "app/commands.h"
#include "app/fleet_cli.h"
#include "app/job_open.h"
#include "core/analysis/common.h"
#include "core/analysis/job_overview.h"
#include "core/diff/trace_diff.h"
#include "core/import/trace_loader.h"
#include "core/present/rank_heatmap.h"
#include "core/present/time_axis.h"
#include "figures/cairo_output.h"
#include "figures/diff_figure.h"
#include "figures/heatmap_figure.h"
#include "figures/ranks_figure.h"
#include "figures/timeline_figure.h"
#include "figures/trace_figure.h"

namespace sl::cli {
namespace {

struct RenderOptions {
  std::vector<std::string> traces;  // one, or CONTROL TEST for --view diff
  std::vector<std::string> job;     // --job: rank files of one job (--view ranks)
  std::string align = "auto";       // --view ranks/heatmap: the job clock, as report --align
  std::string order = "rank";       // --view heatmap: rows by rank, node or slowness
  std::string heatmap = "steps,waits";  // --view heatmap: the panels (steps, waits, step-waits), in order
  std::string output, range, tracks, title;
  std::string view, theme = "paper";  // view "": ranks for a job, else timeline
  float width = 0;
  double scale = 1;
  int max_depth = -1;  // -1: the view's default (timeline: every depth; diff: 1)
  size_t top = 8;
  std::optional<int64_t> iteration_a, iteration_b;
  std::optional<int64_t> instance;  // critical-path: the ProfilerStep instance (from 0)
  std::optional<std::string> annotation;  // unset: ProfilerStep, or the whole trace where it is absent
  bool quiet = false;
};

int usage(const std::string& message) {
  std::fprintf(stderr, "sightline render: %s\n", message.c_str());
  return 2;
}

// Whether the figure was built and written to --output; says on stderr why not.
bool figure_written(bool built, const fig::Scene& scene, const RenderOptions& o, fig::Format format, std::string& error) {
  if (!built) {
    std::fprintf(stderr, "sightline render: %s\n", error.c_str());
    return false;
  }
  if (!fig::write_scene(scene, o.output, format, o.scale, error)) {
    std::fprintf(stderr, "sightline render: cannot write %s\n", error.c_str());
    return false;
  }
  return true;
}

// "START:END" with units on either side ("12.5ms:14ms", "3s:4s", raw µs "1500:2500").
bool parse_range(const std::string& text, TimeNs& start, TimeNs& end) {
  size_t colon = text.find(':');
  if (colon == std::string::npos) return false;
  double a = 0, b = 0;
  if (!present::parse_time(text.substr(0, colon), a) || !present::parse_time(text.substr(colon + 1), b)) return false;
  if (!(b > a) || a < 0) return false;
  start = TimeNs(a), end = TimeNs(b);
  return true;
}

bool load(const std::string& path, CliTrace& out) { return open_cli_trace(path, out); }

void report(const RenderOptions& o, const fig::Scene& scene, const std::string& details,
            std::chrono::steady_clock::time_point started) {
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  std::error_code ec;
  auto bytes = std::filesystem::file_size(o.output, ec);
  std::fprintf(stderr, "wrote %s: %zu elements%s, %.0f×%.0f px, %llu bytes, %.0f ms\n", o.output.c_str(), scene.items.size(),
               details.c_str(), double(scene.width), double(scene.height), (unsigned long long)bytes, ms);
}

// `sightline render CONTROL TEST --view diff`: both runs' compared step and the top changes.
int render_diff(const RenderOptions& o, fig::Format format, const fig::Style& style, TimeNs start, TimeNs end,
                std::chrono::steady_clock::time_point started) {
  CliTrace opened_a, opened_b;
  if (!load(o.traces[0], opened_a) || !load(o.traces[1], opened_b)) return 1;
  const LoadResult &a = opened_a.loaded, &b = opened_b.loaded;
  diff::TraceDiff d;
  try {
    diff::DiffOptions diff_options;
    diff_options.iteration_a = o.iteration_a, diff_options.iteration_b = o.iteration_b;
    d = diff::trace_diff(*a.store, *b.store, diff_options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sightline render: %s\n", e.what());
    return 1;
  }
  fig::DiffFigureOptions options;
  options.start = start, options.end = end, options.tracks = o.tracks, options.title = o.title;
  options.name_a = fig::trace_title(o.traces[0]), options.name_b = fig::trace_title(o.traces[1]);
  if (o.max_depth >= 0) options.max_depth = o.max_depth;
  options.top = o.top;
  fig::Scene scene;
  fig::DiffFigureStats stats;
  std::string error;
  bool built = fig::diff_figure(*a.store, *b.store, d, style, options, scene, stats, error);
  if (!figure_written(built, scene, o, format, error)) return 1;
  if (!o.quiet)
    report(o, scene,
           " (A: " + fig::timeline_rows_report(stats.a, options.max_depth) + "; B: " + fig::timeline_rows_report(stats.b, options.max_depth) + "; " +
               std::to_string(stats.bars) + " bars)",
           started);
  return 0;
}

// A job (a folder, --job FILES) or a fleet file, opened for a figure of its ranks: the job, its
// overview on the clock --align asks, the name for its title, and a fleet's nodes.
struct OpenedJob {
  std::unique_ptr<Job> job;
  analysis::JobOverview overview;
  std::string named;
  std::map<int64_t, int64_t> node_of_rank;
};

// Null job (said on stderr, `rc` set) when the argument is neither a job nor a fleet.
OpenedJob open_job_for_figure(const RenderOptions& o, int& rc) {
  OpenedJob out;
  std::string dir_arg = o.traces.empty() ? "" : o.traces[0];
  bool fleet_file = o.job.empty() && fleet::is_fleet_file(dir_arg);
  if (o.job.empty() && !is_job_dir(dir_arg) && !fleet_file) {
    rc = usage("--view " + o.view + " draws a job: sightline render DIR|RUN.slfleet --view " + o.view +
               " -o FIG, or --job A B ... --view " + o.view);
    return out;
  }
  rc = 1;
  analysis::CollectiveOptions aligned;
  aligned.align = align_named(o.align);
  if (fleet_file) {  // the same figure from the rank summaries alone, named as its folder
    fleet::Fleet f;
    if (!open_fleet_for_cli(dir_arg, f, "render")) return out;
    out.job = fleet::job_of_fleet(f);
    out.overview = fleet::overview_of_fleet(f, aligned);
    out.node_of_rank = fleet::node_of_ranks(f);
    dir_arg = f.source;
  } else {
    out.job = open_job(dir_arg, o.job);
    if (!out.job) return out;
    out.overview = analysis::build_job_overview(*out.job, aligned);
  }
  std::filesystem::path dir = std::filesystem::path(dir_arg).lexically_normal();
  if (dir.filename().empty()) dir = dir.parent_path();
  std::string named = o.job.empty() ? dir.filename().string() : std::to_string(out.job->ranks.size()) + " ranks";
  out.named = o.title.empty() ? named : o.title;
  return out;
}

// `sightline render DIR --view ranks`: the job's rank overview with the straggler bars. Failed
// ranks are drawn as failed; the figure is still written, and the exit status is 1 (as info/report).
int render_ranks(const RenderOptions& o, fig::Format format, const fig::Style& style, TimeNs start, TimeNs end,
                 std::chrono::steady_clock::time_point started) {
  int rc = 0;
  OpenedJob opened = open_job_for_figure(o, rc);
  if (!opened.job) return rc;
  const analysis::JobOverview& overview = opened.overview;
  fig::RanksFigureOptions options;
  options.start = start, options.end = end;
  options.title = opened.named;
  fig::Scene scene;
  fig::RanksFigureStats stats;
  std::string error;
  bool built = fig::ranks_figure(*opened.job, overview, style, options, scene, stats, error);
  if (!figure_written(built, scene, o, format, error)) return 1;
  if (!o.quiet)
    report(o, scene,
           " (" + std::to_string(stats.ranks) + " ranks, " + std::to_string(stats.failed) + " failed, " +
               std::to_string(stats.runs) + " column runs, " + std::to_string(overview.collectives.instances.size()) +
               " collectives)",
           started);
  return stats.failed ? 1 : 0;
}

// `sightline render DIR|RUN.slfleet --view heatmap`: ranks × steps of iteration time and ranks ×
// collectives of wait. Failed ranks have no row; the exit status is then 1, as for --view ranks.
int render_heatmap(const RenderOptions& o, fig::Format format, const fig::Style& style,
                   std::chrono::steady_clock::time_point started) {
  fig::HeatmapFigureOptions options;
  if (!present::row_order_named(o.order, options.order)) return usage("--order wants rank, node or slowness, got '" + o.order + "'");
  options.kinds.clear();
  for (size_t at = 0; at <= o.heatmap.size();) {
    size_t comma = std::min(o.heatmap.find(',', at), o.heatmap.size());
    present::HeatmapKind kind;
    if (!present::heatmap_kind_named(std::string_view(o.heatmap).substr(at, comma - at), kind))
      return usage("--heatmap wants steps, waits or step-waits (comma-separated), got '" + o.heatmap + "'");
    options.kinds.push_back(kind);
    at = comma + 1;
  }
  int rc = 0;
  OpenedJob opened = open_job_for_figure(o, rc);
  if (!opened.job) return rc;
  options.title = opened.named;
  options.node_of_rank = opened.node_of_rank;
  fig::Scene scene;
  fig::HeatmapFigureStats stats;
  std::string error;
  bool built = fig::heatmap_figure(opened.overview, style, options, scene, stats, error);
  if (!figure_written(built, scene, o, format, error)) return 1;
  size_t failed = opened.job->ranks.size() - stats.ranks;
  if (!o.quiet)
    report(o, scene,
           " (" + std::to_string(stats.ranks) + " ranks in " + std::to_string(stats.row_bands) + " row bands, " +
               std::to_string(failed) + " failed, " + std::to_string(stats.steps) + " steps, " +
               std::to_string(stats.collectives) + " collectives, " + std::to_string(stats.cells) + " cell runs)",
           started);
  return failed ? 1 : 0;
}

int render(RenderOptions o) {
  auto started = std::chrono::steady_clock::now();
  bool job = !o.job.empty() || (o.traces.size() == 1 && (is_job_dir(o.traces[0]) || fleet::is_fleet_file(o.traces[0])));
  if (o.view.empty()) o.view = job ? "ranks" : "timeline";  // a job folder draws its rank overview
  if (!o.job.empty() && !o.traces.empty()) return usage("--job names the rank files; give no TRACE with it");
  bool job_view = o.view == "ranks" || o.view == "heatmap";
  if (job && !job_view)
    return usage("a job (a folder, or --job) draws its rank overview (--view ranks) or heatmaps (--view heatmap), not --view " + o.view);
  if (o.align != "auto" && !job_view) return usage("--align is for a job's rank overview (--view ranks) or heatmaps (--view heatmap)");
  if (o.order != "rank" && o.view != "heatmap") return usage("--order is for --view heatmap");
  if (o.heatmap != "steps,waits" && o.view != "heatmap") return usage("--heatmap is for --view heatmap");
  fig::Format format;
  if (!fig::format_from_path(o.output, format)) return usage("-o wants a .svg, .pdf or .png file, got '" + o.output + "'");
  fig::FigureTheme theme;
  if (!fig::parse_theme(o.theme, theme)) return usage("--theme wants light, dark or paper, got '" + o.theme + "'");
  if (o.view == "diff" && o.traces.size() != 2)
    return usage("--view diff compares two runs: sightline render CONTROL TEST --view diff -o FIG");
  if (o.traces.empty() && o.job.empty()) return usage("a trace, a job folder, or --job FILES... is required");
  if (o.view != "diff" && o.traces.size() > 1)
    return usage("two traces are only for --view diff (got --view " + o.view + ")");
  if (o.max_depth < -1) return usage("--max-depth wants 0 (top level only) or more");
  if (o.top < 1 || o.top > 50) return usage("--top wants 1 to 50");
  if (o.view != "diff" && (o.iteration_a || o.iteration_b)) return usage("--iteration-a/-b are for --view diff");
  if (o.view != "critical-path" && (o.instance || o.annotation))
    return usage("--instance and --annotation are for --view critical-path");
  TimeNs start = 0, end = 0;
  if (!o.range.empty() && !parse_range(o.range, start, end))
    return usage("--range wants START:END with START < END, e.g. 12.5ms:14ms, 3s:4s or raw µs 1500:2500; got '" + o.range + "'");
  if (o.width != 0 && (o.width < 200 || o.width > 20000)) return usage("--width wants 200 to 20000 px");
  if (!(o.scale >= 0.25 && o.scale <= 8)) return usage("--scale wants 0.25 to 8");

  fig::Style style = fig::make_style(theme, o.width);
  if (o.view == "diff") return render_diff(o, format, style, start, end, started);
  if (o.view == "ranks") return render_ranks(o, format, style, start, end, started);
  if (o.view == "heatmap") return render_heatmap(o, format, style, started);

  CliTrace opened;
  if (!load(o.traces[0], opened)) return 1;
  const TraceStore& store = *opened.loaded.store;
  if (end > 0 && start >= store.end_ns) {
    std::fprintf(stderr, "sightline render: --range starts at %s, after the trace ends (%s)\n",
                 present::format_duration(double(start)).c_str(), present::format_duration(double(store.end_ns)).c_str());
    return 2;
  }
  std::string title = o.title.empty() ? fig::trace_title(o.traces[0]) : o.title;

  if (!fig::is_trace_view(o.view))
    return usage("--view wants timeline, histogram, breakdown, idle, roofline, memory, critical-path, diff, ranks or heatmap; got '" + o.view + "'");
  fig::TraceFigureRequest request;
  request.view = o.view, request.start = start, request.end = end, request.tracks = o.tracks, request.title = title;
  request.max_depth = o.max_depth, request.top = o.top, request.instance = o.instance, request.annotation = o.annotation;
  fig::Scene scene;
  std::string error, details;
  bool ok = fig::trace_figure(store, request, style, scene, details, error);
  if (!figure_written(ok, scene, o, format, error)) return 1;
  if (!o.quiet) report(o, scene, details, started);
  return 0;
}

}  // namespace

void register_render(CLI::App& app) {
  auto* cmd = app.add_subcommand("render",
                                 "Write a figure (SVG, PDF or PNG) of a trace or memory snapshot: timeline, histogram, breakdown, idle, roofline, memory, critical-path; or of two "
                                 "runs compared (--view diff)");
  auto o = std::make_shared<RenderOptions>();
  cmd->add_option("trace", o->traces, "Trace file (.json, .json.gz, Nsight .sqlite[.gz], .nsys-rep); CONTROL TEST for --view diff; a job folder or a fleet file (.slfleet; draw --view ranks or heatmap)")->expected(0, 2);
  cmd->add_option("--job", o->job, "Rank trace files of one job (instead of a folder): its rank overview");
  cmd->add_option("--heatmap", o->heatmap,
                  "Panels of --view heatmap, comma-separated: steps (iteration time per step), waits (per collective), "
                  "step-waits (wait in collectives per step); default steps,waits");
  cmd->add_option("--order", o->order, "Rows of --view heatmap: rank (default), node (a fleet's nodes) or slowness (largest total first)")
      ->check(CLI::IsMember({"rank", "node", "slowness"}));
  cmd->add_option("--align", o->align, "Job clocks for --view ranks and heatmap: collectives, none or auto (default), as report --align")
      ->check(CLI::IsMember({"auto", "collectives", "none"}));
  cmd->add_option("-o,--output", o->output, "Figure file: .svg, .pdf or .png")->required();
  cmd->add_option("--range", o->range,
                  "Time range START:END (12.5ms:14ms, 3s:4s, raw µs): since the trace start; for diff, since each run's "
                  "compared step start");
  cmd->add_option("--max-depth", o->max_depth,
                  "CPU stacks: slices deeper than N (0 = top level) are not drawn, and counted (default: all; diff: 1)");
  cmd->add_option("--top", o->top, "diff: regressions and improvements shown, each; critical-path: ops and GPU waits listed (default 8)");
  cmd->add_option("--instance", o->instance, "critical-path: the annotation instance, from 0 (default: the first complete one)");
  cmd->add_option("--annotation", o->annotation, "critical-path: the annotation whose instance is drawn (default ProfilerStep, else the whole trace)");
  cmd->add_option("--iteration-a", o->iteration_a, "diff: ProfilerStep number of A to compare (as sightline diff)");
  cmd->add_option("--iteration-b", o->iteration_b, "diff: ProfilerStep number of B to compare (as sightline diff)");
  cmd->add_option("--tracks", o->tracks, "Rows whose label (or raw ids, \"tid 1234\") contains PATTERN (case-insensitive) or matches it as a regex");
  cmd->add_option("--view", o->view, "timeline (default), histogram, breakdown, idle, roofline (CUPTI counters), memory (allocated/reserved, the peak), critical-path, diff, ranks (a job: its default), heatmap (a job: ranks × steps and × collectives)");
  cmd->add_option("--width", o->width, "Figure width in px (default: paper 640, light/dark 1200)");
  cmd->add_option("--scale", o->scale, "PNG pixels per px, e.g. 2 for slides (default 1)");
  cmd->add_option("--theme", o->theme, "paper (default), light or dark");
  cmd->add_option("--title", o->title, "Title (default: the trace's file name)");
  cmd->add_flag("-q,--quiet", o->quiet, "Do not report what was written");
  cmd->callback([o] { exit_code = render(*o); });
}

}  // namespace sl::cli
