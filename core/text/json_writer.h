// A minimal streaming JSON writer for CLI output: correct escaping, no intermediate DOM.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sl {

class JsonWriter {
public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v);
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int v) { return value(int64_t(v)); }
  JsonWriter& value(unsigned v) { return value(uint64_t(v)); }
  JsonWriter& value(double v);  // shortest round-trip text; NaN/inf become null
  JsonWriter& value(bool v);
  JsonWriter& null();
  JsonWriter& raw(std::string_view json);  // already-valid JSON text
  // Nanoseconds as microseconds with exactly 3 decimals: exact, no floating point.
  JsonWriter& micros(int64_t nanos);
  template <class T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  const std::string& str() const { return out_; }

private:
  void separate();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

void append_json_string(std::string& out, std::string_view s);
std::string format_micros(int64_t nanos);  // "123.456"

}  // namespace sl
