// Internals shared by the Nsight Systems reader (nsys_loader.cpp) and the file handling around
// it (nsys_files.cpp): SQLite handles and statements, the columns read, temporary files.
#pragma once

#include <sqlite3.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/store/load_result.h"

namespace sl::nsys {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;

class Statement {
public:
  Statement(sqlite3* db, const std::string& sql) { rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool prepared() const { return rc_ == SQLITE_OK && stmt_; }
  // SQLITE_ROW while there are rows, SQLITE_DONE at the end, an error code otherwise.
  int step() { return rc_ = sqlite3_step(stmt_); }
  void bind(int index, std::string_view text) {
    sqlite3_bind_text(stmt_, index, text.data(), int(text.size()), SQLITE_TRANSIENT);
  }
  bool null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  int64_t i64(int c) const { return sqlite3_column_int64(stmt_, c); }
  int columns() const { return sqlite3_column_count(stmt_); }
  double f64(int c) const { return sqlite3_column_double(stmt_, c); }
  // One API call per column where null() then i64() make two (the loader's hot path).
  std::optional<int64_t> opt(int c) const {
    sqlite3_value* v = sqlite3_column_value(stmt_, c);
    return sqlite3_value_type(v) == SQLITE_NULL ? std::nullopt : std::optional<int64_t>(sqlite3_value_int64(v));
  }
  std::string_view text(int c) const {
    const unsigned char* p = sqlite3_column_text(stmt_, c);  // before _bytes, as SQLite asks
    return p ? std::string_view(reinterpret_cast<const char*>(p), size_t(sqlite3_column_bytes(stmt_, c)))
             : std::string_view();
  }

private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

// `"name"` with inner quotes doubled: a safe SQL identifier.
std::string quote_identifier(std::string_view name);

// Opens read-only, with defensive settings (the file is untrusted input).
Db open_database(const std::string& path, std::string& error);
// The same settings on a handle already open (an in-memory database).
void harden(sqlite3* db);

// A temporary copy of a decompressed `.sqlite.gz` (or a `.nsys-rep` exported with the cache off),
// removed when this goes out of scope.
class TempFile {
public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  // Creates a new, empty file in $TMPDIR (or /tmp), for a program to write over.
  bool create(std::string& error);
  // Writes `bytes` to a new file in $TMPDIR (or /tmp).
  bool write(std::string_view bytes, std::string& error);
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

// Common leading columns of the GPU activity tables.
inline constexpr const char* kGpuColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid"};
inline constexpr const char* kKernelColumns[] = {
    "start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
    "demangledName", "shortName", "mangledName", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
    "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "localMemoryPerThread",
    "localMemoryTotal", "sharedMemoryExecuted", "gridId", "graphNodeId", "launchType"};
inline constexpr const char* kRuntimeColumns[] = {"start", "end", "eventClass", "globalTid", "correlationId", "nameId",
                                           "returnValue"};

// Reads an open Nsight export into a store; `shown` names the file in messages.
LoadResult load_database(sqlite3* db, const std::string& shown, uint64_t bytes, const LoadOptions& options);

}  // namespace sl::nsys
