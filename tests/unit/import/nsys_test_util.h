// Helpers shared by the Nsight Systems importer tests: scratch folders, SQLite databases written
// from SQL, the hand-made report (nsys 2024.6 or 2025.1 schema) and a tiled corpus report.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/import/common/file_reader.h"
#include "core/import/nsys/nsys_loader.h"
#include "core/import/trace_loader.h"
#include "tests/unit/test_support.h"

namespace sl::nsys_test {

namespace fs = std::filesystem;

// A scratch folder removed at the end of the test.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "sightline-nsys-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const char* name) const { return (path / name).string(); }
};

inline void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO(sql << ": " << (error ? error : ""));
  sqlite3_free(error);
  REQUIRE(rc == SQLITE_OK);
}

inline void write_db(const std::string& path, const std::string& sql) {
  fs::remove(path);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, sql);
  sqlite3_close(db);
}

// nsys's process and thread ids as SQL text: globalPid = 1 << 40 | pid << 24; globalTid = globalPid | tid.
inline std::string global_pid(int64_t pid) { return std::to_string((int64_t(1) << 40) | (pid << 24)); }
inline std::string global_tid(int64_t pid, int64_t tid) { return std::to_string((int64_t(1) << 40) | (pid << 24) | tid); }

// The schema of nsys 2024.6 (sync has `syncType` only) or 2025.1 (`deprecatedSyncType` too),
// trimmed to the columns the loader reads, and a handful of rows with known answers:
// process 100 (thread 101 "main"), device 0 "NVIDIA Test GPU", session start 1e18 ns.
inline std::string tiny_report(bool schema_2025, const char* schema_version = "3.16.1") {
  std::string sync_columns = schema_2025 ? "deprecatedSyncType INTEGER, syncType INTEGER" : "syncType INTEGER";
  std::string sync_values = schema_2025 ? "NULL, 2" : "2";
  const std::string gpid = global_pid(100), gtid = global_tid(100, 101);
  return R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cudaMemcpyAsync_v3020'),
  (3, 'cudaStreamSynchronize_v3020'), (4, 'cuLaunchKernel'), (5, 'main'),
  (6, 'void add<float>(float*, float const*)'), (7, '_Z3addIfEvPT_PKS0_'), (8, 'add'),
  (9, 'cudaGetDeviceProperties_v2_v12000'), (10, 'step'), (11, 'read');
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', ')" + std::string(schema_version) + R"('),
  ('EXPORT_PRODUCT_VERSION', '2024.6.2.25');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1000000000000000000, '', '');
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
INSERT INTO PROCESSES VALUES ()" + gpid + R"(, 100, 'trainer');
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
INSERT INTO ThreadNames VALUES (5, 20, )" + gtid + R"();
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER,
  threadsPerWarp INTEGER, maxWarpsPerSm INTEGER, computeMajor INTEGER, computeMinor INTEGER, cuDevice INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA Test GPU', 1000, 132, 32, 64, 9, 0, 0);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES
  (1000, 1500, 0, )" + gtid + R"(, 1, 1, 0, NULL),
  (2000, 2600, 0, )" + gtid + R"(, 2, 2, 0, NULL),
  (3000, 9000, 0, )" + gtid + R"(, 3, 3, 0, NULL),
  (9500, 9700, 1, )" + gtid + R"(, 4, 4, 0, NULL),
  (9800, 9900, 0, )" + gtid + R"(, 5, 9, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER, shortName INTEGER, mangledName INTEGER, launchType INTEGER, registersPerThread INTEGER,
  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,
  staticSharedMemory INTEGER, dynamicSharedMemory INTEGER, graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
  (1600, 2100, 0, 1, 0, 7, 1, )" + gpid + R"(, 6, 8, 7, 0, 32, 64, 2, 1, 256, 1, 1, 1024, 2048, NULL),
  (9750, 9990, 0, 1, 0, 7, 4, )" + gpid + R"(, 6, 8, 7, 0, 32, 1, 1, 1, 32, 1, 1, 0, 0, 17);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER, copyKind INTEGER, srcKind INTEGER, dstKind INTEGER, graphNodeId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (2700, 4700, 0, 1, 0, 7, 2, )" + gpid + R"(, 4000, 2, 2, 1, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  value INTEGER, bytes INTEGER, graphNodeId INTEGER, memKind INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (4800, 4900, 0, 1, 0, 7, NULL, )" + gpid + R"(, 0, 100, NULL, 2);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  )" + sync_columns + R"(, eventId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES
  (4000, 8900, 0, 1, NULL, 7, 3, )" + gpid + ", " + sync_values + R"(, 4294967295);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER,
  domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER,
  int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (0, NULL, 75, 'trainer', )" + gtid + R"(, 3);
INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, color, int64Value)
  VALUES (900, 9950, 59, 10, )" + gtid + R"(, 4294901760, 42);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (2500, NULL, 34, 'mark', )" + gtid + R"(, 3);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (1200, 8000, 60, 'load', )" + gtid + R"(, 3);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (9960, NULL, 59, 'unclosed', )" + gtid + R"();
CREATE TABLE OSRT_API (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER, returnValue INTEGER, nestingLevel INTEGER, callchainId INTEGER);
INSERT INTO OSRT_API VALUES (9100, 9400, 27, )" + gtid + R"(, 0, 11, 4096, 0, NULL);
CREATE TABLE TARGET_INFO_GPU_METRICS (typeId INTEGER, sourceId INTEGER, typeName TEXT, metricId INTEGER, metricName TEXT);
INSERT INTO TARGET_INFO_GPU_METRICS VALUES (65536, 0, 'GH100', 1, 'SM Active [Throughput %]'), (65536, 0, 'GH100', 2, 'DRAM Read Bandwidth [Throughput %]');
CREATE TABLE GPU_METRICS (timestamp INTEGER, typeId INTEGER, metricId INTEGER, value INTEGER);
INSERT INTO GPU_METRICS VALUES (1000, 65536, 1, 10), (1000, 65536, 2, 3), (2000, 65536, 1, 55), (2000, 65536, 2, 7), (3000, 65536, 1, 0);
CREATE TABLE SCHED_EVENTS (start INTEGER NOT NULL, cpu INTEGER, isSchedIn INTEGER, globalTid INTEGER);
INSERT INTO SCHED_EVENTS VALUES (5, 0, 1, )" + gtid + R"(), (6, 0, 0, )" + gtid + R"();
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER, name TEXT, label TEXT);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES (0, 'PAGEABLE', 'Pageable');
)";
}

inline std::unique_ptr<TraceStore> load_tiny(const ScratchDir& dir, bool schema_2025) {
  std::string path = dir.file(schema_2025 ? "tiny2025.sqlite" : "tiny.sqlite");
  write_db(path, tiny_report(schema_2025));
  REQUIRE(nsys_file_kind(path) == NsysFileKind::Sqlite);
  LoadResult r = load_trace(path);
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  return std::move(r.store);
}

inline uint64_t count_cat(const TraceStore& s, std::string_view cat) {
  uint64_t n = 0;
  StringId id = s.strings.find(cat);
  for (const Track& t : s.tracks)
    for (StringId c : t.slices.cat) n += c == id;
  return n;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// xent's runtime and kernel tables tiled as tests/bench/make_big_nsys.py does, small: enough
// rows for a three-level b-tree (~60k runtime rows) in a few MB.
inline std::string tiled_xent(const ScratchDir& dir, int runtime_tiles, int kernel_tiles) {
  FileBytes bytes = read_trace_file((test::shared_dir() / "corpus" / "fuser_nsys_h200_xent.sqlite.gz").string(), {});
  REQUIRE(bytes.buffer);
  std::string path = dir.file("tiled.sqlite");
  std::ofstream(path, std::ios::binary) << bytes.buffer->view();
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  for (auto [table, tiles] : {std::pair<const char*, int>{"CUPTI_ACTIVITY_KIND_RUNTIME", runtime_tiles},
                              {"CUPTI_ACTIVITY_KIND_KERNEL", kernel_tiles}}) {
    std::string select;
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, ("SELECT name FROM pragma_table_info('" + std::string(table) + "')").c_str(), -1,
                               &st, nullptr) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string c = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      select += select.empty() ? "" : ", ";
      select += c == "start" || c == "end"   ? "\"" + c + "\" + k.i * 8000000000"
                : c == "correlationId" ? c + " + k.i * 2300"
                                       : "\"" + c + "\"";
    }
    sqlite3_finalize(st);
    exec(db, "CREATE TEMP TABLE base AS SELECT * FROM " + std::string(table) +
                 "; WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < " +
                 std::to_string(tiles - 1) + ") INSERT INTO " + table + " SELECT " + select +
                 " FROM base, k; DROP TABLE base;");
  }
  sqlite3_close(db);
  return path;
}

}  // namespace sl::nsys_test
