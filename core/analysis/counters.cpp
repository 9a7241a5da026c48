#include "core/analysis/counters.h"

#include <algorithm>
#include <climits>
#include <map>
#include <unordered_map>

#include "core/analysis/args_util.h"
#include "core/analysis/numpy_sort.h"

namespace sl::analysis {

namespace {

struct Change {
  TimeNs ts;
  int delta;
  uint32_t row;
  uint64_t seq;  // tie order
};

}  // namespace

// (HTA) the queue counts every runtime launch HTA's symbol table knows (analyses.md §0, "launch
// link"), a wider set than the launch statistics' (§4): driver launches (cuLaunchKernel, what
// Triton and torch.compile emit), CUDA graphs and the HIP calls too. Counting only the launch-stats
// set left each such launch and its kernel out (a count 2 lower per cuLaunchKernel, all of a
// ROCm trace).
bool is_hta_runtime_launch_name(std::string_view n) {
  static constexpr std::string_view names[] = {
      "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch",
      "cudaMemcpyAsync", "cudaMemsetAsync", "hipLaunchKernel", "hipExtModuleLaunchKernel",
      "hipModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream",
      "runFunction - job_prep_and_submit_for_execution"};
  return std::find(std::begin(names), std::end(names), n) != std::end(names);
}

std::vector<QueueLengthStream> queue_length(const EventTable& t, const QueueLengthOptions& o) {
  std::map<int64_t, std::vector<Change>> by_stream;
  uint64_t seq = 0;
  if (t.mode == Mode::Hta) {
    // (HTA) launch calls left-joined to GPU rows on correlation: one +1 per (launch, activity)
    // pair on the activity's stream (a launch without activity stays in as a row with no stream),
    // then -1 per activity that has a launch; the concatenation is sorted by time with numpy's
    // unstable quicksort and grouped by stream in that order.
    std::unordered_map<int64_t, std::vector<uint32_t>> gpu_by_corr;
    for (uint32_t i : t.gpu) gpu_by_corr[t.rows[i].corr].push_back(i);
    std::unordered_map<int64_t, bool> launched;
    std::vector<std::pair<int64_t, Change>> joined;  // (stream or INT64_MIN for none, change)
    for (uint32_t c : t.cpu) {
      const Row& r = t.rows[c];
      if (!is_hta_runtime_launch_name(t.name(r))) continue;
      launched[r.corr] = true;
      auto it = gpu_by_corr.find(r.corr);
      if (it == gpu_by_corr.end()) {
        joined.push_back({INT64_MIN, {r.ts, +1, c, seq++}});
        continue;
      }
      for (uint32_t g : it->second) joined.push_back({t.rows[g].stream, {r.ts, +1, c, seq++}});
    }
    for (uint32_t g : t.gpu)
      if (launched.count(t.rows[g].corr)) joined.push_back({t.rows[g].stream, {t.rows[g].ts, -1, g, seq++}});
    std::vector<int64_t> times;
    times.reserve(joined.size());
    for (const auto& j : joined) times.push_back(j.second.ts);
    for (uint32_t k : numpy_quicksort_argsort(times))
      if (joined[k].first != INT64_MIN) by_stream[joined[k].first].push_back(joined[k].second);
  } else {
    for (uint32_t g : t.gpu) {
      const Row& r = t.rows[g];
      if (r.launch < 0 || !is_kernel_memcpy_memset_cat(t.cat(r))) continue;
      by_stream[r.stream].push_back({t.rows[size_t(r.launch)].ts, +1, uint32_t(r.launch), seq++});
      by_stream[r.stream].push_back({r.ts, -1, g, seq++});
    }
  }
  std::vector<QueueLengthStream> out;
  for (auto& [stream, changes] : by_stream) {
    // Sightline: launches before activities at equal times; HTA: already in numpy's order.
    if (t.mode != Mode::Hta)
      std::sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
        if (a.ts != b.ts) return a.ts < b.ts;
        if (a.delta != b.delta) return a.delta > b.delta;
        return a.seq < b.seq;
      });
    QueueLengthStream q;
    q.rank = t.rank;
    q.stream = stream;
    int64_t running = 0;
    std::vector<double> values;
    for (const Change& c : changes) {
      running += c.delta;
      q.series.push_back({c.ts, running, c.row});
      if (o.summary) values.push_back(double(running));
    }
    if (o.summary) {
      for (size_t i = 0; i + 1 < q.series.size(); ++i)
        if (q.series[i].length >= o.max_queue_length) q.time_at_max += q.series[i + 1].ts - q.series[i].ts;
      q.summary = describe(std::move(values));
    }
    out.push_back(std::move(q));
  }
  return out;
}

namespace {

std::string copy_kind(std::string_view name) {
  if (name.substr(0, 6) == "Memset") return "Memset";
  if (name.substr(0, 6) != "Memcpy") return "Memcpy Unknown";
  return std::string(name.substr(0, 11));
}

}  // namespace

std::vector<MemoryBandwidthKind> memory_bandwidth(const EventTable& t) {
  struct Point {
    TimeNs ts;
    double delta;
    uint64_t seq;
  };
  std::map<std::string, std::vector<Point>> by_kind;
  const TraceStore& s = *t.store;
  uint64_t seq = 0;
  std::vector<std::pair<uint32_t, std::string>> members;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    bool memory = kernel_type(t, r) == KernelType::Memory;
    if (memory) members.push_back({i, copy_kind(t.name(r))});
  }
  // Starts first (in row order), then ends: HTA concatenates the two before sorting by time.
  std::vector<std::pair<const std::string*, Point>> all;
  for (int pass = 0; pass < 2; ++pass) {
    for (auto& [i, kind] : members) {
      const Row& r = t.rows[i];
      uint32_t args = s.tracks[r.ref.track].slices.args[r.ref.index];
      double bw = 0;
      if (args != kNone)
        if (auto v = find_number_arg(s.args_json(args), "memory bandwidth (GB/s)")) bw = *v;
      TimeNs dur = r.dur == 0 ? 1000 : r.dur;  // 0 µs counts as 1 µs
      if (pass == 0) all.push_back({&kind, {r.ts, bw, seq++}});
      else all.push_back({&kind, {r.ts + dur, -bw, seq++}});
    }
  }
  if (t.mode == Mode::Hta) {
    // (HTA) one unstable sort of every kind's points together (numpy's quicksort), then a
    // group-by that keeps that order: which of two equal-time points comes first decides
    // whether a zero (dropped) or a positive value (counted) appears in the summary.
    std::vector<int64_t> times;
    times.reserve(all.size());
    for (const auto& a : all) times.push_back(a.second.ts);
    for (uint32_t k : numpy_quicksort_argsort(times)) by_kind[*all[k].first].push_back(all[k].second);
  } else {
    for (const auto& a : all) by_kind[*a.first].push_back(a.second);
    for (auto& [kind, points] : by_kind)
      std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.ts < b.ts; });
  }
  std::vector<MemoryBandwidthKind> out;
  for (auto& [kind, points] : by_kind) {
    MemoryBandwidthKind k;
    k.rank = t.rank;
    k.copy_kind = kind;
    double running = 0;
    std::vector<double> positive;
    for (const Point& p : points) {
      running += p.delta;
      double v = running < 0 ? 0 : running;
      k.series.push_back({p.ts, v});
      if (v > 0) positive.push_back(v);
    }
    k.summary = describe(std::move(positive));
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<MemoryInUse> memory_in_use(const TraceStore& s) {
  std::map<int64_t, MemoryInUse> by_device;
  StringId memory = s.strings.find("[memory]");
  if (memory == StringPool::kNotFound) return {};
  for (const Track& track : s.tracks) {
    const InstantColumns& in = track.instants;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in.name[i] != memory || in.args[i] == kNone) continue;
      std::string_view json = s.args_json(in.args[i]);
      int64_t device = find_int_arg(json, "Device Id").value_or(-1);
      double alloc = find_number_arg(json, "Total Allocated").value_or(0);
      double reserved = find_number_arg(json, "Total Reserved").value_or(0);
      MemoryInUse& m = by_device[device];
      m.device = device;
      ++m.samples;
      m.allocated.push_back({in.ts[i], alloc});
      m.max_allocated = std::max(m.max_allocated, alloc);
      m.max_reserved = std::max(m.max_reserved, reserved);
    }
  }
  std::vector<MemoryInUse> out;
  for (auto& [d, m] : by_device) {
    std::stable_sort(m.allocated.begin(), m.allocated.end());
    if (!m.allocated.empty()) m.last_allocated = m.allocated.back().second;
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace sl::analysis
