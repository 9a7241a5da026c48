// Decompresses a gzip file while the loader parses it, so the whole text never exists at once.
//
// A thread of its own decompresses into one large reserved address range: the text keeps fixed
// offsets (the loader's positions, error offsets and chunk brackets work as on a mapped file),
// but only a window of it is resident. The parser hands back what it has parsed (`consumed`),
// and the decompressor stays at most kLead bytes ahead of that point unless the parser waits for
// more. Members that decode to a few MB (bgzip, pigz --independent, make_synthetic_trace) go
// through libdeflate whole, twice as fast as zlib; a larger member (a single-member file from
// torch) through zlib's streaming inflate, kInflateStep at a time.
//
// Members written by make_synthetic_trace carry their compressed size in a gzip extra field
// (subfield "Sl", like bgzip's "BC"): with it the members' offsets and sizes are known before
// decompressing, so a large file is split into two parts at a member near the middle, each
// decompressed by a thread of its own into its place in the range, and parsed by a parser of its
// own. A file without it (or whose index does not add up) is one part, checked as it decodes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/store/trace_store.h"

namespace sl {

class GzipStream {
public:
  static constexpr size_t kLead = 1 << 20;         // how far a decompressor may run ahead
  static constexpr size_t kMemberTry = 4 << 20;    // indexed members up to this size decode whole
  static constexpr size_t kInflateStep = 256 << 10;
  static constexpr size_t kReleaseCompressedStep = 256 << 10;  // compressed pages dropped this many at a time
  // Files below these (~40 MB and ~10 MB of JSON) get half and a quarter of the lead and the
  // step: less text resident, and the parser's chunks shrink alike (kineto_loader.cpp), so the
  // two still overlap.
  static constexpr size_t kSmallCompressed = 4 << 20, kTinyCompressed = 1 << 20;
  static constexpr size_t kSplitBytes = 48 << 20;  // indexed files above this decode in two parts
  static constexpr size_t kHugePagesFrom = 8 << 20;  // compressed bytes; below, the text has 4 KB pages

  // Starts decompressing `compressed` (whole gzip file bytes, kept alive by the stream).
  // Null when the address range cannot be reserved.
  static std::unique_ptr<GzipStream> start(std::shared_ptr<TraceStore::Buffer> compressed);
  ~GzipStream();  // stops the threads and waits for them
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // The text's bytes: `data` is the reserved range, `capacity` its usable size. Bytes below
  // what `wait_for` returned are the text; nothing else may be read.
  std::shared_ptr<TraceStore::Buffer> text() const { return text_; }
  // Waits until byte `pos` is readable (with TraceStore::Buffer::kPadding readable bytes after
  // it) or the text ends before it, and returns the end of the readable bytes from `pos` on (of
  // the part that holds `pos`; the whole text's size once the last part has ended, followed by
  // kPadding zeros). Safe from several threads.
  size_t wait_for(size_t pos);
  // The bytes below `pos` will not be read again: the decompressor may run ahead of it.
  void consumed(size_t pos);
  size_t lead() const { return lead_; }  // kLead, or less for a small file
  // The text is in 2 MB pages (a large file): a parser releases it in whole ones.
  bool huge_pages() const { return huge_pages_; }
  // Where the second part's text begins (0 when the file is one part): a parser may start there.
  size_t second_part() const { return parts_.size() > 1 ? parts_[1]->base : 0; }

  bool ended() const;  // every part has ended
  // Once ended():
  std::string error() const;  // non-empty: corrupt data, out of memory
  bool cut_off() const { return parts_.back()->cut_at != 0; }  // the file stops mid-stream
  uint64_t cut_at() const { return parts_.back()->cut_at; }    // its compressed size, then
  // Uncompressed bytes expected in all: exact for an indexed file, otherwise extrapolated from
  // the compressed bytes read so far.
  uint64_t expected_size() const;

private:
  // One thread's share: members [in_begin, in_end) decoded into text bytes [base, limit).
  struct Part {
    GzipStream* owner = nullptr;
    size_t in_begin = 0, in_end = 0, base = 0, limit = 0;
    // The most text a member decoded whole with libdeflate may make (0: zlib's streaming inflate
    // only). A try that does not fit has written this much for nothing, all of it resident.
    size_t whole_member_try = 0;
    bool last = true;
    std::thread thread;
    mutable std::mutex mutex;
    std::condition_variable data_ready, room_ready;
    size_t published = 0, written = 0, consumed = 0, wanted = 0;  // absolute text offsets
    uint64_t compressed_read = 0, compressed_released = 0;
    bool done = false, stop = false;
    std::string error;
    uint64_t cut_at = 0;

    void run();
    bool decompress_member(size_t& pos);
    bool inflate_member(size_t pos, size_t& used);
    bool wait_for_room(size_t lead);
    void publish(size_t compressed_pos);
    void release_compressed(size_t pos);
    void finish(std::string message);
    size_t wait_for(size_t pos);
  };

  GzipStream() = default;
  Part& part_of(size_t pos) const;
  void plan_parts();

  std::shared_ptr<TraceStore::Buffer> compressed_, text_;
  std::vector<std::unique_ptr<Part>> parts_;
  uint64_t indexed_size_ = 0;  // the text's size from the member index; 0 when not indexed
  size_t lead_ = kLead, inflate_step_ = kInflateStep;
  bool huge_pages_ = false;
};

// The gzip extra subfield make_synthetic_trace writes: "Sl", 4 bytes, the member's compressed
// size (little-endian). Returns the gzip header for a member of `compressed_size` bytes.
std::string gzip_header_with_size(uint32_t compressed_size);
constexpr size_t kGzipHeaderWithSize = 10 + 2 + 8;  // fixed header, XLEN, one subfield

}  // namespace sl
