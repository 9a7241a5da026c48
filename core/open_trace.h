// Opening a trace as every command and the GUI do: through the snapshot cache when it is on
// (core/snapshot/snapshot_cache.h), else by the importer load_trace picks (core/import/trace_loader.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/import/trace_loader.h"
#include "core/snapshot/snapshot_cache.h"

namespace sl {

// Where an opened store came from.
enum class TraceOrigin : uint8_t {
  Source,    // parsed from the trace file (JSON or Nsight report)
  Snapshot,  // a snapshot file given directly (never cached again)
  Cache,     // the cached snapshot of the trace
};
std::string_view trace_origin_name(TraceOrigin origin);  // "trace file", "snapshot file", "cache"

struct OpenedTrace {
  LoadResult loaded;
  TraceOrigin origin = TraceOrigin::Source;
  std::string cache_entry;            // the snapshot in the cache (read, or being written)
  std::vector<std::string> notices;   // one line each: a cached entry discarded and why
  std::string write_warning;          // with `write_now`: why nothing was cached ("" if it was)
  PendingCacheWrite write;            // last: destroyed first, so it waits before the store goes
};

// Opens `path` like load_trace, through the cache: a valid entry is read instead of the file;
// a stale (source changed), corrupted or other-version entry is deleted, noted once in
// `notices`, and the file is loaded. After a load from the source, the snapshot is written in
// the background (`write`) unless `write_now`, which writes before returning (a failure in
// `write_warning`). With the cache off this is load_trace.
OpenedTrace open_trace(const std::string& path, const LoadOptions& options = {},
                       const CacheSettings& cache = process_cache_settings(), bool write_now = false);

}  // namespace sl
