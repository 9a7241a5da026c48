// View-model of the kernel-patterns view, headless: where each pattern occurs on the timeline.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/fusion.h"
#include "core/analysis/kernel_sequences.h"

namespace sl::views {

// One occurrence of a pattern: its kernels (GPU slices) and the span they cover.
struct Occurrence {
  std::vector<SliceRef> kernels;
  SliceRef anchor;  // what the timeline selects: the operator for sequences, else the first kernel
  TimeNs start = 0, end = 0;
};

// Occurrences of a fusion chain: consecutive launched kernels of one stream, in launch order,
// not separated by a blocking host call (the windows fusion_candidates counts).
std::vector<Occurrence> fusion_occurrences(const analysis::EventTable& table, const analysis::FusionCandidate& chain);
// Every launch of a kernel name, by start.
std::vector<Occurrence> kernel_occurrences(const analysis::EventTable& table, const std::string& name);
// Instances of the operator whose launched kernels form `seq` (kernel_sequences' grouping for
// `operator_substring`, Sightline mode).
std::vector<Occurrence> sequence_occurrences(const analysis::EventTable& table, const std::string& operator_substring,
                                             const analysis::KernelSequence& seq);
// All kernels of all occurrences, deduplicated, for the timeline's highlights.
std::vector<SliceRef> occurrence_kernels(const std::vector<Occurrence>& occurrences);

}  // namespace sl::views
