#include "core/analysis/fusion.h"

#include <algorithm>
#include <bit>
#include <unordered_map>

#include "core/analysis/launch_stats.h"

namespace sl::analysis {

namespace {

bool is_blocking_host_call(std::string_view n) {
  return n == "cudaDeviceSynchronize" || n == "cudaStreamSynchronize" || n == "cudaEventSynchronize" ||
         n == "cudaMemcpy" || n == "hipDeviceSynchronize" || n == "hipStreamSynchronize" ||
         n == "hipEventSynchronize" || n == "hipMemcpy" || n == "cuCtxSynchronize" ||
         n == "cuStreamSynchronize" || n == "cuEventSynchronize";
}

struct ChainEntry {
  uint64_t count = 0;
  TimeNs saving = 0, launch_bound = 0, launch_latency = 0;
  int64_t stream = 0;
  const std::vector<uint32_t>* seq = nullptr;  // kernels of the first occurrence's segment
  size_t at = 0, length = 0;
  // The last occurrence whose saving was counted: a repetitive chain (A A A ...) has overlapping
  // windows, and fusing can only take each kernel once, so savings count non-overlapping ones.
  const std::vector<uint32_t>* saved_seq = nullptr;
  size_t saved_until = 0;
};

// A stream's busy time (kernels, memcpy, memset merged), to measure its idle time between two instants.
class StreamBusy {
public:
  explicit StreamBusy(std::vector<Interval> busy) : merged_(merge_intervals(std::move(busy))) {
    prefix_.push_back(0);
    for (const Interval& i : merged_) prefix_.push_back(prefix_.back() + (i.end - i.start));
  }
  TimeNs idle_between(TimeNs a, TimeNs b) const { return b > a ? (b - a) - (busy_before(b) - busy_before(a)) : 0; }

private:
  TimeNs busy_before(TimeNs x) const {  // busy length in (-inf, x]
    auto it = std::upper_bound(merged_.begin(), merged_.end(), x, [](TimeNs v, const Interval& i) { return v < i.start; });
    size_t k = size_t(it - merged_.begin());
    TimeNs s = prefix_[k];
    if (k > 0 && merged_[k - 1].end > x) s -= merged_[k - 1].end - x;
    return s;
  }
  std::vector<Interval> merged_;
  std::vector<TimeNs> prefix_;
};

// Chain windows by hash: open addressing over a power-of-two slot array (a training loop's
// windows repeat, so most lookups hit an existing entry), entries kept in insertion order. A
// std::unordered_map allocated a node per distinct window.
class ChainTable {
public:
  explicit ChainTable(size_t expected) { grow(std::bit_ceil(std::max<size_t>(64, 2 * expected))); }
  // The entry of `key`, a fresh one when new; valid until the next call.
  ChainEntry& operator[](uint64_t key) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(key);; i = (i + 1) & mask) {
      const uint32_t s = slots_[i];
      if (s != 0 && keys_[s - 1] == key) return entries_[s - 1];
      if (s != 0) continue;
      if (2 * (entries_.size() + 1) > slots_.size()) {  // keep at most half the slots used
        grow(2 * slots_.size());
        return (*this)[key];
      }
      keys_.push_back(key);
      entries_.emplace_back();
      slots_[i] = uint32_t(entries_.size());
      return entries_.back();
    }
  }
  const std::vector<ChainEntry>& entries() const { return entries_; }

private:
  size_t slot_of(uint64_t key) const { return size_t((key * 0x9e3779b97f4a7c15ULL) >> shift_); }
  void grow(size_t slots) {
    slots_.assign(slots, 0);
    shift_ = 64 - unsigned(std::countr_zero(slots));
    for (uint32_t e = 0; e < keys_.size(); ++e) {
      size_t i = slot_of(keys_[e]);
      while (slots_[i] != 0) i = (i + 1) & (slots - 1);
      slots_[i] = e + 1;
    }
  }
  std::vector<uint32_t> slots_;  // entry index + 1; 0 = empty
  std::vector<uint64_t> keys_;
  std::vector<ChainEntry> entries_;
  unsigned shift_ = 0;
};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

}  // namespace

std::vector<FusionCandidate> fusion_candidates(const EventTable& t, const FusionOptions& o) {
  // Launched kernels per stream, in launch order; communication and graph-replayed kernels stay in
  // the list only to cut chains.
  std::vector<int32_t> graph = graph_positions(t);
  auto excluded = [&](uint32_t i) { return graph[i] >= 0 || KernelType(t.rows[i].kernel_type) == KernelType::Communication; };
  std::unordered_map<int64_t, std::vector<uint32_t>> by_stream;
  std::unordered_map<int64_t, std::vector<Interval>> busy_by_stream;
  int64_t last_stream = -1;  // GPU rows come stream by stream: look each stream up once per run
  std::vector<uint32_t>* kernels_of_stream = nullptr;
  std::vector<Interval>* busy_of_stream = nullptr;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (!kernels_of_stream || r.stream != last_stream) {
      last_stream = r.stream;
      kernels_of_stream = &by_stream[r.stream];
      busy_of_stream = &busy_by_stream[r.stream];
    }
    std::string_view cat = t.cat(r);
    if (is_kernel_memcpy_memset_cat(cat)) busy_of_stream->push_back({r.ts, r.end()});
    if (r.launch >= 0 && is_kernel_cat(cat)) kernels_of_stream->push_back(i);
  }
  std::erase_if(by_stream, [](const auto& entry) { return entry.second.empty(); });
  std::vector<TimeNs> blocking;
  std::vector<uint8_t> blocking_name(t.store->strings.size(), 0);  // per name id: 0 unknown, 1 no, 2 yes
  for (uint32_t i : t.cpu) {
    uint8_t& b = blocking_name[t.rows[i].name];
    if (!b) b = is_blocking_host_call(t.name(t.rows[i])) ? 2 : 1;
    if (b == 2) blocking.push_back(t.rows[i].ts);
  }
  std::sort(blocking.begin(), blocking.end());
  auto launch_ts = [&](uint32_t k) { return t.rows[size_t(t.rows[k].launch)].ts; };

  // Segments: cut wherever a blocking call starts between two consecutive launches, and at every
  // excluded kernel. gap[k]: the stream's idle time between a segment's kernel k-1 and k.
  struct Segment {
    int64_t stream;
    std::vector<uint32_t> rows;
    std::vector<TimeNs> gap;  // the stream's idle before each kernel; with a ledger, its launch-bound part
    std::vector<TimeNs> latency_gap;  // with a ledger: the launch-latency part
  };
  std::vector<Segment> segments;
  std::vector<int64_t> streams;
  for (auto& [stream, v] : by_stream) streams.push_back(stream);
  std::sort(streams.begin(), streams.end());
  std::vector<uint64_t> name_count(t.store->strings.size(), 0);  // launched kernels per name id
  for (int64_t stream : streams) {
    auto& v = by_stream[stream];
    StreamBusy busy(std::move(busy_by_stream[stream]));
    std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return launch_ts(a) < launch_ts(b); });
    segments.push_back({stream, {}, {}});
    for (size_t k = 0; k < v.size(); ++k) {
      if (excluded(v[k])) {
        if (!segments.back().rows.empty()) segments.push_back({stream, {}, {}});
        continue;
      }
      ++name_count[t.rows[v[k]].name];
      Segment* seg = &segments.back();
      if (!seg->rows.empty()) {
        auto it = std::upper_bound(blocking.begin(), blocking.end(), launch_ts(seg->rows.back()));
        if (it != blocking.end() && *it < launch_ts(v[k])) {
          segments.push_back({stream, {}, {}});
          seg = &segments.back();
        }
      }
      // With a ledger, only its launch-type entries between the two kernels count (§5b); device-wide
      // pieces inside an occurrence all lie in such gaps of its own stream.
      const TimeNs from = seg->rows.empty() ? 0 : t.rows[seg->rows.back()].end(), to = t.rows[v[k]].ts;
      if (seg->rows.empty()) seg->gap.push_back(0), seg->latency_gap.push_back(0);
      else if (o.ledger) seg->gap.push_back(o.ledger->device_idle(IdleCause::LaunchBound, from, to)),
                         seg->latency_gap.push_back(o.ledger->device_idle(IdleCause::LaunchLatency, from, to));
      else seg->gap.push_back(busy.idle_between(from, to)), seg->latency_gap.push_back(0);
      seg->rows.push_back(v[k]);
    }
  }
  // Count every window of length min..max by a hash of its name ids; its saving per occurrence is
  // the launch-type idle inside it and T_sys for each kernel after the first, at most the
  // occurrence's span, summed over occurrences that do not overlap (greedy, in launch order).
  size_t kernels = 0;
  for (const Segment& seg : segments) kernels += seg.rows.size();
  ChainTable chains(kernels);
  for (const Segment& seg : segments) {
    for (size_t a = 0; a < seg.rows.size(); ++a) {
      uint64_t h = 0;
      TimeNs bound_idle = 0, latency_idle = 0, last_end = INT64_MIN;
      const TimeNs first_start = t.rows[seg.rows[a]].ts;
      for (size_t n = 1; n <= o.max_length && a + n <= seg.rows.size(); ++n) {
        const Row& r = t.rows[seg.rows[a + n - 1]];
        h = mix(h, r.name);
        last_end = std::max(last_end, r.end());
        if (n > 1) bound_idle += seg.gap[a + n - 1], latency_idle += seg.latency_gap[a + n - 1];
        if (n < o.min_length) continue;
        ChainEntry& e = chains[mix(h, n)];
        if (e.count == 0) {
          e.stream = seg.stream;
          e.seq = &seg.rows;
          e.at = a;
          e.length = n;
        }
        ++e.count;
        if (e.saved_seq != &seg.rows || a >= e.saved_until) {
          const TimeNs span = std::max<TimeNs>(0, last_end - first_start);
          const TimeNs lb = std::min(bound_idle, span), ll = std::min(latency_idle, span - lb);
          e.launch_bound += lb, e.launch_latency += ll;
          e.saving += lb + ll + std::min(o.t_sys * TimeNs(n - 1), span - lb - ll);
          e.saved_seq = &seg.rows;
          e.saved_until = a + n;
        }
      }
    }
  }
  std::vector<FusionCandidate> out;
  for (const ChainEntry& e : chains.entries()) {
    if (e.count < o.min_count) continue;
    StringId first = t.rows[(*e.seq)[e.at]].name;
    double proximity = double(e.count) / double(name_count[first]);
    if (proximity < o.min_proximity) continue;
    FusionCandidate c;
    c.first_start = t.rows[(*e.seq)[e.at]].ts;
    c.first_end = c.first_start;
    c.anchor = t.rows[(*e.seq)[e.at]].ref;
    for (size_t k = 0; k < e.length; ++k) {
      const Row& r = t.rows[(*e.seq)[e.at + k]];
      c.chain.emplace_back(t.name(r));
      c.first_end = std::max(c.first_end, r.end());
    }
    c.count = e.count;
    c.proximity = proximity;
    c.saving = e.saving;
    c.launch_bound_idle = o.ledger ? e.launch_bound : 0;
    c.launch_latency_idle = o.ledger ? e.launch_latency : 0;
    c.stream = e.stream;
    out.push_back(std::move(c));
  }
  // By the time fusing would save (§5), then the more occurrences, the longer chain, the names.
  std::sort(out.begin(), out.end(), [](const FusionCandidate& a, const FusionCandidate& b) {
    if (a.saving != b.saving) return a.saving > b.saving;
    if (a.count != b.count) return a.count > b.count;
    if (a.chain.size() != b.chain.size()) return a.chain.size() > b.chain.size();
    return a.chain < b.chain;
  });
  if (out.size() > o.top) out.resize(o.top);
  return out;
}

std::vector<RepeatedKernel> repeated_kernels(const EventTable& t, size_t top) {
  std::unordered_map<StringId, RepeatedKernel> by_name;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (!is_kernel_cat(t.cat(r))) continue;
    RepeatedKernel& k = by_name[r.name];
    if (k.count == 0) k.name = std::string(t.name(r));
    ++k.count;
    k.sum += r.dur;
  }
  std::vector<RepeatedKernel> out;
  for (auto& [id, k] : by_name) {
    k.mean = double(k.sum) / double(k.count);
    out.push_back(std::move(k));
  }
  std::sort(out.begin(), out.end(), [](const RepeatedKernel& a, const RepeatedKernel& b) {
    if (a.count != b.count) return a.count > b.count;
    if (a.sum != b.sum) return a.sum > b.sum;
    return a.name < b.name;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace sl::analysis
