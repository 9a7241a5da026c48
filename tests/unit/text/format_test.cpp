// Numbers for people (core/text/format.h): units, rounding at unit boundaries, separators.
#include <doctest/doctest.h>

#include "core/text/format.h"

using namespace sl;

TEST_CASE("human::duration picks the unit that fits, three significant digits") {
  CHECK(human::duration(int64_t(1'617'790)) == "1.62 ms");
  CHECK(human::duration(int64_t(840'000)) == "840 \xC2\xB5s");
  CHECK(human::duration(int64_t(12'449)) == "12.4 \xC2\xB5s");
  CHECK(human::duration(int64_t(850)) == "850 ns");           // exact below 1 µs
  CHECK(human::duration(int64_t(3'200'000'000)) == "3.20 s");
  CHECK(human::duration(int64_t(16'414'376'000)) == "16.4 s");
  CHECK(human::duration(1.234e12) == "1,234 s");
  CHECK(human::duration(int64_t(0)) == "0");
  CHECK(human::duration(2.5) == "2.50 ns");                  // a mean of ns values
}

TEST_CASE("human::duration rounds across unit boundaries") {
  CHECK(human::duration(int64_t(999'600)) == "1.00 ms");     // not "1000 µs"
  CHECK(human::duration(int64_t(9'996)) == "10.0 \xC2\xB5s");   // not "10.00 µs"
  CHECK(human::duration(int64_t(99'960)) == "100 \xC2\xB5s");
  CHECK(human::duration(999.7) == "1.00 \xC2\xB5s");
  CHECK(human::duration(int64_t(999'499)) == "999 \xC2\xB5s");
}

TEST_CASE("human::duration keeps the sign of deltas") {
  CHECK(human::duration(int64_t(-145'000)) == "-145 \xC2\xB5s");
  CHECK(human::duration(int64_t(-7)) == "-7 ns");
}

TEST_CASE("human::percent has one decimal") {
  CHECK(human::percent(99.6965) == "99.7%");
  CHECK(human::percent(0.0648) == "0.1%");
  CHECK(human::percent(100) == "100.0%");
  CHECK(human::percent(-0.01) == "0.0%");
  CHECK(human::percent(-12.34) == "-12.3%");
}

TEST_CASE("human::count groups thousands") {
  CHECK(human::count(0) == "0");
  CHECK(human::count(999) == "999");
  CHECK(human::count(1000) == "1,000");
  CHECK(human::count(1234567) == "1,234,567");
  CHECK(human::count(-1234567) == "-1,234,567");
  CHECK(human::count(INT64_MIN) == "-9,223,372,036,854,775,808");
}

TEST_CASE("human::number: four significant digits, separators from 1000") {
  CHECK(human::number(67.44049247606019) == "67.44");
  CHECK(human::number(1617.7903007320995) == "1,618");
  CHECK(human::number(313269.3921568627) == "313,269");
  CHECK(human::number(2.3333333333333335) == "2.333");
  CHECK(human::number(0.99943) == "0.9994");
  CHECK(human::number(12.5) == "12.5");
  CHECK(human::number(4) == "4");
  CHECK(human::number(999.96) == "1,000");
  CHECK(human::number(0) == "0");
  CHECK(human::number(5.7e-6) == "<0.0001");
  CHECK(human::number(-3.14159) == "-3.142");
}
