#include "core/store/string_pool.h"

#include <cstring>

namespace sl {
namespace {
constexpr size_t kBlockBytes = 1 << 20;

inline uint64_t mix(uint64_t a, uint64_t b) {
  __uint128_t product = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}
}  // namespace

// A multiply-mix hash over 8-byte words: names are hashed once per event, so this is hot.
uint64_t hash_bytes(std::string_view text) {
  constexpr uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull;
  // Kernel names run to kilobytes and are interned once per event: for long strings hash the
  // length, head, middle and tail only. Equal strings still hash equal; lookups compare the
  // whole text, so a collision costs a probe, never a wrong id.
  if (text.size() > 96) {
    size_t n = text.size();
    uint64_t h = hash_bytes(text.substr(0, 32)) ^ mix(n, k1);
    h = mix(h ^ hash_bytes(text.substr(n / 2 - 16, 32)), k0);
    return mix(h ^ hash_bytes(text.substr(n - 32)), k1);
  }
  const char* p = text.data();
  size_t n = text.size();
  uint64_t h = k0 ^ n;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = mix(h ^ w, k1);
    p += 8;
    n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = mix(h ^ w, k0 ^ 0x8ebc6af09c88c6e3ull);
  }
  return mix(h, k1) ^ h;
}

StringPool::StringPool() {
  table_.assign(1024, kNotFound);
  intern("");
}

StringId StringPool::find(std::string_view text) const {
  uint64_t h = hash_bytes(text);
  size_t mask = table_.size() - 1;
  for (size_t slot = h & mask;; slot = (slot + 1) & mask) {
    StringId id = table_[slot];
    if (id == kNotFound) return kNotFound;
    if (hashes_[id] == h && views_[id] == text) return id;
  }
}

StringId StringPool::intern(std::string_view text) {
  uint64_t h = hash_bytes(text);
  size_t mask = table_.size() - 1;
  size_t slot = h & mask;
  for (;; slot = (slot + 1) & mask) {
    StringId id = table_[slot];
    if (id == kNotFound) break;
    if (hashes_[id] == h && views_[id] == text) return id;
  }
  if (blocks_.empty() || block_used_ + text.size() > blocks_.back().size) {
    size_t size = std::max(kBlockBytes, text.size());
    blocks_.push_back({std::unique_ptr<char[]>(new char[size]), size});
    block_used_ = 0;
  }
  char* dst = blocks_.back().chars.get() + block_used_;
  if (!text.empty()) std::memcpy(dst, text.data(), text.size());
  block_used_ += text.size();
  StringId id = static_cast<StringId>(views_.size());
  views_.emplace_back(dst, text.size());
  hashes_.push_back(h);
  table_[slot] = id;
  if (views_.size() * 2 > table_.size()) grow_table();
  return id;
}

void StringPool::grow_table() {
  std::vector<StringId> bigger(table_.size() * 2, kNotFound);
  size_t mask = bigger.size() - 1;
  for (StringId id = 0; id < views_.size(); ++id) {
    size_t slot = hashes_[id] & mask;
    while (bigger[slot] != kNotFound) slot = (slot + 1) & mask;
    bigger[slot] = id;
  }
  table_.swap(bigger);
}

size_t StringPool::bytes_used() const {
  size_t chars = 0;
  for (const Block& block : blocks_) chars += block.size;
  return chars + views_.capacity() * sizeof(std::string_view) + hashes_.capacity() * 8 +
         table_.capacity() * sizeof(StringId);
}

}  // namespace sl
