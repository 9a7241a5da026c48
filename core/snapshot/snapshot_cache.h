// The snapshot cache: after a trace is first loaded from its JSON (or Nsight report), a snapshot
// of the store (core/snapshot/snapshot.h) is written into a cache folder in the background, and the next
// open of the same, unchanged file reads the snapshot instead of parsing. Described in
// core/snapshot/SNAPSHOT.md ("The cache"). Uses only the public functions of core/snapshot/snapshot.h.
// Opening a trace through the cache is core/open_trace.h.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/load_result.h"

namespace sl {

// 4 GiB: room for the snapshots of a few large traces or many ranks, small next to the traces.
inline constexpr uint64_t kDefaultCacheMaxBytes = uint64_t(4) << 30;

struct CacheSettings {
  bool enabled = false;
  std::string dir;                            // the cache folder (created on the first write)
  uint64_t max_bytes = kDefaultCacheMaxBytes;  // total size of the entries; oldest used go first
};

// From the environment: the folder is $XDG_CACHE_HOME/sightline, else $HOME/.cache/sightline;
// SIGHTLINE_NO_CACHE (any value but "" and "0") or neither variable set turns the cache off;
// SIGHTLINE_CACHE_MAX sets the size ("500M", "4G", "1T", or bytes; a bad value keeps 4 GiB).
CacheSettings cache_settings_from_environment();
// The settings every CLI command and the GUI use: from the environment, read once.
const CacheSettings& process_cache_settings();
// `--no-cache`: turns the process's cache off (call before any trace opens).
void disable_process_cache();
// Replaces the process's settings, `--no-cache` included (tests; call before any trace opens).
void set_process_cache_settings(const CacheSettings& settings);
// "500M" -> 524288000; nullopt when `text` is not a size.
std::optional<uint64_t> parse_cache_size(std::string_view text);

// What identifies a source file's contents without reading them.
struct CacheKey {
  std::string path;  // absolute, symlinks resolved
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const CacheKey&) const = default;
};
// The key of the file at `path` now; nullopt when it cannot be stat'ed (or is not a file).
std::optional<CacheKey> cache_key_of(const std::string& path);
// The entry's file name without extension: 16 hex digits of a 64-bit FNV-1a hash of the path
// only, so a changed source finds (and replaces) its old entry instead of leaving it behind.
std::string cache_entry_stem(const std::string& absolute_path);
// What a `.key` file records: the source's key, and which snapshot file was written for it (its
// inode), so a key and a snapshot from two different writes are never taken as a pair. (A
// truncated or damaged snapshot keeps its inode: load_snapshot finds those, with byte offsets.)
struct CacheRecord {
  CacheKey source;
  uint64_t snapshot_inode = 0;
  bool operator==(const CacheRecord&) const = default;
};
// The `.key` file's text, and back (nullopt when it is not one).
std::string format_cache_record(const CacheRecord& record);
std::optional<CacheRecord> parse_cache_record(std::string_view text);

// `.nsys-rep` exports (core/import/nsys/nsys_files.cpp) are entries of the same cache, in its folder `nsys/`:
// `<name>.sqlite` (nsys's export) and `<name>.key` (the report's size and mtime), listed under the
// stem "nsys/<name>" and evicted with the snapshots, by last use, under the same limit.
inline constexpr std::string_view kNsysExportFolder = "nsys";

// One cached trace: `<stem>.slsnap` (the snapshot) and `<stem>.key` (its CacheRecord), or an
// exported report (stem "nsys/<name>", above).
struct CacheEntry {
  std::string stem;
  uint64_t bytes = 0;    // both files
  int64_t used_ns = 0;   // last write or use (the snapshot's mtime, touched on each use)
};
std::vector<CacheEntry> list_cache_entries(const std::string& dir);
// Which entries (indexes into `entries`) to remove so the rest fit in `max_bytes`: least
// recently used first; `keep` (the entry just written) last of all.
std::vector<size_t> entries_to_evict(const std::vector<CacheEntry>& entries, uint64_t max_bytes,
                                     const std::string& keep = "");
// Removes the entries over the limit (and temporary files a crashed writer left a day ago).
void evict_cache_entries(const CacheSettings& settings, const std::string& keep = "");

// Writes the snapshot of `store` as the entry for `key`, then evicts. Returns "" or one line
// saying why nothing was cached (the cache folder cannot be made, a full disk): never fatal.
std::string write_cache_entry(const TraceStore& store, const CacheKey& key, const CacheSettings& settings);

// A cache write running on its own thread. It reads the store only while it turns it into the
// snapshot's bytes (at memory speed, a small part of the write): the store must outlive that and
// not change meanwhile, so wait_store_unused() (or wait(), or destruction) before changing or
// freeing it. Writing the file, syncing it and evicting old entries go on without the store.
class PendingCacheWrite {
public:
  PendingCacheWrite() = default;
  PendingCacheWrite(PendingCacheWrite&&) = default;
  PendingCacheWrite& operator=(PendingCacheWrite&&);
  ~PendingCacheWrite();
  void start(const TraceStore& store, CacheKey key, CacheSettings settings);
  bool running() const { return result_.valid(); }
  // True when the write has finished (wait() then returns at once).
  bool finished() const;
  // Waits until the writer no longer reads the store (its bytes are made).
  void wait_store_unused();
  // Waits; "" or the writer's warning. Later calls return "".
  std::string wait();

private:
  std::future<std::string> result_;
  std::future<void> store_unused_;
};

// The snapshot file of the entry `stem`.
std::string cache_snapshot_path(const CacheSettings& settings, const std::string& stem);
// The cached store for `key` (entry `stem`), marked as just used; or null. An entry that exists
// but cannot be used (stale, damaged, another version) is removed, with one line in `notices`.
std::unique_ptr<LoadResult> read_cache_entry(const CacheSettings& settings, const CacheKey& key, const std::string& stem,
                                             std::vector<std::string>& notices);

}  // namespace sl
