// The args text of a store: every event's args object as written (JSON), appended in order and
// held in zstd-compressed blocks, decoded on demand. One implementation for every source: the
// JSON loader copies each event's args text here while parsing (so the file's text need not be
// kept), the Nsight loader and live capture write the args JSON they generate, and a snapshot
// stores the compressed blocks as they are (mapped from the file when opened).
//
// Appending is single-threaded and not concurrent with reads (like the rest of a store being
// built); reads are thread-safe: decoded blocks sit in a small shared LRU cache, so views that
// decode args per hover, and analyses walking a track's args in order, rarely decompress twice.
//
// Args made of numbers (the Nsight loader's: 2 to 16 fields per row, millions of rows) can be
// given as fields instead of text (begin_record ... end_record): a block of them holds compact
// records (a tag byte per field, integers as varints), about 5x smaller than the text, and its
// text is written only when the block is read. The ranges are those the same text appended with
// append() would get (offsets count text bytes, blocks break at the same places), and the text
// is byte for byte the same; sealed() compresses such blocks into zstd frames on first call (the
// snapshot writer's view), so loading pays for neither writing the text nor compressing it. A
// record may also repeat an earlier one of its block but for a few values (append_repeat): the
// Nsight loader's kernels of one launch shape, ~12 bytes each where the record in full is ~45.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/store/args_range.h"

namespace sl {

// One record of args fields (ArgsBlocks::begin_record ... end_record), encoded into memory the
// caller provides: per field a tag byte (kind << 6 | key) and the value (integers as zigzag
// varints), with the field count and the text size the record stands for. Inline, so that a
// loader's fixed run of fields compiles to straight-line code, and usable on any thread: the
// Nsight loader encodes kernels' args on its decoding thread and ArgsBlocks::append_record takes
// them on the loading thread.
class ArgsRecordWriter {
public:
  enum FieldKind : uint8_t { kInt = 0, kReal = 1, kText = 2, kTriple = 3 };
  static constexpr size_t kMaxIntBytes = 11, kMaxTripleBytes = 31;  // a tag byte and the varints

  // `key_sizes`: the text each key adds ("key": as written), by key id (ArgsBlocks::key_sizes());
  // `out`: room for every field to be added (the kMax*Bytes above each).
  ArgsRecordWriter(const uint32_t* key_sizes, char* out) : key_sizes_(key_sizes), begin_(out), out_(out) {}

  [[gnu::always_inline]] void add_int(uint8_t key, int64_t v) {
    tag(key, kInt);
    put_varint(v);
    text_ += decimal_size(v);
  }
  [[gnu::always_inline]] void add_triple(uint8_t key, int64_t a, int64_t b, int64_t c) {
    tag(key, kTriple);
    put_varint(a), put_varint(b), put_varint(c);
    text_ += decimal_size(a) + decimal_size(b) + decimal_size(c) + 4;  // [,,]
  }
  // The tag of a field, and the text its key adds: the comma before all but the first, "key":.
  // Returns where the value goes (kinds written elsewhere: reals, text).
  [[gnu::always_inline]] char* tag(uint8_t key, FieldKind kind) {
    *out_++ = char(kind << 6 | key);
    text_ += (fields_ ? 1 : 0) + key_sizes_[key];
    ++fields_;
    return out_;
  }
  void wrote_value(char* end, uint64_t text) { out_ = end, text_ += text; }
  // The bytes written so far were moved to `begin` (a buffer that grew).
  void moved_to(char* begin) { out_ = begin + bytes(), begin_ = begin; }

  size_t bytes() const { return size_t(out_ - begin_); }
  uint32_t fields() const { return fields_; }
  uint64_t text_size() const { return text_; }  // with the braces

  // Characters std::to_chars writes for v. (Always inlined, as the rest: in a profile of the
  // Nsight loader, calls were much of the time a kernel's 16 fields took.)
  [[gnu::always_inline]] static uint32_t decimal_size(int64_t v) {
    static constexpr uint64_t kPowers[] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
                                           10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
                                           100000000000ull, 1000000000000ull, 10000000000000ull,
                                           100000000000000ull, 1000000000000000ull, 10000000000000000ull,
                                           100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};
    uint64_t u = v < 0 ? 0 - uint64_t(v) : uint64_t(v);
    uint32_t bits = 64 - uint32_t(__builtin_clzll(u | 1));
    uint32_t t = bits * 1233 >> 12;  // about bits × log10(2): the digits, or one more than they are
    uint32_t digits = u == 0 ? 1 : t + (u >= kPowers[t]);
    return digits + (v < 0);
  }
  // A zigzag varint (small negatives stay short): at most 10 bytes.
  [[gnu::always_inline]] static char* put_varint(char* out, int64_t v) {
    return put_unsigned(out, uint64_t(v) << 1 ^ uint64_t(v >> 63));
  }
  [[gnu::always_inline]] static char* put_unsigned(char* out, uint64_t u) {
    for (; u >= 0x80; u >>= 7) *out++ = char(u | 0x80);
    *out++ = char(u);
    return out;
  }

private:
  [[gnu::always_inline]] void put_varint(int64_t v) { out_ = put_varint(out_, v); }

  const uint32_t* key_sizes_;
  char* begin_;
  char* out_;
  uint32_t fields_ = 0;
  uint64_t text_ = 2;  // the braces
};

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
    // A block of records (begin_record): their bytes; its frame is made by sealed() when asked.
    const char* records = nullptr;
    uint32_t records_size = 0;
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

  // --- args given as fields: {"key":value,...} in the order given, as JSON text would say it:
  // integers in decimal, reals in shortest round-trip form (null when not finite), text as JSON
  // strings (escaped), triples as [a,b,c]. A key is registered once (at most kMaxKeys per object
  // of this class) and named by its id.
  static constexpr size_t kMaxKeys = 64;
  uint8_t key(std::string_view name);
  void begin_record();
  void add_int(uint8_t key, int64_t v);
  void add_real(uint8_t key, double v);
  void add_text(uint8_t key, std::string_view v);
  void add_triple(uint8_t key, int64_t a, int64_t b, int64_t c);
  ArgsRange end_record();
  // A record written by an ArgsRecordWriter (on any thread; this call on the appending one):
  // `bytes` are its fields, as writer.bytes() counted them.
  ArgsRange append_record(std::string_view bytes, uint32_t fields, uint64_t text_size);
  // Where the last record appended went: its block and its ordinal there.
  struct RecordPlace {
    uint32_t block = UINT32_MAX, index = 0;
  };
  RecordPlace last_record() const { return {uint32_t(blocks_.size()), open_record_count_ - 1}; }
  // A record that repeats an earlier one of the open block (`base`, written by append_record)
  // but for `replaced` fields (`bytes`, as an ArgsRecordWriter writes them, keys the base has):
  // a loader's rows whose args differ from an earlier row's by an id or two (Nsight kernels of
  // one launch shape: grid, block, registers, shared memory, all the same). Its text is the
  // base's with those values, `text_size` bytes. Nothing is appended, and nullopt returned, when
  // `base` is not in the open block or this record would start a new one: the caller then
  // appends it in full.
  std::optional<ArgsRange> append_repeat(RecordPlace base, std::string_view bytes, uint32_t replaced, uint64_t text_size);
  // What each key adds to the text, by key id: for an ArgsRecordWriter. Keys registered later
  // change it: register every key before writing records elsewhere.
  const uint32_t* key_sizes() const { return key_sizes_; }

  uint64_t size() const { return end_; }  // bytes of args text
  // Every sealed block as a zstd frame (blocks of records are compressed on the first call).
  const std::vector<Block>& sealed() const;
  // The open block's text, not yet compressed (the last block).
  std::string_view open_text() const;
  size_t stored_bytes() const;  // bytes held for sealed blocks (frames or records) plus the open block's

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
  uint64_t open_size() const { return open_records_.empty() ? open_.size() : open_records_text_; }
  bool write_records(std::string_view records, size_t text_size, std::string& out) const;
  ArgsRange add_open_record(std::initializer_list<uint64_t> header, std::string_view bytes, uint64_t text_size);
  uint8_t add_key_text(std::string text);  // "key": as written
  // The record being written (begin_record): room for `bytes` more bytes, and a writer there.
  ArgsRecordWriter& record_writer(size_t bytes);

  std::vector<Block> blocks_;
  std::vector<std::unique_ptr<char[]>> owned_;         // frames and records this object holds
  std::vector<std::shared_ptr<const void>> owners_;    // mappings holding adopted frames
  std::string open_;
  std::string scratch_;  // compressed output before it is copied at its size
  uint64_t end_ = 0;
  void* cctx_ = nullptr;  // ZSTD_CCtx, reused for every block

  // Records: the keys' text ("key":) and what each adds, the open block's records and its text
  // size, the record being written (begin_record: a buffer and the writer in it).
  std::vector<std::string> keys_;
  uint32_t key_sizes_[kMaxKeys] = {};
  // The open block's records, written in place in chunks that the sealed blocks go on pointing
  // into: sealing copies nothing (a copy per block, into a fresh allocation each, was ~10% of
  // the Nsight loader's building thread in a profile of a kernel-heavy report).
  class RecordChunks {
  public:
    static constexpr size_t kChunkBytes = 4 << 20;
    std::string_view open() const { return {begin_, size_}; }
    bool empty() const { return size_ == 0; }
    size_t size() const { return size_; }
    // Room for `bytes` more bytes of the open block (wrote() then counts them); a new chunk
    // (held in `owned`) when the current one is full, the open block's bytes moved to it.
    char* room(size_t bytes, std::vector<std::unique_ptr<char[]>>& owned) {
      if (size_t(end_ - begin_) - size_ < bytes) new_chunk(bytes, owned);
      return begin_ + size_;
    }
    void wrote(size_t bytes) { size_ += bytes; }
    // The open block's bytes, closed: the next block starts after them.
    std::string_view seal() {
      std::string_view b = open();
      begin_ += size_;
      size_ = 0;
      return b;
    }
    void clear() { begin_ = end_ = nullptr, size_ = 0; }

  private:
    void new_chunk(size_t bytes, std::vector<std::unique_ptr<char[]>>& owned);
    char* begin_ = nullptr;  // the open block, in the current chunk
    size_t size_ = 0;
    char* end_ = nullptr;  // of the current chunk
  };
  RecordChunks open_records_;
  uint64_t open_records_text_ = 0;
  uint32_t open_record_count_ = 0;  // records in the open block
  std::string record_;  // a buffer: record_writer_ writes the record being written at its start
  ArgsRecordWriter record_writer_{key_sizes_, nullptr};
  bool any_records_ = false;
  // sealed() with blocks of records: the same blocks with their frames, made on demand.
  mutable std::mutex frame_mutex_;
  mutable std::vector<Block> framed_;
  mutable std::vector<std::unique_ptr<char[]>> framed_owned_;
  mutable std::string open_records_as_text_;
  mutable size_t open_text_of_ = SIZE_MAX;  // open_records_.size() when it was written

  mutable std::mutex mutex_;
  mutable std::vector<std::pair<uint32_t, std::shared_ptr<const std::string>>> cache_;  // most recent first
  mutable std::string error_;
};

}  // namespace sl
