#include "core/analysis/idle_time.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/analysis/interval_index.h"

namespace sl::analysis {

std::string_view idle_category_name(IdleCategory c) {
  switch (c) {
    case IdleCategory::HostWait: return "host_wait";
    case IdleCategory::KernelWait: return "kernel_wait";
    case IdleCategory::Other: return "other";
  }
  return "other";
}

std::string_view idle_cause_name(IdleCause c) {
  switch (c) {
    case IdleCause::DataLoading: return "data_loading";
    case IdleCause::HostSync: return "host_sync";
    case IdleCause::HostLaunchBound: return "host_launch_bound";
    case IdleCause::CrossStreamWait: return "cross_stream_wait";
    case IdleCause::LaunchLatency: return "launch_latency";
    case IdleCause::Other: return "other";
  }
  return "other";
}

namespace {

// Kernel/memcpy/memset rows per stream, streams in order of first appearance, rows sorted by start
// (stable, so ties keep row order).
std::vector<std::pair<int64_t, std::vector<uint32_t>>> activities_by_stream(const EventTable& t) {
  std::vector<std::pair<int64_t, std::vector<uint32_t>>> out;
  std::unordered_map<int64_t, size_t> slot;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (!is_kernel_memcpy_memset_cat(t.cat(r))) continue;
    auto [it, fresh] = slot.try_emplace(r.stream, out.size());
    if (fresh) out.push_back({r.stream, {}});
    out[it->second].second.push_back(i);
  }
  for (auto& [stream, rows] : out)
    std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
  return out;
}

}  // namespace

std::vector<IdleBreakdownRow> idle_breakdown(const EventTable& t, const IdleBreakdownOptions& o) {
  std::vector<IdleBreakdownRow> out;
  for (auto& [stream, rows] : activities_by_stream(t)) {
    // The first activity has no gap but still lands in "other" (HTA's NaN interval).
    bool present[3] = {false, false, true};
    std::vector<double> gaps[3];
    for (size_t k = 1; k < rows.size(); ++k) {
      const Row& prev = t.rows[rows[k - 1]];  // immediately preceding, not the running max
      const Row& cur = t.rows[rows[k]];
      TimeNs prev_end = prev.end();
      TimeNs gap = cur.ts - prev_end;
      std::optional<TimeNs> launch = t.launch_ts(cur);
      IdleCategory c = IdleCategory::Other;
      if (launch && *launch > prev_end) c = IdleCategory::HostWait;
      else if (gap < o.consecutive_kernel_delay) c = IdleCategory::KernelWait;
      present[int(c)] = true;
      gaps[int(c)].push_back(double(gap));
    }
    double total = 0;
    for (auto& g : gaps)
      for (double x : g) total += x;
    for (int c = 0; c < 3; ++c) {
      if (!present[c]) continue;
      IdleBreakdownRow row;
      row.rank = t.rank;
      row.stream = stream;
      row.category = IdleCategory(c);
      double sum = 0;
      for (double x : gaps[c]) sum += x;
      row.idle = TimeNs(sum);
      if (total != 0) {
        row.ratio = sum / total;
        if (t.mode == Mode::Hta) row.ratio = round_to(*row.ratio, 2);
      }
      row.stats = describe(gaps[c]);
      out.push_back(row);
    }
  }
  return out;
}

namespace {

bool is_blocking_call(std::string_view n) {
  static constexpr std::string_view names[] = {
      "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaMemcpy",
      "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize", "cuMemcpyDtoH", "cuMemcpyHtoD",
      "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize", "hipMemcpy"};
  for (auto x : names)
    if (n == x) return true;
  return false;
}

bool is_stream_wait(std::string_view n) {
  return n == "cudaStreamWaitEvent" || n == "hipStreamWaitEvent" || n == "cuStreamWaitEvent" ||
         n == "Stream Wait Event";
}

// CPU-side facts the cause rules query, indexed once per report.
struct HostIndex {
  std::unordered_map<uint32_t, IntervalIndex> data_loading_by_process;
  std::unordered_map<uint32_t, IntervalIndex> blocking_by_track;
  std::unordered_map<uint32_t, std::vector<TimeNs>> stream_waits_by_track;  // starts, sorted
  std::unordered_map<int64_t, std::vector<TimeNs>> gpu_stream_waits;        // by stream
};

HostIndex index_host(const EventTable& t, const IdleCauseOptions& o) {
  HostIndex h;
  const TraceStore& s = *t.store;
  std::unordered_map<uint32_t, std::vector<Interval>> dl, blk;
  auto matches_loader = [&](std::string_view n) {
    for (const auto& p : o.data_loader_patterns)
      if (n.find(p) != std::string_view::npos) return true;
    return false;
  };
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    std::string_view n = t.name(r);
    if (matches_loader(n)) dl[s.tracks[r.ref.track].process].push_back({r.ts, r.end()});
    if (is_blocking_call(n)) blk[r.ref.track].push_back({r.ts, r.end()});
    if (is_stream_wait(n)) h.stream_waits_by_track[r.ref.track].push_back(r.ts);
  }
  for (uint32_t i : t.gpu)
    if (is_stream_wait(t.name(t.rows[i]))) h.gpu_stream_waits[t.rows[i].stream].push_back(t.rows[i].ts);
  for (auto& [p, v] : dl) h.data_loading_by_process.emplace(p, IntervalIndex(std::move(v)));
  for (auto& [k, v] : blk) h.blocking_by_track.emplace(k, IntervalIndex(std::move(v)));
  for (auto& [k, v] : h.stream_waits_by_track) std::sort(v.begin(), v.end());
  for (auto& [k, v] : h.gpu_stream_waits) std::sort(v.begin(), v.end());
  return h;
}

bool any_in(const std::vector<TimeNs>* v, TimeNs lo, TimeNs hi) {  // some value in [lo, hi]
  if (!v) return false;
  auto it = std::lower_bound(v->begin(), v->end(), lo);
  return it != v->end() && *it <= hi;
}

template <class M, class K>
auto* find_ptr(M& m, const K& k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace

IdleCauses idle_causes(const EventTable& t, const IdleCauseOptions& o) {
  IdleCauses out;
  auto streams = activities_by_stream(t);
  HostIndex host = index_host(t, o);
  const TraceStore& s = *t.store;
  // Busy time per stream, to tell whether another stream covered a gap.
  std::vector<IntervalIndex> busy;
  for (auto& [stream, rows] : streams) {
    std::vector<Interval> v;
    for (uint32_t i : rows) v.push_back({t.rows[i].ts, t.rows[i].end()});
    busy.emplace_back(std::move(v));
  }
  for (size_t si = 0; si < streams.size(); ++si) {
    auto& [stream, rows] = streams[si];
    if (rows.empty()) continue;
    TimeNs run_end = t.rows[rows[0]].end();
    int32_t prev = int32_t(rows[0]);
    for (size_t k = 1; k < rows.size(); ++k) {
      const Row& cur = t.rows[rows[k]];
      if (cur.ts > run_end) {
        IdleGap g;
        g.stream = stream;
        g.track = cur.ref.track;
        g.start = run_end;
        g.end = cur.ts;
        g.next = int32_t(rows[k]);
        const TimeNs len = g.length();
        const Row* launch = cur.launch >= 0 ? &t.rows[size_t(cur.launch)] : nullptr;
        const bool late_launch = launch && launch->ts > g.start;
        if (late_launch) {
          uint32_t process = s.tracks[launch->ref.track].process;
          auto* dl = find_ptr(host.data_loading_by_process, process);
          auto* blk = find_ptr(host.blocking_by_track, launch->ref.track);
          if (dl && 2 * dl->covered(g.start, g.end) >= len) g.cause = IdleCause::DataLoading;
          else if (blk && 2 * blk->covered(g.start, g.end) >= len) g.cause = IdleCause::HostSync;
          else g.cause = IdleCause::HostLaunchBound;
        } else {
          // Already launched: waiting on another stream, launch latency, or something else.
          bool waits = false;
          const Row& p = t.rows[size_t(prev)];
          if (launch) {
            TimeNs lo = p.launch >= 0 ? t.rows[size_t(p.launch)].ts : g.start;
            waits = any_in(find_ptr(host.stream_waits_by_track, launch->ref.track), lo, launch->ts);
          }
          waits = waits || any_in(find_ptr(host.gpu_stream_waits, stream), p.ts, g.end);
          for (size_t oi = 0; !waits && oi < busy.size(); ++oi)
            waits = oi != si && busy[oi].covered(g.start, g.end) == len;
          if (waits) g.cause = IdleCause::CrossStreamWait;
          else if (len < o.launch_latency) g.cause = IdleCause::LaunchLatency;
          else g.cause = IdleCause::Other;
        }
        out.gaps.push_back(g);
      }
      if (cur.end() >= run_end) prev = int32_t(rows[k]);
      run_end = std::max(run_end, cur.end());
    }
  }
  // Summaries per stream and cause.
  std::map<std::pair<int64_t, int>, IdleCauseRow> agg;
  std::map<int64_t, TimeNs> stream_total;
  std::vector<int64_t> stream_order;
  for (uint32_t gi = 0; gi < out.gaps.size(); ++gi) {
    const IdleGap& g = out.gaps[gi];
    if (!stream_total.count(g.stream)) stream_order.push_back(g.stream);
    stream_total[g.stream] += g.length();
    IdleCauseRow& row = agg[{g.stream, int(g.cause)}];
    row.rank = t.rank;
    row.stream = g.stream;
    row.cause = g.cause;
    row.idle += g.length();
    ++row.count;
    row.longest.push_back(gi);
  }
  for (int64_t stream : stream_order) {
    for (int c = 0; c < kIdleCauseCount; ++c) {
      auto it = agg.find({stream, c});
      if (it == agg.end()) continue;
      IdleCauseRow row = std::move(it->second);
      row.share = stream_total[stream] > 0 ? double(row.idle) / double(stream_total[stream]) : 0;
      std::stable_sort(row.longest.begin(), row.longest.end(),
                       [&](uint32_t a, uint32_t b) { return out.gaps[a].length() > out.gaps[b].length(); });
      if (row.longest.size() > 5) row.longest.resize(5);
      out.rows.push_back(std::move(row));
    }
  }
  return out;
}

}  // namespace sl::analysis
