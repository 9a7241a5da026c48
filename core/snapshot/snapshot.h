// Native snapshot files of a finished TraceStore: versioned, checksummed, read back without
// parsing JSON. The layout is described in core/snapshot/SNAPSHOT.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/store/load_result.h"
#include "core/store/trace_store.h"

namespace sl {

inline constexpr char kSnapshotMagic[8] = {'S', 'L', 'S', 'N', 'A', 'P', '\r', '\n'};
inline constexpr uint32_t kSnapshotVersion = 3;

// True when `head` (the first bytes of a file) starts with the snapshot magic.
bool is_snapshot_magic(std::string_view head);
// True when the file at `path` is a snapshot (reads its first 8 bytes).
bool is_snapshot_file(const std::string& path);

// The whole snapshot of `store`, as bytes.
std::string snapshot_bytes(const TraceStore& store);
// Writes `store` to `path` atomically (a temporary file beside it, then rename); on failure
// returns the reason and leaves no file behind. Empty on success.
std::string write_snapshot(const TraceStore& store, const std::string& path);
// The same with the bytes of snapshot_bytes(), so that the store is free again while they are
// written and synced.
std::string write_snapshot_bytes(std::string_view bytes, const std::string& path);

// Recomputes the size and every checksum of a (damaged) snapshot in place, so that fuzzing and
// tests reach the section readers and consistency checks behind the checksums.
void reseal_snapshot(std::string& bytes);

// Reads a snapshot from memory / a file. A bad snapshot gives an error naming what is wrong
// and its byte offset in the file (LoadError::byte_offset), never a partial store.
LoadResult read_snapshot_bytes(std::string_view bytes, const std::string& name);
LoadResult load_snapshot(const std::string& path);

}  // namespace sl
