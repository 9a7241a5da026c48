// Nsight Systems reports → TraceStore: `.sqlite` exports (schema 3.x), `.sqlite.gz`, and
// `.nsys-rep` through `nsys export` when nsys is installed.
//
// The rows land in the same store the Kineto loader fills, placed and named as Kineto would
// have written them, so every view, analysis, diff and figure works unchanged:
//   CUDA runtime / driver calls  → cat cuda_runtime / cuda_driver on the calling thread
//   kernels, memcpy, memset      → cat kernel / gpu_memcpy / gpu_memset on pid = device, tid = stream
//   synchronisation              → cat cuda_sync on the stream (tid -1: context-wide)
//   NVTX push/pop ranges, marks  → cat user_annotation on the thread (slices, instants)
//   NVTX start/end ranges        → cat user_annotation on an async track per process and domain
//   OS runtime calls (OSRT_API)  → cat os_runtime on the thread
//   GPU metrics (GPU_METRICS)    → counters, in a process per metric set
//   TARGET_INFO_GPU              → devices, with Kineto's deviceProperties keys
// A launch and its GPU work share a correlation id (per process: ids restart in each process)
// and an `ac2g` flow. Times stay integer nanoseconds, shifted by the session's UTC start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/store/load_result.h"
#include "core/text/json_writer.h"

namespace sl {

enum class NsysFileKind : uint8_t { NotNsys, Sqlite, SqliteGz, NsysRep };

// By the first bytes ("SQLite format 3\0"; gzip with a name ending in `.sqlite.gz`) and, for
// `.nsys-rep`, by name. A file that cannot be read is NotNsys: the JSON loader reports it.
NsysFileKind nsys_file_kind(const std::string& path);

// Loads a report of the given kind (from nsys_file_kind).
LoadResult load_nsys(const std::string& path, NsysFileKind kind, const LoadOptions& options = {});

// Loads a SQLite database held in memory (tests, fuzzing); `name` is used in messages.
LoadResult load_nsys_bytes(std::string_view bytes, const std::string& name = "<memory>");

// The yardstick for load speed: a bare SELECT of the columns the loader reads from the kernel
// and runtime tables, stepping every row and reading every column, and nothing else.
struct NsysScan {
  uint64_t rows = 0;
  double seconds = 0;
  std::string error;  // empty on success
};
NsysScan nsys_bare_scan(const std::string& path);

// What an Nsight report holds that is not shown (tables not mapped, with their row counts),
// what it lacks (no CUDA trace, no NVTX, ...) and its schema, from TraceMeta::top_level:
// the `"nsys"` object of `info --format json` (nothing when the trace is not an Nsight report)
// and the matching lines of `info`.
void nsys_info_json(const TraceMeta& meta, JsonWriter& w);
std::string nsys_info_text(const TraceMeta& meta);

}  // namespace sl
