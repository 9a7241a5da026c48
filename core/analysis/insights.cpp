#include "core/analysis/insights.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/analysis/idle_host.h"
#include "core/analysis/report_result.h"
#include "core/names/hta_short_name.h"
#include "core/report/trace_info.h"

namespace sl::analysis {

namespace {

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", x * 100);
  return b;
}

// What a set of possibly overlapping instances (calls on several threads, copies on several
// streams) amounts to: their union, never the plain sum.
TimeNs union_length(std::vector<Interval> v) { return total_length(merge_intervals(std::move(v))); }

// A finding before ranking: what it wants from the ledger, per cause (idle-type findings), and
// what it costs beside the ledger (compute-side findings, fusion's T_sys per fused launch).
struct Candidate {
  Insight in;
  std::array<TimeNs, kIdleCauseCount> wants{};
  TimeNs beside = 0;
  TimeNs total() const {
    TimeNs s = beside;
    for (TimeNs w : wants) s += w;
    return s;
  }
};

// Where to look for a cause: its longest device-wide piece.
void point_at(Insight& in, const IdleLedger& l, IdleCause c) {
  if (const DeviceIdle* d = l.longest(c)) in.t0 = d->start, in.t1 = d->end;
}

std::string top_events_text(const Report& r, IdleCause c) {
  std::string o;
  for (const HostEvent& e : r.ledger->top_events(*r.causes, c))
    o += (o.empty() ? "" : ", ") + hta_short_name(std::string(r.table.store->strings.view(e.name))) + " " + duration_text(e.self);
  return o;
}

// The umbrella's part for one cause: its gaps of at least `long_gap`, as the finding's detail line.
std::string long_gaps_text(const IdleLedger& l, IdleCause c, TimeNs long_gap) {
  uint64_t n = 0;
  TimeNs total = 0;
  for (const DeviceIdle& d : l.device())
    if (d.cause == c && d.end - d.start >= long_gap) ++n, total += d.end - d.start;
  if (!n) return {};
  return " " + std::to_string(n) + (n == 1 ? " gap" : " gaps") + " of " + duration_text(long_gap) + " or more with no stream busy, " +
         duration_text(total) + " in all.";
}

// One finding per cause of the ledger that has a fix to name (and capture/warm-up, reported as
// such). Its cost is the cause's device-wide idle: the GPU idle the fix can give back.
void by_cause(const Report& r, const InsightOptions& o, std::vector<Candidate>& out) {
  const IdleLedger& l = *r.ledger;
  auto add = [&](std::string kind, std::initializer_list<IdleCause> causes, std::string title, std::string detail) {
    Candidate c;
    c.in.kind = std::move(kind);
    for (IdleCause x : causes) c.wants[size_t(x)] = l.device_idle(x);
    if (c.total() <= 0) return;
    const IdleCause lead = *std::max_element(causes.begin(), causes.end(), [&](IdleCause a, IdleCause b) { return l.device_idle(a) < l.device_idle(b); });
    c.in.title = title + duration_text(c.total());
    c.in.detail = detail + long_gaps_text(l, lead, o.starvation_gap);
    if (std::string top = top_events_text(r, lead); !top.empty()) c.in.detail += " Top CPU events in those windows: " + top + ".";
    if (lead != IdleCause::CaptureWarmup) c.in.detail += " Fix: " + std::string(idle_cause_fix(lead)) + ".";
    point_at(c.in, l, lead);
    out.push_back(std::move(c));
  };
  add("data_loader", {IdleCause::DataLoading}, "Data loading stalls the GPU: ",
      "While the launching process waited for the DataLoader, no stream had work.");
  add("sync_calls", {IdleCause::HostSync}, "Synchronising calls leave the GPU idle ",
      "The launching thread was blocked in calls that wait for the GPU (synchronize, blocking copies, .item(), "
      ".cpu()); each drains the queue, and the GPU idles until the host launches again. The cost is that idle "
      "time, not the time the host was blocked.");
  add("host_compute", {IdleCause::HostCompute}, "CPU work on the launching thread leaves the GPU idle ",
      "The thread that launches the GPU's work was busy with CPU work that launched nothing (preprocessing, "
      "tokenisation, a CPU op, tuning).");
  add("launch_bound", {IdleCause::LaunchBound, IdleCause::LaunchLatency}, "Launch-bound: the GPU waited for work to be dispatched, ",
      "The launching thread was dispatching GPU work (ops, launch calls, the interpreter between them) more slowly "
      "than the GPU ran it.");
  add("host_untraced", {IdleCause::HostUntraced}, "The GPU idled while the launching thread recorded nothing: ",
      "No op or Python function of the launching thread overlaps these gaps: a lock, the GIL, another process or a "
      "profiler that stopped recording; the trace cannot say what the host did.");
  add("capture_warmup", {IdleCause::CaptureWarmup}, "Graph capture / warm-up (not steady state): GPU idle ",
      "The host was capturing CUDA graphs, compiling, autotuning or warming up: this time is not the steady state, "
      "verdicts leave it out, and there is no fix to name.");
  add("cross_stream_wait", {IdleCause::CrossStreamWait}, "Streams wait on each other: GPU idle ",
      "The next work was launched but waited for an event recorded on another stream.");
  add("collective_wait", {IdleCause::CollectiveWait}, "Collectives wait for peers: GPU idle ",
      "A communication stream's next collective was launched and waited: on a job, for its slowest peer.");
  // The umbrella: long gaps whose cause has no finding of its own (other).
  Candidate u;
  u.in.kind = "starvation";
  uint64_t n = 0;
  for (const DeviceIdle& d : l.device())
    if (d.cause == IdleCause::Other && d.end - d.start >= o.starvation_gap) u.wants[size_t(IdleCause::Other)] += d.end - d.start, ++n;
  if (n) {
    u.in.title = "GPU starved: " + std::to_string(n) + (n == 1 ? " gap of " : " gaps of ") + duration_text(o.starvation_gap) + " or more, " +
                 duration_text(u.total()) + " in all";
    u.in.detail = "No stream had work and the work that came next was already launched, with no host or stream cause "
                  "in the trace.";
    point_at(u.in, l, IdleCause::Other);
    out.push_back(std::move(u));
  }
}

// The sync finding names the calls: which, how many, how long the host was held.
void describe_sync_calls(const Report& r, std::vector<Candidate>& found) {
  auto it = std::find_if(found.begin(), found.end(), [](const Candidate& c) { return c.in.kind == "sync_calls"; });
  if (it == found.end()) return;
  const EventTable& t = r.table;
  std::map<std::string_view, uint64_t> by_name;
  std::vector<Interval> held;
  const Row* worst = nullptr;
  for (uint32_t i : t.cpu) {
    const Row& row = t.rows[i];
    if (!detail::is_blocking_call(t.name(row))) continue;  // the calls the ledger's host_sync counts
    ++by_name[t.name(row)];
    held.push_back({row.ts, row.end()});
    if (!worst || row.dur > worst->dur) worst = &row;
  }
  if (!worst) return;
  std::string what;
  for (auto& [name, count] : by_name) what += (what.empty() ? "" : ", ") + std::to_string(count) + "× " + std::string(name);
  it->in.detail += " Calls: " + what + ", holding the host " + duration_text(union_length(held)) + " (longest " +
                   duration_text(worst->dur) + ").";
  it->in.ref = worst->ref;
}

// Launch overhead's detail: how short the kernels are, and the iterations coupling calls host-bound.
void describe_launch_bound(const Report& r, const InsightOptions& o, std::vector<Candidate>& found) {
  auto it = std::find_if(found.begin(), found.end(), [](const Candidate& c) { return c.in.kind == "launch_bound"; });
  if (it == found.end()) return;
  if (r.launches) {
    uint64_t tiny = 0, kernels = 0;
    for (const LaunchPair& p : r.launches->pairs) {
      if (!is_kernel_cat(r.table.cat(r.table.rows[p.activity]))) continue;
      ++kernels;
      if (p.gpu < o.tiny_kernel && p.graph_position <= 0) ++tiny;
    }
    if (kernels && double(tiny) / double(kernels) >= o.tiny_share)
      it->in.detail += " " + std::to_string(tiny) + " of " + std::to_string(kernels) + " kernels (" +
                       pct(double(tiny) / double(kernels)) + ") run under " + duration_text(o.tiny_kernel) + ".";
  }
  if (r.coupling) {
    uint64_t host = 0, iterations = 0;
    for (const CouplingRow& c : r.coupling->rows)
      if (c.iteration && c.kernels) ++iterations, host += c.bound == Boundness::Host;
    if (host) it->in.detail += " " + std::to_string(host) + " of " + std::to_string(iterations) + " iterations are host-bound.";
  }
}

// Fusion (§5b): saves at most the launch-type ledger entries inside the chain's occurrences plus
// T_sys per fused launch (fusion_candidates computes it from the ledger); chains never hold a
// communication kernel.
void fusion(const Report& r, std::vector<Candidate>& out) {
  if (!r.fusion || r.fusion->empty()) return;
  const FusionCandidate& f = r.fusion->front();
  Candidate c;
  c.in.kind = "fusion";
  c.wants[size_t(IdleCause::LaunchBound)] = f.launch_bound_idle;
  c.wants[size_t(IdleCause::LaunchLatency)] = f.launch_latency_idle;
  c.beside = f.saving - f.launch_bound_idle - f.launch_latency_idle;
  if (c.total() <= 0) return;
  char prox[32];
  std::snprintf(prox, sizeof prox, "%.2f", f.proximity);
  c.in.title = "A chain of " + std::to_string(f.chain.size()) + " kernels repeats " + std::to_string(f.count) +
               " times and is worth fusing";
  c.in.detail = "The chain " + hta_short_name(f.chain.front()) + " → … → " + hta_short_name(f.chain.back()) +
                " always runs in this order (proximity " + prox + ", " + std::to_string(f.count) +
                " occurrences). Fusing it saves about " + duration_text(f.saving) +
                ": a launch per fused kernel and the launch-bound idle between them (gaps with another cause, "
                "queue time, are not saved by fusing).";
  c.in.t0 = f.first_start;
  c.in.t1 = f.first_end;
  c.in.ref = f.anchor;
  out.push_back(std::move(c));
}

// Pageable copies: synchronous with respect to the host, and staged through a bounce buffer. A
// compute-side finding: it costs at most the copies' GPU time.
void pageable_copies(const Report& r, std::vector<Candidate>& out) {
  const EventTable& t = r.table;
  std::vector<Interval> copies;
  const Row* longest = nullptr;
  for (uint32_t i : t.gpu) {
    const Row& row = t.rows[i];
    if (t.name(row).find("Pageable") == std::string_view::npos) continue;
    copies.push_back({row.ts, row.end()});
    if (!longest || row.dur > longest->dur) longest = &row;
  }
  if (!longest) return;
  Candidate c;
  c.beside = union_length(copies);
  c.in.kind = "pageable_copies";
  c.in.title = std::to_string(copies.size()) + " memory copies use pageable host memory (" + duration_text(c.beside) + ")";
  c.in.detail = "Copies from or to pageable memory are staged and synchronise with the host, so they cannot overlap "
                "compute. Fix: pin the host buffers (pin_memory=True) and use non_blocking=True.";
  c.in.t0 = longest->ts;
  c.in.t1 = longest->end();
  c.in.ref = longest->ref;
  out.push_back(std::move(c));
}

// Overlap (§5b): making communication overlap compute saves at most the exposed communication,
// and never more than the compute not yet overlapped (there must be compute to hide it under).
void overlap(const Report& r, const InsightOptions& o, std::vector<Candidate>& out) {
  if (!r.overlap || !r.overlap->overlap_pct) return;
  const CommCompOverlap& x = *r.overlap;
  if (*x.overlap_pct >= o.low_overlap_pct || x.communication <= 0) return;
  const EventTable& t = r.table;
  std::vector<Interval> compute;
  const Row* longest = nullptr;
  for (uint32_t i : t.gpu) {
    const Row& row = t.rows[i];
    if (KernelType(row.kernel_type) == KernelType::Computation) compute.push_back({row.ts, row.end()});
    if (KernelType(row.kernel_type) == KernelType::Communication && (!longest || row.dur > longest->dur)) longest = &row;
  }
  const TimeNs exposed = x.communication - x.overlap;
  const TimeNs free_compute = std::max<TimeNs>(0, union_length(std::move(compute)) - x.overlap);
  Candidate c;
  c.beside = std::min(exposed, free_compute);
  c.in.kind = "low_overlap";
  char p[32];
  std::snprintf(p, sizeof p, "%.0f%%", *x.overlap_pct);
  c.in.title = std::string("Only ") + p + " of communication overlaps compute";
  c.in.detail = duration_text(x.communication) + " of communication kernels ran, " + duration_text(exposed) +
                " of it exposed, with " + duration_text(free_compute) +
                " of compute not yet overlapped to hide it under. Fix: bucketed all-reduce during backward or a separate "
                "communication stream. (Communication that waits for its peers is the collective wait finding, not this.)";
  if (longest) c.in.t0 = longest->ts, c.in.t1 = longest->end(), c.in.ref = longest->ref;
  out.push_back(std::move(c));
}

// Ranking by claiming: repeatedly list the finding with the largest cost left, take what it wants
// from the ledger's causes, and cut what the others want to what is left. `budget` (the trace span)
// bounds the costs beside the ledger too, so the listed costs never add up past the trace.
std::vector<Insight> rank_by_claims(std::vector<Candidate> found, const IdleLedger& l, TimeNs budget) {
  std::array<TimeNs, kIdleCauseCount> left{};
  for (int c = 0; c < kIdleCauseCount; ++c) left[size_t(c)] = l.device_idle(IdleCause(c));
  std::vector<Insight> out;
  std::vector<TimeNs> alone;  // what each would cost on its own, to say what an earlier one took
  for (const Candidate& c : found) alone.push_back(c.total());
  std::vector<size_t> order(found.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  while (!found.empty()) {
    for (Candidate& c : found) {
      for (size_t k = 0; k < left.size(); ++k) c.wants[k] = std::min(c.wants[k], left[k]);
      c.beside = std::min(c.beside, std::max<TimeNs>(0, budget - (c.total() - c.beside)));
    }
    auto best = std::max_element(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) { return a.total() < b.total(); });
    if (best->total() <= 0) break;
    for (size_t k = 0; k < left.size(); ++k) left[k] -= best->wants[k];
    best->in.cost = best->total();
    budget -= best->in.cost;
    const size_t k = size_t(best - found.begin());
    if (alone[order[k]] > best->in.cost)
      best->in.detail += " (On its own it would cost " + duration_text(alone[order[k]]) + "; the findings above already claim " +
                         duration_text(alone[order[k]] - best->in.cost) + " of the same idle time, counted once.)";
    out.push_back(std::move(best->in));
    found.erase(best);
    order.erase(order.begin() + ptrdiff_t(k));
  }
  return out;
}

}  // namespace

std::optional<double> hta_idle_share(const EventTable& t) {
  TimeNs last_step = INT64_MIN;
  for (const Iteration& it : t.store->iterations) last_step = std::max(last_step, it.start);
  const bool filtered = t.store->iterations.size() >= 2;  // distinct ProfilerStep#N names
  const bool rounded = any_fractional_ts(*t.store);       // HTA's rule 2: ceil(ts), floor(end) in µs
  std::vector<Interval> busy;
  for (uint32_t i : t.gpu) {
    const Row& row = t.rows[i];
    if (t.cat(row) == "gpu_user_annotation") continue;  // Kineto writes them without args.stream: HTA's CPU side
    if (filtered && (row.launch < 0 || t.rows[size_t(row.launch)].ts >= last_step)) continue;
    if (rounded) busy.push_back(hta_rounded(*t.store, row.ts, row.dur));
    else busy.push_back({row.ts, row.end()});
  }
  std::erase_if(busy, [](const Interval& x) { return x.end < x.start; });
  busy = merge_intervals(std::move(busy));
  if (busy.empty()) return std::nullopt;
  const TimeNs span = busy.back().end - busy.front().start;
  return span > 0 ? 100.0 * (1.0 - double(total_length(busy)) / double(span)) : 0.0;
}

TimeNs trace_span(const EventTable& t) { return sl::trace_span(*t.store); }

std::string duration_text(TimeNs ns) {
  static const struct {
    double scale;
    const char* unit;
  } units[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}};
  double v = double(ns);
  for (const auto& u : units) {
    double x = v / u.scale;
    if (std::abs(x) < 1) continue;
    char b[48];
    std::snprintf(b, sizeof b, std::abs(x) >= 100 ? "%.0f %s" : std::abs(x) >= 10 ? "%.1f %s" : "%.2f %s", x, u.unit);
    return b;
  }
  return std::to_string(ns) + " ns";
}

std::vector<Insight> rank_insights(const Report& r, const InsightOptions& o) {
  if (!r.ledger || !r.causes) return {};
  const TimeNs span = trace_span(r.table);
  std::vector<Candidate> found;
  by_cause(r, o, found);
  describe_sync_calls(r, found);
  describe_launch_bound(r, o, found);
  fusion(r, found);
  pageable_copies(r, found);
  overlap(r, o, found);
  return rank_by_claims(std::move(found), *r.ledger, o.drop_impossible ? span : INT64_MAX / 4);
}

namespace {

std::string idle_split_text(const IdleLedger& l) {
  std::vector<int> order;
  for (int c = 0; c < kIdleCauseCount; ++c)
    if (l.device_idle(IdleCause(c)) > 0) order.push_back(c);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return l.device_idle(IdleCause(a)) > l.device_idle(IdleCause(b)); });
  std::string o = "idle split (no stream busy, " + duration_text(l.device_idle()) + "): ";
  if (order.empty()) o += "none";
  for (size_t k = 0; k < order.size(); ++k)
    o += (k ? ", " : "") + std::string(idle_cause_name(IdleCause(order[k]))) + " " + duration_text(l.device_idle(IdleCause(order[k]))) +
         " (" + pct(double(l.device_idle(IdleCause(order[k]))) / double(l.device_idle())) + ")";
  return o;
}

}  // namespace

std::string headline_text(const Report& r, size_t top) {
  if (!r.insights) return {};
  std::string o = "\n== headline ==\n";
  const TimeNs span = trace_span(r.table);
  o += "trace span " + duration_text(span) + " (first to last event)";
  if (auto gpu = gpu_window(*r.table.store)) o += "; GPU window " + duration_text(gpu->length());
  const bool steps = !r.table.store->iterations.empty();
  if (r.ledger && r.ledger->window().end > r.ledger->window().start)
    o += "; idle window " + duration_text(r.ledger->window().end - r.ledger->window().start) +
         (steps ? " (the ProfilerStep iterations)" : " (the whole trace)");
  o += "\n";
  // No GPU event to be idle between: any idle verdict would be about the recording, not the run.
  if (!r.gpu_warning.empty()) return o + r.gpu_warning + " No idle verdict.\n";
  if (r.insights->empty()) o += "no finding stands out (no GPU idle with a cause to fix, no fusable chains, no exposed communication)\n";
  for (size_t i = 0; i < r.insights->size() && i < top; ++i) {
    const Insight& in = (*r.insights)[i];
    o += std::to_string(i + 1) + ". " + in.title + "  [costs up to " + duration_text(in.cost) + ", " +
         pct(span ? double(in.cost) / double(span) : 0) + " of the trace]\n";
  }
  for (const memory::MemoryFinding& f : r.memory_findings) o += "memory: " + f.title + "\n";
  if (r.temporal && r.temporal->valid) {
    const TemporalBreakdown& tb = *r.temporal;
    char p[96];
    std::snprintf(p, sizeof p, "%.1f%% idle over %s", tb.idle_pct, steps ? "the iterations" : "the trace");
    o += "GPU idle " + duration_text(tb.idle) + " of " + duration_text(tb.span) + " (" + p;
    if (r.hta_idle_pct && std::abs(*r.hta_idle_pct - tb.idle_pct) > 1) {
      std::snprintf(p, sizeof p, "; HTA, first to last GPU event: %.1f%%", *r.hta_idle_pct);
      o += p;
    }
    o += ")";
  }
  if (r.ledger) o += std::string(r.temporal && r.temporal->valid ? "; " : "") + idle_split_text(*r.ledger);
  if ((r.temporal && r.temporal->valid) || r.ledger) o += "\n";
  if (r.ledger && r.ledger->device_idle(IdleCause::CaptureWarmup) > 0)
    o += "capture / warm-up: " + duration_text(r.ledger->device_idle(IdleCause::CaptureWarmup)) +
         " of GPU idle is graph capture, compilation or warm-up, not steady state: verdicts leave it out\n";
  return o;
}

}  // namespace sl::analysis
