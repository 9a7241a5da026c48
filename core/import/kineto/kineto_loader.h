// The Chrome Trace Event / Kineto JSON importer: `.json` or `.json.gz` on disk, or JSON text in
// memory. load_trace (core/import/trace_loader.h) calls it for every file that is not a report
// or a snapshot.
#pragma once

#include <string>
#include <string_view>

#include "core/store/load_result.h"

namespace sl {

// Reads a `.json` or `.json.gz` Chrome/Kineto trace (gzip decompressed while it is parsed).
LoadResult load_kineto_file(const std::string& path, const LoadOptions& options = {});
// Parses JSON text already in memory (tests, fuzzing); `name` is used in messages.
LoadResult load_trace_text(std::string_view json, const std::string& name = "<memory>",
                           const LoadOptions& options = {});

}  // namespace sl
