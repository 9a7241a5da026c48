// Insights: the analyses' findings ranked by the time each costs, with a sentence that says what
// was measured and why it matters, and where on the timeline it happens. One ranking for every
// front end: the GUI's Insights view lists them, `sightline report` opens with the first three.
//
// A finding's cost is the time its fix could give back (§5b), read from the idle ledger: idle-type
// findings claim the ledger entries of their cause, and findings are ranked by claiming: each in
// turn takes what no finding ranked before it has taken, so the costs are disjoint and add up to
// at most the device-wide idle time (plus the compute-side findings, bounded by the GPU time of
// what they name), never more than the trace span.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/common.h"
#include "core/analysis/idle_time.h"

namespace sl::analysis {

struct Report;

struct Insight {
  // data_loader, sync_calls, host_compute, launch_bound, host_untraced, capture_warmup,
  // cross_stream_wait, collective_wait, starvation, fusion, pageable_copies, low_overlap
  std::string kind;
  std::string title;   // one line
  std::string detail;  // what was measured and why it matters
  TimeNs cost = 0;     // time the finding costs and fixing it could give back (ranking key)
  TimeNs t0 = 0, t1 = 0;  // where to look (the worst instance)
  SliceRef ref;           // a slice to select there, if any
};

struct InsightOptions {
  TimeNs starvation_gap = 500'000;   // idle gaps at least this long are named in the detail lines
  TimeNs tiny_kernel = 10'000;       // kernels shorter than this are "tiny"
  double tiny_share = 0.3;           // ... reported when they are at least this share of kernels
  double low_overlap_pct = 50;       // communication hidden under compute below this is low
  bool drop_impossible = true;       // tests turn this off to check the costs themselves are bounded
};

// Sorted by cost, largest first; every cost is > 0 and <= trace_span(report.table).
std::vector<Insight> rank_insights(const Report& report, const InsightOptions& options = {});

// HTA's temporal idle share, percent (§1 in HTA mode), from a Sightline table: every GPU row but
// GPU user annotations (Kineto writes them without `args.stream`, so HTA puts them on the CPU
// side), less those HTA's last-step filter drops (with >= 2 ProfilerStep names: rows whose launch does not
// start before the last step), rounded as HTA rounds (ceil start, floor end, µs) when any time is
// fractional, merged, over their first start .. last end. Null without GPU rows. It matches
// `--mode hta`'s figure on most corpus traces and within 1 point on all (the HTA table's other row
// quirks, such as CPU ops carrying args.stream counted as GPU rows, are not replayed: building that
// table costs more than the whole report).
std::optional<double> hta_idle_share(const EventTable& table);

// The trace span of the table's store: first to last event (core/report/trace_info.h), as info says.
TimeNs trace_span(const EventTable& table);

// A duration for people: "850 ns", "12.4 µs", "3.21 ms", "1.87 s".
std::string duration_text(TimeNs ns);

// The text report's opening: the idle window, the `top` findings ranked first with their costs,
// then the GPU idle time split by cause (with HTA's figure beside it when they differ). Empty when
// the report has no insights (HTA mode, --only without them).
std::string headline_text(const Report& report, size_t top = 3);

}  // namespace sl::analysis
