// libFuzzer target: the streaming `.json.gz` path (core/import/common/gzip_stream.h). Input that starts with
// the gzip magic is loaded as it is (corrupt, cut-off and multi-member streams); other input is
// the JSON, written as gzip members of 1 to 64 bytes (its last byte picks the size) so that
// member and decompression boundaries fall everywhere. A store or a clean error, never a crash.
#include <libdeflate.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "core/import/trace_loader.h"
#include "tests/fuzz/exercise_store.h"

namespace {

std::string as_gzip_members(std::string_view json, size_t member) {
  static libdeflate_compressor* compressor = libdeflate_alloc_compressor(1);
  std::string out, piece;
  for (size_t at = 0; at < json.size(); at += member) {
    std::string_view part = json.substr(at, member);
    piece.resize(libdeflate_gzip_compress_bound(compressor, part.size()));
    piece.resize(libdeflate_gzip_compress(compressor, part.data(), part.size(), piece.data(), piece.size()));
    out += piece;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  bool raw_gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  std::string bytes = raw_gzip ? std::string(input) : as_gzip_members(input, size ? 1 + data[size - 1] % 64 : 1);
  static const std::string path = "/tmp/sightline_fuzz_loader_gz_" + std::to_string(::getpid()) + ".json.gz";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  sl::LoadResult r = sl::load_trace(path);
  if (r.ok()) sl::fuzz::exercise_store(*r.store);
  return 0;
}
