// The GUI's figure export, headless: what the timeline shows (its visible rows and time range),
// its range selection, or an analysis view's figure, through the same figures/ layouts as
// `sightline render`. No ImGui calls, so tests drive it without a window.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diff/trace_diff.h"
#include "figures/style.h"
#include "figures/timeline_figure.h"
#include "views/analysis_model.h"
#include "views/timeline_view.h"

namespace sl::views {

// What to export. A new kind is one enumerator here, its name in export_what_name, and one case in
// export_figure's switch.
enum class ExportWhat { Screen, Selection, Latency, Breakdown, Idle, Diff, Roofline, CriticalPath, Memory };
constexpr int kExportWhatCount = int(ExportWhat::Memory) + 1;

const char* export_what_name(ExportWhat what);   // script names: screen, selection, latency, ...
const char* export_what_label(ExportWhat what);  // dialog labels
bool parse_export_what(std::string_view text, ExportWhat& what);

struct ExportRequest {
  ExportWhat what = ExportWhat::Screen;
  std::string path;  // the format comes from its extension (.svg, .pdf, .png)
  fig::FigureTheme theme = fig::FigureTheme::Paper;
  float width = 0;   // px; 0 = the theme's default
  double scale = 1;  // PNG pixels per px
  std::string title;
};

// A diff tab: both runs, their diff, and A's visible range (the window the figure shows, relative
// to the compared iteration, when it lies inside it).
struct DiffSources {
  const TraceStore& a;
  const TraceStore& b;
  const diff::TraceDiff& diff;
  std::string path_a, path_b;
  double view_start_a = 0, view_end_a = 0;
};

// Everything an export reads. `model` may be null (analysis views then fail with a message);
// `diff` is set in a diff tab only (where `store` and `timeline` are run A's).
struct ExportSources {
  const TraceStore& store;
  const AnalysisModel* model;
  const TimelineView& timeline;
  bool idle_overlay = true;  // the timeline's overlay is on: draw the idle gaps too
  const DiffSources* diff = nullptr;
  // The Critical path view's path (its chosen iteration); null: the first complete ProfilerStep.
  const analysis::CriticalPath* critical_path = nullptr;
};

struct ExportResult {
  bool ok = false;
  std::string error;  // what went wrong, for the dialog and the script
  ExportRequest request;
  size_t elements = 0;
  float width = 0, height = 0;  // the figure, px (a PNG file is width × scale pixels)
  double ms = 0;                // layout and writing
  fig::TimelineFigureStats timeline;  // timeline exports only
  TimeNs start = 0, end = 0;          // the exported range (timeline exports)
  std::vector<uint32_t> rows;         // the rows asked for, in display order (timeline exports)
  std::string summary() const;        // "wrote PATH: N elements, W×H" or the error
};

ExportResult export_figure(const ExportSources& sources, const ExportRequest& request);

// The part of the view [t0, t1] that lies in the trace, in whole ns; {0, 0} when none does.
std::pair<TimeNs, TimeNs> visible_trace_range(double t0, double t1, TimeNs trace_end);
// The compared iteration's part of A's view [t0, t1], relative to the iteration start; {0, 0}
// (the whole iteration) when the view holds all of it or none of it.
std::pair<TimeNs, TimeNs> diff_window(const diff::AlignedDiff& d, double t0, double t1);
// `sightline-figure.svg` next to the trace when that folder is writable, else in the cwd.
std::string default_figure_path(const std::string& trace_path);

}  // namespace sl::views
