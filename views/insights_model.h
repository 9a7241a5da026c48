// Insights for the GUI: the ranking lives in core (core/analysis/insights.h), shared with
// `sightline report`'s headline; the view only re-ranks with its own options (the starvation
// threshold the user typed).
#pragma once

#include <optional>
#include <vector>

#include "core/analysis/collectives.h"
#include "core/analysis/insights.h"
#include "views/analysis_model.h"

namespace sl::views {

using Insight = analysis::Insight;
using InsightOptions = analysis::InsightOptions;

// Sorted by cost, largest first; every cost bounded by the trace span.
std::vector<Insight> find_insights(const AnalysisModel& model, const InsightOptions& options = {});

// A job's Stragglers entry: the rank that made the others wait longest, titled with core's
// sentence (straggler_insight, as `report DIR` and the Ranks header say it), costing the time it
// made the others wait, pointing at its worst collective: the instance it arrived last at with
// the largest skew (t0/t1 = first arrival to last end, job clock; ref = its own kernel there).
struct StragglerFinding {
  Insight insight;  // kind "stragglers"
  int64_t rank = -1;
  int instance = -1;  // into CollectiveAnalysis::instances
};
// Empty when no rank was ever last with a skew (nothing to say).
std::optional<StragglerFinding> straggler_finding(const analysis::CollectiveAnalysis& collectives);

}  // namespace sl::views
