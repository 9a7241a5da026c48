#include "core/analysis/report.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/report/trace_info.h"
#include "core/store/cores.h"

namespace sl::analysis {

const std::vector<std::string>& analysis_names() {
  static const std::vector<std::string> names = {
      "temporal_breakdown", "idle_breakdown",   "idle_causes",        "kernel_type_breakdown",
      "kernel_breakdown",   "kernel_durations", "launch_stats",       "queue_length",
      "memory_bw",          "memory_in_use",    "comm_comp_overlap",  "coupling",
      "fusion_candidates",  "repeated_kernels", "kernel_sequences", "insights",
      "cupti_counters",     "critical_path",    "ledger",           "memory_timeline",
      "memory_peak",        "memory_at_peak",   "memory_leaks",     "memory_churn",
      "memory_iterations"};
  return names;
}

bool Report::wants(std::string_view name) const {
  if (only.empty()) return true;
  return std::find(only.begin(), only.end(), name) != only.end();
}

namespace {

using Seconds = std::vector<std::pair<std::string, double>>;

template <class F>
void timed(Seconds& seconds, const char* name, F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  seconds.push_back({name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()});
}
template <class F>
void timed(Report& r, const char* name, F&& f) {
  timed(r.seconds, name, std::forward<F>(f));
}

}  // namespace

Report run_report(const TraceStore& store, const ReportOptions& o) {
  Report r;
  r.only = o.only;
  r.explain = o.explain;
  // --only aliases: the summary tables of a family bring their family along.
  auto want = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      if (r.wants(n)) return true;
    return false;
  };
  // Insights (Sightline mode) read these analyses: asking for insights runs them too.
  const bool insights = o.table.mode == Mode::Sightline && r.wants("insights");
  auto want_for_insights = [&](std::initializer_list<const char*> names) { return insights || want(names); };
  timed(r, "table", [&] { r.table = build_table(store, o.table); });
  r.gpu_warning = missing_gpu_activity_warning(store);
  const EventTable& t = r.table;
  const bool no_gpu = t.gpu.empty();
  if (no_gpu) r.notes.push_back("no GPU activity: GPU analyses are empty");
  if (t.last_step_filtered) r.notes.push_back("hta: events of the last ProfilerStep dropped (HTA's last-step filter)");
  if (t.rounded) r.notes.push_back("hta: fractional timestamps rounded (ceil start, floor end)");

  // The analyses the ledger's chain (causes, ledger, fusion) does not read run beside it, on a
  // second thread when there is a core for it: they only read the table and each writes its own
  // member. Their timings and notes join the lists after the chain's; the coupling verdict, which
  // reads both, comes after the join.
  Seconds side_seconds;
  std::vector<std::string> side_notes;
  auto side = [&] {
    if (want_for_insights({"temporal_breakdown", "temporal_breakdown_streams"}))
      timed(side_seconds, "temporal_breakdown", [&] { r.temporal = temporal_breakdown(t); });
    if (want({"idle_breakdown", "idle_interval_stats"})) timed(side_seconds, "idle_breakdown", [&] { r.idle = idle_breakdown(t); });
    if (insights) r.hta_idle_pct = hta_idle_share(t);
    if (want_for_insights({"coupling"})) timed(side_seconds, "coupling", [&] { r.coupling = coupling(t, o.coupling); });
    if (want({"kernel_type_breakdown", "kernel_breakdown"}))
      timed(side_seconds, "kernel_breakdown", [&] { r.kernels = kernel_breakdown(t); });
    if (want({"kernel_durations"})) timed(side_seconds, "kernel_durations", [&] { r.durations = duration_distributions(t); });
    if (want_for_insights({"launch_stats"})) timed(side_seconds, "launch_stats", [&] { r.launches = launch_stats(t); });
    if (want({"queue_length", "queue_length_summary"})) timed(side_seconds, "queue_length", [&] { r.queues = queue_length(t); });
    if (want({"memory_bw", "memory_bw_summary"})) timed(side_seconds, "memory_bw", [&] { r.bandwidth = memory_bandwidth(t); });
    if (want({"memory_in_use"})) timed(side_seconds, "memory_in_use", [&] { r.memory = memory_in_use(store); });
    if (!store.memory.empty() && want_for_insights({"memory_timeline", "memory_peak", "memory_at_peak", "memory_leaks",
                                                    "memory_churn", "memory_iterations"}))
      timed(side_seconds, "memory", [&] {
        r.memory_analysis = memory::analyze_memory(store);
        if (insights) r.memory_findings = memory::memory_findings(store, *r.memory_analysis);
      });
    if (want_for_insights({"comm_comp_overlap"})) timed(side_seconds, "comm_comp_overlap", [&] { r.overlap = comm_comp_overlap(t); });
    if (want({"repeated_kernels"})) timed(side_seconds, "repeated_kernels", [&] { r.repeated = repeated_kernels(t); });
    if (want({"kernel_sequences"})) {
      if (o.operator_name.empty()) {
        if (!r.only.empty()) side_notes.push_back("kernel_sequences: no --operator given");
        r.sequences = std::vector<KernelSequence>{};
      } else {
        KernelSequenceOptions ko;
        ko.operator_name = o.operator_name;
        timed(side_seconds, "kernel_sequences", [&] { r.sequences = kernel_sequences(t, ko); });
      }
    }

    if (want({"cupti_counters"})) {
      timed(side_seconds, "cupti_counters", [&] { r.cupti = cupti_counters(t); });
      // "No counters" is news only to someone who asked for them; a full report of an ordinary
      // trace stays quiet. Ranges that cannot be tied to launches are always worth a note.
      const bool asked = !r.only.empty();
      if (!r.cupti->note.empty() && (asked || !r.cupti->kernels.empty() || r.cupti->ranges > 0))
        side_notes.push_back(r.cupti->note);
    }
  };
  std::thread beside;
  if (o.threads != 1 && usable_cores() > 1) beside = std::thread(side);
  else side();

  // Sightline mode's coupling verdict reads the idle ledger: asking for coupling brings it along.
  const bool verdicts = o.table.mode == Mode::Sightline && want_for_insights({"coupling"});
  // Fusion savings read the ledger too (§5b).
  const bool ledger = o.table.mode == Mode::Sightline && want_for_insights({"fusion_candidates", "ledger"});
  if (verdicts || ledger || want_for_insights({"idle_causes"})) timed(r, "idle_causes", [&] {
    r.causes = idle_causes(t);
    if (o.table.mode == Mode::Sightline) r.ledger = IdleLedger(*r.causes);
  });
  if (want_for_insights({"fusion_candidates"})) {
    FusionOptions fo;
    fo.t_sys = null_launch_floor(t, o.coupling);  // one T_sys for §5: coupling's
    if (r.ledger) fo.ledger = &*r.ledger;
    timed(r, "fusion_candidates", [&] { r.fusion = fusion_candidates(t, fo); });
  }
  if (beside.joinable()) beside.join();
  r.seconds.insert(r.seconds.end(), side_seconds.begin(), side_seconds.end());
  r.notes.insert(r.notes.end(), side_notes.begin(), side_notes.end());
  if (verdicts) ledger_verdicts(*r.coupling, *r.ledger);
  // Critical path: only on request (one annotation instance, chosen by the user), so full reports
  // and their golden files stay as they were.
  auto asked_for = [&](std::string_view n) { return std::find(r.only.begin(), r.only.end(), n) != r.only.end(); };
  const bool cp_asked = asked_for("critical_path") || asked_for("critical_path_summary");
  if (cp_asked) {
    timed(r, "critical_path", [&] { r.critical_path = critical_path(t, o.critical_path); });
    if (!r.critical_path->note.empty()) r.notes.push_back(r.critical_path->note);
  }

  if (insights) timed(r, "insights", [&] { r.insights = rank_insights(r); });

  if (r.launches && r.launches->pairs.empty() && !no_gpu)
    r.notes.push_back("launch_stats: no GPU activity with a recognised launch");
  if (r.launches && r.launches->graph_launches)
    r.notes.push_back("launch_stats: " + std::to_string(r.launches->graph_activities) + " GPU activities replayed by " +
                      std::to_string(r.launches->graph_launches) +
                      " CUDA graph launches: each launch call's runtime counts once; their launch delay is launch → "
                      "first activity, then activity → activity inside the graph (table graph_launches)");
  if (r.overlap && !r.overlap->overlap_pct) r.notes.push_back("comm_comp_overlap: no communication kernels");
  if (r.memory && r.memory->empty()) r.notes.push_back("memory_in_use: no [memory] events");
  return r;
}

}  // namespace sl::analysis
