#include "core/text/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sl::human {
namespace {

struct Unit {
  double ns;
  const char* name;
};
constexpr Unit kUnits[] = {{1, "ns"}, {1e3, "\xC2\xB5s"}, {1e6, "ms"}, {1e9, "s"}};
constexpr int kUnitCount = 4;

// `v` rounded to three significant digits.
double round3(double v) {
  if (v == 0) return 0;
  double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

// `sign` then `digits` with a comma every three digits from the right: ("-", "1234567") →
// "-1,234,567". Built by appending (GCC 12 warns, wrongly, on std::string::insert here).
std::string group_thousands(std::string_view sign, std::string_view digits) {
  std::string out(sign);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// `v` with `decimals` decimals, trailing zeros (and a trailing point) dropped; "-0" is "0".
std::string fixed_trimmed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

}  // namespace

std::string duration(double ns) {
  if (ns == 0 || !std::isfinite(ns)) return ns == 0 ? "0" : "n/a";
  const char* sign = ns < 0 ? "-" : "";
  double abs_ns = std::fabs(ns);
  if (abs_ns < 999.5 && ns == std::floor(ns)) return duration(int64_t(ns));  // whole ns: exact
  // The largest unit the value reaches, after rounding (999.6 µs is "1.00 ms", not "1000 µs").
  int u = 0;
  while (u + 1 < kUnitCount && round3(abs_ns / kUnits[u + 1].ns) >= 1) ++u;
  double exact = abs_ns / kUnits[u].ns, v = round3(exact);
  if (v >= 1000) return group_thousands(sign, std::to_string(std::llround(exact))) + " " + kUnits[u].name;
  int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%.*f %s", sign, decimals, v, kUnits[u].name);
  return buf;
}

std::string duration(int64_t ns) {
  if (ns != 0 && std::llabs(ns) < 1000) return std::to_string(ns) + " ns";  // exact
  return duration(double(ns));
}

std::string percent(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f%%", pct);
  return std::string(buf) == "-0.0%" ? "0.0%" : buf;
}

std::string count(int64_t n) {
  uint64_t magnitude = n < 0 ? uint64_t(-(n + 1)) + 1 : uint64_t(n);
  return group_thousands(n < 0 ? "-" : "", std::to_string(magnitude));
}

std::string bytes(int64_t n) {
  uint64_t magnitude = n < 0 ? uint64_t(-(n + 1)) + 1 : uint64_t(n);
  const char* sign = n < 0 ? "-" : "";
  char buf[48];
  if (magnitude < 1024) {
    std::snprintf(buf, sizeof buf, "%s%llu B", sign, (unsigned long long)magnitude);
    return buf;
  }
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(magnitude) / 1024.0;
  int unit = 0;
  // Rounding to three digits may carry into the next unit (1023.9 KiB prints as 1.00 MiB).
  while (unit < 5 && v >= 999.5) v /= 1024.0, ++unit;
  std::snprintf(buf, sizeof buf, "%s%.*f %s", sign, v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2, v, units[unit]);
  return buf;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  double a = std::fabs(v);
  if (a >= 999.5) return group_thousands(v < 0 ? "-" : "", std::to_string(std::llround(a)));
  if (a < 0.0001) return v < 0 ? "-<0.0001" : "<0.0001";
  return fixed_trimmed(v, std::max(0, 3 - int(std::floor(std::log10(a)))));
}

std::string decimal(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  double a = std::fabs(v);
  if (a >= 999.5) return number(v);
  if (a < 0.0005) return v < 0 ? "-<0.001" : "<0.001";
  return fixed_trimmed(v, std::min(3, std::max(0, 2 - int(std::floor(std::log10(a))))));
}

std::string bandwidth(double bytes_per_second) {
  if (!std::isfinite(bytes_per_second)) return "n/a";
  if (bytes_per_second == 0) return "0 B/s";
  static const char* units[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
  const char* sign = bytes_per_second < 0 ? "-" : "";
  double v = std::fabs(bytes_per_second);
  int unit = 0;
  while (unit < 5 && round3(v) >= 1000) v /= 1000, ++unit;
  v = round3(v);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%.*f %s", sign, unit == 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2, v, units[unit]);
  return buf;
}

}  // namespace sl::human
