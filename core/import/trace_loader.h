// Loading a trace file into a TraceStore: the public entry point for the CLI, the GUI and tests.
// The dispatcher picks the importer by content: Nsight report, snapshot, else Kineto JSON.
#pragma once

#include <string>

#include "core/store/load_result.h"

namespace sl {

// Reads a `.json` or `.json.gz` Chrome/Kineto trace, an Nsight Systems report (`.sqlite`,
// `.sqlite.gz`, `.nsys-rep`), a Sightline snapshot (`.slsnap`) or a PyTorch memory snapshot (a
// pickle, core/import/memory_snapshot/: a memory-only store).
LoadResult load_trace(const std::string& path, const LoadOptions& options = {});

}  // namespace sl
