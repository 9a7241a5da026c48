#include "core/fleet/sections.h"

#include <libdeflate.h>
#include <zstd.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace sl::fleet {

namespace {

constexpr size_t kMagicBytes = 8;
constexpr uint8_t kZstd = 1;
// A section header: tag, flags, raw size, stored size, checksum.
constexpr size_t kSectionHeadBytes = 4 + 1 + 8 + 8 + 4;
// Far above any real section (a 16,384-rank fleet's tables are a few hundred MB): a larger raw
// size is damage, refused before anything is allocated for it.
constexpr uint64_t kLargestSection = uint64_t(16) << 30;

uint32_t crc32(std::string_view b) { return libdeflate_crc32(0, b.data(), b.size()); }

// The checksum covers the section's header (tag, flags, sizes) and its stored bytes, so a
// flipped tag or size is found as surely as a flipped byte of data.
constexpr size_t kCoveredHeadBytes = 4 + 1 + 8 + 8;
uint32_t section_crc(std::string_view head, std::string_view stored) {
  return libdeflate_crc32(crc32(head.substr(0, kCoveredHeadBytes)), stored.data(), stored.size());
}

// Into `raw` (its capacity reused: no fresh buffer, no zeroing of what is overwritten), with one
// decompression context per thread (a fleet reduce decompresses tens of thousands of sections).
bool decompress_into(std::string_view stored, uint64_t raw_size, std::string& raw) {
  // The frame names its own size: a header claiming another is damage, found before allocating.
  if (ZSTD_getFrameContentSize(stored.data(), stored.size()) != raw_size) return false;
  raw.resize(size_t(raw_size));
  struct Context {
    ZSTD_DCtx* at = ZSTD_createDCtx();
    ~Context() { ZSTD_freeDCtx(at); }
  };
  thread_local Context context;
  if (!context.at) return false;
  size_t n = ZSTD_decompressDCtx(context.at, raw.data(), raw.size(), stored.data(), stored.size());
  return !ZSTD_isError(n) && n == raw_size;
}

}  // namespace

std::string tag_text(uint32_t t) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    char c = char((t >> (8 * i)) & 0xff);
    s += c >= 32 && c < 127 ? c : '?';
  }
  return s;
}

SectionWriter::SectionWriter(std::string_view magic, uint32_t version) {
  out_.assign(magic.substr(0, kMagicBytes));
  out_.resize(kMagicBytes, '\0');
  ByteWriter w;
  w.u32(version);
  w.u32(0);  // the section count, known at finish()
  out_ += w.bytes;
}

SectionWriter::SectionWriter(std::string_view magic, uint32_t version, int fd) : SectionWriter(magic, version) { fd_ = fd; }

constexpr size_t kFlushBytes = size_t(1) << 20;

void SectionWriter::emit(std::string_view bytes) {
  out_ += bytes;
  if (fd_ >= 0 && out_.size() >= kFlushBytes) flush();
}

void SectionWriter::flush() {
  for (size_t at = 0; at < out_.size() && ok_;) {
    ssize_t n = ::write(fd_, out_.data() + at, out_.size() - at);
    if (n <= 0) ok_ = false;
    else at += size_t(n);
  }
  written_ += out_.size();
  out_.clear();
}

// Over bytes already emitted (a header's count or checksum: never split by a flush).
void SectionWriter::patch(uint64_t at, std::string_view bytes) {
  if (at >= written_) {
    std::memcpy(out_.data() + (at - written_), bytes.data(), bytes.size());
  } else if (::pwrite(fd_, bytes.data(), bytes.size(), off_t(at)) != ssize_t(bytes.size())) {
    ok_ = false;
  }
}

// Appended in place: a fleet of thousands of ranks is one buffer (or file), not a copy per section.
void SectionWriter::add(uint32_t t, std::string_view raw, bool compress, int level) {
  std::string compressed;
  uint8_t flags = 0;
  if (compress && raw.size() > 64) {
    compressed.resize(ZSTD_compressBound(raw.size()));
    size_t n = ZSTD_compress(compressed.data(), compressed.size(), raw.data(), raw.size(), level);
    if (!ZSTD_isError(n) && n < raw.size()) compressed.resize(n), flags = kZstd;
  }
  std::string_view stored = flags ? std::string_view(compressed) : raw;
  ByteWriter w;
  w.u32(t);
  w.u8(flags);
  w.u64(raw.size());
  w.u64(stored.size());
  w.u32(section_crc(w.bytes, stored));
  emit(w.bytes);
  emit(stored);
  ++count_;
}

void SectionWriter::add_stored(const StoredSection& s) {
  emit(s.head);
  emit(s.stored);
  ++count_;
}

void SectionWriter::begin_section(uint32_t t, uint64_t raw_size) {
  ByteWriter w;
  w.u32(t);
  w.u8(0);
  w.u64(raw_size);
  w.u64(raw_size);
  open_crc_ = crc32(w.bytes);
  w.u32(0);  // the checksum, known at end_section()
  open_at_ = size();
  open_left_ = raw_size;
  emit(w.bytes);
}

void SectionWriter::append(std::string_view piece) {
  if (piece.size() > open_left_) ok_ = false, piece = piece.substr(0, size_t(open_left_));
  open_crc_ = libdeflate_crc32(open_crc_, piece.data(), piece.size());
  open_left_ -= piece.size();
  emit(piece);
}

void SectionWriter::end_section() {
  if (open_left_) ok_ = false;  // fewer bytes than announced
  char crc[4];
  std::memcpy(crc, &open_crc_, 4);
  patch(open_at_ + kCoveredHeadBytes, std::string_view(crc, 4));
  ++count_;
}

std::string SectionWriter::finish() {
  char count[4];
  std::memcpy(count, &count_, 4);
  patch(kMagicBytes + 4, std::string_view(count, 4));
  if (fd_ < 0) {
    out_.shrink_to_fit();  // grown by doubling: thousands of summaries would hold up to twice their bytes
    return std::move(out_);
  }
  flush();
  return {};
}

StoredFile scan_sections(std::string_view bytes, std::string_view magic, uint32_t newest_version, std::string_view what,
                         bool check_sums) {
  StoredFile out;
  auto fail = [&](std::string message) {
    out.sections.clear();
    out.error = std::string(what) + ": " + message;
    return out;
  };
  if (bytes.size() < kMagicBytes || bytes.substr(0, magic.size()) != magic)
    return fail("not a Sightline " + std::string(what) + " (wrong magic at byte 0)");
  ByteReader r(bytes.substr(kMagicBytes), kMagicBytes);
  out.version = r.u32("version");
  uint32_t count = r.u32("section count");
  if (!r.ok()) return fail(r.error());
  if (out.version == 0 || out.version > newest_version)
    return fail("format version " + std::to_string(out.version) + " at byte 8 is not one this Sightline reads (up to " +
                std::to_string(newest_version) + ")");
  if (count > r.left() / kSectionHeadBytes) return fail("section count " + std::to_string(count) + " exceeds the file at byte 12");
  out.sections.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    StoredSection s;
    s.index = i;
    s.offset = r.offset();
    s.head = bytes.substr(size_t(s.offset), std::min<size_t>(kSectionHeadBytes, bytes.size() - size_t(s.offset)));
    s.tag = r.u32("section tag");
    s.flags = r.u8("section flags");
    s.raw_size = r.u64("section size");
    uint64_t stored_size = r.u64("section stored size");
    uint32_t crc = r.u32("section checksum");
    auto name = [&] { return "section " + tag_text(s.tag) + " #" + std::to_string(i); };  // for an error only
    if (!r.ok()) return fail(name() + ": " + r.error());
    if (stored_size > r.left()) return fail(name() + " at byte " + std::to_string(s.offset) + ": cut short (" +
                                            std::to_string(stored_size) + " bytes stored, " + std::to_string(r.left()) + " left)");
    s.stored = r.bytes(size_t(stored_size), "section bytes");
    if (check_sums && section_crc(s.head, s.stored) != crc)
      return fail(name() + " at byte " + std::to_string(s.offset) + ": checksum mismatch");
    if (s.flags > kZstd || s.raw_size > kLargestSection || (!s.flags && s.raw_size != stored_size))
      return fail(name() + " at byte " + std::to_string(s.offset) + ": bad header");
    out.sections.push_back(s);
  }
  if (!r.at_end()) return fail(std::to_string(r.left()) + " stray bytes after the last section at byte " + std::to_string(r.offset()));
  return out;
}

bool unpack_section(const StoredSection& s, std::string& raw, std::string& error) {
  if (s.flags != kZstd) return raw.assign(s.stored), true;
  bool ok = decompress_into(s.stored, s.raw_size, raw);
  if (!ok) error = "section " + tag_text(s.tag) + " #" + std::to_string(s.index) + " at byte " + std::to_string(s.offset) + ": does not decompress";
  return ok;
}

std::string without_sections(std::string_view magic, uint32_t version, const StoredFile& file, uint32_t tag) {
  SectionWriter w(magic, version);
  for (const StoredSection& s : file.sections)
    if (s.tag != tag) w.add_stored(s);
  return w.finish();
}

SectionFile read_sections(std::string_view bytes, std::string_view magic, uint32_t newest_version, std::string_view what) {
  SectionFile out;
  StoredFile stored = scan_sections(bytes, magic, newest_version, what);
  if (!stored.ok()) return out.error = stored.error, out;
  out.version = stored.version;
  for (const StoredSection& s : stored.sections) {
    Section sec;
    sec.tag = s.tag;
    sec.offset = s.offset;
    std::string error;
    if (!unpack_section(s, sec.data, error)) {
      out.sections.clear();
      out.error = std::string(what) + ": " + error;
      return out;
    }
    out.sections.push_back(std::move(sec));
  }
  return out;
}

void reseal_sections(std::string& bytes) {
  size_t at = kMagicBytes + 8;
  while (at + kSectionHeadBytes <= bytes.size()) {
    uint64_t stored_size = 0;
    std::memcpy(&stored_size, bytes.data() + at + 13, 8);
    size_t body = at + kSectionHeadBytes;
    size_t n = size_t(std::min<uint64_t>(stored_size, bytes.size() - body));
    std::string inner = bytes.substr(body, n);
    if (inner.size() >= kMagicBytes && inner.compare(0, 7, "SLRANKS") == 0) {
      reseal_sections(inner);
      bytes.replace(body, n, inner);
    }
    uint32_t crc = section_crc(std::string_view(bytes).substr(at), std::string_view(bytes).substr(body, n));
    std::memcpy(bytes.data() + at + 21, &crc, 4);
    at = body + n;
  }
}

}  // namespace sl::fleet
