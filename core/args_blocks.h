// The args text of a store: every event's args object as written (JSON), appended in order and
// held in zstd-compressed blocks, decoded on demand. One implementation for every source: the
// JSON loader copies each event's args text here while parsing (so the file's text need not be
// kept), the Nsight loader and live capture write the args JSON they generate, and a snapshot
// stores the compressed blocks as they are (mapped from the file when opened).
//
// Appending is single-threaded and not concurrent with reads (like the rest of a store being
// built); reads are thread-safe: decoded blocks sit in a small shared LRU cache, so views that
// decode args per hover, and analyses walking a track's args in order, rarely decompress twice.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/trace_store.h"

namespace sl {

class ArgsBlocks {
public:
  // Raw bytes per block. Larger blocks compress better; smaller ones make a cache miss (a hover
  // on an event whose block is not cached) cheaper: 128 KiB decompresses in ~0.1 ms.
  static constexpr size_t kBlockBytes = 128 << 10;
  static constexpr size_t kCachedBlocks = 16;
  // zstd level 1: args text compresses ~6-10x at ~400 MB/s per core; higher levels cost load time.
  static constexpr int kLevel = 1;

  // A sealed block: one zstd frame holding args text [start, start + raw_size).
  struct Block {
    uint64_t start = 0;
    uint32_t raw_size = 0;
    uint32_t stored_size = 0;
    const char* stored = nullptr;  // the frame's bytes (owned by this object or a mapping)
  };

  ArgsBlocks();
  ~ArgsBlocks();
  ArgsBlocks(const ArgsBlocks&) = delete;
  ArgsBlocks& operator=(const ArgsBlocks&) = delete;

  // Appends one args object's text. An object never spans two blocks: one larger than a block
  // gets a block of its own.
  ArgsRange append(std::string_view json);
  // Compresses the open block, if any (appending afterwards starts a new one).
  void seal();

  uint64_t size() const { return end_; }  // bytes of args text
  const std::vector<Block>& sealed() const { return blocks_; }
  std::string_view open_text() const { return open_; }  // not yet compressed (the last block)
  size_t stored_bytes() const;  // compressed bytes of sealed blocks plus the open block's text

  // Takes every block of `later` after ours, as if its text had been appended here (two threads
  // parsing halves of one trace). Returns how `later`'s ranges move: offset and block shift.
  std::pair<uint64_t, uint32_t> absorb(ArgsBlocks&& later);
  // Replaces the contents with compressed blocks that `owner` keeps alive (an opened snapshot).
  // False when they are not contiguous or a frame's header disagrees with its raw size.
  bool adopt(std::vector<Block> blocks, std::shared_ptr<const void> owner);

  // True when `r` lies inside its block.
  bool holds(const ArgsRange& r) const;
  // Copies the text of `r` into `out`. False, with `out` empty, when `r` is outside the text or
  // its block does not decompress (a damaged snapshot); `error()` then says which block and why.
  bool read(const ArgsRange& r, std::string& out) const;
  std::string error() const;

  // Compresses `raw` into one zstd frame (the snapshot writer uses it for the open block).
  static std::string compress(std::string_view raw);

private:
  std::shared_ptr<const std::string> decoded(uint32_t block) const;
  void note_error(std::string message) const;

  std::vector<Block> blocks_;
  std::vector<std::unique_ptr<char[]>> owned_;         // frames this object compressed
  std::vector<std::shared_ptr<const void>> owners_;    // mappings holding adopted frames
  std::string open_;
  std::string scratch_;  // compressed output before it is copied at its size
  uint64_t end_ = 0;
  void* cctx_ = nullptr;  // ZSTD_CCtx, reused for every block

  mutable std::mutex mutex_;
  mutable std::vector<std::pair<uint32_t, std::shared_ptr<const std::string>>> cache_;  // most recent first
  mutable std::string error_;
};

}  // namespace sl
