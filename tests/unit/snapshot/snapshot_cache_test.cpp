// The snapshot cache (core/snapshot/snapshot_cache.h): keying, the eviction policy, and open_trace's
// hit / miss / stale / damaged paths, each in a cache folder of its own under the temp dir.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/open_trace.h"
#include "core/report/trace_info.h"
#include "core/snapshot/snapshot.h"
#include "core/snapshot/snapshot_cache.h"
#include "tests/unit/test_support.h"

namespace fs = std::filesystem;
using namespace sl;

namespace {

constexpr const char* kTrace = R"({"traceEvents":[
  {"ph":"X","name":"step","pid":1,"tid":1,"ts":10,"dur":90},
  {"ph":"X","name":"matmul","pid":1,"tid":1,"ts":20,"dur":30,"args":{"n":7}},
  {"ph":"X","name":"kernel","cat":"kernel","pid":0,"tid":7,"ts":25,"dur":10}]})";

// A fresh folder holding `trace.json`, and cache settings pointing into it.
struct Scratch {
  fs::path dir;
  std::string trace;
  CacheSettings cache;
  explicit Scratch(const char* name) {
    // The pid: the release and ASan builds' tests may run at once.
    dir = fs::temp_directory_path() / ("sightline_cache_test_" + std::string(name) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    trace = (dir / "trace.json").string();
    write(trace, kTrace);
    cache.enabled = true;
    cache.dir = (dir / "cache").string();
  }
  ~Scratch() { fs::remove_all(dir); }
  static void write(const std::string& path, std::string_view text) { std::ofstream(path, std::ios::binary) << text; }
  size_t files(const char* ext) const {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cache.dir, ec)) n += e.path().extension() == ext;
    return n;
  }
  std::string entry() const { return cache.dir + "/" + cache_entry_stem(fs::canonical(trace).string()) + ".slsnap"; }
};

// Sets the file's mtime to `seconds` since the epoch (a touched source).
void set_mtime(const std::string& path, int64_t seconds) {
  struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("snapshot cache: sizes, keys and entry names") {
  CHECK(parse_cache_size("4G") == (uint64_t(4) << 30));
  CHECK(parse_cache_size("500M") == uint64_t(500) << 20);
  CHECK(parse_cache_size("12345") == 12345u);
  CHECK(parse_cache_size("1T") == uint64_t(1) << 40);
  CHECK_FALSE(parse_cache_size("").has_value());
  CHECK_FALSE(parse_cache_size("4GB").has_value());
  CHECK_FALSE(parse_cache_size("-1").has_value());
  CHECK_FALSE(parse_cache_size("99999999999999T").has_value());  // overflows 64 bits

  CacheRecord record{{"/data/run 1/rank\n0.json", 123456789, 1700000000123456789}, 42};
  std::string text = format_cache_record(record);
  CHECK(parse_cache_record(text) == record);  // the path may hold spaces and newlines
  const std::string v2 = "sightline snapshot cache key 2\nsnapshot_inode 1\n";
  CHECK(parse_cache_record(v2 + "size 1\nmtime_ns 2\npath /a").has_value());
  CHECK_FALSE(parse_cache_record("sightline snapshot cache key 1\nsize 1\nmtime_ns 2\npath /a").has_value());
  CHECK_FALSE(parse_cache_record(text.substr(0, text.find("mtime_ns"))).has_value());
  CHECK_FALSE(parse_cache_record(v2 + "size x\nmtime_ns 2\npath /a").has_value());
  CHECK_FALSE(parse_cache_record(v2 + "size 1\nmtime_ns 2\npath a").has_value());
  CHECK_FALSE(parse_cache_record(v2 + "size 1\npath /a").has_value());

  // The name hashes the path only (FNV-1a 64, 16 hex digits): stable, different per path.
  CHECK(cache_entry_stem("") == "cbf29ce484222325");
  CHECK(cache_entry_stem("/a/trace.json") == cache_entry_stem("/a/trace.json"));
  CHECK(cache_entry_stem("/a/trace.json") != cache_entry_stem("/b/trace.json"));
  CHECK(cache_entry_stem("/a/trace.json").size() == 16);

  Scratch s("keys");
  auto k = cache_key_of(s.trace);
  REQUIRE(k);
  CHECK(k->path == fs::canonical(s.trace).string());
  CHECK(k->size == std::string_view(kTrace).size());
  // The same file by a relative path, through `..`: the same key.
  fs::path relative = fs::relative(s.trace, fs::current_path());
  CHECK(cache_key_of((fs::path(s.dir) / ".." / s.dir.filename() / "trace.json").string()) == k);
  CHECK(cache_key_of(relative.string()) == k);
  CHECK_FALSE(cache_key_of(s.dir.string()).has_value());  // a folder is not a source
  CHECK_FALSE(cache_key_of((s.dir / "missing.json").string()).has_value());
}

TEST_CASE("snapshot cache: eviction removes the least recently used first, the new entry last") {
  std::vector<CacheEntry> e = {{"a", 100, 30}, {"b", 100, 10}, {"c", 100, 20}, {"d", 100, 40}};
  CHECK(entries_to_evict(e, 400).empty());
  CHECK(entries_to_evict(e, 1000).empty());
  CHECK(entries_to_evict(e, 399) == std::vector<size_t>{1});
  CHECK(entries_to_evict(e, 200) == std::vector<size_t>{1, 2});
  CHECK(entries_to_evict(e, 0) == std::vector<size_t>{1, 2, 0, 3});
  // `keep` goes last even when it is the oldest.
  CHECK(entries_to_evict(e, 200, "b") == std::vector<size_t>{2, 0});
  CHECK(entries_to_evict(e, 50, "b") == std::vector<size_t>{2, 0, 3, 1});
  // Ties in time: by name, whatever the folder's order.
  std::vector<CacheEntry> tie = {{"z", 10, 5}, {"y", 10, 5}};
  CHECK(entries_to_evict(tie, 10) == std::vector<size_t>{1});
  // Sizes count: one large old entry makes room for several.
  std::vector<CacheEntry> sizes = {{"big", 900, 1}, {"s1", 50, 2}, {"s2", 50, 3}};
  CHECK(entries_to_evict(sizes, 500) == std::vector<size_t>{0});
}

TEST_CASE("snapshot cache: evict_cache_entries keeps the folder within its limit, by last use") {
  Scratch s("evict");
  fs::create_directories(s.cache.dir);
  for (int i = 0; i < 4; ++i) {
    std::string stem = "000000000000000" + std::to_string(i);
    Scratch::write(s.cache.dir + "/" + stem + ".slsnap", std::string(1000, 'x'));
    Scratch::write(s.cache.dir + "/" + stem + ".key", "k");
    set_mtime(s.cache.dir + "/" + stem + ".slsnap", 1000000 + (i == 1 ? 10 : i));  // entry 1 used last
  }
  std::vector<CacheEntry> listed = list_cache_entries(s.cache.dir);
  REQUIRE(listed.size() == 4);
  CHECK(listed[0].bytes == 1001);  // snapshot and key
  s.cache.max_bytes = 2100;
  evict_cache_entries(s.cache);
  CHECK(fs::exists(s.cache.dir + "/0000000000000001.slsnap"));
  CHECK(fs::exists(s.cache.dir + "/0000000000000003.slsnap"));
  CHECK_FALSE(fs::exists(s.cache.dir + "/0000000000000000.slsnap"));
  CHECK_FALSE(fs::exists(s.cache.dir + "/0000000000000000.key"));
  CHECK_FALSE(fs::exists(s.cache.dir + "/0000000000000002.slsnap"));
}

// `.nsys-rep` exports (core/import/nsys/nsys_files.cpp) are entries too: listed from `nsys/`, evicted with the
// snapshots by last use; a partial export a killed `nsys export` left is no entry, and goes after a day.
TEST_CASE("snapshot cache: Nsight exports in nsys/ are entries evicted with the snapshots") {
  Scratch s("exports");
  const std::string exports = s.cache.dir + "/nsys";
  fs::create_directories(exports);
  Scratch::write(s.cache.dir + "/00000000000000aa.slsnap", std::string(1000, 's'));
  Scratch::write(s.cache.dir + "/00000000000000aa.key", "k");
  set_mtime(s.cache.dir + "/00000000000000aa.slsnap", 1000020);
  Scratch::write(exports + "/run-1.sqlite", std::string(2000, 'e'));
  Scratch::write(exports + "/run-1.key", "12 3.4\n");
  set_mtime(exports + "/run-1.sqlite", 1000010);  // used before the snapshot
  Scratch::write(exports + "/new-2.sqlite", std::string(500, 'e'));
  Scratch::write(exports + "/old-3.partial.sqlite", "half");
  set_mtime(exports + "/old-3.partial.sqlite", 1000000);
  Scratch::write(exports + "/now-4.partial.sqlite", "half");  // an export running now
  std::vector<CacheEntry> listed = list_cache_entries(s.cache.dir);
  std::sort(listed.begin(), listed.end(), [](const CacheEntry& a, const CacheEntry& b) { return a.stem < b.stem; });
  REQUIRE(listed.size() == 3);
  CHECK(listed[0].stem == "00000000000000aa");
  CHECK(listed[1].stem == "nsys/new-2");
  CHECK(listed[1].bytes == 500);  // no key (yet)
  CHECK(listed[2].stem == "nsys/run-1");
  CHECK(listed[2].bytes == 2007);
  CHECK(listed[2].used_ns == int64_t(1000010) * 1000000000);
  s.cache.max_bytes = 2000;
  evict_cache_entries(s.cache);
  CHECK_FALSE(fs::exists(exports + "/run-1.sqlite"));  // the least recently used, though an export
  CHECK_FALSE(fs::exists(exports + "/run-1.key"));
  CHECK(fs::exists(s.cache.dir + "/00000000000000aa.slsnap"));
  CHECK(fs::exists(exports + "/new-2.sqlite"));
  CHECK_FALSE(fs::exists(exports + "/old-3.partial.sqlite"));
  CHECK(fs::exists(exports + "/now-4.partial.sqlite"));
}

TEST_CASE("snapshot cache: a miss writes the entry, the next open reads it with the same store") {
  Scratch s("hit");
  OpenedTrace first = open_trace(s.trace, {}, s.cache, true);
  REQUIRE(first.loaded.ok());
  CHECK(first.origin == TraceOrigin::Source);
  CHECK(first.notices.empty());
  CHECK(first.write_warning.empty());
  CHECK(s.files(".slsnap") == 1);
  CHECK(s.files(".key") == 1);
  CHECK(first.cache_entry == s.entry());

  // Opened by another spelling of its path: a hit, presented under the path given this time.
  std::string other = (s.dir / "." / "trace.json").string();
  OpenedTrace second = open_trace(other, {}, s.cache);
  REQUIRE(second.loaded.ok());
  CHECK(second.origin == TraceOrigin::Cache);
  CHECK_FALSE(second.write.running());
  CHECK(second.notices.empty());
  CHECK(second.loaded.store->meta.file == other);
  first.loaded.store->meta.file = other;
  CHECK(info_json(*second.loaded.store) == info_json(*first.loaded.store));
  CHECK(snapshot_bytes(*second.loaded.store) == snapshot_bytes(*first.loaded.store));

  // The background write gives the same entry.
  fs::remove_all(s.cache.dir);
  {
    OpenedTrace background = open_trace(s.trace, {}, s.cache);
    CHECK(background.origin == TraceOrigin::Source);
    CHECK(background.write.wait().empty());
  }
  CHECK(s.files(".slsnap") == 1);
  CHECK(open_trace(s.trace, {}, s.cache).origin == TraceOrigin::Cache);
}

TEST_CASE("snapshot cache: a background write needs the store only until its bytes are made") {
  Scratch s("release");
  OpenedTrace opened = open_trace(s.trace, {}, s.cache);
  REQUIRE(opened.loaded.ok());
  REQUIRE(opened.write.running());
  std::string expected = snapshot_bytes(*opened.loaded.store);
  opened.write.wait_store_unused();
  // The store may now change (the GUI adds derived counter rows) or go, while the file is written.
  opened.loaded.store->counters.push_back(CounterSeries{0, opened.loaded.store->strings.intern("derived"), {1, 2}, {3.0, 4.0}});
  opened.loaded.store.reset();
  CHECK(opened.write.wait().empty());
  CHECK(opened.write.finished());
  std::ifstream in(s.entry(), std::ios::binary);
  std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(written == expected);  // what the store was when the write began, without the later row
  OpenedTrace again = open_trace(s.trace, {}, s.cache);
  CHECK(again.origin == TraceOrigin::Cache);
  CHECK(again.loaded.store->counters.empty());
}

TEST_CASE("snapshot cache: a changed source, a damaged or other-version entry fall back with one notice") {
  Scratch s("stale");
  REQUIRE(open_trace(s.trace, {}, s.cache, true).loaded.ok());
  auto reopen = [&](TraceOrigin expected_origin, size_t expected_notices, const char* says) {
    OpenedTrace t = open_trace(s.trace, {}, s.cache, true);
    REQUIRE(t.loaded.ok());
    CHECK(t.origin == expected_origin);
    REQUIRE(t.notices.size() == expected_notices);
    if (expected_notices) {
      CHECK(t.notices[0].find("discarded the cached snapshot of " + fs::canonical(s.trace).string()) != std::string::npos);
      CHECK_MESSAGE(t.notices[0].find(says) != std::string::npos, t.notices[0]);
    }
    CHECK(t.loaded.store->counts.events == 3);
  };

  SUBCASE("touched source") {
    set_mtime(s.trace, 1600000000);
    reopen(TraceOrigin::Source, 1, "the trace changed since it was cached");
    reopen(TraceOrigin::Cache, 0, "");  // re-cached under the new key
  }
  SUBCASE("source rewritten with another size") {
    Scratch::write(s.trace, std::string(kTrace) + "\n");
    reopen(TraceOrigin::Source, 1, "the trace changed since it was cached");
  }
  SUBCASE("flipped byte") {
    std::fstream f(s.entry(), std::ios::in | std::ios::out | std::ios::binary);
    // The file's last byte: inside the last section (the arg blocks), which a checksum covers
    // (the middle of a small file can fall on padding between sections, which none covers).
    f.seekp(fs::file_size(s.entry()) - 1);
    f.put('\x5a');
    f.close();
    reopen(TraceOrigin::Source, 1, "bad snapshot at byte");
    reopen(TraceOrigin::Cache, 0, "");
  }
  SUBCASE("truncated entry") {
    fs::resize_file(s.entry(), fs::file_size(s.entry()) / 3);
    reopen(TraceOrigin::Source, 1, s.entry().c_str());
    reopen(TraceOrigin::Cache, 0, "");
  }
  SUBCASE("another format version") {
    std::fstream f(s.entry(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(8);
    uint32_t version = kSnapshotVersion + 7;
    f.write(reinterpret_cast<const char*>(&version), 4);
    f.close();
    reopen(TraceOrigin::Source, 1, "version");
  }
  SUBCASE("damaged key file") {
    Scratch::write(s.entry().substr(0, s.entry().size() - 7) + ".key", "garbage");
    reopen(TraceOrigin::Source, 1, "its key file is damaged");
  }
  SUBCASE("a snapshot from another write than its key (two writers crossing)") {
    std::string copy = s.entry() + ".copy";
    fs::copy_file(s.entry(), copy);
    fs::rename(copy, s.entry());  // the same bytes, another file
    reopen(TraceOrigin::Source, 1, "the snapshot is not the one its key file describes");
    reopen(TraceOrigin::Cache, 0, "");
  }
  SUBCASE("another path with the same name (a hash collision): a silent miss, then replaced") {
    CacheRecord foreign{{"/elsewhere/other.json", 1, 2}, 3};
    Scratch::write(s.entry().substr(0, s.entry().size() - 7) + ".key", format_cache_record(foreign));
    reopen(TraceOrigin::Source, 0, "");
    reopen(TraceOrigin::Cache, 0, "");
  }
}

TEST_CASE("snapshot cache: what is never cached, and writes that fail leave nothing") {
  Scratch s("never");
  SUBCASE("cache off") {
    s.cache.enabled = false;
    CHECK(open_trace(s.trace, {}, s.cache, true).origin == TraceOrigin::Source);
    CHECK_FALSE(fs::exists(s.cache.dir));
  }
  SUBCASE("a snapshot file given directly") {
    std::string snap = (s.dir / "trace.slsnap").string();
    REQUIRE(write_snapshot(*test::load_ok(kTrace), snap).empty());
    OpenedTrace t = open_trace(snap, {}, s.cache, true);
    CHECK(t.loaded.ok());
    CHECK(t.origin == TraceOrigin::Snapshot);
    CHECK_FALSE(fs::exists(s.cache.dir));
  }
  SUBCASE("a trace that does not load") {
    Scratch::write(s.trace, "not json");
    CHECK_FALSE(open_trace(s.trace, {}, s.cache, true).loaded.ok());
    CHECK_FALSE(fs::exists(s.cache.dir));
  }
  SUBCASE("the cache folder cannot be made: one warning, the trace still opens") {
    s.cache.dir = s.trace + "/cache";  // under a regular file: even root cannot create it
    OpenedTrace t = open_trace(s.trace, {}, s.cache, true);
    CHECK(t.loaded.ok());
    CHECK(t.write_warning.find("cache: cannot create the folder " + s.cache.dir) == 0);
  }
  SUBCASE("an entry larger than the whole cache: not kept, and the others stay") {
    fs::create_directories(s.cache.dir);
    Scratch::write(s.cache.dir + "/00000000000000aa.slsnap", "old");
    Scratch::write(s.cache.dir + "/00000000000000aa.key", "k");
    s.cache.max_bytes = 1000;
    OpenedTrace t = open_trace(s.trace, {}, s.cache, true);
    CHECK(t.loaded.ok());
    CHECK(t.write_warning.find("larger than the cache's limit of 1000 bytes") != std::string::npos);
    CHECK(s.files(".slsnap") == 1);
    CHECK(s.files(".key") == 1);
    CHECK(fs::exists(s.cache.dir + "/00000000000000aa.slsnap"));
    std::error_code ec;
    CHECK(std::distance(fs::directory_iterator(s.cache.dir, ec), fs::directory_iterator()) == 2);  // no temp left
  }
}

TEST_CASE("snapshot cache: a cut-off trace from the cache gives the loader's warning") {
  Scratch s("cut");
  std::string text(kTrace);
  Scratch::write(s.trace, text.substr(0, text.find("{\"ph\":\"X\",\"name\":\"kernel\"")));
  OpenedTrace first = open_trace(s.trace, {}, s.cache, true);
  REQUIRE(first.loaded.ok());
  REQUIRE_FALSE(first.loaded.warning.empty());
  OpenedTrace second = open_trace(s.trace, {}, s.cache);
  CHECK(second.origin == TraceOrigin::Cache);
  CHECK(second.loaded.warning == first.loaded.warning);
}

TEST_CASE("snapshot cache: settings from the environment") {
  auto with_env = [](std::initializer_list<std::pair<const char*, const char*>> vars) {
    std::vector<std::pair<std::string, std::optional<std::string>>> saved;
    for (auto [k, v] : vars) {
      const char* old = std::getenv(k);
      saved.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
      v ? ::setenv(k, v, 1) : ::unsetenv(k);
    }
    CacheSettings s = cache_settings_from_environment();
    for (auto& [k, v] : saved) v ? ::setenv(k.c_str(), v->c_str(), 1) : ::unsetenv(k.c_str());
    return s;
  };
  CacheSettings s = with_env({{"XDG_CACHE_HOME", "/xdg"}, {"HOME", "/home/u"}, {"SIGHTLINE_NO_CACHE", nullptr},
                              {"SIGHTLINE_CACHE_MAX", nullptr}});
  CHECK(s.enabled);
  CHECK(s.dir == "/xdg/sightline");
  CHECK(s.max_bytes == kDefaultCacheMaxBytes);
  s = with_env({{"XDG_CACHE_HOME", nullptr}, {"HOME", "/home/u"}, {"SIGHTLINE_NO_CACHE", "0"}, {"SIGHTLINE_CACHE_MAX", "2G"}});
  CHECK(s.enabled);
  CHECK(s.dir == "/home/u/.cache/sightline");
  CHECK(s.max_bytes == uint64_t(2) << 30);
  s = with_env({{"XDG_CACHE_HOME", "relative"}, {"HOME", "/h"}, {"SIGHTLINE_NO_CACHE", "1"}, {"SIGHTLINE_CACHE_MAX", "lots"}});
  CHECK_FALSE(s.enabled);
  CHECK(s.dir == "/h/.cache/sightline");  // a relative XDG_CACHE_HOME is ignored (XDG spec)
  CHECK(s.max_bytes == kDefaultCacheMaxBytes);
  s = with_env({{"XDG_CACHE_HOME", nullptr}, {"HOME", nullptr}, {"SIGHTLINE_NO_CACHE", nullptr}});
  CHECK_FALSE(s.enabled);
}

// A disk that fills up while the cache writes (test::with_file_size_limit): the trace still opens, one
// warning names the failure, and the folder holds no snapshot, key or temporary file; the next
// open is a plain miss that caches the trace.
TEST_CASE("snapshot cache: a disk full mid-write leaves no entry, key or temporary file") {
  Scratch s("full");
  fs::copy_file(std::string(SIGHTLINE_TEST_DATA) + "/hta_cp_simple_add_input.json.gz", s.dir / "big.json.gz");
  std::string trace = (s.dir / "big.json.gz").string();
  OpenedTrace t = test::with_file_size_limit(16 * 1024, [&] { return open_trace(trace, {}, s.cache, true); });
  REQUIRE(t.loaded.ok());
  CHECK(t.origin == TraceOrigin::Source);
  CHECK(t.write_warning.find("File too large") != std::string::npos);
  CHECK(t.write_warning.find('\n') == std::string::npos);
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(s.cache.dir, ec)) left.push_back(e.path().filename().string());
  CHECK(left.empty());
  OpenedTrace again = open_trace(trace, {}, s.cache, true);
  CHECK(again.origin == TraceOrigin::Source);
  CHECK(again.notices.empty());
  CHECK(again.write_warning.empty());
  CHECK(open_trace(trace, {}, s.cache, true).origin == TraceOrigin::Cache);
}
