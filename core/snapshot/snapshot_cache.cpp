#include "core/snapshot/snapshot_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "core/snapshot/snapshot.h"
#include "core/store/import_issues.h"

namespace sl {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kKeyHeader = "sightline snapshot cache key 2\n";
// A temporary file this old belongs to a writer that died (a live one takes seconds).
constexpr int64_t kStaleTempNs = int64_t(24) * 3600 * 1000000000;

int64_t mtime_ns(const struct stat& st) { return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec; }

bool process_cache_disabled = false;

std::string snapshot_path(const CacheSettings& s, const std::string& stem) { return s.dir + "/" + stem + ".slsnap"; }
std::string key_path(const CacheSettings& s, const std::string& stem) { return s.dir + "/" + stem + ".key"; }

bool is_nsys_export(const std::string& stem) {
  return stem.size() > kNsysExportFolder.size() && stem.starts_with(kNsysExportFolder) && stem[kNsysExportFolder.size()] == '/';
}

void remove_entry(const CacheSettings& s, const std::string& stem) {
  // The key goes first: a snapshot (or export) without its key is never read.
  std::remove(key_path(s, stem).c_str());
  std::remove(is_nsys_export(stem) ? (s.dir + "/" + stem + ".sqlite").c_str() : snapshot_path(s, stem).c_str());
}

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Temporary file, then rename: readers see the old key or the new one, never a part. No fsync:
// after a crash a damaged key or snapshot is only a discarded entry (the checks find it).
std::string write_key_file(const std::string& path, const std::string& text) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  std::ofstream out(temp, std::ios::binary);
  out << text;
  out.close();
  std::error_code ec;
  if (out) fs::rename(temp, path, ec);
  if (out && !ec) return {};
  std::remove(temp.c_str());
  return "cannot write " + path + ": " + (ec ? ec.message() : std::string(std::strerror(errno)));
}

// Marks an entry as just used, for the least-recently-used eviction (atime is unreliable:
// most file systems are mounted relatime or noatime).
void touch(const std::string& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }


}  // namespace

std::optional<uint64_t> parse_cache_size(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end == text.data()) return std::nullopt;
  std::string_view unit(end, size_t(text.data() + text.size() - end));
  int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : unit == "T" ? 40 : -1;
  if (shift < 0 || (shift && value > (UINT64_MAX >> shift))) return std::nullopt;
  return value << shift;
}

CacheSettings cache_settings_from_environment() {
  CacheSettings s;
  const char* off = std::getenv("SIGHTLINE_NO_CACHE");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  // XDG base directories: a relative $XDG_CACHE_HOME is invalid and ignored.
  if (xdg && xdg[0] == '/') s.dir = std::string(xdg) + "/sightline";
  else if (home && home[0]) s.dir = std::string(home) + "/.cache/sightline";
  s.enabled = !s.dir.empty() && !(off && off[0] && std::string_view(off) != "0");
  if (const char* max = std::getenv("SIGHTLINE_CACHE_MAX"))
    s.max_bytes = parse_cache_size(max).value_or(kDefaultCacheMaxBytes);
  return s;
}

namespace {
CacheSettings& process_settings() {
  static CacheSettings from_environment = cache_settings_from_environment();
  return from_environment;
}
}  // namespace

const CacheSettings& process_cache_settings() {
  static const CacheSettings off{};
  return process_cache_disabled ? off : process_settings();
}

void disable_process_cache() { process_cache_disabled = true; }

void set_process_cache_settings(const CacheSettings& settings) {
  process_settings() = settings;
  process_cache_disabled = false;
}

std::optional<CacheKey> cache_key_of(const std::string& path) {
  std::error_code ec;
  fs::path absolute = fs::canonical(path, ec);
  struct stat st{};
  if (ec || ::stat(absolute.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return CacheKey{absolute.string(), uint64_t(st.st_size), mtime_ns(st)};
}

std::string cache_entry_stem(const std::string& absolute_path) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64 bits
  for (unsigned char c : absolute_path) h = (h ^ c) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  return hex;
}

// The path goes last, to the end of the text: it may hold any character but NUL.
std::string format_cache_record(const CacheRecord& r) {
  return std::string(kKeyHeader) + "snapshot_inode " + std::to_string(r.snapshot_inode) + "\nsize " +
         std::to_string(r.source.size) + "\nmtime_ns " + std::to_string(r.source.mtime_ns) + "\npath " + r.source.path;
}

std::optional<CacheRecord> parse_cache_record(std::string_view text) {
  if (!text.starts_with(kKeyHeader)) return std::nullopt;
  text.remove_prefix(kKeyHeader.size());
  CacheRecord r;
  auto number = [&](std::string_view label, auto& out) {
    if (!text.starts_with(label)) return false;
    text.remove_prefix(label.size());
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (ec != std::errc{} || end == text.data() || end == text.data() + text.size() || *end != '\n') return false;
    text.remove_prefix(size_t(end - text.data()) + 1);
    return true;
  };
  if (!number("snapshot_inode ", r.snapshot_inode) || !number("size ", r.source.size) || !number("mtime_ns ", r.source.mtime_ns) || !text.starts_with("path /"))
    return std::nullopt;
  r.source.path = std::string(text.substr(5));
  return r;
}

namespace {
// The entries of one folder: files named `*<extension>` (not a temporary or partial one) and
// their `.key`, with `prefix` before the stem.
void list_entries_in(const std::string& dir, std::string_view extension, const std::string& prefix,
                     std::vector<CacheEntry>& entries) {
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(dir, ec)) {
    std::string name = item.path().filename().string();
    if (!name.ends_with(extension) || name.find(".partial.") != std::string::npos) continue;
    struct stat st{}, key{};
    if (::stat(item.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    CacheEntry e;
    std::string stem = name.substr(0, name.size() - extension.size());
    e.stem = prefix + stem;
    e.bytes = uint64_t(st.st_size);
    if (::stat((dir + "/" + stem + ".key").c_str(), &key) == 0) e.bytes += uint64_t(key.st_size);
    e.used_ns = mtime_ns(st);
    entries.push_back(std::move(e));
  }
}
}  // namespace

std::vector<CacheEntry> list_cache_entries(const std::string& dir) {
  std::vector<CacheEntry> entries;
  list_entries_in(dir, ".slsnap", "", entries);
  std::string exports(kNsysExportFolder);
  list_entries_in(dir + "/" + exports, ".sqlite", exports + "/", entries);
  return entries;
}

std::vector<size_t> entries_to_evict(const std::vector<CacheEntry>& entries, uint64_t max_bytes, const std::string& keep) {
  std::vector<size_t> order(entries.size());
  uint64_t total = 0;
  for (size_t i = 0; i < entries.size(); ++i) order[i] = i, total += entries[i].bytes;
  // Oldest use first; ties by name so the choice does not depend on the folder's order.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    bool keep_a = entries[a].stem == keep, keep_b = entries[b].stem == keep;
    if (keep_a != keep_b) return keep_b;
    if (entries[a].used_ns != entries[b].used_ns) return entries[a].used_ns < entries[b].used_ns;
    return entries[a].stem < entries[b].stem;
  });
  std::vector<size_t> evict;
  for (size_t i : order) {
    if (total <= max_bytes) break;
    evict.push_back(i);
    total -= entries[i].bytes;
  }
  return evict;
}

void evict_cache_entries(const CacheSettings& settings, const std::string& keep) {
  std::vector<CacheEntry> entries = list_cache_entries(settings.dir);
  for (size_t i : entries_to_evict(entries, settings.max_bytes, keep)) remove_entry(settings, entries[i].stem);
  int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  // Temporary keys and snapshots, and the partial exports of an `nsys export` that was killed.
  for (const std::string& dir : {settings.dir, settings.dir + "/" + std::string(kNsysExportFolder)}) {
    std::error_code ec;
    for (const auto& item : fs::directory_iterator(dir, ec)) {
      std::string name = item.path().filename().string();
      struct stat st{};
      if ((name.find(".tmp.") != std::string::npos || name.find(".partial.") != std::string::npos) &&
          ::stat(item.path().c_str(), &st) == 0 && now - mtime_ns(st) > kStaleTempNs)
        std::remove(item.path().c_str());
    }
  }
}

namespace {
// write_cache_entry with the snapshot's bytes made by `serialize` (once the key is known to hold).
std::string write_cache_entry_with(const CacheKey& key, const CacheSettings& settings,
                                   const std::function<std::string()>& serialize) {
  std::error_code ec;
  fs::create_directories(settings.dir, ec);
  if (ec) return "cache: cannot create the folder " + settings.dir + ": " + ec.message() + " (nothing cached)";
  // The source changed while it loaded: this store may not match either version of it.
  if (cache_key_of(key.path) != key) return {};
  std::string stem = cache_entry_stem(key.path);
  std::remove(key_path(settings, stem).c_str());  // no key, no reader, while the snapshot changes
  if (std::string error = write_snapshot_bytes(serialize(), snapshot_path(settings, stem)); !error.empty())
    return "cache: " + error + " (nothing cached)";
  struct stat st{};
  if (::stat(snapshot_path(settings, stem).c_str(), &st) != 0) return "cache: " + snapshot_path(settings, stem) + " vanished";
  CacheRecord record{key, uint64_t(st.st_ino)};
  if (std::string error = write_key_file(key_path(settings, stem), format_cache_record(record)); !error.empty()) {
    std::remove(snapshot_path(settings, stem).c_str());
    return "cache: " + error + " (nothing cached)";
  }
  // Larger than the whole cache: keep the others rather than evicting them all for nothing.
  std::error_code size_error;
  uint64_t bytes = fs::file_size(snapshot_path(settings, stem), size_error) + fs::file_size(key_path(settings, stem), size_error);
  if (!size_error && bytes > settings.max_bytes) {
    remove_entry(settings, stem);
    return "cache: the snapshot of " + key.path + " (" + std::to_string(bytes) + " bytes) is larger than the cache's limit of " +
           std::to_string(settings.max_bytes) + " bytes (SIGHTLINE_CACHE_MAX); not cached";
  }
  evict_cache_entries(settings, stem);
  return {};
}

// Fulfils a promise once: when told to, or at the latest when it goes (an early return, an
// exception), so that nobody waits for it forever.
class OnceSignal {
public:
  explicit OnceSignal(std::promise<void>& promise) : promise_(promise) {}
  OnceSignal(const OnceSignal&) = delete;
  OnceSignal& operator=(const OnceSignal&) = delete;
  ~OnceSignal() { now(); }
  void now() {
    if (!done_) promise_.set_value(), done_ = true;
  }

private:
  std::promise<void>& promise_;
  bool done_ = false;
};
}  // namespace

std::string cache_snapshot_path(const CacheSettings& settings, const std::string& stem) { return snapshot_path(settings, stem); }

std::unique_ptr<LoadResult> read_cache_entry(const CacheSettings& s, const CacheKey& key, const std::string& stem,
                                       std::vector<std::string>& notices) {
  std::string snap = snapshot_path(s, stem);
  std::optional<std::string> key_text = read_small_file(key_path(s, stem));
  if (!key_text) return nullptr;  // nothing cached (or a write that never finished: no key yet)
  std::optional<CacheRecord> stored = parse_cache_record(*key_text);
  // Another path with the same hash: not this trace's entry; this trace's write replaces it.
  if (stored && stored->source.path != key.path) return nullptr;
  struct stat st{};
  std::string why;
  if (!stored) why = "its key file is damaged";
  else if (stored->source != key) why = "the trace changed since it was cached";
  else if (::stat(snap.c_str(), &st) != 0 || uint64_t(st.st_ino) != stored->snapshot_inode)
    why = "the snapshot is not the one its key file describes";
  auto result = std::make_unique<LoadResult>();
  if (why.empty()) {
    *result = load_snapshot(snap);
    if (!result->ok()) why = result->error.to_string();
  }
  if (why.empty()) {
    touch(snap);
    return result;
  }
  remove_entry(s, stem);
  notices.push_back("cache: discarded the cached snapshot of " + key.path + " (" + why + "); loading the trace");
  return nullptr;
}

std::string write_cache_entry(const TraceStore& store, const CacheKey& key, const CacheSettings& settings) {
  return write_cache_entry_with(key, settings, [&store] { return snapshot_bytes(store); });
}

PendingCacheWrite& PendingCacheWrite::operator=(PendingCacheWrite&& other) {
  wait();
  result_ = std::move(other.result_);
  store_unused_ = std::move(other.store_unused_);
  return *this;
}

PendingCacheWrite::~PendingCacheWrite() { wait(); }

void PendingCacheWrite::start(const TraceStore& store, CacheKey key, CacheSettings settings) {
  wait();
  std::promise<void> unused;
  store_unused_ = unused.get_future();
  result_ = std::async(std::launch::async, [&store, key = std::move(key), settings = std::move(settings), unused = std::move(unused)]() mutable {
    OnceSignal store_unused(unused);
    return write_cache_entry_with(key, settings, [&] {
      std::string bytes = snapshot_bytes(store);
      store_unused.now();
      return bytes;
    });
  });
}

bool PendingCacheWrite::finished() const {
  return !result_.valid() || result_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

void PendingCacheWrite::wait_store_unused() {
  if (store_unused_.valid()) store_unused_.get();
}

std::string PendingCacheWrite::wait() {
  wait_store_unused();
  return result_.valid() ? result_.get() : std::string();
}

}  // namespace sl
