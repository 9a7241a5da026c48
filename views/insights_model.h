// Insights for the GUI: the ranking lives in core (core/analysis/insights.h), shared with
// `sightline report`'s headline; the view only re-ranks with its own options (the starvation
// threshold the user typed).
#pragma once

#include <vector>

#include "core/analysis/insights.h"
#include "views/analysis_model.h"

namespace sl::views {

using Insight = analysis::Insight;
using InsightOptions = analysis::InsightOptions;

// Sorted by cost, largest first; every cost bounded by the trace span.
std::vector<Insight> find_insights(const AnalysisModel& model, const InsightOptions& options = {});

}  // namespace sl::views
