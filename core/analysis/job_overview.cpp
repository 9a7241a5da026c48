#include "core/analysis/job_overview.h"

#include <algorithm>
#include <cstdio>

namespace sl::analysis {
namespace {

// Rank-local store time → job clock: the store's origin, the offset when the clocks were
// aligned, relative to the job clock's zero (the earliest rank origin).
TimeNs rank_shift(const CollectiveAnalysis& a, size_t i, const TraceStore& s) {
  return s.origin_ns + (a.aligned && i < a.offsets.size() ? a.offsets[i] : 0) - a.origin_ns;
}

void index_activity(RankActivity& out, const EventTable& table) {
  std::vector<Interval> busy;
  std::vector<Interval> idle[kIdleCauseCount];
  out.start = INT64_MAX, out.end = INT64_MIN;
  for (uint32_t i : table.gpu) {
    const Row& r = table.rows[i];
    if (!is_kernel_memcpy_memset_cat(table.cat(r))) continue;
    busy.push_back({r.ts + out.shift, r.end() + out.shift});
    out.start = std::min(out.start, r.ts + out.shift);
    out.end = std::max(out.end, r.end() + out.shift);
  }
  if (busy.empty()) out.start = out.end = 0;
  for (const IdleGap& g : out.causes.gaps)
    if (g.end > g.start) idle[int(g.cause)].push_back({g.start + out.shift, g.end + out.shift});
  out.busy = Coverage(std::move(busy));
  for (int c = 0; c < kIdleCauseCount; ++c) out.idle[c] = Coverage(std::move(idle[c]));
}

std::string millis(TimeNs ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", double(ns) / 1e6);
  return buf;
}

}  // namespace

Coverage::Coverage(std::vector<Interval> intervals) : merged_(merge_intervals(std::move(intervals))) {
  prefix_.reserve(merged_.size() + 1);
  prefix_.push_back(0);
  for (const Interval& i : merged_) prefix_.push_back(prefix_.back() + (i.end - i.start));
}

void Coverage::cumulative(const std::vector<TimeNs>& times, std::vector<TimeNs>& out) const {
  out.resize(times.size());
  size_t i = 0, n = merged_.size();  // first interval ending after the current time
  for (size_t k = 0; k < times.size(); ++k) {
    TimeNs t = times[k];
    if (i < n && merged_[i].end <= t) {  // gallop, then binary search in the last step
      size_t step = 1;
      while (i + step < n && merged_[i + step].end <= t) step *= 2;
      auto first = merged_.begin() + ptrdiff_t(i + step / 2), last = merged_.begin() + ptrdiff_t(std::min(i + step, n));
      i = size_t(std::upper_bound(first, last, t, [](TimeNs v, const Interval& x) { return v < x.end; }) - merged_.begin());
    }
    out[k] = prefix_[i] + (i < n ? std::max<TimeNs>(0, t - merged_[i].start) : 0);
  }
}

JobOverview build_job_overview(const Job& job, const CollectiveOptions& options) {
  JobOverview out;
  std::vector<size_t> loaded;
  for (size_t i = 0; i < job.ranks.size(); ++i)
    if (job.ranks[i].ok()) loaded.push_back(i);
  // Tables are only needed while analysing: each rank keeps its merged intervals and gaps.
  std::vector<EventTable> tables(loaded.size());
  out.ranks.resize(loaded.size());
  parallel_for(loaded.size(), options.threads, [&](size_t k) {
    const JobRank& r = job.ranks[loaded[k]];
    TableOptions table_options;
    table_options.rank = r.rank;
    tables[k] = build_table(*r.store, table_options);
    out.ranks[k].causes = idle_causes(tables[k]);
    out.ranks[k].rank = r.rank;
    out.ranks[k].job_index = loaded[k];
  });
  std::vector<RankInput> inputs;
  for (size_t k = 0; k < loaded.size(); ++k)
    inputs.push_back({out.ranks[k].rank, job.ranks[loaded[k]].store.get(), &tables[k], &out.ranks[k].causes});
  out.collectives = analyze_collectives(inputs, options);
  parallel_for(loaded.size(), options.threads, [&](size_t k) {
    out.ranks[k].shift = rank_shift(out.collectives, k, *job.ranks[loaded[k]].store);
    index_activity(out.ranks[k], tables[k]);
    tables[k] = EventTable{};
  });
  for (const RankActivity& r : out.ranks) out.span = std::max(out.span, r.end);
  for (const CollectiveInstance& in : out.collectives.instances)
    for (const CollectiveArrival& a : in.arrivals) out.span = std::max(out.span, a.end);
  return out;
}

RankBins bin_rank(const RankActivity& rank, TimeNs t0, TimeNs t1, int columns) {
  RankBins out;
  if (columns <= 0 || t1 <= t0) return out;
  out.busy.resize(size_t(columns));
  out.cause.assign(size_t(columns), -1);
  // Column edges (strictly increasing, so every column has a width), then each index's
  // cumulative coverage at the edges: a column's share is the difference of its two edges.
  std::vector<TimeNs> edges(size_t(columns) + 1);
  double width = double(t1 - t0) / columns;
  for (int c = 0; c <= columns; ++c) edges[size_t(c)] = std::max(t0 + TimeNs(width * c), c ? edges[size_t(c) - 1] + 1 : t0);
  std::vector<TimeNs> busy, idle;
  rank.busy.cumulative(edges, busy);
  for (size_t c = 0; c < size_t(columns); ++c)
    out.busy[c] = float(double(busy[c + 1] - busy[c]) / double(edges[c + 1] - edges[c]));
  std::vector<TimeNs> most(size_t(columns), 0);
  for (int k = 0; k < kIdleCauseCount; ++k) {
    if (rank.idle[k].empty()) continue;
    rank.idle[k].cumulative(edges, idle);
    for (size_t c = 0; c < size_t(columns); ++c)
      if (TimeNs v = idle[c + 1] - idle[c]; v > most[c]) most[c] = v, out.cause[c] = int8_t(k);
  }
  return out;
}

const StragglerRow* straggler_of(const CollectiveAnalysis& a, int64_t rank) {
  for (const StragglerRow& s : a.stragglers)
    if (s.rank == rank) return &s;
  return nullptr;
}

std::string straggler_insight(const CollectiveAnalysis& a) {
  const StragglerRow* worst = nullptr;
  for (const StragglerRow& s : a.stragglers)
    if (s.late_count > 0 && s.delay_caused > 0 && (!worst || s.delay_caused > worst->delay_caused)) worst = &s;
  if (!worst) return "";
  std::string text = "rank " + std::to_string(worst->rank) + " made the others wait " + millis(worst->delay_caused) + " over " +
                     std::to_string(worst->late_count) + " collective" + (worst->late_count == 1 ? "" : "s");
  if (!worst->top_cause.empty()) text += ", mostly after " + worst->top_cause;
  return text;
}

}  // namespace sl::analysis
