// The time a trace's data covers, as opposed to its metadata: Kineto writes markers such as
// "Record Window End" well after the last event; framing the trace on them shows empty time.
#pragma once

#include <utility>

#include "core/store/trace_store.h"

namespace sl {

// First slice start to last slice end, in ns since the trace start; [0, end_ns] when the trace
// holds no slice (only instants or counters).
std::pair<TimeNs, TimeNs> data_time_range(const TraceStore& store);

}  // namespace sl
