// The direct b-tree reader of Nsight Systems SQLite exports (nsys::TableReader) on its own: rows
// of a multi-level tree, integers, TEXT and REAL, rowid keys, and damaged or absurd pages.
#include <sqlite3.h>

#include <atomic>
#include <thread>

#include "core/import/nsys/nsys_btree.h"
#include "core/import/nsys/nsys_loader.h"
#include "tests/unit/import/nsys_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::nsys_test;

namespace {

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
