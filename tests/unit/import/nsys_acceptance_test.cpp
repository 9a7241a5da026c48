// Acceptance checks of issue 14 (Nsight Systems reports) on the real corpus reports, beside the
// unit tests of nsys_loader_test.cpp: every GPU activity's launch is the very API row SQL joins
// to it by correlation id (same process), not only a call of the same name; damaged and foreign
// variants of a real report (cut with the header's page count not to be trusted, a future
// schema) give an error naming what is wrong, never a crash.
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "core/import/common/file_reader.h"
#include "core/import/trace_loader.h"
#include "tests/unit/test_support.h"

namespace sl {
namespace {

const char* const kCorpusReports[] = {"fuser_nsys_h200_electsync", "fuser_nsys_h200_regsteal", "fuser_nsys_h200_xent"};

// A corpus report decompressed into a folder of its own, removed with it.
struct PlainReport {
  std::filesystem::path dir, path;
  explicit PlainReport(const std::string& name) {
    dir = std::filesystem::temp_directory_path() / ("sightline_acceptance_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    path = dir / (name + ".sqlite");
    FileBytes bytes = read_trace_file((test::shared_dir() / "corpus" / (name + ".sqlite.gz")).string(), {});
    REQUIRE(bytes.buffer);
    std::string_view view = bytes.buffer->view();
    std::ofstream(path, std::ios::binary).write(view.data(), std::streamsize(view.size()));
  }
  ~PlainReport() { std::filesystem::remove_all(dir); }
  std::string bytes() const {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
};

// Rows of an SQL query as text, run on its own read-only connection.
std::vector<std::vector<std::string>> query(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE_MESSAGE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK, sqlite3_errmsg(db));
  std::vector<std::vector<std::string>> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    rows.emplace_back();
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const unsigned char* text = sqlite3_column_text(st, c);
      rows.back().emplace_back(text ? reinterpret_cast<const char*>(text) : "");
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return rows;
}

std::string arg(const TraceStore& s, SliceRef r, std::string_view key) {
  uint32_t row = s.tracks[r.track].slices.args[r.index];
  if (row == kNone) return "";
  for (const auto& [k, v] : s.decode_args(row))
    if (k == key) return v;
  return "";
}

}  // namespace

TEST_CASE("acceptance #14: every GPU activity's launch is the API row with its correlation id, in its process") {
  if (!test::have_shared()) return;
  for (std::string name : kCorpusReports) {
    CAPTURE(name);
    PlainReport report(name);
    LoadResult r = load_trace(report.path.string());
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    const TraceStore& s = *r.store;
    std::string db = report.path.string();
    int64_t utc = std::stoll(query(db, "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME")[0][0]);
    // (process, correlation id) -> the absolute starts and names of the API rows carrying it.
    std::map<std::pair<int64_t, int64_t>, std::set<std::pair<int64_t, std::string>>> calls;
    for (const auto& row : query(db, "SELECT (r.globalTid >> 24) & 16777215, r.correlationId, r.start, s.value FROM "
                                     "CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"))
      calls[{std::stoll(row[0]), std::stoll(row[1])}].insert({std::stoll(row[2]) + utc, row[3]});
    // GPU rows that SQL can pair with an API row: that many activities must have a launch.
    uint64_t joinable = 0;
    for (const char* table : {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"})
      joinable += std::stoull(query(db, std::string("SELECT count(*) FROM ") + table +
                                            " g WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE "
                                            "r.correlationId = g.correlationId AND (r.globalTid >> 24) = (g.globalPid >> 24))")[0][0]);
    REQUIRE(joinable > 0);
    uint64_t launched = 0;
    StringId kernel = s.strings.find("kernel"), memcpy = s.strings.find("gpu_memcpy"), memset = s.strings.find("gpu_memset");
    for (uint32_t t = 0; t < s.tracks.size(); ++t) {
      const SliceColumns& c = s.tracks[t].slices;
      for (uint32_t i = 0; i < c.size(); ++i) {
        if (c.cat[i] != kernel && c.cat[i] != memcpy && c.cat[i] != memset) continue;
        SliceRef activity{t, i};
        SliceRef launch = s.launch_of(activity);
        if (!launch.valid()) continue;
        ++launched;
        std::string correlation = arg(s, activity, "correlation");
        CAPTURE(s.name(activity));
        CHECK(arg(s, launch, "correlation") == correlation);
        // The launch's process (its track's pid) and correlation id name the SQL rows; its
        // start and name must be one of theirs.
        int64_t pid = std::stoll(std::string(s.strings.view(s.processes[s.tracks[launch.track].process].pid_text)));
        CAPTURE(pid);
        CAPTURE(correlation);
        auto found = calls.find({pid, std::stoll(correlation)});
        REQUIRE(found != calls.end());
        bool one_of_them = false;
        for (const auto& [start, api] : found->second)
          one_of_them |= start == s.origin_ns + s.start(launch) && api.starts_with(std::string(s.name(launch)));
        CHECK(one_of_them);
      }
    }
    CHECK(launched == joinable);
  }
}

// A report whose header does not vouch for its size (the "version-valid-for" field differs from
// the change counter, as older writers leave it: SQLite then takes the size from the file), cut
// anywhere: the header check cannot see the cut, and SQLite's pages and the direct b-tree
// reader's mapped bytes end early. Each cut is a clear error, never a crash.
TEST_CASE("acceptance #14: a corpus report cut anywhere, its header's page count not trusted, is an error") {
  if (!test::have_shared()) return;
  PlainReport report("fuser_nsys_h200_xent");
  std::string bytes = report.bytes();
  bytes[95] = char(bytes[95] + 1);  // version-valid-for (bytes 92..95) != change counter (24..27)
  std::string cut_path = (report.dir / "cut.sqlite").string();
  std::ofstream(cut_path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  LoadResult whole = load_trace(cut_path);
  REQUIRE_MESSAGE(whole.ok(), whole.error.to_string());  // uncut, it still loads
  uint32_t page = 4096;
  for (size_t keep = 100; keep < bytes.size(); keep += bytes.size() / 23 + page / 3) {
    CAPTURE(keep);
    std::filesystem::resize_file(cut_path, keep);
    LoadResult r = load_trace(cut_path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.to_string().starts_with(cut_path + ": "));
    CHECK(r.error.message.find("truncated or damaged") != std::string::npos);
    std::ofstream(cut_path, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));
  }
}

TEST_CASE("acceptance #14: a corpus report of a future schema version names the version and what is read") {
  if (!test::have_shared()) return;
  PlainReport report("fuser_nsys_h200_electsync");
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(report.path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "UPDATE META_DATA_EXPORT SET value = '4.2.0' WHERE name = 'EXPORT_SCHEMA_VERSION'", nullptr,
                       nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  LoadResult r = load_trace(report.path.string());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error.message == "unsupported Nsight Systems export schema version 4.2.0 (Sightline reads schema 3.x, written by nsys 2021 to 2025)");
}

}  // namespace sl

TEST_CASE("an empty .slsnap or .sqlite says what such a file starts with, not what JSON expects") {
  char dir_template[] = "/tmp/sl_empty_XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  std::filesystem::path dir(dir_template);
  for (const char* name : {"run.slsnap", "report.sqlite", "trace.json"}) {
    std::string path = (dir / name).string();
    std::ofstream{path};
    sl::LoadResult r = sl::load_trace(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.file == path);
    CHECK(r.error.message.starts_with("empty file: "));
    bool json_message = r.error.message.find("JSON") != std::string::npos;
    CHECK_MESSAGE(json_message == std::string_view(name).ends_with(".json"), r.error.message);
  }
  std::filesystem::remove_all(dir);
}
