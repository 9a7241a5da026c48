// A selected slice's direct children and self time, for the details panel. Both need a scan of
// every row inside the slice (its descendants, at any depth and lane), so they are found once per
// selection: a profiler step holding a million ops cost 1.7 ms a frame when every frame scanned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/store/trace_store.h"

namespace sl::present {

class SliceChildren {
public:
  // Finds them again only when the store, the selection, the track's row count (live capture
  // appends) or the caller's `version` (bumped when its stores come or go) change.
  void update(const TraceStore& store, SliceRef selected, uint64_t version);

  static constexpr size_t kListed = 64;
  std::span<const SliceRef> first() const { return first_; }  // the first kListed, by start
  size_t count() const { return count_; }
  TimeNs self_time() const { return self_time_; }  // duration less the direct children's

private:
  struct Key {
    const TraceStore* store = nullptr;
    uint64_t version = 0;
    SliceRef selected;
    size_t rows = 0;
    friend bool operator==(const Key&, const Key&) = default;
  };
  Key key_;
  std::vector<SliceRef> first_;
  size_t count_ = 0;
  TimeNs self_time_ = 0;
};

}  // namespace sl::present
