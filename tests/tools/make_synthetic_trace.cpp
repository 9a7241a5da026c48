// Makes a large synthetic trace by tiling a real one in time: every event of the source is
// repeated once per tile with its text unchanged except `ts` (shifted by the tile's offset,
// digits kept exactly) and the numeric `id` / `correlation` (offset per tile so flows and
// launch links stay one-to-one). Metadata events are written once.
//
//   make_synthetic_trace SOURCE.json[.gz] OUT.json --bytes 1000000000
//   make_synthetic_trace SOURCE.json[.gz] OUT.json.gz --bytes 10000000000 [--gzip-level 1]
//
// An OUT ending in `.gz` is written as a multi-member gzip, one member per 4 MB of JSON (as
// bgzip and `pigz --independent` write them), each with its compressed size in the header, so
// the loader decompresses the two halves on two threads beside the parse; `--bytes` counts the
// JSON, not the compressed file.
#include <libdeflate.h>
#include <simdjson.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/import/common/file_reader.h"
#include "core/import/common/gzip_stream.h"
#include "core/text/decimal.h"

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

// Writes the JSON as it is made: plain, or as gzip members of kMemberBytes of JSON each.
class Output {
public:
  static constexpr size_t kMemberBytes = 4 << 20;
  Output(std::FILE* file, int gzip_level) : file_(file) {
    if (gzip_level >= 0) compressor_ = libdeflate_alloc_compressor(gzip_level);
  }
  ~Output() {
    if (compressor_) libdeflate_free_compressor(compressor_);
  }
  // Writes `text` (all of it when `last`; otherwise whole members only, keeping the rest) and
  // returns the JSON bytes written.
  size_t write(std::string& text, bool last) {
    if (!compressor_) {
      size_t n = std::fwrite(text.data(), 1, text.size(), file_);
      text.clear();
      return n;
    }
    size_t at = 0;
    for (; text.size() - at >= kMemberBytes || (last && at < text.size()); at += member_size(text, at))
      write_member(std::string_view(text).substr(at, member_size(text, at)));
    text.erase(0, at);
    return at;
  }

private:
  static size_t member_size(const std::string& text, size_t at) { return std::min(kMemberBytes, text.size() - at); }
  // A gzip member whose header carries its compressed size (core/import/common/gzip_stream.h, subfield "Sl"),
  // so that the loader can split the file between two decompressing threads.
  void write_member(std::string_view json) {
    compressed_.resize(libdeflate_deflate_compress_bound(compressor_, json.size()));
    size_t n = libdeflate_deflate_compress(compressor_, json.data(), json.size(), compressed_.data(), compressed_.size());
    uint32_t trailer[2] = {libdeflate_crc32(0, json.data(), json.size()), uint32_t(json.size())};
    std::string header = sl::gzip_header_with_size(uint32_t(sl::kGzipHeaderWithSize + n + sizeof trailer));
    std::fwrite(header.data(), 1, header.size(), file_);
    std::fwrite(compressed_.data(), 1, n, file_);
    std::fwrite(trailer, 1, sizeof trailer, file_);
  }
  std::FILE* file_;
  libdeflate_compressor* compressor_ = nullptr;
  std::string compressed_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s SOURCE.json[.gz] OUT.json [--bytes N]\n", argv[0]);
    return 2;
  }
  double target = 1e9;
  int gzip_level = 6;
  for (int i = 3; i + 1 < argc; ++i) {
    if (std::string(argv[i]) == "--bytes") target = std::stod(argv[i + 1]);
    if (std::string(argv[i]) == "--gzip-level") gzip_level = std::stoi(argv[i + 1]);
  }
  bool gzip = std::string_view(argv[2]).ends_with(".gz");
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
  Output output(out, gzip ? gzip_level : -1);
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
      if (chunk.size() > (1 << 24)) written += output.write(chunk, false);
    }
  }
  chunk += "\n]" + other_keys + "}\n";
  written += output.write(chunk, true);
  if (std::fclose(out) != 0) return std::perror(argv[2]), 1;
  std::printf("%s: %zu bytes of JSON\n", argv[2], written);
  return 0;
}
