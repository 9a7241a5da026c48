// Decompresses a gzip file while the loader parses it, so the whole text never exists at once.
//
// A thread of its own decompresses into one large reserved address range: the text keeps fixed
// offsets (the loader's positions, error offsets and chunk brackets work as on a mapped file),
// but only a window of it is resident. The parser hands back what it has parsed (`consumed`),
// and the decompressor stays at most kLead bytes ahead of that point unless the parser waits for
// more. Members that decode to a few MB (bgzip, pigz --independent, make_synthetic_trace --gzip)
// go through libdeflate whole, twice as fast as zlib; a larger member (a single-member file from
// torch) through zlib's streaming inflate, 1 MB at a time.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "core/trace_store.h"

namespace sl {

class GzipStream {
public:
  static constexpr size_t kLead = 2 << 20;        // how far the decompressor may run ahead
  static constexpr size_t kMemberTry = 4 << 20;   // members up to this size decode whole
  static constexpr size_t kInflateStep = 256 << 10;

  // Starts decompressing `compressed` (whole gzip file bytes, kept alive by the stream).
  // Null when the address range cannot be reserved.
  static std::unique_ptr<GzipStream> start(std::shared_ptr<TraceStore::Buffer> compressed);
  ~GzipStream();  // stops the thread and waits for it
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // The text's bytes: `data` is the reserved range, `capacity` its usable size. Bytes below
  // what `wait_for` returned are the text; nothing else may be read.
  std::shared_ptr<TraceStore::Buffer> text() const { return text_; }
  // Waits until byte `pos` is readable (with TraceStore::Buffer::kPadding readable bytes after
  // it) or the stream has ended, and returns how many bytes are readable. Once the stream has
  // ended this is the whole text's size, followed by kPadding zeros.
  size_t wait_for(size_t pos);
  // The bytes below `pos` will not be read again: the decompressor may run ahead of it.
  void consumed(size_t pos);

  bool ended() const {
    std::lock_guard lock(mutex_);
    return done_;
  }
  // After the stream has ended:
  const std::string& error() const { return error_; }  // non-empty: corrupt data, out of memory
  bool cut_off() const { return cut_at_ != 0; }         // the file stops mid-stream
  uint64_t cut_at() const { return cut_at_; }           // its compressed size, then
  // Uncompressed bytes expected in all, extrapolated from the compressed bytes read so far.
  uint64_t expected_size() const;

private:
  GzipStream() = default;
  void run();
  bool decompress_member(size_t& pos);
  bool inflate_member(size_t pos, size_t& used);
  bool wait_for_room();
  void publish(size_t bytes, size_t compressed_pos);
  void release_compressed(size_t pos);
  void finish(std::string error);

  std::shared_ptr<TraceStore::Buffer> compressed_, text_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable data_ready_, room_ready_;
  size_t published_ = 0;   // text bytes written (the decompressor's own count: `written_`)
  size_t written_ = 0;
  size_t consumed_ = 0;
  size_t wanted_ = 0;      // the parser waits for the text to reach this size
  uint64_t compressed_read_ = 0;
  size_t compressed_released_ = 0;  // the decompressor's thread only
  bool done_ = false, stop_ = false;
  std::string error_;
  uint64_t cut_at_ = 0;
};

}  // namespace sl
