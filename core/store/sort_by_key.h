// A stable sort by an unsigned 64-bit key, for the millions of flow points and flows a store's
// finish() orders (by time on a track, by flow id, by endpoint slice).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sl {

// Nearly sorted items (a few out of place, not far: GPU activities that start in a slightly
// different order than their table lists them) are sorted by insertion, stably, in time linear in
// the items plus the places moved. Gives up (false) past `budget` places moved; what it sorted
// so far keeps equal keys in their first order, so a stable sort can go on from there.
template <class Item, class Key>
bool sort_by_insertion(Item* begin, Item* end, Key key, size_t budget) {
  for (Item* it = begin + 1; it < end; ++it) {
    uint64_t k = key(*it);
    if (!(k < key(it[-1]))) continue;
    Item moving = *it;
    Item* to = it;
    for (; to > begin && k < key(to[-1]); --to, --budget) {
      if (budget == 0) {  // `moving` goes here, before larger keys only: still stable
        *to = moving;
        return false;
      }
      *to = to[-1];
    }
    *to = moving;
  }
  return true;
}

// Sorts [begin, end) by key(item), stably: items with equal keys keep their order. Nearly sorted
// input is finished by insertion; the rest by a least significant digit radix sort, a byte per
// pass, that skips the bytes every key shares (a trace's timestamps and slice rows use three to
// six of the eight). std::sort, which this replaces for flow points and flows, fell back to
// heapsort on the long sorted runs they come in: binding 2M flow points (a linked Nsight report's,
// before its launch flows became known flows) took 165 ms, now 40.
template <class Item, class Key>
void stable_sort_by_key(Item* begin, Item* end, Key key) {
  const size_t n = size_t(end - begin);
  if (n < 256) {  // a histogram per byte costs more than sorting so few
    std::stable_sort(begin, end, [&](const Item& a, const Item& b) { return key(a) < key(b); });
    return;
  }
  if (sort_by_insertion(begin, end, key, 2 * n)) return;
  std::array<std::array<uint32_t, 256>, 8> counts{};
  for (const Item* it = begin; it != end; ++it) {
    uint64_t k = key(*it);
    for (size_t b = 0; b < 8; ++b) ++counts[b][(k >> (8 * b)) & 0xFF];
  }
  std::vector<Item> scratch(n);
  Item *from = begin, *to = scratch.data();
  for (size_t b = 0; b < 8; ++b) {
    std::array<uint32_t, 256>& at = counts[b];
    if (at[(key(*from) >> (8 * b)) & 0xFF] == n) continue;  // every key has this byte
    uint32_t sum = 0;
    for (uint32_t& c : at) sum += std::exchange(c, sum);
    for (const Item* it = from; it != from + n; ++it) to[at[(key(*it) >> (8 * b)) & 0xFF]++] = *it;
    std::swap(from, to);
  }
  if (from != begin) std::copy(from, from + n, begin);
}

template <class Item, class Key>
void stable_sort_by_key(std::vector<Item>& items, Key key) {
  stable_sort_by_key(items.data(), items.data() + items.size(), key);
}

// Keys that order signed values as unsigned ones do.
inline uint64_t sortable_key(int64_t v) { return uint64_t(v) ^ (uint64_t(1) << 63); }

}  // namespace sl
