// Helpers shared by the unit tests: loading inline JSON, finding the shared corpus.
#pragma once

#include <doctest/doctest.h>

#include <libdeflate.h>
#include <sys/resource.h>

#include <csignal>

#include <filesystem>
#include <string>

#include "core/import/kineto/kineto_loader.h"
#include "core/import/trace_loader.h"

namespace sl::test {

inline std::unique_ptr<TraceStore> load_ok(std::string_view json) {
  LoadResult r = load_trace_text(json, "test.json");
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  return std::move(r.store);
}

inline LoadError load_error(std::string_view json) {
  LoadResult r = load_trace_text(json, "bad.json");
  REQUIRE_FALSE(r.ok());
  return r.error;
}

// Runs `f` as if the disk filled up after `bytes` of any file: RLIMIT_FSIZE makes writes past it
// fail with EFBIG, as they fail with ENOSPC on a full disk (no root or small tmpfs needed).
template <class F>
auto with_file_size_limit(uint64_t bytes, F&& f) {
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // else the process is killed at the limit
  rlimit limited = saved;
  limited.rlim_cur = bytes;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &limited) == 0);
  auto result = f();
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  return result;
}

// The shared corpus lives beside the repo; tests that need it skip (with a message) without it.
inline std::filesystem::path shared_dir() { return SIGHTLINE_SHARED_DIR; }
inline bool have_shared() {
  bool present = std::filesystem::exists(shared_dir() / "corpus" / "MANIFEST.tsv");
  if (!present) MESSAGE("skipped: ../shared is absent (" << SIGHTLINE_SHARED_DIR << ")");
  return present;
}
inline std::string test_data(const char* name) { return std::string(SIGHTLINE_TEST_DATA) + "/" + name; }

// Calls f(file name, store) for every Kineto trace at the top of the shared corpus (`*.json.gz`);
// returns how many, 0 (with the skip message) when ../shared is absent.
template <class F>
size_t for_each_corpus_trace(F&& f) {
  if (!have_shared()) return 0;
  size_t traces = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shared_dir() / "corpus")) {
    const std::string path = entry.path().string();
    if (!path.ends_with(".json.gz")) continue;
    LoadResult loaded = load_trace(path);
    REQUIRE_MESSAGE(loaded.ok(), loaded.error.to_string());
    f(entry.path().filename().string(), *loaded.store);
    ++traces;
  }
  return traces;
}

// The first slice named `name` anywhere in the store.
inline SliceRef find_slice(const TraceStore& store, std::string_view name) {
  StringId id = store.strings.find(name);
  if (id == StringPool::kNotFound) return {};
  auto refs = store.slices_named(id);
  return refs.empty() ? SliceRef{} : refs.front();
}

// `text` as one gzip member, for tests of the gzip paths.
inline std::string gzip(std::string_view text) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(6);
  std::string out(libdeflate_gzip_compress_bound(c, text.size()), '\0');
  out.resize(libdeflate_gzip_compress(c, text.data(), text.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

}  // namespace sl::test
