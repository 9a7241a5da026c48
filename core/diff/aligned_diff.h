// §9 Aligned diff (Sightline mode): which operator of run A is which operator of run B.
//
// Iterations pair by ProfilerStep number (the i-th with the i-th when the two runs share no
// number). Inside one iteration pair, CPU threads pair by role (the thread holding the
// ProfilerStep first, then the others by the name of their first top-level op), and operators
// pair through their call trees: the children of two matched nodes are aligned as name
// sequences (longest common subsequence, so inserted or removed ops leave the rest matched),
// then the matched children recurse. Names are compared by their matching keys; launch calls by
// what they launch (a kernel, a memcpy, a memset), so a CUDA and a HIP run line up. Kernels hang
// under the launch calls (`activities_of`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/store/trace_store.h"

namespace sl::diff {

struct IterationPair {
  std::optional<int64_t> a, b;  // ProfilerStep numbers; nullopt = the whole trace
  TimeNs start_a = 0, end_a = 0, start_b = 0, end_b = 0;
  TimeNs dur_a() const { return end_a - start_a; }
  TimeNs dur_b() const { return end_b - start_b; }
};

struct AlignedOp {
  std::string name;            // the matching key both runs' names share (core/names/matching_key.h)
  std::string name_a, name_b;  // each run's own name (another address, line or step number)
  std::string path;  // keys from the thread's top-level op down to this one, " > "-joined
  uint32_t depth = 0;
  SliceRef a, b;
  TimeNs dur_a = 0, dur_b = 0;
  TimeNs self_a = 0, self_b = 0;  // minus the children's durations
  uint32_t kernels_a = 0, kernels_b = 0;  // GPU activities launched anywhere beneath it
  TimeNs kernel_time_a = 0, kernel_time_b = 0;
  // Kernels of the op's own launches (not of its children ops) that differ:
  std::vector<std::string> kernels_added, kernels_removed, kernels_renamed;  // renamed: "A -> B"
  TimeNs delta() const { return dur_b - dur_a; }
  TimeNs self_delta() const { return self_b - self_a; }
};

// Two kernels (GPU activities) of different names that stand for each other: launched by the
// same matched operator, in the same order, of the same kind (§9: across GPUs and vendors an H100
// cutlass GEMM and an MI300 Tensile GEMM under one aten::addmm). A memory activity pairs only
// with one of its own kind (memcpy with memcpy, memset with memset), never with a compute kernel.
struct KernelPair {
  uint32_t op = 0;  // index into AlignedDiff::ops: the launching operator
  SliceRef a, b;
  std::string name_a, name_b;
  TimeNs dur_a = 0, dur_b = 0;
  TimeNs delta() const { return dur_b - dur_a; }
};

struct UnmatchedOp {
  std::string name;
  std::string where;  // path of the matched parent ("" at a thread's top level)
  uint32_t position = 0;  // index among the parent's children in its own run
  SliceRef ref;
  TimeNs dur = 0;
  uint32_t ops = 0;  // slices in the unmatched subtree, itself included
  uint32_t kernels = 0;
  TimeNs kernel_time = 0;
};

struct AlignOptions {
  // nullopt: the first steady-state pair (the second pair when there are 3 or more: the first
  // step is warm-up), else the first pair.
  std::optional<int64_t> iteration_a, iteration_b;
  size_t top = 10;                                  // regressions/improvements kept
};

struct AlignedDiff {
  std::vector<IterationPair> iterations;  // every pair
  IterationPair chosen;
  std::vector<AlignedOp> ops;             // matched operators, in A's tree order
  std::vector<UnmatchedOp> removed;       // in A only
  std::vector<UnmatchedOp> added;         // in B only
  std::vector<KernelPair> kernel_pairs;   // renamed kernels paired through their operator, by |delta|
  uint64_t nodes_a = 0, nodes_b = 0, matched = 0;
  double matched_fraction = 0;            // 2 * matched / (nodes_a + nodes_b)
  std::vector<uint32_t> regressions, improvements;  // indices into ops by self time delta
  // Indices into ops by inclusive time delta (largest_inclusive_changes), what the diff figure draws.
  std::vector<uint32_t> inclusive_regressions, inclusive_improvements;
  std::vector<std::string> notes;
};

// The CPU thread whose call tree is aligned: the one holding ProfilerStep#`iteration`, else the
// CPU thread with the most slices; kNone when there is none.
uint32_t main_thread(const TraceStore& store, std::optional<int64_t> iteration);

// The matched operators whose inclusive time (children included) changed most, `top` each way,
// largest first. Inclusive, not own time: a +25 ms regression spread over the many children of
// one op changes no single own time much and would be missed. Left out: the ProfilerStep (the
// headline has it) and an op whose change one descendant already shows (90 % of it or more:
// conv2d > convolution > _convolution would otherwise take three places for one change). The
// result for a smaller `top` is a prefix of the result for a larger one. `a` is run A's store.
struct InclusiveChanges {
  std::vector<uint32_t> increases, decreases;  // indices into d.ops
};
InclusiveChanges largest_inclusive_changes(const TraceStore& a, const AlignedDiff& d, size_t top);

// Throws std::invalid_argument when a requested iteration is not in its trace.
AlignedDiff aligned_diff(const TraceStore& a, const TraceStore& b, const AlignOptions& options = {});

}  // namespace sl::diff
