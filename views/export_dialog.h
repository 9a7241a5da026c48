// File > Export figure... (Ctrl+E): what (the timeline as on screen, its selected range, or the
// current analysis view), file and format, theme, width, PNG scale and title; writes through
// export_figure on the UI thread (about 100 ms for a 35 MB trace: no worker needed) and shows
// "wrote PATH: N elements, W×H" or the error.
#pragma once

#include <optional>
#include <string>

#include "core/text/json_writer.h"
#include "views/analysis_panel.h"
#include "views/figure_export.h"

namespace sl::views {

class ExportDialog {
public:
  // Opens the window with "what" following the lower tab and defaults from the trace's path.
  void open(const std::string& trace_path, PanelTab tab);
  bool is_open() const { return open_; }
  void draw(const ExportSources& sources, const std::string& trace_path, PanelTab tab);

  // The dialog's current settings applied to `what` and `path` (the script's `export`).
  ExportRequest request(ExportWhat what, const std::string& path, const std::string& trace_path) const;
  const ExportResult& run(const ExportSources& sources, const ExportRequest& request);
  const ExportResult* last() const { return last_ ? &*last_ : nullptr; }
  // `last_export` for the script's state dump: null before the first export.
  void write_state(JsonWriter& w, const TraceStore* store) const;

  int theme = int(fig::FigureTheme::Paper);  // FigureTheme
  int width = 0;                             // px; 0 = the theme's default
  int scale = 1;                             // PNG: 1, 2 or 3 pixels per px

private:
  void draw_what(const ExportSources& sources, PanelTab tab);
  void draw_settings();

  bool open_ = false;
  ExportWhat what_ = ExportWhat::Screen;
  char path_[1024] = "";
  char title_[256] = "";
  std::string defaults_for_;  // the trace the path and title defaults were taken from
  std::optional<ExportResult> last_;
};

// The analysis figure a lower tab has, if any (Launch latency, Breakdowns, Idle time, Critical path).
std::optional<ExportWhat> figure_of_tab(PanelTab tab);

}  // namespace sl::views
