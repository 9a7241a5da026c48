// Nsight Systems SQLite export → TraceStore. See nsys_loader.h for the mapping.
//
// Reading: the database is opened read-only in place (a `.sqlite.gz` is first decompressed to a
// temporary file, removed afterwards). Columns are looked up with PRAGMA table_info, never
// assumed: a column a schema version lacks is selected as NULL, so one query shape serves
// nsys 2024.6 (schema 3.16) and 2025.1 (schema 3.17) alike. Each event table is scanned once
// with a prepared statement; strings come from StringIds, interned once each.
//
// Order of the rows as they would sit in a Kineto file (what `--mode hta` sees as file order):
// host events first (CUDA API, OS runtime, NVTX), then GPU activities, each in table order.
//
// This file runs the load. The loader's parts are beside it: the class (nsys_loader_class.h), the
// schema and how tables are read (nsys_schema.cpp), the reference tables
// (nsys_reference_tables.cpp), the host rows (nsys_host_rows.cpp) and GPU rows (nsys_gpu_rows.cpp).
#include "core/import/nsys/nsys_loader.h"

#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "core/import/nsys/nsys_loader_class.h"
#include "core/import/nsys/nsys_sqlite.h"

namespace sl {
namespace nsys_detail {

LoadResult NsysLoader::run() {
  auto t0 = std::chrono::steady_clock::now();
  LoadResult result;
  bool ok = false;
  try {
    ok = load();
  } catch (const std::bad_alloc&) {
    ok = fail("out of memory");
  }
  if (ok) {
    result.store = std::move(store_);
  } else {
    result.error = error_;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

bool NsysLoader::load() {
  auto started = std::chrono::steady_clock::now();
  timespec cpu{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  thread_cpu_at_start_ = double(cpu.tv_sec) + double(cpu.tv_nsec) * 1e-9;
  store_ = std::make_unique<TraceStore>();
  builder_ = std::make_unique<TraceBuilder>(*store_);
  // No JSON text (meta.hta.from_text stays false): HTA mode takes the rank from the metadata
  // instead of a regex over args.
  args_ = std::make_unique<ArgsText>(*store_, *builder_);
  store_->meta.format = "nsys-sqlite";
  store_->meta.file = error_.file;
  store_->meta.bytes = bytes_;
  StringPool& s = store_->strings;
  cat_runtime_ = s.intern("cuda_runtime");
  cat_driver_ = s.intern("cuda_driver");
  cat_kernel_ = s.intern("kernel");
  cat_memcpy_ = s.intern("gpu_memcpy");
  cat_memset_ = s.intern("gpu_memset");
  cat_sync_ = s.intern("cuda_sync");
  cat_annotation_ = s.intern("user_annotation");
  cat_osrt_ = s.intern("os_runtime");
  cat_graph_ = s.intern("cuda_graph");
  builder_->flows_from_launches(s.intern("ac2g"));  // a launch's flows, as Kineto's

  if (!read_schema() || !check_export()) return false;
  // Every scan of an event table: each once, NVTX's names.
  for (const char* t : kEventTables) event_tables_ += has_table(t) * (std::string_view(t) == "NVTX_EVENTS" ? 2 : 1);
  if (!read_strings() || !read_session_start() || !read_devices() || !read_processes() || !read_threads()) return false;
  count_rows();
  // Host side first (launches must be known before the GPU rows that name them).
  seed_correlation_spaces();
  auto t1 = std::chrono::steady_clock::now();
  if (!read_runtime() || !read_osrt() || !read_nvtx()) return false;
  launches_.seal();
  auto t2 = std::chrono::steady_clock::now();
  if (!read_kernels() || !read_memcpy() || !read_memset() || !read_sync() || !read_graphs()) return false;
  if (!read_gpu_metrics() || !read_memory_usage()) return false;
  auto t3 = std::chrono::steady_clock::now();
  // As for Kineto files, a track holding only syncs (context-wide ones on tid -1) is a GPU track
  // but not GPU work: it is not counted among the streams.
  for (auto [key, track] : stream_tracks_)
    if (!has_gpu_work(track)) store_->tracks[track].gpu_work = false;
  for (auto [key, track] : shared_streams_)
    if (!has_gpu_work(track)) store_->tracks[track].gpu_work = false;
  group_streams_by_context();
  if (!note_tables()) return false;
  release_reserved();
  args_.reset();  // seals the last args block
  auto t4 = std::chrono::steady_clock::now();
  // Nothing reads the file's bytes after the tables: their pages are unmapped (~10 ms for a
  // 200 MB export) on a thread of their own while finish() runs.
  readers_.clear();
  std::jthread unmap([image = std::move(image_)]() mutable { image.reset(); });
  builder_->finish();
  add_memory_rows();
  if (std::getenv("SIGHTLINE_TIMING")) {
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    timespec cpu{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    std::fprintf(stderr, "%snsys: schema and reference tables %.1f ms, host tables %.1f ms, GPU tables %.1f ms, finish %.1f ms\n"
                 "nsys: CPU of this thread %.1f ms, of the decoding threads %.1f ms\n",
                 reader_notes_.c_str(), ms(started, t1), ms(t1, t2), ms(t2, t3), ms(t4, std::chrono::steady_clock::now()),
                 (double(cpu.tv_sec) + double(cpu.tv_nsec) * 1e-9 - thread_cpu_at_start_) * 1e3,
                 decoding_cpu_seconds_ * 1e3);
  }
  return true;
}

// The bytes read are not known: "done" advances by event table (a fraction of the file size), the
// phase names the table being read.
void NsysLoader::report_progress() {
  if (!options_.on_progress) return;
  LoadProgress p;
  p.phase = phase_;
  p.events = rows_;
  p.bytes_total = bytes_;
  p.bytes_done = event_tables_ ? bytes_ * std::min(tables_done_, event_tables_) / event_tables_ : 0;
  options_.on_progress(p);
}

void NsysLoader::check_cancel() {
  if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
    error_.cancelled = true;
    fail("cancelled");
  }
}

}  // namespace nsys_detail

namespace nsys {

LoadResult load_database(sqlite3* db, const std::string& shown, uint64_t bytes, const LoadOptions& options) {
  return nsys_detail::NsysLoader(db, shown, bytes, options).run();
}

}  // namespace nsys
}  // namespace sl
