#include "core/diff/run_summary.h"

namespace sl::diff {

RunSummary run_summary(const analysis::EventTable& t, std::optional<TimeNs> step_time) {
  RunSummary s;
  s.rank = t.rank;
  s.step_time = step_time;
  const auto& its = t.store->iterations;
  s.iterations = its.size();
  if (!its.empty()) {
    double sum = 0;
    for (const Iteration& it : its) sum += double(it.end - it.start);
    s.mean_step_time = sum / double(its.size());
  }
  s.temporal = analysis::temporal_breakdown(t);
  analysis::IdleCauses causes = analysis::idle_causes(t);
  for (const analysis::IdleGap& g : causes.gaps) {
    s.idle_by_cause[size_t(g.cause)] += g.length();
    ++s.gaps_by_cause[size_t(g.cause)];
    s.idle_total += g.length();
  }
  analysis::LaunchStats l = analysis::launch_stats(t);
  s.launch_pairs = l.pairs.size();
  s.launch_delay_sum = l.delay_sum;
  s.gpu_time_sum = l.gpu_sum;
  s.runtime_sum = l.runtime_sum;
  s.launch_delay_median = l.delay_median;
  s.launch_to_start_median = l.to_start_median;
  s.kernels = t.store->kernel_count();
  return s;
}

}  // namespace sl::diff
