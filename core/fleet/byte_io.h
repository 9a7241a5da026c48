// Little-endian byte writing and bounds-checked reading for the fleet formats. The reader never
// reads past its bytes: a short or damaged input sets an error naming what was being read and
// the byte offset, and every later read returns zeros, so a parser checks once at the end.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace sl::fleet {

// a + b in unsigned arithmetic: deltas read from a damaged file wrap instead of overflowing.
inline int64_t wrapping_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }

class ByteWriter {
public:
  std::string bytes;

  template <class T>
  void pod(T v) {
    char b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    bytes.append(b, sizeof(T));
  }
  void u8(uint8_t v) { pod(v); }
  void u32(uint32_t v) { pod(v); }
  void u64(uint64_t v) { pod(v); }
  void i64(int64_t v) { pod(v); }
  void f64(double v) { pod(v); }
  // Unsigned LEB128; signed values zig-zag first, so small deltas of either sign stay short.
  void varint(uint64_t v) {
    while (v >= 0x80) bytes.push_back(char(uint8_t(v) | 0x80)), v >>= 7;
    bytes.push_back(char(v));
  }
  void svarint(int64_t v) { varint((uint64_t(v) << 1) ^ uint64_t(v >> 63)); }
  void str(std::string_view s) {
    varint(s.size());
    bytes.append(s);
  }
};

class ByteReader {
public:
  ByteReader(std::string_view bytes, uint64_t base_offset = 0) : bytes_(bytes), base_(base_offset) {}

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  uint64_t offset() const { return base_ + at_; }
  bool at_end() const { return at_ == bytes_.size(); }
  size_t left() const { return bytes_.size() - at_; }

  void fail(std::string_view what) {
    if (error_.empty()) error_ = std::string(what) + " at byte " + std::to_string(offset());
    at_ = bytes_.size();
  }

  template <class T>
  T pod(std::string_view what) {
    T v{};
    if (!ok() || left() < sizeof(T)) {
      fail(std::string(what) + ": cut short");
      return v;
    }
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }
  uint8_t u8(std::string_view what) { return pod<uint8_t>(what); }
  uint32_t u32(std::string_view what) { return pod<uint32_t>(what); }
  uint64_t u64(std::string_view what) { return pod<uint64_t>(what); }
  int64_t i64(std::string_view what) { return pod<int64_t>(what); }
  double f64(std::string_view what) { return pod<double>(what); }
  uint64_t varint(std::string_view what) {
    // Fast path, inlined: a whole varint is certainly there (at most 10 bytes), so no bound per
    // byte; anything else (near the end, malformed, after an error) out of line.
    if (left() >= 10 && error_.empty()) [[likely]] {
      const auto* p = reinterpret_cast<const uint8_t*>(bytes_.data() + at_);
      uint64_t v = p[0];
      if (!(v & 0x80)) return ++at_, v;
      v &= 0x7f;
      for (int i = 1; i < 10; ++i) {
        v |= uint64_t(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
          at_ += size_t(i) + 1;
          return v;
        }
      }
    }
    return varint_slow(what);
  }
  int64_t svarint(std::string_view what) {
    uint64_t z = varint(what);
    return int64_t(z >> 1) ^ -int64_t(z & 1);
  }
  std::string_view bytes(size_t n, std::string_view what) {
    if (!ok() || left() < n) return fail(std::string(what) + ": cut short"), std::string_view();
    std::string_view v = bytes_.substr(at_, n);
    at_ += n;
    return v;
  }
  std::string str(std::string_view what) { return std::string(bytes(size_t(varint(what)), what)); }
  // A count of items of at least `min_item_bytes` each: one the remaining bytes cannot hold is
  // damage (never an allocation of that size).
  size_t count(std::string_view what, size_t min_item_bytes = 1) {
    uint64_t n = varint(what);
    if (ok() && n > left() / (min_item_bytes ? min_item_bytes : 1)) fail(std::string(what) + ": count " + std::to_string(n) + " exceeds the bytes left");
    return ok() ? size_t(n) : 0;
  }

private:
  [[gnu::noinline]] uint64_t varint_slow(std::string_view what) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (!ok() || at_ >= bytes_.size()) return fail(std::string(what) + ": cut short"), 0;
      uint8_t b = uint8_t(bytes_[at_++]);
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail(std::string(what) + ": malformed number");
    return 0;
  }
  std::string_view bytes_;
  uint64_t base_ = 0;
  size_t at_ = 0;
  std::string error_;
};

}  // namespace sl::fleet
