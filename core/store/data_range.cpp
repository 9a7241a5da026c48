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

}  // namespace sl
