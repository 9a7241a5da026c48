// What every importer returns: a TraceStore, or an error that says where (file, byte offset,
// line and column), with the progress and cancellation every loader takes. No file is read here.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/store/trace_store.h"

namespace sl {

struct LoadProgress {
  uint64_t bytes_done = 0;   // of the uncompressed JSON
  uint64_t bytes_total = 0;
  uint64_t events = 0;
  const char* phase = "";    // "reading", "decompressing", "parsing", "linking"
};

struct LoadOptions {
  // Called from the loading thread every few MB; keep it cheap.
  std::function<void(const LoadProgress&)> on_progress;
  // Set to true from any thread to stop loading; load_trace then fails with `cancelled`.
  const std::atomic<bool>* cancel = nullptr;
  // open_trace: every track's slice columns back to back once loaded (TraceStore::
  // pack_slice_columns), for a reader of whole-trace columns (the Python module) to take them
  // as they are; before the cache write starts, which reads the store from another thread.
  bool pack_slices = false;
  // Kineto JSON: the args of complete slices whose (name, category) this accepts are also kept
  // as plain text beside the compressed blocks (TraceStore::keep_args_text), for a reader of only
  // those (a fleet map's collective calls) not to decompress most blocks for them. Asked once
  // per distinct slice name, with the category it first comes with: a slice not kept still
  // reads its args from the blocks, so the answer costs speed, never correctness.
  std::function<bool(std::string_view name, std::string_view cat)> keep_args_text;
};

struct LoadError {
  std::string file;
  std::string message;  // what went wrong
  uint64_t byte_offset = 0;  // into the uncompressed JSON
  uint64_t line = 0, column = 0;  // 1-based, 0 when unknown
  bool cancelled = false;
  std::string to_string() const;  // "FILE: byte N (line L, column C): MESSAGE"
};

struct LoadResult {
  std::unique_ptr<TraceStore> store;  // null on error
  LoadError error;
  // Non-empty when the trace loaded but the user should know something first (a cut-off file):
  // "FILE: this trace ends at byte N: ...". The CLI prints it on stderr as one line.
  std::string warning;
  double seconds = 0;
  bool ok() const { return store != nullptr; }
};

}  // namespace sl
