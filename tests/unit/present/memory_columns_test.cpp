// The Memory view's headless drawing model (core/present/memory_columns): context bands per pixel
// column, the allocated/reserved column maxima, and the block under the mouse.
#include <doctest/doctest.h>

#include "core/present/memory_columns.h"
#include "tests/unit/test_support.h"

namespace sl {

namespace {

// aten::empty allocates 100 at 10 µs, freed at 30 µs; aten::mm allocates 300 at 20 µs (live at
// the end); a 1 ns spike of 1000 by aten::add at 50 µs.
const char* kTrace = R"({"traceEvents": [
  {"ph":"X","name":"aten::empty","cat":"cpu_op","pid":1,"tid":1,"ts":9,"dur":2},
  {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":19,"dur":2},
  {"ph":"X","name":"aten::add","cat":"cpu_op","pid":1,"tid":1,"ts":49,"dur":2},
  {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":10,"args":{"Addr":4096,"Bytes":100,"Total Allocated":100,"Total Reserved":2000,"Device Type":1,"Device Id":0}},
  {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":20,"args":{"Addr":8192,"Bytes":300,"Total Allocated":400,"Total Reserved":2000,"Device Type":1,"Device Id":0}},
  {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":30,"args":{"Addr":4096,"Bytes":-100,"Total Allocated":300,"Total Reserved":2000,"Device Type":1,"Device Id":0}},
  {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":50,"args":{"Addr":12288,"Bytes":1000,"Total Allocated":1300,"Total Reserved":3000,"Device Type":1,"Device Id":0}},
  {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":50.001,"args":{"Addr":12288,"Bytes":-1000,"Total Allocated":300,"Total Reserved":3000,"Device Type":1,"Device Id":0}}
]})";

}  // namespace

TEST_CASE("memory columns: context bands sample each column's middle; allocated keeps a 1 ns spike") {
  auto store = test::load_ok(kTrace);
  memory::MemoryAnalysis a = memory::analyze_memory(*store);
  REQUIRE(a.devices.size() == 1);
  const memory::DeviceMemory& d = a.devices[0];
  TimeNs origin = store->memory.ts[0] - 10'000;  // the trace's t = 0 µs on the store's clock
  // Ten columns of 10 µs over [0, 100) µs: middles at 5, 15, ..., 95 µs.
  auto cols = present::ContextBands(a, d, 1).columns(origin, origin + 100'000, 10);
  REQUIRE(cols.band_count() == 2);  // the largest at the peak (aten::add) and "the rest"
  CHECK(store->strings.view(cols.bands[0]) == "aten::add");
  CHECK(cols.bands[1] == present::kOtherContexts);
  auto total = [&](int c) { return cols.at(c, 0) + cols.at(c, 1); };
  CHECK(total(0) == 0);    // 5 µs
  CHECK(total(1) == 100);  // 15 µs: aten::empty
  CHECK(total(2) == 400);  // 25 µs: both
  CHECK(total(3) == 300);  // 35 µs: aten::mm
  CHECK(total(5) == 300);  // 55 µs: the spike is gone at the middle
  CHECK(cols.at(5, 0) == 0);
  CHECK(total(9) == 300);  // live at the end
  CHECK(cols.max_total == 400);
  auto lines = present::ContextBands(a, d).lines(origin, origin + 100'000, 10);
  REQUIRE(lines.size() == 10);
  CHECK(lines[0].allocated == 0);
  CHECK(lines[1].allocated == 100);
  CHECK(lines[2].allocated == 400);
  CHECK(lines[5].allocated == 1300);  // the column's maximum
  CHECK(lines[5].reserved == 3000);
  CHECK(lines[6].allocated == 300);
  CHECK(lines[2].reserved == 2000);
  // The block under the mouse: the largest of the band live at that time.
  present::ContextBands bands(a, d, 1);
  int64_t b = bands.largest_block_at(1, origin + 25'000);
  REQUIRE(b >= 0);
  CHECK(a.blocks[size_t(b)].size == 300);
  CHECK(bands.largest_block_at(0, origin + 25'000) == -1);
  // An index asked range after range answers as a fresh one (it keeps no state between ranges).
  for (int n : {1, 7, 10, 333}) {
    auto again = bands.columns(origin, origin + 100'000, n);
    auto once = present::ContextBands(a, d, 1).columns(origin, origin + 100'000, n);
    CHECK(again.bytes == once.bytes);
  }
  // Zoomed into [20, 30) µs in 5 columns: aten::mm from the first column on.
  auto zoom = present::ContextBands(a, d, 8).columns(origin + 20'000, origin + 30'000, 5);
  CHECK(zoom.band_count() == 3);  // the two live at the peak (aten::add, aten::mm), then the rest (aten::empty)
  for (int c = 0; c < 5; ++c) {
    int64_t sum = 0;
    for (size_t k = 0; k < zoom.band_count(); ++k) sum += zoom.at(c, k);
    CHECK(sum == 400);
  }
}

TEST_CASE("memory columns: bytes the totals count and no block explains stack as allocated before the trace") {
  // 900 bytes were allocated before recording began: the first alloc of 100 already reads 1000.
  auto store = test::load_ok(R"({"traceEvents": [
    {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":2},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Addr":4096,"Bytes":100,"Total Allocated":1000,"Device Type":1,"Device Id":0}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":10,"args":{"Addr":4096,"Bytes":-100,"Total Allocated":900,"Device Type":1,"Device Id":0}}
  ]})");
  memory::MemoryAnalysis a = memory::analyze_memory(*store);
  REQUIRE(a.devices.size() == 1);
  auto cols = present::ContextBands(a, a.devices[0], 8).columns(0, 20'000, 4);  // middles at 2.5, 7.5, 12.5, 17.5 µs
  size_t before = cols.band_of(memory::kBeforeTraceContext);
  REQUIRE(before < cols.band_count());
  CHECK(cols.bands[before] == memory::kBeforeTraceContext);
  for (int c = 0; c < 4; ++c) {
    int64_t sum = 0;
    for (size_t k = 0; k < cols.band_count(); ++k) sum += cols.at(c, k);
    CHECK(sum == (c < 2 ? 1000 : 900));
    CHECK(cols.at(c, before) == 900);
  }
}

TEST_CASE("memory columns: empty ranges and no columns give empty results, not a crash") {
  auto store = test::load_ok(kTrace);
  memory::MemoryAnalysis a = memory::analyze_memory(*store);
  const memory::DeviceMemory& d = a.devices[0];
  CHECK(present::ContextBands(a, d).columns(10, 10, 100).bytes.empty());
  CHECK(present::ContextBands(a, d).columns(0, 100, 0).bytes.empty());
  CHECK(present::ContextBands(a, d).lines(5, 5, 10).size() == 10);
  CHECK(present::ContextBands(a, d).lines(0, 100, -3).empty());
}

}  // namespace sl
