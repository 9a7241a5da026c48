// Nsight Systems SQLite exports: a hand-made report built here with the SQLite API (so a plain
// clone tests itself), broken files, and the three corpus reports against independent SQL counts.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "core/analysis/common.h"
#include "core/diff/trace_diff.h"
#include "core/file_reader.h"
#include "core/nsys_btree.h"
#include "core/nsys_loader.h"
#include "core/snapshot.h"
#include "core/snapshot_cache.h"
#include "core/trace_info.h"
#include "core/track_names.h"
#include "figures/timeline_figure.h"
#include "test_support.h"

using namespace sl;
namespace fs = std::filesystem;

namespace {

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

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  INFO(sql << ": " << (error ? error : ""));
  sqlite3_free(error);
  REQUIRE(rc == SQLITE_OK);
}

void write_db(const std::string& path, const std::string& sql) {
  fs::remove(path);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, sql);
  sqlite3_close(db);
}

// nsys's process and thread ids as SQL text: globalPid = 1 << 40 | pid << 24; globalTid = globalPid | tid.
std::string global_pid(int64_t pid) { return std::to_string((int64_t(1) << 40) | (pid << 24)); }
std::string global_tid(int64_t pid, int64_t tid) { return std::to_string((int64_t(1) << 40) | (pid << 24) | tid); }

// The schema of nsys 2024.6 (sync has `syncType` only) or 2025.1 (`deprecatedSyncType` too),
// trimmed to the columns the loader reads, and a handful of rows with known answers:
// process 100 (thread 101 "main"), device 0 "NVIDIA Test GPU", session start 1e18 ns.
std::string tiny_report(bool schema_2025, const char* schema_version = "3.16.1") {
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

std::unique_ptr<TraceStore> load_tiny(const ScratchDir& dir, bool schema_2025) {
  std::string path = dir.file(schema_2025 ? "tiny2025.sqlite" : "tiny.sqlite");
  write_db(path, tiny_report(schema_2025));
  REQUIRE(nsys_file_kind(path) == NsysFileKind::Sqlite);
  LoadResult r = load_trace(path);
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  return std::move(r.store);
}

uint64_t count_cat(const TraceStore& s, std::string_view cat) {
  uint64_t n = 0;
  StringId id = s.strings.find(cat);
  for (const Track& t : s.tracks)
    for (StringId c : t.slices.cat) n += c == id;
  return n;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("nsys: a hand-made report maps every kind of row") {
  ScratchDir dir;
  for (bool schema_2025 : {false, true}) {
    CAPTURE(schema_2025);
    auto s = load_tiny(dir, schema_2025);
    CHECK(s->meta.format == "nsys-sqlite");
    // 5 runtime/driver + 2 kernels + 1 memcpy + 1 memset + 1 sync + 4 NVTX events + 1 OS runtime
    // + 5 GPU metric samples.
    CHECK(s->counts.events == 20);
    CHECK(s->counts.counters == 5);
    REQUIRE(s->counters.size() == 2);
    const CounterSeries& sm = s->counters[0];
    CHECK(s->strings.view(sm.name) == "SM Active [Throughput %]");
    CHECK(sm.ts == std::vector<TimeNs>{100, 1100, 2100});
    CHECK(sm.value == std::vector<double>{10, 55, 0});
    CHECK(s->strings.view(s->processes[sm.process].name) == "GPU metrics: GH100");
    CHECK(s->counts.metadata == 1);  // the domain's name
    CHECK(s->kernel_count() == 2);
    CHECK(s->gpu_activity_count() == 5);
    CHECK(count_cat(*s, "cuda_runtime") == 4);
    CHECK(count_cat(*s, "cuda_driver") == 1);
    CHECK(count_cat(*s, "gpu_memcpy") == 1);
    CHECK(count_cat(*s, "gpu_memset") == 1);
    CHECK(count_cat(*s, "cuda_sync") == 1);
    CHECK(count_cat(*s, "user_annotation") == 3);  // push/pop, start/end, the unclosed one
    CHECK(count_cat(*s, "os_runtime") == 1);
    CHECK(s->issues.count(IssueKind::BeginWithoutEnd) == 1);
    // Times: exact integer ns, session start + row time, rebased to the earliest (the NVTX range at 900).
    CHECK(s->origin_ns == 1000000000000000900);
    SliceRef launch = test::find_slice(*s, "cudaLaunchKernel");  // "_v7000" stripped
    REQUIRE(launch.valid());
    CHECK(s->start(launch) == 100);
    CHECK(s->dur(launch) == 500);
    CHECK(test::find_slice(*s, "cudaGetDeviceProperties_v2").valid());  // only the version suffix goes
    // The kernel: demangled name, Kineto's args, its launch by correlation and an ac2g flow.
    SliceRef kernel = test::find_slice(*s, "void add<float>(float*, float const*)");
    REQUIRE(kernel.valid());
    CHECK(s->is_gpu(kernel));
    CHECK(s->start(kernel) == 700);
    CHECK(s->dur(kernel) == 500);
    CHECK(s->launch_of(kernel) == launch);
    CHECK(s->slice_args_json(kernel) ==
          R"({"device":0,"context":1,"stream":7,"correlation":1,"registers per thread":32,"shared memory":3072,)"
          R"("grid":[64,2,1],"block":[256,1,1],"static shared memory":1024,"dynamic shared memory":2048,)"
          R"("local memory per thread":0,"local memory total":0,"launch type":0})");
    CHECK(s->flows_from(launch).size() == 1);
    const Track& stream = s->tracks[kernel.track];
    CHECK(stream.device == 0);
    CHECK(stream.stream == 7);
    CHECK(s->strings.view(stream.name) == "stream 7");
    CHECK(s->strings.view(s->processes[stream.process].name) == "NVIDIA Test GPU");
    // The driver launch's kernel links to cuLaunchKernel; it carries its graph node.
    SliceRef driver = test::find_slice(*s, "cuLaunchKernel");
    REQUIRE(driver.valid());
    auto driven = s->activities_of(driver);
    REQUIRE(driven.size() == 1);
    CHECK(s->slice_args_json(driven[0]).find(R"("graph node id":17)") != std::string_view::npos);
    // Copies and sets are named as Kineto names them, with the bandwidth in GB/s (bytes per ns).
    SliceRef copy = test::find_slice(*s, "Memcpy DtoH (Device -> Pinned)");
    REQUIRE(copy.valid());
    CHECK(s->slice_args_json(copy) ==
          R"j({"device":0,"context":1,"stream":7,"correlation":2,"bytes":4000,"memory bandwidth (GB/s)":2})j");
    CHECK(s->name(s->launch_of(copy)) == "cudaMemcpyAsync");
    SliceRef set = test::find_slice(*s, "Memset (Device)");
    REQUIRE(set.valid());
    CHECK_FALSE(s->launch_of(set).valid());  // no correlation id
    // The sync is named by its API call, whatever the version numbered it.
    SliceRef sync = test::find_slice(*s, "Stream Sync");
    REQUIRE(sync.valid());
    CHECK(s->name(s->launch_of(sync)) == "cudaStreamSynchronize");
    // NVTX: the push/pop range by its textId, with colour and payload; the mark in its domain.
    SliceRef step = test::find_slice(*s, "step");
    REQUIRE(step.valid());
    CHECK(s->slice_args_json(step) == R"({"color":"#ff0000","payload":42})");
    CHECK(s->strings.view(s->tracks[step.track].name) == "main");
    CHECK(s->strings.view(s->processes[s->tracks[step.track].process].name) == "trainer");
    CHECK(s->is_gpu(launch) == false);
    CHECK(launch.track == step.track);
    SliceRef load = test::find_slice(*s, "load");
    REQUIRE(load.valid());
    CHECK(s->tracks[load.track].kind == TrackKind::Async);
    CHECK(s->strings.view(s->tracks[load.track].name) == "NVTX trainer");
    CHECK(s->slice_args_json(load) == R"({"domain":"trainer"})");
    const InstantColumns& marks = s->tracks[step.track].instants;
    REQUIRE(marks.size() == 1);
    CHECK(s->strings.view(marks.name[0]) == "mark");
    // The GPU description, with Kineto's keys.
    REQUIRE(s->meta.devices.size() == 1);
    CHECK(s->meta.devices[0].name == "NVIDIA Test GPU");
    CHECK(s->meta.devices[0].properties_json.find(R"("numSms":132)") != std::string::npos);
    CHECK(s->meta.devices[0].properties_json.find(R"("maxThreadsPerMultiprocessor":2048)") != std::string::npos);
    // Unmapped tables and missing content are said in `info`, never dropped silently.
    std::string info = info_text(*s);
    CHECK(info.find("not mapped      SCHED_EVENTS (2 rows)") != std::string::npos);
    CHECK(info.find("not recorded    GPU descriptions") == std::string::npos);
    CHECK(info_json(*s).find(R"("nsys":{"export":{"schema_version":"3.16.1")") != std::string::npos);
  }
}

TEST_CASE("nsys: progress names each table, and cancelling stops the load") {
  ScratchDir dir;
  std::string path = dir.file("tiny.sqlite");
  write_db(path, tiny_report(false));
  std::vector<std::string> phases;
  uint64_t last_done = 0, total = 0;
  bool monotonic = true;
  LoadOptions options;
  options.on_progress = [&](const LoadProgress& p) {
    phases.emplace_back(p.phase);
    monotonic &= p.bytes_done >= last_done && p.bytes_done <= p.bytes_total;
    last_done = p.bytes_done;
    total = p.bytes_total;
  };
  LoadResult r = load_trace(path, options);
  REQUIRE(r.ok());
  CHECK(monotonic);
  CHECK(total == fs::file_size(path));
  CHECK(std::find(phases.begin(), phases.end(), "CUPTI_ACTIVITY_KIND_KERNEL") != phases.end());
  CHECK(std::find(phases.begin(), phases.end(), "NVTX_EVENTS") != phases.end());
  std::atomic<bool> cancel{true};
  LoadOptions cancelling;
  cancelling.cancel = &cancel;
  LoadResult c = load_trace(path, cancelling);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error.cancelled);
}

TEST_CASE("nsys: HTA mode reads an Nsight report as if Kineto had written it") {
  ScratchDir dir;
  auto s = load_tiny(dir, false);
  CHECK_FALSE(s->meta.hta.from_text);  // no file text: rank from the metadata, not a regex over args
  analysis::TableOptions options;
  options.mode = analysis::Mode::Hta;
  analysis::EventTable hta = analysis::build_table(*s, options);
  analysis::EventTable own = analysis::build_table(*s, {});
  CHECK(hta.rounded);  // ns timestamps are fractional µs: HTA's ceil/floor rule applies
  CHECK(hta.gpu.size() == 5);  // kernels, copy, set and sync: args.stream is 7 on each
  CHECK(own.gpu.size() == 5);
  CHECK(hta.cpu.size() == own.cpu.size());
}

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

// The corpus reports against counts taken with plain SQL on the same file.
TEST_CASE("nsys: corpus reports match independent SQL counts") {
  if (!test::have_shared()) return;
  struct Expected {
    const char* name;
    uint64_t kernels, memcpy, api, nvtx;
  };
  for (Expected e : {Expected{"fuser_nsys_h200_electsync", 19, 1, 968, 652},
                     Expected{"fuser_nsys_h200_regsteal", 19, 1, 968, 652},
                     Expected{"fuser_nsys_h200_xent", 18, 3, 990, 13513}}) {
    CAPTURE(e.name);
    std::string path = (test::shared_dir() / "corpus" / (std::string(e.name) + ".sqlite.gz")).string();
    LoadResult r = load_trace(path);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    const TraceStore& s = *r.store;
    // The same numbers from SQL on the decompressed bytes.
    FileBytes bytes = read_trace_file(path, {});
    REQUIRE(bytes.buffer);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(":memory:", &db) == SQLITE_OK);
    std::string copy(bytes.buffer->view());
    REQUIRE(sqlite3_deserialize(db, "main", reinterpret_cast<unsigned char*>(copy.data()), sqlite3_int64(copy.size()),
                                sqlite3_int64(copy.size()), SQLITE_DESERIALIZE_READONLY) == SQLITE_OK);
    auto count = [&](const char* sql) {
      sqlite3_stmt* st = nullptr;
      REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      uint64_t n = uint64_t(sqlite3_column_int64(st, 0));
      sqlite3_finalize(st);
      return n;
    };
    CHECK(count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL") == e.kernels);
    CHECK(count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY") == e.memcpy);
    CHECK(count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME") == e.api);
    CHECK(count("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60)") == e.nvtx);
    CHECK(s.kernel_count() == e.kernels);
    CHECK(count_cat(s, "gpu_memcpy") == e.memcpy);
    CHECK(count_cat(s, "cuda_runtime") + count_cat(s, "cuda_driver") == e.api);
    CHECK(count_cat(s, "user_annotation") == e.nvtx);
    CHECK(count_cat(s, "gpu_memset") == count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET"));
    CHECK(count_cat(s, "cuda_sync") == count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"));
    CHECK(s.counts.events == e.kernels + e.api + e.nvtx + count_cat(s, "gpu_memcpy") + count_cat(s, "gpu_memset") +
                                 count_cat(s, "cuda_sync"));
    // A kernel's launch is the API call with the same correlation id (in the same process).
    uint64_t linked = 0;
    for (uint32_t t = 0; t < s.tracks.size(); ++t) {
      const SliceColumns& c = s.tracks[t].slices;
      for (uint32_t i = 0; i < c.size(); ++i) {
        SliceRef k{t, i};
        if (s.cat(k) != "kernel") continue;
        SliceRef launch = s.launch_of(k);
        REQUIRE(launch.valid());
        std::string sql = "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON "
                          "r.correlationId = k.correlationId AND (r.globalTid >> 24) = (k.globalPid >> 24) JOIN "
                          "StringIds s ON s.id = r.nameId WHERE k.start = " +
                          std::to_string(s.origin_ns + s.start(k) - 0) + " - (SELECT utcEpochNs FROM "
                          "TARGET_INFO_SESSION_START_TIME)";
        sqlite3_stmt* st = nullptr;
        REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
        REQUIRE(sqlite3_step(st) == SQLITE_ROW);
        std::string api = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        CHECK(api.starts_with(std::string(s.name(launch))));
        ++linked;
      }
    }
    CHECK(linked == e.kernels);
    sqlite3_close(db);
  }
}

// The corpus pair (the same nvFuser benchmark at two commits): `diff` works on Nsight reports.
TEST_CASE("nsys: diff of the electsync and regsteal reports") {
  if (!test::have_shared()) return;
  auto load = [](const char* name) {
    LoadResult r = load_trace((test::shared_dir() / "corpus" / name).string());
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    return std::move(r.store);
  };
  auto a = load("fuser_nsys_h200_electsync.sqlite.gz");
  auto b = load("fuser_nsys_h200_regsteal.sqlite.gz");
  diff::TraceDiff d = diff::trace_diff(*a, *b, {});
  REQUIRE(d.aligned);
  CHECK(d.aligned->matched_fraction == doctest::Approx(1.0));
  CHECK(d.ops.rows.size() == 118);
  // The nvFuser kernel the two commits generate differently: 132.511 µs → 124.702 µs.
  auto kernel = std::find_if(d.ops.rows.begin(), d.ops.rows.end(),
                             [](const diff::OpsDiffRow& r) { return r.name.starts_with("<unnamed>::nvfuser_none_f0_c0_r0_g0"); });
  REQUIRE(kernel != d.ops.rows.end());
  CHECK(kernel->control_total == 132511);
  CHECK(kernel->test_total == 124702);
  CHECK(kernel->diff_count() == 0);
}

// `render` draws an Nsight report like any trace: the committed report (a plain clone has it).
TEST_CASE("nsys: the timeline figure of a report") {
  LoadResult r = load_trace(test::test_data("fuser_nsys_h200_electsync.sqlite.gz"));
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  fig::Style style = fig::make_style(fig::FigureTheme::Paper, 1200);
  fig::Scene scene;
  fig::TimelineFigureStats stats;
  std::string error;
  REQUIRE(fig::timeline_figure(*r.store, nullptr, style, {}, scene, stats, error));
  CHECK(stats.tracks >= 2);
  auto has_text = [&](std::string_view text) {
    return std::any_of(scene.items.begin(), scene.items.end(),
                       [&](const fig::Item& i) { return i.kind == fig::Item::Text && i.text.find(text) != std::string::npos; });
  };
  CHECK(has_text("stream 7"));
  CHECK(has_text("NVIDIA H200"));
}

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

// ---------------------------------------------------------------- the direct b-tree reader

namespace {

// Loads with SQLite's API only (SIGHTLINE_NSYS_READER=sqlite) or with the direct reader.
LoadResult load_with(const std::string& path, bool direct) {
  if (!direct) ::setenv("SIGHTLINE_NSYS_READER", "sqlite", 1);
  LoadResult r = load_trace(path);
  ::unsetenv("SIGHTLINE_NSYS_READER");
  return r;
}

// Both readers give the same store, byte for byte in its snapshot.
void check_same_store(const std::string& path) {
  CAPTURE(path);
  LoadResult api = load_with(path, false), direct = load_with(path, true);
  REQUIRE_MESSAGE(api.ok(), api.error.to_string());
  REQUIRE_MESSAGE(direct.ok(), direct.error.to_string());
  CHECK(direct.store->counts.events == api.store->counts.events);
  CHECK(direct.store->kernel_count() == api.store->kernel_count());
  CHECK(snapshot_bytes(*direct.store) == snapshot_bytes(*api.store));
}

// xent's runtime and kernel tables tiled as tests/bench/make_big_nsys.py does, small: enough
// rows for a three-level b-tree (~60k runtime rows) in a few MB.
std::string tiled_xent(const ScratchDir& dir, int runtime_tiles, int kernel_tiles) {
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

// The table's root page, for TableReader.
int64_t root_page(const std::string& path, const char* table) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  std::string sql = "SELECT rootpage FROM sqlite_master WHERE name = '" + std::string(table) + "'";
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  int64_t root = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return root;
}

}  // namespace

TEST_CASE("nsys: the direct reader and SQLite's API give identical stores") {
  ScratchDir dir;
  for (bool schema_2025 : {false, true}) {
    std::string path = dir.file(schema_2025 ? "tiny2025.sqlite" : "tiny.sqlite");
    write_db(path, tiny_report(schema_2025));
    check_same_store(path);
  }
  // A kernel row too big for its page (overflow pages, the wanted columns after the spill), a
  // REAL in an integer column (the direct reader stops there, SQLite's API goes on), a table
  // whose records predate a column (ALTER TABLE ADD COLUMN: NULL), an INTEGER PRIMARY KEY.
  std::string big = dir.file("overflow.sqlite");
  write_db(big, tiny_report(false) + R"(
ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN padding TEXT;
ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN launchType2 INTEGER;
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET padding = printf('%.*c', 20000, 'x') WHERE correlationId = 4;
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
  demangledName, gridX) SELECT 9991, 9995, 0, 1, 7, 5, globalPid, 6, 2.5 FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1;
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,
  demangledName) SELECT 9996, 9998, 0, 1, 7, 5, globalPid, 6 FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1;
)");
  check_same_store(big);
  // 6000 kernels of a few dozen launch shapes taking turns (grid, block, registers, graph node,
  // a correlation id or none), over several batches and args blocks, and a row skipped for its
  // time among them: the direct reader writes most of their args as repeats of an earlier
  // kernel's record (ArgsBlocks::append_repeat), SQLite's API each in full; the text is the same.
  std::string shapes = dir.file("shapes.sqlite");
  write_db(shapes, tiny_report(false) + R"(
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 6000)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT 10000 + i * 100, 10050 + i * 100, 0, 1, 0, 7 + i % 2,
  CASE WHEN i % 17 = 0 THEN NULL ELSE 1000 + i END, globalPid, 6, 8, 7, 0, 32 + i % 3 * 8, 1 + i % 5, 1, 1,
  32 * (1 + i / 7 % 3), 1, 1, 1024, i % 4 * 512, CASE WHEN i % 6 = 0 THEN NULL ELSE i % 4 END
FROM k, (SELECT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1);
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 9000000000000000000 WHERE correlationId = 1500;
)");
  check_same_store(shapes);
  LoadResult shaped = load_with(shapes, true);
  REQUIRE(shaped.ok());
  CHECK(shaped.store->kernel_count() == 2 + 6000 - 1);
  CHECK(shaped.store->issues.count(IssueKind::TimestampOutOfRange) == 1);
  if (!test::have_shared()) return;
  for (const char* name : {"fuser_nsys_h200_electsync", "fuser_nsys_h200_regsteal", "fuser_nsys_h200_xent"})
    check_same_store((test::shared_dir() / "corpus" / (std::string(name) + ".sqlite.gz")).string());
  check_same_store(tiled_xent(dir, 60, 100));
}

// TableReader on its own: the rows of a multi-level tree equal a SELECT's, in the same order.
TEST_CASE("nsys: the direct reader decodes every row of a three-level b-tree") {
  if (!test::have_shared()) return;
  ScratchDir dir;
  std::string path = tiled_xent(dir, 60, 2);
  std::string image = read_file(path);
  nsys::TableReader reader(image, "CUPTI_ACTIVITY_KIND_RUNTIME", root_page(path, "CUPTI_ACTIVITY_KIND_RUNTIME"),
                           {0, 1, 4, 7, 99});  // start, end, correlationId, callchainId, a column it lacks
  REQUIRE_MESSAGE(reader.open(), reader.why());
  CHECK(reader.leaf_count() > 300);
  nsys::RowBatch batch;
  batch.columns = 5;
  reader.decode(0, reader.leaf_count(), batch);
  REQUIRE_MESSAGE(batch.stop.empty(), batch.stop);
  REQUIRE(batch.rows() == 990 * 60);
  // Rowids without gaps: the bound from the first and last leaves is the leaves' count.
  CHECK(reader.row_count() == 990 * 60);
  CHECK(reader.row_bound() == 990 * 60);
  // Decoded in the background, on one thread or two, in batches of 3 leaves: the same rows in
  // the same order, each batch prepared on its decoding thread (here: a row's start, noted).
  // The consumer, quick here, decodes batches itself while it waits for the next one.
  for (size_t threads : {1, 2}) {
    CAPTURE(threads);
    std::vector<int64_t> rows;
    size_t prepared = 0, batches = 0;
    std::atomic<size_t> decoded_by_consumer{0};
    const std::thread::id consumer = std::this_thread::get_id();
    nsys::BackgroundDecoding how;
    how.threads = threads;
    how.prepare = [&](nsys::RowBatch& b) {
      decoded_by_consumer += std::this_thread::get_id() == consumer;
      b.prepared.assign(b.rows(), 'p');
      b.prepared_rows.resize(b.rows());
      for (size_t i = 0; i < b.rows(); ++i) b.prepared_rows[i] = {uint32_t(i + 1), 1, uint32_t(b.values[i * 5])};
    };
    std::string stop = nsys::decode_in_background(reader, 5, 3, [&](const nsys::RowBatch& b) {
      ++batches;
      for (size_t i = 0; i < b.rows(); ++i) {
        nsys::BatchRow row{&b.values[i * 5], &b.present[i * 5], &b, i};
        rows.insert(rows.end(), row.v, row.v + 5);
        prepared += row.prepared() && row.prepared()->text == uint32_t(row.i64(0)) && row.prepared_bytes() == "p";
      }
      return true;
    }, how);
    CHECK(stop.empty());
    CHECK(batches == (reader.leaf_count() + 2) / 3);
    if (threads == 1) CHECK(decoded_by_consumer > 0);  // it would have waited ~100 times otherwise
    REQUIRE(rows.size() == 5 * batch.rows());
    CHECK(std::equal(rows.begin(), rows.end(), batch.values.begin()));
    CHECK(prepared == batch.rows());
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT start, end, correlationId, callchainId, rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME",
                             -1, &st, nullptr) == SQLITE_OK);
  size_t row = 0, mismatches = 0;
  for (; sqlite3_step(st) == SQLITE_ROW; ++row) {
    for (int c = 0; c < 4; ++c) {
      bool null = sqlite3_column_type(st, c) == SQLITE_NULL;
      mismatches += batch.present[row * 5 + c] == null || batch.values[row * 5 + c] != sqlite3_column_int64(st, c);
    }
    mismatches += batch.present[row * 5 + 4] != 0;
  }
  CHECK(row == batch.rows());
  CHECK(mismatches == 0);
  sqlite3_reset(st);
  int64_t last = 0;
  while (sqlite3_step(st) == SQLITE_ROW) last = sqlite3_column_int64(st, 4);
  CHECK(batch.last_rowid == last);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Integers of every stored width (1, 2, 3, 4, 6, 8 bytes, 0 and 1 as types 8 and 9), both signs,
// in the middle of a record (read with one 8-byte load) and at its end (byte by byte).
TEST_CASE("nsys: the direct reader decodes integers of every width and sign") {
  ScratchDir dir;
  std::string path = dir.file("widths.sqlite");
  std::string sql = "CREATE TABLE t (a INTEGER, b INTEGER, pad INTEGER, c INTEGER);";
  const int64_t widths[] = {0, 1, -1, 127, -128, 128, 32767, -32768, 32768, 8388607, -8388608, 8388608,
                            2147483647, -2147483648LL, 2147483648LL, 140737488355327LL, -140737488355328LL,
                            140737488355328LL, INT64_MAX, INT64_MIN + 1};
  // Each value twice mid-record (8 bytes of `pad` follow) and once as the record's last value.
  for (int64_t v : widths)
    sql += "INSERT INTO t VALUES (" + std::to_string(v) + ", " + std::to_string(v) + ", 9223372036854775807, 7);" +
           "INSERT INTO t VALUES (5, 6, 0, " + std::to_string(v) + ");";
  write_db(path, sql);
  std::string image = read_file(path);
  nsys::TableReader reader(image, "t", root_page(path, "t"), {0, 1, 3});
  REQUIRE_MESSAGE(reader.open(), reader.why());
  CHECK(reader.row_count() == 2 * std::size(widths));
  nsys::RowBatch batch;
  batch.columns = 3;
  reader.decode(0, reader.leaf_count(), batch);
  REQUIRE_MESSAGE(batch.stop.empty(), batch.stop);
  REQUIRE(batch.rows() == 2 * std::size(widths));
  for (size_t i = 0; i < std::size(widths); ++i) {
    CAPTURE(widths[i]);
    CHECK(batch.values[6 * i] == widths[i]);
    CHECK(batch.values[6 * i + 1] == widths[i]);
    CHECK(batch.values[6 * i + 2] == 7);
    CHECK(batch.values[6 * i + 5] == widths[i]);
    CHECK(batch.present[6 * i + 5] == 1);
  }
  // One batch: decoded by the consumer, no thread started (a thread adds its CPU time).
  REQUIRE(reader.leaf_count() <= 64);
  double thread_seconds = 0;
  nsys::BackgroundDecoding how;
  how.threads = 2;
  how.cpu_seconds = &thread_seconds;
  size_t rows = 0;
  std::string stop = nsys::decode_in_background(reader, 3, 64, [&](const nsys::RowBatch& b) {
    rows += b.rows();
    return true;
  }, how);
  CHECK(stop.empty());
  CHECK(rows == 2 * std::size(widths));
  CHECK(thread_seconds == 0);
}

// TEXT and REAL columns (NVTX ranges' names and payloads): the values SQLite's API gives, row for
// row. Short text has a one-byte serial type (the plain path), longer text a varint one (the
// general path), and text past the page spills to overflow pages; a REAL column holds integral
// values as integers. A value of another kind than its column's stops the reader, naming it.
TEST_CASE("nsys: the direct reader reads TEXT and REAL columns as SQLite's API does") {
  ScratchDir dir;
  std::string path = dir.file("kinds.sqlite");
  write_db(path, R"(
CREATE TABLE t (n INTEGER, s TEXT, r REAL, x);
INSERT INTO t VALUES (1, 'load', 2.5, 7), (2, '', -0.125, 7), (3, NULL, NULL, 7), (4, 'ñ→✓ utf-8', 3, 7),
  (5, printf('%.*c', 300, 'm'), 1e300, 7), (6, printf('%.*c', 20000, 'o'), -7, 7), (7, 'last', 0.1, 7);
)");
  std::string image = read_file(path);
  using K = nsys::ValueKind;
  nsys::TableReader reader(image, "t", root_page(path, "t"), {});
  REQUIRE_MESSAGE(reader.open(), reader.why());
  reader.select({0, 1, 2}, {K::Integer, K::Text, K::Real});
  nsys::RowBatch batch;
  batch.columns = 3;
  reader.decode(0, reader.leaf_count(), batch);
  REQUIRE_MESSAGE(batch.stop.empty(), batch.stop);
  REQUIRE(batch.rows() == 7);
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT n, s, r FROM t", -1, &st, nullptr) == SQLITE_OK);
  for (size_t i = 0; sqlite3_step(st) == SQLITE_ROW; ++i) {
    CAPTURE(i);
    nsys::BatchRow row{&batch.values[i * 3], &batch.present[i * 3], &batch, i};
    CHECK(row.i64(0) == sqlite3_column_int64(st, 0));
    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    CHECK(row.null(1) == (text == nullptr));
    CHECK(row.text(1) == std::string_view(text ? text : "", size_t(sqlite3_column_bytes(st, 1))));
    CHECK(row.null(2) == (sqlite3_column_type(st, 2) == SQLITE_NULL));
    CHECK(row.f64(2) == sqlite3_column_double(st, 2));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK(batch.present[3 * 3 + 2] == nsys::RowBatch::kInteger);  // 3 in the REAL column, stored as an integer
  CHECK(nsys::BatchRow{&batch.values[15], &batch.present[15], &batch, 5}.text(1).size() == 20000);

  // Another kind than the column's: stopped at that row, the rows before it kept.
  auto stop_of = [&](std::vector<int> columns, std::vector<K> kinds) {
    reader.select(columns, kinds);
    nsys::RowBatch b;
    b.columns = columns.size();
    reader.decode(0, reader.leaf_count(), b);
    return std::pair(b.rows(), b.stop);
  };
  auto [rows, stop] = stop_of({3}, {K::Text});
  CHECK(rows == 0);
  CHECK(stop.find("an integer value in column 3 (text only here)") != std::string::npos);
  std::tie(rows, stop) = stop_of({1}, {K::Integer});
  CHECK(stop.find("a TEXT value in column 1 (integers only here)") != std::string::npos);
  std::tie(rows, stop) = stop_of({0, 2}, {K::Integer, K::Integer});
  CHECK(rows == 0);
  CHECK(stop.find("a REAL value in column 2 (integers only here)") != std::string::npos);
  std::tie(rows, stop) = stop_of({1}, {K::Real});
  CHECK(rows == 0);
  CHECK(stop.find("a TEXT value in column 1 (numbers only here)") != std::string::npos);

  // Text stored as UTF-16: SQLite converts it; the direct reader leaves it to SQLite.
  std::string utf16 = dir.file("utf16.sqlite");
  write_db(utf16, "PRAGMA encoding = 'UTF-16le'; CREATE TABLE t (s TEXT); INSERT INTO t VALUES ('a');");
  std::string image16 = read_file(utf16);
  nsys::TableReader reader16(image16, "t", root_page(utf16, "t"), {});
  REQUIRE(reader16.open());
  reader16.select({0}, {K::Text});
  nsys::RowBatch b16;
  b16.columns = 1;
  reader16.decode(0, reader16.leaf_count(), b16);
  CHECK(b16.rows() == 0);
  CHECK(b16.stop == "t: text stored as UTF-16 (encoding 2)");
}

// NVTX ranges, OS runtime calls and GPU metrics through the direct reader: names of every length,
// payloads of every kind, a BLOB where a name should be and a REAL among a metric's integers (the
// reader stops there, SQLite's API goes on) give the store SQLite's API gives; so does a report
// whose text is UTF-16.
TEST_CASE("nsys: NVTX, OS runtime and GPU metrics read directly give the store SQLite's API gives") {
  ScratchDir dir;
  const std::string gtid = global_tid(100, 101);
  std::string more = R"(
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, doubleValue) VALUES (3000, 3100, 59, 'ñ→✓', )" + gtid + R"(, 0.25);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, floatValue) VALUES (3200, 3300, 59, printf('%.*c', 300, 'n'), )" + gtid + R"(, -1.5);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, doubleValue) VALUES (3400, 3500, 59, printf('%.*c', 9000, 'o'), )" + gtid + R"(, 4);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (0, NULL, 75, '', )" + gtid + R"(, 4);
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (3600, 3700, 59, 'in an unnamed domain', )" + gtid + R"(, 4);
INSERT INTO OSRT_API VALUES (9500, 9600, 27, )" + gtid + R"(, 0, 11, NULL, 0, NULL);
INSERT INTO GPU_METRICS VALUES (4000, 65536, 2, 2.5), (5000, 65536, 1, 9);
)";
  std::string texts = dir.file("nvtx_texts.sqlite");
  write_db(texts, tiny_report(true) + more);
  check_same_store(texts);
  std::string blob = dir.file("nvtx_blob.sqlite");
  write_db(blob, tiny_report(true) + more + R"(
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (3800, 3900, 59, X'00ff41', )" + gtid + R"();
INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (4000, 4100, 59, 'after the blob', )" + gtid + R"();
)");
  check_same_store(blob);
  LoadResult r = load_with(blob, true);
  REQUIRE(r.ok());
  CHECK(r.store->strings.find("after the blob") != StringPool::kNotFound);
  std::string utf16 = dir.file("nvtx_utf16.sqlite");
  write_db(utf16, "PRAGMA encoding = 'UTF-16le';" + tiny_report(false) + more);
  check_same_store(utf16);
}

// StringIds is read whole, but a string enters the store only when a row names it: a report's
// string table is mostly what Sightline does not show (CPU sampling's symbols). Ids out of order
// and far apart (a map rather than the vector) resolve as well; an id nothing holds names its row.
// The first string is empty (a fuzzer's find: its bytes were copied to no block yet, under UBSan).
TEST_CASE("nsys: strings enter the store when a row names them") {
  ScratchDir dir;
  std::string path = dir.file("strings.sqlite");
  const std::string gtid = global_tid(100, 101);
  write_db(path, tiny_report(true) + R"(
INSERT INTO StringIds VALUES (0, ''), (900000000000, 'pthread_cond_wait far away'), (3000, 'poll, past the others');
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 1999)
  INSERT INTO StringIds SELECT 12 + i, printf('unused symbol %d', i) FROM k;
INSERT INTO OSRT_API VALUES (9500, 9600, 27, )" + gtid + R"(, 0, 900000000000, 0, 0, NULL),
  (9700, 9800, 27, )" + gtid + R"(, 0, 3000, 0, 0, NULL), (9850, 9860, 27, )" + gtid + R"(, 0, 777777, 0, 0, NULL);
)");
  for (bool direct : {false, true}) {
    CAPTURE(direct);
    LoadResult r = load_with(path, direct);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    const TraceStore& s = *r.store;
    CHECK(test::find_slice(s, "pthread_cond_wait far away").valid());
    CHECK(test::find_slice(s, "poll, past the others").valid());
    CHECK(test::find_slice(s, "<string 777777>").valid());
    CHECK(test::find_slice(s, "add").valid() == false);  // the kernel is named by its demangled name
    CHECK(test::find_slice(s, "void add<float>(float*, float const*)").valid());
    CHECK(s.strings.find("unused symbol 0") == StringPool::kNotFound);
    CHECK(s.strings.find("unused symbol 1999") == StringPool::kNotFound);
    CHECK(s.strings.size() < 100);
  }
  check_same_store(path);
  // StringIds' id as a rowid alias is read from the rowids (above); as another kind of key it is
  // left to SQLite's API (INT PRIMARY KEY is no alias; DESC is one SQLite stores; WITHOUT ROWID).
  std::string report = tiny_report(true);
  const std::string table = "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);";
  REQUIRE(report.find(table) != std::string::npos);
  for (const char* other : {"CREATE TABLE StringIds (id INT PRIMARY KEY, value TEXT NOT NULL);",
                            "CREATE TABLE StringIds (id INTEGER, value TEXT NOT NULL, PRIMARY KEY (id DESC));",
                            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;"}) {
    CAPTURE(other);
    std::string keyed = dir.file("keyed.sqlite");
    write_db(keyed, std::string(report).replace(report.find(table), table.size(), other));
    check_same_store(keyed);
    LoadResult r = load_with(keyed, true);
    REQUIRE(r.ok());
    CHECK(test::find_slice(*r.store, "void add<float>(float*, float const*)").valid());
  }
}

// A rowid table's INTEGER PRIMARY KEY is held as NULL in its records: the reader gives the rowid.
// A key declared DESC is no alias: SQLite stores its values, and the reader reads them.
TEST_CASE("nsys: the direct reader reads an INTEGER PRIMARY KEY as the rowid") {
  ScratchDir dir;
  std::string path = dir.file("rowid.sqlite");
  write_db(path, R"(
CREATE TABLE alias (id INTEGER PRIMARY KEY, v TEXT);
INSERT INTO alias VALUES (3, 'three'), (70000, 'far'), (-5, 'negative'), (4, NULL);
CREATE TABLE stored (id INTEGER PRIMARY KEY DESC, v TEXT);
INSERT INTO stored VALUES (3, 'three'), (70000, 'far');
)");
  std::string image = read_file(path);
  using K = nsys::ValueKind;
  for (const char* table : {"alias", "stored"}) {
    CAPTURE(table);
    nsys::TableReader reader(image, table, root_page(path, table), {});
    REQUIRE(reader.open());
    reader.select({0, 1}, {K::Rowid, K::Text});
    nsys::RowBatch batch;
    batch.columns = 2;
    reader.decode(0, reader.leaf_count(), batch);
    REQUIRE_MESSAGE(batch.stop.empty(), batch.stop);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, ("SELECT id, v FROM " + std::string(table) + " ORDER BY rowid").c_str(), -1, &st,
                               nullptr) == SQLITE_OK);
    size_t i = 0;
    for (; sqlite3_step(st) == SQLITE_ROW; ++i) {
      REQUIRE(i < batch.rows());
      nsys::BatchRow row{&batch.values[i * 2], &batch.present[i * 2], &batch, i};
      CHECK(row.i64(0) == sqlite3_column_int64(st, 0));
      CHECK_FALSE(row.null(0));
      const char* v = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
      CHECK(row.text(1) == std::string_view(v ? v : ""));
    }
    CHECK(i == batch.rows());
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
}

// Tables Sightline does not map are listed with their rows, counted from the leaves' headers
// (count(*) read every page): exact where rowids have gaps (an INTEGER PRIMARY KEY, deleted rows),
// where the table spans many pages, and (through count(*)) for a WITHOUT ROWID table.
TEST_CASE("nsys: unmapped tables are counted exactly") {
  ScratchDir dir;
  std::string path = dir.file("unmapped.sqlite");
  write_db(path, tiny_report(true) + R"(
CREATE TABLE COMPOSITE_EVENTS (id INTEGER PRIMARY KEY, start INTEGER NOT NULL, cpu INTEGER);
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 2999)
  INSERT INTO COMPOSITE_EVENTS SELECT i * 2, i * 1000, i % 64 FROM k;
DELETE FROM COMPOSITE_EVENTS WHERE id % 3 = 0;
CREATE TABLE SAMPLING_CALLCHAINS (id INTEGER NOT NULL, symbol INTEGER NOT NULL, stackDepth INTEGER NOT NULL);
WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 49999)
  INSERT INTO SAMPLING_CALLCHAINS SELECT i / 20, 1000 + i % 977, i % 20 FROM k;
CREATE TABLE CUDA_GRAPH_NODE_EVENTS (graphNodeId INTEGER PRIMARY KEY, graphId INTEGER) WITHOUT ROWID;
INSERT INTO CUDA_GRAPH_NODE_EVENTS VALUES (1, 1), (2, 1), (5, 2);
)");
  for (bool direct : {false, true}) {
    CAPTURE(direct);
    LoadResult r = load_with(path, direct);
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    CHECK(info_text(*r.store).find("not mapped      COMPOSITE_EVENTS (2000 rows), CUDA_GRAPH_NODE_EVENTS (3 rows), "
                                   "SAMPLING_CALLCHAINS (50000 rows), SCHED_EVENTS (2 rows)") != std::string::npos);
  }
}

// A fuzzer's input (kept as a seed): a table whose last rowid promised far more rows than its
// leaves hold, for which the loader reserved ~500 GB of columns (under ASan: an abort). The bound
// is now what the leaves can hold at most, and the load ends in a clear error.
TEST_CASE("nsys: a rowid span past what the leaves can hold reserves nothing absurd") {
  std::string path = test::test_data("../fuzz/seeds_nsys/rowid_span.sqlite");
  const std::string image = read_file(path);
  REQUIRE(image.size() == 10752);
  uint32_t page_size = uint32_t(uint8_t(image[16])) << 8 | uint8_t(image[17]);
  size_t checked = 0;
  for (const char* table : {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "NVTX_EVENTS"}) {
    int64_t root = root_page(path, table);
    if (root <= 0) continue;
    nsys::TableReader reader(image, table, root, {0, 1});
    if (!reader.open()) continue;
    CAPTURE(table);
    CHECK(reader.row_bound() <= reader.leaf_count() * (page_size - 8) / 2);
    ++checked;
  }
  CHECK(checked > 0);
  LoadResult r = load_nsys_bytes(image, "rowid_span.sqlite");
  CHECK_FALSE(r.ok());
  CHECK(r.error.message.find("malformed") != std::string::npos);
}

// Damaged pages: a clear reason naming the table, page and byte offset, or SQLite's API takes
// over; a load gives a store or a clear error, never a crash.
TEST_CASE("nsys: damaged b-tree pages stop the direct reader cleanly") {
  if (!test::have_shared()) return;
  ScratchDir dir;
  std::string path = tiled_xent(dir, 15, 5);  // two levels: an interior root over ~150 leaves
  const std::string image = read_file(path);
  const char* table = "CUPTI_ACTIVITY_KIND_RUNTIME";
  int64_t root = root_page(path, table);
  uint32_t page_size = uint32_t(uint8_t(image[16])) << 8 | uint8_t(image[17]);
  size_t root_at = size_t(root - 1) * page_size;
  REQUIRE(uint8_t(image[root_at]) == 0x05);  // interior: the tree has levels

  SUBCASE("a cycle: the root's right-most child is the root") {
    std::string bad = image;
    for (int i = 0; i < 4; ++i) bad[root_at + 8 + size_t(i)] = char(uint32_t(root) >> (24 - 8 * i));
    nsys::TableReader reader(bad, table, root, {0, 1});
    CHECK_FALSE(reader.open());
    CHECK(reader.why().find("reached twice") != std::string::npos);
    CHECK(reader.why().find("page " + std::to_string(root)) != std::string::npos);
    // SQLite's own verdict, not a crash; its error says where the direct reader found the cycle.
    LoadResult r = load_nsys_bytes(bad, "cycle.sqlite");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error.message.find("reading CUPTI_ACTIVITY_KIND_RUNTIME") != std::string::npos);
    CHECK(r.error.message.find("the direct reader stopped at CUPTI_ACTIVITY_KIND_RUNTIME: page " + std::to_string(root)) !=
          std::string::npos);
  }
  SUBCASE("a leaf's sibling that is not a leaf: found when decoding, SQLite's API goes on") {
    // The walk reads only the first child's type; the root's right-most child is a leaf too.
    uint32_t last = uint32_t(uint8_t(image[root_at + 8])) << 24 | uint32_t(uint8_t(image[root_at + 9])) << 16 |
                    uint32_t(uint8_t(image[root_at + 10])) << 8 | uint8_t(image[root_at + 11]);
    std::string bad = image;
    REQUIRE(uint8_t(bad[size_t(last - 1) * page_size]) == 0x0D);
    bad[size_t(last - 1) * page_size] = char(0x0A);  // an index leaf
    nsys::TableReader reader(bad, table, root, {0, 1});
    REQUIRE(reader.open());
    nsys::RowBatch batch;
    batch.columns = 2;
    reader.decode(0, reader.leaf_count(), batch);
    CHECK(batch.stop.find("not a table leaf page") != std::string::npos);
    CHECK(batch.stop.find("page " + std::to_string(last)) != std::string::npos);
    CHECK(batch.rows() > 0);
    LoadResult r = load_nsys_bytes(bad, "sibling.sqlite");  // SQLite's own verdict on the page
    if (!r.ok()) CHECK(!r.error.message.empty());
  }
  SUBCASE("a child page past the end of a truncated file") {
    std::string cut = image.substr(0, image.size() / 2);
    nsys::TableReader reader(cut, table, root, {0, 1});
    CHECK_FALSE(reader.open());
    CHECK(reader.why().find("outside the file") != std::string::npos);
    // Named where the wrong page number is: the interior page and the byte offset in the file.
    CHECK(reader.why().find(": page ") != std::string::npos);
    CHECK(reader.why().find("byte offset") != std::string::npos);
    LoadResult r = load_nsys_bytes(cut, "cut.sqlite");
    CHECK_FALSE(r.ok());
    CHECK(!r.error.message.empty());
  }
  SUBCASE("bytes flipped in random pages") {
    nsys::TableReader good(image, table, root, {0, 1});
    REQUIRE(good.open());
    uint64_t state = 12345;
    auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull, state >> 33; };
    int stopped = 0, loaded = 0;
    for (int trial = 0; trial < 100; ++trial) {
      std::string bad = image;
      size_t page = size_t(next() % (image.size() / page_size));
      for (int flips = 0; flips < 8; ++flips) bad[page * page_size + next() % page_size] ^= char(1 + next() % 255);
      nsys::TableReader reader(bad, table, root, {0, 1, 2, 3, 4, 5, 6});
      if (reader.open()) {
        nsys::RowBatch batch;
        batch.columns = 7;
        reader.decode(0, reader.leaf_count(), batch);
        if (!batch.stop.empty()) {
          ++stopped;
          CHECK(batch.stop.find("byte offset") != std::string::npos);
        }
      }
      LoadResult r = load_nsys_bytes(bad, "flipped.sqlite");
      loaded += r.ok();
      if (!r.ok()) CHECK(!r.error.message.empty());
    }
    CHECK(stopped > 0);  // some damage is seen by the reader itself
    MESSAGE(stopped << " of 100 damaged images stopped the reader; " << loaded << " still loaded");
  }
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

// CUDA graphs traced as whole graphs (nsys --cuda-graph-trace=graph): one slice per launch on
// its stream, linked to its cudaGraphLaunch by correlation id, with the graph's ids as args.
TEST_CASE("nsys: CUDA graph launches become slices linked to cudaGraphLaunch") {
  ScratchDir dir;
  std::string path = dir.file("graphs.sqlite");
  const std::string gpid = global_pid(100), gtid = global_tid(100, 101);
  write_db(path, tiny_report(false) + R"(
INSERT INTO StringIds VALUES (20, 'cudaGraphLaunch_v10000');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10000, 10100, 0, )" + gtid + R"(, 30, 20, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  graphId INTEGER, graphExecId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (10200, 12200, 0, 1, NULL, 7, 30, )" + gpid + R"(, 3, 5);
)");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  CHECK(count_cat(s, "cuda_graph") == 1);
  SliceRef graph = test::find_slice(s, "CUDA graph 3");
  REQUIRE(graph.valid());
  CHECK(s.is_gpu(graph));
  CHECK(s.dur(graph) == 2000);
  CHECK(s.strings.view(s.tracks[graph.track].name) == "stream 7");
  CHECK(s.slice_args_json(graph).find(R"("graph id":3,"graph exec id":5)") != std::string_view::npos);
  SliceRef launch = s.launch_of(graph);
  REQUIRE(launch.valid());
  CHECK(s.name(launch) == "cudaGraphLaunch");
  CHECK(s.flows_from(launch).size() == 1);
}

// Correlation keys are kept per process in sorted arrays (NsysLoader's LaunchKeys, UnlaunchedKeys):
// an API call's key that comes after a larger one waits to be sorted and merged in before the GPU
// tables; an unlaunched key a little out of order is moved in place, one far out of order goes
// through a hash; searches start where the last ended. Whatever order the API calls and the GPU
// activities come in, each activity links to the first call of its id, and the activities of an
// id no call has share one correlation row.
TEST_CASE("nsys: launches are found whatever order the calls and activities come in") {
  ScratchDir dir;
  std::string path = dir.file("orders.sqlite");
  const std::string gpid = global_pid(100), gtid = global_tid(100, 101);
  // Launch ids 100-399: ascending in groups of four, each group descending, and 150-159 held back
  // to the end (far out of order).
  std::vector<int> calls;
  for (int group = 100; group < 400; group += 4)
    for (int id = group + 3; id >= group; --id)
      if (id < 150 || id >= 160) calls.push_back(id);
  for (int id = 150; id < 160; ++id) calls.push_back(id);
  std::string sql = tiny_report(false) + "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ";
  for (size_t i = 0; i < calls.size(); ++i)
    sql += (i ? ", (" : "(") + std::to_string(20000 + 10 * i) + ", " + std::to_string(20005 + 10 * i) + ", 0, " + gtid +
           ", " + std::to_string(calls[i]) + ", 1, 0, NULL)";
  // Driver calls with a launch's id, after it: the launch stays the runtime call. Id 200 came
  // late (merged in), id 399 is the last in order.
  sql += ", (30000, 30001, 1, " + gtid + ", 200, 21, 0, NULL), (30010, 30011, 1, " + gtid +
         ", 399, 21, 0, NULL);\nINSERT INTO StringIds VALUES (21, 'cuLaunchKernelEx');\n";
  // Kernels of ids 399 down to 100 (every search goes back from the last), then ids no call has:
  // 1001 before 1000 twice (moved in place), 2000-2099 ascending, 1500 after them twice (far: a
  // hash), 1001 again.
  std::vector<int> kernels;
  for (int id = 399; id >= 100; --id) kernels.push_back(id);
  kernels.insert(kernels.end(), {1001, 1000, 1000});
  for (int id = 2000; id < 2100; ++id) kernels.push_back(id);
  kernels.insert(kernels.end(), {1500, 1500, 1001});
  sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, "
         "demangledName) VALUES ";
  for (size_t i = 0; i < kernels.size(); ++i)
    sql += (i ? ", (" : "(") + std::to_string(40000 + 10 * i) + ", " + std::to_string(40005 + 10 * i) + ", 0, 1, 7, " +
           std::to_string(kernels[i]) + ", " + gpid + ", 8)";
  write_db(path, sql + ";\n");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  std::map<int64_t, std::vector<SliceRef>> by_id;  // the kernels added here, by correlation id
  StringId add = s.strings.find("add");
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    for (uint32_t i = 0; i < s.tracks[t].slices.size(); ++i)
      if (s.tracks[t].slices.name[i] == add) by_id[s.correlation_id({t, i}).value_or(-1)].push_back({t, i});
  REQUIRE(by_id.size() == 300 + 103);
  for (int id = 100; id < 400; ++id) {
    INFO("id " << id);
    REQUIRE(by_id[id].size() == 1);
    SliceRef launch = s.launch_of(by_id[id][0]);
    REQUIRE(launch.valid());
    CHECK(s.name(launch) == "cudaLaunchKernel");
    CHECK(s.correlation_id(launch) == id);
    CHECK(s.flows_from(launch).size() == 1);
  }
  // The driver calls share their ids' rows: their correlation, not launches of their own.
  std::vector<int64_t> driver_ids;
  StringId driver = s.strings.find("cuLaunchKernelEx");
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    for (uint32_t i = 0; i < s.tracks[t].slices.size(); ++i)
      if (s.tracks[t].slices.name[i] == driver) {
        driver_ids.push_back(s.correlation_id({t, i}).value_or(-1));
        CHECK(s.activities_of({t, i}).size() == 1);
      }
  CHECK(driver_ids == std::vector<int64_t>{200, 399});
  for (int id : {1000, 1001, 1500}) {
    INFO("id " << id);
    REQUIRE(by_id[id].size() == 2);
    CHECK_FALSE(s.launch_of(by_id[id][0]).valid());
    CHECK(s.activities_of(by_id[id][0]).size() == 2);  // one row for both
  }
  // One correlation row per id with GPU work: the tiny report's five (1-4, 5 has none: 3), the
  // 300 launched and 103 unlaunched here.
  CHECK(s.correlations.size() == load_tiny(dir, false)->correlations.size() + 300 + 103);
}

// Two processes sharing a GPU: CUPTI numbers streams (and correlation ids) per process, so both
// have a stream 7 in context 1. Each keeps a track of its own, named by its owner, and each kernel
// links to the launch of its own process.
TEST_CASE("nsys: two processes' stream 7 on one GPU stay two tracks") {
  ScratchDir dir;
  std::string path = dir.file("shared_gpu.sqlite");
  const std::string gpid2 = global_pid(200), gtid2 = global_tid(200, 201);
  write_db(path, tiny_report(false) + R"(
INSERT INTO PROCESSES VALUES ()" + gpid2 + R"(, 200, 'server');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1100, 1300, 0, )" + gtid2 + R"(, 1, 1, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName)
  VALUES (2200, 2500, 0, 1, 7, 1, )" + gpid2 + R"(, 8);
)");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  std::vector<std::string> streams;
  for (const Track& t : s.tracks)
    if (t.kind == TrackKind::GpuStream && t.gpu_work) streams.emplace_back(s.strings.view(t.name));
  std::sort(streams.begin(), streams.end());
  CHECK(streams == std::vector<std::string>{"stream 7 (pid 100, context 1)", "stream 7 (pid 200, context 1)"});
  // No overlap beyond the hand-made report's own (its sync overlaps its copy): none between processes.
  CHECK(s.issues.count(IssueKind::OverlappingSlice) == load_tiny(dir, false)->issues.count(IssueKind::OverlappingSlice));
  SliceRef own = test::find_slice(s, "add");
  REQUIRE(own.valid());
  CHECK(s.strings.view(s.tracks[own.track].name) == "stream 7 (pid 200, context 1)");
  SliceRef launch = s.launch_of(own);
  REQUIRE(launch.valid());
  CHECK(s.start(launch) == 200);  // the server's cudaLaunchKernel at 1100, not the trainer's at 1000
  CHECK(s.strings.view(s.processes[s.tracks[launch.track].process].name) == "server");
  SliceRef trainer = test::find_slice(s, "void add<float>(float*, float const*)");
  REQUIRE(trainer.valid());
  CHECK(s.tracks[trainer.track].process == s.tracks[own.track].process);  // both under GPU 0
  CHECK(s.start(s.launch_of(trainer)) == 100);
}

// Streams and contexts as GPU tracks under their device: one process using GPU 0 through two
// contexts. Context 2 has stream 3, a context-wide sync, and a stream 7 like context 1's.
TEST_CASE("nsys: a device with two contexts groups its streams by context and names the context") {
  ScratchDir dir;
  std::string path = dir.file("two_contexts.sqlite");
  const std::string gpid = global_pid(100);
  write_db(path, tiny_report(false) + R"(
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName)
  VALUES (5000, 5100, 0, 2, 3, 20, )" + gpid + R"(, 8), (5200, 5300, 0, 2, 7, 21, )" + gpid + R"(, 8);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId, globalPid, syncType, eventId)
  VALUES (5400, 5500, 0, 2, 4294967295, 22, )" + gpid + R"(, 4, 4294967295);
)");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  auto rows_of = [&](const TraceStore& store, std::string_view device) {
    std::vector<std::string> names;
    for (const Process& p : store.processes)
      if (store.strings.view(p.name) == device)
        for (uint32_t t : p.tracks) names.emplace_back(store.strings.view(store.tracks[t].name));
    return names;
  };
  // Display order: context 1's streams, then context 2's, the context-wide track first.
  CHECK(rows_of(s, "NVIDIA Test GPU") == std::vector<std::string>{"stream 7 (pid 100, context 1)", "context-wide (context 2)",
                                                                    "stream 3 (context 2)", "stream 7 (pid 100, context 2)"});
  SliceRef add = test::find_slice(s, "add");
  REQUIRE(add.valid());
  CHECK(s.strings.view(s.tracks[add.track].name) == "stream 3 (context 2)");
  CHECK(s.tracks[add.track].stream == 3);  // the stream stays the stream (HTA mode reads args.stream)
  CHECK(s.slice_args_json(add).find(R"("context":2,"stream":3)") != std::string::npos);
  // The timeline and figures label the rows so, not "stream 3" (two rows would read "stream 7").
  CHECK(track_display_name(s, add.track) == "stream 3 (context 2)");
  CHECK(track_full_name(s, add.track) == "GPU 0 stream 3 (context 2)");
  // One context: Kineto's names and order, unchanged.
  auto one = load_tiny(dir, false);
  CHECK(rows_of(*one, "NVIDIA Test GPU") == std::vector<std::string>{"stream 7"});
  SliceRef kernel = test::find_slice(*one, "void add<float>(float*, float const*)");
  REQUIRE(kernel.valid());
  CHECK(track_display_name(*one, kernel.track) == "stream 7");
}
