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
  // Time fusing would save, over all occurrences (§5): per occurrence T_sys for every kernel but
  // the first plus the stream's idle time between the chain's kernels, never queue time, and never
  // more than the occurrence's span (first kernel's start to last kernel's end); overlapping
  // occurrences of a repetitive chain (A A A ...) are saved once (greedy, in launch order).
  TimeNs saving = 0;
  int64_t stream = 0;              // a stream where it occurs
  TimeNs first_start = 0, first_end = 0;  // the first occurrence, where to look
  SliceRef anchor;                        // its first kernel
};

struct FusionOptions {
  size_t min_length = 2, max_length = 8;
  double min_proximity = 0.9;
  uint64_t min_count = 2;
  size_t top = 50;
  TimeNs t_sys = 4'500;  // the null-launch floor (coupling's T_sys)
};

// Communication kernels and kernels replayed from a CUDA graph are never part of a chain (they cut
// it): fusing them is not the user's to do.
std::vector<FusionCandidate> fusion_candidates(const EventTable& table, const FusionOptions& o = {});

struct RepeatedKernel {
  std::string name;
  uint64_t count = 0;
  TimeNs sum = 0;
  double mean = 0;
};

std::vector<RepeatedKernel> repeated_kernels(const EventTable& table, size_t top = 20);

}  // namespace sl::analysis
