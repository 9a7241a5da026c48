#include "figures/trace_figure.h"

#include <cstdio>

#include "core/analysis/common.h"
#include "core/analysis/critical_path.h"
#include "core/analysis/cupti_counters.h"
#include "core/analysis/idle_time.h"
#include "core/analysis/kernel_breakdown.h"
#include "core/analysis/launch_stats.h"
#include "core/analysis/roofline.h"
#include "core/analysis/temporal_breakdown.h"
#include "core/memory/memory_analysis.h"
#include "figures/charts.h"
#include "figures/critical_path_figure.h"
#include "figures/memory_figure.h"
#include "figures/roofline_figure.h"
#include "figures/timeline_figure.h"

namespace sl::fig {
namespace {

std::string path_report(const CriticalPathFigureStats& stats) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%zu rows, %zu path slices, %zu links, %zu strip segments%s", stats.rows, stats.slices, stats.links,
                stats.strip_segments, stats.skipped ? ", some under a pixel left out" : "");
  return buf;
}

// `--view critical-path`: one annotation instance's critical path (as `report --only critical_path`).
bool critical_path_scene(const TraceFigureRequest& r, const TraceStore& store, const analysis::EventTable& table, const Style& style,
                         Scene& scene, CriticalPathFigureStats& stats, std::string& error) {
  analysis::CriticalPathOptions path_options;
  if (r.annotation) path_options.annotation = *r.annotation;
  path_options.annotation_explicit = r.annotation.has_value();
  path_options.instance = r.instance;
  analysis::CriticalPath path = analysis::critical_path(table, path_options);
  analysis::IdleCauses idle = analysis::idle_causes(table);
  CriticalPathFigureOptions options;
  options.title = r.title;
  options.top = r.top;
  return critical_path_figure(store, table, path, &idle, style, options, scene, stats, error);
}

}  // namespace

std::string timeline_rows_report(const TimelineFigureStats& stats, int max_depth) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu rows, %zu slices, %zu folded runs, %zu idle gaps, fold %.0f px%s", stats.tracks, stats.slices,
                stats.folded, stats.gaps, double(stats.fold_px), stats.truncated ? ", TRUNCATED to the element budget" : "");
  std::string out = buf;
  if (stats.depth_cut) out += ", " + depth_note(max_depth, stats.depth_cut);
  if (stats.levels_folded) out += ", " + fold_note(stats.levels_folded);
  return out;
}

bool is_trace_view(std::string_view view) {
  for (const char* v : {"timeline", "histogram", "breakdown", "idle", "roofline", "memory", "critical-path"})
    if (view == v) return true;
  return false;
}

bool trace_figure(const TraceStore& store, const TraceFigureRequest& r, const Style& style, Scene& scene, std::string& details,
                  std::string& error) {
  analysis::EventTable table = analysis::build_table(store, analysis::TableOptions{});
  details.clear();
  if (r.view == "timeline") {
    analysis::IdleCauses idle = analysis::idle_causes(table);
    TimelineFigureOptions options;
    options.start = r.start, options.end = r.end, options.tracks = r.tracks, options.title = r.title;
    options.max_depth = r.max_depth;
    options.fold_deep_stacks = r.tracks.empty() && r.max_depth < 0;  // as the GUI opens; asking for rows or a depth draws them
    TimelineFigureStats stats;
    bool ok = timeline_figure(store, &idle, style, options, scene, stats, error);
    details = " (" + timeline_rows_report(stats, r.max_depth) + ")";
    return ok;
  }
  if (r.view == "histogram") return histogram_figure(analysis::launch_stats(table), style, r.title, scene, error);
  if (r.view == "breakdown")
    return breakdown_figure(analysis::temporal_breakdown(table), analysis::kernel_breakdown(table), style, r.title, scene, error);
  if (r.view == "idle") return idle_figure(analysis::idle_causes(table), style, r.title, scene, error);
  if (r.view == "roofline") {
    analysis::CuptiCounters counters = analysis::cupti_counters(table);
    analysis::Roofline roof = analysis::roofline(counters, table);
    RooflineFigureStats stats;
    bool ok = roofline_figure(counters, roof, style, r.title, scene, stats, error);
    details = " (" + std::to_string(stats.points) + " points, " + std::to_string(stats.roofs) + " roofs)";
    return ok;
  }
  if (r.view == "memory") {
    MemoryFigureStats stats;
    bool ok = memory_figure(store, memory::analyze_memory(store), style, r.title, scene, stats, error);
    details = " (" + std::to_string(stats.devices) + (stats.devices == 1 ? " device, " : " devices, ") +
              std::to_string(stats.contexts) + " contexts at the peak)";
    return ok;
  }
  if (r.view == "critical-path") {
    CriticalPathFigureStats stats;
    bool ok = critical_path_scene(r, store, table, style, scene, stats, error);
    details = " (" + path_report(stats) + ")";
    return ok;
  }
  error = "--view wants timeline, histogram, breakdown, idle, roofline, memory, critical-path, diff or ranks; got '" + r.view + "'";
  return false;
}

}  // namespace sl::fig
