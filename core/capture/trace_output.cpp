#include "core/capture/trace_output.h"

#include <libdeflate.h>

#include <filesystem>
#include <fstream>

namespace sl::capture {

bool write_trace_file(const std::string& path, const std::string& text, std::string& why) {
  namespace fs = std::filesystem;
  std::string bytes;
  if (path.ends_with(".gz")) {
    libdeflate_compressor* c = libdeflate_alloc_compressor(6);
    if (!c) return why = "out of memory", false;
    bytes.resize(libdeflate_gzip_compress_bound(c, text.size()));
    size_t n = libdeflate_gzip_compress(c, text.data(), text.size(), bytes.data(), bytes.size());
    libdeflate_free_compressor(c);
    if (!n) return why = "compression failed", false;
    bytes.resize(n);
  }
  const std::string& out = path.ends_with(".gz") ? bytes : text;
  std::string partial = path + ".partial";
  {
    std::ofstream f(partial, std::ios::binary | std::ios::trunc);
    f.write(out.data(), std::streamsize(out.size()));
    if (!f) {
      std::error_code ec;
      fs::remove(partial, ec);
      return why = "cannot write " + partial, false;
    }
  }
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) {
    fs::remove(partial, ec);
    return why = "cannot rename " + partial + " to " + path + ": " + ec.message(), false;
  }
  return true;
}

}  // namespace sl::capture
