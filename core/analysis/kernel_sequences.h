// §6 Kernel patterns per operator (HTA's frequent CUDA kernel sequences): for the shallowest CPU
// operators whose name contains a substring, the sequence of kernels they launch, grouped.
#pragma once

#include <string>

#include "core/analysis/common.h"

namespace sl::analysis {

struct KernelSequence {
  std::string op;                    // the operator's name
  std::vector<std::string> pattern;  // operator name, then kernel names by GPU start
  uint64_t count = 0;
  TimeNs gpu_kernel_time = 0;        // Σ kernel durations over occurrences
  TimeNs cpu_op_time = 0;            // Σ operator durations over occurrences
  std::string joined() const;        // "op|k1|k2|..." as HTA prints it
};

struct KernelSequenceOptions {
  std::string operator_name;  // substring; empty = analysis skipped
  size_t min_pattern_length = 3;
};

std::vector<KernelSequence> kernel_sequences(const EventTable& table, const KernelSequenceOptions& o);

}  // namespace sl::analysis
