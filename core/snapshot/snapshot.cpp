// Opening a snapshot: its header and section table checked, the sections read on two cores, the
// store checked for consistency, and the public read entry points (snapshot.h).
#include "core/snapshot/snapshot.h"

#include "core/snapshot/snapshot_format.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/store/args_blocks.h"
#include "core/store/cores.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <future>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sl::snapshot_detail {
namespace {

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
    memory();
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
  void memory() const {
    const MemoryEvents& m = s_.memory;
    size_t n = m.size();
    expect(m.addr.size() == n && m.bytes.size() == n && m.total_allocated.size() == n && m.total_reserved.size() == n &&
           m.device_type.size() == n && m.device_id.size() == n && m.track.size() == n && m.stream.size() == n &&
           m.stack.size() == n && m.action.size() == n && m.flags.size() == n, "memory columns differ in length");
    expect(!m.stack_offsets.empty() && m.stack_offsets.front() == 0 && m.stack_offsets.back() == m.frames.size(),
           "memory stacks do not match their frames");
    for (size_t i = 1; i < m.stack_offsets.size(); ++i) expect(m.stack_offsets[i - 1] <= m.stack_offsets[i], "memory stacks go backwards");
    for (StringId f : m.frames) string(f);
    for (size_t i = 0; i < n; ++i) {
      expect(time(m.ts[i]) && (i == 0 || m.ts[i - 1] <= m.ts[i]), "memory event time out of range or out of order");
      expect(m.track[i] == kNone || m.track[i] < s_.tracks.size(), "memory event of a missing track");
      expect(m.stack[i] == kNone || m.stack[i] < m.stack_count(), "memory event of a missing stack");
      expect(m.action[i] <= uint8_t(MemoryAction::Oom), "unknown memory action");
    }
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
  bool parallel = file.size() >= kTwoThreadBytes && usable_cores() > 1;
  auto split = entries.begin() + (size_t(SectionId::Correlations) - 1);
  in_two(
      parallel, [&] { read_sections(file, {entries.begin(), split}, *store, state, fd); },
      [&] { read_sections(file, {split, entries.end()}, *store, state, fd); });
  Checker checker(*store, kHeaderBytes);
  in_two(parallel, [&] { checker.check_first_half(); }, [&] { checker.check_second_half(); });
  return store;
}

}  // namespace
}  // namespace sl::snapshot_detail

namespace sl {

using namespace snapshot_detail;

bool is_snapshot_magic(std::string_view head) {
  return head.size() >= sizeof kSnapshotMagic && std::memcmp(head.data(), kSnapshotMagic, sizeof kSnapshotMagic) == 0;
}

bool is_snapshot_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[sizeof kSnapshotMagic] = {};
  in.read(head, sizeof head);
  return in.gcount() == sizeof head && is_snapshot_magic(std::string_view(head, sizeof head));
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
