#include "core/analysis/args_util.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <string>
#include <string.h>

namespace sl::analysis {

namespace {

// Position just after `"key"` followed by optional spaces and a colon, or npos.
size_t value_pos(std::string_view json, std::string_view key) {
  size_t pos = 0;
  while (true) {
    // memmem is far faster than string_view::find on the long args of CPU ops.
    const void* hit = pos <= json.size() ? memmem(json.data() + pos, json.size() - pos, key.data(), key.size()) : nullptr;
    if (!hit) return std::string_view::npos;
    pos = size_t(static_cast<const char*>(hit) - json.data());
    size_t end = pos + key.size();
    bool quoted = pos > 0 && json[pos - 1] == '"' && end < json.size() && json[end] == '"';
    if (quoted) {
      size_t i = end + 1;
      while (i < json.size() && std::isspace(static_cast<unsigned char>(json[i]))) ++i;
      if (i < json.size() && json[i] == ':') {
        ++i;
        while (i < json.size() && std::isspace(static_cast<unsigned char>(json[i]))) ++i;
        return i;
      }
    }
    pos = end;
  }
}

}  // namespace

std::optional<int64_t> find_int_arg(std::string_view json, std::string_view key) {
  size_t i = value_pos(json, key);
  if (i == std::string_view::npos) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(json.data() + i, json.data() + json.size(), v);
  if (ec != std::errc()) return std::nullopt;
  size_t next = size_t(p - json.data());
  if (next < json.size() && (json[next] == '.' || json[next] == 'e' || json[next] == 'E')) return std::nullopt;
  return v;
}

std::optional<double> find_number_arg(std::string_view json, std::string_view key) {
  size_t i = value_pos(json, key);
  if (i == std::string_view::npos) return std::nullopt;
  size_t j = i;
  while (j < json.size() && (std::isdigit(static_cast<unsigned char>(json[j])) || json[j] == '-' ||
                             json[j] == '+' || json[j] == '.' || json[j] == 'e' || json[j] == 'E'))
    ++j;
  if (j == i) return std::nullopt;
  std::string text(json.substr(i, j - i));
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return std::nullopt;
  return v;
}

}  // namespace sl::analysis
