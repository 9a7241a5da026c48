// The container both fleet formats share: an 8-byte magic, a format version, then sections, each
// with its tag, its raw and stored sizes and a CRC-32 of that header and the stored bytes
// (zstd-compressed when that is smaller). Reading checks every bound and every checksum before a byte is parsed, and
// names what failed and where ("section RANK #3 at byte 1234: checksum mismatch").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/fleet/byte_io.h"

namespace sl::fleet {

constexpr uint32_t tag(const char (&s)[5]) {
  return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 | uint32_t(uint8_t(s[3])) << 24;
}
std::string tag_text(uint32_t tag);

struct Section {
  uint32_t tag = 0;
  std::string data;     // raw (decompressed) bytes
  uint64_t offset = 0;  // of the section's header in the container
};

// A section as it is stored: checked (bounds, header, checksum) but not decompressed.
struct StoredSection {
  uint32_t tag = 0;
  uint8_t flags = 0;  // 1: zstd
  uint64_t raw_size = 0;
  std::string_view head;    // its header bytes
  std::string_view stored;  // its stored bytes
  uint64_t offset = 0;      // of its header in the container
  uint32_t index = 0;       // among the container's sections
};

struct StoredFile {
  uint32_t version = 0;
  std::vector<StoredSection> sections;
  std::string error;  // as SectionFile's
  bool ok() const { return error.empty(); }
};

// Checks the container and every section's checksum without decompressing any (the views point
// into `bytes`). `check_sums` false: bytes whose checksums were verified before (a fleet's packed
// summaries), only their bounds and headers checked again.
StoredFile scan_sections(std::string_view bytes, std::string_view magic, uint32_t newest_version, std::string_view what,
                         bool check_sums = true);
// A section's raw bytes; false when they do not decompress (`error` says where).
bool unpack_section(const StoredSection& s, std::string& raw, std::string& error);
// The container again without the sections tagged `tag` (the others copied as stored).
std::string without_sections(std::string_view magic, uint32_t version, const StoredFile& file, uint32_t tag);

class SectionWriter {
public:
  // Into memory: finish() returns the container's bytes.
  SectionWriter(std::string_view magic, uint32_t version);
  // Straight into the open file `fd` (from its current start), a megabyte at a time, so that a
  // fleet of gigabytes is never a second copy in memory; finish() returns "", ok() says whether
  // every write went through.
  SectionWriter(std::string_view magic, uint32_t version, int fd);
  // Compressed with zstd at `level` when that makes it smaller.
  void add(uint32_t tag, std::string_view raw, bool compress = true, int level = 3);
  // A section copied as another container stored it (its checksum still holds).
  void add_stored(const StoredSection& s);
  // A section of `raw_size` bytes stored as they are, given piece by piece, then ended.
  void begin_section(uint32_t tag, uint64_t raw_size);
  void append(std::string_view piece);
  void end_section();
  // Bytes of the container so far (where the next section's header goes).
  uint64_t size() const { return written_ + out_.size(); }
  // The container's bytes (in memory); the writer is spent afterwards.
  std::string finish();
  bool ok() const { return ok_; }

private:
  void emit(std::string_view bytes);
  void flush();
  void patch(uint64_t at, std::string_view bytes);
  std::string out_;  // magic, version, count (patched by finish), then each section as added
  int fd_ = -1;
  uint64_t written_ = 0;  // bytes already in the file (file mode)
  bool ok_ = true;
  uint32_t count_ = 0;
  uint64_t open_at_ = 0, open_left_ = 0;  // the section being appended: its header, its bytes to come
  uint32_t open_crc_ = 0;
};

struct SectionFile {
  uint32_t version = 0;
  std::vector<Section> sections;
  std::string error;  // non-empty: damaged or not this format; nothing else is set
  bool ok() const { return error.empty(); }
};

// `what` names the format in errors ("fleet file", "rank summary"); a version above
// `newest_version` is refused (written by a newer Sightline).
SectionFile read_sections(std::string_view bytes, std::string_view magic, uint32_t newest_version, std::string_view what);

// For the fuzzer: recomputes every section's checksum (and those of a rank summary nested in a
// section), within the bytes there are, so mutated inputs reach the parsers behind the checks.
void reseal_sections(std::string& bytes);

}  // namespace sl::fleet
