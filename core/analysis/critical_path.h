// §10 Critical path of one annotation instance (by default one ProfilerStep iteration): an event
// graph (start and end node per CPU op, runtime call and GPU activity) and its longest weighted
// path, with each path edge attributed to what bounds it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/common.h"

namespace sl::analysis {

enum class BoundBy : uint8_t {
  Dependency,             // zero-weight edge (sync, cross-stream wait); HTA's empty bound_by
  CpuBound,               // nesting / sequence on a CPU thread
  GpuCompute,             // a kernel's, copy's or set's start → end
  GpuCommunication,       // a communication kernel's start → end
  KernelLaunchOverhead,   // launch call start → kernel start (kernel found its stream empty)
  KernelKernelOverhead,   // previous kernel end → kernel start on the same stream
};
std::string_view bound_by_name(BoundBy b);  // "cpu_bound", ...; "" for Dependency (as HTA)

struct CriticalPathOptions {
  std::string annotation = "ProfilerStep";  // prefix of the annotation's name ("ProfilerStep#3")
  std::optional<int64_t> instance;           // index in start order; default: first complete one
  // The user named the annotation (--annotation): when the trace lacks it, that is an error. When
  // the default is absent the whole trace is the one instance, with a note (§10, HTA's
  // annotation='').
  bool annotation_explicit = false;
};

struct CriticalPathEdge {
  uint32_t from_row = 0, to_row = 0;  // EventTable rows of the two nodes
  bool from_start = false, to_start = false;
  TimeNs weight = 0;
  BoundBy bound_by = BoundBy::Dependency;
};

struct CriticalPathShare {
  BoundBy bound_by;
  TimeNs sum = 0;
  uint64_t count = 0;
  double pct = 0;  // of the path length
};

struct CriticalPath {
  bool valid = false;
  std::string note;  // why not valid, or (valid) how the instance was chosen
  int64_t rank = 0;
  std::string annotation;
  int64_t instance = 0;
  TimeNs start = 0, end = 0;  // first and last node of the path
  TimeNs length = 0;          // sum of the path's edge weights
  uint64_t graph_nodes = 0, graph_edges = 0;
  std::vector<CriticalPathEdge> path;     // in path order
  std::vector<CriticalPathShare> summary;  // in BoundBy order, only kinds seen on the path
};

CriticalPath critical_path(const EventTable& table, const CriticalPathOptions& options = {});

}  // namespace sl::analysis
