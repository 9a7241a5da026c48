// Headless logic behind the timeline: range aggregation, the time axis, shortened names.
#include "core/present/time_axis.h"
#include "core/store/data_range.h"
#include "tests/unit/test_support.h"
#include "views/range_stats.h"
#include "views/style.h"
#include "views/timeline_view.h"

#include <limits>
#include <random>

using namespace sl;
using namespace sl::views;
using namespace sl::present;

TEST_CASE("range aggregation clips to the range and takes children out of self time") {
  auto s = test::load_ok(R"([
    {"ph":"X","name":"parent","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","name":"c","pid":1,"tid":1,"ts":2,"dur":3},
    {"ph":"X","name":"c","pid":1,"tid":1,"ts":6,"dur":2},
    {"ph":"X","name":"other","pid":1,"tid":2,"ts":20,"dur":2}])");
  auto rows = aggregate_range(*s, 4000, 7000);
  REQUIRE(rows.size() == 2);
  CHECK(s->strings.view(rows[0].name) == "parent");
  CHECK(rows[0].count == 1);
  CHECK(rows[0].total == 3000);
  CHECK(rows[0].self == 1000);
  CHECK(s->strings.view(rows[1].name) == "c");
  CHECK(rows[1].count == 2);
  CHECK(rows[1].total == 2000);
  CHECK(rows[1].share == doctest::Approx(0.4));
  CHECK(slices_in_range(*s, s->strings.find("c"), 4000, 7000).size() == 2);
  CHECK(slices_in_range(*s, s->strings.find("c"), 5500, 5900).empty());
}

TEST_CASE("time axis: readable durations and ticks of 1 2 or 5 times a power of ten") {
  CHECK(format_duration(850) == "850 ns");
  CHECK(format_duration(12400) == "12.4 \xC2\xB5s");
  CHECK(format_duration(3.25e6) == "3.25 ms");
  CHECK(format_duration(1.2e9) == "1.20 s");
  CHECK(tick_step(130) == 200);
  CHECK(tick_step(4100) == 5000);
  CHECK(tick_step(1e6) == 1000000);
  CHECK(format_tick(2500000, 500000) == "2.5 ms");
  CHECK(format_tick(3000000, 1000000) == "3 ms");
  double ns = 0;
  CHECK(parse_time("12.5ms", ns));
  CHECK(ns == 12.5e6);
  CHECK(parse_time("1500", ns));  // raw microseconds
  CHECK(ns == 1.5e6);
  CHECK(parse_time("3s", ns));
  CHECK(ns == 3e9);
  CHECK_FALSE(parse_time("fast", ns));
  CHECK_FALSE(parse_time("3 parsecs", ns));
}

TEST_CASE("kernel names are shortened: templates and parameters elided") {
  CHECK(short_name("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, "
                   "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)") ==
        "at::native::vectorized_elementwise_kernel");
  CHECK(short_name("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int)") ==
        "at::native::vectorized_layer_norm_kernel");
  CHECK(short_name("aten::mm") == "aten::mm");
  CHECK(short_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)") ==
        "ncclKernel_AllReduce_RING_LL_Sum_float");
}

#include "views/breakdown_view.h"

TEST_CASE("duration distribution of a kernel: log bins that hold every occurrence") {
  auto s = test::load_ok(R"([
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":0,"dur":1,"args":{"stream":7}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":2,"dur":2,"args":{"stream":7}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":100,"args":{"stream":7}}])");
  auto refs = s->slices_named(s->strings.find("k"));
  auto d = duration_distribution(*s, std::vector<SliceRef>(refs.begin(), refs.end()), 10);
  REQUIRE(d.counts.size() == 10);
  uint32_t total = 0;
  for (uint32_t c : d.counts) total += c;
  CHECK(total == 3);
  CHECK(d.median == 2000);
  CHECK(d.counts.front() == 1);  // 1 µs
  CHECK(d.counts.back() == 1);   // 100 µs
  CHECK(d.edges.front() <= 1000);
  CHECK(d.edges.back() >= 100000);
}

TEST_CASE("timeline: deep stacks start folded to a few levels") {
  // Thread 1: a stack 9 deep (folded); thread 2: 5 deep (not worth a fold).
  std::string json = R"({"traceEvents":[)";
  for (int d = 0; d < 9; ++d)
    json += R"({"ph":"X","name":"f)" + std::to_string(d) + R"(","pid":1,"tid":1,"ts":)" + std::to_string(d) +
            R"(,"dur":)" + std::to_string(100 - 2 * d) + "},";
  for (int d = 0; d < 5; ++d)
    json += R"({"ph":"X","name":"g)" + std::to_string(d) + R"(","pid":1,"tid":2,"ts":)" + std::to_string(d) +
            R"(,"dur":)" + std::to_string(100 - 2 * d) + "},";
  json.back() = ']';
  json += "}";
  auto store = sl::test::load_ok(json);
  sl::views::TimelineView tl(*store);
  sl::SliceRef deep = sl::test::find_slice(*store, "f8"), shallow = sl::test::find_slice(*store, "g4");
  REQUIRE(deep.valid());
  REQUIRE(shallow.valid());
  CHECK(tl.folded(deep.track));
  CHECK_FALSE(tl.folded(shallow.track));
  tl.set_folded(deep.track, false);  // the "N more levels" row's click
  CHECK_FALSE(tl.folded(deep.track));
  tl.set_folded(deep.track, true);
  CHECK(tl.folded(deep.track));
}

TEST_CASE("timeline: the initial view frames the data, not a trailing marker") {
  auto store = sl::test::load_ok(R"({"traceEvents":[
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1000},
    {"ph":"i","name":"Record Window End","s":"g","ts":9000}]})");
  sl::views::TimelineView tl(*store);
  CHECK(tl.data_range().second == 1'000'000);
  CHECK(tl.view_end() >= 1'000'000);
  CHECK(tl.view_end() <= 1'050'000);  // within 5 % of the last slice's end
  CHECK(tl.view_start() <= 0);
}

TEST_CASE("timeline sources: each store's rows under its header, on the view clock by its shift") {
  auto a = test::load_ok(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":10}])");
  auto b = test::load_ok(R"([
    {"ph":"X","name":"b","pid":2,"tid":1,"ts":100,"dur":10},
    {"ph":"X","name":"a","pid":2,"tid":1,"ts":200,"dur":5}])");
  TimelineView tl(*a);
  // One unlabelled source: the single-trace rows, no header, the store's own range.
  CHECK(tl.display_order().front().kind == DisplayRow::ProcessHeader);
  CHECK(tl.data_range() == std::pair<TimeNs, TimeNs>{0, 10000});
  TimelineSource source;
  source.store = b.get(), source.shift = 1000000, source.label = "B";
  CHECK(tl.add_source(source) == 1);
  // B's own range moved 1 ms later, joined with A's 0..10 µs.
  auto [b_start, b_end] = data_time_range(*b);
  CHECK(b_end - b_start == 105000);
  CHECK(tl.data_range() == std::pair<TimeNs, TimeNs>{std::min<TimeNs>(0, b_start + 1000000), b_end + 1000000});
  std::vector<DisplayRow> order = tl.display_order();
  auto header = std::find_if(order.begin(), order.end(), [](const DisplayRow& r) { return r.kind == DisplayRow::SourceHeader; });
  REQUIRE(header != order.end());
  CHECK(header->source == 1);
  CHECK(std::all_of(order.begin(), header, [](const DisplayRow& r) { return r.source == 0; }));
  CHECK(std::all_of(header, order.end(), [](const DisplayRow& r) { return r.source == 1; }));
  CHECK(std::count_if(header, order.end(), [](const DisplayRow& r) { return r.kind == DisplayRow::Track; }) == 1);
  CHECK(tl.visible_tracks().size() == 1);  // source 0's tracks only

  // Highlights and the selection name their source; source 0's API sees only source 0.
  SliceRef b_slice = b->slices_named(b->strings.find("b"))[0];
  tl.set_highlights(1, {b_slice});
  CHECK(tl.highlights().empty());
  CHECK(tl.highlights(1) == std::vector<SliceRef>{b_slice});
  tl.select(SourceSlice{1, b_slice});
  CHECK_FALSE(tl.selected().valid());
  CHECK(tl.selection() == SourceSlice{1, b_slice});
  // Inserting before B moves B, its highlights and the selection on it; removing B drops them.
  TimelineSource first;
  first.store = a.get(), first.label = "C";
  CHECK(tl.add_source(first, 0) == 0);
  CHECK(tl.selection() == SourceSlice{2, b_slice});
  CHECK(tl.highlights(2).size() == 1);
  CHECK(tl.source(2).shift == 1000000);
  tl.remove_source(0);
  CHECK(tl.selection() == SourceSlice{1, b_slice});
  tl.remove_source(1);
  CHECK_FALSE(tl.selection().valid());
  CHECK(tl.source_count() == 1);
  CHECK(tl.data_range() == std::pair<TimeNs, TimeNs>{0, 10000});
}

// A timeline lane's searches through its sampled starts, and the times it keeps beside them:
// the same answers as the plain binary searches over the store's columns they replace, on random
// rows of non-overlapping slices (zero-length slices, slices ending where the next starts), an
// empty lane, and from every position (how folds and overview columns search).
TEST_CASE("lane index: searches and times equal the plain ones over the store's columns") {
  std::mt19937 rng(5);
  for (size_t n : {size_t(0), size_t(1), size_t(2), size_t(8), size_t(9), size_t(64), size_t(65), size_t(700)}) {
    SliceColumns c;
    std::vector<uint32_t> row_of;
    TimeNs t = 100;
    // Two lanes interleaved in the columns, as depths are: lane 1 gets the slices the test checks,
    // lane 2 stays empty.
    for (size_t k = 0; k < n; ++k) {
      c.start.push_back(t), c.dur.push_back(TimeNs(rng() % 3 == 0 ? 0 : rng() % 50)), row_of.push_back(1);
      t = c.end(c.size() - 1) + TimeNs(rng() % 3 == 0 ? 0 : rng() % 40);  // touching or apart
      if (rng() % 2) c.start.push_back(t), c.dur.push_back(1), row_of.push_back(0);
    }
    TimelineSourceState::LaneIndex index(c, 3, [&](uint32_t i) { return row_of[i]; });
    REQUIRE(index.rows.size() == 3);
    CHECK(index.rows[2].empty());
    CHECK(index.first_ending(2, [](TimeNs) { return true; }) == 0);
    const auto& row = index.rows[1];
    REQUIRE(row.size() == n);
    TimeNs busy = 0;
    for (size_t p = 0; p < row.size(); ++p) {
      REQUIRE(index.start(1, p) == c.start[row[p]]);
      REQUIRE(index.end(1, p) == c.end(row[p]));
      REQUIRE(index.busy(1, 0, p) == busy);
      busy += c.dur[row[p]];
    }
    CHECK(index.busy(1, 0, n) == busy);
    std::vector<TimeNs> cuts = {std::numeric_limits<TimeNs>::min(), 0, 100, t, t + 1};
    for (uint32_t r : row) cuts.insert(cuts.end(), {c.start[r] - 1, c.start[r], c.end(r), c.end(r) + 1});
    for (TimeNs cut : cuts) {
      auto before = [&](TimeNs x) { return x < cut; };
      auto before_or_at = [&](TimeNs x) { return x <= cut; };
      auto plain_start = [&](auto pred) {
        return size_t(std::partition_point(row.begin(), row.end(), [&](uint32_t r) { return pred(c.start[r]); }) - row.begin());
      };
      auto plain_end = [&](auto pred) {
        return size_t(std::partition_point(row.begin(), row.end(), [&](uint32_t r) { return pred(c.end(r)); }) - row.begin());
      };
      REQUIRE(index.first_starting(1, before) == plain_start(before));
      REQUIRE(index.first_ending(1, before) == plain_end(before));
      REQUIRE(index.first_ending(1, before_or_at) == plain_end(before_or_at));
      for (size_t from = 0; from <= row.size(); ++from) {
        REQUIRE(index.first_starting(1, before, from) == std::max(from, plain_start(before)));
        REQUIRE(index.first_ending(1, before_or_at, from) == std::max(from, plain_end(before_or_at)));
      }
    }
  }
}
