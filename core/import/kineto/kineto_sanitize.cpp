// The Chrome/Kineto JSON loader's byte-level repair of a chunk that simdjson refuses: invalid UTF-8
// and raw control characters inside strings are overwritten in place, each counted as an issue.
#include <cstddef>
#include <cstdint>

#include "core/import/kineto/kineto_loader_class.h"
#include "core/store/import_issues.h"

namespace sl::kineto_detail {

// Replaces what simdjson refuses inside strings, keeping every byte offset: invalid UTF-8
// bytes become '?', raw control characters inside strings become ' '.
bool sanitize(char* begin, size_t length, uint64_t base_offset, ImportIssues& issues) {
  bool changed = false, in_string = false;
  auto* p = reinterpret_cast<unsigned char*>(begin);
  for (size_t i = 0; i < length;) {
    unsigned char c = p[i];
    if (c < 0x80) {
      if (in_string && c == '\\') {
        i += 2;
        continue;
      }
      if (c == '"') in_string = !in_string;
      else if (in_string && c < 0x20) {
        p[i] = ' ';
        issues.add(IssueKind::ControlCharacter, base_offset + i);
        changed = true;
      }
      ++i;
      continue;
    }
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    bool valid = n && i + n <= length;
    for (size_t k = 1; valid && k < n; ++k) valid = (p[i + k] & 0xC0) == 0x80;
    if (valid && n == 3) {
      unsigned cp = (c & 0x0F) << 12 | (p[i + 1] & 0x3F) << 6;
      valid = cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (valid && n == 4) {
      unsigned cp = (c & 0x07) << 18 | (p[i + 1] & 0x3F) << 12;
      valid = cp >= 0x10000 && cp <= 0x10FFFF;
    }
    if (valid) {
      i += n;
      continue;
    }
    p[i] = '?';
    issues.add(IssueKind::InvalidUtf8, base_offset + i);
    changed = true;
    ++i;
  }
  return changed;
}

}  // namespace sl::kineto_detail
