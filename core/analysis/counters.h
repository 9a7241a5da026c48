// §7 Counters derived from events: launch-queue length per stream, memory-copy bandwidth per copy
// kind, and memory in use per device from the profiler's `[memory]` events.
#pragma once

#include <string>

#include "core/analysis/common.h"

namespace sl::analysis {

struct QueuePoint {
  TimeNs ts = 0;
  int64_t length = 0;
  uint32_t row = 0;  // the launch or activity that changed it
};

struct QueueLengthStream {
  int64_t rank = 0, stream = 0;
  std::vector<QueuePoint> series;  // step function, sorted by time
  Describe summary;                // over the change points
  TimeNs time_at_max = 0;          // time with length >= max_queue_length
};

struct QueueLengthOptions {
  int64_t max_queue_length = 1024;
  bool summary = true;  // false: the series only (no describe(), no time at max)
};

std::vector<QueueLengthStream> queue_length(const EventTable& table, const QueueLengthOptions& o = {});

// (HTA) the runtime calls HTA's symbol table counts as launches (its runtime-launch mask).
bool is_hta_runtime_launch_name(std::string_view name);

struct BandwidthPoint {
  TimeNs ts = 0;
  double gbps = 0;
};

struct MemoryBandwidthKind {
  int64_t rank = 0;
  std::string copy_kind;  // "Memcpy HtoD", "Memset", ...
  std::vector<BandwidthPoint> series;
  Describe summary;       // over points with a positive value (GB/s)
};

std::vector<MemoryBandwidthKind> memory_bandwidth(const EventTable& table);

struct MemoryInUse {
  int64_t device = -1;
  uint64_t samples = 0;
  double max_allocated = 0, max_reserved = 0, last_allocated = 0, last_reserved = 0;  // bytes
  std::vector<std::pair<TimeNs, double>> allocated;  // series
};

std::vector<MemoryInUse> memory_in_use(const TraceStore& store);

}  // namespace sl::analysis
