#include "core/analysis/temporal_breakdown.h"

#include "core/analysis/idle_time.h"

namespace sl::analysis {

namespace {

// Fills idle / compute / non-compute of `out` from G's intervals over [window.start, window.end).
// The window always contains G (idle_window widens to it; HTA's is G's own span).
void split(const EventTable& t, Interval window, std::vector<Interval> g, std::vector<Interval> compute,
           TemporalSplit& out) {
  out.span = window.end - window.start;
  out.idle = out.span - total_length(merge_intervals(std::move(g)));
  out.compute = total_length(merge_intervals(std::move(compute)));
  out.non_compute = out.span - out.compute - out.idle;
  if (out.span <= 0) return;
  double s = double(out.span);
  if (t.mode == Mode::Hta) {
    // HTA divides first, then rounds 100 * ratio to 2 decimals.
    out.idle_pct = round_to(100.0 * (double(out.idle) / s), 2);
    out.compute_pct = round_to(100.0 * (double(out.compute) / s), 2);
    out.non_compute_pct = round_to(100.0 * (double(out.non_compute) / s), 2);
  } else {
    out.idle_pct = 100.0 * double(out.idle) / s;
    out.compute_pct = 100.0 * double(out.compute) / s;
    out.non_compute_pct = 100.0 * double(out.non_compute) / s;
  }
}

// The intervals of `rows` (only GPU work when `work_only`: no annotations), and of their
// COMPUTATION subset.
void collect_activity(const EventTable& t, const std::vector<uint32_t>& rows, bool work_only, std::vector<Interval>& all,
                      std::vector<Interval>& compute) {
  for (uint32_t i : rows) {
    const Row& r = t.rows[i];
    if (work_only && !is_gpu_work(t, r)) continue;
    all.push_back({r.ts, r.end()});
    if (kernel_type(t, r) == KernelType::Computation) compute.push_back({r.ts, r.end()});
  }
}

TemporalBreakdown hta_breakdown(const EventTable& t) {
  TemporalBreakdown out;
  out.rank = t.rank;
  // (HTA) G = every row on the GPU side (stream != -1, any category, annotations and sync included).
  std::vector<Interval> all, compute;
  collect_activity(t, t.gpu, false, all, compute);
  if (all.empty()) return out;
  std::vector<Interval> merged = merge_intervals(all);
  out.valid = true;
  split(t, {merged.front().start, merged.back().end}, std::move(all), std::move(compute), out);
  return out;
}

TemporalBreakdown sightline_breakdown(const EventTable& t) {
  TemporalBreakdown out;
  out.rank = t.rank;
  // G = GPU work: annotations are not work, so a stream under one long ProfilerStep annotation
  // still shows its idle time (analyses.md §1).
  std::vector<Interval> all, compute;
  collect_activity(t, t.gpu, true, all, compute);
  if (all.empty()) return out;
  out.valid = true;
  // Idle counts over the whole window, edges included, for the rank and for each stream alike.
  const Interval window = idle_window(t);
  split(t, window, std::move(all), std::move(compute), out);
  // Per stream over the same window, the streams idle_causes reports (so idle == Σ causes).
  for (const auto& [stream, rows] : gpu_work_by_stream(t)) {
    std::vector<Interval> g, c;
    collect_activity(t, rows, false, g, c);
    StreamTemporal row;
    row.stream = stream;
    split(t, window, std::move(g), std::move(c), row);
    out.streams.push_back(row);
  }
  return out;
}

}  // namespace

TemporalBreakdown temporal_breakdown(const EventTable& t) {
  return t.mode == Mode::Hta ? hta_breakdown(t) : sightline_breakdown(t);
}

}  // namespace sl::analysis
