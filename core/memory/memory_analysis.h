// The memory analyses of analyses.md §11 over a store's memory events (core/store/memory_events.h),
// whatever their source (Kineto `[memory]` instants, a PyTorch memory snapshot): allocated and
// reserved over time per device, blocks (allocation lifetimes) with their allocating context, the
// peak and what was live at it, leaks, churn, per-iteration peaks and fragmentation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/trace_store.h"

namespace sl::memory {

constexpr TimeNs kLiveAtEnd = INT64_MAX;  // a block's free time when nothing freed it
// The context of bytes allocated before recording began whose allocating context is unknown
// (pre-existing blocks without frames; bytes the totals count that no block explains).
constexpr StringId kBeforeTraceContext = UINT32_MAX;

// One allocation's lifetime.
struct MemoryBlock {
  uint64_t addr = 0;
  int64_t size = 0;
  TimeNs alloc = 0, free = kLiveAtEnd;
  int64_t alloc_event = -1;  // row of store.memory; -1: allocated before the trace (Kineto: a free with no alloc)
  int64_t free_event = -1;   // row of store.memory, or -1 (live at end)
  StringId context = 0;      // allocating context; 0 when none is known, kBeforeTraceContext (pre-existing)
  bool pre_existing = false;  // allocated before recording began (§11)
  bool live_at_end() const { return free == kLiveAtEnd; }
};

struct MemoryPoint {
  TimeNs ts = 0;
  int64_t allocated = 0, reserved = 0;
};

struct ContextBytes {
  StringId context = 0;  // 0: no context known; kBeforeTraceContext: allocated before the trace
  int64_t bytes = 0;
  uint64_t blocks = 0;
  TimeNs first_alloc = 0;
};

struct ChurnContext {
  StringId context = 0;
  uint64_t short_lived = 0;  // allocations freed within `churn_lifetime`
  uint64_t allocations = 0;  // all allocations of the context
  int64_t short_lived_bytes = 0;
};

struct IterationMemory {
  int64_t number = 0;
  TimeNs start = 0, end = 0;
  int64_t peak = 0;         // the most allocated at any time in [start, end)
  int64_t live_at_end = 0;  // allocated at the step's end
};

struct DeviceMemory {
  int8_t device_type = kMemoryCuda;
  int32_t device_id = 0;
  std::string label;  // "cuda:0", "hip:1", "cpu"
  bool from_totals = false;    // allocated read from `Total Allocated` (else the running sum of bytes)
  bool reserved_known = false;  // some event gives reserved memory
  bool addresses = true;        // events carry addresses, so blocks could be paired
  uint64_t events = 0, allocs = 0, frees = 0;
  uint64_t unmatched_frees = 0;  // frees of blocks allocated before the trace
  std::vector<MemoryPoint> timeline;  // every change point, in time order
  // Peak: the first time allocated reached its maximum.
  TimeNs peak_ts = 0;
  int64_t peak_allocated = 0, peak_reserved = 0;
  int64_t peak_event = -1;
  int64_t fragmentation = 0;  // reserved - allocated at the peak (when reserved is known)
  std::optional<int64_t> capacity;  // the device's memory, when the trace says
  std::vector<ContextBytes> at_peak;  // live at the peak, by context, largest first
  uint64_t blocks_at_peak = 0;
  std::vector<ContextBytes> leaks;  // live at end, allocated after the first iteration began
  std::vector<ChurnContext> churn;  // most short-lived allocations first
  std::vector<IterationMemory> iterations;
  uint64_t blocks = 0, live_blocks_at_end = 0;
  int64_t live_bytes_at_end = 0;  // bytes of blocks live at the end
  int64_t allocated_at_end = 0;
  std::vector<uint32_t> block_rows;  // rows of MemoryAnalysis::blocks on this device
};

struct MemoryOptions {
  TimeNs churn_lifetime = 1'000'000;  // 1 ms
  size_t top_contexts = 20;          // rows per device in at_peak, leaks and churn
};

struct MemoryAnalysis {
  std::vector<DeviceMemory> devices;  // by device type, then id
  std::vector<MemoryBlock> blocks;
  TimeNs leak_window_start = 0;  // the first iteration's start, or the trace start without iterations
  bool leak_window_is_iteration = false;
  bool empty() const { return devices.empty(); }
};

MemoryAnalysis analyze_memory(const TraceStore& store, const MemoryOptions& options = {});

// The allocating context's name for people: the op or frame, "(no enclosing op)" when none,
// "(allocated before the trace)" for kBeforeTraceContext.
std::string context_name(const TraceStore& store, StringId context);

// The frame shown for a snapshot stack (innermost first): the first frame outside the allocator
// and framework internals (memory/README.md gives the rule); 0 when the stack is empty.
StringId stack_context(const TraceStore& store, uint32_t stack);

// "cuda:0", "hip:1", "cpu", "device type 13:0".
std::string device_label(int8_t type, int32_t id);

// Memory findings (analyses.md §11): the peak near the device's memory, live bytes growing across
// iterations, fragmentation at the peak. Each is one line of title and one of detail.
struct MemoryFinding {
  std::string kind;  // memory_peak_near_capacity, memory_growth, memory_fragmentation
  std::string title, detail;
  TimeNs t0 = 0, t1 = 0;
};
std::vector<MemoryFinding> memory_findings(const TraceStore& store, const MemoryAnalysis& analysis);

}  // namespace sl::memory
