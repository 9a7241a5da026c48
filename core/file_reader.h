// Reads a trace file into one padded buffer, decompressing gzip (every member) on the way.
#pragma once

#include <memory>
#include <string>

#include "core/trace_loader.h"
#include "core/trace_store.h"

namespace sl {

struct FileBytes {
  std::shared_ptr<TraceStore::Buffer> buffer;  // null on error
  bool was_gzip = false;
  std::string error;
};

FileBytes read_trace_file(const std::string& path, const LoadOptions& options);

// Decompresses concatenated gzip members; `error` says what failed and at which input byte.
bool gunzip(std::string_view compressed, TraceStore::Buffer& out, std::string& error);

}  // namespace sl
