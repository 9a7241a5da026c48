#include "core/analysis/idle_time.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/analysis/idle_host.h"
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
    case IdleCause::CaptureWarmup: return "capture_warmup";
    case IdleCause::HostCompute: return "host_compute";
    case IdleCause::LaunchBound: return "launch_bound";
    case IdleCause::HostUntraced: return "host_untraced";
    case IdleCause::CrossStreamWait: return "cross_stream_wait";
    case IdleCause::CollectiveWait: return "collective_wait";
    case IdleCause::LaunchLatency: return "launch_latency";
    case IdleCause::Other: return "other";
  }
  return "other";
}

bool is_host_cause(IdleCause c) {
  return c == IdleCause::DataLoading || c == IdleCause::HostSync || c == IdleCause::HostCompute ||
         c == IdleCause::LaunchBound || c == IdleCause::HostUntraced;
}

bool is_wait_cause(IdleCause c) { return c == IdleCause::CrossStreamWait || c == IdleCause::CollectiveWait; }

std::string_view idle_cause_fix(IdleCause c) {
  switch (c) {
    case IdleCause::DataLoading: return "more DataLoader workers, pinned memory and prefetching keep the GPU fed";
    case IdleCause::HostSync: return "take the synchronising calls (.item(), .cpu(), blocking copies, synchronize) out of the step";
    case IdleCause::CaptureWarmup: return "none: graph capture, compilation and warm-up are not steady state";
    case IdleCause::HostCompute: return "move this CPU work off the launching thread, overlap it with the GPU, or make it cheaper";
    case IdleCause::LaunchBound: return "CUDA graphs, torch.compile, fusion: fewer and larger kernels";
    case IdleCause::HostUntraced: return "none the trace can name: the thread recorded nothing (a lock, the GIL, another process); profile with Python stacks";
    case IdleCause::CrossStreamWait: return "shorten or overlap the work on the stream waited for";
    case IdleCause::CollectiveWait: return "balance the ranks: the collective waits for its slowest peer";
    case IdleCause::LaunchLatency: return "none for a gap this short: fewer launches (CUDA graphs) remove it";
    case IdleCause::Other: return "none named: the work was queued and nothing on the host or another stream held it";
  }
  return "";
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

// Every thread that launches anything: a gap's W lies on the thread that launched its next work.
std::vector<uint32_t> all_launching_threads(const EventTable& t) {
  std::vector<char> seen(t.store->tracks.size(), 0);
  std::vector<uint32_t> out;
  for (uint32_t i : t.gpu)
    if (int32_t l = t.rows[i].launch; l >= 0 && !seen[t.rows[size_t(l)].ref.track])
      seen[t.rows[size_t(l)].ref.track] = 1, out.push_back(t.rows[size_t(l)].ref.track);
  return out;
}

// Applies §2b's rules to one gap. Kept apart from the walk over the streams so the rules read
// in their order.
class CauseRules {
public:
  enum class Part : uint8_t { Whole, Host, Queued };

  // Each host-cause device piece's top events, over its own part of its gap's host window: the
  // gap's when the piece covers all of it, else measured again (rarely: pieces are cut by other
  // streams' work).
  void top_of_pieces(IdleCauses& out) const {
    for (DeviceIdle& d : out.device) {
      const IdleGap& g = out.gaps[d.gap];
      if (g.top_count == 0) continue;  // no event in the whole window: none in a part of it either
      const TimeNs w0 = d.start, w1 = std::min(d.end, g.host_end);
      if (w1 <= w0 || int(g.cause) > int(IdleCause::HostUntraced)) continue;
      d.top_begin = uint32_t(out.device_top.size());
      if (w0 == g.start && w1 == g.host_end) {
        out.device_top.insert(out.device_top.end(), out.top_events.begin() + g.top_begin,
                              out.top_events.begin() + g.top_begin + g.top_count);
      } else {
        detail::HostWindow w = host_.window(g.host_track, w0, w1);
        out.device_top.insert(out.device_top.end(), w.top.begin(), w.top.end());
      }
      d.top_count = uint8_t(out.device_top.size() - d.top_begin);
    }
  }

  CauseRules(const EventTable& t, const IdleCauseOptions& o, const StreamRows& streams)
      : t_(t), o_(o), streams_(streams), host_(t, o, all_launching_threads(t)) {
    size_t rows_in_all = 0;
    for (auto& [stream, rows] : streams) {
      std::vector<Interval> v;
      v.reserve(rows.size());
      rows_in_all += rows.size();
      for (uint32_t i : rows) v.push_back({t.rows[i].ts, t.rows[i].end()});
      busy_.emplace_back(std::move(v));
      launchers_.push_back(launchers(t, rows));
      carries_communication_.push_back(std::any_of(rows.begin(), rows.end(), [&](uint32_t i) {
        return kernel_type(t, t.rows[i]) == KernelType::Communication;
      }));
    }
    std::vector<uint32_t> all;
    all.reserve(rows_in_all);
    for (auto& [stream, rows] : streams) all.insert(all.end(), rows.begin(), rows.end());
    rank_launchers_ = launchers(t, all);
  }

  // Where a gap splits (§2b, our reading): when the next activity's launch starts inside the gap
  // and the activity then waits at least the launch-latency threshold more, the gap is two
  // stretches with two fixes: before the launch the host was late (rules 1-6 over W), after it
  // the work was queued (rules 7-10). A blocking copy launched early behind an event wait is not
  // host time for 463 ms. A shorter tail is the ordinary launch-to-start delay and stays with the
  // host's part. Returns the split time, or nullopt.
  std::optional<TimeNs> split_at(TimeNs start, TimeNs end, int32_t next) const {
    const Row* launch = next >= 0 ? launch_of(&t_.rows[size_t(next)]) : nullptr;
    if (!launch || blocking_launch(launch) || launch->ts <= start || launch->ts >= end || end - launch->ts < o_.launch_latency)
      return std::nullopt;
    return launch->ts;
  }

  // `prev` = the activity whose end began the gap (-1 for a leading edge); g.next, g.edge set.
  // `whole_start`: where the unsplit gap began (the wait lookups look from there). Host causes
  // append the window's top events to `top`.
  void classify(IdleGap& g, size_t si, int32_t prev, std::vector<HostEvent>& top, Part part, TimeNs whole_start) const {
    const Row* next = g.next >= 0 ? &t_.rows[size_t(g.next)] : nullptr;
    const Row* prev_row = prev >= 0 ? &t_.rows[size_t(prev)] : nullptr;
    // The launch that ends the gap: the next activity's; for a trailing edge nothing was
    // launched in the window, and the last activity's launching thread is the one to look at.
    const Row* launch = launch_of(next);
    const Row* host_launch = next ? launch : launch_of(prev_row);
    g.host_track = host_launch ? host_launch->ref.track : stand_in(si, g);
    g.host_inferred = !host_launch && g.host_track != kNone;
    g.host_end = g.end;
    bool late;
    if (part != Part::Whole) late = part == Part::Host;
    else if (g.edge == IdleGap::Edge::Trailing) late = true;  // nothing more was launched in the window
    else if (blocking_launch(launch) || still_launching(launch, g))
      late = launch->end() > g.start, g.host_end = std::min(g.end, std::max(g.start, launch->end()));
    else if (launch) late = launch->ts > g.start, g.host_end = std::min(g.end, std::max(g.start, launch->ts));
    else late = g.host_inferred && 2 * host_.worked(g.host_track, g.start, g.end) >= g.length();
    if (late) return host_cause(g, top);
    g.cause = already_launched_cause(g, si, launch, prev_row, next, whole_start);
  }

private:
  // Rules 1-6 over W = [gap start, launch start) on the launching thread.
  // Without top events (gaps_only) W's events are measured only when rules 1-3 leave the cause
  // open, and only as far as the rules read them: a walk over W's events is most of the cost.
  void host_cause(IdleGap& g, std::vector<HostEvent>& top) const {
    const bool lazy = o_.gaps_only;
    detail::HostWindow w = lazy ? host_.intervals(g.host_track, g.start, g.host_end)
                                : host_.window(g.host_track, g.start, g.host_end);
    auto half = [&](TimeNs part) { return w.length > 0 && 2 * part >= w.length; };
    if (half(w.data_loading)) g.cause = IdleCause::DataLoading;
    else if (half(w.blocking)) g.cause = IdleCause::HostSync;
    else if (half(w.capture)) g.cause = IdleCause::CaptureWarmup;
    else g.cause = events_cause(g, w, lazy);
    g.top_begin = uint32_t(top.size());
    g.top_count = uint8_t(w.top.size());
    top.insert(top.end(), w.top.begin(), w.top.end());
  }

  // Rules 4-6, W's events measured first when `lazy`.
  IdleCause events_cause(const IdleGap& g, detail::HostWindow& w, bool lazy) const {
    // Work without a launch link (MTIA's DMAs) is launched invisibly: its stand-in thread's ops
    // cannot be told from dispatch, so rule 4 does not apply to it.
    const bool rule4 = !g.host_inferred;
    if (lazy) host_.add_events(g.host_track, g.start, g.host_end, rule4, w);
    if (rule4 && w.length > 0 && 2 * w.compute >= w.length) return IdleCause::HostCompute;
    return w.any_event ? IdleCause::LaunchBound : IdleCause::HostUntraced;
  }

  // Rules 7-10: the work was queued before the gap began.
  IdleCause already_launched_cause(const IdleGap& g, size_t si, const Row* launch, const Row* prev_row, const Row* next,
                                   TimeNs whole_start) const {
    bool waits = false;
    if (launch) {
      const Row* prev_launch = launch_of(prev_row);
      waits = host_.stream_wait_between(launch->ref.track, prev_launch ? prev_launch->ts : whole_start, launch->ts);
    }
    waits = waits || host_.gpu_stream_wait_between(streams_[si].first, prev_row ? prev_row->ts : whole_start, g.end);
    waits = waits || other_stream_busy(si, g);
    if (waits) return IdleCause::CrossStreamWait;
    if (carries_communication_[si] && next && kernel_type(t_, *next) == KernelType::Communication)
      return IdleCause::CollectiveWait;
    if (g.length() < o_.launch_latency) return IdleCause::LaunchLatency;
    return IdleCause::Other;
  }

  // A blocking launch call (cudaMemcpy, hipMemcpyWithStream, ...) holds its thread until its copy
  // is done: the host is late until the call returns (W runs to its end, §2b's "launch start" read
  // as the moment the call lets the copy go), and its gap never splits at the call's start.
  bool blocking_launch(const Row* launch) const {
    if (!launch) return false;
    if (blocking_name_.empty()) blocking_name_.assign(t_.store->strings.size(), 0);
    uint8_t& b = blocking_name_[launch->name];
    if (!b) b = detail::is_blocking_call(t_.name(*launch)) ? 2 : 1;
    return b == 2;
  }

  // A launch call still running when the gap began, and for longer than a launch latency (a 4 s
  // cudaLaunchKernel loading its module), keeps the host late until it returns: the work was not
  // launched yet. A call that returns within the latency is the ordinary launch-to-start delay.
  bool still_launching(const Row* launch, const IdleGap& g) const {
    return launch && launch->ts <= g.start && launch->end() - g.start >= o_.launch_latency;
  }

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
      TimeNs worked = host_.worked(track, g.start, g.end);
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
  detail::HostIndex host_;
  std::vector<IntervalIndex> busy_;      // per stream
  std::vector<std::vector<uint32_t>> launchers_;  // per stream: launching threads, most launches first
  std::vector<char> carries_communication_;       // per stream
  std::vector<uint32_t> rank_launchers_;
  mutable std::vector<uint8_t> blocking_name_;  // per name id: 0 unknown, 1 no, 2 yes
};

std::vector<DeviceIdle> device_idle_pieces(const EventTable& t, const IdleCauses& causes) {
  std::vector<Interval> busy_raw;
  for (uint32_t i : t.gpu)
    if (is_kernel_memcpy_memset_cat(t.cat(t.rows[i]))) busy_raw.push_back({t.rows[i].ts, t.rows[i].end()});
  const std::vector<Interval> busy = merge_intervals(std::move(busy_raw));
  // Each stream gap minus the busy time of every stream: the pieces where the whole GPU waited.
  // The same piece shows up in every stream idle at the time; it goes to the stream that resumed
  // first (its next activity ended the wait), whose gap cause then explains it.
  std::vector<DeviceIdle> found;  // every gap's pieces, in gap order
  for (uint32_t gi = 0; gi < causes.gaps.size(); ++gi) {
    const IdleGap& g = causes.gaps[gi];
    // When the stream resumes: its next activity's start (a split gap's host part ends at the
    // launch, but its stream resumes only with the activity), else the window's end.
    const TimeNs resumes = g.next >= 0 ? t.rows[size_t(g.next)].ts : g.end;
    auto it = std::upper_bound(busy.begin(), busy.end(), g.start, [](TimeNs v, const Interval& b) { return v < b.end; });
    TimeNs at = g.start;
    for (; at < g.end; ++it) {
      TimeNs stop = it == busy.end() ? g.end : std::min(g.end, it->start);
      if (stop > at) found.push_back(DeviceIdle{at, stop, g.cause, resumes, gi});
      if (it == busy.end()) break;
      at = std::max(at, it->end);
    }
  }
  // Every instant goes to the piece covering it whose stream resumes first (ties: gap order): a
  // sweep by start, the covering pieces in a heap ordered by (resumes, gap), expired ones dropped
  // lazily.
  std::vector<uint32_t> by_start(found.size());
  for (uint32_t k = 0; k < found.size(); ++k) by_start[k] = k;
  std::sort(by_start.begin(), by_start.end(), [&](uint32_t a, uint32_t b) {
    return found[a].start != found[b].start ? found[a].start < found[b].start : a < b;
  });
  auto later = [&](uint32_t a, uint32_t b) {  // heap order: the first to resume on top
    return found[a].resumed != found[b].resumed ? found[a].resumed > found[b].resumed : found[a].gap > found[b].gap;
  };
  std::vector<uint32_t> heap;
  std::vector<DeviceIdle> out;
  auto emit = [&](const DeviceIdle& owner, TimeNs from, TimeNs to) {
    if (!out.empty() && out.back().gap == owner.gap && out.back().end == from) out.back().end = to;
    else out.push_back(DeviceIdle{from, to, owner.cause, owner.resumed, owner.gap});
  };
  size_t next = 0;
  TimeNs at = found.empty() ? 0 : found[by_start[0]].start;
  while (next < by_start.size() || !heap.empty()) {
    if (heap.empty()) at = std::max(at, found[by_start[next]].start);
    for (; next < by_start.size() && found[by_start[next]].start <= at; ++next) {
      heap.push_back(by_start[next]);
      std::push_heap(heap.begin(), heap.end(), later);
    }
    while (!heap.empty() && found[heap.front()].end <= at) std::pop_heap(heap.begin(), heap.end(), later), heap.pop_back();
    if (heap.empty()) continue;
    const DeviceIdle& owner = found[heap.front()];
    const TimeNs until = std::min(owner.end, next < by_start.size() ? found[by_start[next]].start : owner.end);
    emit(owner, at, until);
    at = until;
  }
  return out;
}

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
      row.top_events = top_host_events(out, row.longest, 5);  // `longest` still holds every gap here
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

std::vector<HostEvent> sum_host_events(const std::vector<HostEvent>& events, size_t keep) {
  std::unordered_map<StringId, TimeNs> by_name;
  for (const HostEvent& e : events) by_name[e.name] += e.self;
  std::vector<HostEvent> out;
  for (auto& [name, self] : by_name) out.push_back({name, self});
  std::sort(out.begin(), out.end(), [](const HostEvent& a, const HostEvent& b) { return a.self != b.self ? a.self > b.self : a.name < b.name; });
  if (out.size() > keep) out.resize(keep);
  return out;
}

std::vector<HostEvent> top_host_events(const IdleCauses& causes, const std::vector<uint32_t>& gaps, size_t keep) {
  std::vector<HostEvent> events;
  for (uint32_t gi : gaps) {
    const IdleGap& g = causes.gaps[gi];
    events.insert(events.end(), causes.top_events.begin() + g.top_begin, causes.top_events.begin() + g.top_begin + g.top_count);
  }
  return sum_host_events(events, keep);
}

IdleCauses idle_causes(const EventTable& t, const IdleCauseOptions& o) {
  IdleCauses out;
  StreamRows streams = gpu_work_by_stream(t);
  // Edges only in Sightline mode: the (HTA) table drops the last step, so its window is not the
  // store's iterations.
  const bool edges = t.mode == Mode::Sightline;
  if (edges) out.window = idle_window(t);
  CauseRules rules(t, o, streams);
  auto emit_part = [&](size_t si, TimeNs start, TimeNs end, int32_t next, int32_t prev, IdleGap::Edge edge,
                       CauseRules::Part part, TimeNs whole_start) {
    IdleGap g;
    g.stream = streams[si].first;
    g.track = t.rows[size_t(next >= 0 ? next : prev)].ref.track;  // where the timeline paints it
    g.start = start;
    g.end = end;
    g.next = next;
    g.edge = edge;
    rules.classify(g, si, prev, out.top_events, part, whole_start);
    out.gaps.push_back(g);
  };
  auto emit = [&](size_t si, TimeNs start, TimeNs end, int32_t next, int32_t prev, IdleGap::Edge edge) {
    if (std::optional<TimeNs> at = rules.split_at(start, end, next)) {
      emit_part(si, start, *at, next, prev, edge, CauseRules::Part::Host, start);
      emit_part(si, *at, end, next, prev, edge, CauseRules::Part::Queued, start);
    } else {
      emit_part(si, start, end, next, prev, edge, CauseRules::Part::Whole, start);
    }
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
  if (o.gaps_only) return out;
  summarise(t, out);
  if (edges) {
    out.device = device_idle_pieces(t, out);
    rules.top_of_pieces(out);
  }
  return out;
}

}  // namespace sl::analysis
