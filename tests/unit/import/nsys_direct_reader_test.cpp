// Nsight Systems SQLite exports loaded by the direct b-tree reader give the store SQLite's API
// gives: the hand-made and corpus reports, NVTX, OS runtime, GPU metrics, strings, unmapped tables.
#include <cstdlib>

#include "core/import/trace_loader.h"
#include "core/report/trace_info.h"
#include "core/snapshot/snapshot.h"
#include "tests/unit/import/nsys_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::nsys_test;

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
