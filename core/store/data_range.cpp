#include "core/store/data_range.h"

#include <algorithm>

namespace sl {

std::pair<TimeNs, TimeNs> data_time_range(const TraceStore& store) {
  TimeNs start = store.end_ns, end = 0;
  for (const Track& t : store.tracks)
    if (t.slices.size()) {
      start = std::min(start, t.slices.start[0]);  // slices are sorted by start
      end = std::max(end, t.max_end_prefix.back());
    }
  if (end <= start) return {0, store.end_ns};
  return {start, end};
}

std::optional<std::pair<TimeNs, TimeNs>> gpu_time_range(const TraceStore& store) {
  std::optional<std::pair<TimeNs, TimeNs>> range;
  for (const Track& t : store.tracks)
    if (t.kind == TrackKind::GpuStream && t.slices.size()) {
      TimeNs a = t.slices.start[0], b = t.max_end_prefix.back();
      range = range ? std::pair{std::min(range->first, a), std::max(range->second, b)} : std::pair{a, b};
    }
  return range;
}

}  // namespace sl
