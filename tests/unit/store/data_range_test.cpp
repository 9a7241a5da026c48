// The data's time range (core/store/data_range.h): slices frame it, trailing metadata does not.
#include <doctest/doctest.h>

#include "core/store/data_range.h"
#include "tests/unit/test_support.h"

using namespace sl;

TEST_CASE("data_time_range: first slice start to last slice end, markers after it left out") {
  auto store = test::load_ok(R"JSON({"traceEvents":[
    {"ph":"i","name":"Iteration Start","s":"g","ts":1000},
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":1010,"dur":5},
    {"ph":"X","name":"b","pid":1,"tid":2,"ts":1012,"dur":20},
    {"ph":"X","name":"c","pid":1,"tid":1,"ts":1020,"dur":2},
    {"ph":"i","name":"Record Window End","s":"g","ts":1090}]})JSON");
  CHECK(store->end_ns == 90'000);
  auto [start, end] = data_time_range(*store);
  CHECK(start == 10'000);
  CHECK(end == 32'000);  // b's end, not the later-starting c's
}

TEST_CASE("data_time_range: a trace without slices is its whole span") {
  auto store = test::load_ok(R"JSON({"traceEvents":[
    {"ph":"i","name":"x","s":"g","ts":5},{"ph":"i","name":"y","s":"g","ts":25}]})JSON");
  auto [start, end] = data_time_range(*store);
  CHECK(start == 0);
  CHECK(end == store->end_ns);
}
