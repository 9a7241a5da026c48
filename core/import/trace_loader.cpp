// The dispatcher: which importer reads a file, decided by its content (magic bytes) and, where
// the content cannot tell, by its name. The Kineto loader never sees reports or snapshots.
#include "core/import/trace_loader.h"

#include <filesystem>
#include <optional>

#include "core/import/kineto/kineto_loader.h"
#include "core/import/memory_snapshot/memory_snapshot_loader.h"
#include "core/import/nsys/nsys_loader.h"
#include "core/snapshot/snapshot.h"

namespace sl {

// An empty file named as a snapshot or an SQLite export (a convert or `nsys export` that wrote
// nothing) would otherwise get the JSON loader's "expected a JSON object" message.
static std::optional<std::string> empty_non_json_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::file_size(path, ec) != 0 || ec) return std::nullopt;
  if (path.ends_with(".slsnap")) return "empty file: a Sightline snapshot starts with its header (was its write cut short?)";
  if (path.ends_with(".sqlite"))
    return "empty file: an Nsight Systems SQLite export starts with \"SQLite format 3\" (was the export cut short?)";
  return std::nullopt;
}

LoadResult load_trace(const std::string& path, const LoadOptions& options) {
  // Nsight Systems reports (SQLite by magic bytes, .sqlite.gz and .nsys-rep by name).
  if (NsysFileKind kind = nsys_file_kind(path); kind != NsysFileKind::NotNsys) return load_nsys(path, kind, options);
  if (is_snapshot_file(path)) return load_snapshot(path);  // `sightline convert` output, by magic
  // PyTorch memory snapshots: a pickle (PROTO 2..5) where a JSON trace starts with `{` or `[`.
  if (is_memory_snapshot_file(path)) return load_memory_snapshot(path, options);
  if (std::optional<std::string> reason = empty_non_json_file(path)) {
    LoadResult result;
    result.error.file = path;
    result.error.message = *reason;
    return result;
  }
  return load_kineto_file(path, options);
}

}  // namespace sl
