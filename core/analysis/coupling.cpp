#include "core/analysis/coupling.h"

#include <algorithm>
#include <unordered_map>

#include "core/analysis/launch_stats.h"
#include "core/text/format.h"

namespace sl::analysis {

std::string_view boundness_name(Boundness b) {
  switch (b) {
    case Boundness::Host: return "host";
    case Boundness::Balanced: return "balanced";
    case Boundness::Device: return "device";
    case Boundness::Waiting: return "waiting";
    case Boundness::Mixed: return "mixed";
    case Boundness::Unmeasured: return "unmeasured";
    case Boundness::Warmup: return "warmup";
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
  uint64_t kernels = 0, launched = 0;
  TimeNs tklqt = 0, kernel_time = 0, host = 0;
  TimeNs first_op = INT64_MAX, last_kernel_end = INT64_MIN;
  std::vector<Interval> busy;
};

// Per GPU row, the host orchestration §5 charges to its launch: T_sys plus, when the stream was
// idle as the launch call started (every earlier activity on it had ended), the stream gap after
// the call's start up to the kernel. A kernel queued behind earlier work on a busy stream adds
// only T_sys: that wait is the device's. Activities replayed by a graph after its first cost the
// host nothing (one call launched them all). "Earlier activity" counts kernels, memcpy and memset:
// a copy on the stream keeps it busy just as a kernel does (our reading of "previous kernel").
std::vector<TimeNs> host_orchestration_per_row(const EventTable& t, TimeNs t_sys) {
  std::vector<TimeNs> host(t.rows.size(), 0);
  std::vector<int32_t> graph = graph_positions(t);
  std::unordered_map<int64_t, std::vector<uint32_t>> by_stream;
  for (uint32_t i : t.gpu)
    if (is_kernel_memcpy_memset_cat(t.cat(t.rows[i]))) by_stream[t.rows[i].stream].push_back(i);
  for (auto& [stream, v] : by_stream) {
    std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
    TimeNs busy_until = INT64_MIN;
    for (uint32_t i : v) {
      const Row& r = t.rows[i];
      if (r.launch >= 0 && graph[i] <= 0 && is_kernel_cat(t.cat(r))) {
        TimeNs call = t.rows[size_t(r.launch)].ts;
        TimeNs waited = call >= busy_until ? std::max<TimeNs>(0, r.ts - call) : 0;
        host[i] = t_sys + waited;
      }
      busy_until = std::max(busy_until, r.end());
    }
  }
  return host;
}

CouplingRow finish(const Acc& a, int64_t rank, std::optional<int64_t> iteration, const CouplingOptions& o) {
  CouplingRow r;
  r.rank = rank;
  r.iteration = iteration;
  r.kernels = a.kernels;
  r.tklqt = a.tklqt;
  r.launched = a.launched;
  r.akd = a.kernels ? double(a.kernel_time) / double(a.kernels) : 0;
  r.gpu_busy = total_length(merge_intervals(a.busy));
  if (a.first_op != INT64_MAX && a.last_kernel_end != INT64_MIN) r.latency = std::max<TimeNs>(0, a.last_kernel_end - a.first_op);
  r.utilization = r.latency > 0 ? double(r.gpu_busy) / double(r.latency) : 0;
  r.exposed_host = std::max<TimeNs>(0, r.latency - r.gpu_busy);
  r.host_orchestration = a.host;
  double denom = double(a.kernel_time) + double(a.host);
  r.hdbi = denom > 0 ? double(a.kernel_time) / denom : 0;
  if (r.latency > 0) r.start = a.first_op, r.end = a.last_kernel_end;
  r.bound = r.hdbi < o.host_bound_below ? Boundness::Host
            : r.hdbi > o.device_bound_above ? Boundness::Device
                                            : Boundness::Balanced;
  return r;
}

}  // namespace

TimeNs null_launch_floor(const EventTable& t, const CouplingOptions& o) {
  if (o.t_sys) return *o.t_sys;
  // Graph activities after the first are excluded: their launch-to-start includes the graph's run.
  std::vector<int32_t> graph = graph_positions(t);
  std::vector<double> ls;
  for (uint32_t i : t.gpu)
    if (t.rows[i].launch >= 0 && graph[i] <= 0 && is_kernel_cat(t.cat(t.rows[i])))
      ls.push_back(double(t.rows[i].ts - t.rows[size_t(t.rows[i].launch)].ts));
  std::sort(ls.begin(), ls.end());
  return ls.empty() ? 0 : TimeNs(quantile_sorted(ls, 0.05));
}

Coupling coupling(const EventTable& t, const CouplingOptions& o) {
  Coupling out;
  std::vector<int64_t> iter = iteration_of_rows(t);
  out.t_sys = null_launch_floor(t, o);
  std::vector<TimeNs> host = host_orchestration_per_row(t, out.t_sys);
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
        ++acc->launched;
        acc->host += host[i];
      }
    }
  }
  for (size_t k = 0; k < numbers.size(); ++k) out.rows.push_back(finish(per[k], t.rank, numbers[k], o));
  out.rows.push_back(finish(all, t.rank, std::nullopt, o));
  return out;
}

std::string verdict_text(const CouplingRow& r) {
  switch (r.bound) {
    case Boundness::Host:
      return r.bound_cause ? "host-bound: " + std::string(idle_cause_name(*r.bound_cause)) + " " + human::duration(r.bound_cause_idle)
                           : "host-bound";
    case Boundness::Waiting: return "waiting";
    case Boundness::Mixed: return "mixed";
    case Boundness::Unmeasured: return "no verdict (no top-level aten:: op to measure the latency from)";
    case Boundness::Warmup: return "no verdict (capture / warm-up: not steady state)";
    default: return std::string(boundness_name(r.bound)) + "-bound";
  }
}

void ledger_verdicts(Coupling& coupling, const IdleLedger& ledger) {
  constexpr double kDeviceBound = 0.8;
  for (CouplingRow& r : coupling.rows) {
    r.bound_cause.reset();
    r.bound_cause_idle = 0;
    if (r.kernels == 0) continue;
    if (r.end <= r.start) {
      r.bound = Boundness::Unmeasured;
      continue;
    }
    if (r.utilization >= kDeviceBound) {
      r.bound = Boundness::Device;
      continue;
    }
    TimeNs by_cause[kIdleCauseCount] = {};
    TimeNs total = 0, host = 0, waiting = 0;
    for (int c = 0; c < kIdleCauseCount; ++c) {
      by_cause[c] = ledger.device_idle(IdleCause(c), r.start, r.end);
      total += by_cause[c];
      if (is_host_cause(IdleCause(c))) host += by_cause[c];
      if (is_wait_cause(IdleCause(c))) waiting += by_cause[c];
    }
    if (total > 0 && 2 * by_cause[int(IdleCause::CaptureWarmup)] >= total) {
      r.bound = Boundness::Warmup;
    } else if (total > 0 && 2 * host >= total) {
      r.bound = Boundness::Host;
      for (int c = 0; c < kIdleCauseCount; ++c)
        if (is_host_cause(IdleCause(c)) && by_cause[c] > r.bound_cause_idle) r.bound_cause = IdleCause(c), r.bound_cause_idle = by_cause[c];
    } else if (total > 0 && 2 * waiting >= total) {
      r.bound = Boundness::Waiting;
    } else {
      r.bound = Boundness::Mixed;
    }
  }
}

}  // namespace sl::analysis
