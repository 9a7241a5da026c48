// A Kineto trace and a PyTorch memory snapshot of the same run, opened together (`--memory
// SNAPSHOT`): the snapshot's memory events move into the trace's store, on the trace's clock.
#pragma once

#include <optional>
#include <string>

#include "core/store/trace_store.h"

namespace sl::memory {

// Replaces `trace`'s memory table by `snapshot`'s events (the trace's own `[memory]` instants
// stay on their threads), their frames interned into the trace's strings. Aligned by wall clock
// when both stores' origins are wall-clock times (2000..2100) and no offset is given; else the
// snapshot's first entry goes `offset_ns` (default 0) after the trace start. Returns the sentence
// that says which alignment was used.
std::string attach_memory_snapshot(TraceStore& trace, const TraceStore& snapshot, std::optional<TimeNs> offset_ns);

}  // namespace sl::memory
