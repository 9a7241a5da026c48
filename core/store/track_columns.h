// A track and its columns (slices, instants), the unit the store sorts, nests and indexes:
// everything that orders one track's rows (core/store/slice_order.h) needs, without the store.
#pragma once

#include <cstdint>
#include <vector>

#include "core/store/column.h"
#include "core/store/string_pool.h"

namespace sl {

using TimeNs = int64_t;
constexpr uint32_t kNone = UINT32_MAX;

// A slice anywhere in the store: its track and its row in that track's columns.
struct SliceRef {
  uint32_t track = kNone;
  uint32_t index = kNone;
  bool valid() const { return track != kNone; }
  friend bool operator==(SliceRef, SliceRef) = default;
  friend auto operator<=>(SliceRef, SliceRef) = default;
};

// Per-track slice columns, sorted by (start, longer first) after finalize(). Column (column.h) is a
// std::vector that TraceStore::pack_slice_columns can place with every other track's rows.
struct SliceColumns {
  Column<TimeNs> start;      // ns since trace start
  Column<TimeNs> dur;        // ns, >= 0
  Column<StringId> name;
  Column<StringId> cat;
  Column<uint32_t> parent;   // row of the enclosing slice in this track, or kNone
  Column<uint32_t> args;     // row in TraceStore's args table, or kNone
  Column<uint32_t> corr;     // row in TraceStore's correlation table, or kNone
  Column<uint16_t> depth;    // nesting depth within its lane group
  Column<uint16_t> lane;     // lane group: 0 nests cleanly, >0 holds partial overlaps

  size_t size() const { return start.size(); }
  TimeNs end(size_t row) const { return start[row] + dur[row]; }
};
inline constexpr size_t kSliceBytes = 2 * sizeof(TimeNs) + 5 * sizeof(uint32_t) + 2 * sizeof(uint16_t);
static_assert(kSliceBytes <= 40, "a slice must fit in 40 bytes of columns");

// Point events (`i`/`I`/`R`, async `n`, legacy `T`), per track.
struct InstantColumns {
  std::vector<TimeNs> ts;
  std::vector<StringId> name;
  std::vector<StringId> cat;
  std::vector<uint32_t> args;
  std::vector<char> scope;  // 'g' global, 'p' process, 't' thread
  size_t size() const { return ts.size(); }
};

enum class TrackKind : uint8_t { CpuThread, GpuStream, Async };

struct Track {
  TrackKind kind = TrackKind::CpuThread;
  uint32_t process = kNone;
  StringId name = 0;          // thread_name, "stream 7", or the async name
  StringId tid_text = 0;      // the tid as written (opaque key)
  int64_t tid = 0;            // numeric tid when it is a number (or "stream N")
  bool tid_is_number = false;
  int64_t sort_index = 0;
  bool has_sort_index = false;
  int64_t device = -1;        // GPU tracks: device id
  int64_t stream = -1;        // GPU tracks: stream id (-1: device-wide, e.g. context syncs)
  bool gpu_work = false;      // holds kernels, copies, sets or GPU annotations
  SliceColumns slices;
  InstantColumns instants;
  // Derived by finalize():
  std::vector<TimeNs> max_end_prefix;   // max end of rows [0, i], for time queries
  std::vector<uint16_t> lane_depths;    // per lane group: max depth + 1
  uint32_t overlapping = 0;             // slices placed in lane groups > 0

  uint32_t row_count() const;           // lanes needed to draw every slice
  uint32_t row_of(uint32_t slice) const;  // visual row of a slice (lane group offset + depth)
};

}  // namespace sl
