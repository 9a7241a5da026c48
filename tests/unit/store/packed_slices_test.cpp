// TraceStore::pack_slice_columns (core/store/packed_slices.cpp): every track's slice columns moved
// into one block per column, back to back in track order, so the whole trace reads as one array
// per column. Nothing about the rows changes; a column that grows afterwards leaves the block.
#include <doctest/doctest.h>

#include <vector>

#include "core/import/trace_loader.h"
#include "tests/unit/test_support.h"

namespace sl {
namespace {

std::vector<TimeNs> every_start(const TraceStore& s) {
  std::vector<TimeNs> out;
  for (const Track& t : s.tracks) out.insert(out.end(), t.slices.start.begin(), t.slices.start.end());
  return out;
}

std::vector<uint32_t> every_corr(const TraceStore& s) {
  std::vector<uint32_t> out;
  for (const Track& t : s.tracks) out.insert(out.end(), t.slices.corr.begin(), t.slices.corr.end());
  return out;
}

TEST_CASE("packed slice columns: the tracks' rows back to back, unchanged") {
  LoadResult r = load_trace(test::test_data("hta_cp_simple_add_input.json.gz"), {});
  REQUIRE(r.ok());
  TraceStore& s = *r.store;
  REQUIRE(s.tracks.size() > 2);
  const std::vector<TimeNs> starts = every_start(s);
  const std::vector<uint32_t> corrs = every_corr(s);
  const size_t bytes = s.store_bytes();
  CHECK_FALSE(s.packed_slices().has_value());  // as loaded, each track's rows are its own

  s.pack_slice_columns();
  auto packed = s.packed_slices();
  REQUIRE(packed.has_value());
  CHECK(std::vector<TimeNs>(packed->start.begin(), packed->start.end()) == starts);
  CHECK(std::vector<uint32_t>(packed->corr.begin(), packed->corr.end()) == corrs);
  CHECK(packed->dur.size() == starts.size());
  CHECK(packed->lane.size() == starts.size());
  CHECK(every_start(s) == starts);
  CHECK(s.store_bytes() <= bytes);  // capacity beyond the rows is not carried over
  // Each non-empty track's rows start where the previous one's end.
  const TimeNs* next = packed->start.data();
  for (const Track& t : s.tracks) {
    if (t.slices.start.empty()) continue;
    CHECK(t.slices.start.data() == next);
    next = t.slices.start.data() + t.slices.start.size();
  }

  // Moving the store's tracks keeps the rows where they are.
  std::vector<Track> moved = std::move(s.tracks);
  s.tracks = std::move(moved);
  CHECK(s.packed_slices()->start.data() == packed->start.data());

  // A track that grows moves to the heap: its rows are no longer in the block.
  Track& last = s.tracks.back();
  last.slices.start.push_back(last.slices.start.empty() ? 0 : last.slices.start.back());
  CHECK_FALSE(s.packed_slices().has_value());
  last.slices.start.pop_back();
  CHECK(every_start(s) == starts);
}

}  // namespace
}  // namespace sl
