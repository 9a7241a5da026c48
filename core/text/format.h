// Numbers for people: what text tables, tooltips and views print. Machine outputs (JSON, CSV) keep
// full precision and never go through here.
#pragma once

#include <cstdint>
#include <string>

namespace sl::human {

// A duration in the unit that fits, three significant digits: "840 ns", "12.4 µs", "1.62 ms",
// "3.20 s"; from 1000 s on, whole seconds with separators ("1,234 s"). Integer nanoseconds below
// 1 µs are exact. Zero is "0"; negative durations (diff deltas) keep their sign.
std::string duration(double ns);
std::string duration(int64_t ns);
// A percentage with one decimal: "12.3%", "100.0%", "0.0%".
std::string percent(double pct);
// A count with thousands separators: "1,234,567".
std::string count(int64_t n);
// A plain number: from 1000 on rounded to an integer with separators ("313,269"); below, four
// significant digits with trailing zeros dropped ("2.333", "0.9994", "12.5"); below 0.0001
// (nonzero) "<0.0001".
std::string number(double v);
// A plain number in a text table: as number() from 1000 on; below, three significant digits and
// never more than three decimals ("2.33", "0.664", "0.027"); below 0.001 (nonzero) "<0.001".
std::string decimal(double v);
// A rate of bytes per second in the decimal unit that fits, three significant digits:
// "537 GB/s", "2.27 MB/s", "616 KB/s", "12 B/s".
std::string bandwidth(double bytes_per_second);
// Bytes in the binary unit that fits, three significant digits: "512 B", "1.50 KiB", "12.3 MiB",
// "1.62 GiB", "2.00 TiB"; below 1 KiB exact. Negative sizes (deltas) keep their sign.
std::string bytes(int64_t n);

}  // namespace sl::human
