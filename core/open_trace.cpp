// open_trace: a valid cache entry instead of the file, else the importer, then the cache write.
#include "core/open_trace.h"

#include "core/snapshot/snapshot.h"
#include "core/store/import_issues.h"

namespace sl {
namespace {

// What a store read from the cache lacks: the path as given this time, and the cut-off
// warning the loader gives (the snapshot keeps the truncation record, not the message).
void present_as_loaded(LoadResult& r, const std::string& path) {
  r.store->meta.file = path;
  if (r.store->issues.truncation) r.warning = path + ": " + describe(*r.store->issues.truncation);
}

}  // namespace

std::string_view trace_origin_name(TraceOrigin origin) {
  switch (origin) {
    case TraceOrigin::Source: return "trace file";
    case TraceOrigin::Snapshot: return "snapshot file";
    case TraceOrigin::Cache: return "cache";
  }
  return "?";
}

OpenedTrace open_trace(const std::string& path, const LoadOptions& options, const CacheSettings& cache, bool write_now) {
  OpenedTrace out;
  bool snapshot = is_snapshot_file(path);
  if (snapshot) out.origin = TraceOrigin::Snapshot;
  std::optional<CacheKey> key = cache.enabled && !snapshot ? cache_key_of(path) : std::nullopt;
  if (key) {
    std::string stem = cache_entry_stem(key->path);
    if (auto cached = read_cache_entry(cache, *key, stem, out.notices)) {
      out.loaded = std::move(*cached);
      present_as_loaded(out.loaded, path);
      if (options.pack_slices) out.loaded.store->pack_slice_columns();
      out.origin = TraceOrigin::Cache;
      out.cache_entry = cache_snapshot_path(cache, stem);
      return out;
    }
  }
  out.loaded = load_trace(path, options);
  if (options.pack_slices && out.loaded.ok()) out.loaded.store->pack_slice_columns();
  if (!key || !out.loaded.ok()) return out;
  out.cache_entry = cache_snapshot_path(cache, cache_entry_stem(key->path));
  if (!write_now) {
    out.write.start(*out.loaded.store, std::move(*key), cache);
  } else {
    out.write_warning = write_cache_entry(*out.loaded.store, *key, cache);
  }
  return out;
}

}  // namespace sl
