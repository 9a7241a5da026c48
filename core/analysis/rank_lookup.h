// A rank number -> index lookup for the per-arrival loops of a fleet (tens of millions of
// arrivals): a table when the ranks are dense, as a job's are, else a hash map.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace sl::analysis {

class RankLookup {
public:
  static constexpr size_t kNone = SIZE_MAX;
  // (rank, index) pairs; a rank given twice keeps its first index.
  explicit RankLookup(const std::vector<std::pair<int64_t, size_t>>& pairs) {
    if (pairs.empty()) return;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (auto& [rank, index] : pairs) lo = std::min(lo, rank), hi = std::max(hi, rank);
    dense_ = uint64_t(hi) - uint64_t(lo) < 4 * uint64_t(pairs.size()) + 1024;
    lo_ = lo;
    if (dense_) table_.assign(size_t(uint64_t(hi) - uint64_t(lo)) + 1, kNone);
    for (auto& [rank, index] : pairs)
      if (dense_) {
        size_t& at = table_[size_t(uint64_t(rank) - uint64_t(lo))];
        if (at == kNone) at = index;
      } else {
        map_.try_emplace(rank, index);
      }
  }
  size_t find(int64_t rank) const {
    if (!dense_) {
      auto it = map_.find(rank);
      return it == map_.end() ? kNone : it->second;
    }
    uint64_t at = uint64_t(rank) - uint64_t(lo_);
    return at < table_.size() ? table_[size_t(at)] : kNone;
  }
  // As unordered_map::at: a rank not given throws.
  size_t at(int64_t rank) const {
    size_t i = find(rank);
    if (i == kNone) throw std::out_of_range("RankLookup: rank " + std::to_string(rank) + " not given");
    return i;
  }

private:
  bool dense_ = true;
  int64_t lo_ = 0;
  std::vector<size_t> table_;
  std::unordered_map<int64_t, size_t> map_;
};

}  // namespace sl::analysis
