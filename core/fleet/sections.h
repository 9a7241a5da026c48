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

class SectionWriter {
public:
  SectionWriter(std::string_view magic, uint32_t version);
  void add(uint32_t tag, std::string_view raw, bool compress = true);
  // The container's bytes; the writer is spent afterwards.
  std::string finish();

private:
  std::string out_;  // magic, version, count (patched by finish), then each section as added
  uint32_t count_ = 0;
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
