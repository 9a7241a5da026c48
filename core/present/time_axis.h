// Time formatting and ruler ticks for views and figures: readable units, nothing GUI-specific.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sl::present {

// "850 ns", "12.4 µs", "3.25 ms", "1.200 s": three significant digits, unit chosen by size.
std::string format_duration(double ns);
// A tick step of 1, 2 or 5 × 10^k ns, the smallest at least `min_ns` apart.
int64_t tick_step(double min_ns);
// Label for a tick at `ns` when ticks are `step` apart: only as many decimals as the step needs.
std::string format_tick(int64_t ns, int64_t step);

}  // namespace sl::present

namespace sl::present {
// "12.5ms", "3s", "850us", "40ns" or raw µs ("1500") → ns; false when it is not a time.
bool parse_time(std::string_view text, double& ns);
}  // namespace sl::present
