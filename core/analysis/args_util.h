// Cheap lookups of one top-level numeric arg in an args object's JSON text, without decoding the
// whole object: the analyses need a handful of keys (stream, bytes, bandwidth) on many events.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sl::analysis {

// The value of `"key": <number>` in `json`; nullopt when absent or not a number.
std::optional<double> find_number_arg(std::string_view json, std::string_view key);
// Same, only for integer values (a decimal point or exponent gives nullopt).
std::optional<int64_t> find_int_arg(std::string_view json, std::string_view key);

}  // namespace sl::analysis
