// Snapshot writer and reader (format: core/SNAPSHOT.md).
//
// Every column is written as one aligned block and copied back, in cache-sized chunks summed for
// the section's checksum just before each is copied, into the store's std::vectors (the store
// owns its columns; using the mapped file in place needs another column type, a later refactor). Indexes built by finalize() are stored too, so opening
// runs no sort, nesting or linking. Args are the store's zstd blocks, stored as they are and
// mapped back, decoded only when asked for.
#include "core/snapshot.h"

#include "core/args_blocks.h"
#include "core/huge_pages.h"

#include <fcntl.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <future>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <unistd.h>

namespace sl {

// --- access to the store's private indexes ---
// The store's derived indexes are private and only TraceBuilder is a friend. Rather than edit
// the widely included trace_store.h now, the snapshot codec reaches them through explicit
// template instantiation (which the language exempts from access checks). When the store moves
// to spans over mapped memory, replace this with a `friend` declaration.
namespace {
template <class Tag, auto Member>
struct MemberAccess {
  friend constexpr auto member_pointer(Tag) { return Member; }
};
#define SL_SNAPSHOT_ACCESS(TAG, MEMBER)                  \
  struct TAG {                                           \
    friend constexpr auto member_pointer(TAG);           \
  };                                                     \
  template struct MemberAccess<TAG, &TraceStore::MEMBER>;
SL_SNAPSHOT_ACCESS(ArgsTag, args_)
SL_SNAPSHOT_ACCESS(CorrActivitiesTag, correlation_activities_)
SL_SNAPSHOT_ACCESS(NameOffsetsTag, name_offsets_)
SL_SNAPSHOT_ACCESS(NameRefsTag, name_refs_)
SL_SNAPSHOT_ACCESS(FlowsByFromTag, flows_by_from_)
SL_SNAPSHOT_ACCESS(FlowsByToTag, flows_by_to_)
SL_SNAPSHOT_ACCESS(LaunchLinksTag, launch_links_)
SL_SNAPSHOT_ACCESS(GpuActivitiesTag, gpu_activities_)
SL_SNAPSHOT_ACCESS(KernelsTag, kernels_)
#undef SL_SNAPSHOT_ACCESS

template <class Tag>
auto& field(TraceStore& store) { return store.*member_pointer(Tag{}); }
template <class Tag>
const auto& field(const TraceStore& store) { return store.*member_pointer(Tag{}); }

enum class SectionId : uint32_t {
  Strings = 1, Meta, Issues, Processes, Tracks, Counters, Flows, Iterations, Correlations,
  Indexes, Args, ArgBlocks,
};
constexpr uint32_t kSectionCount = 12;
constexpr size_t kHeaderBytes = 32;
constexpr size_t kEntryBytes = 32;
constexpr size_t kAlign = 64;  // sections start on cache lines
// One compressed args block in the args section's block table.
struct BlockEntry {
  uint64_t start;        // position of its first byte in the args text
  uint32_t raw_size;
  uint32_t stored_size;  // bytes of its zstd frame
  uint64_t at;           // where the frame starts in the arg blocks section
};
static_assert(sizeof(BlockEntry) == 24);

const char* section_name(uint32_t id) {
  static const char* names[] = {"?", "strings", "meta", "issues", "processes", "tracks", "counters",
                                "flows", "iterations", "correlations", "indexes", "args", "arg blocks"};
  return id <= kSectionCount ? names[id] : "?";
}

// CRC-32 (the zlib/gzip polynomial), by libdeflate: it uses carry-less multiplication where the
// CPU has it, several GB/s, so checking every section costs little of the open time.
uint32_t checksum(std::string_view bytes) {
  return libdeflate_crc32(0, bytes.data(), bytes.size());
}

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

// Prepares the fresh memory of a column about to be copied in: transparent huge pages over its
// whole 2 MB pages, then every page populated in one system call. Touching fresh memory page by
// page costs a page fault per 4 KB, most of the time of copying a column: with huge pages it is
// one per 2 MB, and populating ahead takes the fault out of the rest (the kernel still zeroes
// them). Both are advice: an older kernel that refuses them only loses the speed.
void prepare_column_memory(void* p, size_t bytes) {
  prefer_huge_pages(p, bytes);
  uintptr_t begin = reinterpret_cast<uintptr_t>(p), end = begin + bytes;
  uintptr_t from = (begin + kPageBytes - 1) & ~(kPageBytes - 1), to = end & ~(kPageBytes - 1);
#ifdef MADV_POPULATE_WRITE
  if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#endif
}

// ---------------------------------------------------------------- writing

// Appends to the snapshot being written (sections start on 64-byte boundaries, so alignment
// within the file is alignment within the section).
class Writer {
public:
  explicit Writer(std::string& o) : out(o) {}
  std::string& out;
  template <class T>
  void pod(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void align(size_t to = 8) { out.resize((out.size() + to - 1) / to * to, '\0'); }
  // A column: its element count, then its bytes on an 8-byte boundary.
  template <class T>
  void column(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    pod<uint64_t>(v.size());
    align();
    out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
    align();
  }
  void text(std::string_view s) {
    pod<uint64_t>(s.size());
    out.append(s);
    align();
  }
};

void write_strings(Writer& w, const StringPool& pool) {
  // Offsets then characters: one block each, ids are positions.
  std::vector<uint64_t> offsets{0};
  std::string chars;
  for (size_t id = 0; id < pool.size(); ++id) {
    chars.append(pool.view(static_cast<StringId>(id)));
    offsets.push_back(chars.size());
  }
  w.column(offsets);
  w.text(chars);
}

void write_meta(Writer& w, const TraceStore& s) {
  const TraceMeta& m = s.meta;
  w.text(m.file);
  w.text(m.format);
  w.pod(m.bytes);
  w.pod<uint64_t>(m.devices.size());
  for (const Device& d : m.devices) {
    w.pod(d.id);
    w.text(d.name);
    w.text(d.properties_json);
  }
  w.pod<uint8_t>(m.rank.has_value());
  w.pod<int64_t>(m.rank.value_or(0));
  w.pod<uint8_t>(m.world_size.has_value());
  w.pod<int64_t>(m.world_size.value_or(0));
  w.text(m.backend);
  w.text(m.display_time_unit);
  w.pod<uint64_t>(m.top_level.size());
  for (const auto& [key, value] : m.top_level) {
    w.text(key);
    w.text(value);
  }
  w.pod<uint8_t>(m.hta.from_text);
  w.pod<uint8_t>(m.hta.rank.has_value());
  w.pod<int64_t>(m.hta.rank.value_or(0));
  w.pod(m.hta.first_event_args);
  w.pod(s.counts);
  w.pod(s.origin_ns);
  w.pod(s.end_ns);
}

void write_issues(Writer& w, const ImportIssues& issues) {
  w.pod<uint32_t>(uint32_t(IssueKind::kCount));
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) {
    w.pod(issues.count(IssueKind(k)));
    w.column(issues.examples(IssueKind(k)));
  }
  w.pod<uint8_t>(issues.truncation.has_value());
  Truncation t = issues.truncation.value_or(Truncation{});
  w.pod(t.byte_offset);
  w.pod(t.events);
  w.pod<uint8_t>(t.gzip);
  w.pod(t.compressed_offset);
}

void write_processes(Writer& w, const TraceStore& s) {
  w.pod<uint64_t>(s.processes.size());
  for (const Process& p : s.processes) {
    w.pod(p.pid_text);
    w.pod(p.pid);
    w.pod<uint8_t>(p.pid_is_number);
    w.pod(p.name);
    w.pod(p.labels);
    w.pod(p.sort_index);
    w.pod<uint8_t>(p.has_sort_index);
    w.column(p.tracks);
  }
  w.column(s.process_order);
}

void write_tracks(Writer& w, const TraceStore& s) {
  w.pod<uint64_t>(s.tracks.size());
  for (const Track& t : s.tracks) {
    w.pod<uint8_t>(uint8_t(t.kind));
    w.pod(t.process);
    w.pod(t.name);
    w.pod(t.tid_text);
    w.pod(t.tid);
    w.pod<uint8_t>(t.tid_is_number);
    w.pod(t.sort_index);
    w.pod<uint8_t>(t.has_sort_index);
    w.pod(t.device);
    w.pod(t.stream);
    w.pod<uint8_t>(t.gpu_work);
    w.pod(t.overlapping);
    const SliceColumns& c = t.slices;
    w.column(c.start); w.column(c.dur); w.column(c.name); w.column(c.cat); w.column(c.parent);
    w.column(c.args); w.column(c.corr); w.column(c.depth); w.column(c.lane);
    const InstantColumns& i = t.instants;
    w.column(i.ts); w.column(i.name); w.column(i.cat); w.column(i.args); w.column(i.scope);
    w.column(t.max_end_prefix);
    w.column(t.lane_depths);
  }
}

void write_counters(Writer& w, const TraceStore& s) {
  w.pod<uint64_t>(s.counters.size());
  for (const CounterSeries& c : s.counters) {
    w.pod(c.process);
    w.pod(c.name);
    w.column(c.ts);
    w.column(c.value);
  }
}

void write_indexes(Writer& w, const TraceStore& s) {
  w.column(field<CorrActivitiesTag>(s));
  w.column(field<NameOffsetsTag>(s));
  w.column(field<NameRefsTag>(s));
  w.column(field<FlowsByFromTag>(s));
  w.column(field<FlowsByToTag>(s));
  w.pod<uint64_t>(field<LaunchLinksTag>(s));
  w.pod<uint64_t>(field<GpuActivitiesTag>(s));
  w.pod<uint64_t>(field<KernelsTag>(s));
}

// The args blocks as they are held: sealed frames verbatim, and the open block (a store still
// being appended to) compressed here as one more frame, so ranges keep their block numbers.
std::vector<std::string_view> args_frames(const ArgsBlocks& blocks, std::string& open_frame) {
  std::vector<std::string_view> frames;
  for (const ArgsBlocks::Block& b : blocks.sealed()) frames.emplace_back(b.stored, b.stored_size);
  if (!blocks.open_text().empty()) frames.emplace_back(open_frame = ArgsBlocks::compress(blocks.open_text()));
  return frames;
}

void write_args(Writer& w, const TraceStore& s, const std::vector<std::string_view>& frames) {
  w.column(s.args_table());
  const ArgsBlocks& blocks = s.args_blocks();
  std::vector<BlockEntry> entries;
  uint64_t at = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    bool sealed = i < blocks.sealed().size();
    uint64_t start = sealed ? blocks.sealed()[i].start : blocks.size() - blocks.open_text().size();
    uint32_t raw = sealed ? blocks.sealed()[i].raw_size : uint32_t(blocks.open_text().size());
    entries.push_back({start, raw, uint32_t(frames[i].size()), at});
    at += frames[i].size();
  }
  w.column(entries);
}

// Appends section `id` of `s` to `out`.
void write_section(std::string& out, SectionId id, const TraceStore& s) {
  Writer w(out);
  std::string open_frame;
  std::vector<std::string_view> frames;
  if (id == SectionId::Args || id == SectionId::ArgBlocks) frames = args_frames(s.args_blocks(), open_frame);
  switch (id) {
    case SectionId::Strings: write_strings(w, s.strings); break;
    case SectionId::Meta: write_meta(w, s); break;
    case SectionId::Issues: write_issues(w, s.issues); break;
    case SectionId::Processes: write_processes(w, s); break;
    case SectionId::Tracks: write_tracks(w, s); break;
    case SectionId::Counters: write_counters(w, s); break;
    case SectionId::Flows: w.column(s.flows); break;
    case SectionId::Iterations: w.column(s.iterations); break;
    case SectionId::Correlations: w.column(s.correlations); break;
    case SectionId::Indexes: write_indexes(w, s); break;
    case SectionId::Args: write_args(w, s, frames); break;
    case SectionId::ArgBlocks:
      for (std::string_view frame : frames) w.out.append(frame);
      break;
  }
}

// ---------------------------------------------------------------- reading

struct SnapshotError : std::runtime_error {
  uint64_t offset;
  SnapshotError(const std::string& what, uint64_t at) : std::runtime_error(what), offset(at) {}
};

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
  template <class T>
  void column(std::vector<T>& v) {
    uint64_t n = pod<uint64_t>();
    align();
    if (n > (bytes_.size() - pos_) / sizeof(T)) fail("column of " + std::to_string(n) + " elements runs past the section");
    size_t begin = pos_;
    const char* bytes = take(n * sizeof(T));
    v.clear();
    v.reserve(n);
    prepare_column_memory(v.data(), n * sizeof(T));
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

// What reading one section leaves for a later one: the args section's block table, used when
// the arg blocks section is read.
struct ReadState {
  int fd = -1;  // the open snapshot file, or -1 when reading bytes in memory
  std::vector<BlockEntry> blocks;
};

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

// Every index points where it should: a snapshot that passes its checksums but was written by
// a buggy or hostile writer still cannot make a query read out of bounds.
class Checker {
public:
  Checker(const TraceStore& s, uint64_t at) : s_(s), at_(at) {}
  // The checks in two halves that may run at once (both only read the store); the first half's
  // failures come first, as when run one after the other.
  void check_first_half() const {
    for (const Process& p : s_.processes) {
      string(p.pid_text); string(p.name); string(p.labels);
      for (uint32_t t : p.tracks) expect(t < s_.tracks.size(), "process lists a track that does not exist");
    }
    for (uint32_t p : s_.process_order) expect(p < s_.processes.size(), "process order names a missing process");
    expect(time(s_.origin_ns) && time(s_.end_ns), "trace start or end out of range");
    for (const Track& t : s_.tracks) track(t);
    for (const CounterSeries& c : s_.counters) {
      expect(c.process == kNone || c.process < s_.processes.size(), "counter of a missing process");
      string(c.name);
      expect(c.ts.size() == c.value.size(), "counter columns differ in length");
      for (TimeNs ts : c.ts) expect(time(ts), "counter time out of range");
    }
  }
  void check_second_half() const {
    for (const Flow& f : s_.flows) { string(f.cat); ref(f.from); ref(f.to); }
    for (const Iteration& it : s_.iterations) {
      ref(it.slice);
      expect(time(it.start) && time(it.end), "iteration time out of range");
    }
    indexes();
    args();
  }

private:
  [[noreturn]] void fail(const char* what) const { throw SnapshotError(std::string("inconsistent snapshot: ") + what, at_); }
  void expect(bool ok, const char* what) const { if (!ok) fail(what); }
  // Times stay within ±2^62 ns (±146 years; the JSON loader allows ±9.2e15 µs) so that sums of
  // two times (origin + offset, start + duration) cannot overflow.
  static bool time(TimeNs t) { return t >= -(TimeNs(1) << 62) && t <= (TimeNs(1) << 62); }
  void string(StringId id) const { expect(id < s_.strings.size(), "string id out of range"); }
  void args_row(uint32_t row) const { expect(row == kNone || row < s_.args_table().size(), "args row out of range"); }
  void ref(SliceRef r) const {
    if (!r.valid()) return;
    expect(r.track < s_.tracks.size() && r.index < s_.tracks[r.track].slices.size(), "slice reference out of range");
  }
  // Whether every slice row of `t` is valid (the rules of the loop in track()), in one pass
  // without early exits or branches, so that the compiler can vectorize it: it runs over every row
  // of every open, and track() walks the rows again only to name what is wrong.
  bool slice_rows_valid(const Track& t) const {
    const SliceColumns& c = t.slices;
    const uint32_t strings = uint32_t(s_.strings.size()), args = uint32_t(s_.args_table().size());
    const uint32_t corrs = uint32_t(s_.correlations.size()), lanes = uint32_t(t.lane_depths.size());
    const TimeNs *start = c.start.data(), *dur = c.dur.data(), *max_end = t.max_end_prefix.data();
    const uint32_t *name = c.name.data(), *cat = c.cat.data(), *arg = c.args.data(), *parent = c.parent.data(), *corr = c.corr.data();
    const uint16_t* lane = c.lane.data();
    uint32_t bad = 0;
    for (uint32_t i = 0, n = uint32_t(c.size()); i < n; ++i) {
      // kNone + 1 wraps to 0, so `x + 1 <= limit` accepts kNone and rows below the limit.
      bad |= uint32_t(name[i] >= strings) | uint32_t(cat[i] >= strings) | uint32_t(uint32_t(arg[i] + 1) > args);
      bad |= uint32_t(uint32_t(parent[i] + 1) > i) | uint32_t(uint32_t(corr[i] + 1) > corrs) | uint32_t(lane[i] >= lanes);
      // The end is summed in unsigned arithmetic: with start and duration in range it cannot wrap
      // into range (the true end lies within [-2^62, 2^63]).
      uint64_t end = uint64_t(start[i]) + uint64_t(dur[i]);
      bad |= uint32_t(dur[i] < 0) | out_of_range(uint64_t(start[i])) | out_of_range(end) | out_of_range(uint64_t(max_end[i]));
    }
    return bad == 0;
  }
  // 1 when a time (as unsigned bits) lies outside ±2^62: shifted by 2^62, the range is [0, 2^63].
  static uint32_t out_of_range(uint64_t bits) { return uint32_t(bits + (uint64_t(1) << 62) > (uint64_t(1) << 63)); }
  void track(const Track& t) const {
    expect(t.process == kNone || t.process < s_.processes.size(), "track of a missing process");
    string(t.name); string(t.tid_text);
    const SliceColumns& c = t.slices;
    size_t n = c.size();
    expect(c.dur.size() == n && c.name.size() == n && c.cat.size() == n && c.parent.size() == n &&
           c.args.size() == n && c.corr.size() == n && c.depth.size() == n && c.lane.size() == n &&
           t.max_end_prefix.size() == n, "slice columns differ in length");
    expect(n < kNone, "too many slices on one track");
    for (size_t i = slice_rows_valid(t) ? n : 0; i < n; ++i) {
      string(c.name[i]); string(c.cat[i]); args_row(c.args[i]);
      // Rows are sorted by start, longer first, so a parent always comes before its child; this
      // also rules out parent cycles that would loop a walk up the nesting.
      expect(c.parent[i] == kNone || c.parent[i] < i, "parent row out of range");
      TimeNs end = 0;
      expect(c.dur[i] >= 0 && time(c.start[i]) && !__builtin_add_overflow(c.start[i], c.dur[i], &end) &&
             time(end) && time(t.max_end_prefix[i]), "slice time out of range");
      expect(c.corr[i] == kNone || c.corr[i] < s_.correlations.size(), "correlation row out of range");
      expect(c.lane[i] < t.lane_depths.size(), "lane group out of range");
    }
    const InstantColumns& in = t.instants;
    size_t m = in.size();
    expect(in.name.size() == m && in.cat.size() == m && in.args.size() == m && in.scope.size() == m,
           "instant columns differ in length");
    for (size_t i = 0; i < m; ++i) {
      string(in.name[i]); string(in.cat[i]); args_row(in.args[i]);
      expect(time(in.ts[i]), "instant time out of range");
    }
  }
  void indexes() const {
    const auto& activities = field<CorrActivitiesTag>(s_);
    for (SliceRef r : activities) ref(r);
    for (const Correlation& c : s_.correlations) {
      ref(c.launch);
      expect(uint64_t(c.first_activity) + c.activity_count <= activities.size(), "correlation activities out of range");
    }
    const auto& offsets = field<NameOffsetsTag>(s_);
    const auto& refs = field<NameRefsTag>(s_);
    expect(offsets.empty() || (offsets.size() == s_.strings.size() + 1 && offsets.back() == refs.size()),
           "name index does not match the string pool");
    for (size_t i = 1; i < offsets.size(); ++i) expect(offsets[i - 1] <= offsets[i], "name index goes backwards");
    for (SliceRef r : refs) ref(r);
    for (uint32_t f : field<FlowsByFromTag>(s_)) expect(f < s_.flows.size(), "flow index out of range");
    for (uint32_t f : field<FlowsByToTag>(s_)) expect(f < s_.flows.size(), "flow index out of range");
  }
  void args() const {
    // Inline for the sealed blocks (all of them in a store read from a snapshot); holds() is the
    // rule, and decides the rest.
    const ArgsBlocks& blocks = s_.args_blocks();
    const std::vector<ArgsBlocks::Block>& sealed = blocks.sealed();
    for (const ArgsRange& a : s_.args_table()) {
      if (a.block >= sealed.size()) {
        expect(blocks.holds(a), "args range outside its block");
        continue;
      }
      const ArgsBlocks::Block& b = sealed[a.block];
      expect(a.offset >= b.start && a.length <= b.raw_size && a.offset - b.start <= b.raw_size - a.length,
             "args range outside its block");
    }
    args_row(s_.meta.hta.first_event_args);
  }
  const TraceStore& s_;
  uint64_t at_;
};

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
  }
  r.finish();
}

template <class T>
T load_pod(std::string_view bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}
template <class T>
void store_pod(std::string& out, size_t at, const T& v) {
  std::memcpy(out.data() + at, &v, sizeof v);
}

// Snapshots at least this large are read by two threads (two groups of sections at once, then
// two halves of the consistency checks); smaller ones by one, the same work in the same order.
constexpr size_t kTwoThreadBytes = 4 << 20;

// Runs `first` here and `second` on another thread (or after `first` when not `parallel`), and
// rethrows the first one's exception before the second's: the error reported is the one a
// sequential read would have met first.
template <class F, class G>
void in_two(bool parallel, F&& first, G&& second) {
  auto later = std::async(parallel ? std::launch::async : std::launch::deferred, std::forward<G>(second));
  std::exception_ptr failed;
  try {
    first();
  } catch (...) {
    failed = std::current_exception();
  }
  if (!failed || parallel) {
    try {
      later.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
}

struct SectionEntry {
  uint32_t id, crc;
  uint64_t offset, size;
};

// The section table's entries, each checked to name its section in id order and to lie in the file.
std::vector<SectionEntry> section_entries(std::string_view file, uint32_t sections, size_t table_end) {
  std::vector<SectionEntry> entries;
  for (uint32_t i = 0; i < sections; ++i) {
    size_t entry = kHeaderBytes + size_t(i) * kEntryBytes;
    SectionEntry e{load_pod<uint32_t>(file, entry), load_pod<uint32_t>(file, entry + 4), load_pod<uint64_t>(file, entry + 8),
                   load_pod<uint64_t>(file, entry + 16)};
    // Sections come in id order, so each one can rely on those before it (the arg blocks on the
    // args section's block table).
    if (e.id != i + 1) throw SnapshotError("section " + std::to_string(i) + " has id " + std::to_string(e.id), entry);
    if (e.offset < table_end || e.offset > file.size() || e.size > file.size() - e.offset)
      throw SnapshotError(std::string(section_name(e.id)) + " section at " + std::to_string(e.offset) + " (" +
                          std::to_string(e.size) + " bytes) lies outside the file", entry + 8);
    entries.push_back(e);
  }
  return entries;
}

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

std::unique_ptr<TraceStore> parse_snapshot(std::string_view file, int fd) {
  if (file.size() < kHeaderBytes) throw SnapshotError("file too short for a snapshot header (" + std::to_string(file.size()) + " bytes)", file.size());
  if (!is_snapshot_magic(file)) throw SnapshotError("not a Sightline snapshot (wrong magic)", 0);
  uint32_t version = load_pod<uint32_t>(file, 8);
  if (version != kSnapshotVersion)
    throw SnapshotError("snapshot format version " + std::to_string(version) + ", this build reads version " +
                        std::to_string(kSnapshotVersion) + " (convert the trace again)", 8);
  uint32_t sections = load_pod<uint32_t>(file, 12);
  uint64_t file_size = load_pod<uint64_t>(file, 16);
  uint32_t table_crc = load_pod<uint32_t>(file, 24);
  if (file_size != file.size())
    throw SnapshotError("snapshot is " + std::to_string(file.size()) + " bytes but its header says " +
                        std::to_string(file_size) + " (truncated or appended to)", std::min<uint64_t>(file.size(), file_size));
  if (sections != kSectionCount) throw SnapshotError("section count " + std::to_string(sections) + ", expected " + std::to_string(kSectionCount), 12);
  size_t table_end = kHeaderBytes + size_t(sections) * kEntryBytes;
  if (table_end > file.size()) throw SnapshotError("section table runs past the end of the file", file.size());
  if (checksum(file.substr(kHeaderBytes, table_end - kHeaderBytes)) != table_crc)
    throw SnapshotError("section table checksum mismatch", kHeaderBytes);

  std::vector<SectionEntry> entries = section_entries(file, sections, table_end);
  auto store = std::make_unique<TraceStore>();
  ReadState state;
  state.fd = fd;
  // Sections 1-8 (the tracks' columns are most of it) here, 9-12 (correlations, indexes, args,
  // arg blocks) on the second core: they fill disjoint parts of the store, and only the arg
  // blocks depend on an earlier section (the args section's block table), in the same group.
  bool parallel = file.size() >= kTwoThreadBytes;
  auto split = entries.begin() + (size_t(SectionId::Correlations) - 1);
  in_two(
      parallel, [&] { read_sections(file, {entries.begin(), split}, *store, state, fd); },
      [&] { read_sections(file, {split, entries.end()}, *store, state, fd); });
  Checker checker(*store, kHeaderBytes);
  in_two(parallel, [&] { checker.check_first_half(); }, [&] { checker.check_second_half(); });
  return store;
}

}  // namespace

bool is_snapshot_magic(std::string_view head) {
  return head.size() >= sizeof kSnapshotMagic && std::memcmp(head.data(), kSnapshotMagic, sizeof kSnapshotMagic) == 0;
}

bool is_snapshot_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof kSnapshotMagic] = {};
  in.read(head, sizeof head);
  return in.gcount() == sizeof head && is_snapshot_magic(std::string_view(head, sizeof head));
}

std::string snapshot_bytes(const TraceStore& store) {
  std::string out;
  // Room for everything at once (an estimate from above: the store's columns and indexes, the
  // compressed args): the sections are written in place, with no copy as the string grows.
  out.reserve(store.store_bytes() + store.args_blocks().stored_bytes() + (1 << 20));
  out.resize(kHeaderBytes + kSectionCount * kEntryBytes, '\0');
  std::memcpy(out.data(), kSnapshotMagic, sizeof kSnapshotMagic);
  store_pod<uint32_t>(out, 8, kSnapshotVersion);
  store_pod<uint32_t>(out, 12, kSectionCount);
  for (uint32_t id = 1; id <= kSectionCount; ++id) {
    out.resize((out.size() + kAlign - 1) / kAlign * kAlign, '\0');
    size_t offset = out.size();
    write_section(out, SectionId(id), store);
    size_t entry = kHeaderBytes + size_t(id - 1) * kEntryBytes;
    store_pod<uint32_t>(out, entry, id);
    store_pod<uint32_t>(out, entry + 4, checksum(std::string_view(out).substr(offset)));
    store_pod<uint64_t>(out, entry + 8, offset);
    store_pod<uint64_t>(out, entry + 16, out.size() - offset);
  }
  store_pod<uint64_t>(out, 16, out.size());
  store_pod<uint32_t>(out, 24, checksum(std::string_view(out).substr(kHeaderBytes, kSectionCount * kEntryBytes)));
  return out;
}

std::string write_snapshot(const TraceStore& store, const std::string& path) { return write_snapshot_bytes(snapshot_bytes(store), path); }

std::string write_snapshot_bytes(std::string_view bytes, const std::string& path) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) return "cannot create " + temp + ": " + std::strerror(errno);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(fileno(f)) == 0 && ok;
  int saved = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    std::remove(temp.c_str());  // a full disk leaves no partial file behind
    return "cannot write " + temp + ": " + std::strerror(saved ? saved : errno);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    saved = errno;
    std::remove(temp.c_str());
    return "cannot rename " + temp + " to " + path + ": " + std::strerror(saved);
  }
  return {};
}

void reseal_snapshot(std::string& bytes) {
  if (bytes.size() < kHeaderBytes + kSectionCount * kEntryBytes || !is_snapshot_magic(bytes)) return;
  for (uint32_t i = 0; i < kSectionCount; ++i) {
    size_t entry = kHeaderBytes + size_t(i) * kEntryBytes;
    uint64_t offset = load_pod<uint64_t>(bytes, entry + 8), size = load_pod<uint64_t>(bytes, entry + 16);
    if (offset <= bytes.size() && size <= bytes.size() - offset)
      store_pod<uint32_t>(bytes, entry + 4, checksum(std::string_view(bytes).substr(offset, size)));
  }
  store_pod<uint64_t>(bytes, 16, bytes.size());
  store_pod<uint32_t>(bytes, 24, checksum(std::string_view(bytes).substr(kHeaderBytes, kSectionCount * kEntryBytes)));
}

namespace {
LoadResult read_snapshot(std::string_view bytes, const std::string& name, int fd) {
  LoadResult result;
  try {
    result.store = parse_snapshot(bytes, fd);
  } catch (const SnapshotError& e) {
    result.error.file = name;
    // LoadError prints byte offsets only with a line number (JSON): say it in the message.
    result.error.message = "bad snapshot at byte " + std::to_string(e.offset) + ": " + e.what();
    result.error.byte_offset = e.offset;
  } catch (const std::bad_alloc&) {
    result.error.file = name;
    result.error.message = "out of memory reading the snapshot";
  }
  return result;
}
}  // namespace

LoadResult read_snapshot_bytes(std::string_view bytes, const std::string& name) { return read_snapshot(bytes, name, -1); }

LoadResult load_snapshot(const std::string& path) {
  auto t0 = std::chrono::steady_clock::now();
  LoadResult result;
  result.error.file = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st{};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    result.error.message = std::string("cannot read the snapshot: ") + std::strerror(errno);
    if (fd >= 0) ::close(fd);
    return result;
  }
  // Mapped read-only and read in place: columns are copied once, straight into the store; the
  // arg blocks section gets a mapping of its own, which the store keeps.
  size_t size = size_t(st.st_size);
  void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  if (size && map == MAP_FAILED) {
    result.error.message = std::string("cannot map the snapshot: ") + std::strerror(errno);
    ::close(fd);
    return result;
  }
  result = read_snapshot(std::string_view(static_cast<const char*>(map), size), path, fd);
  ::close(fd);  // the arg blocks' own mapping outlives the descriptor
  if (map) ::munmap(map, size);
  // A snapshot of a cut-off trace warns as the trace's load did (the record is kept, the
  // message is not): `info X.slsnap` says what `info X.json` says.
  if (result.ok() && result.store->issues.truncation) result.warning = path + ": " + describe(*result.store->issues.truncation);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace sl
