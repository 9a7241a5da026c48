// TraceStore::pack_slice_columns and packed_slices: every track's slice columns back to back, so
// a whole trace's slices read as one array per column (the Python module's slices() hands these
// out as numpy views instead of concatenating every track: a copy of the store's slices).
#include "core/store/trace_store.h"

namespace sl {
namespace {

// Moves `column` of every track into one block, in track order. reserve(n) of an empty column
// asks its allocator for exactly n rows, which the block carves front to back: no gaps.
template <class T>
void pack_column(std::vector<Track>& tracks, Column<T> SliceColumns::*column) {
  size_t rows = 0;
  for (const Track& t : tracks) rows += (t.slices.*column).size();
  auto block = std::make_shared<ColumnBlock>(rows * sizeof(T));
  for (Track& t : tracks) {
    Column<T>& old = t.slices.*column;
    Column<T> packed{ColumnAllocator<T>(block)};
    packed.reserve(old.size());
    packed.assign(old.begin(), old.end());
    old = std::move(packed);  // the heap rows go back now: one column's worth extra at a time
  }
}

// The whole-trace span of `column` when every track's rows follow the previous track's.
template <class T>
std::optional<std::span<const T>> packed_column(const std::vector<Track>& tracks,
                                                const Column<T> SliceColumns::*column) {
  const T* first = nullptr;
  size_t rows = 0;
  for (const Track& t : tracks) {
    const Column<T>& c = t.slices.*column;
    if (c.empty()) continue;
    if (!first) first = c.data();
    else if (c.data() != first + rows) return std::nullopt;
    rows += c.size();
  }
  return std::span<const T>(first, rows);
}

}  // namespace

void TraceStore::pack_slice_columns() {
  pack_column(tracks, &SliceColumns::start);
  pack_column(tracks, &SliceColumns::dur);
  pack_column(tracks, &SliceColumns::name);
  pack_column(tracks, &SliceColumns::cat);
  pack_column(tracks, &SliceColumns::parent);
  pack_column(tracks, &SliceColumns::args);
  pack_column(tracks, &SliceColumns::corr);
  pack_column(tracks, &SliceColumns::depth);
  pack_column(tracks, &SliceColumns::lane);
}

std::optional<TraceStore::PackedSlices> TraceStore::packed_slices() const {
  auto start = packed_column(tracks, &SliceColumns::start), dur = packed_column(tracks, &SliceColumns::dur);
  auto name = packed_column(tracks, &SliceColumns::name), cat = packed_column(tracks, &SliceColumns::cat);
  auto corr = packed_column(tracks, &SliceColumns::corr);
  auto depth = packed_column(tracks, &SliceColumns::depth), lane = packed_column(tracks, &SliceColumns::lane);
  if (!start || !dur || !name || !cat || !corr || !depth || !lane) return std::nullopt;
  return PackedSlices{*start, *dur, *name, *cat, *corr, *depth, *lane};
}

}  // namespace sl
