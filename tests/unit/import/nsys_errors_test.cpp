// Nsight Systems SQLite exports that are broken, foreign or compressed: a clear error, never a
// crash, and a .sqlite.gz's temporary file removed whether it loads or not.
#include <chrono>
#include <cstdlib>
#include <fstream>

#include "core/import/nsys/nsys_loader.h"
#include "core/import/trace_loader.h"
#include "core/report/trace_info.h"
#include "tests/unit/import/nsys_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::nsys_test;

TEST_CASE("nsys: a .sqlite.gz is read through a temporary file that is removed") {
  ScratchDir dir, tmp;
  std::string path = dir.file("tiny.sqlite");
  write_db(path, tiny_report(false));
  std::string raw = read_file(path);
  // gzip it with the system's gzip (-n: no name or time, so the bytes are reproducible).
  REQUIRE(std::system(("gzip -n -k '" + path + "'").c_str()) == 0);
  const char* old = std::getenv("TMPDIR");
  std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.path.c_str(), 1);
  REQUIRE(nsys_file_kind(path + ".gz") == NsysFileKind::SqliteGz);
  // What a killed load left two days ago is removed; another process's current one is not.
  std::ofstream(tmp.file("sightline-nsys-AAAAAA.sqlite")) << "stale";
  fs::last_write_time(tmp.file("sightline-nsys-AAAAAA.sqlite"), fs::file_time_type::clock::now() - std::chrono::hours(48));
  std::ofstream(tmp.file("sightline-nsys-BBBBBB.sqlite")) << "in use";
  LoadResult r = load_trace(path + ".gz");
  old ? ::setenv("TMPDIR", saved.c_str(), 1) : ::unsetenv("TMPDIR");
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  CHECK(r.store->kernel_count() == 2);
  CHECK(r.store->meta.bytes == raw.size());
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmp.path)) left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"sightline-nsys-BBBBBB.sqlite"});
}

TEST_CASE("nsys: broken and foreign files give a clear error, never a crash") {
  ScratchDir dir;
  std::string good = dir.file("good.sqlite");
  write_db(good, tiny_report(false));
  std::string bytes = read_file(good);
  REQUIRE(bytes.size() > 8192);

  SUBCASE("truncated") {
    for (size_t keep : {bytes.size() / 2, size_t(4096), size_t(100)}) {
      CAPTURE(keep);
      std::string path = dir.file("truncated.sqlite");
      std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(keep));
      LoadResult r = load_trace(path);
      REQUIRE_FALSE(r.ok());
      CHECK(r.error.to_string().starts_with(path + ": "));
      CHECK(r.error.message.find("truncated") != std::string::npos);
      LoadResult m = load_nsys_bytes(std::string_view(bytes.data(), keep), "memory");
      CHECK_FALSE(m.ok());
    }
  }
  SUBCASE("the SQLite magic on something else") {
    std::string path = dir.file("fake.sqlite");
    std::string fake = std::string("SQLite format 3", 16) + std::string(4000, 'x');
    std::ofstream(path, std::ios::binary) << fake;
    LoadResult r = load_trace(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find("not an SQLite database") != std::string::npos);
  }
  SUBCASE("an SQLite database that is not an Nsight export") {
    std::string path = dir.file("other.sqlite");
    write_db(path, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada');");
    LoadResult r = load_trace(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message == "not an Nsight Systems export: no StringIds table, no event table (CUPTI_ACTIVITY_KIND_*, "
                             "NVTX_EVENTS, OSRT_API, GPU_METRICS), no META_DATA_EXPORT table (its tables: people)");
  }
  SUBCASE("an export without event tables") {
    std::string path = dir.file("empty.sqlite");
    write_db(path, "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);");
    LoadResult r = load_trace(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message == "not an Nsight Systems export: no event table (CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, OSRT_API, "
                             "GPU_METRICS), no META_DATA_EXPORT table (its tables: StringIds)");
  }
  SUBCASE("event tables without StringIds: the string table is named") {
    std::string path = dir.file("nostrings.sqlite");
    write_db(path, tiny_report(false) + "DROP TABLE StringIds;");
    LoadResult r = load_trace(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message == "not an Nsight Systems export: no StringIds table (its tables: CUPTI_ACTIVITY_KIND_KERNEL, "
                             "CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME, "
                             "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, ENUM_CUDA_MEM_KIND, GPU_METRICS, META_DATA_EXPORT, ...)");
  }
  // The events are there: the report loads, and `info` says the schema version is unknown and why.
  SUBCASE("an export without META_DATA_EXPORT loads, its schema version unknown") {
    std::string path = dir.file("nometa.sqlite");
    write_db(path, tiny_report(false) + "DROP TABLE META_DATA_EXPORT;");
    LoadResult r = load_trace(path);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    CHECK(r.store->kernel_count() == 2);
    std::string info = info_text(*r.store);
    CHECK(info.find("nsys export     schema unknown, Nsight Systems unknown\n") != std::string::npos);
    CHECK(info.find("not recorded    export schema version (no META_DATA_EXPORT table)\n") != std::string::npos);
    CHECK(info_json(*r.store).find(R"("export":{"schema_version":"unknown","product_version":"unknown"})") != std::string::npos);
    CHECK(info_json(*r.store).find(R"x("missing":["export schema version (no META_DATA_EXPORT table)"])x") != std::string::npos);
  }
  SUBCASE("META_DATA_EXPORT without the schema version row") {
    std::string path = dir.file("norow.sqlite");
    write_db(path, tiny_report(false) + "DELETE FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION';");
    LoadResult r = load_trace(path);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    std::string info = info_text(*r.store);
    CHECK(info.find("nsys export     schema unknown, Nsight Systems 2024.6.2.25\n") != std::string::npos);
    CHECK(info.find("not recorded    export schema version (no EXPORT_SCHEMA_VERSION in META_DATA_EXPORT)\n") !=
          std::string::npos);
  }
  SUBCASE("an unknown schema version") {
    std::string path = dir.file("future.sqlite");
    write_db(path, tiny_report(false, "4.0.0"));
    LoadResult r = load_trace(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find("unsupported Nsight Systems export schema version 4.0.0") != std::string::npos);
  }
  SUBCASE("a table without a column it needs is skipped and named") {
    std::string path = dir.file("odd.sqlite");
    write_db(path, tiny_report(false) + "DROP TABLE OSRT_API; CREATE TABLE OSRT_API (start INTEGER, end INTEGER);"
                                        "INSERT INTO OSRT_API VALUES (1, 2);");
    LoadResult r = load_trace(path);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    CHECK(count_cat(*r.store, "os_runtime") == 0);
    CHECK(info_text(*r.store).find("unreadable      OSRT_API lacks column(s) globalTid, nameId") != std::string::npos);
  }
  SUBCASE("rows with impossible values are counted, not kept") {
    std::string path = dir.file("values.sqlite");
    write_db(path, tiny_report(false) +
                       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (9223372036854775807, 1, 0, 5, 9, 1, 0, NULL);"
                       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 5, 0, 5, 10, 1, 0, NULL);"
                       "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 0, NULL, 11, 1, 0, NULL);");
    LoadResult r = load_trace(path);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    CHECK(r.store->issues.count(IssueKind::TimestampOutOfRange) == 1);
    CHECK(r.store->issues.count(IssueKind::NegativeDuration) == 1);
    CHECK(r.store->issues.count(IssueKind::MissingField) == 1);
    CHECK(count_cat(*r.store, "cuda_runtime") == 5);
  }
  // A stand-in report loaded with nothing but the scratch folder on PATH: no `nsys` to run.
  auto load_without_nsys = [&](const std::string& path) {
    std::ofstream(path) << "not really";
    const char* old = std::getenv("PATH");
    std::string saved = old ? old : "";
    ::setenv("PATH", dir.path.c_str(), 1);
    LoadResult r = load_trace(path);
    ::setenv("PATH", saved.c_str(), 1);
    return r;
  };
  SUBCASE("a .nsys-rep without nsys on PATH names the command to run") {
    std::string path = dir.file("report1.nsys-rep");
    LoadResult r = load_without_nsys(path);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find("nsys export --type sqlite --output '" + dir.file("report1.sqlite") + "' '" + path + "'") !=
          std::string::npos);
  }
  SUBCASE("the command to run quotes a path holding a quote so that a shell reads it back") {
    LoadResult r = load_without_nsys(dir.file("it's a run.nsys-rep"));
    REQUIRE_FALSE(r.ok());
    std::string quoted = "'" + dir.path.string() + "/it'\\''s a run.nsys-rep'";
    CHECK_MESSAGE(r.error.message.find("' " + quoted) != std::string::npos, r.error.message);
  }
}

// A `.sqlite.gz` that does not load: its temporary file is removed on the error path too.
TEST_CASE("nsys: a .sqlite.gz that fails to load leaves no temporary file") {
  ScratchDir dir, tmp;
  std::string other = dir.file("other.sqlite");
  write_db(other, "CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada');");
  std::string good = dir.file("cut.sqlite");
  write_db(good, tiny_report(false));
  std::string bytes = read_file(good);
  std::ofstream(good, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size() / 2));
  REQUIRE(std::system(("gzip -n '" + other + "' '" + good + "'").c_str()) == 0);
  const char* old = std::getenv("TMPDIR");
  std::string saved = old ? old : "";
  ::setenv("TMPDIR", tmp.path.c_str(), 1);
  LoadResult foreign = load_trace(other + ".gz");
  LoadResult cut = load_trace(good + ".gz");
  old ? ::setenv("TMPDIR", saved.c_str(), 1) : ::unsetenv("TMPDIR");
  REQUIRE_FALSE(foreign.ok());
  CHECK(foreign.error.to_string() == other + ".gz: not an Nsight Systems export: no StringIds table, no event table "
                                             "(CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, OSRT_API, GPU_METRICS), no "
                                             "META_DATA_EXPORT table (its tables: people)");
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error.message.find("the file is truncated") != std::string::npos);
  CHECK(fs::is_empty(tmp.path));
}
