// Memory events: every allocator event a trace or a memory snapshot holds, one row each, as
// columns (structs of arrays) beside the store's tracks. Kineto `[memory]` instants (which also
// stay on their thread's track as instants) and PyTorch memory snapshots' `device_traces` fill
// the same table, so the memory analyses (core/memory/) read one shape whatever the source.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/store/string_pool.h"
#include "core/store/track_columns.h"

namespace sl {

// What an event did. Kineto writes only allocations and frees (the sign of `Bytes` tells them
// apart); a snapshot's trace entries name their action.
enum class MemoryAction : uint8_t {
  Alloc,          // a block became allocated (bytes > 0)
  Free,           // a block stopped being allocated (Kineto's negative Bytes; a snapshot's free_completed)
  FreeRequested,  // snapshot: the program let go; the allocator frees it once its streams are done
  SegmentAlloc,   // reserved memory grew (cudaMalloc of a segment)
  SegmentFree,    // reserved memory shrank
  SegmentMap,     // expandable segments: pages mapped into a segment
  SegmentUnmap,
  Snapshot,       // a snapshot was taken here
  Oom,            // the allocator ran out of memory here
};
std::string_view memory_action_name(MemoryAction a);

// Kineto's `Device Type` values (c10::DeviceType).
enum MemoryDeviceType : int8_t { kMemoryCpu = 0, kMemoryCuda = 1, kMemoryHip = 6 };

// Event flags.
enum MemoryEventFlags : uint8_t {
  // Not an event of the source: a block (or the reserved memory) that existed before recording
  // began, placed at the first recorded event by the pre-existing rule (analyses.md §11).
  kMemoryPreExisting = 1,
};

class MemoryEvents {
public:
  static constexpr int64_t kUnknown = INT64_MIN;  // a total the event does not carry
  // Sizes and totals beyond this (1 PiB) are no real allocator's: importers clamp them (and count
  // an issue), so that sums over many events cannot overflow.
  static constexpr int64_t kMaxBytes = int64_t(1) << 50;
  static int64_t clamp_bytes(int64_t v, bool& clamped) {
    if (v > kMaxBytes) return clamped = true, kMaxBytes;
    if (v < -kMaxBytes) return clamped = true, -kMaxBytes;
    return v;
  }
  // a + b, saturating at ±INT64_MAX: sums of clamped sizes over any number of events stay defined.
  static int64_t add(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (!__builtin_add_overflow(a, b, &sum)) return sum;
    return b > 0 ? INT64_MAX : -INT64_MAX;
  }

  // --- one row per event, sorted by time (stable: the source's order within a time) ---
  std::vector<TimeNs> ts;                // ns since the trace start
  std::vector<uint64_t> addr;            // 0 when the source gives none (old Kineto traces)
  std::vector<int64_t> bytes;            // signed: + allocations, - frees (segment events: the segment's size, signed)
  std::vector<int64_t> total_allocated;  // as the event says, or kUnknown
  std::vector<int64_t> total_reserved;   // as the event says, or kUnknown
  std::vector<int8_t> device_type;       // MemoryDeviceType
  std::vector<int32_t> device_id;        // -1 for the CPU
  std::vector<uint32_t> track;           // the thread's track (Kineto), or kNone
  std::vector<int64_t> stream;           // snapshot: the stream, else -1
  std::vector<uint32_t> stack;           // snapshot: row of `stacks`, else kNone
  std::vector<uint8_t> action;           // MemoryAction
  std::vector<uint8_t> flags;            // MemoryEventFlags

  // --- stacks (snapshot frames), innermost frame first: a CSR of frame strings ---
  // Stack s is frames[stack_offsets[s] .. stack_offsets[s + 1]); each frame is "name (file:line)".
  std::vector<uint32_t> stack_offsets{0};
  std::vector<StringId> frames;

  size_t size() const { return ts.size(); }
  bool empty() const { return ts.empty(); }
  size_t stack_count() const { return stack_offsets.size() - 1; }
  MemoryAction action_of(size_t row) const { return MemoryAction(action[row]); }

  struct Row {
    TimeNs ts = 0;
    uint64_t addr = 0;
    int64_t bytes = 0;
    int64_t total_allocated = kUnknown, total_reserved = kUnknown;
    int8_t device_type = kMemoryCuda;
    int32_t device_id = 0;
    uint32_t track = kNone;
    int64_t stream = -1;
    uint32_t stack = kNone;
    MemoryAction action = MemoryAction::Alloc;
    uint8_t flags = 0;
  };
  void append(const Row& r);
  uint32_t add_stack(const std::vector<StringId>& frames_innermost_first);
  // Sorts the rows by time, keeping the order of rows at equal times (call once all are in).
  void sort_by_time();
  // Shifts every time by -origin (loaders append absolute times).
  void rebase(TimeNs origin);
  size_t bytes_held() const;
};

}  // namespace sl
