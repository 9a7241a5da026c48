// The Nsight loader's correlation keys: where each key's first API call was appended (LaunchKeys),
// and the correlation rows of keys no API call has (UnlaunchedKeys).
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/store/track_columns.h"

namespace sl::nsys_detail {

// A slice as appended: its track and row there (finish() sorts the rows later). A key's calls are
// on one thread, whose rows come in order: the lower place is the earlier call.
struct SlicePlace {
  uint32_t track = kNone, row = kNone;
  friend auto operator<=>(const SlicePlace&, const SlicePlace&) = default;
};

// Correlation keys are a process's ordinal in the high half and CUPTI's id in the low
// (NsysLoader::correlation_key): per process ("space"), ids in arrays. Keys outside them
// (negative, or of more than kMaxSpaces processes) go through a hash.
constexpr size_t kMaxSpaces = 4096;
inline bool split_key(int64_t key, size_t& space, uint32_t& id) {
  if (key < 0 || (uint64_t(key) >> 32) >= kMaxSpaces) return false;
  space = size_t(uint64_t(key) >> 32), id = uint32_t(key);
  return true;
}
inline int64_t join_key(size_t space, uint32_t id) { return int64_t(uint64_t(space) << 32 | id); }

// A space's ids in ascending order with a value each. CUPTI counts ids up from 1 in a process and
// a table's rows come in about that order (a thread's calls, a stream's activities), so a search
// starts where the last one ended: steps of doubling length, then a binary search within the last.
// Ids are sparse (kernels among API calls; a report's API calls among all of a process's): an
// array indexed by id populated 460 MB on the kernel-heavy benchmark report, and a hash costs a
// cache miss per key.
template <class Value>
struct SortedIds {
  std::vector<uint32_t> ids;
  std::vector<Value> values;
  size_t cursor = 0;  // where the last search ended

  // Appends an id past the last; false (nothing added) for any other.
  bool append(uint32_t id, const Value& value) {
    if (!ids.empty() && id <= ids.back()) return false;
    ids.push_back(id);
    values.push_back(value);
    return true;
  }
  Value* find(uint32_t id) {
    if (ids.empty() || id > ids.back()) return nullptr;
    size_t at = search(id);
    return ids[at] == id ? &values[at] : nullptr;
  }
  // The first position whose id is not below `id` (ids.size() when none is).
  size_t search(uint32_t id) {
    size_t n = ids.size(), lo, hi;
    if (cursor >= n) cursor = n - 1;
    if (ids[cursor] < id) {
      size_t step = 1;
      lo = cursor + 1;
      while (lo + step - 1 < n && ids[lo + step - 1] < id) lo += step, step *= 2;
      hi = std::min(n, lo + step - 1);
    } else {
      size_t step = 1;
      hi = cursor;
      while (hi >= step && ids[hi - step] >= id) hi -= step, step *= 2;
      lo = hi >= step ? hi - step + 1 : 0;
    }
    cursor = size_t(std::lower_bound(ids.begin() + ptrdiff_t(lo), ids.begin() + ptrdiff_t(hi), id) - ids.begin());
    return cursor;
  }
  void reserve(size_t n) {
    ids.reserve(n);
    values.reserve(n);
  }
};

// The first API call of each correlation key. Calls are added as the table is read, then sealed
// before the GPU tables. A key past its process's last is appended; any other waits in a list
// that seal() sorts and merges in: threads' calls interleave, and a report may write a thread's
// calls in blocks after another's (a hash probe per such key made those 2.5x slower to load).
class LaunchKeys {
public:
  void add(int64_t key, SlicePlace place) {
    size_t space;
    uint32_t id;
    if (!split_key(key, space, id)) {
      if (!others_.try_emplace(key, place).second) later_.emplace(key, place);
      return;
    }
    if (space >= spaces_.size()) spaces_.resize(space + 1);
    Space& s = spaces_[space];
    if (s.sorted.append(id, place)) return;
    if (id == s.sorted.ids.back()) later_.emplace(key, place);  // the call just before had the key
    else s.late.push_back({id, place});
  }
  // After the last add: each key once, with its first call; its later calls in later_calls().
  void seal() {
    for (size_t space = 0; space < spaces_.size(); ++space) {
      Space& s = spaces_[space];
      if (s.late.empty()) continue;
      std::sort(s.late.begin(), s.late.end());
      SortedIds<SlicePlace> merged;
      merged.reserve(s.sorted.ids.size() + s.late.size());
      auto take = [&](uint32_t id, SlicePlace place) {
        if (!merged.append(id, place)) later_.emplace(join_key(space, id), place);
      };
      size_t i = 0, j = 0;
      while (i < s.sorted.ids.size() || j < s.late.size()) {
        bool sorted_first = j == s.late.size() ||
                            (i < s.sorted.ids.size() && Late{s.sorted.ids[i], s.sorted.values[i]} < s.late[j]);
        if (sorted_first) take(s.sorted.ids[i], s.sorted.values[i]), ++i;
        else take(s.late[j].id, s.late[j].place), ++j;
      }
      s.sorted = std::move(merged);
      std::vector<Late>().swap(s.late);
    }
  }
  // The calls of a key after its first (a driver call inside the runtime call that has its id).
  std::vector<SlicePlace> later_calls(int64_t key) const {
    std::vector<SlicePlace> calls;
    if (later_.empty()) return calls;
    auto [first, last] = later_.equal_range(key);
    for (auto it = first; it != last; ++it) calls.push_back(it->second);
    return calls;
  }
  const SlicePlace* find(int64_t key) {
    size_t space;
    uint32_t id;
    if (split_key(key, space, id)) return space < spaces_.size() ? spaces_[space].sorted.find(id) : nullptr;
    auto it = others_.find(key);
    return it == others_.end() ? nullptr : &it->second;
  }
  // Room for this many calls of the first process (most reports have one), so that the arrays
  // do not grow by doubling (a copy, and fresh pages, each time). Address space only: pages are
  // faulted in as calls come.
  void reserve(size_t calls) {
    if (spaces_.empty()) spaces_.resize(1);
    spaces_[0].sorted.reserve(calls);
  }

private:
  struct Late {
    uint32_t id;
    SlicePlace place;
    friend auto operator<=>(const Late&, const Late&) = default;
  };
  struct Space {
    SortedIds<SlicePlace> sorted;
    std::vector<Late> late;  // ids that came after a larger one
  };
  std::vector<Space> spaces_;
  std::unordered_map<int64_t, SlicePlace> others_;
  std::unordered_multimap<int64_t, SlicePlace> later_;  // a key's calls after its first (rare)
};

// The correlation rows of keys no API call has (GPU activities whose call the report lacks),
// found and added while the GPU tables are read: an id past its process's last is appended, one a
// little before it (up to 64 places) moved in, one further back goes through a hash. Such
// activities are rare in a report that traced the CUDA API, and come in about id order.
class UnlaunchedKeys {
public:
  // The row of a key, or kNone.
  uint32_t find(int64_t key) {
    size_t space;
    uint32_t id;
    if (split_key(key, space, id) && space < spaces_.size())
      if (const uint32_t* row = spaces_[space].find(id)) return *row;
    if (others_.empty()) return kNone;
    auto it = others_.find(key);
    return it == others_.end() ? kNone : it->second;
  }
  // A key find() did not find.
  void insert(int64_t key, uint32_t row) {
    size_t space;
    uint32_t id;
    if (split_key(key, space, id)) {
      if (space >= spaces_.size()) spaces_.resize(space + 1);
      SortedIds<uint32_t>& s = spaces_[space];
      if (s.append(id, row)) return;
      if (size_t at = s.search(id); s.ids.size() - at <= kMovedAtMost) {
        s.ids.insert(s.ids.begin() + ptrdiff_t(at), id);
        s.values.insert(s.values.begin() + ptrdiff_t(at), row);
        return;
      }
    }
    others_.emplace(key, row);
  }
  // As LaunchKeys::reserve.
  void reserve(size_t keys) {
    if (spaces_.empty()) spaces_.resize(1);
    spaces_[0].reserve(keys);
  }

private:
  static constexpr size_t kMovedAtMost = 64;
  std::vector<SortedIds<uint32_t>> spaces_;
  std::unordered_map<int64_t, uint32_t> others_;
};

}  // namespace sl::nsys_detail
