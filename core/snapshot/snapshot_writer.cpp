// The snapshot writer: each section of a TraceStore appended in the layout of SNAPSHOT.md, the
// header and section table sealed with their checksums, and the file written atomically.
#include "core/snapshot/snapshot.h"

#include "core/snapshot/snapshot_format.h"
#include "core/store/args_blocks.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sl::snapshot_detail {
namespace {

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
  template <class T, class Alloc>
  void column(const std::vector<T, Alloc>& v) {
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

void write_memory(Writer& w, const MemoryEvents& m) {
  w.column(m.ts); w.column(m.addr); w.column(m.bytes); w.column(m.total_allocated); w.column(m.total_reserved);
  w.column(m.device_type); w.column(m.device_id); w.column(m.track); w.column(m.stream); w.column(m.stack);
  w.column(m.action); w.column(m.flags); w.column(m.stack_offsets); w.column(m.frames);
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
    case SectionId::Memory: write_memory(w, s.memory); break;
  }
}

}  // namespace
}  // namespace sl::snapshot_detail

namespace sl {

using namespace snapshot_detail;

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

}  // namespace sl
