// Interned strings: every name, category and key is stored once and referred to by a
// 32-bit id, so columns stay small and comparisons are integer compares.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sl {

using StringId = uint32_t;

class StringPool {
public:
  StringPool();

  // Returns the id of `text`, adding it on first sight. Id 0 is the empty string.
  StringId intern(std::string_view text);
  // Returns the id if `text` was interned before, else kNotFound; never adds.
  StringId find(std::string_view text) const;
  std::string_view view(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  size_t bytes_used() const;

  static constexpr StringId kNotFound = UINT32_MAX;

private:
  void grow_table();

  // Characters live in fixed blocks that never move, so views stay valid as the pool grows
  // (live capture appends while views read). Left uninitialised: a page of a block becomes
  // resident only once strings reach it (a small trace's pool is a few KB, not the whole block).
  struct Block {
    std::unique_ptr<char[]> chars;
    size_t size = 0;
  };
  std::deque<Block> blocks_;
  size_t block_used_ = 0;
  std::vector<std::string_view> views_;
  std::vector<uint64_t> hashes_;
  std::vector<StringId> table_;  // open addressing, kNotFound = empty slot
};

uint64_t hash_bytes(std::string_view text);

}  // namespace sl
