#include "core/present/time_axis.h"

#include "core/text/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sl::present {
namespace {

struct Unit {
  double ns;
  const char* name;
};
constexpr Unit kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "\xC2\xB5s"}, {1, "ns"}};

const Unit& unit_for(double ns) {
  for (const Unit& u : kUnits)
    if (std::fabs(ns) >= u.ns) return u;
  return kUnits[3];
}

}  // namespace

// One rule for every duration a person reads (core/text/format.h).
std::string format_duration(double ns) { return human::duration(ns); }

int64_t tick_step(double min_ns) {
  int64_t step = 1;
  for (;;) {
    for (int m : {1, 2, 5})
      if (double(step) * m >= min_ns) return step * m;
    if (step > INT64_MAX / 100) return step;
    step *= 10;
  }
}

// The unit follows the tick's own size ("2.5 ms", not "2500 µs"); the decimals follow the step.
std::string format_tick(int64_t ns, int64_t step) {
  const Unit& u = unit_for(ns != 0 ? double(std::llabs(ns)) : double(step));
  double v = double(ns) / u.ns;
  int decimals = 0;
  for (double s = double(step) / u.ns; s < 1 && decimals < 6; s *= 10) ++decimals;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, u.name);
  return buf;
}

}  // namespace sl::present

namespace sl::present {
bool parse_time(std::string_view text, double& ns) {
  std::string s(text);
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) return false;
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  double scale = 0;
  if (unit.empty() || unit == "us" || unit == "\xC2\xB5s") scale = 1e3;
  else if (unit == "ns") scale = 1;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "s") scale = 1e9;
  else return false;
  ns = v * scale;
  return true;
}
}  // namespace sl::present
