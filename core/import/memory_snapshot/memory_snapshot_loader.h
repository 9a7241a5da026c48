// PyTorch CUDA memory snapshots (`torch.cuda.memory._dump_snapshot(...)`, or
// `pickle.dump(torch.cuda.memory._snapshot())`, usually `.pickle`) → a memory-only TraceStore:
// no tracks, the store's memory table filled from `device_traces` and the final `segments`
// state (core/store/memory_events.h; the schema: `Snapshot`, `Segment`, `Block`, `TraceEntry` in
// torch/cuda/memory.py). Read by the plain-data pickle reader (pickle.h): nothing in the file runs.
#pragma once

#include <string>
#include <string_view>

#include "core/store/load_result.h"

namespace sl {

// Whether the file starts like a pickle of protocol 2 to 5 (0x80, then 2..5).
bool is_memory_snapshot_file(const std::string& path);
LoadResult load_memory_snapshot(const std::string& path, const LoadOptions& options = {});
// The same from bytes in memory; `name` is the file named in errors.
LoadResult read_memory_snapshot_bytes(std::string_view bytes, const std::string& name);

}  // namespace sl
