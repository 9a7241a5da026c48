#include "core/store/args_blocks.h"

#include <zstd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/text/json_writer.h"

namespace sl {

ArgsBlocks::ArgsBlocks() = default;

ArgsBlocks::~ArgsBlocks() { ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_)); }

ArgsRange ArgsBlocks::append(std::string_view json) {
  if (!open_records_.empty()) seal();  // a block holds text or records, not both
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

// ---------------------------------------------------------------- records
//
// A record: a header varint, then its fields, per field a tag byte (kind << 6 | key) and the
// value: an integer as a zigzag varint, a real as its 8 bytes, text as a varint length and the
// JSON string (quoted, escaped), a triple as three zigzag varints. The header of a record in
// full is its field count × 2; that of a repeat (append_repeat) is its replaced fields × 2 + 1,
// followed by a varint: how many records back in the block its base is. Records live only in
// memory (a snapshot stores their text), so the format is free to change.

namespace {

using FieldKind = ArgsRecordWriter::FieldKind;
constexpr FieldKind kInt = ArgsRecordWriter::kInt, kReal = ArgsRecordWriter::kReal, kText = ArgsRecordWriter::kText,
                    kTriple = ArgsRecordWriter::kTriple;

// As the text would have it: std::to_chars's shortest form, "null" where it fails.
std::string_view real_text(double v, char (&tmp)[32]) {
  auto [end, ec] = std::to_chars(tmp, tmp + sizeof tmp, v);
  return ec == std::errc() ? std::string_view(tmp, size_t(end - tmp)) : std::string_view("null");
}

// A varint from [p, end); false when it runs past the end.
bool read_varint(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    uint8_t b = *p++;
    out |= uint64_t(b & 0x7F) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

int64_t unzigzag(uint64_t u) { return int64_t(u >> 1) ^ -int64_t(u & 1); }


}  // namespace

uint8_t ArgsBlocks::key(std::string_view name) {
  std::string text;
  append_json_string(text, name);
  text += ':';
  auto it = std::find(keys_.begin(), keys_.end(), text);
  if (it != keys_.end()) return uint8_t(it - keys_.begin());
  return add_key_text(std::move(text));
}

uint8_t ArgsBlocks::add_key_text(std::string text) {
  if (keys_.size() == kMaxKeys) throw std::length_error("more args keys than ArgsBlocks::kMaxKeys");
  key_sizes_[keys_.size()] = uint32_t(text.size());
  keys_.push_back(std::move(text));
  return uint8_t(keys_.size() - 1);
}

void ArgsBlocks::begin_record() {
  record_writer_ = ArgsRecordWriter(key_sizes_, record_.data());
}

// Room for `bytes` more bytes of the record being written (one check per field, not per byte:
// the loaders add millions of fields).
ArgsRecordWriter& ArgsBlocks::record_writer(size_t bytes) {
  size_t used = record_writer_.bytes();
  if (used + bytes > record_.size()) {
    record_.resize(std::max(2 * record_.size(), used + bytes + 256));
    record_writer_.moved_to(record_.data());
  }
  return record_writer_;
}

void ArgsBlocks::add_int(uint8_t key, int64_t v) { record_writer(ArgsRecordWriter::kMaxIntBytes).add_int(key, v); }

void ArgsBlocks::add_real(uint8_t key, double v) {
  ArgsRecordWriter& w = record_writer(1 + sizeof v);
  char* out = w.tag(key, kReal);
  std::memcpy(out, &v, sizeof v);
  char tmp[32];
  w.wrote_value(out + sizeof v, real_text(v, tmp).size());
}

void ArgsBlocks::add_text(uint8_t key, std::string_view v) {
  std::string quoted;
  append_json_string(quoted, v);
  ArgsRecordWriter& w = record_writer(11 + quoted.size());
  char* out = ArgsRecordWriter::put_varint(w.tag(key, kText), int64_t(quoted.size()));
  std::memcpy(out, quoted.data(), quoted.size());
  w.wrote_value(out + quoted.size(), quoted.size());
}

void ArgsBlocks::add_triple(uint8_t key, int64_t a, int64_t b, int64_t c) {
  record_writer(ArgsRecordWriter::kMaxTripleBytes).add_triple(key, a, b, c);
}

ArgsRange ArgsBlocks::end_record() {
  return append_record({record_.data(), record_writer_.bytes()}, record_writer_.fields(), record_writer_.text_size());
}

ArgsRange ArgsBlocks::append_record(std::string_view bytes, uint32_t fields, uint64_t text_size) {
  if (!open_.empty()) seal();  // a block holds text or records, not both
  if (!open_records_.empty() && open_records_text_ + text_size > kBlockBytes) seal();
  return add_open_record({uint64_t(fields) << 1}, bytes, text_size);
}

// A record at the end of the open block: its header varints, then its fields.
ArgsRange ArgsBlocks::add_open_record(std::initializer_list<uint64_t> header, std::string_view bytes, uint64_t text_size) {
  ArgsRange r;
  r.offset = end_;
  r.length = uint32_t(text_size);
  r.block = uint32_t(blocks_.size());
  char* out = open_records_.room(10 * header.size() + bytes.size(), owned_);  // a varint: at most 10 bytes
  char* at = out;
  for (uint64_t h : header) at = ArgsRecordWriter::put_unsigned(at, h);
  std::memcpy(at, bytes.data(), bytes.size());
  open_records_.wrote(size_t(at - out) + bytes.size());
  open_records_text_ += text_size;
  ++open_record_count_;
  end_ += text_size;
  any_records_ = true;
  return r;
}

std::optional<ArgsRange> ArgsBlocks::append_repeat(RecordPlace base, std::string_view bytes, uint32_t replaced,
                                                   uint64_t text_size) {
  if (open_records_.empty() || open_records_text_ + text_size > kBlockBytes) return std::nullopt;
  if (base.block != blocks_.size() || base.index >= open_record_count_) return std::nullopt;
  return add_open_record({uint64_t(replaced) << 1 | 1, open_record_count_ - base.index}, bytes, text_size);
}

// The text of a block of records, appended to `out`; false when the records are damaged or do
// not give `text_size` bytes.
bool ArgsBlocks::write_records(std::string_view records, size_t text_size, std::string& out) const {
  size_t first = out.size();
  out.resize(first + text_size);
  // Written in place, every piece checked against the end: the text's size is known.
  char* o = out.data() + first;
  char* const limit = o + text_size;
  auto put = [&](const char* bytes, size_t n) {
    if (size_t(limit - o) < n) return false;
    std::memcpy(o, bytes, n);
    o += n;
    return true;
  };
  auto put_decimal = [&](uint64_t u) {
    auto [next, ec] = std::to_chars(o, limit, unzigzag(u));
    o = next;
    return ec == std::errc();
  };
  const auto* p = reinterpret_cast<const uint8_t*>(records.data());
  const uint8_t* end = p + records.size();
  char tmp[32];
  // A field's value (of its tag's kind) at q, written; q moves past it.
  auto write_value = [&](uint8_t tag, const uint8_t*& q) {
    uint64_t u = 0;
    switch (tag >> 6) {
      case kInt:
        return read_varint(q, end, u) && put_decimal(u);
      case kReal: {
        double v;
        if (end - q < ptrdiff_t(sizeof v)) return false;
        std::memcpy(&v, q, sizeof v);
        q += sizeof v;
        std::string_view text = real_text(v, tmp);
        return put(text.data(), text.size());
      }
      case kText: {
        if (!read_varint(q, end, u)) return false;
        uint64_t bytes = uint64_t(unzigzag(u));  // written by put_varint, as every number
        if (bytes > uint64_t(end - q) || !put(reinterpret_cast<const char*>(q), size_t(bytes))) return false;
        q += bytes;
        return true;
      }
      default: {
        bool ok = put("[", 1);
        for (int i = 0; ok && i < 3; ++i) ok = read_varint(q, end, u) && (!i || put(",", 1)) && put_decimal(u);
        return ok && put("]", 1);
      }
    }
  };
  // The same, skipped (a value a repeat replaces, or a replacement found before it is written).
  auto skip_value = [&](uint8_t tag, const uint8_t*& q) {
    uint64_t u = 0;
    switch (tag >> 6) {
      case kInt:
        return read_varint(q, end, u);
      case kReal:
        if (end - q < 8) return false;
        q += 8;
        return true;
      case kText:
        if (!read_varint(q, end, u) || uint64_t(unzigzag(u)) > uint64_t(end - q)) return false;
        q += unzigzag(u);
        return true;
      default:
        return read_varint(q, end, u) && read_varint(q, end, u) && read_varint(q, end, u);
    }
  };
  auto key_text = [&](uint8_t tag, bool first) {
    uint8_t key = tag & 0x3F;
    return key < keys_.size() && (first || put(",", 1)) && put(keys_[key].data(), keys_[key].size());
  };
  struct Full {
    const uint8_t* fields;  // the first field's tag, or nullptr for a repeat (never a base)
    uint64_t count;
  };
  std::vector<Full> records_so_far;
  struct Replacement {
    uint8_t tag;
    const uint8_t* value;
    bool used;
  };
  constexpr uint64_t kMaxReplaced = 8;
  bool ok = true;
  while (ok && p < end) {
    uint64_t header = 0;
    ok = read_varint(p, end, header) && put("{", 1);
    if (!ok) break;
    if (!(header & 1)) {
      records_so_far.push_back({p, header >> 1});
      for (uint64_t f = 0; ok && f < header >> 1; ++f) {
        if (p == end) {
          ok = false;
          break;
        }
        uint8_t tag = *p++;
        ok = key_text(tag, f == 0) && write_value(tag, p);
      }
    } else {
      uint64_t back = 0, replaced = header >> 1;
      ok = read_varint(p, end, back) && back >= 1 && back <= records_so_far.size() && replaced <= kMaxReplaced;
      if (!ok) break;
      Full base = records_so_far[records_so_far.size() - back];
      records_so_far.push_back({nullptr, 0});
      ok = base.fields != nullptr;
      Replacement with[kMaxReplaced];
      for (uint64_t i = 0; ok && i < replaced; ++i) {
        ok = p != end;
        if (!ok) break;
        with[i] = {*p, p + 1, false};
        ++p;
        ok = skip_value(with[i].tag, p);
      }
      const uint8_t* b = base.fields;
      for (uint64_t f = 0; ok && f < base.count; ++f) {
        uint8_t tag = *b++;
        Replacement* r = std::find_if(with, with + replaced, [&](const Replacement& x) { return (x.tag & 0x3F) == (tag & 0x3F); });
        if (r == with + replaced) {
          ok = key_text(tag, f == 0) && write_value(tag, b);
          continue;
        }
        const uint8_t* value = r->value;
        ok = !r->used && key_text(r->tag, f == 0) && write_value(r->tag, value) && skip_value(tag, b);
        r->used = true;
      }
      // Every replacement names a field of the base, once.
      ok = ok && std::all_of(with, with + replaced, [](const Replacement& x) { return x.used; });
    }
    ok = ok && put("}", 1);
  }
  if (ok && o == limit) return true;
  out.resize(first);
  return false;
}

// ---------------------------------------------------------------- blocks

void ArgsBlocks::RecordChunks::new_chunk(size_t bytes, std::vector<std::unique_ptr<char[]>>& owned) {
  size_t capacity = std::max(kChunkBytes, 2 * (size_ + bytes));
  std::unique_ptr<char[]> chunk(new char[capacity]);  // not zeroed: pages are touched as written
  if (size_) std::memcpy(chunk.get(), begin_, size_);
  begin_ = chunk.get();
  end_ = begin_ + capacity;
  owned.push_back(std::move(chunk));
}

void ArgsBlocks::seal() {
  if (!open_records_.empty()) {
    std::string_view records = open_records_.seal();
    Block b;
    b.start = end_ - open_records_text_;
    b.raw_size = uint32_t(open_records_text_);
    b.records = records.data();
    b.records_size = uint32_t(records.size());
    blocks_.push_back(b);
    open_records_text_ = 0;
    open_record_count_ = 0;
    open_text_of_ = SIZE_MAX;
    return;
  }
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
  size_t n = open_.size() + open_records_.size();
  for (const Block& b : blocks_) n += b.records ? b.records_size : b.stored_size;
  return n;
}

const std::vector<ArgsBlocks::Block>& ArgsBlocks::sealed() const {
  if (!any_records_) return blocks_;
  std::lock_guard lock(frame_mutex_);  // not mutex_: readers go on while blocks are compressed
  for (size_t i = framed_.size(); i < blocks_.size(); ++i) {
    Block b = blocks_[i];
    if (b.records) {
      std::string text;
      // Records are only ever written here, never read from a file: they cannot be damaged.
      if (!write_records({b.records, b.records_size}, b.raw_size, text)) throw std::logic_error("args records");
      std::string frame = compress(text);
      std::unique_ptr<char[]> bytes(new char[frame.size()]);
      std::memcpy(bytes.get(), frame.data(), frame.size());
      b.stored = bytes.get();
      b.stored_size = uint32_t(frame.size());
      framed_owned_.push_back(std::move(bytes));
    }
    framed_.push_back(b);
  }
  return framed_;
}

std::string_view ArgsBlocks::open_text() const {
  if (open_records_.empty()) return open_;
  std::lock_guard lock(frame_mutex_);
  // Written again only when records were added since (callers may hold the view meanwhile).
  if (open_text_of_ != open_records_.size()) {
    open_records_as_text_.clear();
    if (!write_records(open_records_.open(), open_records_text_, open_records_as_text_)) open_records_as_text_.clear();
    open_text_of_ = open_records_.size();
  }
  return open_records_as_text_;
}

std::pair<uint64_t, uint32_t> ArgsBlocks::absorb(ArgsBlocks&& later) {
  seal();
  later.seal();
  // Records name keys by id: `later`'s ids must mean the same here.
  if (later.any_records_) {
    size_t common = std::min(keys_.size(), later.keys_.size());
    if (!std::equal(keys_.begin(), keys_.begin() + std::ptrdiff_t(common), later.keys_.begin()))
      throw std::invalid_argument("ArgsBlocks::absorb: the later blocks register their keys in another order");
    for (size_t k = common; k < later.keys_.size(); ++k) add_key_text(later.keys_[k]);
    any_records_ = true;
  }
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
  later.open_records_.clear();  // its last chunk is ours now: records it gets later go to a new one
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
  open_records_.clear();
  open_records_text_ = 0;
  any_records_ = false;
  framed_.clear();
  framed_owned_.clear();
  end_ = end;
  std::lock_guard lock(mutex_);
  cache_.clear();
  return true;
}

bool ArgsBlocks::holds(const ArgsRange& r) const {
  if (r.block > blocks_.size()) return false;
  uint64_t start = r.block < blocks_.size() ? blocks_[r.block].start : end_ - open_size();
  uint64_t size = r.block < blocks_.size() ? blocks_[r.block].raw_size : open_size();
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
  if (b.records) {
    auto text = std::make_shared<std::string>();
    if (!write_records({b.records, b.records_size}, b.raw_size, *text)) {
      note_error("args block " + std::to_string(block) + " has damaged records: its args read as empty");
      return nullptr;
    }
    std::lock_guard lock(mutex_);
    cache_.insert(cache_.begin(), {block, text});
    if (cache_.size() > kCachedBlocks) cache_.pop_back();
    return text;
  }
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
    if (open_records_.empty()) {
      out.assign(open_, r.offset - (end_ - open_.size()), r.length);
      return true;
    }
    std::string text;  // rare (a store still being appended to): the whole open block, written here
    if (!write_records(open_records_.open(), open_records_text_, text)) return false;
    out.assign(text, r.offset - (end_ - text.size()), r.length);
    return true;
  }
  std::shared_ptr<const std::string> text = decoded(r.block);
  if (!text) return false;
  out.assign(*text, r.offset - blocks_[r.block].start, r.length);
  return true;
}

}  // namespace sl
