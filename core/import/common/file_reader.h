// Reads a trace file into one padded buffer, decompressing gzip (every member) on the way.
#pragma once

#include <memory>
#include <string>

#include "core/import/common/gzip_stream.h"
#include "core/store/load_result.h"
#include "core/store/trace_store.h"

namespace sl {

struct FileBytes {
  std::shared_ptr<TraceStore::Buffer> buffer;  // null on error
  bool was_gzip = false;
  // The gzip stream stops early (a file cut off mid-write): `buffer` holds what decompressed, and
  // `gzip_cut_at` is the compressed size at which the stream stops.
  bool gzip_truncated = false;
  uint64_t gzip_cut_at = 0;
  std::string error;
  // With `stream_gzip`, a gzip file on disk is decompressed while it is read: `buffer` is the
  // stream's text (GzipStream), whose size is known only once the stream ends.
  std::unique_ptr<GzipStream> stream;
};

FileBytes read_trace_file(const std::string& path, const LoadOptions& options, bool stream_gzip = false);

// Decompresses concatenated gzip members; `error` says what failed and at which input byte.
// With `cut_at`, a stream that merely stops early is not an error: `out` keeps every byte that
// decompresses and `*cut_at` becomes the compressed size (it stays 0 for a whole stream).
bool gunzip(std::string_view compressed, TraceStore::Buffer& out, std::string& error, uint64_t* cut_at = nullptr);

}  // namespace sl
