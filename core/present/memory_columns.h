// What the Memory view draws, bounded by pixels: the bytes live per allocating context in each
// pixel column of a time range (PyTorch's "active memory timeline", with blocks grouped into a
// few context bands so a million blocks stay readable), allocated and reserved per column, and
// the block under the mouse. Headless, so tests and benches call it without a window.
//
// An index built once per device (ContextBands) answers any range in O(columns × bands × log n):
// per band, the blocks' alloc and free times sorted with running byte sums, so the bytes live at
// an instant are two binary searches; and a range max over the allocated/reserved series. A
// frame's cost is then set by its width, not by the million blocks under it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/memory/memory_analysis.h"
#include "core/present/range_min_max.h"

namespace sl::present {

constexpr StringId kOtherContexts = UINT32_MAX - 1;  // the band of every context not shown on its own

struct ContextColumns {
  TimeNs t0 = 0, t1 = 0;
  int columns = 0;
  std::vector<StringId> bands;  // bottom first; the last is kOtherContexts when some context is not shown alone
  std::vector<int64_t> bytes;   // bytes[column * bands.size() + band]: live at the column's middle
  int64_t max_total = 0;        // the largest column total
  size_t band_count() const { return bands.size(); }
  int64_t at(int column, size_t band) const { return bytes[size_t(column) * bands.size() + band]; }
  size_t band_of(StringId context) const;  // the band a context is drawn in (its own, or the "other" band)
};

// Allocated and reserved per column: the most each reached inside the column's time range (a
// spike one nanosecond wide still shows), from the device's change points.
struct MemoryColumn {
  int64_t allocated = 0, reserved = 0;
};

class ContextBands {
public:
  // Bands: the device's `max_bands` largest contexts at the peak, then one band for the rest.
  // Bytes the totals count and no block explains join the "(allocated before the trace)" band,
  // so the bands add up to allocated at each column's middle. Both references must outlive it.
  ContextBands(const memory::MemoryAnalysis& analysis, const memory::DeviceMemory& device, size_t max_bands = 8);
  ContextBands(const ContextBands&) = delete;  // its range maxima point into its own arrays
  ContextBands& operator=(const ContextBands&) = delete;

  // A column holds the blocks live at its middle instant (sampling, not the column's maximum:
  // the allocated line drawn over the bands shows each column's maximum).
  ContextColumns columns(TimeNs t0, TimeNs t1, int columns) const;
  std::vector<MemoryColumn> lines(TimeNs t0, TimeNs t1, int columns) const;
  // The band a context is drawn in (its own, or the "other" band).
  size_t band_of(StringId context) const;
  // The largest block of `band` live at `t` (index into analysis.blocks), or -1. O(device blocks):
  // for the hover, not for every column.
  int64_t largest_block_at(size_t band, TimeNs t) const;

private:
  struct Edges {  // block edges of one band, in time order, with the bytes of the edges before each
    std::vector<TimeNs> ts;
    std::vector<int64_t> bytes_before;  // size ts.size() + 1
  };

  const memory::MemoryAnalysis& analysis_;
  const memory::DeviceMemory& device_;
  std::vector<StringId> bands_;
  size_t before_band_ = SIZE_MAX;  // the band of "(allocated before the trace)", or the "other" band
  std::vector<Edges> allocs_, frees_;  // per band
  std::vector<double> allocated_, reserved_;  // the change points' values, for the range maxima
  RangeMinMax allocated_max_, reserved_max_;
};

}  // namespace sl::present
