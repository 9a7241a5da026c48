#include "core/memory/memory_analysis.h"

#include <algorithm>
#include <compare>
#include <map>
#include <unordered_map>

#include "core/store/flat_map.h"
#include "core/text/format.h"

namespace sl::memory {

std::string device_label(int8_t type, int32_t id) {
  switch (type) {
    case kMemoryCpu: return "cpu";
    case kMemoryCuda: return "cuda:" + std::to_string(id);
    case kMemoryHip: return "hip:" + std::to_string(id);
    default: return "device type " + std::to_string(type) + ":" + std::to_string(id);
  }
}

namespace {

// A frame is stored as "name (file:line)"; its file is what lies between the last " (" and the
// last ':' before the closing parenthesis.
std::string_view frame_file(std::string_view frame) {
  size_t open = frame.rfind(" (");
  if (open == std::string_view::npos || !frame.ends_with(')')) return {};
  std::string_view inside = frame.substr(open + 2, frame.size() - open - 3);
  size_t colon = inside.rfind(':');
  return colon == std::string_view::npos ? inside : inside.substr(0, colon);
}

bool internal_frame(std::string_view frame) {
  for (std::string_view prefix : {"torch::", "c10::", "at::", "_Py", "Py", "__libc", "_start", "std::"})
    if (frame.starts_with(prefix)) return true;
  return false;
}

}  // namespace

StringId stack_context(const TraceStore& store, uint32_t stack) {
  const MemoryEvents& m = store.memory;
  if (stack == kNone || stack >= m.stack_count()) return 0;
  uint32_t begin = m.stack_offsets[stack], end = m.stack_offsets[stack + 1];
  if (begin == end) return 0;
  // The user's own Python code first: the innermost Python frame outside torch itself.
  for (uint32_t i = begin; i < end; ++i) {
    std::string_view file = frame_file(store.strings.view(m.frames[i]));
    if (file.ends_with(".py") && file.find("/torch/") == std::string_view::npos) return m.frames[i];
  }
  // No Python frame: the first native frame that is not the allocator, the dispatcher or CPython.
  for (uint32_t i = begin; i < end; ++i)
    if (!internal_frame(store.strings.view(m.frames[i]))) return m.frames[i];
  return m.frames[begin];
}

std::string context_name(const TraceStore& store, StringId context) {
  if (context == 0) return "(no enclosing op)";
  if (context == kBeforeTraceContext) return "(allocated before the trace)";
  return std::string(store.strings.view(context));
}

namespace {

struct DeviceKey {
  int8_t type;
  int32_t id;
  auto operator<=>(const DeviceKey&) const = default;
};

struct AddressHash {
  size_t operator()(uint64_t addr) const { return mix_bits(addr); }
};
// Address → the block open there (row of MemoryAnalysis::blocks).
using OpenBlocks = FlatMap<uint64_t, uint32_t, AddressHash>;

bool changes_allocated(MemoryAction a) { return a == MemoryAction::Alloc || a == MemoryAction::Free; }
bool changes_reserved(MemoryAction a) {
  return a == MemoryAction::SegmentAlloc || a == MemoryAction::SegmentFree || a == MemoryAction::SegmentMap ||
         a == MemoryAction::SegmentUnmap;
}

// The device's memory from its deviceProperties entry ("totalGlobalMem"), when the trace has one.
std::optional<int64_t> device_capacity(const TraceStore& store, const DeviceMemory& d) {
  if (d.device_type == kMemoryCpu) return std::nullopt;
  for (const Device& dev : store.meta.devices) {
    if (dev.id != d.device_id) continue;
    std::string_view p = dev.properties_json;
    size_t at = p.find("\"totalGlobalMem\"");
    if (at == std::string_view::npos) return std::nullopt;
    at = p.find(':', at);
    if (at == std::string_view::npos) return std::nullopt;
    ++at;
    while (at < p.size() && (p[at] == ' ' || p[at] == '\t' || p[at] == '\n')) ++at;
    int64_t v = 0;
    bool digits = false;
    while (at < p.size() && p[at] >= '0' && p[at] <= '9' && v < INT64_MAX / 10) v = v * 10 + (p[at++] - '0'), digits = true;
    return digits && v > 0 ? std::optional<int64_t>(v) : std::nullopt;
  }
  return std::nullopt;
}

// Groups blocks by context, largest bytes first (ties: more blocks, then the context's id).
std::vector<ContextBytes> by_context(const std::vector<const MemoryBlock*>& blocks, size_t top) {
  std::unordered_map<StringId, ContextBytes> groups;
  for (const MemoryBlock* b : blocks) {
    ContextBytes& g = groups[b->context];
    if (g.blocks == 0) g.first_alloc = b->alloc;
    g.context = b->context;
    g.bytes = MemoryEvents::add(g.bytes, b->size);
    ++g.blocks;
    g.first_alloc = std::min(g.first_alloc, b->alloc);
  }
  std::vector<ContextBytes> out;
  for (auto& [k, g] : groups) out.push_back(g);
  std::sort(out.begin(), out.end(), [](const ContextBytes& a, const ContextBytes& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    if (a.blocks != b.blocks) return a.blocks > b.blocks;
    return a.context < b.context;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

}  // namespace

MemoryAnalysis analyze_memory(const TraceStore& store, const MemoryOptions& options) {
  MemoryAnalysis out;
  const MemoryEvents& m = store.memory;
  if (m.empty()) return out;
  std::map<DeviceKey, std::vector<uint32_t>> rows_by_device;
  for (uint32_t i = 0; i < m.size(); ++i) rows_by_device[{m.device_type[i], m.device_id[i]}].push_back(i);
  if (!store.iterations.empty()) {
    out.leak_window_start = store.iterations.front().start;
    for (const Iteration& it : store.iterations) out.leak_window_start = std::min(out.leak_window_start, it.start);
    out.leak_window_is_iteration = true;
  } else {
    out.leak_window_start = m.ts.front();
  }
  // Contexts of snapshot stacks, once per stack.
  std::vector<StringId> stack_contexts(m.stack_count(), kNone);
  auto context_of = [&](uint32_t row) -> StringId {
    if (m.stack[row] != kNone) {
      StringId& c = stack_contexts[m.stack[row]];
      if (c == kNone) c = stack_context(store, m.stack[row]);
      return c;
    }
    if (m.track[row] == kNone) return 0;
    SliceRef op = store.slice_at(m.track[row], m.ts[row]);
    return op.valid() ? store.name_id(op) : 0;
  };

  for (auto& [key, rows] : rows_by_device) {
    DeviceMemory d;
    d.device_type = key.type;
    d.device_id = key.id;
    d.label = device_label(key.type, key.id);
    d.events = rows.size();
    d.capacity = device_capacity(store, d);
    // --- the step functions and the peak ---
    int64_t allocated = 0, reserved = 0;
    std::vector<int64_t> allocated_after(rows.size());  // allocated after each event of the device
    bool any_address = false;
    for (size_t k = 0; k < rows.size(); ++k) {
      uint32_t i = rows[k];
      MemoryAction a = m.action_of(i);
      if (m.total_allocated[i] != MemoryEvents::kUnknown) allocated = m.total_allocated[i], d.from_totals = true;
      else if (changes_allocated(a)) allocated = MemoryEvents::add(allocated, m.bytes[i]);
      if (m.total_reserved[i] != MemoryEvents::kUnknown) reserved = m.total_reserved[i], d.reserved_known = true;
      else if (changes_reserved(a)) reserved = MemoryEvents::add(reserved, m.bytes[i]), d.reserved_known = true;
      if (a == MemoryAction::Alloc) ++d.allocs, any_address |= m.addr[i] != 0;
      if (a == MemoryAction::Free) ++d.frees, any_address |= m.addr[i] != 0;
      allocated_after[k] = allocated;
      if (d.timeline.empty() || d.timeline.back().allocated != allocated || d.timeline.back().reserved != reserved)
        d.timeline.push_back({m.ts[i], allocated, reserved});
      if (d.peak_event < 0 || allocated > d.peak_allocated) {
        d.peak_allocated = allocated, d.peak_reserved = reserved, d.peak_ts = m.ts[i], d.peak_event = i;
      }
    }
    d.allocated_at_end = allocated;
    d.addresses = any_address || (d.allocs + d.frees == 0);
    // Kineto writes `Total Reserved: 0` on CPU events: the CPU allocator keeps no reserve, so a
    // reserved figure that never rises above zero says nothing (not a negative fragmentation).
    if (d.reserved_known && d.device_type == kMemoryCpu &&
        std::none_of(d.timeline.begin(), d.timeline.end(), [](const MemoryPoint& p) { return p.reserved > 0; }))
      d.reserved_known = false;
    if (d.reserved_known) d.fragmentation = MemoryEvents::add(d.peak_reserved, -d.peak_allocated);

    // --- blocks: an alloc pairs with the next free of its address on this device ---
    size_t first_block = out.blocks.size();
    if (d.addresses) {
      OpenBlocks open(1024);  // address → row of out.blocks; grows with the blocks open at once, not all of them
      out.blocks.reserve(out.blocks.size() + d.allocs + d.frees / 8);
      const TimeNs first_ts = m.ts[rows.front()];
      for (uint32_t i : rows) {
        MemoryAction a = m.action_of(i);
        if (a == MemoryAction::Alloc) {
          if (uint32_t* open_block = open.find(m.addr[i])) {
            // Allocated again with no free between: the address cannot hold two blocks, so the
            // first one ended here.
            out.blocks[*open_block].free = m.ts[i];
            out.blocks[*open_block].free_event = i;
          }
          MemoryBlock b;
          b.addr = m.addr[i];
          b.size = m.bytes[i];
          b.alloc = m.ts[i];
          b.alloc_event = i;
          b.pre_existing = m.flags[i] & kMemoryPreExisting;
          b.context = context_of(i);
          if (b.pre_existing && b.context == 0) b.context = kBeforeTraceContext;
          open.assign(m.addr[i], uint32_t(out.blocks.size()));
          out.blocks.push_back(b);
        } else if (a == MemoryAction::Free) {
          if (uint32_t* open_block = open.find(m.addr[i])) {
            out.blocks[*open_block].free = m.ts[i];
            out.blocks[*open_block].free_event = i;
            open.erase(m.addr[i]);
          } else {
            // Allocated before recording began (pre-existing, §11): counted from the first event.
            ++d.unmatched_frees;
            MemoryBlock b;
            b.addr = m.addr[i];
            b.size = -m.bytes[i];
            b.alloc = first_ts;
            b.free = m.ts[i];
            b.free_event = i;
            b.pre_existing = true;
            b.context = kBeforeTraceContext;
            out.blocks.push_back(b);
          }
        }
      }
    }
    for (size_t b = first_block; b < out.blocks.size(); ++b) d.block_rows.push_back(uint32_t(b));
    d.blocks = d.block_rows.size();

    // --- what was live at the peak, at the end; leaks and churn ---
    std::vector<const MemoryBlock*> at_peak, leaked;
    std::unordered_map<StringId, ChurnContext> churn;
    int64_t live_at_peak = 0;
    for (uint32_t r : d.block_rows) {
      const MemoryBlock& b = out.blocks[r];
      bool alloc_by_peak = b.alloc_event <= d.peak_event;  // -1 (before the trace) included
      if (alloc_by_peak && (b.free_event < 0 || b.free_event > d.peak_event)) {
        at_peak.push_back(&b);
        live_at_peak = MemoryEvents::add(live_at_peak, b.size);
      }
      if (b.live_at_end()) {
        ++d.live_blocks_at_end;
        d.live_bytes_at_end = MemoryEvents::add(d.live_bytes_at_end, b.size);
        if (!b.pre_existing && b.alloc >= out.leak_window_start) leaked.push_back(&b);
      }
      if (b.alloc_event >= 0) {
        ChurnContext& c = churn[b.context];
        c.context = b.context;
        ++c.allocations;
        if (!b.live_at_end() && b.free - b.alloc < options.churn_lifetime) ++c.short_lived, c.short_lived_bytes = MemoryEvents::add(c.short_lived_bytes, b.size);
      }
    }
    d.blocks_at_peak = at_peak.size();
    d.at_peak = by_context(at_peak, SIZE_MAX);
    // Totals count bytes allocated before the trace that no free of the trace revealed.
    if (d.addresses && d.from_totals && d.peak_allocated > live_at_peak) {  // (both within ±INT64_MAX)
      auto before = std::find_if(d.at_peak.begin(), d.at_peak.end(), [](const ContextBytes& c) { return c.context == kBeforeTraceContext; });
      if (before == d.at_peak.end()) before = d.at_peak.insert(d.at_peak.end(), ContextBytes{kBeforeTraceContext, 0, 0, m.ts[rows.front()]});
      before->bytes = MemoryEvents::add(before->bytes, MemoryEvents::add(d.peak_allocated, -live_at_peak));
      std::stable_sort(d.at_peak.begin(), d.at_peak.end(), [](const ContextBytes& a, const ContextBytes& b) { return a.bytes > b.bytes; });
    }
    if (d.at_peak.size() > options.top_contexts) d.at_peak.resize(options.top_contexts);
    d.leaks = by_context(leaked, options.top_contexts);
    for (auto& [k, c] : churn)
      if (c.short_lived) d.churn.push_back(c);
    std::sort(d.churn.begin(), d.churn.end(), [](const ChurnContext& a, const ChurnContext& b) {
      if (a.short_lived != b.short_lived) return a.short_lived > b.short_lived;
      return a.context < b.context;
    });
    if (d.churn.size() > options.top_contexts) d.churn.resize(options.top_contexts);

    // --- per iteration: the peak inside each step and what is allocated at its end ---
    std::vector<TimeNs> ts(rows.size());
    for (size_t k = 0; k < rows.size(); ++k) ts[k] = m.ts[rows[k]];
    auto allocated_at = [&](TimeNs t) {  // the step function's value at t (events at t included)
      size_t k = size_t(std::upper_bound(ts.begin(), ts.end(), t) - ts.begin());
      return k == 0 ? int64_t(0) : allocated_after[k - 1];
    };
    for (const Iteration& it : store.iterations) {
      IterationMemory im;
      im.number = it.number;
      im.start = it.start;
      im.end = it.end;
      size_t k0 = size_t(std::lower_bound(ts.begin(), ts.end(), it.start) - ts.begin());
      size_t k1 = size_t(std::lower_bound(ts.begin(), ts.end(), it.end) - ts.begin());
      im.peak = k0 == 0 ? 0 : allocated_after[k0 - 1];  // what was allocated as the step began
      for (size_t k = k0; k < k1; ++k) im.peak = std::max(im.peak, allocated_after[k]);
      im.live_at_end = allocated_at(it.end);
      d.iterations.push_back(im);
    }
    out.devices.push_back(std::move(d));
  }
  return out;
}

std::vector<MemoryFinding> memory_findings(const TraceStore& store, const MemoryAnalysis& a) {
  std::vector<MemoryFinding> out;
  for (const DeviceMemory& d : a.devices) {
    if (d.device_type == kMemoryCpu) continue;  // host memory has no device limit to hit
    if (d.capacity && d.peak_allocated >= *d.capacity * 0.9) {
      MemoryFinding f;
      f.kind = "memory_peak_near_capacity";
      f.title = d.label + ": peak memory " + human::bytes(d.peak_allocated) + " is within 10% of the device's " +
                human::bytes(*d.capacity);
      f.detail = "At the peak the largest share was " +
                 (d.at_peak.empty() ? std::string("unattributed") : context_name(store, d.at_peak.front().context) + " (" +
                                                                        human::bytes(d.at_peak.front().bytes) + ")") +
                 "; a larger batch or model will run out of memory (table memory_at_peak).";
      f.t0 = f.t1 = d.peak_ts;
      out.push_back(std::move(f));
    }
    // Steady growth: bytes live at every step end at least those of the step before, and more at
    // the last than at the first, over 3 or more steps (analyses.md §11: a leak signal).
    if (d.iterations.size() >= 3) {
      bool growing = true;
      for (size_t i = 1; i < d.iterations.size(); ++i) growing &= d.iterations[i].live_at_end >= d.iterations[i - 1].live_at_end;
      int64_t growth = MemoryEvents::add(d.iterations.back().live_at_end, -d.iterations.front().live_at_end);
      if (growing && growth > 0) {
        MemoryFinding f;
        f.kind = "memory_growth";
        f.title = d.label + ": memory live at step ends grows every step (+" + human::bytes(growth) + " over " +
                  std::to_string(d.iterations.size()) + " steps)";
        f.detail = "Something allocated in each step is kept past it: a leak, or tensors kept for later "
                   "(losses, outputs) without .detach()/.item() (table memory_leaks, memory_iterations).";
        f.t0 = d.iterations.front().end;
        f.t1 = d.iterations.back().end;
        out.push_back(std::move(f));
      }
    }
    if (d.reserved_known && d.peak_reserved > 0 && d.fragmentation > d.peak_reserved / 5) {
      MemoryFinding f;
      f.kind = "memory_fragmentation";
      f.title = d.label + ": " + human::bytes(d.fragmentation) + " reserved but not allocated at the peak (" +
                human::percent(100.0 * double(d.fragmentation) / double(d.peak_reserved)) + " of reserved)";
      f.detail = "The caching allocator holds memory it cannot hand out in the sizes asked for; "
                 "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True usually gives it back (table memory_peak).";
      f.t0 = f.t1 = d.peak_ts;
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace sl::memory
