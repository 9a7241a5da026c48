// Memory around the Nsight loader's tables: the database's bytes for the direct b-tree reader
// (DatabaseImage), and the store's reserved columns faulted in ahead of the builder (PagesAhead).
#pragma once

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace sl::nsys_detail {

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
  template <class T, class Alloc>
  static Column column(const std::vector<T, Alloc>& v, size_t rows) {
    return {reinterpret_cast<const char*>(v.data()), rows * sizeof(T), v.capacity() * sizeof(T), kAheadRows * sizeof(T)};
  }
  template <class T, class Alloc>
  static Column column(const std::vector<T, Alloc>& v) { return column(v, v.size()); }
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

}  // namespace sl::nsys_detail
