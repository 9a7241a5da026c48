// Makes a large synthetic trace by tiling a real one in time: every event of the source is
// repeated once per tile with its text unchanged except `ts` (shifted by the tile's offset,
// digits kept exactly) and the numeric `id` / `correlation` (offset per tile so flows and
// launch links stay one-to-one). Metadata events are written once.
//
//   make_synthetic_trace SOURCE.json[.gz] OUT.json --bytes 1000000000
#include <simdjson.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "core/file_reader.h"

namespace {

struct SourceEvent {
  std::string text;
  bool metadata = false;
};

// Rewrites the number after `"key":` (first occurrence) by adding `delta` to its integer part.
void shift_number(std::string& event, const char* key, long long delta, std::string& out) {
  size_t at = event.find(key);
  if (at == std::string::npos || delta == 0) {
    out += event;
    return;
  }
  size_t pos = at + std::strlen(key);
  while (pos < event.size() && (event[pos] == ' ' || event[pos] == ':')) ++pos;
  size_t end = pos;
  while (end < event.size() && (std::isdigit(static_cast<unsigned char>(event[end])) || event[end] == '-')) ++end;
  if (end == pos) {
    out += event;
    return;
  }
  long long value = std::stoll(event.substr(pos, end - pos));
  out.append(event, 0, pos);
  out += std::to_string(value + delta);
  out.append(event, end, std::string::npos);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SOURCE.json[.gz] OUT.json [--bytes N]\n", argv[0]);
    return 2;
  }
  double target = 1e9;
  for (int i = 3; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--bytes") target = std::stod(argv[i + 1]);
  sl::FileBytes source = sl::read_trace_file(argv[1], {});
  if (!source.buffer) {
    std::fprintf(stderr, "%s: %s\n", argv[1], source.error.c_str());
    return 1;
  }
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  simdjson::padded_string_view view(source.buffer->data, source.buffer->size,
                                    source.buffer->capacity + sl::TraceStore::Buffer::kPadding);
  if (parser.iterate(view).get(doc)) return std::fprintf(stderr, "not JSON\n"), 1;
  std::vector<SourceEvent> events;
  std::string other_keys;
  long long min_ts = LLONG_MAX, max_ts = LLONG_MIN;
  simdjson::ondemand::object top;
  if (doc.get_object().get(top)) return std::fprintf(stderr, "need an object with traceEvents\n"), 1;
  for (auto field : top) {
    std::string_view key = field.unescaped_key().value();
    if (key != "traceEvents") {
      std::string_view raw;
      simdjson::ondemand::value v = field.value();
      if (v.type().value() == simdjson::ondemand::json_type::object) raw = v.get_object().value().raw_json().value();
      else if (v.type().value() == simdjson::ondemand::json_type::array) raw = v.get_array().value().raw_json().value();
      else raw = v.raw_json_token();
      other_keys += ",\"" + std::string(key) + "\":" + std::string(raw);
      continue;
    }
    for (auto element : field.value().get_array()) {
      simdjson::ondemand::object e = element.get_object();
      SourceEvent se;
      se.text = std::string(e.raw_json().value());
      while (!se.text.empty() && std::isspace(static_cast<unsigned char>(se.text.back()))) se.text.pop_back();
      se.metadata = se.text.find("\"ph\": \"M\"") != std::string::npos || se.text.find("\"ph\":\"M\"") != std::string::npos;
      size_t ts = se.text.find("\"ts\"");
      if (ts != std::string::npos) {
        size_t p = se.text.find(':', ts) + 1;
        while (se.text[p] == ' ') ++p;
        long long v = std::atoll(se.text.c_str() + p);
        if (!se.metadata) min_ts = std::min(min_ts, v), max_ts = std::max(max_ts, v);
      }
      events.push_back(std::move(se));
    }
  }
  long long span = max_ts - min_ts + 1000;  // µs between tiles
  std::FILE* out = std::fopen(argv[2], "wb");
  if (!out) return std::perror(argv[2]), 1;
  std::string chunk = "{\"traceEvents\":[\n";
  size_t written = 0;
  bool first = true;
  for (long long tile = 0; written < target; ++tile) {
    for (const SourceEvent& e : events) {
      if (e.metadata && tile) continue;
      if (!first) chunk += ",\n";
      first = false;
      std::string a, b;
      shift_number(const_cast<std::string&>(e.text), "\"ts\"", tile * span, a);
      shift_number(a, "\"id\"", tile * 1000000000LL, b);
      a.clear();
      shift_number(b, "\"correlation\"", tile * 1000000000LL, a);
      chunk += a;
      if (chunk.size() > (1 << 24)) {
        written += std::fwrite(chunk.data(), 1, chunk.size(), out);
        chunk.clear();
      }
    }
  }
  chunk += "\n]" + other_keys + "}\n";
  written += std::fwrite(chunk.data(), 1, chunk.size(), out);
  std::fclose(out);
  std::printf("%s: %zu bytes\n", argv[2], written);
  return 0;
}
