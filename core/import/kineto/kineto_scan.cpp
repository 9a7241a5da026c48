// The Chrome/Kineto JSON loader's top-level scanner: the object around traceEvents, its other
// keys, strings and skipped values, guessed chunk boundaries, and (HTA) the rank found in the text.
#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "core/import/kineto/json_repair.h"
#include "core/import/kineto/kineto_loader_class.h"

namespace sl::kineto_detail {
namespace {

// The first `key` (at least 5 bytes) in [at, end), or null. Files without the key are scanned
// whole, so with AVX2 it tests 32 positions at once for key[1] and key[4] (for `"rank":`, an `r`
// and a `k` three bytes apart: rare in JSON, where a test of the quotes or the colon would stop
// at every key) and compares the rest only there; memmem (~1.5 GB/s here) does the remainder.
const char* find_key(const char* at, const char* end, std::string_view key) {
#if defined(__AVX2__)
  const __m256i second = _mm256_set1_epi8(key[1]), fifth = _mm256_set1_epi8(key[4]);
  for (; end - at >= ptrdiff_t(32 + key.size()); at += 32) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 1));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 4));
    auto mask = uint32_t(_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(a, second), _mm256_cmpeq_epi8(b, fifth))));
    for (; mask; mask &= mask - 1) {
      const char* candidate = at + __builtin_ctz(mask);
      if (std::memcmp(candidate, key.data(), key.size()) == 0) return candidate;
    }
  }
#endif
  return static_cast<const char*>(::memmem(at, size_t(end - at), key.data(), key.size()));
}

// (HTA) HTA reads the rank with a regex over the whole file: `"rank":`, at least one whitespace,
// digits; the first match anywhere (top-level key or event args) wins.
std::optional<int64_t> hta_rank_in_text(std::string_view text) {
  constexpr std::string_view key = "\"rank\":";
  auto isspace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  auto isdigit = [](char c) { return c >= '0' && c <= '9'; };
  for (const char* at = text.data(), *end = text.data() + text.size();;) {
    const char* hit = find_key(at, end, key);
    if (!hit) return std::nullopt;
    const char* p = hit + key.size();
    at = hit + 1;
    const char* digits = p;
    while (digits < end && isspace(*digits)) ++digits;
    if (digits == p || digits == end || !isdigit(*digits)) continue;
    int64_t v = 0;
    for (; digits < end && isdigit(*digits); ++digits)
      // HTA's Python takes any number; one past int64 is no rank a store can hold: none, as if
      // the file named none (found by fuzzing: the product overflowed).
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *digits - '0', &v)) return std::nullopt;
    return v;
  }
}

}  // namespace

// (HTA) Scans bytes in file order, before they are released, for HTA's rank regex.
void KinetoLoader::scan_rank(size_t from, size_t to) {
  if (!want_rank_ || rank_ || to <= from) return;
  if (earlier_rank_ && earlier_rank_->load(std::memory_order_relaxed)) return;  // ours would not count
  rank_ = hta_rank_in_text({d_ + from, to - from});
  if (rank_) rank_found_.store(true, std::memory_order_relaxed);
}

// ---------------------------------------------------------------- top level

size_t KinetoLoader::skip_ws(size_t pos) {
  while (have(pos) && is_ws(d_[pos])) ++pos;
  return pos;
}

// `pos` is at an opening quote; `end` becomes the position after the closing one.
bool KinetoLoader::scan_string(size_t pos, size_t& end) {
  for (size_t i = pos + 1; have(i);) {
    const void* hit = std::memchr(d_ + i, '"', n_ - i);
    if (!hit) {
      i = n_;  // on in what the stream has added since, if anything
      continue;
    }
    size_t quote = static_cast<const char*>(hit) - d_;
    size_t backslashes = 0;
    while (quote - backslashes > pos + 1 && d_[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) {
      end = quote + 1;
      return true;
    }
    i = quote + 1;
  }
  return false;
}

bool KinetoLoader::skip_value(size_t pos, size_t& end) {
  char c = d_[pos];
  if (c == '"') return scan_string(pos, end) || fail("unexpected end of file inside a string", n_);
  if (c != '{' && c != '[') {
    end = pos;
    while (have(end) && !is_ws(d_[end]) && d_[end] != ',' && d_[end] != '}' && d_[end] != ']') ++end;
    return end > pos || fail(std::string("unexpected character '") + c + "'", pos);
  }
  int depth = 0;
  for (size_t i = pos; have(i);) {
    c = d_[i];
    if (c == '"') {
      if (!scan_string(i, i)) return fail("unexpected end of file inside a string", n_);
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) {
      end = i + 1;
      return true;
    }
    ++i;
  }
  return fail("unexpected end of file: a bracket is not closed", n_);
}

bool KinetoLoader::parse_top_level() {
  size_t pos = skip_ws(0);
  if (have(pos + 2) && std::memcmp(d_ + pos, "\xEF\xBB\xBF", 3) == 0) pos = skip_ws(pos + 3);
  if (!have(pos)) return fail("empty file: expected a JSON object with \"traceEvents\" or an array of events", pos);
  if (d_[pos] == '[') {
    size_t after = 0;
    if (!parse_events(pos, after)) return false;
    pos = skip_ws(after);
    return !have(pos) || fail("unexpected data after the array of events", pos);
  }
  if (d_[pos] != '{')
    return fail("not a trace: expected a JSON object with \"traceEvents\" or an array of events", pos);
  pos = skip_ws(pos + 1);
  while (have(pos) && d_[pos] != '}') {
    size_t key_start = pos, key_end = 0;
    if (d_[pos] != '"') return fail("expected a key in the top-level object", pos);
    if (!scan_string(pos, key_end)) return fail("unexpected end of file inside a key", n_);
    std::string_view key(d_ + pos + 1, key_end - pos - 2);
    pos = skip_ws(key_end);
    if (!have(pos) || d_[pos] != ':') return fail("expected ':' after the key \"" + std::string(key) + "\"", pos);
    pos = skip_ws(pos + 1);
    if (!have(pos)) return fail("unexpected end of file: the key \"" + std::string(key) + "\" has no value", n_);
    size_t end = 0;
    if (key == "traceEvents") {
      if (d_[pos] != '[') return fail("\"traceEvents\" is not an array", pos);
      saw_trace_events_ = true;
      if (!parse_events(pos, end)) return false;
    } else {
      if (!skip_value(pos, end)) return false;
      handle_top_level(key, std::string_view(d_ + pos, end - pos));
      scan_rank(key_start, end);
    }
    pos = skip_ws(end);
    if (have(pos) && d_[pos] == ',') {
      size_t comma = pos;
      pos = skip_ws(pos + 1);
      if (have(pos) && d_[pos] == '}') store_->issues.add(IssueKind::TrailingComma, comma);  // accepted, as viewers do
    } else if (have(pos) && d_[pos] != '}') {
      return fail("expected ',' or '}' in the top-level object", pos);
    }
  }
  if (!have(pos)) return fail("unexpected end of file: the top-level object is not closed", n_);
  pos = skip_ws(pos + 1);
  if (have(pos)) return fail("unexpected data after the top-level object", pos);
  if (!saw_trace_events_) return fail("no \"traceEvents\" array: this is not a Chrome/Kineto trace", 0);
  return true;
}

// Finds a likely boundary between two events at or after `from`: the comma in `}` ws `,` ws `{`
// (with `need_space`, only where whitespace follows the comma).
size_t KinetoLoader::find_boundary(size_t from, bool need_space) {
  for (size_t i = from; have(i + 1);) {
    const void* hit = std::memchr(d_ + i, '}', n_ - i);
    if (!hit) {
      i = n_;
      continue;
    }
    size_t brace = static_cast<const char*>(hit) - d_;
    size_t comma = skip_ws(brace + 1);
    if (have(comma) && d_[comma] == ',') {
      size_t next = skip_ws(comma + 1);
      if (have(next) && d_[next] == '{' && (!need_space || next > comma + 1) && starts_event(next)) return comma;
    }
    i = brace + 1;
  }
  return std::string_view::npos;
}

// Whether the object at `brace` opens with a key events have: nested objects in args rarely do.
bool KinetoLoader::starts_event(size_t brace) {
  size_t quote = skip_ws(brace + 1);
  if (!have(quote) || d_[quote] != '"') return false;
  size_t end = quote + 1;
  while (have(end) && end - quote <= 6 && d_[end] != '"') ++end;
  std::string_view key(d_ + quote + 1, end - quote - 1);
  for (std::string_view k : {"ph", "name", "cat", "pid", "tid", "ts", "dur", "args", "id", "bp", "s"})
    if (key == k) return have(end);
  return false;
}

// A split point for two threads: near the middle, and with whitespace after the comma so the
// `]` of the first half and the `[` of the second are written to different bytes.
size_t KinetoLoader::find_split(size_t from) {
  size_t split = find_boundary(from, true);
  return split != std::string_view::npos && split < from + (16u << 20) ? split : std::string_view::npos;
}

void KinetoLoader::handle_top_level(std::string_view key, std::string_view value) {
  store_->meta.top_level.emplace_back(std::string(key), std::string(value));
  bool devices = key == "deviceProperties" || (key == "computeProperties" && devices_key_.empty());
  if (!devices && key != "distributedInfo" && key != "displayTimeUnit") return;
  simdjson::dom::parser parser;
  simdjson::padded_string text(value);
  simdjson::dom::element root;
  if (parser.parse(text).get(root)) {
    // Trailing commas (`"deviceProperties": [{...},]`) are forgiven here too, and counted; a
    // value broken otherwise is kept as raw text above, with nothing else to learn from it.
    JsonRepair plan = plan_json_repair(value);
    if (plan.trailing_commas.empty() || plan.truncated || !plan.error.empty()) return;
    std::string fixed(value);
    for (uint64_t comma : plan.trailing_commas) {
      fixed[comma] = ' ';
      store_->issues.add(IssueKind::TrailingComma, uint64_t(value.data() - d_) + comma);
    }
    text = simdjson::padded_string(fixed);
    if (parser.parse(text).get(root)) return;
  }
  TraceMeta& meta = store_->meta;
  if (devices) {
    devices_key_ = std::string(key);
    meta.devices.clear();
    simdjson::dom::array list;
    if (root.get_array().get(list)) return;
    for (simdjson::dom::element item : list) {
      Device device;
      int64_t id = 0;
      std::string_view name;
      if (!item["id"].get_int64().get(id)) device.id = id;
      if (!item["name"].get_string().get(name)) device.name = std::string(name);
      device.properties_json = simdjson::minify(item);
      meta.devices.push_back(std::move(device));
    }
  } else if (key == "distributedInfo") {
    int64_t number = 0;
    std::string_view backend;
    if (!root["rank"].get_int64().get(number)) meta.rank = number;
    if (!root["world_size"].get_int64().get(number)) meta.world_size = number;
    if (!root["backend"].get_string().get(backend)) meta.backend = std::string(backend);
  } else {
    std::string_view unit;
    if (!root.get_string().get(unit)) meta.display_time_unit = std::string(unit);
  }
}

}  // namespace sl::kineto_detail
