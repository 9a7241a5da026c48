#include "core/args_blocks.h"

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace sl {

ArgsBlocks::ArgsBlocks() = default;

ArgsBlocks::~ArgsBlocks() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

ArgsRange ArgsBlocks::append(std::string_view json) {
  if (!open_.empty() && open_.size() + json.size() > kBlockBytes) seal();
  if (open_.capacity() == 0) open_.reserve(kBlockBytes);
  ArgsRange r;
  r.offset = end_;
  r.length = uint32_t(json.size());
  r.block = uint32_t(blocks_.size());
  open_.append(json);
  end_ += json.size();
  return r;
}

namespace {

// A compression context at kLevel whose frames end with a checksum of their content (xxHash64,
// 4 bytes): a damaged block that still decodes is caught when it is decoded, not shown as args.
ZSTD_CCtx* new_context(int level) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  if (!c) throw std::bad_alloc();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  return c;
}

// Compresses into `out` (at least ZSTD_compressBound bytes); returns the frame's size.
size_t compress_into(ZSTD_CCtx* c, std::string_view raw, char* out, size_t capacity) {
  size_t n = ZSTD_compress2(c, out, capacity, raw.data(), raw.size());
  if (ZSTD_isError(n)) throw std::bad_alloc();  // with a large enough output, only allocation fails
  return n;
}

}  // namespace

std::string ArgsBlocks::compress(std::string_view raw) {
  std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> c(new_context(kLevel), ZSTD_freeCCtx);
  std::string out(ZSTD_compressBound(raw.size()), '\0');
  out.resize(compress_into(c.get(), raw, out.data(), out.size()));
  return out;
}

void ArgsBlocks::seal() {
  if (open_.empty()) return;
  if (!cctx_) cctx_ = new_context(kLevel);
  // Compressed into a scratch buffer kept between blocks (a fresh one per block would be mapped
  // and unmapped each time: it is larger than malloc's mmap threshold), then copied at its size.
  size_t bound = ZSTD_compressBound(open_.size());
  if (scratch_.size() < bound) scratch_.resize(bound);
  size_t n = compress_into(static_cast<ZSTD_CCtx*>(cctx_), open_, scratch_.data(), bound);
  std::unique_ptr<char[]> exact(new char[n]);
  std::memcpy(exact.get(), scratch_.data(), n);
  Block b;
  b.start = end_ - open_.size();
  b.raw_size = uint32_t(open_.size());
  b.stored_size = uint32_t(n);
  b.stored = exact.get();
  owned_.push_back(std::move(exact));
  blocks_.push_back(b);
  open_.clear();
}

size_t ArgsBlocks::stored_bytes() const {
  size_t n = open_.size();
  for (const Block& b : blocks_) n += b.stored_size;
  return n;
}

std::pair<uint64_t, uint32_t> ArgsBlocks::absorb(ArgsBlocks&& later) {
  seal();
  later.seal();
  std::pair<uint64_t, uint32_t> shift{end_, uint32_t(blocks_.size())};
  for (Block b : later.blocks_) {
    b.start += shift.first;
    blocks_.push_back(b);
  }
  end_ += later.end_;
  for (auto& frame : later.owned_) owned_.push_back(std::move(frame));
  for (auto& owner : later.owners_) owners_.push_back(std::move(owner));
  later.blocks_.clear();
  later.owned_.clear();
  later.owners_.clear();
  later.end_ = 0;
  return shift;
}

bool ArgsBlocks::adopt(std::vector<Block> blocks, std::shared_ptr<const void> owner) {
  uint64_t end = 0;
  for (const Block& b : blocks) {
    unsigned long long content = ZSTD_getFrameContentSize(b.stored, b.stored_size);
    if (b.start != end || content != b.raw_size) return false;
    end += b.raw_size;
  }
  blocks_ = std::move(blocks);
  owned_.clear();
  owners_.assign(1, std::move(owner));
  open_.clear();
  end_ = end;
  std::lock_guard lock(mutex_);
  cache_.clear();
  return true;
}

bool ArgsBlocks::holds(const ArgsRange& r) const {
  if (r.block > blocks_.size()) return false;
  uint64_t start = r.block < blocks_.size() ? blocks_[r.block].start : end_ - open_.size();
  uint64_t size = r.block < blocks_.size() ? blocks_[r.block].raw_size : open_.size();
  return r.offset >= start && r.length <= size && r.offset - start <= size - r.length;
}

void ArgsBlocks::note_error(std::string message) const {
  std::lock_guard lock(mutex_);
  if (error_.empty()) error_ = std::move(message);
}

std::string ArgsBlocks::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

std::shared_ptr<const std::string> ArgsBlocks::decoded(uint32_t block) const {
  {
    std::lock_guard lock(mutex_);
    auto hit = std::find_if(cache_.begin(), cache_.end(), [&](const auto& entry) { return entry.first == block; });
    if (hit != cache_.end()) {
      std::rotate(cache_.begin(), hit, hit + 1);  // most recent first
      return cache_.front().second;
    }
  }
  // Decompressed outside the lock: another thread may decode the same block meanwhile, which
  // costs time, never correctness.
  const Block& b = blocks_[block];
  auto text = std::make_shared<std::string>(b.raw_size, '\0');
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  size_t n = dctx ? ZSTD_decompressDCtx(dctx.get(), text->data(), text->size(), b.stored, b.stored_size) : 0;
  if (!dctx || ZSTD_isError(n) || n != b.raw_size) {
    note_error("args block " + std::to_string(block) + " does not decompress (" +
               (!dctx ? std::string("out of memory") : ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size") +
               "): its args read as empty");
    return nullptr;
  }
  std::lock_guard lock(mutex_);
  cache_.insert(cache_.begin(), {block, text});
  if (cache_.size() > kCachedBlocks) cache_.pop_back();
  return text;
}

bool ArgsBlocks::read(const ArgsRange& r, std::string& out) const {
  out.clear();
  if (!holds(r)) return false;
  if (r.block == blocks_.size()) {
    out.assign(open_, r.offset - (end_ - open_.size()), r.length);
    return true;
  }
  std::shared_ptr<const std::string> text = decoded(r.block);
  if (!text) return false;
  out.assign(*text, r.offset - blocks_[r.block].start, r.length);
  return true;
}

}  // namespace sl
