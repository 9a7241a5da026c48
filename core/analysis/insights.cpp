#include "core/analysis/insights.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/analysis/report_result.h"
#include "core/names/hta_short_name.h"

namespace sl::analysis {

namespace {

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", x * 100);
  return b;
}

std::string cause_words(IdleCause c) {
  std::string s(idle_cause_name(c));
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

// What a set of possibly overlapping instances (gaps on several streams, calls on several
// threads) can give back: their union, never the plain sum.
TimeNs union_length(std::vector<Interval> v) { return total_length(merge_intervals(std::move(v))); }

}  // namespace

std::vector<DeviceIdle> device_idle(const Report& r) {
  std::vector<DeviceIdle> out;
  if (!r.causes) return out;
  const EventTable& t = r.table;
  std::vector<Interval> busy_raw;
  for (uint32_t i : t.gpu)
    if (is_kernel_memcpy_memset_cat(t.cat(t.rows[i]))) busy_raw.push_back({t.rows[i].ts, t.rows[i].end()});
  const std::vector<Interval> busy = merge_intervals(std::move(busy_raw));
  // Each stream gap minus the busy time of every stream: the pieces where the whole GPU waited.
  // The same piece shows up in every stream idle at the time; it goes to the stream that resumed
  // first (its next activity ended the wait), whose gap cause then explains it.
  std::vector<DeviceIdle> found;  // every gap's pieces, in gap order
  for (const IdleGap& g : r.causes->gaps) {
    auto it = std::upper_bound(busy.begin(), busy.end(), g.start, [](TimeNs v, const Interval& b) { return v < b.end; });
    TimeNs at = g.start;
    for (; at < g.end; ++it) {
      TimeNs stop = it == busy.end() ? g.end : std::min(g.end, it->start);
      if (stop > at) found.push_back(DeviceIdle{at, stop, g.cause, g.end});
      if (it == busy.end()) break;
      at = std::max(at, it->end);
    }
  }
  // Pieces with one start fold into one, in gap order: the first stream to resume owns it, and
  // it reaches as far as the longest of them.
  std::stable_sort(found.begin(), found.end(), [](const DeviceIdle& a, const DeviceIdle& b) { return a.start < b.start; });
  std::vector<DeviceIdle> pieces;  // by start
  for (const DeviceIdle& p : found) {
    if (pieces.empty() || pieces.back().start != p.start) pieces.push_back(p);
    else if (p.resumed < pieces.back().resumed) pieces.back() = DeviceIdle{p.start, std::max(p.end, pieces.back().end), p.cause, p.resumed};
    else pieces.back().end = std::max(pieces.back().end, p.end);
  }
  // Pieces of different streams can still nest when a gap is clipped by the trace's edges: keep
  // them disjoint (a later piece starts where the previous one ended).
  TimeNs covered = INT64_MIN;
  for (DeviceIdle& p : pieces) {
    p.start = std::max(p.start, covered);
    if (p.end <= p.start) continue;
    covered = p.end;
    out.push_back(p);
  }
  return out;
}

namespace {

void starvation(const std::vector<DeviceIdle>& idle, const InsightOptions& o, TimeNs span, std::vector<Insight>& out) {
  TimeNs total = 0;
  uint64_t n = 0;
  const DeviceIdle* worst = nullptr;
  for (const DeviceIdle& d : idle) {
    if (d.end - d.start < o.starvation_gap) continue;
    total += d.end - d.start, ++n;
    if (!worst || d.end - d.start > worst->end - worst->start) worst = &d;
  }
  if (!worst) return;
  Insight in;
  in.kind = "starvation";
  in.title = "GPU starved: " + std::to_string(n) + " gaps of " + duration_text(o.starvation_gap) +
             " or more with no stream busy, " + duration_text(total) + " in all";
  in.detail = "The whole GPU sat idle for " + duration_text(total) +
              (span ? " (" + pct(double(total) / double(span)) + " of the trace)" : std::string()) +
              " in gaps of at least " + duration_text(o.starvation_gap) + ". The longest, " +
              duration_text(worst->end - worst->start) + ", is " + cause_words(worst->cause) +
              ": no stream had work queued, so every such gap is time the step cannot get back by faster kernels. "
              "(A stream idle while others run is not counted: that time is not lost.)";
  in.cost = total;
  in.t0 = worst->start;
  in.t1 = worst->end;
  out.push_back(std::move(in));
}

void data_loader(const std::vector<DeviceIdle>& idle, std::vector<Insight>& out) {
  TimeNs total = 0;
  uint64_t n = 0;
  const DeviceIdle* worst = nullptr;
  for (const DeviceIdle& d : idle) {
    if (d.cause != IdleCause::DataLoading) continue;
    total += d.end - d.start, ++n;
    if (!worst || d.end - d.start > worst->end - worst->start) worst = &d;
  }
  if (!worst) return;
  Insight in;
  in.kind = "data_loader";
  in.title = "Data loading stalls the GPU: " + std::to_string(n) + " gaps, " + duration_text(total);
  in.detail = "While the host waited for the DataLoader the whole GPU was idle for " + duration_text(total) + " in " +
              std::to_string(n) + " gaps (longest " + duration_text(worst->end - worst->start) +
              "). More loader workers, pinned memory or prefetching would overlap input with compute.";
  in.cost = total;
  in.t0 = worst->start;
  in.t1 = worst->end;
  out.push_back(std::move(in));
}

void host_bound(const Report& r, std::vector<Insight>& out) {
  if (!r.coupling) return;
  TimeNs exposed = 0;
  uint64_t n = 0, iterations = 0;
  const CouplingRow* worst = nullptr;
  for (const CouplingRow& c : r.coupling->rows) {
    if (!c.iteration || c.kernels == 0) continue;
    ++iterations;
    if (c.bound != Boundness::Host) continue;
    ++n, exposed += c.exposed_host;
    if (!worst || c.exposed_host > worst->exposed_host) worst = &c;
  }
  if (!worst) return;
  // Fixing the host can give back at most the host-bound steps' own time: their latencies overlap
  // (kernels of a step can run into the next one), their ProfilerStep ranges do not.
  TimeNs steps = 0;
  for (const CouplingRow& c : r.coupling->rows)
    if (c.iteration && c.kernels && c.bound == Boundness::Host)
      for (const auto& it : r.table.store->iterations)
        if (it.number == *c.iteration) steps += it.end - it.start;
  exposed = std::min(exposed, steps);
  Insight in;
  in.kind = "host_bound";
  char hdbi[32];
  std::snprintf(hdbi, sizeof hdbi, "%.2f", worst->hdbi);
  in.title = std::to_string(n) + " of " + std::to_string(iterations) + " iterations are host-bound; " +
             duration_text(exposed) + " of host time is exposed";
  // The verdict names the host cause that held most of the worst step's GPU idle: the fix is that cause's.
  const IdleCause cause = worst->bound_cause.value_or(IdleCause::HostLaunchBound);
  const char* fix = cause == IdleCause::DataLoading ? "more DataLoader workers, pinned memory and prefetching keep the GPU fed"
                    : cause == IdleCause::HostSync  ? "take the synchronising calls (.item(), .cpu(), blocking copies) out of the step"
                                                    : "CUDA graphs, larger kernels or torch.compile cut launch work";
  in.detail = "In these iterations the GPU mostly waited for the host (worst: step " + std::to_string(*worst->iteration) +
              ", utilisation " + pct(worst->utilization) +
              (worst->bound_cause ? ", " + std::string(idle_cause_name(cause)) + " " + duration_text(worst->bound_cause_idle) +
                                        " of its GPU idle"
                                  : std::string()) +
              "; HDBI " + hdbi + ", queue-free host orchestration " + duration_text(worst->host_orchestration) +
              " against TKLQT " + duration_text(worst->tklqt) + " with queue time). Fix: " + fix + ".";
  in.cost = exposed;
  for (const auto& it : r.table.store->iterations)
    if (it.number == *worst->iteration) in.t0 = it.start, in.t1 = it.end, in.ref = it.slice;
  out.push_back(std::move(in));
}

bool is_sync_call(std::string_view n) {
  return n == "cudaDeviceSynchronize" || n == "cudaStreamSynchronize" || n == "cudaEventSynchronize" ||
         n == "cudaMemcpy" || n == "cudaMemcpy2D" || n == "hipDeviceSynchronize" || n == "hipStreamSynchronize" ||
         n == "hipEventSynchronize" || n == "hipMemcpy";
}

void sync_calls(const Report& r, std::vector<Insight>& out) {
  const EventTable& t = r.table;
  std::map<std::string_view, uint64_t> by_name;
  std::vector<Interval> held;
  const Row* worst = nullptr;
  for (uint32_t i : t.cpu) {
    const Row& row = t.rows[i];
    if (!is_sync_call(t.name(row))) continue;
    ++by_name[t.name(row)];
    held.push_back({row.ts, row.end()});
    if (!worst || row.dur > worst->dur) worst = &row;
  }
  TimeNs total = union_length(held);  // calls on several threads at once block once
  if (!worst || total <= 0) return;
  std::string what;
  for (auto& [name, count] : by_name) what += (what.empty() ? "" : ", ") + std::to_string(count) + "× " + std::string(name);
  Insight in;
  in.kind = "sync_calls";
  in.title = "Synchronising calls block the host for " + duration_text(total);
  in.detail = what + " held the CPU for " + duration_text(total) + " (longest " + duration_text(worst->dur) +
              "). Each drains the launch queue, so the GPU idles while the host catches up; "
              "drop them or move them off the hot path (e.g. .item(), .cpu(), blocking copies).";
  in.cost = total;
  in.t0 = worst->ts;
  in.t1 = worst->end();
  in.ref = worst->ref;
  out.push_back(std::move(in));
}

// Pageable copies: synchronous with respect to the host, and staged through a bounce buffer.
void pageable_copies(const Report& r, std::vector<Insight>& out) {
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
  TimeNs total = union_length(copies);
  Insight in;
  in.kind = "pageable_copies";
  in.title = std::to_string(copies.size()) + " memory copies use pageable host memory (" + duration_text(total) + ")";
  in.detail = "Copies from or to pageable memory are staged and synchronise with the host, so they cannot overlap "
              "compute. Pin the host buffers (pin_memory=True) and use non_blocking=True.";
  in.cost = total;
  in.t0 = longest->ts;
  in.t1 = longest->end();
  in.ref = longest->ref;
  out.push_back(std::move(in));
}

void tiny_kernels(const Report& r, const InsightOptions& o, std::vector<Insight>& out) {
  if (!r.launches) return;
  const LaunchStats& s = *r.launches;
  const EventTable& t = r.table;
  uint64_t tiny = 0, kernels = 0;
  TimeNs overhead = 0, worst_gap = -1;
  std::vector<Interval> calls;
  const LaunchPair* worst = nullptr;
  for (const LaunchPair& p : s.pairs) {
    if (!is_kernel_cat(t.cat(t.rows[p.activity]))) continue;
    ++kernels;
    if (p.gpu >= o.tiny_kernel || p.graph_position > 0) continue;  // a graph's kernels share one call
    ++tiny;
    // The host spends at least the launch call per kernel; beyond the kernel's own time it is overhead.
    TimeNs over = std::max<TimeNs>(0, p.runtime - p.gpu);
    overhead += over;
    calls.push_back({t.rows[p.launch].ts, t.rows[p.launch].end()});
    if (over > worst_gap) worst_gap = over, worst = &p;
  }
  if (!kernels || double(tiny) / double(kernels) < o.tiny_share || !worst) return;
  overhead = std::min(overhead, union_length(calls));  // calls on several threads overlap
  Insight in;
  in.kind = "tiny_kernels";
  in.title = std::to_string(tiny) + " of " + std::to_string(kernels) + " kernels (" + pct(double(tiny) / double(kernels)) +
             ") run under " + duration_text(o.tiny_kernel);
  in.detail = "Launching these kernels costs the host " + duration_text(overhead) +
              " more than they run on the GPU. When kernels are this short, launch overhead dominates: fuse them "
              "(torch.compile) or capture the step in a CUDA graph.";
  in.cost = overhead;
  const Row& k = t.rows[worst->activity];
  in.t0 = t.rows[worst->launch].ts;
  in.t1 = k.end();
  in.ref = k.ref;
  out.push_back(std::move(in));
}

void fusion(const Report& r, TimeNs span, std::vector<Insight>& out) {
  if (!r.fusion) return;
  // The best chain whose saving is possible (overlapping occurrences of a repetitive chain could
  // in principle add up past the trace).
  auto it = std::find_if(r.fusion->begin(), r.fusion->end(), [&](const FusionCandidate& c) { return c.saving <= span; });
  if (it == r.fusion->end()) return;
  const FusionCandidate& c = *it;
  Insight in;
  in.kind = "fusion";
  char prox[32];
  std::snprintf(prox, sizeof prox, "%.2f", c.proximity);
  in.title = "A chain of " + std::to_string(c.chain.size()) + " kernels repeats " + std::to_string(c.count) +
             " times and is worth fusing";
  in.detail = "The chain " + hta_short_name(c.chain.front()) + " → … → " + hta_short_name(c.chain.back()) +
              " always runs in this order (proximity " + prox + ", " + std::to_string(c.count) +
              " occurrences). Fusing it saves about " + duration_text(c.saving) +
              ": a launch per fused kernel and the idle gaps between them (queue time is not counted).";
  in.cost = c.saving;
  in.t0 = c.first_start;
  in.t1 = c.first_end;
  in.ref = c.anchor;
  out.push_back(std::move(in));
}

void overlap(const Report& r, const InsightOptions& o, std::vector<Insight>& out) {
  if (!r.overlap || !r.overlap->overlap_pct) return;
  const CommCompOverlap& c = *r.overlap;
  if (*c.overlap_pct >= o.low_overlap_pct || c.communication <= 0) return;
  const EventTable& t = r.table;
  const Row* longest = nullptr;
  for (uint32_t i : t.gpu)
    if (KernelType(t.rows[i].kernel_type) == KernelType::Communication && (!longest || t.rows[i].dur > longest->dur))
      longest = &t.rows[i];
  Insight in;
  in.kind = "low_overlap";
  char p[32];
  std::snprintf(p, sizeof p, "%.0f%%", *c.overlap_pct);
  in.title = std::string("Only ") + p + " of communication overlaps compute";
  in.detail = duration_text(c.communication) + " of communication kernels ran, of which " +
              duration_text(c.communication - c.overlap) +
              " was exposed. Exposed collectives stall the step; bucketed all-reduce during backward or a separate "
              "communication stream lets them hide under compute.";
  in.cost = c.communication - c.overlap;
  if (longest) in.t0 = longest->ts, in.t1 = longest->end(), in.ref = longest->ref;
  out.push_back(std::move(in));
}

}  // namespace

TimeNs trace_span(const EventTable& t) {
  TimeNs a = INT64_MAX, b = INT64_MIN;
  for (const Row& r : t.rows) a = std::min(a, r.ts), b = std::max(b, r.end());
  return b > a ? b - a : 0;
}

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
  const TimeNs span = trace_span(r.table);
  std::vector<Insight> out;
  const std::vector<DeviceIdle> idle = device_idle(r);
  starvation(idle, o, span, out);
  data_loader(idle, out);
  host_bound(r, out);
  sync_calls(r, out);
  pageable_copies(r, out);
  tiny_kernels(r, o, out);
  fusion(r, span, out);
  overlap(r, o, out);
  // Nothing to give back, or more than the whole trace: neither is a finding to rank.
  std::erase_if(out, [&](const Insight& in) { return in.cost <= 0 || (o.drop_impossible && in.cost > span); });
  std::stable_sort(out.begin(), out.end(), [](const Insight& a, const Insight& b) { return a.cost > b.cost; });
  return out;
}

std::string headline_text(const Report& r, size_t top) {
  if (!r.insights) return {};
  std::string o = "\n== headline ==\n";
  const TimeNs span = trace_span(r.table);
  o += "trace span " + duration_text(span) + "\n";
  // No GPU event to be idle between: any idle verdict would be about the recording, not the run.
  if (!r.gpu_warning.empty()) return o + r.gpu_warning + " No idle verdict.\n";
  if (r.insights->empty()) o += "no finding stands out (no long GPU gaps, host-bound steps, sync calls or fusable chains)\n";
  for (size_t i = 0; i < r.insights->size() && i < top; ++i) {
    const Insight& in = (*r.insights)[i];
    o += std::to_string(i + 1) + ". " + in.title + "  [costs up to " + duration_text(in.cost) + ", " +
         pct(span ? double(in.cost) / double(span) : 0) + " of the trace]\n";
  }
  if (r.temporal && r.temporal->valid) {
    const TemporalBreakdown& tb = *r.temporal;
    char p[32];
    std::snprintf(p, sizeof p, "%.1f%%", tb.idle_pct);
    o += "GPU idle " + duration_text(tb.idle) + " of " + duration_text(tb.span) + " (" + p + ")";
  }
  if (r.causes) {
    // The split: time no stream was busy, by the cause of the stream that resumed first (per-stream
    // idle summed over streams would count the same instant once per idle stream).
    TimeNs by_cause[kIdleCauseCount] = {};
    TimeNs total = 0;
    for (const DeviceIdle& d : device_idle(r)) by_cause[int(d.cause)] += d.end - d.start, total += d.end - d.start;
    std::vector<int> order;
    for (int c = 0; c < kIdleCauseCount; ++c)
      if (by_cause[c] > 0) order.push_back(c);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return by_cause[a] > by_cause[b]; });
    o += r.temporal && r.temporal->valid ? "; " : "";
    o += "idle split (no stream busy, " + duration_text(total) + "): ";
    if (order.empty()) o += "none";
    for (size_t k = 0; k < order.size(); ++k)
      o += (k ? ", " : "") + std::string(idle_cause_name(IdleCause(order[k]))) + " " + duration_text(by_cause[order[k]]) +
           " (" + pct(double(by_cause[order[k]]) / double(total)) + ")";
  }
  if ((r.temporal && r.temporal->valid) || r.causes) o += "\n";
  return o;
}

}  // namespace sl::analysis
