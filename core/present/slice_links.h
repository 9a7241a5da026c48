// The arrows of a selected slice: the call that launched it or the GPU activities it launched,
// and the trace's flows into and out of it. A CUDA graph's launch has thousands (one per kernel
// of the graph, each also a flow in Kineto and Nsight traces), so they are gathered once per
// selection, each pair once, in the order of the far end's start (the end that is not the
// selection): a frame draws those whose far end is in view, and a list shows the first few of
// each kind, in time order, with a count of the rest.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/store/trace_store.h"

namespace sl::present {

class SliceLinks {
public:
  enum class Kind : uint8_t { LaunchedBy, Runs, FlowFrom, FlowTo };  // as the details list names them
  struct Link {
    SliceRef from, to;
    TimeNs far_start = 0;  // start of the end that is not the selection
    Kind kind = Kind::Runs;
    SliceRef far() const { return kind == Kind::LaunchedBy || kind == Kind::FlowFrom ? from : to; }
  };

  // The links of `selected` in `store` (none for an invalid ref). Gathers again only when the
  // store, the selection, the store's flow and activity counts (live capture appends) or the
  // caller's `version` (bumped when its stores come or go) change.
  void update(const TraceStore& store, SliceRef selected, uint64_t version);

  std::span<const Link> all() const { return links_; }
  size_t count(Kind kind) const { return listed_[size_t(kind)].count; }
  // The first kListed links of a kind (fewer when it has fewer), as positions in all().
  static constexpr size_t kListed = 32;
  std::span<const uint32_t> first(Kind kind) const {
    const Listed& l = listed_[size_t(kind)];
    return {l.first, std::min(l.count, kListed)};
  }
  // The links whose far end starts in [lo, hi], as a range of all(), widened by one on each side
  // (the nearest links out of view, which a timeline draws to its edge to say where the rest are).
  std::pair<size_t, size_t> around(TimeNs lo, TimeNs hi) const;

private:
  struct Key {
    const TraceStore* store = nullptr;
    uint64_t version = 0;
    SliceRef selected;
    size_t flows = 0, activities = 0;
    friend bool operator==(const Key&, const Key&) = default;
  };
  Key key_;
  std::vector<Link> links_;
  struct Listed {
    size_t count = 0;
    uint32_t first[kListed] = {};
  };
  Listed listed_[4];
};

}  // namespace sl::present
