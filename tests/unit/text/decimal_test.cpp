#include <doctest/doctest.h>

#include "core/text/decimal.h"

using sl::micros_to_nanos;
using sl::NumberStatus;

static int64_t ns(std::string_view text) {
  int64_t out = -1;
  REQUIRE(micros_to_nanos(text, out) == NumberStatus::Ok);
  return out;
}

TEST_CASE("microsecond text becomes exact nanoseconds") {
  CHECK(ns("0") == 0);
  CHECK(ns("1") == 1000);
  CHECK(ns("1712345.123") == 1712345123);
  CHECK(ns("1661203463029566") == 1661203463029566000);
  // A double would quantise this to a multiple of 256 ns.
  CHECK(ns("1661203463029566.123") == 1661203463029566123);
  CHECK(ns("88511388202.755") == 88511388202755);
  CHECK(ns("-5.5") == -5500);
  CHECK(ns("1.5e3") == 1500000);
  CHECK(ns("2E-3") == 2);
  CHECK(ns("0.0004") == 0);      // rounds to nearest ns
  CHECK(ns("0.0005") == 1);
  CHECK(ns("0.00149") == 1);
  CHECK(ns("-0.0005") == -1);   // half away from zero
  CHECK(ns("12 ") == 12000);    // trailing whitespace from the tokenizer
}

TEST_CASE("numbers that are not microsecond values are refused") {
  int64_t out = 0;
  CHECK(micros_to_nanos("", out) == NumberStatus::NotANumber);
  CHECK(micros_to_nanos("abc", out) == NumberStatus::NotANumber);
  CHECK(micros_to_nanos("1.2.3", out) == NumberStatus::NotANumber);
  CHECK(micros_to_nanos("\"12\"", out) == NumberStatus::NotANumber);
  CHECK(micros_to_nanos("1e", out) == NumberStatus::NotANumber);
  CHECK(micros_to_nanos("9223372036854775807", out) == NumberStatus::OutOfRange);
  CHECK(micros_to_nanos("1e400", out) == NumberStatus::OutOfRange);
}

TEST_CASE("int64 parsing is exact or refuses") {
  CHECK(sl::parse_int64("42") == 42);
  CHECK(sl::parse_int64("-1029147072") == -1029147072);
  CHECK(sl::parse_int64("9223372036854775807") == INT64_MAX);
  CHECK(sl::parse_int64("-9223372036854775808") == INT64_MIN);
  CHECK_FALSE(sl::parse_int64("10159970886766084423"));
  CHECK_FALSE(sl::parse_int64("1.5"));
  CHECK_FALSE(sl::parse_int64(""));
}
