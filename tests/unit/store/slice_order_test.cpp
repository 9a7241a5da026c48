// Sorting a track's slices (core/store/slice_order.h): tracks made of sorted runs are merged in place,
// others sorted; either way the order is the stable sort by (start, longer first).
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "core/store/slice_order.h"

namespace sl {
namespace {

// `runs` stretches of about `per_run` rows with non-decreasing starts (sorted runs, cut further
// where equal starts come shorter first), equal (start, dur) pairs frequent; name holds the
// original row so the stable order can be checked.
SliceColumns runs_of(size_t runs, size_t per_run, uint32_t seed) {
  std::mt19937 rng(seed);
  SliceColumns c;
  for (size_t r = 0; r < runs; ++r) {
    TimeNs t = TimeNs(rng() % 50);
    size_t rows = per_run ? 1 + rng() % (2 * per_run) : 0;
    for (size_t i = 0; i < rows; ++i) {
      TimeNs dur = TimeNs(rng() % 4);
      c.name.push_back(StringId(c.start.size()));
      c.start.push_back(t);
      c.dur.push_back(dur);
      c.cat.push_back(StringId(r));
      c.args.push_back(uint32_t(c.start.size() * 3));
      c.corr.push_back(uint32_t(c.start.size() * 5));
      t += TimeNs(rng() % 3);  // 0: equal starts, whose random durations break runs further
    }
  }
  return c;
}

std::vector<uint32_t> stable_order_of(const SliceColumns& c) {
  std::vector<uint32_t> order(c.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return slice_before(c, a, b); });
  return order;
}

void check_sorts_like_stable_sort(SliceColumns c) {
  std::vector<uint32_t> order = stable_order_of(c);
  SliceColumns expected = c;
  for (size_t i = 0; i < order.size(); ++i) {
    expected.start[i] = c.start[order[i]];
    expected.dur[i] = c.dur[order[i]];
    expected.name[i] = c.name[order[i]];
    expected.cat[i] = c.cat[order[i]];
    expected.args[i] = c.args[order[i]];
    expected.corr[i] = c.corr[order[i]];
  }
  sort_slices(c);
  CHECK(c.start == expected.start);
  CHECK(c.dur == expected.dur);
  CHECK(c.name == expected.name);  // ties keep the order they were added in
  CHECK(c.cat == expected.cat);
  CHECK(c.args == expected.args);
  CHECK(c.corr == expected.corr);
}

TEST_CASE("sort_slices: sorted runs merge into the stable order") {
  for (uint32_t seed = 0; seed < 40; ++seed) {
    CAPTURE(seed);
    check_sorts_like_stable_sort(runs_of(1 + seed % 6, 1 + seed * 7 % 300, seed));
  }
}

TEST_CASE("sort_slices: a big sorted run with a small run appended (a thread's CUDA calls, then its OS calls)") {
  SliceColumns c = runs_of(1, 20000, 7);
  SliceColumns tail = runs_of(1, 50, 8);
  for (size_t i = 0; i < tail.size(); ++i) {
    c.start.push_back(tail.start[i] * 300);
    c.dur.push_back(tail.dur[i]);
    c.name.push_back(StringId(c.name.size()));
    c.cat.push_back(9);
    c.args.push_back(uint32_t(i));
    c.corr.push_back(kNone);
  }
  check_sorts_like_stable_sort(c);
}

TEST_CASE("sort_slices: a big sorted run with a short tail of several runs (a stream's kernels, then its copies, sets, syncs)") {
  for (uint32_t seed = 20; seed < 30; ++seed) {
    CAPTURE(seed);
    SliceColumns c = runs_of(1, 20000, seed);
    for (uint32_t run = 0; run < 3; ++run) {
      SliceColumns tail = runs_of(1, 1 + seed % 40, seed * 3 + run);
      for (size_t i = 0; i < tail.size(); ++i) {
        // Every other row on a prefix row's (start, dur): ties with it and with the other runs.
        size_t twin = (i * 7919 + run * 104729) % c.size();
        bool tie = i % 2 == 0;
        c.start.push_back(tie ? c.start[twin] : tail.start[i] * 400);
        c.dur.push_back(tie ? c.dur[twin] : tail.dur[i]);
        c.name.push_back(StringId(c.name.size()));
        c.cat.push_back(10 + run);
        c.args.push_back(uint32_t(i));
        c.corr.push_back(kNone);
      }
    }
    check_sorts_like_stable_sort(c);
  }
}

TEST_CASE("sort_slices: calls recorded when they end (each nested call before its caller)") {
  // CUPTI writes an API call when it returns: a driver call made by a runtime call comes first.
  SliceColumns c;
  for (uint32_t i = 0; i < 5000; ++i) {
    TimeNs t = TimeNs(i) * 100;
    for (auto [start, dur] : {std::pair<TimeNs, TimeNs>{t + 10, 20}, {t, 50}}) {
      c.name.push_back(StringId(c.start.size()));
      c.start.push_back(start);
      c.dur.push_back(dur);
      c.cat.push_back(1);
      c.args.push_back(uint32_t(c.start.size()));
      c.corr.push_back(kNone);
    }
  }
  check_sorts_like_stable_sort(c);
}

TEST_CASE("sort_slices: many short runs in random order fall back to the full sort, same result") {
  for (uint32_t seed = 100; seed < 110; ++seed) {
    CAPTURE(seed);
    check_sorts_like_stable_sort(runs_of(3000, 2, seed));  // past the merge budget
  }
  check_sorts_like_stable_sort(runs_of(0, 0, 1));          // empty
  check_sorts_like_stable_sort(runs_of(1, 1, 1));          // one row
}

}  // namespace
}  // namespace sl
