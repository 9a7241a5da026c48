// Nsight Systems SQLite export → TraceStore. See nsys_loader.h for the mapping.
//
// Reading: the database is opened read-only in place (a `.sqlite.gz` is first decompressed to a
// temporary file, removed afterwards). Columns are looked up with PRAGMA table_info, never
// assumed: a column a schema version lacks is selected as NULL, so one query shape serves
// nsys 2024.6 (schema 3.16) and 2025.1 (schema 3.17) alike. Each event table is scanned once
// with a prepared statement; strings come from StringIds, interned once each.
//
// Order of the rows as they would sit in a Kineto file (what `--mode hta` sees as file order):
// host events first (CUDA API, OS runtime, NVTX), then GPU activities, each in table order.
#include "core/nsys_loader.h"

#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <thread>
#include <tuple>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/args_blocks.h"
#include "core/capture/record_events.h"
#include "core/json_writer.h"
#include "core/nsys_btree.h"
#include "core/nsys_sqlite.h"
#include "core/trace_builder.h"

namespace sl {
namespace {

using nsys::Statement;
using nsys::kGpuColumns;
using nsys::kKernelColumns;
using nsys::kRuntimeColumns;
using nsys::quote_identifier;

// Times beyond ±146 years are refused so that differences never overflow int64 (as for JSON).
constexpr TimeNs kMaxAbsNs = INT64_MAX / 2;
// CUPTI's "no stream" (context-wide synchronisation) and "no event".
constexpr int64_t kNoId = 0xFFFFFFFF;
constexpr uint64_t kProgressEvery = 1 << 16;

// nsys NVTX_EVENTS.eventType values (ENUM_NSYS_EVENT_TYPE).
enum NvtxType : int64_t {
  kNvtxCategory = 33,
  kNvtxMark = 34,
  kNvtxThread = 39,
  kNvtxPushPop = 59,
  kNvtxStartEnd = 60,
  kNvtxtCategory = 64,
  kNvtxtMark = 65,
  kNvtxtPushPop = 70,
  kNvtxtStartEnd = 71,
  kNvtxtMetaThread = 72,
  kNvtxtMetaProcess = 73,
  kNvtxtMetaFile = 74,
  kNvtxDomainCreate = 75,
};

// Sums of numbers read from an untrusted file: wrap instead of overflowing (undefined behaviour).
int64_t wrapping_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }

// ---------------------------------------------------------------- args

// The args keys the loader writes. Args are given as fields, not text: the store's args blocks
// keep them as compact records and write the same JSON text only when it is read (ArgsBlocks,
// "args given as fields"), so loading millions of rows neither formats nor compresses text.
enum ArgKey : uint8_t {
  kArgDevice, kArgContext, kArgStream, kArgCorrelation, kArgRegistersPerThread, kArgSharedMemory, kArgGrid,
  kArgBlock, kArgStaticSharedMemory, kArgDynamicSharedMemory, kArgLocalMemoryPerThread, kArgLocalMemoryTotal,
  kArgSharedMemoryExecuted, kArgGridId, kArgGraphNodeId, kArgLaunchType, kArgReturnValue, kArgBytes,
  kArgMemoryBandwidth, kArgValue, kArgCudaSyncKind, kArgCudaEvent, kArgGraphId, kArgGraphExecId, kArgDomain,
  kArgCategory, kArgColor, kArgPayload, kArgKeys
};
constexpr const char* kArgNames[kArgKeys] = {
    "device", "context", "stream", "correlation", "registers per thread", "shared memory", "grid", "block",
    "static shared memory", "dynamic shared memory", "local memory per thread", "local memory total",
    "shared memory executed", "grid id", "graph node id", "launch type", "return value", "bytes",
    "memory bandwidth (GB/s)", "value", "cuda_sync_kind", "cuda event", "graph id", "graph exec id", "domain",
    "category", "color", "payload"};

class ArgsText {
public:
  ArgsText(TraceStore& store, TraceBuilder& builder) : blocks_(store.args_blocks()), builder_(builder) {
    for (int k = 0; k < kArgKeys; ++k) ids_[k] = blocks_.key(kArgNames[k]);
  }
  ~ArgsText() { blocks_.seal(); }
  void begin() { blocks_.begin_record(); }
  uint32_t end() { return builder_.add_args_record(blocks_.end_record()); }
  void number(ArgKey k, int64_t v) { blocks_.add_int(ids_[k], v); }
  void real(ArgKey k, double v) { blocks_.add_real(ids_[k], v); }
  void text(ArgKey k, std::string_view v) { blocks_.add_text(ids_[k], v); }
  void triple(ArgKey k, int64_t a, int64_t b, int64_t c) { blocks_.add_triple(ids_[k], a, b, c); }
  // A record an ArgsRecordWriter wrote (on a decoding thread: Fields below).
  uint32_t append(std::string_view bytes, uint32_t fields, uint64_t text_size) {
    return builder_.add_args_record(blocks_.append_record(bytes, fields, text_size));
  }
  ArgsBlocks::RecordPlace last_record() const { return blocks_.last_record(); }
  // A repeat of the record at `base` (ArgsBlocks::append_repeat); kNone when it cannot be one.
  uint32_t append_repeat(ArgsBlocks::RecordPlace base, std::string_view bytes, uint32_t replaced, uint64_t text_size) {
    std::optional<ArgsRange> r = blocks_.append_repeat(base, bytes, replaced, text_size);
    return r ? builder_.add_args_record(*r) : kNone;
  }

  // The same calls as ArgsText's, into an ArgsRecordWriter: an encoding function of a row's args
  // (kernel_args, api_args) writes through either, on the loading thread or a decoding one.
  class Fields {
  public:
    Fields(const ArgsText& text, char* out) : writer_(text.blocks_.key_sizes(), out), ids_(text.ids_) {}
    [[gnu::always_inline]] void number(ArgKey k, int64_t v) { writer_.add_int(ids_[k], v); }
    [[gnu::always_inline]] void triple(ArgKey k, int64_t a, int64_t b, int64_t c) {
      writer_.add_triple(ids_[k], a, b, c);
    }
    const ArgsRecordWriter& writer() const { return writer_; }

  private:
    ArgsRecordWriter writer_;
    const uint8_t* ids_;
  };

private:
  ArgsBlocks& blocks_;
  TraceBuilder& builder_;
  uint8_t ids_[kArgKeys];
};

// ---------------------------------------------------------------- the database's bytes

// The bytes of the database for the direct b-tree reader (nsys_btree.h): the memory of a
// database deserialized in memory, or the file mapped read-only. Empty, with why(), when there
// is neither, or when SQLite would see more than the file (a journal or write-ahead log beside
// it): then every table is read through SQLite's API.
class DatabaseImage {
public:
  explicit DatabaseImage(sqlite3* db) {
    sqlite3_int64 size = 0;
    if (unsigned char* memory = sqlite3_serialize(db, "main", &size, SQLITE_SERIALIZE_NOCOPY)) {
      bytes_ = {reinterpret_cast<const char*>(memory), size_t(size)};
      return;
    }
    const char* name = sqlite3_db_filename(db, "main");
    if (!name || !*name) {
      why_ = "the database is neither a file nor in memory";
      return;
    }
    std::string path = name;
    for (const char* side : {"-wal", "-journal"}) {
      if (::access((path + side).c_str(), F_OK) == 0) {
        why_ = std::string("a ") + (side[1] == 'w' ? "write-ahead log" : "rollback journal") + " is beside the file";
        return;
      }
    }
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size <= 0) {
      if (fd >= 0) ::close(fd);
      why_ = "cannot map the file";
      return;
    }
    void* map = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
      why_ = "cannot map the file";
      return;
    }
    ::madvise(map, size_t(st.st_size), MADV_SEQUENTIAL);
    map_ = map;
    bytes_ = {static_cast<const char*>(map), size_t(st.st_size)};
  }
  // Unmapped 4 MB at a time with a pause between: the loader unmaps on a thread of its own while
  // finish() runs, and one munmap of the whole file held the process's memory-map lock for its
  // ~3 ms (76 MB), so the first thread finish() started (which maps a stack) waited that long
  // with a core idle. The pauses let such a wait in.
  ~DatabaseImage() {
    if (!map_) return;
    constexpr size_t kChunk = size_t(4) << 20;
    for (size_t at = 0; at < bytes_.size(); at += kChunk) {
      ::munmap(static_cast<char*>(map_) + at, std::min(kChunk, bytes_.size() - at));
      if (at + kChunk < bytes_.size()) ::usleep(100);
    }
  }
  DatabaseImage(const DatabaseImage&) = delete;
  DatabaseImage& operator=(const DatabaseImage&) = delete;
  std::string_view bytes() const { return bytes_; }
  const std::string& why() const { return why_; }

private:
  void* map_ = nullptr;
  std::string_view bytes_;
  std::string why_;
};

// The values the direct reader takes in a column, by the affinity SQLite gives its declared type
// (sqlite.org/datatype3.html, 3.1; `type` in capitals): TEXT and REAL columns hold what their
// affinity made of the values stored; the others are read for integers, and any other value there
// stops the reader.
nsys::ValueKind value_kind(std::string_view type) {
  auto has = [&](const char* part) { return type.find(part) != std::string_view::npos; };
  if (has("INT")) return nsys::ValueKind::Integer;
  if (has("CHAR") || has("CLOB") || has("TEXT")) return nsys::ValueKind::Text;
  if (has("BLOB") || type.empty()) return nsys::ValueKind::Integer;
  if (has("REAL") || has("FLOA") || has("DOUB")) return nsys::ValueKind::Real;
  return nsys::ValueKind::Integer;
}

// The direct reader is on unless SIGHTLINE_NSYS_READER=sqlite (tests compare the two paths).
bool direct_reading_enabled() {
  const char* reader = std::getenv("SIGHTLINE_NSYS_READER");
  return !reader || std::string_view(reader) != "sqlite";
}

// ---------------------------------------------------------------- pages faulted in ahead

// Fresh memory costs ~0.45 ns a byte to touch on the machines measured (a page fault per 4 KiB:
// the kernel zeroes and maps the page), and the builder appends ~48 bytes a row to columns
// reserved up front (a track's slice columns, the args and correlation tables), ~0.1 s for 5 M
// runtime calls. A reserved column does not move, so the decoding thread, while its batches wait
// for the builder, faults in the pages just past each column's end (MADV_POPULATE_WRITE: the
// kernel's work only, no byte of the column is written) and the builder finds them mapped.
// Harmless if a column did move after all (a reservation outgrown): a page faulted in for nothing.
class PagesAhead {
public:
  struct Column {
    const char* data;
    size_t used, capacity;  // bytes
    size_t ahead;           // bytes to keep faulted in past `used`
  };
  // A column whose first `rows` rows are (or will be: finish() sizes the derived columns to the
  // input columns' rows) written.
  template <class T>
  static Column column(const std::vector<T>& v, size_t rows) {
    return {reinterpret_cast<const char*>(v.data()), rows * sizeof(T), v.capacity() * sizeof(T), kAheadRows * sizeof(T)};
  }
  template <class T>
  static Column column(const std::vector<T>& v) { return column(v, v.size()); }
  // Loading thread (after each batch): the columns being appended to, as they are now.
  void publish(const std::vector<Column>& columns) {
    std::lock_guard lock(mutex_);
    std::vector<Target> next;
    for (const Column& c : columns) {
      const char* faulted = c.data + c.used;
      for (const Target& t : targets_)
        if (t.column.data == c.data) faulted = std::max(faulted, t.faulted);
      next.push_back({c, faulted});
    }
    targets_ = std::move(next);
  }
  // Decoding thread: faults in the next piece of one column; false when every column is far
  // enough ahead, or the kernel cannot (before Linux 5.14).
  bool fault_next() noexcept {
    const char *from = nullptr, *to = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (unsupported_) return false;
      for (Target& t : targets_) {
        const char* goal = t.column.data + std::min(t.column.capacity, t.column.used + t.column.ahead);
        from = page_up(t.faulted);
        to = std::min(page_down(goal), from + kPiece);
        if (from < to) {
          t.faulted = to;
          break;
        }
        t.faulted = std::max(t.faulted, goal);
      }
    }
    if (!(from < to)) return false;
#ifdef MADV_POPULATE_WRITE
    if (::madvise(const_cast<char*>(from), size_t(to - from), MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
      std::lock_guard lock(mutex_);
      unsupported_ = true;
    }
    return true;
#else
    return false;
#endif
  }

private:
  static constexpr size_t kAheadRows = 1 << 16;  // ~16 batches of runtime calls
  static constexpr size_t kPiece = 256 << 10;    // per call: the worker stays quick to resume decoding
  const uintptr_t page_ = uintptr_t(::sysconf(_SC_PAGESIZE));
  const char* page_up(const char* p) const {
    return reinterpret_cast<const char*>((reinterpret_cast<uintptr_t>(p) + page_ - 1) & ~(page_ - 1));
  }
  const char* page_down(const char* p) const {
    return reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) & ~(page_ - 1));
  }
  struct Target {
    Column column;
    const char* faulted;  // pages below this are mapped (by the builder or here)
  };
  std::mutex mutex_;
  std::vector<Target> targets_;
  bool unsupported_ = false;
};

// ---------------------------------------------------------------- the loader

// A slice as appended: its track and row there (finish() sorts the rows later). A key's calls are
// on one thread, whose rows come in order: the lower place is the earlier call.
struct SlicePlace {
  uint32_t track = kNone, row = kNone;
  friend auto operator<=>(const SlicePlace&, const SlicePlace&) = default;
};

// Correlation keys are a process's ordinal in the high half and CUPTI's id in the low
// (NsysLoader::correlation_key): per process ("space"), ids in arrays. Keys outside them
// (negative, or of more than kMaxSpaces processes) go through a hash.
constexpr size_t kMaxSpaces = 4096;
bool split_key(int64_t key, size_t& space, uint32_t& id) {
  if (key < 0 || (uint64_t(key) >> 32) >= kMaxSpaces) return false;
  space = size_t(uint64_t(key) >> 32), id = uint32_t(key);
  return true;
}
int64_t join_key(size_t space, uint32_t id) { return int64_t(uint64_t(space) << 32 | id); }

// A space's ids in ascending order with a value each. CUPTI counts ids up from 1 in a process and
// a table's rows come in about that order (a thread's calls, a stream's activities), so a search
// starts where the last one ended: steps of doubling length, then a binary search within the last.
// Ids are sparse (kernels among API calls; a report's API calls among all of a process's): an
// array indexed by id populated 460 MB on the kernel-heavy benchmark report, and a hash costs a
// cache miss per key.
template <class Value>
struct SortedIds {
  std::vector<uint32_t> ids;
  std::vector<Value> values;
  size_t cursor = 0;  // where the last search ended

  // Appends an id past the last; false (nothing added) for any other.
  bool append(uint32_t id, const Value& value) {
    if (!ids.empty() && id <= ids.back()) return false;
    ids.push_back(id);
    values.push_back(value);
    return true;
  }
  Value* find(uint32_t id) {
    if (ids.empty() || id > ids.back()) return nullptr;
    size_t at = search(id);
    return ids[at] == id ? &values[at] : nullptr;
  }
  // The first position whose id is not below `id` (ids.size() when none is).
  size_t search(uint32_t id) {
    size_t n = ids.size(), lo, hi;
    if (cursor >= n) cursor = n - 1;
    if (ids[cursor] < id) {
      size_t step = 1;
      lo = cursor + 1;
      while (lo + step - 1 < n && ids[lo + step - 1] < id) lo += step, step *= 2;
      hi = std::min(n, lo + step - 1);
    } else {
      size_t step = 1;
      hi = cursor;
      while (hi >= step && ids[hi - step] >= id) hi -= step, step *= 2;
      lo = hi >= step ? hi - step + 1 : 0;
    }
    cursor = size_t(std::lower_bound(ids.begin() + ptrdiff_t(lo), ids.begin() + ptrdiff_t(hi), id) - ids.begin());
    return cursor;
  }
  void reserve(size_t n) {
    ids.reserve(n);
    values.reserve(n);
  }
};

// The first API call of each correlation key. Calls are added as the table is read, then sealed
// before the GPU tables. A key past its process's last is appended; any other waits in a list
// that seal() sorts and merges in: threads' calls interleave, and a report may write a thread's
// calls in blocks after another's (a hash probe per such key made those 2.5x slower to load).
class LaunchKeys {
public:
  void add(int64_t key, SlicePlace place) {
    size_t space;
    uint32_t id;
    if (!split_key(key, space, id)) {
      if (!others_.try_emplace(key, place).second) later_.emplace(key, place);
      return;
    }
    if (space >= spaces_.size()) spaces_.resize(space + 1);
    Space& s = spaces_[space];
    if (s.sorted.append(id, place)) return;
    if (id == s.sorted.ids.back()) later_.emplace(key, place);  // the call just before had the key
    else s.late.push_back({id, place});
  }
  // After the last add: each key once, with its first call; its later calls in later_calls().
  void seal() {
    for (size_t space = 0; space < spaces_.size(); ++space) {
      Space& s = spaces_[space];
      if (s.late.empty()) continue;
      std::sort(s.late.begin(), s.late.end());
      SortedIds<SlicePlace> merged;
      merged.reserve(s.sorted.ids.size() + s.late.size());
      auto take = [&](uint32_t id, SlicePlace place) {
        if (!merged.append(id, place)) later_.emplace(join_key(space, id), place);
      };
      size_t i = 0, j = 0;
      while (i < s.sorted.ids.size() || j < s.late.size()) {
        bool sorted_first = j == s.late.size() ||
                            (i < s.sorted.ids.size() && Late{s.sorted.ids[i], s.sorted.values[i]} < s.late[j]);
        if (sorted_first) take(s.sorted.ids[i], s.sorted.values[i]), ++i;
        else take(s.late[j].id, s.late[j].place), ++j;
      }
      s.sorted = std::move(merged);
      std::vector<Late>().swap(s.late);
    }
  }
  // The calls of a key after its first (a driver call inside the runtime call that has its id).
  std::vector<SlicePlace> later_calls(int64_t key) const {
    std::vector<SlicePlace> calls;
    if (later_.empty()) return calls;
    auto [first, last] = later_.equal_range(key);
    for (auto it = first; it != last; ++it) calls.push_back(it->second);
    return calls;
  }
  const SlicePlace* find(int64_t key) {
    size_t space;
    uint32_t id;
    if (split_key(key, space, id)) return space < spaces_.size() ? spaces_[space].sorted.find(id) : nullptr;
    auto it = others_.find(key);
    return it == others_.end() ? nullptr : &it->second;
  }
  // Room for this many calls of the first process (most reports have one), so that the arrays
  // do not grow by doubling (a copy, and fresh pages, each time). Address space only: pages are
  // faulted in as calls come.
  void reserve(size_t calls) {
    if (spaces_.empty()) spaces_.resize(1);
    spaces_[0].sorted.reserve(calls);
  }

private:
  struct Late {
    uint32_t id;
    SlicePlace place;
    friend auto operator<=>(const Late&, const Late&) = default;
  };
  struct Space {
    SortedIds<SlicePlace> sorted;
    std::vector<Late> late;  // ids that came after a larger one
  };
  std::vector<Space> spaces_;
  std::unordered_map<int64_t, SlicePlace> others_;
  std::unordered_multimap<int64_t, SlicePlace> later_;  // a key's calls after its first (rare)
};

// The correlation rows of keys no API call has (GPU activities whose call the report lacks),
// found and added while the GPU tables are read: an id past its process's last is appended, one a
// little before it (up to 64 places) moved in, one further back goes through a hash. Such
// activities are rare in a report that traced the CUDA API, and come in about id order.
class UnlaunchedKeys {
public:
  // The row of a key, or kNone.
  uint32_t find(int64_t key) {
    size_t space;
    uint32_t id;
    if (split_key(key, space, id) && space < spaces_.size())
      if (const uint32_t* row = spaces_[space].find(id)) return *row;
    if (others_.empty()) return kNone;
    auto it = others_.find(key);
    return it == others_.end() ? kNone : it->second;
  }
  // A key find() did not find.
  void insert(int64_t key, uint32_t row) {
    size_t space;
    uint32_t id;
    if (split_key(key, space, id)) {
      if (space >= spaces_.size()) spaces_.resize(space + 1);
      SortedIds<uint32_t>& s = spaces_[space];
      if (s.append(id, row)) return;
      if (size_t at = s.search(id); s.ids.size() - at <= kMovedAtMost) {
        s.ids.insert(s.ids.begin() + ptrdiff_t(at), id);
        s.values.insert(s.values.begin() + ptrdiff_t(at), row);
        return;
      }
    }
    others_.emplace(key, row);
  }
  // As LaunchKeys::reserve.
  void reserve(size_t keys) {
    if (spaces_.empty()) spaces_.resize(1);
    spaces_[0].reserve(keys);
  }

private:
  static constexpr size_t kMovedAtMost = 64;
  std::vector<SortedIds<uint32_t>> spaces_;
  std::unordered_map<int64_t, uint32_t> others_;
};

// Tables whose rows become events.
constexpr const char* kEventTables[] = {
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "NVTX_EVENTS", "OSRT_API", "GPU_METRICS"};
constexpr const char* kGpuTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                      "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                      "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"};
// Tables read for names, devices and times: used, not events.
constexpr const char* kReferenceTables[] = {"StringIds", "PROCESSES", "ThreadNames", "TARGET_INFO_GPU",
                                            "TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_CUDA_CONTEXT_INFO",
                                            "META_DATA_EXPORT", "TARGET_INFO_GPU_METRICS"};

bool is_event_table(std::string_view table) {
  return std::find(std::begin(kEventTables), std::end(kEventTables), table) != std::end(kEventTables);
}

class NsysLoader {
public:
  NsysLoader(sqlite3* db, std::string file, uint64_t bytes, const LoadOptions& options)
      : db_(db), options_(options), bytes_(bytes) {
    error_.file = std::move(file);
  }

  LoadResult run();

private:
  bool load();
  bool fail(std::string message) {
    if (error_.message.empty()) error_.message = std::move(message);
    return false;
  }
  bool sql_fail(std::string_view what) {
    std::string found = direct_stop_.empty() ? "" : " (the direct reader stopped at " + direct_stop_ + ")";
    return fail(std::string(what) + ": " + sqlite3_errmsg(db_) + describe_corruption() + found);
  }
  std::string describe_corruption() const {
    int code = sqlite3_errcode(db_) & 0xFF;
    if (code == SQLITE_NOTADB) return " (not an SQLite database, or one truncated or damaged)";
    if (code == SQLITE_CORRUPT || code == SQLITE_IOERR)
      return " (the file is not a complete SQLite database: truncated or damaged)";
    return {};
  }

  // --- schema ---
  bool read_schema();
  bool has_table(std::string_view t) const { return columns_.count(std::string(t)) > 0; }
  bool has_column(std::string_view t, std::string_view c) const;
  std::string select(std::string_view table, std::initializer_list<const char*> columns) const;
  template <size_t N>
  std::string select(std::string_view table, const char* const (&columns)[N]) const;
  bool require(std::string_view table, std::initializer_list<const char*> columns);
  template <class Row>
  bool scan(std::string_view table, const std::string& sql, Row&& row);
  // The same rows as scan(table, select(table, columns), row), through the direct b-tree reader
  // when it can (values of their columns' declared kinds), SQLite's API otherwise or from where it
  // stopped.
  // `prepare`: work on each batch of rows on its decoding thread (BackgroundDecoding), e.g.
  // encoding their args (prepare_args).
  template <size_t N, class Row>
  bool scan_direct(const char* table, const char* const (&columns)[N], Row&& row,
                   const std::function<void(nsys::RowBatch&)>& prepare = {});
  std::optional<nsys::TableReader> direct_reader(const char* table, const char* const* columns, size_t n,
                                                 bool quiet = false);
  struct OpenedReader {
    std::optional<nsys::TableReader> reader;
    std::string why;       // when there is none
    bool damaged = false;  // why names damage in the table's tree (not a reason to leave it to SQLite)
  };
  OpenedReader open_reader(const char* table);
  OpenedReader walk_tree(const std::string& table);
  std::optional<uint64_t> direct_row_count(const std::string& table);
  void note_reader(std::string_view table, const std::string& how);
  bool check_export();

  // --- reference tables ---
  bool read_strings();
  bool read_processes();
  bool read_threads();
  bool read_devices();
  bool read_session_start();
  // By reference, and the usual case inline: an optional passed by value in registers is stored
  // as bytes and read back as a word (a stalled store forward per row, ~5 ns on 5 M rows).
  StringId string_id(const std::optional<int64_t>& nsys_id) {
    if (nsys_id && uint64_t(*nsys_id) < strings_.size() && strings_[size_t(*nsys_id)] != StringPool::kNotFound)
      return strings_[size_t(*nsys_id)];
    return string_id_slow(nsys_id);
  }
  StringId api_name(const std::optional<int64_t>& nsys_id) {
    if (nsys_id && uint64_t(*nsys_id) < api_dense_.size() && api_dense_[size_t(*nsys_id)] != StringPool::kNotFound)
      return api_dense_[size_t(*nsys_id)];
    return api_name_slow(nsys_id);
  }
  StringId string_id_slow(const std::optional<int64_t>& nsys_id);
  StringId api_name_slow(const std::optional<int64_t>& nsys_id);

  // --- placement ---
  uint32_t host_process(int64_t global_pid);
  uint32_t thread_track(int64_t global_tid);
  uint32_t device_process(int64_t device);
  uint32_t stream_track(int64_t device, int64_t stream);
  int64_t correlation_key(int64_t global_pid, int64_t id);
  uint32_t launched_correlation(int64_t key, SlicePlace launch);
  uint32_t unlaunched_correlation(int64_t key);
  void seed_correlation_spaces();
  void reserve_track(uint32_t track, uint64_t rows, bool& side_reserved);
  void publish_reserved_columns();
  void release_reserved();
  uint64_t table_rows(const char* table);
  void count_rows();
  static int64_t pid_of(int64_t global_tid) { return global_tid & ~int64_t(0xFFFFFF); }

  // --- rows ---
  template <class Source>
  bool time_span(const Source& s, int start_col, TimeNs& start, TimeNs& dur, bool& open);
  bool absolute(int64_t t, TimeNs& out);
  void skip_row(IssueKind kind) {
    store_->issues.add_count(kind, 1);
    ++store_->counts.skipped;
  }
  // The args of a row whose args are a function of it alone (`encode(row, out)`, writing
  // through ArgsText or ArgsText::Fields, at most MaxBytes): encoded on its decoding thread by
  // prepare_args, or here.
  template <size_t MaxBytes, class Source, class Encode>
  uint32_t row_args(const Source& s, const Encode& encode) {
    if constexpr (std::is_same_v<Source, nsys::BatchRow>) {
      if (const nsys::RowBatch::Prepared* r = s.prepared()) {
        std::vector<ArgsBlocks::RecordPlace>& places = record_places(s);
        if (r->base == UINT32_MAX) {
          uint32_t args = args_->append(s.prepared_bytes(), r->fields, r->text);
          places[s.row] = args_->last_record();
          return args;
        }
        // A repeat of an earlier row's record, when that record is in the open block; else this
        // row's record in full, and the base of the rows that repeat the same one after it.
        uint32_t args = args_->append_repeat(places[r->base], s.prepared_bytes(), r->fields, r->text);
        if (args != kNone) return args;
        args = full_args<MaxBytes>(s, encode);
        places[r->base] = args_->last_record();
        return args;
      }
    }
    return full_args<MaxBytes>(s, encode);
  }
  template <size_t MaxBytes, class Source, class Encode>
  uint32_t full_args(const Source& s, const Encode& encode) {
    char record[MaxBytes];
    ArgsText::Fields fields(*args_, record);
    encode(s, fields);
    const ArgsRecordWriter& w = fields.writer();
    return args_->append({record, w.bytes()}, w.fields(), w.text_size());
  }
  // Where each row of a batch put its args record (for the repeats after it), reset at every
  // batch: rows come in order, and a batch's last rowid is not another batch's.
  std::vector<ArgsBlocks::RecordPlace>& record_places(const nsys::BatchRow& s) {
    if (s.batch != places_batch_ || s.batch->last_rowid != places_rowid_) {
      places_batch_ = s.batch, places_rowid_ = s.batch->last_rowid;
      record_places_.assign(s.batch->rows(), ArgsBlocks::RecordPlace{});
    }
    return record_places_;
  }
  template <size_t N, size_t MaxBytes, class Encode>
  std::function<void(nsys::RowBatch&)> prepare_args(const Encode& encode) const {
    return [this, encode](nsys::RowBatch& b) {
      size_t rows = b.rows();
      if (b.prepared.size() < rows * MaxBytes) b.prepared.resize(rows * MaxBytes);
      b.prepared_rows.resize(rows);
      size_t used = 0;
      for (size_t i = 0; i < rows; ++i) {
        ArgsText::Fields fields(*args_, b.prepared.data() + used);
        encode(nsys::BatchRow{&b.values[i * N], &b.present[i * N]}, fields);
        const ArgsRecordWriter& w = fields.writer();
        used += w.bytes();
        b.prepared_rows[i] = {uint32_t(used), w.fields(), uint32_t(w.text_size())};
      }
    };
  }
  std::function<void(nsys::RowBatch&)> prepare_kernel_args() const;
  bool read_runtime();
  bool read_osrt();
  bool read_nvtx_names();
  bool read_nvtx();
  bool read_kernels();
  bool read_memcpy();
  bool read_memset();
  bool read_sync();
  bool read_graphs();
  bool read_gpu_metrics();
  struct GpuRow {
    TimeNs start = 0, dur = 0;
    int64_t device = 0, context = 0, stream = -1, global_pid = 0;
    std::optional<int64_t> correlation;
  };
  template <class Source>
  bool gpu_row(const Source& s, GpuRow& row);
  void gpu_args(const GpuRow& row);
  void add_gpu(const GpuRow& row, StringId name, StringId cat, uint32_t args);
  uint32_t owned_stream_track(const GpuRow& row);
  std::string stream_owner_name(int64_t stream, int64_t global_pid, int64_t context) const;
  void group_streams_by_context();
  bool has_gpu_work(uint32_t track) const { return track < gpu_work_tracks_.size() && gpu_work_tracks_[track]; }
  bool note_tables();
  void progress();
  void report_progress();
  void check_cancel();

  sqlite3* db_;
  LoadOptions options_;
  uint64_t bytes_;
  LoadError error_;
  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TraceBuilder> builder_;
  std::unique_ptr<ArgsText> args_;
  std::unordered_map<std::string, std::vector<std::string>> columns_;  // table → its columns
  std::unordered_map<std::string, std::vector<nsys::ValueKind>> column_kinds_;  // by its declared type
  std::unordered_set<std::string> keyed_tables_;  // with a key that is not the rowid
  std::vector<std::string> table_order_;
  std::vector<std::string> unreadable_;  // tables skipped for want of a column, with why
  std::string schema_unknown_;            // why the export's schema version is not known ("" if it is)
  std::unique_ptr<DatabaseImage> image_;  // for the direct reader, made on first use
  std::unordered_map<std::string, OpenedReader> readers_;  // by table, opened on first use
  std::string reader_notes_;              // how each big table was read (SIGHTLINE_TIMING)
  std::string direct_stop_;               // where the direct reader stopped, for error messages
  double decoding_cpu_seconds_ = 0, thread_cpu_at_start_ = 0;  // SIGHTLINE_TIMING
  TimeNs session_ns_ = 0;  // UTC of the session start: nsys times are ns since it
  uint64_t rows_ = 0;
  const char* phase_ = "reading";
  uint64_t event_tables_ = 0, tables_done_ = 0;  // scans of event tables, for progress

  // StringIds: dense ids in a vector, sparse ones in a map. Each string is interned when a row
  // first names it (string_id_slow): until then, its bytes wait in raw_strings_. A report's
  // StringIds also holds what Sightline does not show (CPU sampling's symbols and modules, often
  // most of it): interning 500k such strings took 0.1 s, and they stayed in the store.
  std::vector<StringId> strings_;
  std::unordered_map<int64_t, StringId> sparse_strings_;
  struct RawString {
    const char* data = nullptr;
    uint32_t size = kNone;  // kNone: no such id
  };
  std::vector<std::unique_ptr<char[]>> raw_blocks_;  // 4 MB each (or one string's), never moved
  char* raw_next_ = nullptr;                         // the free bytes at the end of the last block
  size_t raw_left_ = 0;
  std::vector<RawString> raw_dense_;                 // by id, like strings_
  std::unordered_map<int64_t, RawString> raw_sparse_;
  std::unordered_map<int64_t, StringId> api_names_;
  std::vector<StringId> api_dense_;  // by StringIds id, like strings_

  struct ProcessInfo {
    int64_t pid;
    std::string name;
  };
  std::unordered_map<int64_t, ProcessInfo> process_info_;  // globalPid → PROCESSES row
  std::unordered_map<int64_t, int64_t> thread_names_;      // globalTid → StringIds id
  std::unordered_map<int64_t, uint32_t> host_processes_;   // globalPid → store process
  std::unordered_map<int64_t, uint32_t> thread_tracks_;    // globalTid → track
  int64_t last_tid_ = 0;
  uint32_t last_track_ = kNone;
  std::unordered_map<int64_t, std::string> device_names_;
  std::unordered_map<int64_t, uint32_t> device_processes_;
  std::unordered_map<uint64_t, uint32_t> stream_tracks_;   // device << 32 ^ stream → track
  uint64_t last_stream_key_ = 0;                           // the last found, as thread_track keeps
  uint32_t last_stream_track_ = kNone;
  std::vector<bool> gpu_work_tracks_;                      // by track: a stream track with more than syncs
  struct StreamOwner {
    int64_t global_pid = 0, context = 0;
    bool set = false;
  };
  std::vector<StreamOwner> stream_owners_;                 // by track: whose stream it is
  std::map<std::tuple<uint32_t, int64_t, int64_t>, uint32_t> shared_streams_;  // (track, owner) → its own track
  std::unordered_map<int64_t, int64_t> correlation_space_; // globalPid → ordinal
  int64_t last_space_pid_ = 0, last_space_ = -1;
  LaunchKeys launches_;                                    // correlation key → its first API call
  UnlaunchedKeys unlaunched_;                              // correlation key → row, with no API call
  // Rows the event tables hold (leaf cell counts), for reserving the store's columns up front.
  uint64_t host_rows_ = 0, gpu_rows_ = 0;
  bool host_track_reserved_ = false, gpu_track_reserved_ = false;
  std::vector<uint32_t> reserved_tracks_;
  PagesAhead pages_ahead_;  // the reserved columns' next pages, faulted in by the decoding thread
  std::vector<ArgsBlocks::RecordPlace> record_places_;  // row_args: by row of the batch being read
  const nsys::RowBatch* places_batch_ = nullptr;
  int64_t places_rowid_ = 0;
  std::unordered_map<uint64_t, std::string> nvtx_domains_, nvtx_categories_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> nvtx_async_;  // (process, domain) → track
  StringId cat_runtime_ = 0, cat_driver_ = 0, cat_kernel_ = 0, cat_memcpy_ = 0, cat_memset_ = 0, cat_sync_ = 0;
  StringId cat_annotation_ = 0, cat_osrt_ = 0, cat_graph_ = 0;
};

LoadResult NsysLoader::run() {
  auto t0 = std::chrono::steady_clock::now();
  LoadResult result;
  bool ok = false;
  try {
    ok = load();
  } catch (const std::bad_alloc&) {
    ok = fail("out of memory");
  }
  if (ok) {
    result.store = std::move(store_);
  } else {
    result.error = error_;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

bool NsysLoader::load() {
  auto started = std::chrono::steady_clock::now();
  timespec cpu{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  thread_cpu_at_start_ = double(cpu.tv_sec) + double(cpu.tv_nsec) * 1e-9;
  store_ = std::make_unique<TraceStore>();
  builder_ = std::make_unique<TraceBuilder>(*store_);
  // No JSON text (meta.hta.from_text stays false): HTA mode takes the rank from the metadata
  // instead of a regex over args.
  args_ = std::make_unique<ArgsText>(*store_, *builder_);
  store_->meta.format = "nsys-sqlite";
  store_->meta.file = error_.file;
  store_->meta.bytes = bytes_;
  StringPool& s = store_->strings;
  cat_runtime_ = s.intern("cuda_runtime");
  cat_driver_ = s.intern("cuda_driver");
  cat_kernel_ = s.intern("kernel");
  cat_memcpy_ = s.intern("gpu_memcpy");
  cat_memset_ = s.intern("gpu_memset");
  cat_sync_ = s.intern("cuda_sync");
  cat_annotation_ = s.intern("user_annotation");
  cat_osrt_ = s.intern("os_runtime");
  cat_graph_ = s.intern("cuda_graph");
  builder_->flows_from_launches(s.intern("ac2g"));  // a launch's flows, as Kineto's

  if (!read_schema() || !check_export()) return false;
  // Every scan of an event table: each once, NVTX's names.
  for (const char* t : kEventTables) event_tables_ += has_table(t) * (std::string_view(t) == "NVTX_EVENTS" ? 2 : 1);
  if (!read_strings() || !read_session_start() || !read_devices() || !read_processes() || !read_threads()) return false;
  count_rows();
  // Host side first (launches must be known before the GPU rows that name them).
  seed_correlation_spaces();
  auto t1 = std::chrono::steady_clock::now();
  if (!read_runtime() || !read_osrt() || !read_nvtx()) return false;
  launches_.seal();
  auto t2 = std::chrono::steady_clock::now();
  if (!read_kernels() || !read_memcpy() || !read_memset() || !read_sync() || !read_graphs()) return false;
  if (!read_gpu_metrics()) return false;
  auto t3 = std::chrono::steady_clock::now();
  // As for Kineto files, a track holding only syncs (context-wide ones on tid -1) is a GPU track
  // but not GPU work: it is not counted among the streams.
  for (auto [key, track] : stream_tracks_)
    if (!has_gpu_work(track)) store_->tracks[track].gpu_work = false;
  for (auto [key, track] : shared_streams_)
    if (!has_gpu_work(track)) store_->tracks[track].gpu_work = false;
  group_streams_by_context();
  if (!note_tables()) return false;
  release_reserved();
  args_.reset();  // seals the last args block
  auto t4 = std::chrono::steady_clock::now();
  // Nothing reads the file's bytes after the tables: their pages are unmapped (~10 ms for a
  // 200 MB export) on a thread of their own while finish() runs.
  readers_.clear();
  std::jthread unmap([image = std::move(image_)]() mutable { image.reset(); });
  builder_->finish();
  if (std::getenv("SIGHTLINE_TIMING")) {
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    timespec cpu{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    std::fprintf(stderr, "%snsys: schema and reference tables %.1f ms, host tables %.1f ms, GPU tables %.1f ms, finish %.1f ms\n"
                 "nsys: CPU of this thread %.1f ms, of the decoding threads %.1f ms\n",
                 reader_notes_.c_str(), ms(started, t1), ms(t1, t2), ms(t2, t3), ms(t4, std::chrono::steady_clock::now()),
                 (double(cpu.tv_sec) + double(cpu.tv_nsec) * 1e-9 - thread_cpu_at_start_) * 1e3,
                 decoding_cpu_seconds_ * 1e3);
  }
  return true;
}

// The bytes read are not known: "done" advances by event table (a fraction of the file size), the
// phase names the table being read.
void NsysLoader::report_progress() {
  if (!options_.on_progress) return;
  LoadProgress p;
  p.phase = phase_;
  p.events = rows_;
  p.bytes_total = bytes_;
  p.bytes_done = event_tables_ ? bytes_ * std::min(tables_done_, event_tables_) / event_tables_ : 0;
  options_.on_progress(p);
}

void NsysLoader::progress() {
  if (++rows_ % kProgressEvery) return;
  report_progress();
  check_cancel();
}

void NsysLoader::check_cancel() {
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
    error_.cancelled = true;
    fail("cancelled");
  }
}

// ---------------------------------------------------------------- schema

bool NsysLoader::read_schema() {
  Statement tables(db_, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  if (!tables.prepared()) return sql_fail("not a readable SQLite database");
  int rc;
  while ((rc = tables.step()) == SQLITE_ROW) table_order_.emplace_back(tables.text(0));
  if (rc != SQLITE_DONE) return sql_fail("reading the list of tables");
  // Every table's columns in one statement (one per table took 1.3 ms on a report of 80 tables),
  // with their keys: a rowid table's one INTEGER PRIMARY KEY is its rowid (StringIds' id), any
  // other key keeps the direct reader off the table.
  Statement columns(db_, "SELECT m.name, c.name, c.type, c.pk, t.wr FROM sqlite_master AS m, "
                         "pragma_table_info(m.name) AS c, pragma_table_list AS t "
                         "WHERE m.type = 'table' AND t.schema = 'main' AND t.name = m.name ORDER BY m.name, c.cid");
  if (!columns.prepared()) return sql_fail("reading the columns of the tables");
  for (const std::string& t : table_order_) columns_[t], column_kinds_[t];  // tables without columns too
  struct Key {
    size_t column;
    std::string type;
  };
  std::unordered_map<std::string, std::vector<Key>> keys;  // table → its key columns
  std::unordered_set<std::string> without_rowid;
  while ((rc = columns.step()) == SQLITE_ROW) {
    std::string table(columns.text(0)), type(columns.text(2));
    auto& kinds = column_kinds_[table];
    for (char& c : type) c = char(std::toupper(static_cast<unsigned char>(c)));
    if (columns.i64(3) != 0) keys[table].push_back({kinds.size(), type});
    if (columns.i64(4) != 0) without_rowid.insert(table);
    columns_[table].emplace_back(columns.text(1));
    kinds.push_back(value_kind(type));
  }
  if (rc != SQLITE_DONE) return sql_fail("reading the columns of the tables");
  // "INTEGER" exactly: an INT PRIMARY KEY is no rowid alias.
  for (const auto& [table, key] : keys) {
    if (key.size() == 1 && key[0].type == "INTEGER" && !without_rowid.count(table))
      column_kinds_[table][key[0].column] = nsys::ValueKind::Rowid;
    else
      keyed_tables_.insert(table);
  }
  return true;
}

bool NsysLoader::has_column(std::string_view t, std::string_view c) const {
  auto it = columns_.find(std::string(t));
  return it != columns_.end() && std::find(it->second.begin(), it->second.end(), c) != it->second.end();
}

// "SELECT a, NULL, c FROM t": a column this schema version lacks reads as NULL, so the column
// indexes of a query never change.
std::string NsysLoader::select(std::string_view table, std::initializer_list<const char*> columns) const {
  std::string sql = "SELECT ";
  bool first = true;
  for (const char* c : columns) {
    if (!first) sql += ", ";
    first = false;
    sql += has_column(table, c) ? quote_identifier(c) : std::string("NULL");
  }
  return sql + " FROM " + quote_identifier(table);
}

template <size_t N>
std::string NsysLoader::select(std::string_view table, const char* const (&columns)[N]) const {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < N; ++i) {
    if (i) sql += ", ";
    sql += has_column(table, columns[i]) ? quote_identifier(columns[i]) : std::string("NULL");
  }
  return sql + " FROM " + quote_identifier(table);
}

// A table without the columns an event cannot do without is not read, and says so in `info`.
bool NsysLoader::require(std::string_view table, std::initializer_list<const char*> columns) {
  if (!has_table(table)) return false;
  std::string missing;
  for (const char* c : columns)
    if (!has_column(table, c)) missing += (missing.empty() ? "" : ", ") + std::string(c);
  if (missing.empty()) return true;
  unreadable_.push_back(std::string(table) + " lacks column(s) " + missing);
  return false;
}

template <class Row>
bool NsysLoader::scan(std::string_view table, const std::string& sql, Row&& row) {
  Statement s(db_, sql);
  if (!s.prepared()) return sql_fail("reading " + std::string(table));
  bool events = is_event_table(table);
  if (events) {
    phase_ = table.data();  // every caller passes a literal
    report_progress();
    check_cancel();
    if (!error_.message.empty()) return false;
  }
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    row(s);
    progress();
    if (!error_.message.empty()) return false;
  }
  tables_done_ += events;
  return rc == SQLITE_DONE || sql_fail("reading " + std::string(table));
}

// Batches of this many leaf pages (of 4 KiB in nsys exports: ~4000 runtime rows, ~1000 kernels).
constexpr size_t kPagesPerBatch = 64;

template <size_t N, class Row>
bool NsysLoader::scan_direct(const char* table, const char* const (&columns)[N], Row&& row,
                             const std::function<void(nsys::RowBatch&)>& prepare) {
  std::string sql = select(table, columns);
  std::optional<nsys::TableReader> reader = direct_reader(table, columns, N);
  if (!reader) {
    // Damage found in the tree is where SQLite's error on the table, if it fails too, points.
    if (const OpenedReader& opened = readers_[table]; opened.damaged) direct_stop_ = opened.why;
    return scan(table, sql, row);
  }
  bool events = is_event_table(table);
  if (events) phase_ = table;
  report_progress();
  check_cancel();
  if (!error_.message.empty()) return false;
  uint64_t fed = 0;
  int64_t last_rowid = 0;
  auto feed = [&](const nsys::RowBatch& batch) {
    for (size_t i = 0, rows = batch.rows(); i < rows; ++i) {
      row(nsys::BatchRow{&batch.values[i * N], &batch.present[i * N], &batch, i});
      progress();
      if (!error_.message.empty()) return false;
    }
    if (batch.rows()) fed += batch.rows(), last_rowid = batch.last_rowid;
    publish_reserved_columns();
    return true;
  };
  // A decoding thread per core but the one building the store (at least one, at most three):
  // more, and batches wait for one another's turn (handed over in order) while the threads take
  // turns on the cores (two decoding threads on 2 cores: the kernel-heavy report's kernels 4%
  // slower).
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  nsys::BackgroundDecoding how;
  how.threads = std::clamp<size_t>(cores - 1, 1, 3);
  how.prepare = prepare;
  how.spare_work = [&] { return pages_ahead_.fault_next(); };
  how.cpu_seconds = &decoding_cpu_seconds_;
  std::string stop = nsys::decode_in_background(*reader, N, kPagesPerBatch, feed, how);
  if (!error_.message.empty()) return false;
  if (stop.empty()) {
    tables_done_ += events;
    note_reader(table, "direct, " + std::to_string(fed) + " rows of " + std::to_string(N) + " columns from " +
                           std::to_string(reader->leaf_count()) + " leaf pages");
    return true;
  }
  // Rows come in rowid order on both paths: SQLite's API goes on after the last row decoded.
  direct_stop_ = stop;
  note_reader(table, "direct for " + std::to_string(fed) + " rows, then SQLite's API: stopped at " + stop);
  return scan(table, fed ? sql + " WHERE rowid > " + std::to_string(last_rowid) : sql, row);
}

// Rows of a table by its rowids (TableReader::row_bound), where the direct reader can open it
// (else 0: nothing is reserved for it).
uint64_t NsysLoader::table_rows(const char* table) {
  if (!has_table(table)) return 0;
  std::optional<nsys::TableReader> reader = direct_reader(table, nullptr, 0, true);
  return reader ? reader->row_bound() : 0;
}

// How many rows the host tables (CUDA API, OS runtime, NVTX) and the GPU tables hold: a track
// of either side can get at most that many slices, and the args table one row per event.
void NsysLoader::count_rows() {
  for (const char* t : {"CUPTI_ACTIVITY_KIND_RUNTIME", "OSRT_API", "NVTX_EVENTS"}) host_rows_ += table_rows(t);
  for (const char* t : kGpuTables) gpu_rows_ += table_rows(t);
  // Room, not memory (pages are faulted in as rows come): a correlation row per GPU activity at
  // most. Grown by doubling, it was copied: ~15 MB each time on a report of a million launched
  // kernels.
  try {
    builder_->reserve_args(host_rows_ + gpu_rows_);
    builder_->reserve_correlations(gpu_rows_);
    launches_.reserve(table_rows("CUPTI_ACTIVITY_KIND_RUNTIME"));
    unlaunched_.reserve(gpu_rows_);
  } catch (const std::bad_alloc&) {  // a hint only
  }
}

// A new track's columns get room for every row its side's tables hold, so they never grow by
// doubling (a copy, and fresh pages faulted in, each time). Only address space is reserved:
// pages are faulted in as rows arrive, and release_unused() gives back what stayed unused on
// tracks that got few rows. One track of each side gets a reservation, no more than the rows there
// are: the first thread to call CUDA (the main thread, which makes most calls) and the first
// stream. More (every thread, or a few) was tried: the freed reservations of tracks with few rows
// fragment malloc's heap, and repeated loads in one process peaked at 1.4x the memory. (One
// budget for both sides let a report's host threads use it up before its first stream: a
// kernel-heavy report's stream then grew by doubling, with a copy each time: 0.147 → 0.140 s.)
//
// The columns finish() derives (parent, depth, lane, the max-end prefix: sized to the rows when
// nesting) are reserved too, so that pages_ahead_ can fault their pages in while the tables are
// read rather than finish() on this thread.
void NsysLoader::reserve_track(uint32_t track, uint64_t rows, bool& side_reserved) {
  if (rows == 0 || side_reserved) return;
  try {
    builder_->reserve_slices(track, size_t(rows));
    Track& t = store_->tracks[track];
    t.slices.parent.reserve(t.slices.parent.size() + rows);
    t.slices.depth.reserve(t.slices.depth.size() + rows);
    t.slices.lane.reserve(t.slices.lane.size() + rows);
    t.max_end_prefix.reserve(t.max_end_prefix.size() + rows);
  } catch (const std::bad_alloc&) {  // a hint only (strict overcommit may refuse the address space)
    return;
  }
  side_reserved = true;
  reserved_tracks_.push_back(track);
}

// After the tables: what a track's reservation left unused goes back (as release_unused() does
// for the input columns; the derived ones are still empty, so nothing is copied).
void NsysLoader::release_reserved() {
  for (uint32_t track : reserved_tracks_) {
    builder_->release_unused(track);
    Track& t = store_->tracks[track];
    if (t.slices.parent.capacity() <= 2 * t.slices.size()) continue;
    std::vector<uint32_t>().swap(t.slices.parent);
    std::vector<uint16_t>().swap(t.slices.depth);
    std::vector<uint16_t>().swap(t.slices.lane);
    std::vector<TimeNs>().swap(t.max_end_prefix);
  }
}

// The columns the builder appends to that were reserved up front, for pages_ahead_.
void NsysLoader::publish_reserved_columns() {
  std::vector<PagesAhead::Column> columns;
  for (uint32_t track : reserved_tracks_) {
    const Track& t = store_->tracks[track];
    const SliceColumns& c = t.slices;
    size_t rows = c.size();
    for (const PagesAhead::Column& column :
         {PagesAhead::column(c.start), PagesAhead::column(c.dur), PagesAhead::column(c.name),
          PagesAhead::column(c.cat), PagesAhead::column(c.args), PagesAhead::column(c.corr),
          PagesAhead::column(c.parent, rows), PagesAhead::column(c.depth, rows), PagesAhead::column(c.lane, rows),
          PagesAhead::column(t.max_end_prefix, rows)})
      columns.push_back(column);
  }
  columns.push_back(PagesAhead::column(store_->args_table()));
  columns.push_back(PagesAhead::column(store_->correlations));
  pages_ahead_.publish(columns);
}

void NsysLoader::note_reader(std::string_view table, const std::string& how) {
  reader_notes_ += "nsys " + std::string(table) + ": " + how + "\n";
}

// A reader for the table when the direct path applies: a plain rowid table (no INTEGER PRIMARY
// KEY alias, no generated columns, no defaults a short record would need), in a database whose
// bytes are at hand. Otherwise nothing, and why is noted.
std::optional<nsys::TableReader> NsysLoader::direct_reader(const char* table, const char* const* columns, size_t n,
                                                           bool quiet) {
  auto refuse = [&](const std::string& why) {
    if (!quiet) note_reader(table, "SQLite's API: " + why);
    return std::nullopt;
  };
  auto [opened, added] = readers_.try_emplace(table);
  if (added) opened->second = open_reader(table);
  if (!opened->second.reader) return refuse(opened->second.why);
  const std::vector<std::string>& have = columns_.at(table);
  const std::vector<nsys::ValueKind>& have_kinds = column_kinds_.at(table);
  std::vector<int> record_columns;
  std::vector<nsys::ValueKind> kinds;
  for (size_t i = 0; i < n; ++i) {
    auto at = std::find(have.begin(), have.end(), columns[i]);
    record_columns.push_back(at == have.end() ? -1 : int(at - have.begin()));
    kinds.push_back(at == have.end() ? nsys::ValueKind::Integer : have_kinds[size_t(at - have.begin())]);
  }
  nsys::TableReader reader = *opened->second.reader;
  reader.select(record_columns, kinds);
  return reader;
}

// The table's tree walked once (count_rows and the rows both read it).
NsysLoader::OpenedReader NsysLoader::open_reader(const char* table) {
  Statement info(db_, "SELECT count(*) FROM pragma_table_xinfo(?1) WHERE hidden != 0 OR dflt_value IS NOT NULL");
  if (!info.prepared()) return {std::nullopt, "cannot read the columns"};
  info.bind(1, table);
  if (info.step() != SQLITE_ROW || info.i64(0) != 0 || keyed_tables_.count(table))
    return {std::nullopt, "a key other than the rowid, a generated or a defaulted column"};
  return walk_tree(table);
}

// The table's b-tree found in the file's bytes and walked down to its leaves, or why not.
NsysLoader::OpenedReader NsysLoader::walk_tree(const std::string& table) {
  if (!direct_reading_enabled()) return {std::nullopt, "SIGHTLINE_NSYS_READER=sqlite"};
  if (!image_) image_ = std::make_unique<DatabaseImage>(db_);
  if (image_->bytes().empty()) return {std::nullopt, image_->why()};
  Statement root(db_, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?1");
  if (!root.prepared()) return {std::nullopt, "no root page"};
  root.bind(1, table);
  if (root.step() != SQLITE_ROW || root.null(0)) return {std::nullopt, "no root page"};
  nsys::TableReader reader(image_->bytes(), table, root.i64(0), {});
  if (!reader.open()) return {std::nullopt, reader.why(), true};
  return {std::move(reader), ""};
}

// A table's rows from its leaves' headers, where count(*) reads every page through SQLite's pager
// (a report's CPU-sampling call chains, often its biggest table, took ~11 ms per million rows).
// Any rowid table will do (its columns are not read); nullopt leaves it to count(*).
std::optional<uint64_t> NsysLoader::direct_row_count(const std::string& table) {
  OpenedReader tree = walk_tree(table);
  return tree.reader ? tree.reader->exact_row_count() : std::nullopt;
}

// An Nsight export has StringIds (every name) and event tables. Without either it is not one: the
// error names what is missing (META_DATA_EXPORT too, when absent) and the tables the file has.
// With both but no schema version (no META_DATA_EXPORT, or no EXPORT_SCHEMA_VERSION row in it)
// the events are there to read: the report loads, rather than refusing data that is there (a
// trimmed or hand-made export), and `info` says the version is unknown ("schema unknown", and
// under `not recorded`). A schema version other than 3.x is refused.
bool NsysLoader::check_export() {
  bool any_events = false;
  for (const char* t : kEventTables) any_events |= has_table(t);
  if (!has_table("StringIds") || !any_events) {
    std::string missing;
    auto lacks = [&](std::string_view what) { missing.append(missing.empty() ? "no " : ", no ").append(what); };
    if (!has_table("StringIds")) lacks("StringIds table");
    if (!any_events) lacks("event table (CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, OSRT_API, GPU_METRICS)");
    if (!has_table("META_DATA_EXPORT")) lacks("META_DATA_EXPORT table");
    std::string found;
    for (size_t i = 0; i < table_order_.size() && i < 8; ++i) found += (i ? ", " : "") + table_order_[i];
    if (table_order_.size() > 8) found += ", ...";
    return fail("not an Nsight Systems export: " + missing + " (" +
                (found.empty() ? std::string("the database has no tables") : "its tables: " + found) + ")");
  }
  std::string schema, product;
  if (require("META_DATA_EXPORT", {"name", "value"})) {
    bool ok = scan("META_DATA_EXPORT", "SELECT name, value FROM META_DATA_EXPORT", [&](const Statement& s) {
      if (s.text(0) == "EXPORT_SCHEMA_VERSION") schema = s.text(1);
      if (s.text(0) == "EXPORT_PRODUCT_VERSION") product = s.text(1);
    });
    if (!ok) return false;
  }
  if (schema.empty())
    schema_unknown_ = has_table("META_DATA_EXPORT") ? "export schema version (no EXPORT_SCHEMA_VERSION in META_DATA_EXPORT)"
                                                    : "export schema version (no META_DATA_EXPORT table)";
  if (!schema.empty() && !schema.starts_with("3."))
    return fail("unsupported Nsight Systems export schema version " + schema +
                " (Sightline reads schema 3.x, written by nsys 2021 to 2025)");
  JsonWriter w;
  w.begin_object().field("schema_version", schema.empty() ? "unknown" : schema);
  w.field("product_version", product.empty() ? "unknown" : product).end_object();
  store_->meta.top_level.emplace_back("nsys_export", w.str());
  return true;
}

// ---------------------------------------------------------------- reference tables

bool NsysLoader::read_strings() {
  if (!require("StringIds", {"id", "value"})) return fail("StringIds lacks its id or value column");
  uint64_t count = 0;
  static constexpr const char* kColumns[] = {"id", "value"};
  bool ok = scan_direct("StringIds", kColumns, [&](const auto& s) {
    std::string_view value = s.text(1).substr(0, kNone - 1);
    if (value.size() > raw_left_) {
      raw_left_ = std::max<size_t>(value.size(), 4 << 20);
      raw_blocks_.push_back(std::make_unique_for_overwrite<char[]>(raw_left_));
      raw_next_ = raw_blocks_.back().get();
    }
    if (!value.empty()) std::memcpy(raw_next_, value.data(), value.size());  // no block yet for ""
    RawString raw{raw_next_, uint32_t(value.size())};
    raw_next_ += value.size(), raw_left_ -= value.size();
    // Ids are dense from 0 in every export seen: by id in a vector (checked below), others in a map.
    int64_t id = s.i64(0);
    if (id >= 0 && uint64_t(id) <= 4 * count + 1024) {
      if (uint64_t(id) >= raw_dense_.size()) raw_dense_.resize(std::max<size_t>(size_t(id) + 1, 2 * raw_dense_.size()));
      raw_dense_[size_t(id)] = raw;
    } else {
      raw_sparse_[id] = raw;
    }
    ++count;
  });
  if (!ok) return false;
  if (raw_dense_.size() > 4 * count + 1024) {  // ids far apart after all
    for (size_t id = 0; id < raw_dense_.size(); ++id)
      if (raw_dense_[id].size != kNone) raw_sparse_.emplace(int64_t(id), raw_dense_[id]);
    raw_dense_.clear();
  }
  strings_.assign(raw_dense_.size(), StringPool::kNotFound);
  api_dense_.assign(strings_.size(), StringPool::kNotFound);
  return true;
}

StringId NsysLoader::string_id_slow(const std::optional<int64_t>& id) {
  if (!id) return 0;
  auto text = [](RawString raw) { return std::string_view(raw.data, raw.size); };
  bool in_dense = *id >= 0 && uint64_t(*id) < raw_dense_.size();
  if (in_dense && raw_dense_[size_t(*id)].size != kNone)
    return strings_[size_t(*id)] = store_->strings.intern(text(raw_dense_[size_t(*id)]));
  auto it = sparse_strings_.find(*id);
  if (it != sparse_strings_.end()) return it->second;
  auto raw = raw_sparse_.find(*id);  // ids are not in order: one far ahead went here
  // A dangling id: keep the event, named by the id.
  StringId sid = raw != raw_sparse_.end() ? store_->strings.intern(text(raw->second))
                                          : store_->strings.intern("<string " + std::to_string(*id) + ">");
  sparse_strings_[*id] = sid;
  return sid;
}

// "cudaLaunchKernel_v7000" → "cudaLaunchKernel": Kineto and CUPTI callback names carry no
// version suffix, and the analyses match API names exactly.
StringId NsysLoader::api_name_slow(const std::optional<int64_t>& id) {
  int64_t key = id.value_or(INT64_MIN);
  bool dense = id && *id >= 0 && size_t(*id) < api_dense_.size();
  auto it = dense ? api_names_.end() : api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  std::string_view name = store_->strings.view(string_id(id));
  size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
    name = name.substr(0, v);
  StringId sid = store_->strings.intern(name.empty() ? std::string_view("<unnamed API call>") : name);
  if (dense) api_dense_[size_t(*id)] = sid;
  else api_names_[key] = sid;
  return sid;
}

bool NsysLoader::read_session_start() {
  if (!require("TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"})) return true;
  return scan("TARGET_INFO_SESSION_START_TIME", "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
              [&](const Statement& s) {
                int64_t t = s.i64(0);
                if (t > -kMaxAbsNs / 2 && t < kMaxAbsNs / 2) session_ns_ = t;
              });
}

bool NsysLoader::read_processes() {
  if (!require("PROCESSES", {"globalPid", "pid"})) return true;
  return scan("PROCESSES", select("PROCESSES", {"globalPid", "pid", "name"}), [&](const Statement& s) {
    process_info_[s.i64(0)] = {s.i64(1), std::string(s.text(2))};
  });
}

bool NsysLoader::read_threads() {
  if (!require("ThreadNames", {"globalTid", "nameId"})) return true;
  return scan("ThreadNames", "SELECT globalTid, nameId FROM ThreadNames",
              [&](const Statement& s) { thread_names_[s.i64(0)] = s.i64(1); });
}

// TARGET_INFO_GPU → devices, with the keys Kineto writes in deviceProperties (and the clocks,
// bandwidth and cache nsys adds, under their nsys names).
bool NsysLoader::read_devices() {
  if (require("TARGET_INFO_CUDA_CONTEXT_INFO", {"deviceId"})) {
    bool ok = scan("TARGET_INFO_CUDA_CONTEXT_INFO", "SELECT deviceId FROM TARGET_INFO_CUDA_CONTEXT_INFO",
                   [&](const Statement& s) { device_names_.try_emplace(s.i64(0)); });
    if (!ok) return false;
  }
  if (!require("TARGET_INFO_GPU", {"id"})) return true;
  static constexpr std::pair<const char*, const char*> kNumbers[] = {
      {"totalMemory", "totalGlobalMem"},  {"computeMajor", "computeMajor"},
      {"computeMinor", "computeMinor"},   {"maxThreadsPerBlock", "maxThreadsPerBlock"},
      {"maxRegistersPerBlock", "regsPerBlock"}, {"threadsPerWarp", "warpSize"},
      {"maxShmemPerBlock", "sharedMemPerBlock"}, {"smCount", "numSms"},
      {"maxRegistersPerSm", "regsPerMultiprocessor"}, {"maxShmemPerBlockOptin", "sharedMemPerBlockOptin"},
      {"maxShmemPerSm", "sharedMemPerMultiprocessor"}, {"clockRate", "clockRate"},
      {"memoryBandwidth", "memoryBandwidth"}, {"l2CacheSize", "l2CacheSize"}};
  std::string sql = "SELECT id, " + std::string(has_column("TARGET_INFO_GPU", "cuDevice") ? "cuDevice" : "NULL") +
                    ", " + (has_column("TARGET_INFO_GPU", "name") ? "name" : "NULL") + ", " +
                    (has_column("TARGET_INFO_GPU", "maxWarpsPerSm") ? "maxWarpsPerSm" : "NULL");
  for (auto [column, key] : kNumbers) sql += ", " + std::string(has_column("TARGET_INFO_GPU", column) ? column : "NULL");
  for (const char* text : {"busLocation", "uuid", "chipName"})
    sql += ", " + std::string(has_column("TARGET_INFO_GPU", text) ? text : "NULL");
  sql += " FROM TARGET_INFO_GPU";
  return scan("TARGET_INFO_GPU", sql, [&](const Statement& s) {
    // Kernel rows name the CUDA device (cuDevice); `id` is nsys's own GPU number.
    int64_t id = s.opt(1).value_or(s.i64(0));
    std::string name(s.text(2));
    JsonWriter w;
    w.begin_object().field("id", id).field("name", name);
    int c = 4;
    for (auto [column, key] : kNumbers) {
      if (!s.null(c)) w.field(key, s.i64(c));
      ++c;
    }
    constexpr int kWarpSize = 4 + 5;  // threadsPerWarp's place in kNumbers, after the 4 leading columns
    int64_t threads = 0;  // warps per SM × warp size
    if (!s.null(3) && !s.null(kWarpSize) && !__builtin_mul_overflow(s.i64(3), s.i64(kWarpSize), &threads))
      w.field("maxThreadsPerMultiprocessor", threads);
    for (const char* text : {"busLocation", "uuid", "chipName"}) {
      if (!s.null(c)) w.field(text, s.text(c));
      ++c;
    }
    w.end_object();
    device_names_[id] = name;
    store_->meta.devices.push_back({id, name, w.str()});
  });
}

// ---------------------------------------------------------------- placement

// Kineto files GPU work under pid = device id: a host process whose pid equals a device id
// (pid 1 in a container) moves to pid + 2^32 so the two never merge.
uint32_t NsysLoader::host_process(int64_t global_pid) {
  auto it = host_processes_.find(global_pid);
  if (it != host_processes_.end()) return it->second;
  auto info = process_info_.find(global_pid);
  int64_t pid = info != process_info_.end() ? info->second.pid : int64_t((uint64_t(global_pid) >> 24) & 0xFFFFFF);
  int64_t key = device_names_.count(pid) ? pid + (int64_t(1) << 32) : pid;
  uint32_t p = builder_->process(std::to_string(key), key);
  if (info != process_info_.end() && !info->second.name.empty())
    builder_->set_process_name(p, store_->strings.intern(info->second.name));
  builder_->set_process_labels(p, store_->strings.intern("CPU"));
  builder_->set_process_sort_index(p, pid);
  host_processes_[global_pid] = p;
  return p;
}

// nsys global thread ids pack the process (bits 24 and up) and the thread id (low 24 bits).
uint32_t NsysLoader::thread_track(int64_t global_tid) {
  if (last_track_ != kNone && global_tid == last_tid_) return last_track_;
  auto it = thread_tracks_.find(global_tid);
  uint32_t track;
  if (it != thread_tracks_.end()) {
    track = it->second;
  } else {
    int64_t tid = int64_t(uint64_t(global_tid) & 0xFFFFFF);
    track = builder_->thread_track(host_process(pid_of(global_tid)), std::to_string(tid), tid);
    reserve_track(track, host_rows_, host_track_reserved_);
    auto name = thread_names_.find(global_tid);
    if (name != thread_names_.end()) builder_->set_thread_name(track, string_id(name->second));
    thread_tracks_[global_tid] = track;
  }
  last_tid_ = global_tid;
  last_track_ = track;
  return track;
}

uint32_t NsysLoader::device_process(int64_t device) {
  auto it = device_processes_.find(device);
  if (it != device_processes_.end()) return it->second;
  uint32_t p = builder_->process(std::to_string(device), device);
  std::string label = "GPU " + std::to_string(device);
  auto name = device_names_.find(device);
  builder_->set_process_name(p, store_->strings.intern(name != device_names_.end() && !name->second.empty()
                                                           ? name->second : label));
  builder_->set_process_labels(p, store_->strings.intern(label));
  builder_->set_process_sort_index(p, wrapping_add(5000000, device));  // after the host processes, as Kineto sorts
  device_processes_[device] = p;
  return p;
}

uint32_t NsysLoader::stream_track(int64_t device, int64_t stream) {
  uint64_t key = uint64_t(device) << 32 ^ uint64_t(stream);
  if (key == last_stream_key_ && last_stream_track_ != kNone) return last_stream_track_;
  auto it = stream_tracks_.find(key);
  if (it != stream_tracks_.end()) return last_stream_key_ = key, last_stream_track_ = it->second;
  uint32_t track = builder_->thread_track(device_process(device), std::to_string(stream), stream);
  reserve_track(track, gpu_rows_, gpu_track_reserved_);
  builder_->mark_gpu(track, device, stream);
  builder_->set_thread_name(track, store_->strings.intern(stream >= 0 ? "stream " + std::to_string(stream)
                                                                      : std::string("context-wide")));
  builder_->set_thread_sort_index(track, stream);
  stream_tracks_[key] = track;
  return track;
}

// CUPTI numbers streams per process (each process's first streams get the same ids), so two
// processes sharing a GPU would put their work on one "stream 7" row. A stream belongs to a process
// and context: the first owner keeps the plain track ("stream 7", as Kineto names it); another owner
// gets a track of its own, and then both tracks name their owner ("stream 7 (pid 4242, context 1)").
uint32_t NsysLoader::owned_stream_track(const GpuRow& row) {
  uint32_t track = stream_track(row.device, row.stream);
  if (stream_owners_.size() <= track) stream_owners_.resize(track + 1);
  StreamOwner& owner = stream_owners_[track];
  if (!owner.set) owner = {row.global_pid, row.context, true};
  if (owner.global_pid == row.global_pid && owner.context == row.context) return track;
  auto [it, added] = shared_streams_.try_emplace({track, row.global_pid, row.context}, 0);
  if (!added) return it->second;
  std::string name = stream_owner_name(row.stream, row.global_pid, row.context);
  it->second = builder_->thread_track(device_process(row.device), std::to_string(row.stream) + " " + name, row.stream);
  builder_->mark_gpu(it->second, row.device, row.stream);
  builder_->set_thread_name(it->second, store_->strings.intern(name));
  builder_->set_thread_sort_index(it->second, row.stream);
  builder_->set_thread_name(track, store_->strings.intern(stream_owner_name(row.stream, owner.global_pid, owner.context)));
  return it->second;
}

std::string NsysLoader::stream_owner_name(int64_t stream, int64_t global_pid, int64_t context) const {
  auto info = process_info_.find(global_pid);
  int64_t pid = info != process_info_.end() ? info->second.pid : int64_t((uint64_t(global_pid) >> 24) & 0xFFFFFF);
  return (stream >= 0 ? "stream " + std::to_string(stream) : std::string("context-wide")) + " (pid " +
         std::to_string(pid) + ", context " + std::to_string(context) + ")";
}

// Streams and contexts as GPU tracks under their device: a device used through more than one CUDA
// context (several processes, or one process with several contexts) shows each context's streams
// together, ordered by context, then stream (the context-wide track first), each named with its
// context: "stream 3 (context 2)", "context-wide (context 2)". A track already named by its owner
// (a stream number two owners share: "stream 7 (pid P, context C)") keeps that name. A device with
// one context (every corpus report) keeps Kineto's names and order: "stream 7", sorted by stream.
void NsysLoader::group_streams_by_context() {
  struct Stream {
    uint32_t track;
    int64_t context;
  };
  std::map<int64_t, std::vector<Stream>> by_device;
  std::unordered_set<uint32_t> owner_named;
  for (const auto& [owner, track] : shared_streams_) {
    owner_named.insert(std::get<0>(owner));
    owner_named.insert(track);
    by_device[store_->tracks[track].device].push_back({track, std::get<2>(owner)});
  }
  for (auto [key, track] : stream_tracks_) by_device[store_->tracks[track].device].push_back({track, stream_owners_[track].context});
  for (const auto& [device, streams] : by_device) {
    int64_t first = streams.front().context;
    if (std::all_of(streams.begin(), streams.end(), [&](const Stream& s) { return s.context == first; })) continue;
    for (auto [track, context] : streams) {
      int64_t stream = store_->tracks[track].stream;
      builder_->set_thread_sort_index(track, wrapping_add(int64_t(uint64_t(context) << 32), stream));
      if (owner_named.count(track)) continue;
      std::string name = stream >= 0 ? "stream " + std::to_string(stream) : std::string("context-wide");
      builder_->set_thread_name(track, store_->strings.intern(name + " (context " + std::to_string(context) + ")"));
    }
  }
}

// CUPTI correlation ids count from 1 in every process: the first process keeps its ids, the
// others get theirs offset by ordinal × 2^32, so launches never link across processes.
int64_t NsysLoader::correlation_key(int64_t global_pid, int64_t id) {
  if (global_pid != last_space_pid_ || last_space_ < 0) {
    auto [it, added] = correlation_space_.try_emplace(global_pid, int64_t(correlation_space_.size()));
    last_space_pid_ = global_pid;
    last_space_ = it->second;
  }
  return last_space_ == 0 ? id : (last_space_ << 32) | (id & 0xFFFFFFFF);
}

// The correlation row of a key whose first API call is `launch`: made when its first GPU
// activity comes, and given to the API calls of the key then (their slices were appended without
// one). Only calls that launched GPU work join the correlation table: the links are the same, and
// millions of other calls (cudaMalloc, cuGetProcAddress, ...) cost nothing there.
uint32_t NsysLoader::launched_correlation(int64_t key, SlicePlace launch) {
  uint32_t& corr = store_->tracks[launch.track].slices.corr[launch.row];
  if (corr != kNone) return corr;
  uint32_t row = builder_->new_correlation(key);
  corr = row;
  for (SlicePlace later : launches_.later_calls(key)) store_->tracks[later.track].slices.corr[later.row] = row;
  return row;
}

// The correlation row of a key no API call has, made on first use.
uint32_t NsysLoader::unlaunched_correlation(int64_t key) {
  uint32_t row = unlaunched_.find(key);
  if (row == kNone) unlaunched_.insert(key, row = builder_->new_correlation(key));
  return row;
}

// Correlation spaces are numbered by the processes' first rows: the process of the first GPU
// activity of each GPU table first (read here, one row each), so that it keeps its ids whatever
// process calls CUDA first; then each process as its first API call or GPU activity comes.
void NsysLoader::seed_correlation_spaces() {
  for (const char* table : kGpuTables) {
    if (!has_column(table, "correlationId")) continue;
    Statement first(db_, select(table, {"globalPid"}) + " WHERE correlationId IS NOT NULL LIMIT 1");
    if (first.prepared() && first.step() == SQLITE_ROW) correlation_key(first.opt(0).value_or(0), 0);
  }
}

// ---------------------------------------------------------------- rows

// A GPU activity's stream id, -1 when it has none.
int64_t stream_or_none(const std::optional<int64_t>& stream) {
  return !stream || *stream == kNoId || *stream < 0 ? -1 : *stream;
}

template <class Out>
void gpu_fields(Out& out, int64_t device, int64_t context, int64_t stream, const std::optional<int64_t>& correlation) {
  out.number(kArgDevice, device);
  out.number(kArgContext, context);
  out.number(kArgStream, stream);
  if (correlation) out.number(kArgCorrelation, *correlation);
}

// A kernel's args, Kineto's fields and order (gpu_args, then the launch's shape), from its row
// (kKernelColumns) alone: written on a decoding thread (prepare_args) or the loading one.
template <class Source, class Out>
void kernel_args(const Source& s, Out& out) {
  // i64() of a NULL is 0 on either source (as sqlite3_column_int64 gives).
  auto n = [&](int c) { return s.i64(c); };
  gpu_fields(out, n(2), n(3), stream_or_none(s.opt(4)), s.opt(5));
  out.number(kArgRegistersPerThread, n(16));
  out.number(kArgSharedMemory, wrapping_add(n(17), n(18)));
  out.triple(kArgGrid, n(10), n(11), n(12));
  out.triple(kArgBlock, n(13), n(14), n(15));
  out.number(kArgStaticSharedMemory, n(17));
  out.number(kArgDynamicSharedMemory, n(18));
  out.number(kArgLocalMemoryPerThread, n(19));
  out.number(kArgLocalMemoryTotal, n(20));
  for (auto [column, key] : {std::pair{21, kArgSharedMemoryExecuted}, {22, kArgGridId}, {23, kArgGraphNodeId},
                             {24, kArgLaunchType}})
    if (!s.null(column)) out.number(key, n(column));
}
constexpr size_t kKernelArgsBytes = 14 * ArgsRecordWriter::kMaxIntBytes + 2 * ArgsRecordWriter::kMaxTripleBytes;

// Kernels of one launch shape: every column of kernel_args the same, and the same present, but
// the correlation and grid ids (columns 5 and 22, which only their presence must share).
// Branch-free: the differences of every value and presence byte compared, or'ed together.
bool same_kernel_shape(const int64_t* a, const uint8_t* a_present, const int64_t* b, const uint8_t* b_present) {
  uint64_t differ = 0;
  for (int c : {2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24}) differ |= uint64_t(a[c] ^ b[c]);
  auto bytes8 = [](const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  // Presence of columns 2-5 (and 6-9: the process and names, alike in practice) and 10-24.
  differ |= bytes8(a_present + 2) ^ bytes8(b_present + 2);
  differ |= bytes8(a_present + 10) ^ bytes8(b_present + 10);
  differ |= bytes8(a_present + 17) ^ bytes8(b_present + 17);
  return differ == 0;
}
// A few fields of a kernel's shape, mixed: the slot of its shape in prepare_kernel_args's table.
size_t kernel_shape_slot(const int64_t* v, int bits) {
  uint64_t h = uint64_t(v[10]) * 0x9E3779B97F4A7C15ull + uint64_t(v[11]) * 0xC2B2AE3D27D4EB4Full +
               uint64_t(v[13]) * 0x165667B19E3779F9ull + uint64_t(v[16]) * 0x27D4EB2F165667C5ull +
               uint64_t(v[18]) * 0x94D049BB133111EBull + uint64_t(v[4]) * 0xBF58476D1CE4E5B9ull +
               uint64_t(v[23]) * 0xD6E8FEB86659FD93ull;
  return size_t((h ^ h >> 29) * 0x9E3779B97F4A7C15ull >> (64 - bits));
}

// A CUDA API call's args from its row (kRuntimeColumns): its correlation id and return value.
template <class Source, class Out>
void api_args(const Source& s, Out& out) {
  if (std::optional<int64_t> id = s.opt(4)) out.number(kArgCorrelation, *id);
  if (std::optional<int64_t> result = s.opt(6)) out.number(kArgReturnValue, *result);
}
constexpr size_t kApiArgsBytes = 2 * ArgsRecordWriter::kMaxIntBytes;

bool NsysLoader::absolute(int64_t t, TimeNs& out) {
  if (__builtin_add_overflow(t, session_ns_, &out) || out > kMaxAbsNs || out < -kMaxAbsNs) {
    skip_row(IssueKind::TimestampOutOfRange);
    return false;
  }
  return true;
}

// Columns start_col and start_col + 1 are start and end. A missing end leaves `open` set.
template <class Source>
bool NsysLoader::time_span(const Source& s, int start_col, TimeNs& start, TimeNs& dur, bool& open) {
  std::optional<int64_t> begin = s.opt(start_col), finish = s.opt(start_col + 1);
  if (!begin) return skip_row(IssueKind::MissingField), false;
  if (!absolute(*begin, start)) return false;
  open = !finish;
  dur = 0;
  if (open) return true;
  TimeNs end = 0;
  if (!absolute(*finish, end)) return false;
  dur = end - start;
  if (dur < 0) store_->issues.add_count(IssueKind::NegativeDuration, 1), dur = 0;
  return true;
}

bool NsysLoader::read_runtime() {
  const char* table = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!require(table, {"start", "end", "globalTid", "nameId"})) return true;
  auto encode = [](const auto& s, auto& out) { api_args(s, out); };
  return scan_direct(table, kRuntimeColumns, [&](const auto& s) {
    ++store_->counts.events;
    TimeNs start, dur;
    bool open;
    std::optional<int64_t> thread = s.opt(3);
    if (!thread) return skip_row(IssueKind::MissingField);
    if (!time_span(s, 0, start, dur, open)) return;
    if (open) store_->issues.add_count(IssueKind::MissingField, 1);
    StringId name = api_name(s.opt(5));
    // eventClass (ENUM_NSYS_EVENT_CLASS): 0 CUDA runtime, 1 CUDA driver; else by the name.
    std::optional<int64_t> event_class = s.opt(2);
    bool runtime = event_class ? *event_class == 0 : store_->strings.view(name).starts_with("cuda");
    int64_t gtid = *thread;
    uint32_t track = thread_track(gtid);
    std::optional<int64_t> id = s.opt(4);
    if (id) {
      // Its correlation row comes with its first GPU activity (launched_correlation).
      SlicePlace place{track, uint32_t(store_->tracks[track].slices.size())};
      launches_.add(correlation_key(pid_of(gtid), *id), place);
    }
    uint32_t args = row_args<kApiArgsBytes>(s, encode);
    builder_->add_linked_slice(track, start, dur, name, runtime ? cat_runtime_ : cat_driver_, args, kNone);
  }, prepare_args<std::size(kRuntimeColumns), kApiArgsBytes>(encode));
}

bool NsysLoader::read_osrt() {
  const char* table = "OSRT_API";
  if (!require(table, {"start", "end", "globalTid", "nameId"})) return true;
  static constexpr const char* kColumns[] = {"start", "end", "globalTid", "nameId", "returnValue"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    ++store_->counts.events;
    TimeNs start, dur;
    bool open;
    if (s.null(2)) return skip_row(IssueKind::MissingField);
    if (!time_span(s, 0, start, dur, open)) return;
    if (open) store_->issues.add_count(IssueKind::MissingField, 1);
    uint32_t args = kNone;
    if (!s.null(4)) {
      args_->begin();
      args_->number(kArgReturnValue, s.i64(4));
      args = args_->end();
    }
    builder_->add_slice(thread_track(s.i64(2)), start, dur, string_id(s.opt(3)), cat_osrt_, args, std::nullopt);
  });
}

// Domain and category names are rows of NVTX_EVENTS themselves; read them before the ranges.
bool NsysLoader::read_nvtx_names() {
  static constexpr const char* kColumns[] = {"eventType", "domainId", "category", "text", "textId"};
  return scan_direct("NVTX_EVENTS", kColumns, [&](const auto& s) {
    --rows_;  // read again for the ranges: progress counts the rows there
    int64_t type = s.i64(0);
    if (type != kNvtxDomainCreate && type != kNvtxCategory && type != kNvtxtCategory) return;
    std::string name(s.null(3) ? store_->strings.view(string_id(s.opt(4))) : s.text(3));
    uint64_t domain = uint64_t(s.opt(1).value_or(0));
    if (type == kNvtxDomainCreate) nvtx_domains_[domain] = name;
    else nvtx_categories_[domain << 32 ^ uint64_t(s.opt(2).value_or(0))] = name;
  });
}

bool NsysLoader::read_nvtx() {
  const char* table = "NVTX_EVENTS";
  if (!require(table, {"start", "eventType"})) return true;
  if (!read_nvtx_names()) return false;
  static constexpr const char* kColumns[] = {"start", "end", "eventType", "globalTid", "text", "textId",
                                             "domainId", "category", "color", "int64Value", "uint64Value",
                                             "doubleValue", "int32Value", "uint32Value", "floatValue", "rangeId"};
  uint64_t row = 0;
  return scan_direct(table, kColumns, [&](const auto& s) {
    ++row;
    int64_t type = s.opt(2).value_or(-1);
    if (type == kNvtxCategory || type == kNvtxtCategory || type == kNvtxDomainCreate || type == kNvtxThread ||
        type == kNvtxtMetaThread || type == kNvtxtMetaProcess || type == kNvtxtMetaFile) {
      ++store_->counts.metadata;
      return;
    }
    ++store_->counts.events;
    bool range = type == kNvtxPushPop || type == kNvtxtPushPop, async = type == kNvtxStartEnd || type == kNvtxtStartEnd;
    bool mark = type == kNvtxMark || type == kNvtxtMark;
    if (!range && !async && !mark) return skip_row(IssueKind::SkippedPhase);
    if (s.null(3)) return skip_row(IssueKind::MissingField);
    TimeNs start, dur;
    bool open;
    if (!time_span(s, 0, start, dur, open)) return;
    StringId name = s.null(4) ? string_id(s.opt(5)) : store_->strings.intern(s.text(4));
    uint64_t domain = uint64_t(s.opt(6).value_or(0));
    args_->begin();
    if (domain) {
      auto d = nvtx_domains_.find(domain);
      d != nvtx_domains_.end() ? args_->text(kArgDomain, d->second) : args_->number(kArgDomain, int64_t(domain));
    }
    if (int64_t category = s.opt(7).value_or(0)) {
      auto c = nvtx_categories_.find(domain << 32 ^ uint64_t(category));
      c != nvtx_categories_.end() ? args_->text(kArgCategory, c->second) : args_->number(kArgCategory, category);
    }
    if (!s.null(8)) {
      char color[8];
      std::snprintf(color, sizeof color, "#%06x", unsigned(uint64_t(s.i64(8)) & 0xFFFFFF));  // ARGB → #rrggbb
      args_->text(kArgColor, color);
    }
    for (int c = 9; c <= 14; ++c) {
      if (s.null(c)) continue;
      c == 11 || c == 14 ? args_->real(kArgPayload, s.f64(c)) : args_->number(kArgPayload, s.i64(c));
      break;
    }
    uint32_t args = args_->end();
    int64_t gtid = s.i64(3);
    if (mark) return builder_->add_instant(thread_track(gtid), start, name, cat_annotation_, args, 't');
    if (range) {
      uint32_t track = thread_track(gtid);
      if (open) return builder_->add_begin(track, start, name, cat_annotation_, args, std::nullopt, row);
      return builder_->add_slice(track, start, dur, name, cat_annotation_, args, std::nullopt);
    }
    // Start/end ranges may end on another thread: one async track per process and domain.
    uint32_t process = host_process(pid_of(gtid));
    auto [it, added] = nvtx_async_.try_emplace({process, domain}, 0);
    if (added) {
      auto d = nvtx_domains_.find(domain);
      std::string track_name = d != nvtx_domains_.end() ? "NVTX " + d->second : std::string("NVTX");
      it->second = builder_->async_track(process, cat_annotation_, store_->strings.intern(track_name));
    }
    if (open) return builder_->add_async_begin(it->second, ~row, start, name, cat_annotation_, args, row);
    builder_->add_slice(it->second, start, dur, name, cat_annotation_, args, std::nullopt);
  });
}

// Columns 0-6 of every GPU query: start, end, deviceId, contextId, streamId, correlationId, globalPid.
template <class Source>
bool NsysLoader::gpu_row(const Source& s, GpuRow& row) {
  ++store_->counts.events;
  bool open;
  if (!time_span(s, 0, row.start, row.dur, open)) return false;
  if (open) store_->issues.add_count(IssueKind::MissingField, 1);
  row.device = s.opt(2).value_or(0);
  row.context = s.opt(3).value_or(0);
  row.stream = stream_or_none(s.opt(4));
  row.correlation = s.opt(5);
  row.global_pid = s.opt(6).value_or(0);
  return true;
}

// The fields every Kineto GPU activity carries, in Kineto's order.
void NsysLoader::gpu_args(const GpuRow& row) {
  args_->begin();
  gpu_fields(*args_, row.device, row.context, row.stream, row.correlation);
}

void NsysLoader::add_gpu(const GpuRow& row, StringId name, StringId cat, uint32_t args) {
  uint32_t track = owned_stream_track(row);
  if (cat != cat_sync_ && !has_gpu_work(track)) {
    if (gpu_work_tracks_.size() <= track) gpu_work_tracks_.resize(size_t(track) + 1);
    gpu_work_tracks_[track] = true;
  }
  if (!row.correlation) return builder_->add_linked_slice(track, row.start, row.dur, name, cat, args, kNone);
  int64_t key = correlation_key(row.global_pid, *row.correlation);
  const SlicePlace* launch = launches_.find(key);
  if (!launch) return builder_->add_linked_slice(track, row.start, row.dur, name, cat, args, unlaunched_correlation(key));
  builder_->add_linked_slice(track, row.start, row.dur, name, cat, args, launched_correlation(key, *launch));
  store_->counts.flows += 2;  // its flow is made from the link (TraceBuilder::flows_from_launches)
}

bool NsysLoader::read_kernels() {
  const char* table = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!require(table, {"start", "end"})) return true;
  auto encode = [](const auto& s, auto& out) { kernel_args(s, out); };
  return scan_direct(table, kKernelColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    // Kineto shows demangled names; the short and mangled ones are fallbacks.
    std::optional<int64_t> demangled = s.opt(7), short_name = demangled ? demangled : s.opt(8);
    StringId name = string_id(short_name ? short_name : s.opt(9));
    if (name == 0) name = store_->strings.intern("<unnamed kernel>");
    add_gpu(row, name, cat_kernel_, row_args<kKernelArgsBytes>(s, encode));
  }, prepare_kernel_args());
}

// A kernel's args on its decoding thread. Kernels of one launch shape (same_kernel_shape: device,
// stream, grid, block, registers, shared and local memory, graph node, launch type) have the
// same args but for the correlation and grid ids, and a run repeats a few hundred shapes: a
// kernel whose shape an earlier kernel of the batch had is written as a repeat of that kernel's
// record with the two ids (row_args, ArgsBlocks::append_repeat): ~12 bytes where the record in
// full takes ~45, and no encoding of the 14 other fields. The text is the same either way.
// Shapes are remembered in a small table by a hash of a few fields, the last of each slot kept.
std::function<void(nsys::RowBatch&)> NsysLoader::prepare_kernel_args() const {
  return [this](nsys::RowBatch& b) {
    constexpr size_t N = std::size(kKernelColumns);
    constexpr int kSlotBits = 6;
    struct Shape {
      uint32_t row = UINT32_MAX;  // the last kernel of this slot written in full
      uint32_t text = 0;
    };
    std::array<Shape, size_t(1) << kSlotBits> shapes{};
    size_t rows = b.rows();
    if (b.prepared.size() < rows * kKernelArgsBytes) b.prepared.resize(rows * kKernelArgsBytes);
    b.prepared_rows.resize(rows);
    size_t used = 0;
    for (size_t i = 0; i < rows; ++i) {
      const int64_t* v = &b.values[i * N];
      const uint8_t* p = &b.present[i * N];
      Shape& shape = shapes[kernel_shape_slot(v, kSlotBits)];
      ArgsText::Fields fields(*args_, b.prepared.data() + used);
      if (shape.row != UINT32_MAX && same_kernel_shape(v, p, &b.values[shape.row * N], &b.present[shape.row * N])) {
        const int64_t* base = &b.values[shape.row * N];
        int64_t text = shape.text;
        uint32_t replaced = 0;
        for (auto [column, key] : {std::pair{5, kArgCorrelation}, {22, kArgGridId}}) {
          if (!p[column]) continue;
          fields.number(key, v[column]);
          text += int64_t(ArgsRecordWriter::decimal_size(v[column])) - ArgsRecordWriter::decimal_size(base[column]);
          ++replaced;
        }
        used += fields.writer().bytes();
        b.prepared_rows[i] = {uint32_t(used), replaced, uint32_t(text), shape.row};
        continue;
      }
      kernel_args(nsys::BatchRow{v, p}, fields);
      const ArgsRecordWriter& w = fields.writer();
      used += w.bytes();
      b.prepared_rows[i] = {uint32_t(used), w.fields(), uint32_t(w.text_size())};
      shape = {uint32_t(i), uint32_t(w.text_size())};
    }
  };
}

// nsys numbers memory kinds from 0 = Pageable (ENUM_CUDA_MEM_KIND, 7 = Unknown); CUPTI, whose
// names record_events.h writes, from 0 = Unknown.
uint8_t cupti_memory_kind(std::optional<int64_t> nsys_kind) {
  return nsys_kind && *nsys_kind >= 0 && *nsys_kind <= 6 ? uint8_t(*nsys_kind + 1) : 0;
}

bool NsysLoader::read_memcpy() {
  const char* table = "CUPTI_ACTIVITY_KIND_MEMCPY";
  if (!require(table, {"start", "end"})) return true;
  std::unordered_map<uint32_t, StringId> names;
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "bytes", "copyKind", "srcKind", "dstKind", "graphNodeId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    // ENUM_CUDA_MEMCPY_OPER numbers copy kinds as CUPTI does (1 HtoD, 2 DtoH, ... 10 PtoP).
    int64_t kind = s.opt(8).value_or(0);
    uint8_t copy = kind >= 0 && kind <= 10 ? uint8_t(kind) : 0;
    uint8_t src = cupti_memory_kind(s.opt(9)), dst = cupti_memory_kind(s.opt(10));
    auto [it, added] = names.try_emplace(uint32_t(copy) << 16 | uint32_t(src) << 8 | dst, 0);
    if (added) it->second = store_->strings.intern(capture::memcpy_name(copy, src, dst));
    int64_t bytes = s.opt(7).value_or(0);
    gpu_args(row);
    args_->number(kArgBytes, bytes);
    // bytes per ns is GB/s (10^9 bytes per second).
    if (row.dur > 0) args_->real(kArgMemoryBandwidth, double(bytes) / double(row.dur));
    if (!s.null(11)) args_->number(kArgGraphNodeId, s.i64(11));
    add_gpu(row, it->second, cat_memcpy_, args_->end());
  });
}

bool NsysLoader::read_memset() {
  const char* table = "CUPTI_ACTIVITY_KIND_MEMSET";
  if (!require(table, {"start", "end"})) return true;
  std::unordered_map<uint8_t, StringId> names;
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "bytes", "value", "memKind", "graphNodeId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    uint8_t kind = cupti_memory_kind(s.opt(9));
    auto [it, added] = names.try_emplace(kind, 0);
    if (added) it->second = store_->strings.intern(capture::memset_name(kind));
    int64_t bytes = s.opt(7).value_or(0);
    gpu_args(row);
    args_->number(kArgBytes, bytes);
    args_->number(kArgValue, s.opt(8).value_or(0));
    if (row.dur > 0) args_->real(kArgMemoryBandwidth, double(bytes) / double(row.dur));
    if (!s.null(10)) args_->number(kArgGraphNodeId, s.i64(10));
    add_gpu(row, it->second, cat_memset_, args_->end());
  });
}

// The kind of a synchronisation, by the API call that made it when known. The stored syncType
// does not follow ENUM_CUPTI_SYNC_TYPE's labels: in both corpus versions (2024.6, 2025.1)
// cudaStreamSynchronize gives 2 (labelled "Stream wait sync") and cudaDeviceSynchronize 4; so
// the number is only the fallback, read as 1 event, 2 stream, 3 stream-wait-event, 4 context.
std::string_view sync_kind(std::string_view api, int64_t type) {
  if (api.find("StreamWaitEvent") != std::string_view::npos) return "Stream Wait Event";
  if (api.find("StreamSynchronize") != std::string_view::npos) return "Stream Sync";
  if (api.find("EventSynchronize") != std::string_view::npos) return "Event Sync";
  if (api.find("DeviceSynchronize") != std::string_view::npos || api.find("CtxSynchronize") != std::string_view::npos)
    return "Context Sync";
  switch (type) {
    case 1: return "Event Sync";
    case 2: return "Stream Sync";
    case 3: return "Stream Wait Event";
    case 4: return "Context Sync";
    default: return "Unknown Sync";
  }
}

bool NsysLoader::read_sync() {
  const char* table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
  if (!require(table, {"start", "end"})) return true;
  // 2025.1 moved the old column to deprecatedSyncType and added syncType; 2024.6 has syncType only.
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "syncType", "deprecatedSyncType", "eventId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    std::string_view api;
    if (row.correlation) {
      if (const SlicePlace* launch = launches_.find(correlation_key(row.global_pid, *row.correlation)))
        api = store_->strings.view(store_->tracks[launch->track].slices.name[launch->row]);
    }
    std::string_view kind = sync_kind(api, s.opt(7).value_or(s.opt(8).value_or(0)));
    args_->begin();
    args_->text(kArgCudaSyncKind, kind);
    args_->number(kArgStream, row.stream);
    if (row.correlation) args_->number(kArgCorrelation, *row.correlation);
    args_->number(kArgDevice, row.device);
    args_->number(kArgContext, row.context);
    if (!s.null(9) && s.i64(9) != kNoId) args_->number(kArgCudaEvent, s.i64(9));
    add_gpu(row, store_->strings.intern(kind), cat_sync_, args_->end());
  });
}

// Whole-graph activity (nsys --cuda-graph-trace=graph): one slice per graph launch.
bool NsysLoader::read_graphs() {
  const char* table = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
  if (!require(table, {"start", "end"})) return true;
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "graphId", "graphExecId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    gpu_args(row);
    if (!s.null(7)) args_->number(kArgGraphId, s.i64(7));
    if (!s.null(8)) args_->number(kArgGraphExecId, s.i64(8));
    std::string name = "CUDA graph " + (s.null(7) ? std::string("?") : std::to_string(s.i64(7)));
    add_gpu(row, store_->strings.intern(name), cat_graph_, args_->end());
  });
}

// GPU metrics sampling (nsys --gpu-metrics-devices): one counter series per metric, in a
// process per metric set (typeId), named by TARGET_INFO_GPU_METRICS.
bool NsysLoader::read_gpu_metrics() {
  const char* table = "GPU_METRICS";
  if (!require(table, {"timestamp", "metricId", "value"})) return true;
  std::unordered_map<uint64_t, std::string> metric_names;  // typeId << 32 ^ metricId → name
  std::unordered_map<int64_t, std::string> type_names;
  if (require("TARGET_INFO_GPU_METRICS", {"metricId", "metricName"})) {
    std::string sql = select("TARGET_INFO_GPU_METRICS", {"typeId", "metricId", "metricName", "typeName"});
    bool ok = scan("TARGET_INFO_GPU_METRICS", sql, [&](const Statement& s) {
      int64_t type = s.opt(0).value_or(0);
      metric_names[uint64_t(type) << 32 ^ uint64_t(s.i64(1))] = std::string(s.text(2));
      if (!s.null(3)) type_names[type] = std::string(s.text(3));
      --rows_;
    });
    if (!ok) return false;
  }
  std::unordered_map<int64_t, uint32_t> processes;
  std::unordered_map<uint64_t, std::string> fallback_names;
  static constexpr const char* kColumns[] = {"timestamp", "typeId", "metricId", "value"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    ++store_->counts.events;
    TimeNs ts;
    if (s.null(0) || s.null(2)) return skip_row(IssueKind::MissingField);
    if (!absolute(s.i64(0), ts)) return;
    int64_t type = s.opt(1).value_or(0);
    auto [p, added] = processes.try_emplace(type, 0);
    if (added) {
      std::string key = "gpu metrics " + std::to_string(type);
      p->second = builder_->process(key, std::nullopt);
      auto name = type_names.find(type);
      builder_->set_process_name(p->second, store_->strings.intern(name != type_names.end() ? "GPU metrics: " + name->second
                                                                                            : key));
      builder_->set_process_sort_index(p->second, wrapping_add(6000000, type));
    }
    uint64_t metric = uint64_t(type) << 32 ^ uint64_t(s.i64(2));
    auto name = metric_names.find(metric);
    if (name == metric_names.end()) {
      name = fallback_names.try_emplace(metric, "metric " + std::to_string(s.i64(2))).first;
    }
    ++store_->counts.counters;
    builder_->add_counter(p->second, name->second, ts, s.f64(3));
  });
}

// What the report holds that Sightline does not show, and what it lacks: for `info`.
bool NsysLoader::note_tables() {
  auto listed = [](std::string_view t, const auto& list) {
    return std::find(std::begin(list), std::end(list), t) != std::end(list);
  };
  JsonWriter unmapped;
  unmapped.begin_object();
  for (const std::string& t : table_order_) {
    // ENUM_* are the enumerations decoded above with fixed tables; they hold no events.
    if (listed(t, kEventTables) || listed(t, kReferenceTables) || t.starts_with("ENUM_") || t.starts_with("sqlite_"))
      continue;
    std::optional<uint64_t> rows = direct_row_count(t);
    if (!rows) {
      Statement count(db_, "SELECT count(*) FROM " + quote_identifier(t));
      if (!count.prepared() || count.step() != SQLITE_ROW) return sql_fail("counting the rows of " + t);
      rows = uint64_t(count.i64(0));
    }
    if (*rows) unmapped.field(t, int64_t(*rows));
  }
  unmapped.end_object();
  store_->meta.top_level.emplace_back("nsys_unmapped_tables", unmapped.str());
  auto rows_in = [&](std::initializer_list<const char*> tables) {
    for (const char* t : tables) {
      if (!has_table(t)) continue;
      Statement any(db_, "SELECT 1 FROM " + quote_identifier(t) + " LIMIT 1");
      if (any.prepared() && any.step() == SQLITE_ROW) return true;
    }
    return false;
  };
  JsonWriter missing;
  missing.begin_array();
  if (!rows_in({"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                "CUPTI_ACTIVITY_KIND_MEMSET"}))
    missing.value("CUDA trace");
  else if (!rows_in({"CUPTI_ACTIVITY_KIND_KERNEL"})) missing.value("CUDA kernels");
  if (!rows_in({"NVTX_EVENTS"})) missing.value("NVTX");
  if (!rows_in({"OSRT_API"})) missing.value("OS runtime trace");
  if (!rows_in({"TARGET_INFO_GPU"})) missing.value("GPU descriptions");
  if (!schema_unknown_.empty()) missing.value(schema_unknown_);
  missing.end_array();
  store_->meta.top_level.emplace_back("nsys_missing", missing.str());
  JsonWriter unreadable;
  unreadable.begin_array();
  for (const std::string& why : unreadable_) unreadable.value(why);
  unreadable.end_array();
  store_->meta.top_level.emplace_back("nsys_unreadable_tables", unreadable.str());
  return true;
}

}  // namespace

namespace nsys {

LoadResult load_database(sqlite3* db, const std::string& shown, uint64_t bytes, const LoadOptions& options) {
  return NsysLoader(db, shown, bytes, options).run();
}

}  // namespace nsys
}  // namespace sl
