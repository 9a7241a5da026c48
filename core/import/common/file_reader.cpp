#include "core/import/common/file_reader.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <zlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sl {
namespace {

constexpr size_t kReadChunk = 16 << 20;

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b;
}

void report(const LoadOptions& options, const char* phase, uint64_t done, uint64_t total) {
  if (!options.on_progress) return;
  LoadProgress p;
  p.phase = phase;
  p.bytes_done = done;
  p.bytes_total = total;
  options.on_progress(p);
}

bool cancelled(const LoadOptions& options) { return options.cancel && options.cancel->load(); }

enum class PartialResult { Whole, CutOff, Corrupt, OutOfMemory };

// libdeflate decodes whole buffers only, so a member it refused is decoded again with zlib's
// streaming inflate, which hands over every byte before the point where the input stops. Only
// this slow path uses zlib; whole streams keep libdeflate's speed. `used` is the input consumed.
PartialResult inflate_member(std::string_view in, TraceStore::Buffer& out, size_t& used) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return PartialResult::OutOfMemory;  // 16: gzip wrapper
  size_t fed = 0;
  PartialResult result = PartialResult::CutOff;
  for (;;) {
    if (z.avail_in == 0 && fed < in.size()) {  // zlib counts in 32 bits: feed it in slices
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
      z.avail_in = static_cast<uInt>(std::min<size_t>(in.size() - fed, 1u << 30));
      fed += z.avail_in;
    }
    if (out.size == out.capacity && !out.reserve(out.capacity * 2)) {
      result = PartialResult::OutOfMemory;
      break;
    }
    z.next_out = reinterpret_cast<Bytef*>(out.data + out.size);
    z.avail_out = static_cast<uInt>(std::min<size_t>(out.capacity - out.size, 1u << 30));
    uInt room = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    out.size += room - z.avail_out;
    if (rc == Z_STREAM_END) {
      result = PartialResult::Whole;
      break;
    }
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR) {
      result = rc == Z_MEM_ERROR ? PartialResult::OutOfMemory : PartialResult::Corrupt;
      break;
    }
    if (z.avail_in == 0 && fed == in.size() && z.avail_out != 0) break;  // input exhausted mid-stream
  }
  used = z.total_in;
  inflateEnd(&z);
  return result;
}

}  // namespace

bool gunzip(std::string_view in, TraceStore::Buffer& out, std::string& error, uint64_t* cut_at) {
  std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> d(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  // The last member's trailer holds its size mod 2^32: a fair first guess for one member.
  uint32_t isize = 0;
  if (in.size() >= 4) std::memcpy(&isize, in.data() + in.size() - 4, 4);
  size_t guess = std::max<size_t>({size_t(isize) + 1, in.size() * 4, 1 << 16});
  if (!out.reserve(guess)) return error = "out of memory", false;
  out.size = 0;
  size_t pos = 0;
  while (pos < in.size()) {
    if (!is_gzip(in.substr(pos))) {
      // Trailing zeros (padding written by some tools) end the stream; anything else is an error.
      if (in.find_first_not_of('\0', pos) == std::string_view::npos) break;
      error = "data after gzip member at compressed byte " + std::to_string(pos) + " is not gzip";
      return false;
    }
    size_t used_in = 0, produced = 0;
    libdeflate_result r = libdeflate_gzip_decompress_ex(d.get(), in.data() + pos, in.size() - pos,
                                                        out.data + out.size, out.capacity - out.size,
                                                        &used_in, &produced);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE) {
      if (!out.reserve(out.capacity * 2)) return error = "out of memory while decompressing", false;
      continue;
    }
    if (r != LIBDEFLATE_SUCCESS && cut_at) {
      PartialResult partial = inflate_member(in.substr(pos), out, used_in);
      if (partial == PartialResult::CutOff) {
        *cut_at = in.size();
        break;
      }
      if (partial == PartialResult::OutOfMemory) return error = "out of memory while decompressing", false;
      if (partial == PartialResult::Whole) {
        pos += used_in;
        continue;
      }
    }
    if (r != LIBDEFLATE_SUCCESS) {
      error = "corrupt or truncated gzip data in the member starting at compressed byte " + std::to_string(pos);
      return false;
    }
    pos += used_in;
    out.size += produced;
  }
  std::memset(out.data + out.size, 0, TraceStore::Buffer::kPadding);
  return true;
}

// Maps the file privately (no copy; the loader's in-place edits stay private) followed by an
// anonymous page, so the simdjson padding past the end is readable zeros.
std::shared_ptr<TraceStore::Buffer> map_file(int fd, size_t size) {
  if (size == 0) return nullptr;
  size_t length = size + TraceStore::Buffer::kPadding + 4096;
  void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  // No MAP_POPULATE: pages fault in as the parser reaches them, on both parsing threads at once.
  if (::mmap(base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
    ::munmap(base, length);
    return nullptr;
  }
  ::madvise(base, size, MADV_SEQUENTIAL);
  ::madvise(base, size, MADV_WILLNEED);
  auto buffer = std::make_shared<TraceStore::Buffer>();
  buffer->data = static_cast<char*>(base);
  buffer->size = buffer->capacity = size;
  buffer->mapped_bytes = length;
  return buffer;
}

FileBytes read_trace_file(const std::string& path, const LoadOptions& options, bool stream_gzip) {
  FileBytes result;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    result.error = std::strerror(errno);
    return result;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    result.error = S_ISDIR(st.st_mode) ? "is a directory" : std::strerror(errno);
    ::close(fd);
    return result;
  }
  size_t expected = static_cast<size_t>(st.st_size);
  if (S_ISREG(st.st_mode)) {
    report(options, "reading", 0, expected);
    if (auto mapped = map_file(fd, expected)) {
      ::close(fd);
      if (!is_gzip(mapped->view())) {
        result.buffer = std::move(mapped);
        return result;
      }
      result.was_gzip = true;
      if (stream_gzip && (result.stream = GzipStream::start(mapped))) {
        result.buffer = result.stream->text();
        return result;
      }
      report(options, "decompressing", 0, mapped->size);
      auto plain = std::make_shared<TraceStore::Buffer>();
      if (gunzip(mapped->view(), *plain, result.error, &result.gzip_cut_at)) result.buffer = std::move(plain);
      result.gzip_truncated = result.gzip_cut_at != 0;
      return result;
    }
  }
  auto raw = std::make_shared<TraceStore::Buffer>();
  if (!raw->reserve(expected + 1)) {  // +1: EOF is seen without growing
    ::close(fd);
    result.error = "out of memory";
    return result;
  }
  for (;;) {
    if (raw->size == raw->capacity && !raw->reserve(raw->capacity * 2)) {
      result.error = "out of memory";
      break;
    }
    ssize_t n = ::read(fd, raw->data + raw->size, std::min(kReadChunk, raw->capacity - raw->size));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      result.error = std::strerror(errno);
      break;
    }
    if (n == 0) break;
    raw->size += static_cast<size_t>(n);
    report(options, "reading", raw->size, expected);
    if (cancelled(options)) {
      result.error = "cancelled";
      break;
    }
  }
  ::close(fd);
  if (!result.error.empty()) return result;
  std::memset(raw->data + raw->size, 0, TraceStore::Buffer::kPadding);
  if (!is_gzip(raw->view())) {
    result.buffer = std::move(raw);
    return result;
  }
  result.was_gzip = true;
  report(options, "decompressing", 0, raw->size);
  auto plain = std::make_shared<TraceStore::Buffer>();
  if (!gunzip(raw->view(), *plain, result.error, &result.gzip_cut_at)) return result;
  result.gzip_truncated = result.gzip_cut_at != 0;
  result.buffer = std::move(plain);
  return result;
}

}  // namespace sl
