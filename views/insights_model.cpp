#include "views/insights_model.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "views/pattern_model.h"
#include "views/style.h"
#include "views/time_axis.h"

namespace sl::views {

using namespace sl::analysis;

namespace {

std::string dur(TimeNs ns) { return format_duration(double(ns)); }
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

TimeNs gpu_span(const EventTable& t) {
  TimeNs a = INT64_MAX, b = INT64_MIN;
  for (uint32_t i : t.gpu) a = std::min(a, t.rows[i].ts), b = std::max(b, t.rows[i].end());
  return b > a ? b - a : 0;
}

void starvation(const AnalysisModel& m, const InsightOptions& o, std::vector<Insight>& out) {
  if (!m.report.causes) return;
  std::map<int64_t, std::vector<const IdleGap*>> by_stream;
  // A collective-only stream waiting for its next collective is not starved of work.
  for (const IdleGap& g : m.report.causes->gaps)
    if (g.length() >= o.starvation_gap && g.cause != IdleCause::CollectiveWait) by_stream[g.stream].push_back(&g);
  // Gaps include the window's edges: relate them to the idle window, which contains them.
  const Interval window = m.report.causes->window;
  TimeNs span = window.end > window.start ? window.end - window.start : gpu_span(m.table());
  for (auto& [stream, gaps] : by_stream) {
    TimeNs total = 0;
    const IdleGap* worst = gaps.front();
    for (const IdleGap* g : gaps) total += g->length(), worst = g->length() > worst->length() ? g : worst;
    Insight in;
    in.kind = "starvation";
    in.title = "GPU starved on stream " + std::to_string(stream) + ": " + std::to_string(gaps.size()) + " gaps of " +
               dur(o.starvation_gap) + " or more, " + dur(total) + " in all";
    in.detail = "Stream " + std::to_string(stream) + " sat idle for " + dur(total) +
                (span ? " (" + pct(double(total) / double(span)) + " of the idle window)" : std::string()) +
                " in gaps of at least " + dur(o.starvation_gap) + ". The longest, " + dur(worst->length()) + ", is " +
                cause_words(worst->cause) +
                ": the GPU had no work queued, so every such gap is time the step cannot get back by faster kernels.";
    in.cost = total;
    in.t0 = worst->start;
    in.t1 = worst->end;
    out.push_back(std::move(in));
  }
}

void data_loader(const AnalysisModel& m, std::vector<Insight>& out) {
  if (!m.report.causes) return;
  TimeNs total = 0;
  uint64_t n = 0;
  const IdleGap* worst = nullptr;
  for (const IdleGap& g : m.report.causes->gaps) {
    if (g.cause != IdleCause::DataLoading) continue;
    total += g.length(), ++n;
    if (!worst || g.length() > worst->length()) worst = &g;
  }
  if (!worst) return;
  Insight in;
  in.kind = "data_loader";
  in.title = "Data loading stalls the GPU: " + std::to_string(n) + " gaps, " + dur(total);
  in.detail = "While the host waited for the DataLoader the GPU was idle for " + dur(total) + " in " + std::to_string(n) +
              " gaps (longest " + dur(worst->length()) +
              "). More loader workers, pinned memory or prefetching would overlap input with compute.";
  in.cost = total;
  in.t0 = worst->start;
  in.t1 = worst->end;
  out.push_back(std::move(in));
}

void host_bound(const AnalysisModel& m, std::vector<Insight>& out) {
  if (!m.report.coupling) return;
  TimeNs exposed = 0;
  uint64_t n = 0, iterations = 0;
  const CouplingRow* worst = nullptr;
  for (const CouplingRow& r : m.report.coupling->rows) {
    if (!r.iteration) continue;
    ++iterations;
    if (r.bound != Boundness::Host) continue;
    ++n, exposed += r.exposed_host;
    if (!worst || r.exposed_host > worst->exposed_host) worst = &r;
  }
  if (!worst) return;
  Insight in;
  in.kind = "host_bound";
  char hdbi[32];
  std::snprintf(hdbi, sizeof hdbi, "%.2f", worst->hdbi);
  in.title = std::to_string(n) + " of " + std::to_string(iterations) + " iterations are host-bound; " + dur(exposed) +
             " of host time is exposed";
  in.detail = "In these iterations the GPU was busy for less than the time the host took to launch the work (worst: step " +
              std::to_string(*worst->iteration) + ", HDBI " + hdbi + ", utilisation " + pct(worst->utilization) +
              "). The CPU is the bottleneck: CUDA graphs, larger kernels or torch.compile cut launch work.";
  in.cost = exposed;
  for (const auto& it : m.table().store->iterations)
    if (it.number == *worst->iteration) in.t0 = it.start, in.t1 = it.end, in.ref = it.slice;
  out.push_back(std::move(in));
}

bool is_sync_call(std::string_view n) {
  return n == "cudaDeviceSynchronize" || n == "cudaStreamSynchronize" || n == "cudaEventSynchronize" ||
         n == "cudaMemcpy" || n == "cudaMemcpy2D" || n == "hipDeviceSynchronize" || n == "hipStreamSynchronize" ||
         n == "hipEventSynchronize" || n == "hipMemcpy";
}

void sync_calls(const AnalysisModel& m, std::vector<Insight>& out) {
  const EventTable& t = m.table();
  std::map<std::string_view, std::pair<uint64_t, TimeNs>> by_name;
  const Row* worst = nullptr;
  TimeNs total = 0;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    if (!is_sync_call(t.name(r))) continue;
    auto& e = by_name[t.name(r)];
    ++e.first, e.second += r.dur, total += r.dur;
    if (!worst || r.dur > worst->dur) worst = &r;
  }
  if (worst && total > 0) {
    std::string what;
    for (auto& [name, e] : by_name) what += (what.empty() ? "" : ", ") + std::to_string(e.first) + "× " + std::string(name);
    Insight in;
    in.kind = "sync_calls";
    in.title = "Synchronising calls block the host for " + dur(total);
    in.detail = what + " held the CPU for " + dur(total) + " (longest " + dur(worst->dur) +
                "). Each drains the launch queue, so the GPU idles while the host catches up; "
                "drop them or move them off the hot path (e.g. .item(), .cpu(), blocking copies).";
    in.cost = total;
    in.t0 = worst->ts;
    in.t1 = worst->end();
    in.ref = worst->ref;
    out.push_back(std::move(in));
  }
  // Pageable copies: synchronous with respect to the host, and staged through a bounce buffer.
  TimeNs copies = 0;
  uint64_t n = 0;
  const Row* longest = nullptr;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (t.name(r).find("Pageable") == std::string_view::npos) continue;
    copies += r.dur, ++n;
    if (!longest || r.dur > longest->dur) longest = &r;
  }
  if (longest) {
    Insight in;
    in.kind = "pageable_copies";
    in.title = std::to_string(n) + " memory copies use pageable host memory (" + dur(copies) + ")";
    in.detail = "Copies from or to pageable memory are staged and synchronise with the host, so they cannot overlap "
                "compute. Pin the host buffers (pin_memory=True) and use non_blocking=True.";
    in.cost = copies;
    in.t0 = longest->ts;
    in.t1 = longest->end();
    in.ref = longest->ref;
    out.push_back(std::move(in));
  }
}

void tiny_kernels(const AnalysisModel& m, const InsightOptions& o, std::vector<Insight>& out) {
  if (!m.report.launches) return;
  const LaunchStats& s = *m.report.launches;
  const EventTable& t = m.table();
  uint64_t tiny = 0, kernels = 0;
  TimeNs overhead = 0, worst_gap = -1;
  const LaunchPair* worst = nullptr;
  for (const LaunchPair& p : s.pairs) {
    if (!is_kernel_cat(t.cat(t.rows[p.activity]))) continue;
    ++kernels;
    if (p.gpu >= o.tiny_kernel) continue;
    ++tiny;
    // The host spends at least the launch call per kernel; beyond the kernel's own time it is overhead.
    TimeNs over = std::max<TimeNs>(0, p.runtime - p.gpu);
    overhead += over;
    if (over > worst_gap) worst_gap = over, worst = &p;
  }
  if (!kernels || double(tiny) / double(kernels) < o.tiny_share || !worst) return;
  Insight in;
  in.kind = "tiny_kernels";
  in.title = std::to_string(tiny) + " of " + std::to_string(kernels) + " kernels (" + pct(double(tiny) / double(kernels)) +
             ") run under " + dur(o.tiny_kernel);
  in.detail = "Launching these kernels costs the host " + dur(overhead) +
              " more than they run on the GPU. When kernels are this short, launch overhead dominates: fuse them "
              "(torch.compile) or capture the step in a CUDA graph.";
  in.cost = overhead;
  const Row& k = t.rows[worst->activity];
  in.t0 = t.rows[worst->launch].ts;
  in.t1 = k.end();
  in.ref = k.ref;
  out.push_back(std::move(in));
}

void fusion(const AnalysisModel& m, std::vector<Insight>& out) {
  if (!m.report.fusion || m.report.fusion->empty()) return;
  const FusionCandidate& c = m.report.fusion->front();
  auto occ = fusion_occurrences(m.table(), c);
  Insight in;
  in.kind = "fusion";
  char prox[32];
  std::snprintf(prox, sizeof prox, "%.2f", c.proximity);
  in.title = "A chain of " + std::to_string(c.chain.size()) + " kernels repeats " + std::to_string(c.count) +
             " times and is worth fusing";
  in.detail = "The chain " + short_name(c.chain.front()) + " → … → " + short_name(c.chain.back()) +
              " always runs in this order (proximity " + prox + ", " + std::to_string(c.count) +
              " occurrences). Fusing it saves about " + dur(c.launch_overhead) + " of launch-to-start overhead.";
  in.cost = c.launch_overhead;
  if (!occ.empty()) in.t0 = occ.front().start, in.t1 = occ.front().end, in.ref = occ.front().anchor;
  out.push_back(std::move(in));
}

void overlap(const AnalysisModel& m, const InsightOptions& o, std::vector<Insight>& out) {
  if (!m.report.overlap || !m.report.overlap->overlap_pct) return;
  const CommCompOverlap& c = *m.report.overlap;
  if (*c.overlap_pct >= o.low_overlap_pct || c.communication <= 0) return;
  const EventTable& t = m.table();
  const Row* longest = nullptr;
  for (uint32_t i : t.gpu)
    if (KernelType(t.rows[i].kernel_type) == KernelType::Communication && (!longest || t.rows[i].dur > longest->dur))
      longest = &t.rows[i];
  Insight in;
  in.kind = "low_overlap";
  char p[32];
  std::snprintf(p, sizeof p, "%.0f%%", *c.overlap_pct);
  in.title = std::string("Only ") + p + " of communication overlaps compute";
  in.detail = dur(c.communication) + " of communication kernels ran, of which " + dur(c.communication - c.overlap) +
              " was exposed. Exposed collectives stall the step; bucketed all-reduce during backward or a separate "
              "communication stream lets them hide under compute.";
  in.cost = c.communication - c.overlap;
  if (longest) in.t0 = longest->ts, in.t1 = longest->end(), in.ref = longest->ref;
  out.push_back(std::move(in));
}

}  // namespace

std::vector<Insight> find_insights(const AnalysisModel& m, const InsightOptions& o) {
  std::vector<Insight> out;
  starvation(m, o, out);
  data_loader(m, out);
  host_bound(m, out);
  sync_calls(m, out);
  tiny_kernels(m, o, out);
  fusion(m, out);
  overlap(m, o, out);
  std::stable_sort(out.begin(), out.end(), [](const Insight& a, const Insight& b) { return a.cost > b.cost; });
  return out;
}

}  // namespace sl::views
