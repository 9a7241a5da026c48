// Runs every analysis on one trace and keeps the results and per-analysis timings: the engine
// behind `sightline report`, `sightline bench report` and the GUI's analysis views.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/report_result.h"

namespace sl::analysis {

// Names accepted by --only (and keys of the JSON report).
const std::vector<std::string>& analysis_names();

Report run_report(const TraceStore& store, const ReportOptions& options);

}  // namespace sl::analysis
