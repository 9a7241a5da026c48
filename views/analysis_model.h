// Every analysis of one trace, computed once off the frame (on the loader thread) and shared by
// the analysis views: the report (Sightline mode) plus the few derived tables the views need.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/analysis/report.h"

namespace sl::views {

// A CPU operator that launches GPU work (directly or through its descendants).
struct LaunchingOp {
  std::string name;
  uint64_t kernels = 0;  // GPU activities launched under it, all instances
};

// One ProfilerStep split by what the GPU did (each instant counted once, in this priority).
struct IterationSplit {
  int64_t iteration = 0;
  TimeNs start = 0, end = 0;
  TimeNs compute = 0, communication = 0, memory = 0, idle = 0;
};

struct AnalysisModel {
  analysis::Report report;                 // Sightline mode, every analysis but kernel_sequences
  std::vector<int64_t> iteration_of_row;   // per table row (analysis::iteration_of_rows)
  std::vector<LaunchingOp> launching_ops;  // by kernels launched, most first
  std::vector<IterationSplit> iterations;
  const analysis::EventTable& table() const { return report.table; }
};

std::unique_ptr<AnalysisModel> build_analysis_model(const TraceStore& store);

std::vector<LaunchingOp> launching_operators(const analysis::EventTable& table);
std::vector<IterationSplit> iteration_splits(const analysis::EventTable& table);

}  // namespace sl::views
