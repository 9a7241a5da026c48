// The Nsight loader's view of the database: its schema and export version, how each table is read
// (the direct b-tree reader or SQLite's API), the rows tables hold and what is reserved for them.
#include "core/import/nsys/nsys_loader_class.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/text/json_writer.h"

namespace sl::nsys_detail {
namespace {

// The values the direct reader takes in a column, by the affinity SQLite gives its declared type
// (sqlite.org/datatype3.html, 3.1; `type` in capitals): TEXT and REAL columns hold what their
// affinity made of the values stored; the others are read for integers, and any other value there
// stops the reader.
nsys::ValueKind value_kind(std::string_view type) {
  auto has = [&](const char* part) { return type.find(part) != std::string_view::npos; };
  if (has("INT")) return nsys::ValueKind::Integer;
  if (has("CHAR") || has("CLOB") || has("TEXT")) return nsys::ValueKind::Text;
  if (has("BLOB") || type.empty()) return nsys::ValueKind::Integer;
  if (has("REAL") || has("FLOA") || has("DOUB")) return nsys::ValueKind::Real;
  return nsys::ValueKind::Integer;
}

// The direct reader is on unless SIGHTLINE_NSYS_READER=sqlite (tests compare the two paths).
bool direct_reading_enabled() {
  const char* reader = std::getenv("SIGHTLINE_NSYS_READER");
  return !reader || std::string_view(reader) != "sqlite";
}

// Tables read for names, devices and times: used, not events.
constexpr const char* kReferenceTables[] = {"StringIds", "PROCESSES", "ThreadNames", "TARGET_INFO_GPU",
                                            "TARGET_INFO_SESSION_START_TIME", "TARGET_INFO_CUDA_CONTEXT_INFO",
                                            "META_DATA_EXPORT", "TARGET_INFO_GPU_METRICS"};

}  // namespace

// ---------------------------------------------------------------- schema

bool NsysLoader::read_schema() {
  Statement tables(db_, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  if (!tables.prepared()) return sql_fail("not a readable SQLite database");
  int rc;
  while ((rc = tables.step()) == SQLITE_ROW) table_order_.emplace_back(tables.text(0));
  if (rc != SQLITE_DONE) return sql_fail("reading the list of tables");
  // Every table's columns in one statement (one per table took 1.3 ms on a report of 80 tables),
  // with their keys: a rowid table's one INTEGER PRIMARY KEY is its rowid (StringIds' id), any
  // other key keeps the direct reader off the table.
  Statement columns(db_, "SELECT m.name, c.name, c.type, c.pk, t.wr FROM sqlite_master AS m, "
                         "pragma_table_info(m.name) AS c, pragma_table_list AS t "
                         "WHERE m.type = 'table' AND t.schema = 'main' AND t.name = m.name ORDER BY m.name, c.cid");
  if (!columns.prepared()) return sql_fail("reading the columns of the tables");
  for (const std::string& t : table_order_) columns_[t], column_kinds_[t];  // tables without columns too
  struct Key {
    size_t column;
    std::string type;
  };
  std::unordered_map<std::string, std::vector<Key>> keys;  // table → its key columns
  std::unordered_set<std::string> without_rowid;
  while ((rc = columns.step()) == SQLITE_ROW) {
    std::string table(columns.text(0)), type(columns.text(2));
    auto& kinds = column_kinds_[table];
    for (char& c : type) c = char(std::toupper(static_cast<unsigned char>(c)));
    if (columns.i64(3) != 0) keys[table].push_back({kinds.size(), type});
    if (columns.i64(4) != 0) without_rowid.insert(table);
    columns_[table].emplace_back(columns.text(1));
    kinds.push_back(value_kind(type));
  }
  if (rc != SQLITE_DONE) return sql_fail("reading the columns of the tables");
  // "INTEGER" exactly: an INT PRIMARY KEY is no rowid alias.
  for (const auto& [table, key] : keys) {
    if (key.size() == 1 && key[0].type == "INTEGER" && !without_rowid.count(table))
      column_kinds_[table][key[0].column] = nsys::ValueKind::Rowid;
    else
      keyed_tables_.insert(table);
  }
  return true;
}

bool NsysLoader::has_column(std::string_view t, std::string_view c) const {
  auto it = columns_.find(std::string(t));
  return it != columns_.end() && std::find(it->second.begin(), it->second.end(), c) != it->second.end();
}

// "SELECT a, NULL, c FROM t": a column this schema version lacks reads as NULL, so the column
// indexes of a query never change.
std::string NsysLoader::select(std::string_view table, std::initializer_list<const char*> columns) const {
  std::string sql = "SELECT ";
  bool first = true;
  for (const char* c : columns) {
    if (!first) sql += ", ";
    first = false;
    sql += has_column(table, c) ? quote_identifier(c) : std::string("NULL");
  }
  return sql + " FROM " + quote_identifier(table);
}

// A table without the columns an event cannot do without is not read, and says so in `info`.
bool NsysLoader::require(std::string_view table, std::initializer_list<const char*> columns) {
  if (!has_table(table)) return false;
  std::string missing;
  for (const char* c : columns)
    if (!has_column(table, c)) missing += (missing.empty() ? "" : ", ") + std::string(c);
  if (missing.empty()) return true;
  unreadable_.push_back(std::string(table) + " lacks column(s) " + missing);
  return false;
}

// Rows of a table by its rowids (TableReader::row_bound), where the direct reader can open it
// (else 0: nothing is reserved for it).
uint64_t NsysLoader::table_rows(const char* table) {
  if (!has_table(table)) return 0;
  std::optional<nsys::TableReader> reader = direct_reader(table, nullptr, 0, true);
  return reader ? reader->row_bound() : 0;
}

// How many rows the host tables (CUDA API, OS runtime, NVTX) and the GPU tables hold: a track
// of either side can get at most that many slices, and the args table one row per event.
void NsysLoader::count_rows() {
  for (const char* t : {"CUPTI_ACTIVITY_KIND_RUNTIME", "OSRT_API", "NVTX_EVENTS"}) host_rows_ += table_rows(t);
  for (const char* t : kGpuTables) gpu_rows_ += table_rows(t);
  // Room, not memory (pages are faulted in as rows come): a correlation row per GPU activity at
  // most. Grown by doubling, it was copied: ~15 MB each time on a report of a million launched
  // kernels.
  try {
    builder_->reserve_args(host_rows_ + gpu_rows_);
    builder_->reserve_correlations(gpu_rows_);
    launches_.reserve(table_rows("CUPTI_ACTIVITY_KIND_RUNTIME"));
    unlaunched_.reserve(gpu_rows_);
  } catch (const std::bad_alloc&) {  // a hint only
  }
}

// A new track's columns get room for every row its side's tables hold, so they never grow by
// doubling (a copy, and fresh pages faulted in, each time). Only address space is reserved:
// pages are faulted in as rows arrive, and release_unused() gives back what stayed unused on
// tracks that got few rows. One track of each side gets a reservation, no more than the rows there
// are: the first thread to call CUDA (the main thread, which makes most calls) and the first
// stream. More (every thread, or a few) was tried: the freed reservations of tracks with few rows
// fragment malloc's heap, and repeated loads in one process peaked at 1.4x the memory. (One
// budget for both sides let a report's host threads use it up before its first stream: a
// kernel-heavy report's stream then grew by doubling, with a copy each time: 0.147 → 0.140 s.)
//
// The columns finish() derives (parent, depth, lane, the max-end prefix: sized to the rows when
// nesting) are reserved too, so that pages_ahead_ can fault their pages in while the tables are
// read rather than finish() on this thread.
void NsysLoader::reserve_track(uint32_t track, uint64_t rows, bool& side_reserved) {
  if (rows == 0 || side_reserved) return;
  try {
    builder_->reserve_slices(track, size_t(rows));
    Track& t = store_->tracks[track];
    t.slices.parent.reserve(t.slices.parent.size() + rows);
    t.slices.depth.reserve(t.slices.depth.size() + rows);
    t.slices.lane.reserve(t.slices.lane.size() + rows);
    t.max_end_prefix.reserve(t.max_end_prefix.size() + rows);
  } catch (const std::bad_alloc&) {  // a hint only (strict overcommit may refuse the address space)
    return;
  }
  side_reserved = true;
  reserved_tracks_.push_back(track);
}

// After the tables: what a track's reservation left unused goes back (as release_unused() does
// for the input columns; the derived ones are still empty, so nothing is copied).
void NsysLoader::release_reserved() {
  for (uint32_t track : reserved_tracks_) {
    builder_->release_unused(track);
    Track& t = store_->tracks[track];
    if (t.slices.parent.capacity() <= 2 * t.slices.size()) continue;
    Column<uint32_t>().swap(t.slices.parent);
    Column<uint16_t>().swap(t.slices.depth);
    Column<uint16_t>().swap(t.slices.lane);
    std::vector<TimeNs>().swap(t.max_end_prefix);
  }
}

// The columns the builder appends to that were reserved up front, for pages_ahead_.
void NsysLoader::publish_reserved_columns() {
  std::vector<PagesAhead::Column> columns;
  for (uint32_t track : reserved_tracks_) {
    const Track& t = store_->tracks[track];
    const SliceColumns& c = t.slices;
    size_t rows = c.size();
    for (const PagesAhead::Column& column :
         {PagesAhead::column(c.start), PagesAhead::column(c.dur), PagesAhead::column(c.name),
          PagesAhead::column(c.cat), PagesAhead::column(c.args), PagesAhead::column(c.corr),
          PagesAhead::column(c.parent, rows), PagesAhead::column(c.depth, rows), PagesAhead::column(c.lane, rows),
          PagesAhead::column(t.max_end_prefix, rows)})
      columns.push_back(column);
  }
  columns.push_back(PagesAhead::column(store_->args_table()));
  columns.push_back(PagesAhead::column(store_->correlations));
  pages_ahead_.publish(columns);
}

void NsysLoader::note_reader(std::string_view table, const std::string& how) {
  reader_notes_ += "nsys " + std::string(table) + ": " + how + "\n";
}

// A reader for the table when the direct path applies: a plain rowid table (no INTEGER PRIMARY
// KEY alias, no generated columns, no defaults a short record would need), in a database whose
// bytes are at hand. Otherwise nothing, and why is noted.
std::optional<nsys::TableReader> NsysLoader::direct_reader(const char* table, const char* const* columns, size_t n,
                                                           bool quiet) {
  auto refuse = [&](const std::string& why) {
    if (!quiet) note_reader(table, "SQLite's API: " + why);
    return std::nullopt;
  };
  auto [opened, added] = readers_.try_emplace(table);
  if (added) opened->second = open_reader(table);
  if (!opened->second.reader) return refuse(opened->second.why);
  const std::vector<std::string>& have = columns_.at(table);
  const std::vector<nsys::ValueKind>& have_kinds = column_kinds_.at(table);
  std::vector<int> record_columns;
  std::vector<nsys::ValueKind> kinds;
  for (size_t i = 0; i < n; ++i) {
    auto at = std::find(have.begin(), have.end(), columns[i]);
    record_columns.push_back(at == have.end() ? -1 : int(at - have.begin()));
    kinds.push_back(at == have.end() ? nsys::ValueKind::Integer : have_kinds[size_t(at - have.begin())]);
  }
  nsys::TableReader reader = *opened->second.reader;
  reader.select(record_columns, kinds);
  return reader;
}

// The table's tree walked once (count_rows and the rows both read it).
NsysLoader::OpenedReader NsysLoader::open_reader(const char* table) {
  Statement info(db_, "SELECT count(*) FROM pragma_table_xinfo(?1) WHERE hidden != 0 OR dflt_value IS NOT NULL");
  if (!info.prepared()) return {std::nullopt, "cannot read the columns"};
  info.bind(1, table);
  if (info.step() != SQLITE_ROW || info.i64(0) != 0 || keyed_tables_.count(table))
    return {std::nullopt, "a key other than the rowid, a generated or a defaulted column"};
  return walk_tree(table);
}

// The table's b-tree found in the file's bytes and walked down to its leaves, or why not.
NsysLoader::OpenedReader NsysLoader::walk_tree(const std::string& table) {
  if (!direct_reading_enabled()) return {std::nullopt, "SIGHTLINE_NSYS_READER=sqlite"};
  if (!image_) image_ = std::make_unique<DatabaseImage>(db_);
  if (image_->bytes().empty()) return {std::nullopt, image_->why()};
  Statement root(db_, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?1");
  if (!root.prepared()) return {std::nullopt, "no root page"};
  root.bind(1, table);
  if (root.step() != SQLITE_ROW || root.null(0)) return {std::nullopt, "no root page"};
  nsys::TableReader reader(image_->bytes(), table, root.i64(0), {});
  if (!reader.open()) return {std::nullopt, reader.why(), true};
  return {std::move(reader), ""};
}

// A table's rows from its leaves' headers, where count(*) reads every page through SQLite's pager
// (a report's CPU-sampling call chains, often its biggest table, took ~11 ms per million rows).
// Any rowid table will do (its columns are not read); nullopt leaves it to count(*).
std::optional<uint64_t> NsysLoader::direct_row_count(const std::string& table) {
  OpenedReader tree = walk_tree(table);
  return tree.reader ? tree.reader->exact_row_count() : std::nullopt;
}

// An Nsight export has StringIds (every name) and event tables. Without either it is not one: the
// error names what is missing (META_DATA_EXPORT too, when absent) and the tables the file has.
// With both but no schema version (no META_DATA_EXPORT, or no EXPORT_SCHEMA_VERSION row in it)
// the events are there to read: the report loads, rather than refusing data that is there (a
// trimmed or hand-made export), and `info` says the version is unknown ("schema unknown", and
// under `not recorded`). A schema version other than 3.x is refused.
bool NsysLoader::check_export() {
  bool any_events = false;
  for (const char* t : kEventTables) any_events |= has_table(t);
  if (!has_table("StringIds") || !any_events) {
    std::string missing;
    auto lacks = [&](std::string_view what) { missing.append(missing.empty() ? "no " : ", no ").append(what); };
    if (!has_table("StringIds")) lacks("StringIds table");
    if (!any_events) lacks("event table (CUPTI_ACTIVITY_KIND_*, NVTX_EVENTS, OSRT_API, GPU_METRICS)");
    if (!has_table("META_DATA_EXPORT")) lacks("META_DATA_EXPORT table");
    std::string found;
    for (size_t i = 0; i < table_order_.size() && i < 8; ++i) found += (i ? ", " : "") + table_order_[i];
    if (table_order_.size() > 8) found += ", ...";
    return fail("not an Nsight Systems export: " + missing + " (" +
                (found.empty() ? std::string("the database has no tables") : "its tables: " + found) + ")");
  }
  std::string schema, product;
  if (require("META_DATA_EXPORT", {"name", "value"})) {
    bool ok = scan("META_DATA_EXPORT", "SELECT name, value FROM META_DATA_EXPORT", [&](const Statement& s) {
      if (s.text(0) == "EXPORT_SCHEMA_VERSION") schema = s.text(1);
      if (s.text(0) == "EXPORT_PRODUCT_VERSION") product = s.text(1);
    });
    if (!ok) return false;
  }
  if (schema.empty())
    schema_unknown_ = has_table("META_DATA_EXPORT") ? "export schema version (no EXPORT_SCHEMA_VERSION in META_DATA_EXPORT)"
                                                    : "export schema version (no META_DATA_EXPORT table)";
  if (!schema.empty() && !schema.starts_with("3."))
    return fail("unsupported Nsight Systems export schema version " + schema +
                " (Sightline reads schema 3.x, written by nsys 2021 to 2025)");
  JsonWriter w;
  w.begin_object().field("schema_version", schema.empty() ? "unknown" : schema);
  w.field("product_version", product.empty() ? "unknown" : product).end_object();
  store_->meta.top_level.emplace_back("nsys_export", w.str());
  return true;
}

// What the report holds that Sightline does not show, and what it lacks: for `info`.
bool NsysLoader::note_tables() {
  auto listed = [](std::string_view t, const auto& list) {
    return std::find(std::begin(list), std::end(list), t) != std::end(list);
  };
  JsonWriter unmapped;
  unmapped.begin_object();
  for (const std::string& t : table_order_) {
    // ENUM_* are the enumerations decoded above with fixed tables; they hold no events.
    if (listed(t, kEventTables) || listed(t, kReferenceTables) || t.starts_with("ENUM_") || t.starts_with("sqlite_"))
      continue;
    std::optional<uint64_t> rows = direct_row_count(t);
    if (!rows) {
      Statement count(db_, "SELECT count(*) FROM " + quote_identifier(t));
      if (!count.prepared() || count.step() != SQLITE_ROW) return sql_fail("counting the rows of " + t);
      rows = uint64_t(count.i64(0));
    }
    if (*rows) unmapped.field(t, int64_t(*rows));
  }
  unmapped.end_object();
  store_->meta.top_level.emplace_back("nsys_unmapped_tables", unmapped.str());
  auto rows_in = [&](std::initializer_list<const char*> tables) {
    for (const char* t : tables) {
      if (!has_table(t)) continue;
      Statement any(db_, "SELECT 1 FROM " + quote_identifier(t) + " LIMIT 1");
      if (any.prepared() && any.step() == SQLITE_ROW) return true;
    }
    return false;
  };
  JsonWriter missing;
  missing.begin_array();
  if (!rows_in({"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                "CUPTI_ACTIVITY_KIND_MEMSET"}))
    missing.value("CUDA trace");
  else if (!rows_in({"CUPTI_ACTIVITY_KIND_KERNEL"})) missing.value("CUDA kernels");
  if (!rows_in({"NVTX_EVENTS"})) missing.value("NVTX");
  if (!rows_in({"OSRT_API"})) missing.value("OS runtime trace");
  if (!rows_in({"TARGET_INFO_GPU"})) missing.value("GPU descriptions");
  if (!schema_unknown_.empty()) missing.value(schema_unknown_);
  missing.end_array();
  store_->meta.top_level.emplace_back("nsys_missing", missing.str());
  JsonWriter unreadable;
  unreadable.begin_array();
  for (const std::string& why : unreadable_) unreadable.value(why);
  unreadable.end_array();
  store_->meta.top_level.emplace_back("nsys_unreadable_tables", unreadable.str());
  return true;
}

}  // namespace sl::nsys_detail
