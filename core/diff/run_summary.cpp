#include "core/diff/run_summary.h"

#include <algorithm>
#include <set>

namespace sl::diff {

std::vector<const Iteration*> steady_state_iterations(const TraceStore& store) {
  std::vector<const Iteration*> its;
  for (const Iteration& it : store.iterations) its.push_back(&it);
  std::stable_sort(its.begin(), its.end(), [](auto* x, auto* y) { return x->start < y->start; });
  if (its.size() >= kMinStepsToSkipWarmup) its.erase(its.begin());
  return its;
}

std::string iteration_list_text(const std::vector<int64_t>& n) {
  if (n.empty()) return "none";
  bool consecutive = true;
  for (size_t i = 1; i < n.size(); ++i) consecutive &= n[i] == n[i - 1] + 1;
  if (n.size() == 1) return std::to_string(n.front());
  if (consecutive) return std::to_string(n.front()) + "-" + std::to_string(n.back());
  std::string o;
  for (size_t i = 0; i < n.size(); ++i) o += (i ? ", " : "") + std::to_string(n[i]);
  return o;
}

std::optional<double> steady_step_change_pct(const RunSummary& a, const RunSummary& b) {
  if (!a.steady_step_time || !b.steady_step_time || *a.steady_step_time <= 0) return std::nullopt;
  return 100.0 * (*b.steady_step_time - *a.steady_step_time) / *a.steady_step_time;
}

std::string gpu_mismatch(const RunSummary& a, const RunSummary& b) {
  if (a.gpus.empty() || b.gpus.empty() || a.gpus == b.gpus) return "";
  auto list = [](const std::vector<std::string>& v) {
    std::string o;
    for (size_t i = 0; i < v.size(); ++i) o += (i ? " + " : "") + v[i];
    return o;
  };
  return "the runs used different GPUs (A: " + list(a.gpus) + ", B: " + list(b.gpus) +
         "): time differences mix the change under test with the hardware";
}

namespace {

// Names of the devices that hold GPU work; every listed device when no track names its device.
std::vector<std::string> gpus_in_use(const TraceStore& store) {
  std::set<int64_t> used;
  for (const Track& t : store.tracks)
    if (t.kind == TrackKind::GpuStream && t.device >= 0) used.insert(t.device);
  std::set<std::string> names;
  for (const Device& d : store.meta.devices)
    if (!d.name.empty() && (used.empty() || used.count(d.id))) names.insert(d.name);
  if (names.empty())
    for (const Device& d : store.meta.devices)
      if (!d.name.empty()) names.insert(d.name);
  return {names.begin(), names.end()};
}

}  // namespace

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
  double steady_sum = 0;
  for (const Iteration* it : steady_state_iterations(*t.store)) {
    s.steady_iterations.push_back(it->number);
    steady_sum += double(it->end - it->start);
  }
  if (!s.steady_iterations.empty()) s.steady_step_time = steady_sum / double(s.steady_iterations.size());
  s.gpus = gpus_in_use(*t.store);
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
