#include "core/text/decimal.h"

namespace sl {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

// The common case, `123456789012345` or `123456.789` with at most 3 decimals, without 128-bit
// arithmetic; anything else takes the general path below.
static bool plain_micros(std::string_view s, int64_t& nanos) {
  size_t i = 0, n = s.size();
  bool negative = n && s[0] == '-';
  i += negative;
  uint64_t whole = 0;
  size_t digits = 0;
  for (; i < n && is_digit(s[i]); ++i, ++digits) whole = whole * 10 + uint64_t(s[i] - '0');
  if (digits == 0 || digits > 15) return false;
  uint64_t frac = 0;
  size_t frac_digits = 0;
  if (i < n && s[i] == '.') {
    for (++i; i < n && is_digit(s[i]) && frac_digits < 3; ++i, ++frac_digits) frac = frac * 10 + uint64_t(s[i] - '0');
    if (frac_digits == 0) return false;
  }
  if (i != n) return false;  // more decimals or an exponent: general path
  static constexpr uint64_t scale[] = {1000, 100, 10, 1};
  uint64_t value = whole * 1000 + frac * scale[frac_digits];
  nanos = negative ? -int64_t(value) : int64_t(value);
  return true;
}

NumberStatus micros_to_nanos(std::string_view token, int64_t& nanos) {
  std::string_view s = trim_right(token);
  if (plain_micros(s, nanos)) return NumberStatus::Ok;
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && s[i] == '-') negative = true, ++i;
  // Mantissa digits, at most 36 significant ones (far past nanosecond precision at any scale
  // that fits int64); further integer digits only raise the exponent.
  __int128 mantissa = 0;
  int significant = 0, exponent = 3;  // value = mantissa * 10^exponent ns
  bool any_digit = false;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    any_digit = true;
    if (significant < 36) {
      mantissa = mantissa * 10 + (s[i] - '0');
      if (mantissa) ++significant;
    } else {
      ++exponent;
    }
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && is_digit(s[i]); ++i) {
      any_digit = true;
      if (significant < 36) {
        mantissa = mantissa * 10 + (s[i] - '0');
        if (mantissa) ++significant;
        --exponent;
      }
    }
  }
  if (!any_digit) return NumberStatus::NotANumber;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) exp_negative = s[i] == '-', ++i;
    if (i >= s.size() || !is_digit(s[i])) return NumberStatus::NotANumber;
    int e = 0;
    for (; i < s.size() && is_digit(s[i]); ++i) e = e < 100000 ? e * 10 + (s[i] - '0') : e;
    exponent += exp_negative ? -e : e;
  }
  if (i != s.size()) return NumberStatus::NotANumber;
  constexpr __int128 kMax = INT64_MAX;
  if (mantissa == 0) {
    nanos = 0;
    return NumberStatus::Ok;
  }
  for (; exponent > 0; --exponent) {
    mantissa *= 10;
    if (mantissa > kMax) return NumberStatus::OutOfRange;
  }
  for (; exponent < 0 && mantissa != 0; ++exponent) {
    __int128 quotient = mantissa / 10, remainder = mantissa % 10;
    mantissa = exponent == -1 && remainder >= 5 ? quotient + 1 : quotient;
  }
  if (mantissa > kMax) return NumberStatus::OutOfRange;
  nanos = static_cast<int64_t>(negative ? -mantissa : mantissa);
  return NumberStatus::Ok;
}

std::optional<int64_t> parse_int64(std::string_view token) {
  std::string_view s = trim_right(token);
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && s[i] == '-') negative = true, ++i;
  if (i >= s.size()) return std::nullopt;
  __int128 value = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return std::nullopt;
    value = value * 10 + (s[i] - '0');
    if (value > static_cast<__int128>(INT64_MAX) + 1) return std::nullopt;
  }
  if (negative) value = -value;
  if (value > INT64_MAX || value < INT64_MIN) return std::nullopt;
  return static_cast<int64_t>(value);
}

}  // namespace sl
