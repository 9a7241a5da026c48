// What the critical path (§10) means for the one who wants a shorter iteration: the slices on the
// path, the time each contributes, the ops that cost most, and the GPU gaps on it with their idle
// causes (§2b). Shared by the GUI's Critical path view and `render --view critical-path`; only the
// public CriticalPath API is used, so changes to the graph rules do not reach here.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/critical_path.h"
#include "core/analysis/idle_time.h"

namespace sl::analysis {

// The instances of `annotation` (CPU slices named "NAME" or "NAME#N") in start order: what
// CriticalPathOptions::instance indexes (the rule of critical_path.cpp's instance pick).
std::vector<SliceRef> annotation_instances(const EventTable& table, std::string_view annotation);

// The distinct slices the path passes through (either node of an edge), sorted (track, index).
std::vector<SliceRef> critical_path_slices(const EventTable& table, const CriticalPath& path);

// One path edge between two different slices, drawn as an arrow: launch → kernel, kernel →
// kernel on a stream, cross-stream and host-sync dependencies. Nesting and sequence on one CPU
// thread stay inside a row and are not links.
struct CriticalPathLink {
  SliceRef from, to;
  TimeNs from_ts = 0, to_ts = 0;  // the nodes' times (a node is a slice's start or end)
  BoundBy bound_by = BoundBy::Dependency;
};
std::vector<CriticalPathLink> critical_path_links(const EventTable& table, const CriticalPath& path);

// A slice's share of the path: the weight of the edges spent inside it (its own duration for a
// kernel or a leaf op, its self time before, between and after children for a CPU op). Time
// between two ops goes to the deepest slice running then, which may be a Python frame off the
// path (the graph leaves Python frames out, but their time is what such a gap costs).
struct PathContributor {
  SliceRef slice;
  TimeNs time = 0;
  BoundBy bound_by = BoundBy::CpuBound;  // of its largest edge
};
// Longest first; overhead edges (launch, kernel-kernel) and zero-time dependencies are not a
// slice's time: they are the GPU gaps below.
std::vector<PathContributor> path_contributors(const EventTable& table, const CriticalPath& path);

// Contributors summed per op name: "what would shorten this iteration".
struct PathOp {
  std::string name;
  TimeNs time = 0;
  uint64_t count = 0;
  SliceRef longest;  // its instance with the most path time
};
std::vector<PathOp> path_ops(const EventTable& table, const std::vector<PathContributor>& contributors);

// A GPU stream waiting on the path (a launch-overhead or kernel-kernel edge with time), and the
// idle cause of the gap that ends at its kernel (-1: the idle analysis has no gap there, e.g. the
// previous kernel still ran on another lane).
struct PathGpuGap {
  SliceRef kernel;  // the activity the gap ends with
  TimeNs start = 0, end = 0;
  BoundBy bound_by = BoundBy::KernelKernelOverhead;
  int cause = -1;  // IdleCause
  TimeNs length() const { return end - start; }
};
// Longest first.
std::vector<PathGpuGap> path_gpu_gaps(const EventTable& table, const CriticalPath& path, const IdleCauses& causes);

}  // namespace sl::analysis
