#include "views/insights_model.h"

namespace sl::views {

std::vector<Insight> find_insights(const AnalysisModel& m, const InsightOptions& o) {
  return analysis::rank_insights(m.report, o);
}

}  // namespace sl::views
