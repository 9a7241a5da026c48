// Nsight Systems .nsys-rep reports, exported by a stand-in `nsys` on PATH: once into the cache,
// within the cache's limit, into a temporary file with the cache off, and failed exports.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/import/trace_loader.h"
#include "core/report/trace_info.h"
#include "core/snapshot/snapshot_cache.h"
#include "tests/unit/import/nsys_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::nsys_test;

// A stand-in `nsys` (a shell script with `body` after the shebang) first on PATH, and the
// process's cache on, in `dir`/cache/sightline (as XDG_CACHE_HOME=`dir`/cache would give), both
// restored when it goes. ctest turns the cache off (SIGHTLINE_NO_CACHE=1): these tests say which.
namespace {
struct StandInNsys {
  std::string saved_path;
  CacheSettings saved_cache;
  CacheSettings cache;
  StandInNsys(const ScratchDir& dir, const std::string& body) : saved_cache(process_cache_settings()) {
    fs::create_directory(dir.path / "bin");
    std::ofstream(dir.path / "bin" / "nsys") << "#!/bin/sh\n" << body;
    fs::permissions(dir.path / "bin" / "nsys", fs::perms::owner_all);
    const char* old_path = std::getenv("PATH");
    saved_path = old_path ? old_path : "";
    ::setenv("PATH", ((dir.path / "bin").string() + ":" + saved_path).c_str(), 1);
    cache.enabled = true;
    cache.dir = (dir.path / "cache" / "sightline").string();
    set_process_cache_settings(cache);
  }
  ~StandInNsys() {
    ::setenv("PATH", saved_path.c_str(), 1);
    set_process_cache_settings(saved_cache);
  }
  void set_cache_limit(uint64_t bytes) {
    cache.max_bytes = bytes;
    set_process_cache_settings(cache);
  }
};
}  // namespace

// `.nsys-rep` with an `nsys` on PATH: a stand-in script that "exports" a prepared database,
// recording its arguments; the export lands in the cache and is reused the second time.
TEST_CASE("nsys: a .nsys-rep is exported once into the cache") {
  ScratchDir dir;
  std::string db = dir.file("prepared.sqlite");
  write_db(db, tiny_report(false));
  std::string log = dir.file("nsys.log");
  std::string rep = dir.file("run.nsys-rep");
  std::ofstream(rep) << "a report";
  StandInNsys nsys(dir, "echo \"$@\" >> '" + log + "'\n"
                        "echo 'Processing events... 100%'\n"  // nsys's progress goes to stdout
                        "while [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then out=$2; fi; shift; done\n"
                        "cp '" + db + "' \"$out\"\n");
  // The export's progress must not reach this process's stdout (a command's JSON or CSV output).
  std::string stdout_file = dir.file("stdout.txt");
  std::fflush(stdout);
  int saved_stdout = ::dup(STDOUT_FILENO);
  int capture = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(capture, STDOUT_FILENO);
  LoadResult first = load_trace(rep);
  LoadResult second = load_trace(rep);
  std::fflush(stdout);
  ::dup2(saved_stdout, STDOUT_FILENO);
  ::close(saved_stdout);
  ::close(capture);
  CHECK(read_file(stdout_file).empty());
  REQUIRE_MESSAGE(first.ok(), first.error.to_string());
  REQUIRE_MESSAGE(second.ok(), second.error.to_string());
  CHECK(first.store->kernel_count() == 2);
  CHECK(first.store->meta.file == rep);
  std::string calls = read_file(log);
  CHECK(calls.starts_with("export --type sqlite --force-overwrite true --output " + (dir.path / "cache").string() +
                          "/sightline/nsys/run-"));
  CHECK(std::count(calls.begin(), calls.end(), '\n') == 1);  // the second load used the cache
  // A changed report is exported again, over its old export: one export (and its key) per report.
  std::ofstream(rep) << "a longer report";
  LoadResult third = load_trace(rep);
  REQUIRE_MESSAGE(third.ok(), third.error.to_string());
  calls = read_file(log);
  CHECK(std::count(calls.begin(), calls.end(), '\n') == 2);
  std::vector<std::string> exports;
  for (const auto& e : fs::directory_iterator(dir.path / "cache" / "sightline" / "nsys"))
    exports.push_back(e.path().extension().string());
  std::sort(exports.begin(), exports.end());
  CHECK(exports == std::vector<std::string>{".key", ".sqlite"});
}

// A stand-in nsys body: logs its arguments (one line per call) and "exports" `db`.
std::string copying_nsys(const std::string& db, const std::string& log) {
  return "echo \"$@\" >> '" + log + "'\n"
         "while [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then out=$2; fi; shift; done\n"
         "cp '" + db + "' \"$out\"\n";
}

size_t lines_in(const std::string& path) {
  std::string text = read_file(path);
  return size_t(std::count(text.begin(), text.end(), '\n'));
}

// Exports are entries of the snapshot cache: one size limit (SIGHTLINE_CACHE_MAX) for both,
// the least recently used going first, snapshot or export alike.
TEST_CASE("nsys: .nsys-rep exports count toward the cache's limit, evicted oldest first with snapshots") {
  ScratchDir dir;
  std::string db = dir.file("prepared.sqlite");
  write_db(db, tiny_report(false));
  std::string log = dir.file("nsys.log");
  StandInNsys nsys(dir, copying_nsys(db, log));
  const uint64_t export_bytes = fs::file_size(db);
  const std::string folder = nsys.cache.dir, exports = folder + "/nsys";
  // An old snapshot entry (1000 + 3 bytes), last used long ago.
  fs::create_directories(folder);
  std::ofstream(folder + "/00000000000000aa.slsnap") << std::string(1000, 's');
  std::ofstream(folder + "/00000000000000aa.key") << "key";
  auto set_used = [](const std::string& path, int64_t seconds) {
    struct timespec times[2] = {{seconds, 0}, {seconds, 0}};
    REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
  };
  set_used(folder + "/00000000000000aa.slsnap", 1000000);
  // Room for two exports and their keys, not for a third thing.
  nsys.set_cache_limit(2 * export_bytes + 200);
  auto export_of = [&](const char* report) {
    for (const auto& e : fs::directory_iterator(exports)) {
      std::string name = e.path().filename().string();
      if (name.starts_with(std::string(report) + "-") && name.ends_with(".sqlite")) return e.path().string();
    }
    return std::string();
  };
  auto open_report = [&](const char* report) {
    std::string rep = dir.file((std::string(report) + ".nsys-rep").c_str());
    if (!fs::exists(rep)) std::ofstream(rep) << "report " << report;
    LoadResult r = load_trace(rep);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    CHECK(r.store->kernel_count() == 2);
  };

  open_report("a");
  std::string a = export_of("a");
  REQUIRE(!a.empty());
  CHECK(fs::exists(folder + "/00000000000000aa.slsnap"));  // 1003 + export + key: still within the limit
  // Listed as an entry: the export and its key, under the stem "nsys/<name>".
  std::vector<CacheEntry> listed = list_cache_entries(folder);
  REQUIRE(listed.size() == 2);
  const CacheEntry& entry = listed[0].stem.starts_with("nsys/") ? listed[0] : listed[1];
  CHECK(entry.stem == "nsys/" + fs::path(a).stem().string());
  std::string key = a.substr(0, a.size() - 7) + ".key";
  CHECK(entry.bytes == export_bytes + fs::file_size(key));
  set_used(a, 2000000);  // used after the snapshot

  open_report("b");  // over the limit: the snapshot, used longest ago, goes
  std::string b = export_of("b");
  REQUIRE(!b.empty());
  CHECK_FALSE(fs::exists(folder + "/00000000000000aa.slsnap"));
  CHECK_FALSE(fs::exists(folder + "/00000000000000aa.key"));
  CHECK(fs::exists(a));
  set_used(b, 3000000);

  open_report("a");  // reused (no export), and marked as used now
  CHECK(lines_in(log) == 2);
  CHECK(fs::last_write_time(a) > fs::last_write_time(b));

  open_report("c");  // b is now the least recently used
  CHECK(lines_in(log) == 3);
  CHECK(fs::exists(a));
  CHECK(fs::exists(key));
  CHECK_FALSE(fs::exists(b));
  CHECK_FALSE(fs::exists(b.substr(0, b.size() - 7) + ".key"));
  CHECK_FALSE(export_of("c").empty());

  // An export larger than the whole limit is read, then removed; it evicts nothing.
  nsys.set_cache_limit(export_bytes / 2);
  open_report("d");
  CHECK(lines_in(log) == 4);
  CHECK(export_of("d").empty());
  CHECK(fs::exists(a));
  CHECK_FALSE(export_of("c").empty());
  auto files = std::distance(fs::directory_iterator(exports), fs::directory_iterator());
  CHECK(files == 4);  // a and c, each with its key
}

// A prepared report, a `.nsys-rep` standing for it, and TMPDIR pointed at a scratch folder of its
// own while this lives: for exports that go to a temporary file.
struct ReportWithTmpdir {
  ScratchDir dir, tmp;
  std::string db = dir.file("prepared.sqlite"), log = dir.file("nsys.log"), rep = dir.file("run.nsys-rep");
  std::string saved_tmp;
  bool had_tmp = std::getenv("TMPDIR") != nullptr;
  ReportWithTmpdir() {
    write_db(db, tiny_report(false));
    std::ofstream(rep) << "a report";
    if (had_tmp) saved_tmp = std::getenv("TMPDIR");
    ::setenv("TMPDIR", tmp.path.c_str(), 1);
  }
  ~ReportWithTmpdir() { had_tmp ? ::setenv("TMPDIR", saved_tmp.c_str(), 1) : ::unsetenv("TMPDIR"); }
};

// `--no-cache` (and SIGHTLINE_NO_CACHE): nothing goes into the cache; the export is a temporary
// file in $TMPDIR, removed after loading.
TEST_CASE("nsys: with the cache off, a .nsys-rep is exported into a temporary file removed after loading") {
  ReportWithTmpdir t;
  const ScratchDir &dir = t.dir, &tmp = t.tmp;
  const std::string& rep = t.rep;
  LoadResult r, failed;
  {
    StandInNsys nsys(dir, copying_nsys(t.db, t.log));
    disable_process_cache();  // what `--no-cache` does
    r = load_trace(rep);
    // A failing export: the command to run by hand writes beside the report.
    std::ofstream(dir.path / "bin" / "nsys") << "#!/bin/sh\necho 'nsys: cannot read the report' >&2\nexit 1\n";
    failed = load_trace(rep);
  }
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  CHECK(r.store->kernel_count() == 2);
  CHECK(r.store->meta.file == rep);
  // nsys wrote into $TMPDIR, and that file is gone.
  std::string calls = read_file(t.log);
  CHECK(calls.starts_with("export --type sqlite --force-overwrite true --output " + tmp.path.string() + "/sightline-nsys-"));
  CHECK(calls.ends_with(".sqlite " + rep + "\n"));
  CHECK(fs::is_empty(tmp.path));
  CHECK_FALSE(fs::exists(dir.path / "cache"));
  // `info` names no export folder: there is none to look in.
  CHECK(info_text(*r.store).find("exported to") == std::string::npos);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error.message == "`nsys export --type sqlite --output '" + dir.file("run.sqlite") + "' '" + rep +
                                    "'` failed; run it by hand to see why");
  CHECK(fs::is_empty(tmp.path));
}

// A cache folder that cannot be made costs the cache, not the report: a temporary export.
TEST_CASE("nsys: a .nsys-rep opens when the cache folder cannot be made") {
  ReportWithTmpdir t;
  std::ofstream(t.dir.file("cache")) << "a file where the cache folder would go";
  LoadResult r;
  {
    StandInNsys nsys(t.dir, copying_nsys(t.db, t.log));
    r = load_trace(t.rep);
  }
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  CHECK(r.store->kernel_count() == 2);
  CHECK(read_file(t.log).starts_with("export --type sqlite --force-overwrite true --output " + t.tmp.path.string() +
                                     "/sightline-nsys-"));
  CHECK(fs::is_empty(t.tmp.path));
  CHECK(fs::is_regular_file(t.dir.file("cache")));
}

// `nsys export` failing (a damaged report, an nsys too old for it): the error gives the command
// to run by hand, and neither the partial export nor an entry is left in the cache.
TEST_CASE("nsys: a failed .nsys-rep export names the command and leaves nothing in the cache") {
  ScratchDir dir;
  std::string rep = dir.file("bad.nsys-rep");
  std::ofstream(rep) << "damaged";
  LoadResult r;
  {
    StandInNsys nsys(dir, "while [ $# -gt 0 ]; do if [ \"$1\" = --output ]; then out=$2; fi; shift; done\n"
                          "echo half > \"$out\"\necho 'nsys: cannot read the report' >&2\nexit 1\n");
    r = load_trace(rep);
  }
  REQUIRE_FALSE(r.ok());
  CHECK(r.error.file == rep);
  CHECK(r.error.message.starts_with("`nsys export --type sqlite --output '" + (dir.path / "cache").string() +
                                    "/sightline/nsys/bad-"));
  CHECK(r.error.message.ends_with(".partial.sqlite' '" + rep + "'` failed; run it by hand to see why"));
  CHECK(fs::is_empty(dir.path / "cache" / "sightline" / "nsys"));
}
