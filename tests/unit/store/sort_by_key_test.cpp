// The stable sort by key that orders flow points and flows (core/store/sort_by_key.h): whatever path
// it takes (a small input, insertion for nearly sorted input, insertion given up half way, radix
// passes), the result is std::stable_sort's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "core/store/sort_by_key.h"

namespace sl {
namespace {

struct Item {
  int64_t key;
  uint32_t original;  // position before sorting: equal keys must keep their order
};

std::vector<Item> numbered(const std::vector<int64_t>& keys) {
  std::vector<Item> items;
  for (uint32_t i = 0; i < keys.size(); ++i) items.push_back({keys[i], i});
  return items;
}

// Sorts `keys` both ways and checks every item is where std::stable_sort puts it.
void check_like_stable_sort(const std::vector<int64_t>& keys) {
  std::vector<Item> ours = numbered(keys), reference = ours;
  stable_sort_by_key(ours, [](const Item& i) { return sortable_key(i.key); });
  std::stable_sort(reference.begin(), reference.end(), [](const Item& a, const Item& b) { return a.key < b.key; });
  REQUIRE(ours.size() == reference.size());
  size_t first_difference = 0;
  while (first_difference < ours.size() && ours[first_difference].key == reference[first_difference].key &&
         ours[first_difference].original == reference[first_difference].original)
    ++first_difference;
  CHECK(first_difference == ours.size());
}

TEST_CASE("sort by key: random keys with many ties, negative ones included, sort as std::stable_sort") {
  std::mt19937_64 rng(7);
  for (size_t n : {0u, 1u, 2u, 255u, 256u, 5000u, 100000u}) {
    std::vector<int64_t> keys(n);
    for (int64_t& k : keys) k = int64_t(rng() % 2000) - 1000;
    check_like_stable_sort(keys);
  }
}

TEST_CASE("sort by key: keys spanning all 64 bits, and keys sharing all but one byte") {
  std::mt19937_64 rng(11);
  std::vector<int64_t> wide(20000), narrow(20000);
  for (int64_t& k : wide) k = int64_t(rng());
  for (int64_t& k : narrow) k = int64_t(0x1234560000ll + (rng() % 256) * 0x100);
  wide.push_back(INT64_MIN), wide.push_back(INT64_MAX), wide.push_back(INT64_MIN);
  check_like_stable_sort(wide);
  check_like_stable_sort(narrow);
}

TEST_CASE("sort by key: nearly sorted input (a few items late by a little), and sorted runs") {
  std::mt19937_64 rng(3);
  std::vector<int64_t> nearly(50000);
  for (size_t i = 0; i < nearly.size(); ++i) nearly[i] = int64_t(i / 2) * 10 + (rng() % 100 == 0 ? -25 : 0);
  check_like_stable_sort(nearly);
  // Two long sorted runs, the second inside the first's range: insertion gives up half way (its
  // budget is twice the items) and the radix passes finish from there.
  std::vector<int64_t> runs;
  for (int64_t i = 0; i < 30000; ++i) runs.push_back(i * 2);
  for (int64_t i = 0; i < 30000; ++i) runs.push_back(i * 2 + (i % 3 == 0 ? 0 : 1));
  check_like_stable_sort(runs);
  std::vector<int64_t> reversed(3000);
  for (size_t i = 0; i < reversed.size(); ++i) reversed[i] = int64_t(reversed.size() - i) / 3;
  check_like_stable_sort(reversed);
}

TEST_CASE("sort by key: insertion that gives up leaves every item once, equal keys in order") {
  std::vector<Item> items = numbered({5, 4, 3, 2, 1, 3, 0});
  bool finished = sort_by_insertion(items.data(), items.data() + items.size(),
                                    [](const Item& i) { return sortable_key(i.key); }, 3);
  CHECK_FALSE(finished);
  std::vector<uint32_t> seen;
  for (const Item& i : items) seen.push_back(i.original);
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6});
  // The two 3s (originally 2 and 5) keep their order.
  auto first_three = std::find_if(items.begin(), items.end(), [](const Item& i) { return i.key == 3; });
  auto second_three = std::find_if(first_three + 1, items.end(), [](const Item& i) { return i.key == 3; });
  REQUIRE(second_three != items.end());
  CHECK(first_three->original == 2);
  CHECK(second_three->original == 5);
}

}  // namespace
}  // namespace sl
