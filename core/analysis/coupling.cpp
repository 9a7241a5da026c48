#include "core/analysis/coupling.h"

#include <algorithm>

namespace sl::analysis {

std::string_view boundness_name(Boundness b) {
  switch (b) {
    case Boundness::Host: return "host";
    case Boundness::Balanced: return "balanced";
    case Boundness::Device: return "device";
  }
  return "balanced";
}

std::vector<int64_t> iteration_of_rows(const EventTable& t) {
  std::vector<int64_t> out(t.rows.size(), -1);
  const auto& its = t.store->iterations;
  if (its.empty()) return out;
  // Iterations sorted by start; a CPU row belongs to the one whose [start, end) holds its start.
  std::vector<size_t> order(its.size());
  for (size_t i = 0; i < its.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return its[a].start < its[b].start; });
  for (uint32_t i : t.cpu) {
    TimeNs ts = t.rows[i].ts;
    auto it = std::upper_bound(order.begin(), order.end(), ts, [&](TimeNs v, size_t k) { return v < its[k].start; });
    if (it == order.begin()) continue;
    const Iteration& cand = its[*(it - 1)];
    if (ts < cand.end) out[i] = cand.number;
  }
  for (uint32_t i : t.gpu)
    if (t.rows[i].launch >= 0) out[i] = out[size_t(t.rows[i].launch)];
  return out;
}

namespace {

struct Acc {
  uint64_t kernels = 0;
  TimeNs tklqt = 0, kernel_time = 0;
  TimeNs first_op = INT64_MAX, last_kernel_end = INT64_MIN;
  std::vector<Interval> busy;
  std::vector<TimeNs> to_start;  // per launched kernel
};

CouplingRow finish(const Acc& a, int64_t rank, std::optional<int64_t> iteration, TimeNs t_sys,
                   const CouplingOptions& o) {
  CouplingRow r;
  r.rank = rank;
  r.iteration = iteration;
  r.kernels = a.kernels;
  r.tklqt = a.tklqt;
  r.akd = a.kernels ? double(a.kernel_time) / double(a.kernels) : 0;
  r.gpu_busy = total_length(merge_intervals(a.busy));
  if (a.first_op != INT64_MAX && a.last_kernel_end != INT64_MIN) r.latency = std::max<TimeNs>(0, a.last_kernel_end - a.first_op);
  r.utilization = r.latency > 0 ? double(r.gpu_busy) / double(r.latency) : 0;
  r.exposed_host = std::max<TimeNs>(0, r.latency - r.gpu_busy);
  double host = 0;
  for (TimeNs l : a.to_start) host += double(std::max<TimeNs>(0, l - t_sys));
  host += double(a.to_start.size()) * double(t_sys);
  double denom = double(a.kernel_time) + host;
  r.hdbi = denom > 0 ? double(a.kernel_time) / denom : 0;
  r.bound = r.hdbi < o.host_bound_below ? Boundness::Host
            : r.hdbi > o.device_bound_above ? Boundness::Device
                                            : Boundness::Balanced;
  return r;
}

}  // namespace

Coupling coupling(const EventTable& t, const CouplingOptions& o) {
  Coupling out;
  std::vector<int64_t> iter = iteration_of_rows(t);
  // T_sys: fixed floor, or the 5th percentile of launch-to-start.
  if (o.t_sys) {
    out.t_sys = *o.t_sys;
  } else {
    std::vector<double> ls;
    for (uint32_t i : t.gpu)
      if (t.rows[i].launch >= 0 && is_kernel_cat(t.cat(t.rows[i])))
        ls.push_back(double(t.rows[i].ts - t.rows[size_t(t.rows[i].launch)].ts));
    std::sort(ls.begin(), ls.end());
    out.t_sys = ls.empty() ? 0 : TimeNs(quantile_sorted(ls, 0.05));
  }
  std::vector<int64_t> numbers;
  for (const auto& it : t.store->iterations) numbers.push_back(it.number);
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  std::vector<Acc> per(numbers.size());
  Acc all;
  auto slot = [&](int64_t n) -> Acc* {
    auto it = std::lower_bound(numbers.begin(), numbers.end(), n);
    return it != numbers.end() && *it == n ? &per[size_t(it - numbers.begin())] : nullptr;
  };
  const TraceStore& s = *t.store;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    // Top-level aten:: ops: no enclosing aten:: op on the same thread.
    if (!t.name(r).starts_with("aten::")) continue;
    bool top = true;
    for (SliceRef p = s.parent(r.ref); p.valid() && top; p = s.parent(p)) top = !s.name(p).starts_with("aten::");
    if (!top) continue;
    all.first_op = std::min(all.first_op, r.ts);
    if (Acc* a = slot(iter[i])) a->first_op = std::min(a->first_op, r.ts);
  }
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    std::string_view cat = t.cat(r);
    if (!is_kernel_memcpy_memset_cat(cat)) continue;
    Acc* a = slot(iter[i]);
    for (Acc* acc : {&all, a}) {
      if (!acc) continue;
      acc->busy.push_back({r.ts, r.end()});
      if (!is_kernel_cat(cat)) continue;
      ++acc->kernels;
      acc->kernel_time += r.dur;
      acc->last_kernel_end = std::max(acc->last_kernel_end, r.end());
      if (r.launch >= 0) {
        TimeNs l = r.ts - t.rows[size_t(r.launch)].ts;
        acc->tklqt += l;
        acc->to_start.push_back(l);
      }
    }
  }
  for (size_t k = 0; k < numbers.size(); ++k) out.rows.push_back(finish(per[k], t.rank, numbers[k], out.t_sys, o));
  out.rows.push_back(finish(all, t.rank, std::nullopt, out.t_sys, o));
  return out;
}

}  // namespace sl::analysis
