// Insights: the analyses' findings ranked by the time each costs, with a sentence that says what
// was measured and why it matters, and where on the timeline it happens. One ranking for every
// front end: the GUI's Insights view lists them, `sightline report` opens with the first three.
//
// A finding's cost is the time it can actually give back, so it is bounded by construction:
// overlapping instances (gaps on several streams, calls on several threads) are merged before they
// are summed, and a finding whose cost still exceeds the trace span is impossible and never ranked.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/common.h"
#include "core/analysis/idle_time.h"

namespace sl::analysis {

struct Report;

struct Insight {
  std::string kind;    // starvation, host_bound, data_loader, sync_calls, pageable_copies, ...
  std::string title;   // one line
  std::string detail;  // what was measured and why it matters
  TimeNs cost = 0;     // time the finding costs and fixing it could give back (ranking key)
  TimeNs t0 = 0, t1 = 0;  // where to look (the worst instance)
  SliceRef ref;           // a slice to select there, if any
};

struct InsightOptions {
  TimeNs starvation_gap = 500'000;   // idle gaps at least this long count as starvation
  TimeNs tiny_kernel = 10'000;       // kernels shorter than this are "tiny"
  double tiny_share = 0.3;           // ... reported when they are at least this share of kernels
  double low_overlap_pct = 50;       // communication hidden under compute below this is low
  bool drop_impossible = true;       // tests turn this off to check the costs themselves are bounded
};

// Sorted by cost, largest first; every cost is > 0 and <= trace_span(report.table).
std::vector<Insight> rank_insights(const Report& report, const InsightOptions& options = {});

// The time the whole GPU waited, by cause (DeviceIdle, core/analysis/idle_time.h).
std::vector<DeviceIdle> device_idle(const Report& report);

// First start to last end over every event of the table (CPU and GPU).
TimeNs trace_span(const EventTable& table);

// A duration for people: "850 ns", "12.4 µs", "3.21 ms", "1.87 s".
std::string duration_text(TimeNs ns);

// The text report's opening: the `top` findings ranked first with their costs, then the GPU idle
// time split by cause. Empty when the report has no insights (HTA mode, --only without them).
std::string headline_text(const Report& report, size_t top = 3);

}  // namespace sl::analysis
