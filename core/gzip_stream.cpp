#include "core/gzip_stream.h"

#include <libdeflate.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

namespace sl {
namespace {

bool is_gzip_at(std::string_view bytes, size_t pos) {
  return bytes.size() >= pos + 2 && uint8_t(bytes[pos]) == 0x1f && uint8_t(bytes[pos + 1]) == 0x8b;
}

// Address space for the text, reserved but not committed (MAP_NORESERVE): pages exist only once
// written, and go again when the parser releases them. 1 TB, or less where the kernel refuses.
std::shared_ptr<TraceStore::Buffer> reserve_text() {
  for (size_t size = size_t(1) << 40; size >= (size_t(64) << 20); size /= 2) {
    void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) continue;
    auto text = std::make_shared<TraceStore::Buffer>();
    text->data = static_cast<char*>(base);
    text->capacity = size - TraceStore::Buffer::kPadding;
    text->mapped_bytes = size;
    return text;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<GzipStream> GzipStream::start(std::shared_ptr<TraceStore::Buffer> compressed) {
  std::unique_ptr<GzipStream> stream(new GzipStream);
  stream->text_ = reserve_text();
  if (!stream->text_) return nullptr;
  stream->compressed_ = std::move(compressed);
  stream->thread_ = std::thread([s = stream.get()] { s->run(); });
  return stream;
}

GzipStream::~GzipStream() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  room_ready_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t GzipStream::wait_for(size_t pos) {
  std::unique_lock lock(mutex_);
  size_t need = pos + TraceStore::Buffer::kPadding;
  if (need >= wanted_) wanted_ = need + 1;
  room_ready_.notify_one();
  data_ready_.wait(lock, [&] { return done_ || published_ > need; });
  return done_ ? published_ : published_ - TraceStore::Buffer::kPadding;
}

void GzipStream::consumed(size_t pos) {
  {
    std::lock_guard lock(mutex_);
    consumed_ = pos;
  }
  room_ready_.notify_one();
}

uint64_t GzipStream::expected_size() const {
  std::lock_guard lock(mutex_);
  if (done_) return published_;
  uint64_t total_in = compressed_->size;
  if (compressed_read_ == 0) return total_in * 4;  // a guess until the first bytes decompress
  return uint64_t(double(published_) * double(total_in) / double(compressed_read_));
}

// The decompressor's thread: waits while it is kLead ahead of the parser and the parser waits for
// nothing, or until the stream is stopped (false).
bool GzipStream::wait_for_room() {
  std::unique_lock lock(mutex_);
  room_ready_.wait(lock, [&] { return stop_ || published_ < consumed_ + kLead || published_ < wanted_; });
  return !stop_;
}

void GzipStream::publish(size_t bytes, size_t compressed_pos) {
  release_compressed(compressed_pos);
  {
    std::lock_guard lock(mutex_);
    published_ = bytes;
    compressed_read_ = compressed_pos;
  }
  data_ready_.notify_one();
}

// The compressed file is mapped: its pages below `pos` are dropped too, or they would add up to
// its whole size in the resident set (read again from the page cache if ever needed).
void GzipStream::release_compressed(size_t pos) {
  if (!compressed_->mapped_bytes) return;
  static const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  size_t to = pos / page * page;
  if (to < compressed_released_ + (size_t(4) << 20)) return;  // a call per 4 MB at most
  ::madvise(compressed_->data + compressed_released_, to - compressed_released_, MADV_DONTNEED);
  compressed_released_ = to;
}

// Ends the stream: the text is what was written, followed by zeros (a failed whole-member try
// may have left bytes past it).
void GzipStream::finish(std::string error) {
  std::memset(text_->data + written_, 0, TraceStore::Buffer::kPadding);
  {
    std::lock_guard lock(mutex_);
    error_ = std::move(error);
    published_ = written_;  // text_->size stays 0: the parser's size is what wait_for says
    done_ = true;
  }
  data_ready_.notify_all();
}

// Concatenated members, as gunzip() reads them (file_reader.h): trailing zeros end the stream,
// other trailing data is an error, a member cut short ends the text where its bytes end.
void GzipStream::run() {
  std::string_view in = compressed_->view();
  size_t pos = 0;
  while (pos < in.size()) {
    if (!is_gzip_at(in, pos)) {
      if (in.find_first_not_of('\0', pos) == std::string_view::npos) break;
      return finish("data after gzip member at compressed byte " + std::to_string(pos) + " is not gzip");
    }
    if (!wait_for_room()) return finish("");
    if (!decompress_member(pos)) return;
  }
  finish("");
}

// Decodes the member at `pos` and moves `pos` past it; false when the stream ended (finish()).
bool GzipStream::decompress_member(size_t& pos) {
  static thread_local std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> decoder(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  std::string_view in = compressed_->view();
  size_t used = 0, produced = 0;
  size_t room = std::min(kMemberTry, text_->capacity - written_);
  if (decoder && libdeflate_gzip_decompress_ex(decoder.get(), in.data() + pos, in.size() - pos, text_->data + written_,
                                               room, &used, &produced) == LIBDEFLATE_SUCCESS) {
    written_ += produced;
    pos += used;
    publish(written_, pos);
    return true;
  }
  // Too large for one try, cut off or corrupt: zlib tells these apart, step by step.
  if (!inflate_member(pos, used)) return false;
  pos += used;
  return true;
}

// zlib's streaming inflate of the member at `pos`, kInflateStep bytes of text at a time; `used`
// becomes the member's compressed size. False when the stream ended (finish() called).
bool GzipStream::inflate_member(size_t pos, size_t& used) {
  std::string_view in = compressed_->view().substr(pos);
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return finish("out of memory while decompressing"), false;  // 16: gzip
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&z};
  size_t fed = 0;
  for (;;) {
    if (z.avail_in == 0 && fed < in.size()) {  // zlib counts in 32 bits: feed it in slices
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + fed));
      z.avail_in = static_cast<uInt>(std::min<size_t>(in.size() - fed, 1u << 30));
      fed += z.avail_in;
    }
    if (!wait_for_room()) return finish(""), false;
    if (written_ == text_->capacity)
      return finish("the decompressed trace is larger than the " + std::to_string(text_->capacity) +
                    " bytes reserved for it"),
             false;
    z.next_out = reinterpret_cast<Bytef*>(text_->data + written_);
    z.avail_out = static_cast<uInt>(std::min(kInflateStep, text_->capacity - written_));
    uInt room = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    written_ += room - z.avail_out;
    publish(written_, pos + z.total_in);
    if (rc == Z_STREAM_END) {
      used = z.total_in;
      return true;
    }
    if (rc == Z_MEM_ERROR) return finish("out of memory while decompressing"), false;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR)
      return finish("corrupt or truncated gzip data in the member starting at compressed byte " + std::to_string(pos)),
             false;
    if (z.avail_in == 0 && fed == in.size() && z.avail_out != 0) {  // the input stops mid-member: cut off
      cut_at_ = compressed_->size;
      return finish(""), false;
    }
  }
}

}  // namespace sl
