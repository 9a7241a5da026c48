#include "core/memory/memory_columns.h"

#include <algorithm>
#include <unordered_map>

namespace sl::memory {

namespace {

// The middle instant of column c of [t0, t1) split in `columns`.
TimeNs column_middle(TimeNs t0, TimeNs t1, int columns, int c) {
  return t0 + TimeNs((double(c) + 0.5) * double(t1 - t0) / columns);
}

// The first column whose middle is at or after t (columns when none is).
int first_column_at_or_after(TimeNs t0, TimeNs t1, int columns, TimeNs t) {
  if (t <= t0) return 0;
  double width = double(t1 - t0) / columns;
  int c = std::clamp(int(double(t - t0) / width - 0.5), 0, columns);
  while (c > 0 && column_middle(t0, t1, columns, c - 1) >= t) --c;
  while (c < columns && column_middle(t0, t1, columns, c) < t) ++c;
  return c;
}

// Per column: allocated at its middle (the value in force there) minus the bytes of the blocks
// live there (the prefix sums of `delta`, `stride` bands a column), when positive.
std::vector<int64_t> unexplained_bytes(const DeviceMemory& device, TimeNs t0, TimeNs t1, int columns,
                                       const std::vector<int64_t>& delta, size_t stride) {
  std::vector<int64_t> out(size_t(columns), 0);
  const auto& points = device.timeline;
  auto it = std::upper_bound(points.begin(), points.end(), t0, [](TimeNs t, const MemoryPoint& p) { return t < p.ts; });
  int64_t allocated = it == points.begin() ? 0 : (it - 1)->allocated, blocks = 0;
  for (int c = 0; c < columns; ++c) {
    TimeNs middle = column_middle(t0, t1, columns, c);
    for (; it != points.end() && it->ts <= middle; ++it) allocated = it->allocated;
    for (size_t k = 0; k < stride; ++k) blocks += delta[size_t(c) * stride + k];
    out[size_t(c)] = std::max<int64_t>(0, allocated - blocks);
  }
  return out;
}

}  // namespace

size_t band_of(const ContextColumns& columns, StringId context) {
  for (size_t b = 0; b < columns.bands.size(); ++b)
    if (columns.bands[b] == context) return b;
  return columns.bands.empty() ? 0 : columns.bands.size() - 1;  // the "other" band
}

ContextColumns context_columns(const MemoryAnalysis& analysis, const DeviceMemory& device, TimeNs t0, TimeNs t1, int columns,
                               size_t max_bands) {
  ContextColumns out;
  out.t0 = t0, out.t1 = t1, out.columns = columns;
  if (columns <= 0 || t1 <= t0) return out;
  for (const ContextBytes& c : device.at_peak) {
    if (out.bands.size() == max_bands) break;
    out.bands.push_back(c.context);
  }
  std::unordered_map<StringId, size_t> band;
  for (size_t b = 0; b < out.bands.size(); ++b) band[out.bands[b]] = b;
  size_t other = out.bands.size();
  bool any_other = false;
  // A block adds its bytes to the columns whose middle lies in [alloc, free): a difference array
  // per band, then one prefix sum, so the cost is one step per block plus one per cell.
  std::vector<int64_t> delta(size_t(columns + 1) * (max_bands + 1), 0);
  for (uint32_t row : device.block_rows) {
    const MemoryBlock& b = analysis.blocks[row];
    if (b.free <= t0 || b.alloc >= t1) continue;
    int first = first_column_at_or_after(t0, t1, columns, b.alloc);
    int last = b.live_at_end() ? columns : first_column_at_or_after(t0, t1, columns, b.free);
    if (first >= last) continue;
    auto it = band.find(b.context);
    size_t k = it == band.end() ? other : it->second;
    any_other |= k == other;
    delta[size_t(first) * (max_bands + 1) + k] += b.size;
    delta[size_t(last) * (max_bands + 1) + k] -= b.size;
  }
  // Bytes the totals count that no block explains (allocated before the trace, never freed in
  // it) go to the "before the trace" band, as the at-peak table counts them: the bands then add up
  // to allocated at each column's middle.
  std::vector<int64_t> unexplained = unexplained_bytes(device, t0, t1, columns, delta, max_bands + 1);
  bool any_unexplained = std::any_of(unexplained.begin(), unexplained.end(), [](int64_t v) { return v > 0; });
  size_t before = band.count(kBeforeTraceContext) ? band[kBeforeTraceContext] : other;
  any_other |= any_unexplained && before == other;
  if (any_other) out.bands.push_back(kOtherContexts);
  size_t n = out.bands.size();
  out.bytes.assign(size_t(columns) * n, 0);
  std::vector<int64_t> running(max_bands + 1, 0);
  for (int c = 0; c < columns; ++c) {
    int64_t total = 0;
    for (size_t k = 0; k < n; ++k) {
      size_t source = out.bands[k] == kOtherContexts ? other : k;
      running[source] += delta[size_t(c) * (max_bands + 1) + source];
      out.bytes[size_t(c) * n + k] = running[source];
      total += running[source];
    }
    if (unexplained[size_t(c)] > 0) {
      size_t k = before == other ? n - 1 : before;
      out.bytes[size_t(c) * n + k] += unexplained[size_t(c)];
      total += unexplained[size_t(c)];
    }
    out.max_total = std::max(out.max_total, total);
  }
  return out;
}

int64_t largest_block_at(const MemoryAnalysis& analysis, const DeviceMemory& device, const ContextColumns& columns, size_t band,
                         TimeNs t) {
  int64_t best = -1;
  for (uint32_t row : device.block_rows) {
    const MemoryBlock& b = analysis.blocks[row];
    if (b.alloc > t || b.free <= t || band_of(columns, b.context) != band) continue;
    if (best < 0 || b.size > analysis.blocks[size_t(best)].size) best = row;
  }
  return best;
}

std::vector<MemoryColumn> memory_columns(const DeviceMemory& device, TimeNs t0, TimeNs t1, int columns) {
  std::vector<MemoryColumn> out(size_t(std::max(columns, 0)));
  if (columns <= 0 || t1 <= t0 || device.timeline.empty()) return out;
  const auto& points = device.timeline;
  auto it = std::upper_bound(points.begin(), points.end(), t0, [](TimeNs t, const MemoryPoint& p) { return t < p.ts; });
  MemoryPoint current = it == points.begin() ? MemoryPoint{} : *(it - 1);  // the value in force at t0
  double width = double(t1 - t0) / columns;
  for (int c = 0; c < columns; ++c) {
    TimeNs end = c + 1 == columns ? t1 : t0 + TimeNs(double(c + 1) * width);
    MemoryColumn col{current.allocated, current.reserved};
    for (; it != points.end() && it->ts < end; ++it) {
      current = *it;
      col.allocated = std::max(col.allocated, current.allocated);
      col.reserved = std::max(col.reserved, current.reserved);
    }
    out[size_t(c)] = col;
  }
  return out;
}

}  // namespace sl::memory
