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
    case IdleCause::CollectiveWait: return "collective_wait";
  }
  return "other";
}

bool is_gpu_work(const EventTable& t, const Row& r) {
  if (r.stream == -1) return false;
  if (t.mode == Mode::Hta) return is_kernel_memcpy_memset_cat(t.cat(r));
  return t.cat(r) != "gpu_user_annotation";
}

Interval idle_window(const EventTable& t) {
  TimeNs first = 0, last = 0;
  bool any = false;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (!is_gpu_work(t, r)) continue;
    first = any ? std::min(first, r.ts) : r.ts;
    last = any ? std::max(last, r.end()) : r.end();
    any = true;
  }
  if (!any) return {0, 0};
  const std::vector<Iteration>& steps = t.store->iterations;
  if (!steps.empty()) {
    for (const Iteration& it : steps) first = std::min(first, it.start), last = std::max(last, it.end);
    return {first, last};
  }
  for (const Row& r : t.rows) first = std::min(first, r.ts), last = std::max(last, r.end());
  return {first, last};
}

namespace {

// Rows per stream that `keep` accepts, streams in order of first appearance, rows sorted by start
// (stable, so ties keep row order).
template <class Keep>
std::vector<std::pair<int64_t, std::vector<uint32_t>>> activities_by_stream(const EventTable& t, Keep keep) {
  std::vector<std::pair<int64_t, std::vector<uint32_t>>> out;
  std::unordered_map<int64_t, size_t> slot;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (!keep(r)) continue;
    auto [it, fresh] = slot.try_emplace(r.stream, out.size());
    if (fresh) out.push_back({r.stream, {}});
    out[it->second].second.push_back(i);
  }
  for (auto& [stream, rows] : out)
    std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
  return out;
}

}  // namespace

std::vector<std::pair<int64_t, std::vector<uint32_t>>> gpu_work_by_stream(const EventTable& t) {
  auto streams = activities_by_stream(t, [&](const Row& r) { return is_gpu_work(t, r); });
  std::erase_if(streams, [&](const auto& s) {
    return std::all_of(s.second.begin(), s.second.end(),
                       [&](uint32_t i) { return kernel_type(t, t.rows[i]) == KernelType::Sync; });
  });
  return streams;
}

std::vector<IdleBreakdownRow> idle_breakdown(const EventTable& t, const IdleBreakdownOptions& o) {
  std::vector<IdleBreakdownRow> out;
  auto kernel_memcpy_memset = [&](const Row& r) { return is_kernel_memcpy_memset_cat(t.cat(r)); };
  for (auto& [stream, rows] : activities_by_stream(t, kernel_memcpy_memset)) {
    // The first activity has no gap but still lands in "other" (HTA's NaN interval).
    bool present[3] = {false, false, true};
    std::vector<double> gaps[3];
    TimeNs run_end = rows.empty() ? 0 : t.rows[rows[0]].end();
    for (size_t k = 1; k < rows.size(); ++k) {
      const Row& prev = t.rows[rows[k - 1]];
      const Row& cur = t.rows[rows[k]];
      // (HTA) the immediately preceding activity's end, so an overlapped activity gives a
      // negative gap (HTA prints negative idle). Sightline: the running maximum end, and an
      // activity that starts before it has a zero gap.
      const bool hta = t.mode == Mode::Hta;
      TimeNs prev_end = hta ? prev.end() : run_end;
      TimeNs gap = hta ? cur.ts - prev_end : std::max<TimeNs>(0, cur.ts - prev_end);
      run_end = std::max(run_end, cur.end());
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

bool contains_icase(std::string_view s, std::string_view part) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  return std::search(s.begin(), s.end(), part.begin(), part.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != s.end();
}

// Whether a CPU slice is the thread doing work (an op, a runtime call) rather than a marker that
// spans it: user annotations (ProfilerStep#, `## forward ##`), Python frames (a `<module>`
// frame spans the whole run) and the profiler's own `Trace` spans.
bool is_host_work(std::string_view cat) {
  return cat != "Trace" && !contains_icase(cat, "annotation") && !contains_icase(cat, "python");
}

// CPU-side facts the cause rules query, indexed once per report.
struct HostIndex {
  std::unordered_map<uint32_t, IntervalIndex> data_loading_by_process;
  std::unordered_map<uint32_t, IntervalIndex> blocking_by_track;
  std::unordered_map<uint32_t, IntervalIndex> work_by_track;  // only threads that stand in for a missing launch
  std::unordered_map<uint32_t, std::vector<TimeNs>> stream_waits_by_track;  // starts, sorted
  std::unordered_map<int64_t, std::vector<TimeNs>> gpu_stream_waits;        // by stream
};

HostIndex index_host(const EventTable& t, const IdleCauseOptions& o, const std::vector<uint32_t>& work_tracks) {
  HostIndex h;
  const TraceStore& s = *t.store;
  std::unordered_map<uint32_t, std::vector<Interval>> dl, blk, work;
  for (uint32_t track : work_tracks)
    if (track != kNone) work[track];
  auto matches_loader = [&](std::string_view n) {
    for (const auto& p : o.data_loader_patterns)
      if (n.find(p) != std::string_view::npos) return true;
    return false;
  };
  // Names and categories repeat: each distinct one is tested once (flags per string id).
  enum : uint8_t { kKnown = 1, kLoader = 2, kBlocking = 4, kStreamWait = 8, kHostWork = 16 };
  std::vector<uint8_t> name_flags(s.strings.size(), 0), cat_flags(s.strings.size(), 0);
  auto flags_of_name = [&](StringId id) {
    uint8_t& f = name_flags[id];
    if (!f) {
      std::string_view n = s.strings.view(id);
      f = uint8_t(kKnown | (matches_loader(n) ? kLoader : 0) | (is_blocking_call(n) ? kBlocking : 0) |
                  (is_stream_wait(n) ? kStreamWait : 0));
    }
    return f;
  };
  auto host_work_cat = [&](StringId id) {
    uint8_t& f = cat_flags[id];
    if (!f) f = uint8_t(kKnown | (is_host_work(s.strings.view(id)) ? kHostWork : 0));
    return (f & kHostWork) != 0;
  };
  uint32_t work_track = kNone;  // the last track looked up in `work`, and its entry
  std::vector<Interval>* work_of_track = nullptr;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    const uint8_t f = flags_of_name(r.name);
    if (f & kLoader) dl[s.tracks[r.ref.track].process].push_back({r.ts, r.end()});
    if (f & kBlocking) blk[r.ref.track].push_back({r.ts, r.end()});
    if (f & kStreamWait) h.stream_waits_by_track[r.ref.track].push_back(r.ts);
    if (r.ref.track != work_track) {  // CPU rows come track by track
      work_track = r.ref.track;
      auto it = work.find(work_track);
      work_of_track = it == work.end() ? nullptr : &it->second;
    }
    if (work_of_track && host_work_cat(r.cat)) work_of_track->push_back({r.ts, r.end()});
  }
  for (uint32_t i : t.gpu)
    if (flags_of_name(t.rows[i].name) & kStreamWait) h.gpu_stream_waits[t.rows[i].stream].push_back(t.rows[i].ts);
  for (auto& [p, v] : dl) h.data_loading_by_process.emplace(p, IntervalIndex(std::move(v)));
  for (auto& [k, v] : blk) h.blocking_by_track.emplace(k, IntervalIndex(std::move(v)));
  for (auto& [k, v] : work) h.work_by_track.emplace(k, IntervalIndex(std::move(v)));
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

using StreamRows = std::vector<std::pair<int64_t, std::vector<uint32_t>>>;

// The CPU threads that launched the given rows' linked work, most launches first (at most 4:
// the main thread, the autograd thread, a few workers).
std::vector<uint32_t> launchers(const EventTable& t, const std::vector<uint32_t>& rows) {
  std::vector<uint64_t> count(t.store->tracks.size(), 0);  // per track (a few dozen)
  for (uint32_t i : rows)
    if (t.rows[i].launch >= 0) ++count[t.rows[size_t(t.rows[i].launch)].ref.track];
  std::vector<std::pair<uint32_t, uint64_t>> v;
  for (uint32_t track = 0; track < count.size(); ++track)
    if (count[track]) v.push_back({track, count[track]});
  std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  std::vector<uint32_t> out;
  for (size_t i = 0; i < v.size() && i < 4; ++i) out.push_back(v[i].first);
  return out;
}

// Applies §2b's rules to one gap. Kept apart from the walk over the streams so the rules read
// in their order.
class CauseRules {
public:
  CauseRules(const EventTable& t, const IdleCauseOptions& o, const StreamRows& streams)
      : t_(t), o_(o), streams_(streams) {
    for (auto& [stream, rows] : streams) {
      std::vector<Interval> v;
      for (uint32_t i : rows) v.push_back({t.rows[i].ts, t.rows[i].end()});
      busy_.emplace_back(std::move(v));
      launchers_.push_back(launchers(t, rows));
      collective_only_.push_back(std::all_of(rows.begin(), rows.end(), [&](uint32_t i) {
        return kernel_type(t, t.rows[i]) == KernelType::Communication;
      }));
    }
    std::vector<uint32_t> all;
    for (auto& [stream, rows] : streams) all.insert(all.end(), rows.begin(), rows.end());
    rank_launchers_ = launchers(t, all);
    std::vector<uint32_t> stand_ins = rank_launchers_;
    for (const auto& l : launchers_) stand_ins.insert(stand_ins.end(), l.begin(), l.end());
    host_ = index_host(t, o, stand_ins);
  }

  // `prev` = the activity whose end began the gap (-1 for a leading edge); g.next, g.edge set.
  void classify(IdleGap& g, size_t si, int32_t prev) const {
    const Row* next = g.next >= 0 ? &t_.rows[size_t(g.next)] : nullptr;
    const Row* prev_row = prev >= 0 ? &t_.rows[size_t(prev)] : nullptr;
    // The launch that ends the gap: the next activity's; for a trailing edge nothing was
    // launched in the window, and the last activity's launching thread is the one to look at.
    const Row* launch = launch_of(next);
    const Row* host_launch = next ? launch : launch_of(prev_row);
    g.host_track = host_launch ? host_launch->ref.track : stand_in(si, g);
    g.host_inferred = !host_launch && g.host_track != kNone;
    if (collective_only_[si]) {
      // A stream that only carries collectives idles until the next collective is issued and
      // its peers are ready: its own reading, not the compute streams' host/launch causes.
      g.cause = IdleCause::CollectiveWait;
      return;
    }
    const TimeNs len = g.length();
    bool late;
    if (g.edge == IdleGap::Edge::Trailing) late = true;  // nothing more was launched in the window
    else if (launch) late = launch->ts > g.start;
    else late = g.host_inferred && 2 * host_.work_by_track.at(g.host_track).covered(g.start, g.end) >= len;
    if (late) {
      const bool host = g.host_track != kNone;
      auto* dl = host ? find_ptr(host_.data_loading_by_process, t_.store->tracks[g.host_track].process) : nullptr;
      auto* blk = host ? find_ptr(host_.blocking_by_track, g.host_track) : nullptr;
      if (dl && 2 * dl->covered(g.start, g.end) >= len) g.cause = IdleCause::DataLoading;
      else if (blk && 2 * blk->covered(g.start, g.end) >= len) g.cause = IdleCause::HostSync;
      else if (g.edge == IdleGap::Edge::Trailing && other_stream_busy(si, g)) g.cause = IdleCause::CrossStreamWait;
      else g.cause = IdleCause::HostLaunchBound;
      return;
    }
    // Already launched: waiting on another stream, launch latency, or something else.
    bool waits = false;
    if (launch) {
      const Row* prev_launch = launch_of(prev_row);
      TimeNs lo = prev_launch ? prev_launch->ts : g.start;
      waits = any_in(find_ptr(host_.stream_waits_by_track, launch->ref.track), lo, launch->ts);
    }
    waits = waits || any_in(find_ptr(host_.gpu_stream_waits, streams_[si].first), prev_row ? prev_row->ts : g.start, g.end);
    waits = waits || other_stream_busy(si, g);
    if (waits) g.cause = IdleCause::CrossStreamWait;
    else if (len < o_.launch_latency) g.cause = IdleCause::LaunchLatency;
    else g.cause = IdleCause::Other;
  }

private:
  const Row* launch_of(const Row* activity) const {
    return activity && activity->launch >= 0 ? &t_.rows[size_t(activity->launch)] : nullptr;
  }
  // The thread that stands in for a missing launch link on stream `si`: of the threads that
  // launch the stream's linked work (else the rank's), the one that ran host work for most of
  // the gap; ties (and a gap no thread worked in) go to the one with the most launches.
  uint32_t stand_in(size_t si, const IdleGap& g) const {
    const std::vector<uint32_t>& threads = launchers_[si].empty() ? rank_launchers_ : launchers_[si];
    uint32_t best = kNone;
    TimeNs most = -1;
    for (uint32_t track : threads) {
      TimeNs worked = host_.work_by_track.at(track).covered(g.start, g.end);
      if (worked > most) best = track, most = worked;
    }
    return best;
  }
  bool other_stream_busy(size_t si, const IdleGap& g) const {
    for (size_t oi = 0; oi < busy_.size(); ++oi)
      if (oi != si && busy_[oi].covered(g.start, g.end) == g.length()) return true;
    return false;
  }

  const EventTable& t_;
  const IdleCauseOptions& o_;
  const StreamRows& streams_;
  std::vector<IntervalIndex> busy_;      // per stream
  std::vector<std::vector<uint32_t>> launchers_;  // per stream: launching threads, most launches first
  std::vector<char> collective_only_;             // per stream
  std::vector<uint32_t> rank_launchers_;
  HostIndex host_;
};

void summarise(const EventTable& t, IdleCauses& out) {
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
      // The 5 longest, ties in gap order (`longest` holds gap indices in increasing order, so
      // this equals a stable sort by length cut to 5).
      const size_t keep = std::min<size_t>(5, row.longest.size());
      std::partial_sort(row.longest.begin(), row.longest.begin() + ptrdiff_t(keep), row.longest.end(), [&](uint32_t a, uint32_t b) {
        const TimeNs la = out.gaps[a].length(), lb = out.gaps[b].length();
        return la != lb ? la > lb : a < b;
      });
      row.longest.resize(keep);
      out.rows.push_back(std::move(row));
    }
  }
}

}  // namespace

IdleCauses idle_causes(const EventTable& t, const IdleCauseOptions& o) {
  IdleCauses out;
  StreamRows streams = gpu_work_by_stream(t);
  // Edges only in Sightline mode: the (HTA) table drops the last step, so its window is not the
  // store's iterations.
  const bool edges = t.mode == Mode::Sightline;
  if (edges) out.window = idle_window(t);
  CauseRules rules(t, o, streams);
  auto emit = [&](size_t si, TimeNs start, TimeNs end, int32_t next, int32_t prev, IdleGap::Edge edge) {
    IdleGap g;
    g.stream = streams[si].first;
    g.track = t.rows[size_t(next >= 0 ? next : prev)].ref.track;  // where the timeline paints it
    g.start = start;
    g.end = end;
    g.next = next;
    g.edge = edge;
    rules.classify(g, si, prev);
    out.gaps.push_back(g);
  };
  for (size_t si = 0; si < streams.size(); ++si) {
    const std::vector<uint32_t>& rows = streams[si].second;
    if (rows.empty()) continue;
    const Row& first = t.rows[rows[0]];
    if (edges && out.window.start < first.ts)
      emit(si, out.window.start, first.ts, int32_t(rows[0]), -1, IdleGap::Edge::Leading);
    TimeNs run_end = first.end();
    int32_t prev = int32_t(rows[0]);
    for (size_t k = 1; k < rows.size(); ++k) {
      const Row& cur = t.rows[rows[k]];
      if (cur.ts > run_end) emit(si, run_end, cur.ts, int32_t(rows[k]), prev, IdleGap::Edge::None);
      if (cur.end() >= run_end) prev = int32_t(rows[k]);
      run_end = std::max(run_end, cur.end());
    }
    if (edges && run_end < out.window.end) emit(si, run_end, out.window.end, -1, prev, IdleGap::Edge::Trailing);
  }
  summarise(t, out);
  return out;
}

}  // namespace sl::analysis
