#include "core/present/memory_columns.h"

#include <algorithm>
#include <unordered_map>

#include "core/present/gallop.h"

namespace sl::present {

using memory::ContextBytes;
using memory::DeviceMemory;
using memory::MemoryAnalysis;
using memory::MemoryBlock;
using memory::MemoryPoint;

namespace {

// The middle instant of column c of [t0, t1) split in `columns`.
TimeNs column_middle(TimeNs t0, TimeNs t1, int columns, int c) {
  return t0 + TimeNs((double(c) + 0.5) * double(t1 - t0) / columns);
}

// The first change point at or after t.
size_t first_point_at_or_after(const std::vector<MemoryPoint>& points, TimeNs t) {
  return size_t(std::lower_bound(points.begin(), points.end(), t, [](const MemoryPoint& p, TimeNs x) { return p.ts < x; }) -
                points.begin());
}

// Each column's maximum of allocated and reserved: the value in force as the column begins, or
// any change point inside it (a range max, so the cost does not grow with the points).
std::vector<MemoryColumn> column_maxima(const DeviceMemory& device, const RangeMinMax& allocated, const RangeMinMax& reserved,
                                        TimeNs t0, TimeNs t1, int columns) {
  std::vector<MemoryColumn> out(size_t(std::max(columns, 0)));
  const auto& points = device.timeline;
  if (columns <= 0 || t1 <= t0 || points.empty()) return out;
  double width = double(t1 - t0) / columns;
  size_t begin = first_point_at_or_after(points, t0);
  for (int c = 0; c < columns; ++c) {
    TimeNs end = c + 1 == columns ? t1 : t0 + TimeNs(double(c + 1) * width);
    size_t stop = first_point_at_or_after(points, end);
    MemoryColumn col;
    if (begin > 0) col = {points[begin - 1].allocated, points[begin - 1].reserved};  // in force at the column's start
    if (stop > begin) {
      col.allocated = std::max(col.allocated, int64_t(allocated.of(begin, stop).second));
      col.reserved = std::max(col.reserved, int64_t(reserved.of(begin, stop).second));
    }
    out[size_t(c)] = col;
    begin = stop;
  }
  return out;
}

}  // namespace

ContextBands::ContextBands(const MemoryAnalysis& analysis, const DeviceMemory& device, size_t max_bands)
    : analysis_(analysis), device_(device) {
  for (const ContextBytes& c : device.at_peak) {
    if (bands_.size() == max_bands) break;
    bands_.push_back(c.context);
  }
  std::unordered_map<StringId, size_t> band;
  for (size_t b = 0; b < bands_.size(); ++b) band[bands_[b]] = b;
  size_t other = bands_.size();
  bool any_other = false;
  // Edges per band (the "other" band last), then sorted with their running sums.
  std::vector<std::vector<std::pair<TimeNs, int64_t>>> allocs(other + 1), frees(other + 1);
  for (uint32_t row : device.block_rows) {
    const MemoryBlock& b = analysis.blocks[row];
    auto it = band.find(b.context);
    size_t k = it == band.end() ? other : it->second;
    any_other |= k == other;
    allocs[k].emplace_back(b.alloc, b.size);
    if (!b.live_at_end()) frees[k].emplace_back(b.free, b.size);
  }
  // Bytes the totals count and no block explains are drawn as allocated before the trace.
  auto before = band.find(memory::kBeforeTraceContext);
  bool unexplained_possible = device.from_totals;
  if (before != band.end()) before_band_ = before->second;
  else if (unexplained_possible) any_other = true, before_band_ = other;
  if (any_other) bands_.push_back(kOtherContexts);
  auto index = [](std::vector<std::pair<TimeNs, int64_t>>& edges) {
    std::sort(edges.begin(), edges.end());
    Edges e;
    e.ts.reserve(edges.size());
    e.bytes_before.reserve(edges.size() + 1);
    e.bytes_before.push_back(0);
    for (const auto& [t, bytes] : edges) e.ts.push_back(t), e.bytes_before.push_back(MemoryEvents::add(e.bytes_before.back(), bytes));
    return e;
  };
  for (size_t k = 0; k < bands_.size(); ++k) {
    size_t source = bands_[k] == kOtherContexts ? other : k;
    allocs_.push_back(index(allocs[source]));
    frees_.push_back(index(frees[source]));
  }
  if (before_band_ == other) before_band_ = bands_.size() - 1;
  allocated_.reserve(device.timeline.size());
  reserved_.reserve(device.timeline.size());
  for (const MemoryPoint& p : device.timeline) allocated_.push_back(double(p.allocated)), reserved_.push_back(double(p.reserved));
  allocated_max_ = RangeMinMax(allocated_);
  reserved_max_ = RangeMinMax(reserved_);
}

namespace {
size_t band_in(const std::vector<StringId>& bands, StringId context) {
  for (size_t b = 0; b < bands.size(); ++b)
    if (bands[b] == context) return b;
  return bands.empty() ? 0 : bands.size() - 1;  // the "other" band
}
}  // namespace

size_t ContextColumns::band_of(StringId context) const { return band_in(bands, context); }
size_t ContextBands::band_of(StringId context) const { return band_in(bands_, context); }

// Column middles rise left to right, so every search gallops on from the previous column's
// answer: ~2 log2(edges per column) warm reads instead of a cold binary search over all edges.
ContextColumns ContextBands::columns(TimeNs t0, TimeNs t1, int columns) const {
  ContextColumns out;
  out.t0 = t0, out.t1 = t1, out.columns = columns;
  if (columns <= 0 || t1 <= t0) return out;
  out.bands = bands_;
  size_t n = bands_.size();
  out.bytes.assign(size_t(columns) * n, 0);
  using Cursor = std::vector<TimeNs>::const_iterator;
  std::vector<Cursor> alloc_at(n), free_at(n);
  for (size_t k = 0; k < n; ++k) alloc_at[k] = allocs_[k].ts.begin(), free_at[k] = frees_[k].ts.begin();
  const auto& points = device_.timeline;
  auto point = points.begin();
  for (int c = 0; c < columns; ++c) {
    TimeNs middle = column_middle(t0, t1, columns, c);
    auto not_after = [middle](TimeNs t) { return t <= middle; };
    int64_t total = 0;
    for (size_t k = 0; k < n; ++k) {
      alloc_at[k] = gallop_partition_point(alloc_at[k], allocs_[k].ts.cend(), not_after);
      free_at[k] = gallop_partition_point(free_at[k], frees_[k].ts.cend(), not_after);
      int64_t live = allocs_[k].bytes_before[size_t(alloc_at[k] - allocs_[k].ts.cbegin())] -
                     frees_[k].bytes_before[size_t(free_at[k] - frees_[k].ts.cbegin())];
      out.bytes[size_t(c) * n + k] = live;
      total += live;
    }
    if (before_band_ < n) {
      point = gallop_partition_point(point, points.end(), [middle](const MemoryPoint& p) { return p.ts <= middle; });
      int64_t allocated = point == points.begin() ? 0 : (point - 1)->allocated;
      if (allocated > total) out.bytes[size_t(c) * n + before_band_] += allocated - total, total = allocated;
    }
    out.max_total = std::max(out.max_total, total);
  }
  return out;
}

std::vector<MemoryColumn> ContextBands::lines(TimeNs t0, TimeNs t1, int columns) const {
  return column_maxima(device_, allocated_max_, reserved_max_, t0, t1, columns);
}

int64_t ContextBands::largest_block_at(size_t band, TimeNs t) const {
  int64_t best = -1;
  for (uint32_t row : device_.block_rows) {
    const MemoryBlock& b = analysis_.blocks[row];
    if (b.alloc > t || b.free <= t || band_of(b.context) != band) continue;
    if (best < 0 || b.size > analysis_.blocks[size_t(best)].size) best = row;
  }
  return best;
}

}  // namespace sl::present
