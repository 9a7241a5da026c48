#include "core/names/matching_key.h"

namespace sl {

namespace {

constexpr std::string_view kElided = "\u2026";  // …
// Fewer hex digits than this after `0x` are a constant (a template argument such as `0x10`
// names a different kernel), not an address: CPython and allocator addresses have 9 to 12.
constexpr size_t kMinAddressDigits = 5;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_word(char c) { return is_hex(c) || (c >= 'g' && c <= 'z') || (c >= 'G' && c <= 'Z') || c == '_'; }

// Length of the address starting at `at` (`0x` + digits), 0 when there is none there.
size_t address_length(std::string_view s, size_t at) {
  if (at + 2 > s.size() || s[at] != '0' || (s[at + 1] != 'x' && s[at + 1] != 'X')) return 0;
  if (at > 0 && is_word(s[at - 1])) return 0;  // inside a word: `MT0x…` is not an address
  size_t end = at + 2;
  while (end < s.size() && is_hex(s[end])) ++end;
  return end - at - 2 >= kMinAddressDigits ? end - at : 0;
}

// Where the digits of a Python frame's line number start (`file.py(` DIGITS `): `), npos if none.
size_t python_line_digits(std::string_view s) {
  for (size_t open = s.find('('); open != std::string_view::npos; open = s.find('(', open + 1)) {
    size_t end = open + 1;
    while (end < s.size() && is_digit(s[end])) ++end;
    if (end > open + 1 && s.substr(end).starts_with("): ") && open > 0) return open + 1;
  }
  return std::string_view::npos;
}

}  // namespace

bool has_address(std::string_view name) {
  for (size_t i = name.find('0'); i != std::string_view::npos; i = name.find('0', i + 1))
    if (address_length(name, i)) return true;
  return false;
}

std::string matching_key(std::string_view name) {
  if (name.starts_with("ProfilerStep#")) return "ProfilerStep#*";
  std::string out;
  out.reserve(name.size());
  size_t line = python_line_digits(name);
  for (size_t i = 0; i < name.size();) {
    if (i == line) {  // the line number goes, the file and the function stay
      out += kElided;
      while (i < name.size() && is_digit(name[i])) ++i;
      continue;
    }
    if (size_t n = address_length(name, i)) {
      out += "0x";
      out += kElided;
      i += n;
      continue;
    }
    out += name[i++];
  }
  return out;
}

std::string runtime_call_key(std::string_view name) {
  for (std::string_view prefix : {"cuda", "hip", "cu"})
    if (name.size() > prefix.size() && name.starts_with(prefix) && name[prefix.size()] >= 'A' &&
        name[prefix.size()] <= 'Z')
      return std::string(name.substr(prefix.size()));
  return std::string(name);
}

}  // namespace sl
