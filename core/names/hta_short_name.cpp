// HTA's shorten_name, character for character (core/names/hta_short_name.h).
#include "core/names/hta_short_name.h"

namespace sl {

std::string hta_short_name(std::string_view name) {
  if (name.find('<') == std::string_view::npos && name.find('(') == std::string_view::npos) return std::string(name);
  if (name.starts_with("Memcpy") || name.starts_with("Memset")) return std::string(name);
  // A stack of kept characters: a closing bracket pops back to its opener (and the opener).
  std::string kept;
  kept.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '-' && i + 1 < name.size() && name[i + 1] == '>') {
      ++i;
      continue;
    }
    if (c == '>' || c == ')') {
      char open = c == '>' ? '<' : '(';
      while (!kept.empty() && kept.back() != open) kept.pop_back();
      if (!kept.empty()) kept.pop_back();
    } else {
      kept.push_back(c);
    }
  }
  size_t space = kept.rfind(' ');
  return space == std::string::npos ? kept : kept.substr(space + 1);
}

}  // namespace sl
