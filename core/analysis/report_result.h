// What run_report (core/analysis/report.h) fills: one optional result per analysis, the notes and
// the timings. The insights read it without depending on how it is run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/analysis/comm_overlap.h"
#include "core/analysis/common.h"
#include "core/analysis/counters.h"
#include "core/analysis/coupling.h"
#include "core/analysis/critical_path.h"
#include "core/analysis/cupti_counters.h"
#include "core/analysis/fusion.h"
#include "core/analysis/idle_ledger.h"
#include "core/analysis/idle_time.h"
#include "core/analysis/insights.h"
#include "core/analysis/kernel_breakdown.h"
#include "core/analysis/kernel_sequences.h"
#include "core/analysis/launch_stats.h"
#include "core/analysis/temporal_breakdown.h"
#include "core/memory/memory_analysis.h"

namespace sl::analysis {

struct ReportOptions {
  TableOptions table;
  std::vector<std::string> only;  // empty = all
  std::string operator_name;      // kernel_sequences; empty = skipped with a note
  CouplingOptions coupling;
  CriticalPathOptions critical_path;  // --annotation, --instance
  bool explain = false;               // text: print the ledger tables (report --explain)
  // 1: every analysis on the calling thread (a job runs its ranks' reports in parallel already);
  // otherwise the independent analyses run on a second thread beside the ledger's chain.
  unsigned threads = 0;
};

struct Report {
  EventTable table;
  std::optional<TemporalBreakdown> temporal;
  std::optional<std::vector<IdleBreakdownRow>> idle;
  std::optional<IdleCauses> causes;
  // Sightline mode, whenever causes are: the one ledger every verdict and insight reads (§2b).
  std::optional<IdleLedger> ledger;
  // HTA's idle share for the headline (§2b: stated beside Sightline's when they differ),
  // computed with the insights (hta_idle_share).
  std::optional<double> hta_idle_pct;
  std::optional<KernelBreakdown> kernels;
  std::optional<std::vector<DurationHistogram>> durations;
  std::optional<LaunchStats> launches;
  std::optional<std::vector<QueueLengthStream>> queues;
  std::optional<std::vector<MemoryBandwidthKind>> bandwidth;
  std::optional<std::vector<MemoryInUse>> memory;
  // §11 over the store's memory events (core/memory/), when it has any; its findings (not ranked
  // by time: they cost memory, not idle time) follow the insights in the headline and table.
  std::optional<memory::MemoryAnalysis> memory_analysis;
  std::vector<memory::MemoryFinding> memory_findings;
  std::optional<CommCompOverlap> overlap;
  std::optional<Coupling> coupling;
  std::optional<std::vector<FusionCandidate>> fusion;
  std::optional<std::vector<RepeatedKernel>> repeated;
  std::optional<std::vector<KernelSequence>> sequences;
  std::optional<std::vector<Insight>> insights;  // Sightline mode only; ranked, costs bounded
  std::optional<CuptiCounters> cupti;
  std::optional<CriticalPath> critical_path;  // only when asked for (--only critical_path)
  std::vector<std::string> notes;
  // Launches but no GPU activity at all (missing_gpu_activity_warning): no idle verdict stands.
  std::string gpu_warning;
  std::vector<std::pair<std::string, double>> seconds;  // per analysis, in run order
  bool wants(std::string_view name) const;
  std::vector<std::string> only;
  bool explain = false;
};

}  // namespace sl::analysis
