// Insights, headless: ranked findings over the analyses, each with the time it costs, a sentence
// that says what was measured and why it matters, and where on the timeline it happens.
#pragma once

#include <string>
#include <vector>

#include "views/analysis_model.h"

namespace sl::views {

struct Insight {
  std::string kind;    // starvation, host_bound, data_loader, sync_calls, pageable_copies, ...
  std::string title;   // one line
  std::string detail;  // what was measured and why it matters
  TimeNs cost = 0;     // GPU or host time the finding costs (ranking key)
  TimeNs t0 = 0, t1 = 0;  // where to look (the worst instance)
  SliceRef ref;           // a slice to select there, if any
};

struct InsightOptions {
  TimeNs starvation_gap = 500'000;   // idle gaps at least this long count as starvation
  TimeNs tiny_kernel = 10'000;       // kernels shorter than this are "tiny"
  double tiny_share = 0.3;           // ... reported when they are at least this share of kernels
  double low_overlap_pct = 50;       // communication hidden under compute below this is low
};

// Sorted by cost, largest first.
std::vector<Insight> find_insights(const AnalysisModel& model, const InsightOptions& options = {});

}  // namespace sl::views
