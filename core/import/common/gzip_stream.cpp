#include "core/import/common/gzip_stream.h"
#include "core/store/cores.h"

#include <libdeflate.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace sl {
namespace {

bool is_gzip_at(std::string_view bytes, size_t pos) {
  return bytes.size() >= pos + 2 && uint8_t(bytes[pos]) == 0x1f && uint8_t(bytes[pos + 1]) == 0x8b;
}

// Address space for the text, reserved but not committed (MAP_NORESERVE): pages exist only once
// written, and go again when the parser releases them. 1 TB, or less where the kernel refuses.
// Every page of the text is faulted in fresh (10 GB of JSON: 2.5M 4 KB faults), hence huge pages
// where transparent huge pages are on (`madvise` mode) and the file is large; the releases split
// the last one. (A small trace would pay 2 MB of resident memory for a few KB of text.)
std::shared_ptr<TraceStore::Buffer> reserve_text(bool huge_pages) {
  for (size_t size = size_t(1) << 40; size >= (size_t(64) << 20); size /= 2) {
    void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) continue;
    if (huge_pages) ::madvise(base, size, MADV_HUGEPAGE);  // a third less system time faulting the text in
    auto text = std::make_shared<TraceStore::Buffer>();
    text->data = static_cast<char*>(base);
    text->capacity = size - TraceStore::Buffer::kPadding;
    text->mapped_bytes = size;
    return text;
  }
  return nullptr;
}

// The members' offsets when every one carries its compressed size ("Sl"), with the text size
// each trailer states; false when any does not (then the file is decoded as one part).
struct IndexedMember {
  size_t in_begin = 0;
  uint64_t text_begin = 0;
};

bool member_size_field(const uint8_t* header, size_t available, uint32_t& size) {
  if (available < kGzipHeaderWithSize || header[0] != 0x1f || header[1] != 0x8b || header[2] != 8 || !(header[3] & 4))
    return false;
  size_t xlen = size_t(header[10]) | size_t(header[11]) << 8;
  if (available < 12 + xlen) return false;
  for (size_t at = 12; at + 4 <= 12 + xlen;) {
    size_t length = size_t(header[at + 2]) | size_t(header[at + 3]) << 8;
    if (header[at] == 'S' && header[at + 1] == 'l' && length == 4 && at + 8 <= 12 + xlen) {
      std::memcpy(&size, header + at + 4, 4);
      return true;
    }
    at += 4 + length;
  }
  return false;
}

bool index_members(std::string_view in, std::vector<IndexedMember>& members, uint64_t& total) {
  total = 0;
  for (size_t pos = 0; pos < in.size();) {
    if (in.find_first_not_of('\0', pos) == std::string_view::npos) break;  // zeros after the members
    uint32_t size = 0;
    if (!member_size_field(reinterpret_cast<const uint8_t*>(in.data() + pos), in.size() - pos, size)) return false;
    if (size < kGzipHeaderWithSize + 8 || size > in.size() - pos) return false;
    uint32_t text_size = 0;
    std::memcpy(&text_size, in.data() + pos + size - 4, 4);
    members.push_back({pos, total});
    total += text_size;
    pos += size;
  }
  return !members.empty();
}

// Without an index a member's size is known only once it is decoded. The last member's trailer
// states its size (mod 2^32): a file whose last member is small is made of small members
// (bgzip's 64 KB, a small trace's one member), which libdeflate decodes whole. A larger one is
// most likely torch's one member: a whole-member try would fill kMemberTry bytes before failing,
// and even one that fits keeps the whole text resident at once, where zlib's steps keep kLead.
size_t whole_member_try_unindexed(std::string_view in) {
  uint32_t last_member_size = 0;
  if (in.size() >= 4) std::memcpy(&last_member_size, in.data() + in.size() - 4, 4);
  return last_member_size <= GzipStream::kLead ? GzipStream::kLead : 0;
}

}  // namespace

std::string gzip_header_with_size(uint32_t compressed_size) {
  std::string header = {'\x1f', '\x8b', 8, 4, 0, 0, 0, 0, 0, '\xff', 8, 0, 'S', 'l', 4, 0};
  header.append(reinterpret_cast<const char*>(&compressed_size), 4);  // x86: little-endian as gzip
  return header;
}

std::unique_ptr<GzipStream> GzipStream::start(std::shared_ptr<TraceStore::Buffer> compressed) {
  std::unique_ptr<GzipStream> stream(new GzipStream);
  stream->huge_pages_ = compressed->size >= kHugePagesFrom;
  stream->text_ = reserve_text(stream->huge_pages_);
  if (!stream->text_) return nullptr;
  int shrink = compressed->size < kTinyCompressed ? 2 : compressed->size < kSmallCompressed ? 1 : 0;
  stream->lead_ >>= shrink;
  stream->inflate_step_ >>= shrink;
  stream->compressed_ = std::move(compressed);
  stream->plan_parts();
  for (auto& part : stream->parts_) part->thread = std::thread([p = part.get()] { p->run(); });
  return stream;
}

// One part, or two split at the member nearest the middle of the text when the index says where
// (and this process may use more than one core).
void GzipStream::plan_parts() {
  std::string_view in = compressed_->view();
  std::vector<IndexedMember> members;
  size_t split = 0;
  if (usable_cores() > 1 && index_members(in, members, indexed_size_) && indexed_size_ >= kSplitBytes && indexed_size_ < text_->capacity) {
    for (size_t m = 1; m < members.size(); ++m)
      if (split == 0 || std::llabs(int64_t(members[m].text_begin) - int64_t(indexed_size_ / 2)) <
                            std::llabs(int64_t(members[split].text_begin) - int64_t(indexed_size_ / 2)))
        split = m;
  } else {
    indexed_size_ = 0;
  }
  size_t whole_member_try = indexed_size_ ? kMemberTry : whole_member_try_unindexed(in);
  auto add = [&](size_t in_begin, size_t in_end, size_t base, size_t limit, bool last) {
    auto part = std::make_unique<Part>();
    part->owner = this;
    part->whole_member_try = whole_member_try;
    part->in_begin = in_begin;
    part->in_end = in_end;
    part->base = part->published = part->written = part->consumed = base;
    part->limit = limit;
    part->last = last;
    parts_.push_back(std::move(part));
  };
  if (split == 0) return add(0, in.size(), 0, text_->capacity, true);
  add(0, members[split].in_begin, 0, members[split].text_begin, false);
  add(members[split].in_begin, in.size(), members[split].text_begin, text_->capacity, true);
}

GzipStream::~GzipStream() {
  for (auto& part : parts_) {
    {
      std::lock_guard lock(part->mutex);
      part->stop = true;
    }
    part->room_ready.notify_all();
  }
  for (auto& part : parts_)
    if (part->thread.joinable()) part->thread.join();
}

GzipStream::Part& GzipStream::part_of(size_t pos) const {
  return parts_.size() > 1 && pos >= parts_[1]->base ? *parts_[1] : *parts_[0];
}

size_t GzipStream::wait_for(size_t pos) {
  Part& part = part_of(pos);
  size_t readable = part.wait_for(pos);
  // The first part's last bytes are followed by the second's first ones: they are its padding.
  if (!part.last && readable == part.limit) parts_[1]->wait_for(part.limit);
  return readable;
}

size_t GzipStream::Part::wait_for(size_t pos) {
  std::unique_lock lock(mutex);
  size_t need = pos + TraceStore::Buffer::kPadding;
  if (need >= wanted) wanted = need + 1;
  room_ready.notify_one();
  data_ready.wait(lock, [&] { return done || published > need; });
  return done ? published : published - TraceStore::Buffer::kPadding;
}

void GzipStream::consumed(size_t pos) {
  Part& part = part_of(pos);
  {
    std::lock_guard lock(part.mutex);
    part.consumed = std::max(part.consumed, pos);
  }
  part.room_ready.notify_one();
}

bool GzipStream::ended() const {
  for (const auto& part : parts_) {
    std::lock_guard lock(part->mutex);
    if (!part->done) return false;
  }
  return true;
}

std::string GzipStream::error() const {
  for (const auto& part : parts_)
    if (!part->error.empty()) return part->error;  // the first in file order, as one pass finds it
  return {};
}

uint64_t GzipStream::expected_size() const {
  if (indexed_size_) return indexed_size_;
  const Part& part = *parts_.front();
  std::lock_guard lock(part.mutex);
  if (part.done) return part.published;
  uint64_t total_in = compressed_->size;
  if (part.compressed_read == 0) return total_in * 4;  // a guess until the first bytes decompress
  return uint64_t(double(part.published) * double(total_in) / double(part.compressed_read));
}

// The decompressor's thread: waits while it is `lead` ahead of the parser and the parser waits
// for nothing, or until the stream is stopped (false).
bool GzipStream::Part::wait_for_room(size_t lead) {
  std::unique_lock lock(mutex);
  room_ready.wait(lock, [&] { return stop || published < consumed + lead || published < wanted; });
  return !stop;
}

void GzipStream::Part::publish(size_t compressed_pos) {
  release_compressed(compressed_pos);
  {
    std::lock_guard lock(mutex);
    published = written;
    compressed_read = compressed_pos;
  }
  data_ready.notify_all();
}

// The compressed file is mapped: its pages below `pos` are dropped too, or they would add up to
// its whole size in the resident set (read again from the page cache if ever needed).
void GzipStream::Part::release_compressed(size_t pos) {
  const TraceStore::Buffer& compressed = *owner->compressed_;
  if (!compressed.mapped_bytes) return;
  static const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  size_t from = std::max<size_t>(compressed_released, (in_begin + page - 1) / page * page);
  size_t to = pos / page * page;
  // A call per 256 KB at most: a 15 MB trace is ~1 MB of gzip, all of it resident with 1 MB steps.
  if (to < from + kReleaseCompressedStep) return;
  ::madvise(compressed.data + from, to - from, MADV_DONTNEED);
  compressed_released = to;
}

// Ends the part: its text is what was written. The last part's is followed by zeros (a failed
// whole-member try may have left bytes past it).
void GzipStream::Part::finish(std::string message) {
  if (last) std::memset(owner->text_->data + written, 0, TraceStore::Buffer::kPadding);
  {
    std::lock_guard lock(mutex);
    error = std::move(message);
    published = written;  // text_->size stays 0: the parser's size is what wait_for says
    done = true;
  }
  data_ready.notify_all();
}

// Concatenated members, as gunzip() reads them (file_reader.h): trailing zeros end the stream,
// other trailing data is an error, a member cut short ends the text where its bytes end.
void GzipStream::Part::run() {
  std::string_view in = owner->compressed_->view().substr(0, in_end);
  size_t pos = in_begin;
  while (pos < in.size()) {
    if (!is_gzip_at(in, pos)) {
      if (in.find_first_not_of('\0', pos) == std::string_view::npos) break;
      return finish("data after gzip member at compressed byte " + std::to_string(pos) + " is not gzip");
    }
    if (!wait_for_room(owner->lead_ + whole_member_try)) return finish("");
    if (!decompress_member(pos)) return;
  }
  if (!last && (written != limit || pos != in_end))  // the members' "Sl" sizes did not hold
    return finish("corrupt or truncated gzip data in the member starting at compressed byte " + std::to_string(in_end));
  finish("");
}

// Decodes the member at `pos` and moves `pos` past it; false when the part ended (finish()).
bool GzipStream::Part::decompress_member(size_t& pos) {
  static thread_local std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> decoder(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  std::string_view in = owner->compressed_->view().substr(0, in_end);
  size_t used = 0, produced = 0;
  size_t room = std::min(whole_member_try, limit - written);
  if (room && decoder && libdeflate_gzip_decompress_ex(decoder.get(), in.data() + pos, in.size() - pos,
                                               owner->text_->data + written, room, &used, &produced) == LIBDEFLATE_SUCCESS) {
    written += produced;
    pos += used;
    publish(pos);
    return true;
  }
  // Too large for one try, cut off or corrupt: zlib tells these apart, step by step.
  if (!inflate_member(pos, used)) return false;
  pos += used;
  return true;
}

// zlib's streaming inflate of the member at `pos`, inflate_step_ bytes of text at a time; `used`
// becomes the member's compressed size. False when the part ended (finish() called).
bool GzipStream::Part::inflate_member(size_t pos, size_t& used) {
  std::string_view in = owner->compressed_->view().substr(0, in_end).substr(pos);
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
    if (!wait_for_room(owner->lead_)) return finish(""), false;
    if (written == limit) {
      if (!last) break;  // more text than the index said: corrupt
      return finish("the decompressed trace is larger than the " + std::to_string(limit) + " bytes reserved for it"), false;
    }
    z.next_out = reinterpret_cast<Bytef*>(owner->text_->data + written);
    z.avail_out = static_cast<uInt>(std::min(owner->inflate_step_, limit - written));
    uInt room = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    written += room - z.avail_out;
    publish(pos + z.total_in);
    if (rc == Z_STREAM_END) {
      used = z.total_in;
      return true;
    }
    if (rc == Z_MEM_ERROR) return finish("out of memory while decompressing"), false;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_STREAM_ERROR) break;
    if (z.avail_in == 0 && fed == in.size() && z.avail_out != 0) {  // the input stops mid-member: cut off
      if (!last) break;  // an indexed member is whole: its index lied
      cut_at = owner->compressed_->size;
      return finish(""), false;
    }
  }
  return finish("corrupt or truncated gzip data in the member starting at compressed byte " + std::to_string(pos)), false;
}

}  // namespace sl
