// The Nsight loader (NsysLoader) as the files that define its parts share it: the class, and what
// more than one of them needs: the scans (templates), and the helpers the row readers inline.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/import/nsys/nsys_args.h"
#include "core/import/nsys/nsys_btree.h"
#include "core/import/nsys/nsys_launch_keys.h"
#include "core/import/nsys/nsys_pages.h"
#include "core/import/nsys/nsys_sqlite.h"
#include "core/store/args_blocks.h"
#include "core/store/cores.h"
#include "core/store/load_result.h"
#include "core/store/trace_builder.h"

namespace sl::nsys_detail {

using nsys::Statement;
using nsys::kGpuColumns;
using nsys::kKernelColumns;
using nsys::kRuntimeColumns;
using nsys::quote_identifier;

// Times beyond ±146 years are refused so that differences never overflow int64 (as for JSON).
constexpr TimeNs kMaxAbsNs = INT64_MAX / 2;
constexpr uint64_t kProgressEvery = 1 << 16;

// ---------------------------------------------------------------- the loader

// Tables whose rows become events.
inline constexpr const char* kEventTables[] = {
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    "NVTX_EVENTS", "OSRT_API", "GPU_METRICS", "CUDA_GPU_MEMORY_USAGE_EVENTS"};
constexpr const char* kGpuTables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                      "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
                                      "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"};

inline bool is_event_table(std::string_view table) {
  return std::find(std::begin(kEventTables), std::end(kEventTables), table) != std::end(kEventTables);
}

class NsysLoader {
public:
  NsysLoader(sqlite3* db, std::string file, uint64_t bytes, const LoadOptions& options)
      : db_(db), options_(options), bytes_(bytes) {
    error_.file = std::move(file);
  }

  LoadResult run();

private:
  bool load();
  bool fail(std::string message) {
    if (error_.message.empty()) error_.message = std::move(message);
    return false;
  }
  bool sql_fail(std::string_view what) {
    std::string found = direct_stop_.empty() ? "" : " (the direct reader stopped at " + direct_stop_ + ")";
    return fail(std::string(what) + ": " + sqlite3_errmsg(db_) + describe_corruption() + found);
  }
  std::string describe_corruption() const {
    int code = sqlite3_errcode(db_) & 0xFF;
    if (code == SQLITE_NOTADB) return " (not an SQLite database, or one truncated or damaged)";
    if (code == SQLITE_CORRUPT || code == SQLITE_IOERR)
      return " (the file is not a complete SQLite database: truncated or damaged)";
    return {};
  }

  // --- schema ---
  bool read_schema();
  bool has_table(std::string_view t) const { return columns_.count(std::string(t)) > 0; }
  bool has_column(std::string_view t, std::string_view c) const;
  std::string select(std::string_view table, std::initializer_list<const char*> columns) const;
  template <size_t N>
  std::string select(std::string_view table, const char* const (&columns)[N]) const;
  bool require(std::string_view table, std::initializer_list<const char*> columns);
  template <class Row>
  bool scan(std::string_view table, const std::string& sql, Row&& row);
  // The same rows as scan(table, select(table, columns), row), through the direct b-tree reader
  // when it can (values of their columns' declared kinds), SQLite's API otherwise or from where it
  // stopped.
  // `prepare`: work on each batch of rows on its decoding thread (BackgroundDecoding), e.g.
  // encoding their args (prepare_args).
  template <size_t N, class Row>
  bool scan_direct(const char* table, const char* const (&columns)[N], Row&& row,
                   const std::function<void(nsys::RowBatch&)>& prepare = {});
  std::optional<nsys::TableReader> direct_reader(const char* table, const char* const* columns, size_t n,
                                                 bool quiet = false);
  struct OpenedReader {
    std::optional<nsys::TableReader> reader;
    std::string why;       // when there is none
    bool damaged = false;  // why names damage in the table's tree (not a reason to leave it to SQLite)
  };
  OpenedReader open_reader(const char* table);
  OpenedReader walk_tree(const std::string& table);
  std::optional<uint64_t> direct_row_count(const std::string& table);
  void note_reader(std::string_view table, const std::string& how);
  bool check_export();

  // --- reference tables ---
  bool read_strings();
  bool read_processes();
  bool read_threads();
  bool read_devices();
  bool read_session_start();
  // By reference, and the usual case inline: an optional passed by value in registers is stored
  // as bytes and read back as a word (a stalled store forward per row, ~5 ns on 5 M rows).
  StringId string_id(const std::optional<int64_t>& nsys_id) {
    if (nsys_id && uint64_t(*nsys_id) < strings_.size() && strings_[size_t(*nsys_id)] != StringPool::kNotFound)
      return strings_[size_t(*nsys_id)];
    return string_id_slow(nsys_id);
  }
  StringId api_name(const std::optional<int64_t>& nsys_id) {
    if (nsys_id && uint64_t(*nsys_id) < api_dense_.size() && api_dense_[size_t(*nsys_id)] != StringPool::kNotFound)
      return api_dense_[size_t(*nsys_id)];
    return api_name_slow(nsys_id);
  }
  StringId string_id_slow(const std::optional<int64_t>& nsys_id);
  StringId api_name_slow(const std::optional<int64_t>& nsys_id);

  // --- placement ---
  uint32_t host_process(int64_t global_pid);
  uint32_t thread_track(int64_t global_tid);
  uint32_t device_process(int64_t device);
  uint32_t stream_track(int64_t device, int64_t stream);
  int64_t correlation_key(int64_t global_pid, int64_t id);
  uint32_t launched_correlation(int64_t key, SlicePlace launch);
  uint32_t unlaunched_correlation(int64_t key);
  void seed_correlation_spaces();
  void reserve_track(uint32_t track, uint64_t rows, bool& side_reserved);
  void publish_reserved_columns();
  void release_reserved();
  uint64_t table_rows(const char* table);
  void count_rows();
  static int64_t pid_of(int64_t global_tid) { return global_tid & ~int64_t(0xFFFFFF); }

  // --- rows ---
  template <class Source>
  bool time_span(const Source& s, int start_col, TimeNs& start, TimeNs& dur, bool& open);
  bool absolute(int64_t t, TimeNs& out);
  void skip_row(IssueKind kind) {
    store_->issues.add_count(kind, 1);
    ++store_->counts.skipped;
  }
  // The args of a row whose args are a function of it alone (`encode(row, out)`, writing
  // through ArgsText or ArgsText::Fields, at most MaxBytes): encoded on its decoding thread by
  // prepare_args, or here.
  template <size_t MaxBytes, class Source, class Encode>
  uint32_t row_args(const Source& s, const Encode& encode) {
    if constexpr (std::is_same_v<Source, nsys::BatchRow>) {
      if (const nsys::RowBatch::Prepared* r = s.prepared()) {
        std::vector<ArgsBlocks::RecordPlace>& places = record_places(s);
        if (r->base == UINT32_MAX) {
          uint32_t args = args_->append(s.prepared_bytes(), r->fields, r->text);
          places[s.row] = args_->last_record();
          return args;
        }
        // A repeat of an earlier row's record, when that record is in the open block; else this
        // row's record in full, and the base of the rows that repeat the same one after it.
        uint32_t args = args_->append_repeat(places[r->base], s.prepared_bytes(), r->fields, r->text);
        if (args != kNone) return args;
        args = full_args<MaxBytes>(s, encode);
        places[r->base] = args_->last_record();
        return args;
      }
    }
    return full_args<MaxBytes>(s, encode);
  }
  template <size_t MaxBytes, class Source, class Encode>
  uint32_t full_args(const Source& s, const Encode& encode) {
    char record[MaxBytes];
    ArgsText::Fields fields(*args_, record);
    encode(s, fields);
    const ArgsRecordWriter& w = fields.writer();
    return args_->append({record, w.bytes()}, w.fields(), w.text_size());
  }
  // Where each row of a batch put its args record (for the repeats after it), reset at every
  // batch: rows come in order, and a batch's last rowid is not another batch's.
  std::vector<ArgsBlocks::RecordPlace>& record_places(const nsys::BatchRow& s) {
    if (s.batch != places_batch_ || s.batch->last_rowid != places_rowid_) {
      places_batch_ = s.batch, places_rowid_ = s.batch->last_rowid;
      record_places_.assign(s.batch->rows(), ArgsBlocks::RecordPlace{});
    }
    return record_places_;
  }
  template <size_t N, size_t MaxBytes, class Encode>
  std::function<void(nsys::RowBatch&)> prepare_args(const Encode& encode) const {
    return [this, encode](nsys::RowBatch& b) {
      size_t rows = b.rows();
      if (b.prepared.size() < rows * MaxBytes) b.prepared.resize(rows * MaxBytes);
      b.prepared_rows.resize(rows);
      size_t used = 0;
      for (size_t i = 0; i < rows; ++i) {
        ArgsText::Fields fields(*args_, b.prepared.data() + used);
        encode(nsys::BatchRow{&b.values[i * N], &b.present[i * N]}, fields);
        const ArgsRecordWriter& w = fields.writer();
        used += w.bytes();
        b.prepared_rows[i] = {uint32_t(used), w.fields(), uint32_t(w.text_size())};
      }
    };
  }
  std::function<void(nsys::RowBatch&)> prepare_kernel_args() const;
  bool read_runtime();
  bool read_osrt();
  bool read_nvtx_names();
  bool read_nvtx();
  bool read_kernels();
  bool read_memcpy();
  bool read_memset();
  bool read_sync();
  bool read_graphs();
  bool read_gpu_metrics();
  bool read_memory_usage();
  void add_memory_rows();  // after finish(): memory_rows_ rebased into the store's memory table
  std::vector<MemoryEvents::Row> memory_rows_;  // absolute times until add_memory_rows
  struct GpuRow {
    TimeNs start = 0, dur = 0;
    int64_t device = 0, context = 0, stream = -1, global_pid = 0;
    std::optional<int64_t> correlation;
  };
  template <class Source>
  bool gpu_row(const Source& s, GpuRow& row);
  void gpu_args(const GpuRow& row);
  void add_gpu(const GpuRow& row, StringId name, StringId cat, uint32_t args);
  uint32_t owned_stream_track(const GpuRow& row);
  std::string stream_owner_name(int64_t stream, int64_t global_pid, int64_t context) const;
  void group_streams_by_context();
  bool has_gpu_work(uint32_t track) const { return track < gpu_work_tracks_.size() && gpu_work_tracks_[track]; }
  bool note_tables();
  void progress();
  void report_progress();
  void check_cancel();

  sqlite3* db_;
  LoadOptions options_;
  uint64_t bytes_;
  LoadError error_;
  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TraceBuilder> builder_;
  std::unique_ptr<ArgsText> args_;
  std::unordered_map<std::string, std::vector<std::string>> columns_;  // table → its columns
  std::unordered_map<std::string, std::vector<nsys::ValueKind>> column_kinds_;  // by its declared type
  std::unordered_set<std::string> keyed_tables_;  // with a key that is not the rowid
  std::vector<std::string> table_order_;
  std::vector<std::string> unreadable_;  // tables skipped for want of a column, with why
  std::string schema_unknown_;            // why the export's schema version is not known ("" if it is)
  std::unique_ptr<DatabaseImage> image_;  // for the direct reader, made on first use
  std::unordered_map<std::string, OpenedReader> readers_;  // by table, opened on first use
  std::string reader_notes_;              // how each big table was read (SIGHTLINE_TIMING)
  std::string direct_stop_;               // where the direct reader stopped, for error messages
  double decoding_cpu_seconds_ = 0, thread_cpu_at_start_ = 0;  // SIGHTLINE_TIMING
  TimeNs session_ns_ = 0;  // UTC of the session start: nsys times are ns since it
  uint64_t rows_ = 0;
  const char* phase_ = "reading";
  uint64_t event_tables_ = 0, tables_done_ = 0;  // scans of event tables, for progress

  // StringIds: dense ids in a vector, sparse ones in a map. Each string is interned when a row
  // first names it (string_id_slow): until then, its bytes wait in raw_strings_. A report's
  // StringIds also holds what Sightline does not show (CPU sampling's symbols and modules, often
  // most of it): interning 500k such strings took 0.1 s, and they stayed in the store.
  std::vector<StringId> strings_;
  std::unordered_map<int64_t, StringId> sparse_strings_;
  struct RawString {
    const char* data = nullptr;
    uint32_t size = kNone;  // kNone: no such id
  };
  std::vector<std::unique_ptr<char[]>> raw_blocks_;  // 4 MB each (or one string's), never moved
  char* raw_next_ = nullptr;                         // the free bytes at the end of the last block
  size_t raw_left_ = 0;
  std::vector<RawString> raw_dense_;                 // by id, like strings_
  std::unordered_map<int64_t, RawString> raw_sparse_;
  std::unordered_map<int64_t, StringId> api_names_;
  std::vector<StringId> api_dense_;  // by StringIds id, like strings_

  struct ProcessInfo {
    int64_t pid;
    std::string name;
  };
  std::unordered_map<int64_t, ProcessInfo> process_info_;  // globalPid → PROCESSES row
  std::unordered_map<int64_t, int64_t> thread_names_;      // globalTid → StringIds id
  std::unordered_map<int64_t, uint32_t> host_processes_;   // globalPid → store process
  std::unordered_map<int64_t, uint32_t> thread_tracks_;    // globalTid → track
  int64_t last_tid_ = 0;
  uint32_t last_track_ = kNone;
  std::unordered_map<int64_t, std::string> device_names_;
  std::unordered_map<int64_t, uint32_t> device_processes_;
  std::unordered_map<uint64_t, uint32_t> stream_tracks_;   // device << 32 ^ stream → track
  uint64_t last_stream_key_ = 0;                           // the last found, as thread_track keeps
  uint32_t last_stream_track_ = kNone;
  std::vector<bool> gpu_work_tracks_;                      // by track: a stream track with more than syncs
  struct StreamOwner {
    int64_t global_pid = 0, context = 0;
    bool set = false;
  };
  std::vector<StreamOwner> stream_owners_;                 // by track: whose stream it is
  std::map<std::tuple<uint32_t, int64_t, int64_t>, uint32_t> shared_streams_;  // (track, owner) → its own track
  std::unordered_map<int64_t, int64_t> correlation_space_; // globalPid → ordinal
  int64_t last_space_pid_ = 0, last_space_ = -1;
  LaunchKeys launches_;                                    // correlation key → its first API call
  UnlaunchedKeys unlaunched_;                              // correlation key → row, with no API call
  // Rows the event tables hold (leaf cell counts), for reserving the store's columns up front.
  uint64_t host_rows_ = 0, gpu_rows_ = 0;
  bool host_track_reserved_ = false, gpu_track_reserved_ = false;
  std::vector<uint32_t> reserved_tracks_;
  PagesAhead pages_ahead_;  // the reserved columns' next pages, faulted in by the decoding thread
  std::vector<ArgsBlocks::RecordPlace> record_places_;  // row_args: by row of the batch being read
  const nsys::RowBatch* places_batch_ = nullptr;
  int64_t places_rowid_ = 0;
  std::unordered_map<uint64_t, std::string> nvtx_domains_, nvtx_categories_;
  std::map<std::pair<uint32_t, uint64_t>, uint32_t> nvtx_async_;  // (process, domain) → track
  StringId cat_runtime_ = 0, cat_driver_ = 0, cat_kernel_ = 0, cat_memcpy_ = 0, cat_memset_ = 0, cat_sync_ = 0;
  StringId cat_annotation_ = 0, cat_osrt_ = 0, cat_graph_ = 0;
};

// ---------------------------------------------------------------- shared by the loader's files

// Defined here rather than with their part: every file that reads a table instantiates the scans,
// and the row readers (nsys_host_rows.cpp, nsys_gpu_rows.cpp) inline the placement and time
// helpers below per row, as they did when the loader was one file.

inline void NsysLoader::progress() {
  if (++rows_ % kProgressEvery) return;
  report_progress();
  check_cancel();
}

template <size_t N>
std::string NsysLoader::select(std::string_view table, const char* const (&columns)[N]) const {
  std::string sql = "SELECT ";
  for (size_t i = 0; i < N; ++i) {
    if (i) sql += ", ";
    sql += has_column(table, columns[i]) ? quote_identifier(columns[i]) : std::string("NULL");
  }
  return sql + " FROM " + quote_identifier(table);
}

template <class Row>
bool NsysLoader::scan(std::string_view table, const std::string& sql, Row&& row) {
  Statement s(db_, sql);
  if (!s.prepared()) return sql_fail("reading " + std::string(table));
  bool events = is_event_table(table);
  if (events) {
    phase_ = table.data();  // every caller passes a literal
    report_progress();
    check_cancel();
    if (!error_.message.empty()) return false;
  }
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    row(s);
    progress();
    if (!error_.message.empty()) return false;
  }
  tables_done_ += events;
  return rc == SQLITE_DONE || sql_fail("reading " + std::string(table));
}

// Batches of this many leaf pages (of 4 KiB in nsys exports: ~4000 runtime rows, ~1000 kernels).
constexpr size_t kPagesPerBatch = 64;

template <size_t N, class Row>
bool NsysLoader::scan_direct(const char* table, const char* const (&columns)[N], Row&& row,
                             const std::function<void(nsys::RowBatch&)>& prepare) {
  std::string sql = select(table, columns);
  std::optional<nsys::TableReader> reader = direct_reader(table, columns, N);
  if (!reader) {
    // Damage found in the tree is where SQLite's error on the table, if it fails too, points.
    if (const OpenedReader& opened = readers_[table]; opened.damaged) direct_stop_ = opened.why;
    return scan(table, sql, row);
  }
  bool events = is_event_table(table);
  if (events) phase_ = table;
  report_progress();
  check_cancel();
  if (!error_.message.empty()) return false;
  uint64_t fed = 0;
  int64_t last_rowid = 0;
  auto feed = [&](const nsys::RowBatch& batch) {
    for (size_t i = 0, rows = batch.rows(); i < rows; ++i) {
      row(nsys::BatchRow{&batch.values[i * N], &batch.present[i * N], &batch, i});
      progress();
      if (!error_.message.empty()) return false;
    }
    if (batch.rows()) fed += batch.rows(), last_rowid = batch.last_rowid;
    publish_reserved_columns();
    return true;
  };
  // A decoding thread per core but the one building the store (at least one, at most three):
  // more, and batches wait for one another's turn (handed over in order) while the threads take
  // turns on the cores (two decoding threads on 2 cores: the kernel-heavy report's kernels 4%
  // slower).
  const size_t cores = usable_cores();
  nsys::BackgroundDecoding how;
  how.threads = std::clamp<size_t>(cores - 1, 1, 3);
  how.prepare = prepare;
  how.spare_work = [&] { return pages_ahead_.fault_next(); };
  how.cpu_seconds = &decoding_cpu_seconds_;
  std::string stop = nsys::decode_in_background(*reader, N, kPagesPerBatch, feed, how);
  if (!error_.message.empty()) return false;
  if (stop.empty()) {
    tables_done_ += events;
    note_reader(table, "direct, " + std::to_string(fed) + " rows of " + std::to_string(N) + " columns from " +
                           std::to_string(reader->leaf_count()) + " leaf pages");
    return true;
  }
  // Rows come in rowid order on both paths: SQLite's API goes on after the last row decoded.
  direct_stop_ = stop;
  note_reader(table, "direct for " + std::to_string(fed) + " rows, then SQLite's API: stopped at " + stop);
  return scan(table, fed ? sql + " WHERE rowid > " + std::to_string(last_rowid) : sql, row);
}

// ---------------------------------------------------------------- placement

inline uint32_t NsysLoader::stream_track(int64_t device, int64_t stream) {
  uint64_t key = uint64_t(device) << 32 ^ uint64_t(stream);
  if (key == last_stream_key_ && last_stream_track_ != kNone) return last_stream_track_;
  auto it = stream_tracks_.find(key);
  if (it != stream_tracks_.end()) return last_stream_key_ = key, last_stream_track_ = it->second;
  uint32_t track = builder_->thread_track(device_process(device), std::to_string(stream), stream);
  reserve_track(track, gpu_rows_, gpu_track_reserved_);
  builder_->mark_gpu(track, device, stream);
  builder_->set_thread_name(track, store_->strings.intern(stream >= 0 ? "stream " + std::to_string(stream)
                                                                      : std::string("context-wide")));
  builder_->set_thread_sort_index(track, stream);
  stream_tracks_[key] = track;
  return track;
}

// CUPTI correlation ids count from 1 in every process: the first process keeps its ids, the
// others get theirs offset by ordinal × 2^32, so launches never link across processes.
inline int64_t NsysLoader::correlation_key(int64_t global_pid, int64_t id) {
  if (global_pid != last_space_pid_ || last_space_ < 0) {
    auto [it, added] = correlation_space_.try_emplace(global_pid, int64_t(correlation_space_.size()));
    last_space_pid_ = global_pid;
    last_space_ = it->second;
  }
  return last_space_ == 0 ? id : (last_space_ << 32) | (id & 0xFFFFFFFF);
}

// The correlation row of a key whose first API call is `launch`: made when its first GPU
// activity comes, and given to the API calls of the key then (their slices were appended without
// one). Only calls that launched GPU work join the correlation table: the links are the same, and
// millions of other calls (cudaMalloc, cuGetProcAddress, ...) cost nothing there.
inline uint32_t NsysLoader::launched_correlation(int64_t key, SlicePlace launch) {
  uint32_t& corr = store_->tracks[launch.track].slices.corr[launch.row];
  if (corr != kNone) return corr;
  uint32_t row = builder_->new_correlation(key);
  corr = row;
  for (SlicePlace later : launches_.later_calls(key)) store_->tracks[later.track].slices.corr[later.row] = row;
  return row;
}

// The correlation row of a key no API call has, made on first use.
inline uint32_t NsysLoader::unlaunched_correlation(int64_t key) {
  uint32_t row = unlaunched_.find(key);
  if (row == kNone) unlaunched_.insert(key, row = builder_->new_correlation(key));
  return row;
}

// ---------------------------------------------------------------- rows

inline bool NsysLoader::absolute(int64_t t, TimeNs& out) {
  if (__builtin_add_overflow(t, session_ns_, &out) || out > kMaxAbsNs || out < -kMaxAbsNs) {
    skip_row(IssueKind::TimestampOutOfRange);
    return false;
  }
  return true;
}

// Columns start_col and start_col + 1 are start and end. A missing end leaves `open` set.
template <class Source>
bool NsysLoader::time_span(const Source& s, int start_col, TimeNs& start, TimeNs& dur, bool& open) {
  std::optional<int64_t> begin = s.opt(start_col), finish = s.opt(start_col + 1);
  if (!begin) return skip_row(IssueKind::MissingField), false;
  if (!absolute(*begin, start)) return false;
  open = !finish;
  dur = 0;
  if (open) return true;
  TimeNs end = 0;
  if (!absolute(*finish, end)) return false;
  dur = end - start;
  if (dur < 0) store_->issues.add_count(IssueKind::NegativeDuration, 1), dur = 0;
  return true;
}

}  // namespace sl::nsys_detail
