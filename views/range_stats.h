// Area selection: what ran in a time range, aggregated by name (count, total, self, average,
// share), with durations clipped to the range.
#pragma once

#include <string>
#include <vector>

#include "core/store/trace_store.h"

namespace sl::views {

struct RangeRow {
  StringId name = 0;
  uint64_t count = 0;
  TimeNs total = 0, self = 0;  // clipped to the range
  double share = 0;            // of the summed total
};

// Every track, or only `track` (the idle-gap hover: what the launching thread did meanwhile).
std::vector<RangeRow> aggregate_range(const TraceStore& store, TimeNs t0, TimeNs t1, uint32_t track = kNone);
// The slices of `name` that intersect the range, in time order (for highlighting).
std::vector<SliceRef> slices_in_range(const TraceStore& store, StringId name, TimeNs t0, TimeNs t1);

class TimelineView;
// A window listing the aggregation of the timeline's selected range; closes when it is cleared.
void draw_range_window(const TraceStore& store, TimelineView& timeline);

}  // namespace sl::views
