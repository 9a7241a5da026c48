// Headless logic behind the timeline: range aggregation, the time axis, shortened names.
#include "test_support.h"
#include "views/range_stats.h"
#include "views/style.h"
#include "core/present/time_axis.h"
#include "views/timeline_view.h"

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
