// The time a trace's data covers, as opposed to its metadata: Kineto writes markers such as
// "Record Window End" well after the last event; framing the trace on them shows empty time.
#pragma once

#include <optional>
#include <utility>

#include "core/store/trace_store.h"

namespace sl {

// First slice start to last slice end, in ns since the trace start; [0, end_ns] when the trace
// holds no slice (only instants or counters).
std::pair<TimeNs, TimeNs> data_time_range(const TraceStore& store);

// First GPU slice start to last GPU slice end; nullopt without GPU activity. Nsight reports
// record seconds of OS and runtime activity around a short burst of kernels: the timeline opens
// on this range there, as a Kineto trace's profiling window already is its GPU work.
std::optional<std::pair<TimeNs, TimeNs>> gpu_time_range(const TraceStore& store);

}  // namespace sl
