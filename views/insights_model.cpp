#include "views/insights_model.h"

#include "core/analysis/job_overview.h"
#include "core/present/time_axis.h"

namespace sl::views {

std::vector<Insight> find_insights(const AnalysisModel& m, const InsightOptions& o) {
  return analysis::rank_insights(m.report, o);
}

std::optional<StragglerFinding> straggler_finding(const analysis::CollectiveAnalysis& a) {
  const analysis::StragglerRow* worst = analysis::worst_straggler(a);  // the rank straggler_insight names
  if (!worst) return std::nullopt;
  StragglerFinding f;
  f.rank = worst->rank;
  for (size_t i = 0; i < a.instances.size(); ++i) {
    const analysis::CollectiveInstance& in = a.instances[i];
    if (in.last_rank == f.rank && in.skew > 0 && (f.instance < 0 || in.skew > a.instances[size_t(f.instance)].skew)) f.instance = int(i);
  }
  Insight& out = f.insight;
  out.kind = "stragglers";
  out.title = analysis::straggler_insight(a);
  out.cost = worst->delay_caused;
  out.detail = "Rank " + std::to_string(f.rank) + " arrived last at " + std::to_string(worst->late_count) + " of its " +
               std::to_string(worst->collectives) + " collectives; every other rank waited inside the collective until it came.";
  if (f.instance >= 0) {
    const analysis::CollectiveInstance& in = a.instances[size_t(f.instance)];
    out.t0 = INT64_MAX, out.t1 = INT64_MIN;
    for (const analysis::CollectiveArrival& x : in.arrivals) {
      out.t0 = std::min(out.t0, x.arrival), out.t1 = std::max(out.t1, x.end);
      if (x.rank == f.rank) out.ref = x.slice;
    }
    if (in.arrivals.empty()) out.t0 = out.t1 = 0;
    out.detail += " Worst: " + in.name + " #" + std::to_string(in.instance) + " (group " + in.group + "), skew " +
                  present::format_duration(double(in.skew)) + ".";
  }
  return f;
}

}  // namespace sl::views
