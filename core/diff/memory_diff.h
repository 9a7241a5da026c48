// The memory diff of two runs (analyses.md §11, "Memory diff"): per device, peak A vs peak B,
// and the allocating contexts whose bytes at the peak changed most. Contexts are compared under
// their matching keys (§9), so `<… at 0x…>` and shifted Python line numbers are one context.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/report_tables.h"
#include "core/store/trace_store.h"

namespace sl::diff {

struct MemoryContextChange {
  std::string context;  // the matching key of the allocating context
  int64_t bytes_a = 0, bytes_b = 0;
  uint64_t blocks_a = 0, blocks_b = 0;
  int64_t delta() const { return bytes_b - bytes_a; }
};

struct MemoryDevicePair {
  std::string device_a, device_b;  // "cuda:0", "hip:0"; "" where that run has no such device
  int64_t peak_a = 0, peak_b = 0;
  TimeNs peak_ts_a = 0, peak_ts_b = 0;
  std::optional<int64_t> reserved_a, reserved_b;  // at the peak, when the run says
  std::vector<MemoryContextChange> contexts;      // the largest |delta| first
};

// Devices pair by type and id (cuda:0 with cuda:0); the GPUs left over pair in id order across
// vendors (cuda:0 with hip:0), the CPU with the CPU. Empty when neither run has memory events.
std::vector<MemoryDevicePair> memory_diff(const TraceStore& a, const TraceStore& b, size_t top_contexts = 20);

// Tables memory_diff (one row per device pair) and memory_diff_contexts (device, context, bytes
// at the peak in A and B, delta).
std::vector<analysis::Table> memory_diff_tables(const std::vector<MemoryDevicePair>& pairs);

}  // namespace sl::diff
