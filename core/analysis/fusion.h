// §5 (continued) Fusion candidates (proximity-score chains of kernels) and the most repeated
// kernels.
#pragma once

#include <string>

#include "core/analysis/common.h"

namespace sl::analysis {

struct FusionCandidate {
  std::vector<std::string> chain;  // kernel names in launch order
  uint64_t count = 0;
  double proximity = 0;            // count(chain) / count(first kernel)
  TimeNs launch_overhead = 0;      // Σ launch-to-start of all but the first kernel, all occurrences
  int64_t stream = 0;              // a stream where it occurs
};

struct FusionOptions {
  size_t min_length = 2, max_length = 8;
  double min_proximity = 0.9;
  uint64_t min_count = 2;
  size_t top = 50;
};

std::vector<FusionCandidate> fusion_candidates(const EventTable& table, const FusionOptions& o = {});

struct RepeatedKernel {
  std::string name;
  uint64_t count = 0;
  TimeNs sum = 0;
  double mean = 0;
};

std::vector<RepeatedKernel> repeated_kernels(const EventTable& table, size_t top = 20);

}  // namespace sl::analysis
