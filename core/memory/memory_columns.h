// What the Memory view draws, bounded by pixels: the bytes live per allocating context in each
// pixel column of a time range (PyTorch's "active memory timeline", with blocks grouped into a
// few context bands so a million blocks stay readable), and the block under the mouse. Headless,
// so tests and benches call it without a window.
#pragma once

#include <cstdint>
#include <vector>

#include "core/memory/memory_analysis.h"

namespace sl::memory {

constexpr StringId kOtherContexts = UINT32_MAX - 1;  // the band of every context not shown on its own

struct ContextColumns {
  TimeNs t0 = 0, t1 = 0;
  int columns = 0;
  std::vector<StringId> bands;  // bottom first; the last is kOtherContexts when some context is not shown alone
  std::vector<int64_t> bytes;   // bytes[column * bands.size() + band]: live at the column's middle
  int64_t max_total = 0;        // the largest column total (the plot's scale)
  size_t band_count() const { return bands.size(); }
  int64_t at(int column, size_t band) const { return bytes[size_t(column) * bands.size() + band]; }
};

// Bands: the device's `max_bands` largest contexts at the peak, then one band for the rest.
// Bytes the totals count and no block explains join the "(allocated before the trace)" band, so
// the bands add up to allocated at each column's middle.
// A column holds the blocks live at its middle instant (sampling, not the column's maximum: the
// allocated line drawn over the bands shows each column's maximum). O(device blocks + columns ×
// bands); the view calls it when the range or width changes, not every frame.
ContextColumns context_columns(const MemoryAnalysis& analysis, const DeviceMemory& device, TimeNs t0, TimeNs t1, int columns,
                               size_t max_bands = 8);

// The band a context is drawn in (index into columns.bands).
size_t band_of(const ContextColumns& columns, StringId context);

// The largest block of `band` live at `t` on the device (index into analysis.blocks), or -1.
int64_t largest_block_at(const MemoryAnalysis& analysis, const DeviceMemory& device, const ContextColumns& columns, size_t band,
                         TimeNs t);

// Allocated and reserved per column: the most each reached inside the column's time range
// (a spike one nanosecond wide still shows), from the device's change points.
struct MemoryColumn {
  int64_t allocated = 0, reserved = 0;
};
std::vector<MemoryColumn> memory_columns(const DeviceMemory& device, TimeNs t0, TimeNs t1, int columns);

}  // namespace sl::memory
