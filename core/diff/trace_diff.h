// The whole comparison of two runs behind `sightline diff`: the ops diff (both modes), the
// side-by-side summary and the aligned diff (Sightline mode), as tables for text, JSON and CSV.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/report_tables.h"
#include "core/diff/aligned_diff.h"
#include "core/diff/memory_diff.h"
#include "core/diff/ops_diff.h"
#include "core/diff/run_summary.h"

namespace sl::diff {

struct DiffOptions {
  analysis::Mode mode = analysis::Mode::Sightline;
  std::optional<int64_t> rank_a, rank_b;            // must match the traces' ranks when given
  // nullopt: (HTA) the first step of each; Sightline: the aligned pair (the first steady-state one).
  std::optional<int64_t> iteration_a, iteration_b;
  Device device = Device::All;
  bool short_names = false;
};

struct TraceDiff {
  analysis::Mode mode = analysis::Mode::Sightline;
  int64_t rank_a = 0, rank_b = 0;
  OpsDiff ops;
  std::optional<RunSummary> summary_a, summary_b;  // Sightline mode
  std::optional<AlignedDiff> aligned;              // Sightline mode
  std::vector<MemoryDevicePair> memory;            // Sightline mode, when either run has memory events
  std::string gpu_warning;  // non-empty when the runs used different GPUs (also in notes)
  std::vector<std::string> notes;
};

// Throws std::invalid_argument for a rank or iteration the traces do not have.
TraceDiff trace_diff(const TraceStore& a, const TraceStore& b, const DiffOptions& options);

// Tables: ops, ops_diff, summary, iterations, aligned, added_ops, removed_ops, regressions,
// improvements, inclusive_regressions, inclusive_improvements, kernel_pairs (all but the first two in
// Sightline mode only), memory_diff and memory_diff_contexts (when either run has memory events).
std::vector<analysis::Table> diff_tables(const TraceDiff& d);
std::string render_diff_json(const TraceDiff& d, const std::vector<analysis::Table>& tables);
std::string render_diff_text(const TraceDiff& d, const std::vector<analysis::Table>& tables,
                             const analysis::TextLayout& layout = {});

}  // namespace sl::diff
