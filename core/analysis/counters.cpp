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
    q.series.reserve(changes.size());
    if (o.summary) values.reserve(changes.size());
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
  // A memory activity: its row, the index of its copy kind, its bandwidth (args read once).
  struct Member {
    uint32_t row, kind;
    double bw;
  };
  const TraceStore& s = *t.store;
  std::vector<std::string> kinds;                     // distinct copy kinds, first seen first
  std::unordered_map<StringId, uint32_t> kind_of_name;  // names repeat: one copy_kind() per name
  std::vector<Member> members;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (kernel_type(t, r) != KernelType::Memory) continue;
    auto [it, fresh] = kind_of_name.try_emplace(r.name, 0);
    if (fresh) {
      std::string kind = copy_kind(t.name(r));
      auto known = std::find(kinds.begin(), kinds.end(), kind);
      it->second = uint32_t(known - kinds.begin());
      if (known == kinds.end()) kinds.push_back(std::move(kind));
    }
    members.push_back({i, it->second, 0});
  }
  // Bandwidths read in args order (file order): the args sit in compressed blocks, so reading
  // them in row order (stream by stream) would decompress each block many times.
  std::vector<std::pair<uint32_t, uint32_t>> by_args;  // (args row, member)
  by_args.reserve(members.size());
  for (uint32_t m = 0; m < members.size(); ++m) {
    const Row& r = t.rows[members[m].row];
    uint32_t args = s.tracks[r.ref.track].slices.args[r.ref.index];
    if (args != kNone) by_args.push_back({args, m});
  }
  std::sort(by_args.begin(), by_args.end());
  for (auto [args, m] : by_args)
    if (auto v = find_number_arg(s.args_json(args), "memory bandwidth (GB/s)")) members[m].bw = *v;
  // Starts first (in row order), then ends: HTA concatenates the two before sorting by time.
  std::vector<std::pair<uint32_t, Point>> all;  // (kind, point)
  all.reserve(2 * members.size());
  uint64_t seq = 0;
  for (const Member& m : members) all.push_back({m.kind, {t.rows[m.row].ts, m.bw, seq++}});
  for (const Member& m : members) {
    const Row& r = t.rows[m.row];
    TimeNs dur = r.dur == 0 ? 1000 : r.dur;  // 0 µs counts as 1 µs
    all.push_back({m.kind, {r.ts + dur, -m.bw, seq++}});
  }
  std::vector<std::vector<Point>> by_kind(kinds.size());
  if (t.mode == Mode::Hta) {
    // (HTA) one unstable sort of every kind's points together (numpy's quicksort), then a
    // group-by that keeps that order: which of two equal-time points comes first decides
    // whether a zero (dropped) or a positive value (counted) appears in the summary.
    std::vector<int64_t> times;
    times.reserve(all.size());
    for (const auto& a : all) times.push_back(a.second.ts);
    for (uint32_t k : numpy_quicksort_argsort(times)) by_kind[all[k].first].push_back(all[k].second);
  } else {
    for (const auto& a : all) by_kind[a.first].push_back(a.second);
    for (auto& points : by_kind)
      std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.ts < b.ts; });
  }
  // Kinds in name order (the output's order).
  std::vector<uint32_t> order(kinds.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return kinds[a] < kinds[b]; });
  std::vector<MemoryBandwidthKind> out;
  for (uint32_t kind : order) {
    const std::vector<Point>& points = by_kind[kind];
    MemoryBandwidthKind k;
    k.rank = t.rank;
    k.copy_kind = kinds[kind];
    k.series.reserve(points.size());
    double running = 0;
    std::vector<double> positive;
    positive.reserve(points.size());
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
