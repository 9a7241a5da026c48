// The snapshot reader's sections: a bounds-checked cursor that copies columns into the store while
// it sums their checksum, and one reader per section (SNAPSHOT.md), called in id order.
#include "core/snapshot/snapshot_reader.h"

#include "core/snapshot/snapshot_format.h"
#include "core/store/args_blocks.h"
#include "core/store/huge_pages.h"

#include <libdeflate.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sl::snapshot_detail {
namespace {

// Hands the whole pages of [begin, end) of a read-only file mapping back to the kernel: they stay
// in the page cache, and reading them again maps them again. Opening a snapshot so keeps the
// file's pages out of its peak memory: each is held only while it is checked or copied.
const uintptr_t kPageBytes = uintptr_t(::sysconf(_SC_PAGESIZE));  // (set before main: no lazy init raced by two readers)

void release_pages(const char* begin, const char* end) {
  const uintptr_t page = kPageBytes;
  uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + page - 1) / page * page;
  uintptr_t to = reinterpret_cast<uintptr_t>(end) / page * page;
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

// ---------------------------------------------------------------- reading

// Reads one section; `base` is the section's offset in the file, for messages.
class Reader {
public:
  // `release`: the bytes are a file mapping whose pages may be released once copied.
  Reader(std::string_view bytes, uint64_t base, const char* section, bool release = false)
      : bytes_(bytes), base_(base), section_(section), release_(release) {}

  template <class T>
  T pod() {
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  bool flag() { return pod<uint8_t>() != 0; }
  uint64_t file_offset() const { return base_ + pos_; }
  std::string_view raw(uint64_t n) {
    if (n > bytes_.size() - pos_) fail("block of " + std::to_string(n) + " bytes runs past the section");
    return {take(n), n};
  }
  void align(size_t to = 8) { take((to - pos_ % to) % to); }
  template <class T, class Alloc>
  void column(std::vector<T, Alloc>& v) {
    uint64_t n = pod<uint64_t>();
    align();
    if (n > (bytes_.size() - pos_) / sizeof(T)) fail("column of " + std::to_string(n) + " elements runs past the section");
    size_t begin = pos_;
    const char* bytes = take(n * sizeof(T));
    v.clear();
    v.reserve(n);
    prepare_fresh_memory(v.data(), n * sizeof(T));
    // In chunks that stay in the cache between summing and copying: the section's checksum is
    // computed as it is copied, so each byte of the file is read from memory once. Copied
    // straight into the vector (no zero-filling first) when aligned, as columns are in a mapped
    // file (8-byte boundaries); bytes in memory may lie anywhere.
    constexpr size_t kChunk = std::max<size_t>(1, (64 << 10) / sizeof(T));
    bool aligned = reinterpret_cast<uintptr_t>(bytes) % alignof(T) == 0;
    for (size_t at = 0; at < n; at += kChunk) {
      size_t k = std::min<size_t>(kChunk, n - at);
      sum_to(begin + (at + k) * sizeof(T));
      if (aligned) {
        const T* first = reinterpret_cast<const T*>(bytes) + at;
        v.insert(v.end(), first, first + k);
      } else {
        v.resize(at + k);
        std::memcpy(static_cast<void*>(v.data() + at), bytes + at * sizeof(T), k * sizeof(T));
      }
      release_to(summed_);
    }
    align();
  }
  std::string_view bytes() {
    uint64_t n = pod<uint64_t>();
    if (n > bytes_.size() - pos_) fail("string of " + std::to_string(n) + " bytes runs past the section");
    std::string_view s(take(n), n);
    align();
    return s;
  }
  std::string text() { return std::string(bytes()); }
  uint64_t count(uint64_t min_bytes_each) {
    uint64_t n = pod<uint64_t>();
    if (n > (bytes_.size() - pos_) / std::max<uint64_t>(min_bytes_each, 1)) fail("count " + std::to_string(n) + " too large");
    return n;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw SnapshotError(std::string(section_) + " section: " + what, base_ + pos_);
  }
  void expect(bool ok, const char* what) const {
    if (!ok) fail(what);
  }
  void finish() const {
    if (pos_ != bytes_.size()) fail("unexpected bytes at the end");
  }
  // The CRC-32 of the whole section: what the columns' copying summed already, plus the rest.
  uint32_t checksum() {
    sum_to(bytes_.size());
    release_to(bytes_.size());
    return crc_;
  }

private:
  const char* take(size_t n) {
    if (n > bytes_.size() - pos_) fail("ends early (needs " + std::to_string(n) + " more bytes)");
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  // Adds bytes [summed_, to) to the checksum.
  void sum_to(size_t to) {
    if (to <= summed_) return;
    crc_ = libdeflate_crc32(crc_, bytes_.data() + summed_, to - summed_);
    summed_ = to;
  }
  // Hands back the pages of bytes [0, to) of a file mapping, whose contents are copied by then
  // (the arg blocks are mapped again separately), in windows of a few MB (one system call each).
  void release_to(size_t to) {
    constexpr size_t kWindow = 4 << 20;
    if (release_ && to > released_ && (to - released_ >= kWindow || to == bytes_.size())) {
      release_pages(bytes_.data() + released_, bytes_.data() + to);
      released_ = to;
    }
  }
  std::string_view bytes_;
  uint64_t base_;
  const char* section_;
  bool release_ = false;
  size_t pos_ = 0;
  size_t summed_ = 0;    // bytes [0, summed_) are in crc_
  size_t released_ = 0;  // pages of bytes [0, released_) were handed back
  uint32_t crc_ = 0;
};

void read_strings(Reader& r, StringPool& pool) {
  std::vector<uint64_t> offsets;
  r.column(offsets);
  std::string chars = r.text();
  r.expect(!offsets.empty() && offsets[0] == 0 && offsets.back() == chars.size(), "string offsets do not match the characters");
  for (size_t i = 1; i < offsets.size(); ++i) {
    r.expect(offsets[i - 1] <= offsets[i] && offsets[i] <= chars.size(), "string offsets go backwards");
    std::string_view text(chars.data() + offsets[i - 1], offsets[i] - offsets[i - 1]);
    // Ids are positions: interning in order reproduces them (id 0 is the empty string).
    r.expect(pool.intern(text) == i - 1, "string pool holds a duplicate or misplaced string");
  }
}

void read_meta(Reader& r, TraceStore& s) {
  TraceMeta& m = s.meta;
  m.file = r.text();
  m.format = r.text();
  m.bytes = r.pod<uint64_t>();
  uint64_t devices = r.count(8);
  for (uint64_t i = 0; i < devices; ++i) {
    Device d;
    d.id = r.pod<int64_t>();
    d.name = r.text();
    d.properties_json = r.text();
    m.devices.push_back(std::move(d));
  }
  bool has_rank = r.flag();
  int64_t rank = r.pod<int64_t>();
  if (has_rank) m.rank = rank;
  bool has_world = r.flag();
  int64_t world = r.pod<int64_t>();
  if (has_world) m.world_size = world;
  m.backend = r.text();
  m.display_time_unit = r.text();
  uint64_t keys = r.count(8);
  for (uint64_t i = 0; i < keys; ++i) {
    std::string key = r.text();
    m.top_level.emplace_back(std::move(key), r.text());
  }
  m.hta.from_text = r.flag();
  bool has_text_rank = r.flag();
  int64_t text_rank = r.pod<int64_t>();
  if (has_text_rank) m.hta.rank = text_rank;
  m.hta.first_event_args = r.pod<uint32_t>();
  s.counts = r.pod<EventCounts>();
  s.origin_ns = r.pod<TimeNs>();
  s.end_ns = r.pod<TimeNs>();
}

void read_issues(Reader& r, ImportIssues& issues) {
  r.expect(r.pod<uint32_t>() == uint32_t(IssueKind::kCount), "issue kinds differ from this version");
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) {
    uint64_t count = r.pod<uint64_t>();
    std::vector<uint64_t> examples;
    r.column(examples);
    r.expect(examples.size() <= ImportIssues::kExamples && examples.size() <= count, "too many issue examples");
    for (uint64_t offset : examples) issues.add(IssueKind(k), offset);
    issues.add_count(IssueKind(k), count - examples.size());
  }
  bool has_truncation = r.flag();
  Truncation t;
  t.byte_offset = r.pod<uint64_t>();
  t.events = r.pod<uint64_t>();
  t.gzip = r.flag();
  t.compressed_offset = r.pod<uint64_t>();
  if (has_truncation) issues.truncation = t;
}

void read_processes(Reader& r, TraceStore& s) {
  uint64_t n = r.count(8);
  s.processes.resize(n);
  for (Process& p : s.processes) {
    p.pid_text = r.pod<StringId>();
    p.pid = r.pod<int64_t>();
    p.pid_is_number = r.flag();
    p.name = r.pod<StringId>();
    p.labels = r.pod<StringId>();
    p.sort_index = r.pod<int64_t>();
    p.has_sort_index = r.flag();
    r.column(p.tracks);
  }
  r.column(s.process_order);
}

void read_tracks(Reader& r, TraceStore& s) {
  uint64_t n = r.count(8);
  s.tracks.resize(n);
  for (Track& t : s.tracks) {
    uint8_t kind = r.pod<uint8_t>();
    r.expect(kind <= uint8_t(TrackKind::Async), "unknown track kind");
    t.kind = TrackKind(kind);
    t.process = r.pod<uint32_t>();
    t.name = r.pod<StringId>();
    t.tid_text = r.pod<StringId>();
    t.tid = r.pod<int64_t>();
    t.tid_is_number = r.flag();
    t.sort_index = r.pod<int64_t>();
    t.has_sort_index = r.flag();
    t.device = r.pod<int64_t>();
    t.stream = r.pod<int64_t>();
    t.gpu_work = r.flag();
    t.overlapping = r.pod<uint32_t>();
    SliceColumns& c = t.slices;
    r.column(c.start); r.column(c.dur); r.column(c.name); r.column(c.cat); r.column(c.parent);
    r.column(c.args); r.column(c.corr); r.column(c.depth); r.column(c.lane);
    InstantColumns& i = t.instants;
    r.column(i.ts); r.column(i.name); r.column(i.cat); r.column(i.args); r.column(i.scope);
    r.column(t.max_end_prefix);
    r.column(t.lane_depths);
  }
}

void read_counters(Reader& r, TraceStore& s) {
  uint64_t n = r.count(8);
  s.counters.resize(n);
  for (CounterSeries& c : s.counters) {
    c.process = r.pod<uint32_t>();
    c.name = r.pod<StringId>();
    r.column(c.ts);
    r.column(c.value);
  }
}

void read_memory(Reader& r, MemoryEvents& m) {
  r.column(m.ts); r.column(m.addr); r.column(m.bytes); r.column(m.total_allocated); r.column(m.total_reserved);
  r.column(m.device_type); r.column(m.device_id); r.column(m.track); r.column(m.stream); r.column(m.stack);
  r.column(m.action); r.column(m.flags); r.column(m.stack_offsets); r.column(m.frames);
}

void read_indexes(Reader& r, TraceStore& s) {
  r.column(field<CorrActivitiesTag>(s));
  r.column(field<NameOffsetsTag>(s));
  r.column(field<NameRefsTag>(s));
  r.column(field<FlowsByFromTag>(s));
  r.column(field<FlowsByToTag>(s));
  field<LaunchLinksTag>(s) = r.pod<uint64_t>();
  field<GpuActivitiesTag>(s) = r.pod<uint64_t>();
  field<KernelsTag>(s) = r.pod<uint64_t>();
}

void read_args(Reader& r, TraceStore& s, ReadState& state) {
  std::vector<ArgsRange> ranges;
  r.column(ranges);
  field<ArgsTag>(s) = std::move(ranges);
  r.column(state.blocks);
}

// The section's bytes: with a file, a private read-only mapping of just this section (no copy,
// its pages shared with the page cache, and none resident until a block is decoded); otherwise
// a copy.
std::shared_ptr<const void> arg_blocks_owner(std::string_view bytes, uint64_t at, int fd, const char*& base) {
  if (fd >= 0 && !bytes.empty()) {
    // The mapping starts on the page holding the section's first byte.
    const uint64_t page = kPageBytes;
    uint64_t skip = at % page;
    size_t size = bytes.size() + skip;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, off_t(at - skip));
    if (map != MAP_FAILED) {
      base = static_cast<const char*>(map) + skip;
      return std::shared_ptr<const void>(map, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
    }
  }
  auto copy = std::make_shared<std::string>(bytes);
  base = copy->data();
  return copy;
}

void read_arg_blocks(Reader& r, TraceStore& s, const ReadState& state) {
  uint64_t total = 0;
  for (const BlockEntry& e : state.blocks) {
    r.expect(e.at == total, "arg blocks are not stored back to back");
    total += e.stored_size;
  }
  uint64_t section_start = r.file_offset();
  std::string_view bytes = r.raw(total);
  const char* base = nullptr;
  std::shared_ptr<const void> owner = arg_blocks_owner(bytes, section_start, state.fd, base);
  std::vector<ArgsBlocks::Block> blocks;
  blocks.reserve(state.blocks.size());
  for (const BlockEntry& e : state.blocks) blocks.push_back({e.start, e.raw_size, e.stored_size, base + e.at});
  if (!s.args_blocks().adopt(std::move(blocks), std::move(owner)))
    throw SnapshotError("arg blocks section: blocks are not contiguous or a frame disagrees with its size", section_start);
}

void read_section(SectionId id, Reader& r, TraceStore& s, ReadState& state) {
  switch (id) {
    case SectionId::Strings: read_strings(r, s.strings); break;
    case SectionId::Meta: read_meta(r, s); break;
    case SectionId::Issues: read_issues(r, s.issues); break;
    case SectionId::Processes: read_processes(r, s); break;
    case SectionId::Tracks: read_tracks(r, s); break;
    case SectionId::Counters: read_counters(r, s); break;
    case SectionId::Flows: r.column(s.flows); break;
    case SectionId::Iterations: r.column(s.iterations); break;
    case SectionId::Correlations: r.column(s.correlations); break;
    case SectionId::Indexes: read_indexes(r, s); break;
    case SectionId::Args: read_args(r, s, state); break;
    case SectionId::ArgBlocks: read_arg_blocks(r, s, state); break;
    case SectionId::Memory: read_memory(r, s.memory); break;
  }
  r.finish();
}

}  // namespace

// Reads `entries`' sections into the store, checking each one's checksum.
void read_sections(std::string_view file, std::span<const SectionEntry> entries, TraceStore& store, ReadState& state, int fd) {
  for (const SectionEntry& e : entries) {
    std::string_view bytes = file.substr(e.offset, e.size);
    Reader r(bytes, e.offset, section_name(e.id), fd >= 0);
    // The checksum is summed while the section is read (Reader::column): a damaged section may
    // fail to parse first, and is then reported as the checksum mismatch it is.
    auto mismatch = [&] { return SnapshotError(std::string(section_name(e.id)) + " section checksum mismatch (corrupted)", e.offset); };
    try {
      read_section(SectionId(e.id), r, store, state);
    } catch (const SnapshotError&) {
      if (checksum(bytes) != e.crc) throw mismatch();
      throw;
    }
    if (r.checksum() != e.crc) throw mismatch();
  }
}

}  // namespace sl::snapshot_detail
