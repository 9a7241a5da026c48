#include "core/analysis/comm_overlap.h"

namespace sl::analysis {

CommCompOverlap comm_comp_overlap(const EventTable& t) {
  CommCompOverlap out;
  out.rank = t.rank;
  std::vector<Interval> comm, comp;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    KernelType k = kernel_type(t, r);
    if (k == KernelType::Communication) comm.push_back({r.ts, r.end()});
    else if (k == KernelType::Computation) comp.push_back({r.ts, r.end()});
  }
  std::vector<Interval> mcomm = merge_intervals(std::move(comm)), mcomp = merge_intervals(std::move(comp));
  out.communication = total_length(mcomm);
  out.overlap = intersection_length(mcomm, mcomp);
  if (out.communication > 0) {
    double pct = 100.0 * (double(out.overlap) / double(out.communication));
    out.overlap_pct = t.mode == Mode::Hta ? round_to(pct, 2) : pct;
  }
  return out;
}

}  // namespace sl::analysis
