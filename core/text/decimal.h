// Exact conversion of JSON number text to integers: timestamps are decimal microseconds that
// must become int64 nanoseconds without passing through a double (which quantises epoch-scale
// values to 256 ns).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sl {

enum class NumberStatus { Ok, NotANumber, OutOfRange };

// `token` is JSON number text (trailing whitespace allowed) in microseconds. Digits beyond the
// nanosecond are rounded half away from zero.
NumberStatus micros_to_nanos(std::string_view token, int64_t& nanos);

// A JSON integer (no fraction or exponent) that fits in int64.
std::optional<int64_t> parse_int64(std::string_view token);

}  // namespace sl
