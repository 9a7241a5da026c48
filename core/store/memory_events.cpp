#include "core/store/memory_events.h"

#include <algorithm>
#include <numeric>

namespace sl {

std::string_view memory_action_name(MemoryAction a) {
  switch (a) {
    case MemoryAction::Alloc: return "alloc";
    case MemoryAction::Free: return "free";
    case MemoryAction::FreeRequested: return "free_requested";
    case MemoryAction::SegmentAlloc: return "segment_alloc";
    case MemoryAction::SegmentFree: return "segment_free";
    case MemoryAction::SegmentMap: return "segment_map";
    case MemoryAction::SegmentUnmap: return "segment_unmap";
    case MemoryAction::Snapshot: return "snapshot";
    case MemoryAction::Oom: return "oom";
  }
  return "?";
}

void MemoryEvents::append(const Row& r) {
  ts.push_back(r.ts);
  addr.push_back(r.addr);
  bytes.push_back(r.bytes);
  total_allocated.push_back(r.total_allocated);
  total_reserved.push_back(r.total_reserved);
  device_type.push_back(r.device_type);
  device_id.push_back(r.device_id);
  track.push_back(r.track);
  stream.push_back(r.stream);
  stack.push_back(r.stack);
  action.push_back(uint8_t(r.action));
  flags.push_back(r.flags);
}

uint32_t MemoryEvents::add_stack(const std::vector<StringId>& innermost_first) {
  frames.insert(frames.end(), innermost_first.begin(), innermost_first.end());
  stack_offsets.push_back(uint32_t(frames.size()));
  return uint32_t(stack_offsets.size() - 2);
}

namespace {
template <class T>
void permute(std::vector<T>& column, const std::vector<uint32_t>& order) {
  std::vector<T> out(column.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = column[order[i]];
  column = std::move(out);
}
}  // namespace

void MemoryEvents::sort_by_time() {
  if (std::is_sorted(ts.begin(), ts.end())) return;
  std::vector<uint32_t> order(ts.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return ts[a] < ts[b]; });
  permute(ts, order); permute(addr, order); permute(bytes, order); permute(total_allocated, order);
  permute(total_reserved, order); permute(device_type, order); permute(device_id, order);
  permute(track, order); permute(stream, order); permute(stack, order); permute(action, order);
  permute(flags, order);
}

void MemoryEvents::rebase(TimeNs origin) {
  for (TimeNs& t : ts) t -= origin;
}

size_t MemoryEvents::bytes_held() const {
  return size() * (sizeof(TimeNs) + sizeof(uint64_t) + 3 * sizeof(int64_t) + 2 + sizeof(int32_t) + 2 * sizeof(uint32_t) +
                   sizeof(int64_t)) +
         stack_offsets.size() * sizeof(uint32_t) + frames.size() * sizeof(StringId);
}

}  // namespace sl
