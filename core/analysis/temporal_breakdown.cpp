#include "core/analysis/temporal_breakdown.h"

namespace sl::analysis {

TemporalBreakdown temporal_breakdown(const EventTable& t) {
  TemporalBreakdown out;
  out.rank = t.rank;
  if (t.gpu.empty()) return out;
  // G = every row on the GPU side (HTA: stream != -1, any category, sync included).
  std::vector<Interval> all, compute;
  all.reserve(t.gpu.size());
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    all.push_back({r.ts, r.end()});
    if (kernel_type(t, r) == KernelType::Computation) compute.push_back({r.ts, r.end()});
  }
  std::vector<Interval> merged = merge_intervals(std::move(all));
  out.valid = true;
  out.span = merged.back().end - merged.front().start;
  out.idle = out.span - total_length(merged);
  out.compute = total_length(merge_intervals(std::move(compute)));
  out.non_compute = out.span - out.compute - out.idle;
  if (out.span > 0) {
    double s = double(out.span);
    out.idle_pct = 100.0 * double(out.idle) / s;
    out.compute_pct = 100.0 * double(out.compute) / s;
    out.non_compute_pct = 100.0 * double(out.non_compute) / s;
    if (t.mode == Mode::Hta) {
      // HTA divides first, then rounds 100 * ratio to 2 decimals.
      out.idle_pct = round_to(100.0 * (double(out.idle) / s), 2);
      out.compute_pct = round_to(100.0 * (double(out.compute) / s), 2);
      out.non_compute_pct = round_to(100.0 * (double(out.non_compute) / s), 2);
    }
  }
  return out;
}

}  // namespace sl::analysis
