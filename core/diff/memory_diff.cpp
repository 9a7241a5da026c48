#include "core/diff/memory_diff.h"

#include <algorithm>
#include <map>

#include "core/memory/memory_analysis.h"
#include "core/names/matching_key.h"

namespace sl::diff {

namespace {

using memory::DeviceMemory;
using memory::MemoryAnalysis;

// Every context live at the peak, under its matching key (two of one run may share a key).
std::map<std::string, std::pair<int64_t, uint64_t>> contexts_at_peak(const TraceStore& store, const DeviceMemory& d) {
  std::map<std::string, std::pair<int64_t, uint64_t>> out;
  for (const memory::ContextBytes& c : d.at_peak) {
    auto& [bytes, blocks] = out[matching_key(memory::context_name(store, c.context))];
    bytes += c.bytes, blocks += c.blocks;
  }
  return out;
}

MemoryDevicePair pair_of(const TraceStore& a, const DeviceMemory* da, const TraceStore& b, const DeviceMemory* db, size_t top) {
  MemoryDevicePair p;
  std::map<std::string, std::pair<int64_t, uint64_t>> ca, cb;
  if (da) {
    p.device_a = da->label, p.peak_a = da->peak_allocated, p.peak_ts_a = da->peak_ts;
    if (da->reserved_known) p.reserved_a = da->peak_reserved;
    ca = contexts_at_peak(a, *da);
  }
  if (db) {
    p.device_b = db->label, p.peak_b = db->peak_allocated, p.peak_ts_b = db->peak_ts;
    if (db->reserved_known) p.reserved_b = db->peak_reserved;
    cb = contexts_at_peak(b, *db);
  }
  std::map<std::string, MemoryContextChange> merged;
  for (const auto& [key, v] : ca) merged[key] = {key, v.first, 0, v.second, 0};
  for (const auto& [key, v] : cb) {
    MemoryContextChange& c = merged[key];
    c.context = key, c.bytes_b = v.first, c.blocks_b = v.second;
  }
  for (auto& [key, c] : merged)
    if (c.delta() != 0) p.contexts.push_back(c);
  std::stable_sort(p.contexts.begin(), p.contexts.end(),
                   [](const MemoryContextChange& x, const MemoryContextChange& y) { return std::llabs(x.delta()) > std::llabs(y.delta()); });
  if (p.contexts.size() > top) p.contexts.resize(top);
  return p;
}

}  // namespace

std::vector<MemoryDevicePair> memory_diff(const TraceStore& a, const TraceStore& b, size_t top_contexts) {
  if (a.memory.empty() && b.memory.empty()) return {};
  memory::MemoryOptions options;
  options.top_contexts = SIZE_MAX;  // every context at the peak: a small one in A may be B's largest
  MemoryAnalysis ma = memory::analyze_memory(a, options), mb = memory::analyze_memory(b, options);
  std::vector<bool> used_b(mb.devices.size(), false);
  std::vector<const DeviceMemory*> left_a;
  std::vector<MemoryDevicePair> out;
  auto find_b = [&](auto&& same) -> const DeviceMemory* {
    for (size_t j = 0; j < mb.devices.size(); ++j)
      if (!used_b[j] && same(mb.devices[j])) return used_b[j] = true, &mb.devices[j];
    return nullptr;
  };
  for (const DeviceMemory& d : ma.devices) {
    const DeviceMemory* match = find_b([&](const DeviceMemory& e) { return e.device_type == d.device_type && e.device_id == d.device_id; });
    if (match) out.push_back(pair_of(a, &d, b, match, top_contexts));
    else left_a.push_back(&d);
  }
  for (const DeviceMemory* d : left_a) {  // another vendor's GPU, in id order; else A alone
    bool cpu = d->device_type == kMemoryCpu;
    const DeviceMemory* match = find_b([&](const DeviceMemory& e) { return (e.device_type == kMemoryCpu) == cpu; });
    out.push_back(pair_of(a, d, b, match, top_contexts));
  }
  for (size_t j = 0; j < mb.devices.size(); ++j)
    if (!used_b[j]) out.push_back(pair_of(a, nullptr, b, &mb.devices[j], top_contexts));
  // The GPUs first: what a memory diff is read for; the host's allocations after them.
  std::stable_partition(out.begin(), out.end(), [](const MemoryDevicePair& p) { return p.device_a != "cpu" && p.device_b != "cpu"; });
  return out;
}

std::vector<analysis::Table> memory_diff_tables(const std::vector<MemoryDevicePair>& pairs) {
  using analysis::Cell;
  auto opt_bytes = [](const std::optional<int64_t>& v) { return v ? Cell::bytes(*v) : Cell::null(); };
  auto device = [](const MemoryDevicePair& p) {
    if (p.device_a == p.device_b || p.device_b.empty()) return p.device_a;
    return p.device_a.empty() ? p.device_b : p.device_a + " vs " + p.device_b;
  };
  analysis::Table peaks{"memory_diff", {"device", "peak_a_bytes", "peak_b_bytes", "peak_delta_bytes", "peak_a_ts_us",
                                        "peak_b_ts_us", "reserved_a_bytes", "reserved_b_bytes"}};
  analysis::Table contexts{"memory_diff_contexts", {"device", "context", "bytes_a", "bytes_b", "delta_bytes", "blocks_a", "blocks_b"}};
  for (const MemoryDevicePair& p : pairs) {
    peaks.rows.push_back({Cell::str(device(p)), Cell::bytes(p.peak_a), Cell::bytes(p.peak_b), Cell::bytes(p.peak_b - p.peak_a),
                          p.device_a.empty() ? Cell::null() : Cell::ns(p.peak_ts_a),
                          p.device_b.empty() ? Cell::null() : Cell::ns(p.peak_ts_b), opt_bytes(p.reserved_a), opt_bytes(p.reserved_b)});
    for (const MemoryContextChange& c : p.contexts)
      contexts.rows.push_back({Cell::str(device(p)), Cell::str(c.context), Cell::bytes(c.bytes_a), Cell::bytes(c.bytes_b),
                               Cell::bytes(c.delta()), Cell::integer(int64_t(c.blocks_a)), Cell::integer(int64_t(c.blocks_b))});
  }
  return {std::move(peaks), std::move(contexts)};
}

}  // namespace sl::diff
