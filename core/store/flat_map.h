// An open-addressing hash map in one array (linear probing, tombstones on erase, rebuilt when
// live and dead slots fill half of it): for the millions of small keys of allocator events
// (addresses), where a node-based map allocated a node per key and spent a third of the time.
#pragma once

#include <bit>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sl {

// Hash: a functor giving a well-mixed size_t (the low bits index the table).
template <class Key, class Value, class Hash>
class FlatMap {
public:
  explicit FlatMap(size_t expected = 16) { rebuild(std::bit_ceil(std::max<size_t>(16, expected * 2 + 1))); }

  Value* find(const Key& key) {
    size_t i = probe(key);
    return slots_[i].state == kUsed ? &slots_[i].value : nullptr;
  }
  bool contains(const Key& key) const { return slots_[probe(key)].state == kUsed; }
  // Adds the key with `value`; false, changing nothing, when it is there already.
  bool insert(const Key& key, const Value& value) { return put(key, value, false); }
  void assign(const Key& key, const Value& value) { put(key, value, true); }
  void erase(const Key& key) {
    size_t i = probe(key);
    if (slots_[i].state != kUsed) return;
    slots_[i].state = kDead;
    --used_, ++dead_;
  }
  size_t size() const { return used_; }

private:
  static constexpr uint8_t kEmpty = 0, kUsed = 1, kDead = 2;
  struct Slot {
    Key key{};
    Value value{};
    uint8_t state = kEmpty;
  };
  // One probe: the key's slot (its value replaced when `replace`), else the first free slot
  // on the way (a tombstone reused). True when the key was added.
  bool put(const Key& key, const Value& value, bool replace) {
    if ((used_ + dead_ + 1) * 2 > slots_.size()) rebuild(used_ * 4 > slots_.size() ? slots_.size() * 2 : slots_.size());
    size_t mask = slots_.size() - 1, i = Hash()(key) & mask, free = SIZE_MAX;
    for (; slots_[i].state != kEmpty; i = (i + 1) & mask) {
      if (slots_[i].state == kUsed && slots_[i].key == key) {
        if (replace) slots_[i].value = value;
        return false;
      }
      if (slots_[i].state == kDead && free == SIZE_MAX) free = i;
    }
    if (free == SIZE_MAX) free = i;
    else --dead_;
    slots_[free] = {key, value, kUsed};
    ++used_;
    return true;
  }
  // The slot holding `key`, or the empty slot that ends its probe.
  size_t probe(const Key& key) const {
    size_t mask = slots_.size() - 1, i = Hash()(key) & mask;
    while (slots_[i].state != kEmpty && !(slots_[i].state == kUsed && slots_[i].key == key)) i = (i + 1) & mask;
    return i;
  }
  void rebuild(size_t size) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(size, Slot{});
    used_ = dead_ = 0;
    for (const Slot& s : old)
      if (s.state == kUsed) put(s.key, s.value, false);
  }
  std::vector<Slot> slots_;
  size_t used_ = 0, dead_ = 0;
};

// A multiplicative mix for integer keys (Fibonacci hashing, high bits folded down).
inline size_t mix_bits(uint64_t x) {
  uint64_t h = x * 0x9E3779B97F4A7C15ull;
  return size_t(h ^ (h >> 29));
}

}  // namespace sl
