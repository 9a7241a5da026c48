#include "core/analysis/fusion.h"

#include <algorithm>
#include <unordered_map>

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
  TimeNs overhead = 0;
  int64_t stream = 0;
  const std::vector<uint32_t>* seq = nullptr;  // kernels of the first occurrence's segment
  size_t at = 0, length = 0;
};

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

}  // namespace

std::vector<FusionCandidate> fusion_candidates(const EventTable& t, const FusionOptions& o) {
  // Launched kernels per stream, in launch order.
  std::unordered_map<int64_t, std::vector<uint32_t>> by_stream;
  for (uint32_t i : t.gpu)
    if (t.rows[i].launch >= 0 && is_kernel_cat(t.cat(t.rows[i]))) by_stream[t.rows[i].stream].push_back(i);
  std::vector<TimeNs> blocking;
  for (uint32_t i : t.cpu)
    if (is_blocking_host_call(t.name(t.rows[i]))) blocking.push_back(t.rows[i].ts);
  std::sort(blocking.begin(), blocking.end());
  auto launch_ts = [&](uint32_t k) { return t.rows[size_t(t.rows[k].launch)].ts; };

  // Segments: cut wherever a blocking call starts between two consecutive launches.
  std::vector<std::pair<int64_t, std::vector<uint32_t>>> segments;
  std::vector<int64_t> streams;
  for (auto& [stream, v] : by_stream) streams.push_back(stream);
  std::sort(streams.begin(), streams.end());
  std::unordered_map<StringId, uint64_t> name_count;
  for (int64_t stream : streams) {
    auto& v = by_stream[stream];
    std::stable_sort(v.begin(), v.end(), [&](uint32_t a, uint32_t b) { return launch_ts(a) < launch_ts(b); });
    segments.push_back({stream, {}});
    for (size_t k = 0; k < v.size(); ++k) {
      ++name_count[t.rows[v[k]].name];
      if (k > 0) {
        auto it = std::upper_bound(blocking.begin(), blocking.end(), launch_ts(v[k - 1]));
        if (it != blocking.end() && *it < launch_ts(v[k])) segments.push_back({stream, {}});
      }
      segments.back().second.push_back(v[k]);
    }
  }
  // Count every window of length min..max by a hash of its name ids.
  std::unordered_map<uint64_t, ChainEntry> chains;
  for (auto& [stream, seg] : segments) {
    for (size_t a = 0; a < seg.size(); ++a) {
      uint64_t h = 0;
      TimeNs overhead = 0;
      for (size_t n = 1; n <= o.max_length && a + n <= seg.size(); ++n) {
        const Row& r = t.rows[seg[a + n - 1]];
        h = mix(h, r.name);
        if (n > 1) overhead += r.ts - t.rows[size_t(r.launch)].ts;
        if (n < o.min_length) continue;
        ChainEntry& e = chains[mix(h, n)];
        if (e.count == 0) {
          e.stream = stream;
          e.seq = &seg;
          e.at = a;
          e.length = n;
        }
        ++e.count;
        e.overhead += overhead;
      }
    }
  }
  std::vector<FusionCandidate> out;
  for (auto& [h, e] : chains) {
    if (e.count < o.min_count) continue;
    StringId first = t.rows[(*e.seq)[e.at]].name;
    double proximity = double(e.count) / double(name_count[first]);
    if (proximity < o.min_proximity) continue;
    FusionCandidate c;
    for (size_t k = 0; k < e.length; ++k) c.chain.emplace_back(t.name(t.rows[(*e.seq)[e.at + k]]));
    c.count = e.count;
    c.proximity = proximity;
    c.launch_overhead = e.overhead;
    c.stream = e.stream;
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const FusionCandidate& a, const FusionCandidate& b) {
    uint64_t sa = a.count * (a.chain.size() - 1), sb = b.count * (b.chain.size() - 1);
    if (sa != sb) return sa > sb;
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
