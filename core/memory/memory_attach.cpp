#include "core/memory/memory_attach.h"

#include <algorithm>
#include <unordered_map>

#include "core/text/format.h"

namespace sl::memory {

namespace {

// Origins that read as nanoseconds since 1970 between 2000 and 2100: a wall clock. Kineto writes
// such times where the profiler used the system clock; a snapshot's time_us always is one.
bool wall_clock(TimeNs origin) { return origin >= 946'684'800'000'000'000 && origin <= 4'102'444'800'000'000'000; }

}  // namespace

std::string attach_memory_snapshot(TraceStore& trace, const TraceStore& snapshot, std::optional<TimeNs> offset_ns) {
  const MemoryEvents& from = snapshot.memory;
  MemoryEvents& to = trace.memory;
  size_t replaced = to.size();
  TimeNs shift = 0;
  std::string how;
  if (!offset_ns && wall_clock(trace.origin_ns) && wall_clock(snapshot.origin_ns)) {
    shift = snapshot.origin_ns - trace.origin_ns;
    how = "aligned by wall clock (the snapshot's first entry " + human::duration(shift) + " after the trace start)";
  } else {
    shift = offset_ns.value_or(0);
    how = std::string("aligned by offset: the snapshot's first entry ") + human::duration(shift) + " after the trace start (" +
          (offset_ns ? "--memory-offset" : "the trace's clock is not wall-clock time; --memory-offset moves it") + ")";
  }
  to = MemoryEvents{};
  std::unordered_map<StringId, StringId> strings;
  for (size_t s = 0; s < from.stack_count(); ++s) {
    std::vector<StringId> frames;
    for (uint32_t f = from.stack_offsets[s]; f < from.stack_offsets[s + 1]; ++f) {
      auto [it, fresh] = strings.emplace(from.frames[f], 0);
      if (fresh) it->second = trace.strings.intern(snapshot.strings.view(from.frames[f]));
      frames.push_back(it->second);
    }
    to.add_stack(frames);
  }
  const TimeNs limit = TimeNs(1) << 62;
  for (size_t i = 0; i < from.size(); ++i) {
    MemoryEvents::Row r;
    r.ts = std::clamp<TimeNs>(MemoryEvents::add(from.ts[i], shift), -limit, limit);
    r.addr = from.addr[i];
    r.bytes = from.bytes[i];
    r.total_allocated = from.total_allocated[i];
    r.total_reserved = from.total_reserved[i];
    r.device_type = from.device_type[i];
    r.device_id = from.device_id[i];
    r.stream = from.stream[i];
    r.stack = from.stack[i];
    r.action = from.action_of(i);
    r.flags = from.flags[i];
    to.append(r);
  }
  to.sort_by_time();
  std::string note = "memory: " + std::to_string(from.size()) + " events from the snapshot " + snapshot.meta.file + ", " + how;
  if (replaced) note += "; the trace's own " + std::to_string(replaced) + " [memory] events stay on their threads, the memory tables read the snapshot";
  return note;
}

}  // namespace sl::memory
