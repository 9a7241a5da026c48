#include "core/analysis/job_overview.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace sl::analysis {

IdleCoverage idle_coverage(const IdleCauses& causes) {
  std::vector<Interval> idle[kIdleCauseCount];
  for (const IdleGap& g : causes.gaps)
    if (g.end > g.start) idle[int(g.cause)].push_back({g.start, g.end});
  IdleCoverage out;
  for (int c = 0; c < kIdleCauseCount; ++c) out[size_t(c)] = Coverage(std::move(idle[c]));
  return out;
}

namespace {

// Rank-local store time → job clock: the store's origin, the offset its times carry (the
// aligned offset, a disjoint clock's move), relative to the job clock's zero (the earliest origin).
TimeNs rank_shift(const CollectiveAnalysis& a, size_t i, const RankSummary& s) {
  return s.origin_ns + (i < a.applied.size() ? a.applied[i] : 0) - a.origin_ns;
}

// The clock-dependent part: collectives aligned as `options` asks, then each rank's shift and
// GPU span on the job clock, and the job's span. The ranks' summaries are only read.
void align_overview(JobOverview& out, const CollectiveOptions& options) {
  std::vector<const RankSummary*> summaries;
  for (const RankActivity& r : out.ranks) summaries.push_back(r.summary.get());
  out.collectives = analyze_collectives(summaries, options);
  out.span = 0;
  for (size_t k = 0; k < out.ranks.size(); ++k) {
    RankActivity& r = out.ranks[k];
    r.shift = rank_shift(out.collectives, k, *r.summary);
    const auto& busy = r.summary->busy.merged();
    r.start = busy.empty() ? 0 : busy.front().start + r.shift;
    r.end = busy.empty() ? 0 : busy.back().end + r.shift;
    out.span = std::max(out.span, r.end);
  }
  for (const CollectiveInstance& in : out.collectives.instances)
    for (const CollectiveArrival& a : in.arrivals) out.span = std::max(out.span, a.end);
}

std::string millis(TimeNs ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", double(ns) / 1e6);
  return buf;
}

}  // namespace

JobOverview build_job_overview(const Job& job, const CollectiveOptions& options) {
  JobOverview out;
  for (size_t i = 0; i < job.ranks.size(); ++i)
    if (job.ranks[i].ok()) {
      RankActivity& r = out.ranks.emplace_back();
      r.rank = job.ranks[i].rank, r.job_index = i;
    }
  // Each rank's table lives only while that rank is summarised: memory stays one table per thread.
  parallel_for(out.ranks.size(), options.threads, [&](size_t k) {
    RankActivity& r = out.ranks[k];
    auto summary = std::make_shared<RankSummary>(summarize_rank(r.rank, *job.ranks[r.job_index].store));
    r.idle = std::make_shared<const IdleCoverage>(idle_coverage(summary->causes));
    r.summary = std::move(summary);
  });
  align_overview(out, options);
  return out;
}

JobOverview realign_job_overview(const JobOverview& current, const CollectiveOptions& options) {
  JobOverview out;
  out.ranks = current.ranks;  // the shared summaries, and shifts about to be replaced
  align_overview(out, options);
  return out;
}

std::vector<TimeNs> column_edges(TimeNs t0, TimeNs t1, int columns) {
  if (columns <= 0 || t1 <= t0) return {};
  // Strictly increasing, so every column has a width.
  std::vector<TimeNs> edges(size_t(columns) + 1);
  double width = double(t1 - t0) / columns;
  for (int c = 0; c <= columns; ++c) edges[size_t(c)] = std::max(t0 + TimeNs(width * c), c ? edges[size_t(c) - 1] + 1 : t0);
  return edges;
}

namespace {

// Calls f(c, covered ns) once for each column [edges[c], edges[c + 1]) that `index` (its times
// plus `shift`) covers, in column order (columns it misses may be skipped). Few intervals in view
// (zoomed in): each is visited, O(intervals · log columns + columns touched); many (zoomed out):
// one cumulative pass over the edges. Both give the exact covered ns.
template <class F>
void for_each_covered_column(const IntervalIndex& index, const std::vector<TimeNs>& edges, TimeNs shift, F&& f) {
  const std::vector<Interval>& merged = index.merged();
  size_t columns = edges.size() - 1;
  TimeNs t0 = edges.front() - shift, t1 = edges.back() - shift;
  auto a = std::upper_bound(merged.begin(), merged.end(), t0, [](TimeNs v, const Interval& x) { return v < x.end; });
  auto b = std::lower_bound(a, merged.end(), t1, [](const Interval& x, TimeNs v) { return x.start < v; });
  if (a == b) return;
  if (size_t(b - a) * 4 >= columns) {
    TimeNs before = 0;
    index.scan(edges, shift, [&](size_t k, TimeNs covered) {
      if (k && covered > before) f(k - 1, covered - before);
      before = covered;
    });
    return;
  }
  size_t c = 0, pending = SIZE_MAX;  // a column's sum is complete once an interval starts past it
  TimeNs sum = 0;
  for (auto it = a; it != b; ++it) {
    TimeNs s = std::max(it->start + shift, edges.front()), e = std::min(it->end + shift, edges.back());
    c = size_t(std::upper_bound(edges.begin() + ptrdiff_t(c), edges.end(), s) - edges.begin()) - 1;  // edges[c] <= s
    for (; c < columns && edges[c] < e; ++c) {
      if (c != pending && pending != SIZE_MAX) f(pending, sum), sum = 0;
      pending = c;
      sum += std::min(e, edges[c + 1]) - std::max(s, edges[c]);
    }
    c = c ? c - 1 : 0;  // the next interval may start in the last column touched
  }
  if (pending != SIZE_MAX) f(pending, sum);
}

}  // namespace

RankBins bin_rank(const RankActivity& rank, const std::vector<TimeNs>& edges) {
  RankBins out;
  if (edges.size() < 2 || !rank.summary || !rank.idle) return out;
  size_t columns = edges.size() - 1;
  out.busy.assign(columns, 0.f);
  out.cause.assign(columns, -1);
  for_each_covered_column(rank.summary->busy, edges, rank.shift, [&](size_t c, TimeNs covered) {
    out.busy[c] = float(double(covered) / double(edges[c + 1] - edges[c]));
  });
  // Each cause's idle time per column; the column takes the cause with the most.
  std::vector<TimeNs> most(columns, 0);
  for (int k = 0; k < kIdleCauseCount; ++k)
    for_each_covered_column((*rank.idle)[size_t(k)], edges, rank.shift, [&](size_t c, TimeNs covered) {
      if (covered > most[c]) most[c] = covered, out.cause[c] = int8_t(k);
    });
  return out;
}

RankBins bin_rank(const RankActivity& rank, TimeNs t0, TimeNs t1, int columns) {
  return bin_rank(rank, column_edges(t0, t1, columns));
}

const StragglerRow* straggler_of(const CollectiveAnalysis& a, int64_t rank) {
  for (const StragglerRow& s : a.stragglers)
    if (s.rank == rank) return &s;
  return nullptr;
}

namespace {

// "AllReduce" → "all-reduce(s)"; a name that is not one CamelCase word (a P2P pair, a free-form
// `Collective name` arg) → "collective(s)".
std::string collective_noun(std::string_view name, uint64_t count) {
  bool camel = !name.empty() && std::isupper(static_cast<unsigned char>(name[0]));
  for (char c : name) camel = camel && std::isalpha(static_cast<unsigned char>(c));
  std::string noun = camel ? "" : "collective";
  for (size_t i = 0; camel && i < name.size(); ++i) {
    if (i && std::isupper(static_cast<unsigned char>(name[i]))) noun += '-';
    noun += char(std::tolower(static_cast<unsigned char>(name[i])));
  }
  return count == 1 ? noun : noun + "s";
}

}  // namespace

// cause_in_window's words, or an idle cause's name.
std::string cause_phrase(std::string_view cause) {
  static const std::pair<std::string_view, std::string_view> phrases[] = {
      {"data_loading", "data-loading stalls"},    {"host_sync", "host synchronisation"},
      {"capture_warmup", "capture / warm-up"},     {"host_compute", "host compute"},
      {"launch_bound", "launch-bound dispatch"},   {"host_untraced", "untraced host time"},
      {"cross_stream_wait", "cross-stream waits"}, {"launch_latency", "launch latency"},
      {"collective_wait", "waits in other collectives"},
      {"other", "idle time"},                      {"idle", "idle time"},
      {"host", "host-side work"}};
  for (auto& [id, phrase] : phrases)
    if (cause == id) return std::string(phrase);
  return std::string(cause);  // compute, communication
}

const StragglerRow* worst_straggler(const CollectiveAnalysis& a) {
  const StragglerRow* worst = nullptr;
  for (const StragglerRow& s : a.stragglers)
    if (s.late_count > 0 && s.delay_caused > 0 && (!worst || s.delay_caused > worst->delay_caused)) worst = &s;
  return worst;
}

std::string straggler_insight(const CollectiveAnalysis& a) {
  const StragglerRow* worst = worst_straggler(a);
  if (!worst) return "";
  // The kind of collective it was late for, when all of them were one kind.
  std::string name;
  for (const CollectiveInstance& in : a.instances)
    if (in.last_rank == worst->rank && in.skew > 0) name = name.empty() || name == in.name ? in.name : "-";
  std::string text = "rank " + std::to_string(worst->rank) + " made the others wait " + millis(worst->delay_caused) +
                     " over " + std::to_string(worst->late_count) + " " + collective_noun(name, worst->late_count);
  if (!worst->top_cause.empty()) text += ", mostly after " + cause_phrase(worst->top_cause);
  return text;
}

}  // namespace sl::analysis
