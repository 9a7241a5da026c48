#include "core/present/slice_children.h"

namespace sl::present {

void SliceChildren::update(const TraceStore& store, SliceRef selected, uint64_t version) {
  size_t rows = selected.valid() ? store.slices(selected.track).size() : 0;
  Key key{&store, version, selected, rows};
  if (key == key_) return;
  key_ = key;
  first_.clear();
  count_ = 0;
  self_time_ = 0;
  if (!selected.valid()) return;
  const SliceColumns& c = store.slices(selected.track);
  TimeNs children = 0;
  // Direct children follow the slice in start order until the slice ends.
  for (uint32_t r = selected.index + 1; r < c.size() && c.start[r] < c.end(selected.index); ++r) {
    if (c.parent[r] != selected.index) continue;
    children += c.dur[r];
    if (count_++ < kListed) first_.push_back({selected.track, r});
  }
  self_time_ = c.dur[selected.index] - children;
}

}  // namespace sl::present
