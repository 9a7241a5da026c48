// §5 (continued) Fusion candidates (proximity-score chains of kernels) and the most repeated
// kernels.
#pragma once

#include <string>

#include "core/analysis/common.h"
#include "core/analysis/idle_ledger.h"

namespace sl::analysis {

struct FusionCandidate {
  std::vector<std::string> chain;  // kernel names in launch order
  uint64_t count = 0;
  double proximity = 0;            // count(chain) / count(first kernel)
  // Time fusing would save, over all occurrences (§5, §5b): per occurrence the idle ledger's
  // launch-bound and launch-latency entries inside it (with no ledger, (HTA) mode: the stream's idle
  // time between the chain's kernels) plus T_sys for every kernel but the first, never queue time,
  // and never more than the occurrence's span (first kernel's start to last kernel's end);
  // overlapping occurrences of a repetitive chain (A A A ...) are saved once (greedy, in launch order).
  TimeNs saving = 0;
  TimeNs launch_bound_idle = 0, launch_latency_idle = 0;  // the ledger's part of `saving`
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
  const IdleLedger* ledger = nullptr;  // Sightline mode: savings read the ledger
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
