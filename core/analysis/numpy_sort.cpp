#include "core/analysis/numpy_sort.h"

#include <cstddef>
#include <utility>

namespace sl::analysis {

namespace {

using Index = std::vector<uint32_t>;
constexpr int64_t kSmallPartition = 15;  // partitions with pr - pl <= 15 go to insertion sort

int depth_limit(std::size_t n) {
  int msb = 0;
  while (n >>= 1) ++msb;
  return msb * 2;
}

// Heapsort of idx[lo .. lo + n) by key (1-based heap), numpy's fallback for deep recursion.
void heap_argsort(const std::vector<int64_t>& key, Index& idx, int64_t lo, int64_t n) {
  auto at = [&](int64_t i) -> uint32_t& { return idx[std::size_t(lo + i - 1)]; };
  auto sift = [&](uint32_t tmp, int64_t i, int64_t size) {
    for (int64_t j = i << 1; j <= size;) {
      if (j < size && key[at(j)] < key[at(j + 1)]) ++j;
      if (!(key[tmp] < key[at(j)])) break;
      at(i) = at(j);
      i = j;
      j += j;
    }
    at(i) = tmp;
  };
  for (int64_t l = n >> 1; l > 0; --l) sift(at(l), l, n);
  for (; n > 1;) {
    uint32_t tmp = at(n);
    at(n) = at(1);
    --n;
    sift(tmp, 1, n);
  }
}

void insertion_argsort(const std::vector<int64_t>& key, Index& idx, int64_t pl, int64_t pr) {
  for (int64_t pi = pl + 1; pi <= pr; ++pi) {
    uint32_t vi = idx[std::size_t(pi)];
    int64_t vp = key[vi];
    int64_t pj = pi;
    while (pj > pl && vp < key[idx[std::size_t(pj - 1)]]) {
      idx[std::size_t(pj)] = idx[std::size_t(pj - 1)];
      --pj;
    }
    idx[std::size_t(pj)] = vi;
  }
}

// One median-of-3 partition of idx[pl..pr]; returns the pivot's final position.
int64_t partition(const std::vector<int64_t>& key, Index& idx, int64_t pl, int64_t pr) {
  auto v = [&](int64_t p) { return key[idx[std::size_t(p)]]; };
  auto swap = [&](int64_t a, int64_t b) { std::swap(idx[std::size_t(a)], idx[std::size_t(b)]); };
  int64_t pm = pl + ((pr - pl) >> 1);
  if (v(pm) < v(pl)) swap(pm, pl);
  if (v(pr) < v(pm)) swap(pr, pm);
  if (v(pm) < v(pl)) swap(pm, pl);
  const int64_t pivot = v(pm);
  int64_t pi = pl, pj = pr - 1;
  swap(pm, pj);
  for (;;) {
    do ++pi; while (v(pi) < pivot);
    do --pj; while (pivot < v(pj));
    if (pi >= pj) break;
    swap(pi, pj);
  }
  swap(pi, pr - 1);
  return pi;
}

}  // namespace

std::vector<uint32_t> numpy_quicksort_argsort(const std::vector<int64_t>& key) {
  Index idx(key.size());
  for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  if (key.size() <= 1) return idx;
  struct Pending {
    int64_t pl, pr;
    int depth;
  };
  std::vector<Pending> stack;
  int64_t pl = 0, pr = int64_t(key.size()) - 1;
  int depth = depth_limit(key.size());
  for (;;) {
    if (depth < 0) {
      heap_argsort(key, idx, pl, pr - pl + 1);
    } else {
      while (pr - pl > kSmallPartition) {
        int64_t pi = partition(key, idx, pl, pr);
        // Continue on the smaller side, keep the larger for later (numpy's stack order).
        if (pi - pl < pr - pi) {
          stack.push_back({pi + 1, pr, depth - 1});
          pr = pi - 1;
        } else {
          stack.push_back({pl, pi - 1, depth - 1});
          pl = pi + 1;
        }
        --depth;
      }
      insertion_argsort(key, idx, pl, pr);
    }
    if (stack.empty()) break;
    pl = stack.back().pl;
    pr = stack.back().pr;
    depth = stack.back().depth;
    stack.pop_back();
  }
  return idx;
}

}  // namespace sl::analysis
