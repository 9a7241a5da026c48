// Searches over long sorted sequences that touch few cache lines and pages. A zoomed-out timeline
// asks, for every folded block and pixel column, "where does this run end?" over rows of ~10M
// slices reached through an indirection (the lane's slice rows → the store's start column): a
// gallop over the row itself is a chain of ~2 log2(distance) dependent probes, each two cold cache
// lines on pages of their own. Every kStride-th key, copied into one contiguous array (1/64 of the
// sequence: small enough to stay cached), answers the coarse part of the question; the sequence
// itself is then read only inside one block of kStride positions (a few lines, one page).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/present/gallop.h"

namespace sl::present {

class SampledKeys {
public:
  // 64: on the 10 GB synthetic trace's folds (~3,000 slices each) 16 and 256 cost the same; two
  // levels (every 8th key, then every 64th) cost twice as much: the larger fine array's lines
  // and pages were cold on every search.
  static constexpr size_t kStride = 64;

  SampledKeys() = default;
  // Samples key_at(p) for p in [0, size), a non-decreasing sequence, every kStride-th position.
  template <class KeyAt>
  SampledKeys(size_t size, KeyAt key_at) : size_(size) {
    samples_.reserve((size + kStride - 1) / kStride);
    for (size_t p = 0; p < size; p += kStride) samples_.push_back(key_at(p));
  }

  size_t size() const { return size_; }

  // std::partition_point over positions [0, size()): the first p with !pred(key_at(p)), given
  // pred holds for a prefix of the sequence. key_at must be the sequence the samples came from.
  // A binary search of the samples, then of one block.
  template <class KeyAt, class Pred>
  size_t partition_point(KeyAt key_at, Pred pred) const {
    size_t k = size_t(std::partition_point(samples_.begin(), samples_.end(), pred) - samples_.begin());
    return k == 0 ? 0 : first_false((k - 1) * kStride + 1, std::min(k * kStride, size_), key_at, pred);
  }

  // The same over [from, size()), for a boundary expected near `from` (drawing walks rows left to
  // right): a boundary inside from's block costs a gallop there; a farther one a gallop through
  // the samples after it and a binary search of one block.
  template <class KeyAt, class Pred>
  size_t partition_point_from(size_t from, KeyAt key_at, Pred pred) const {
    if (from >= size_) return size_;
    size_t next = from / kStride + 1;  // the first sample after from
    if (next >= samples_.size() || !pred(samples_[next]))
      return gallop_first_false(from, std::min(next * kStride, size_), key_at, pred);
    size_t k = size_t(gallop_partition_point(samples_.begin() + next + 1, samples_.end(), pred) - samples_.begin());
    return first_false((k - 1) * kStride + 1, std::min(k * kStride, size_), key_at, pred);  // sample k - 1 holds
  }

private:
  // The first p in [lo, hi) with !pred(key_at(p)), or hi: pred holds for a prefix of the range.
  template <class KeyAt, class Pred>
  static size_t first_false(size_t lo, size_t hi, KeyAt& key_at, Pred& pred) {
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (pred(key_at(mid))) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // first_false probing lo, lo + 1, lo + 3, lo + 7, … first: a near boundary reads near keys.
  template <class KeyAt, class Pred>
  static size_t gallop_first_false(size_t lo, size_t hi, KeyAt& key_at, Pred& pred) {
    size_t step = 1, done = lo;  // pred holds for every position before done
    while (lo + step - 1 < hi && pred(key_at(lo + step - 1))) {
      done = lo + step;
      step *= 2;
    }
    return first_false(done, std::min(lo + step - 1, hi), key_at, pred);
  }

  size_t size_ = 0;
  std::vector<int64_t> samples_;  // key_at(k · kStride)
};

}  // namespace sl::present
