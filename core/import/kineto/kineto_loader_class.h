// Internal to the Chrome/Kineto JSON loader: the KinetoLoader class and the types it needs, shared
// by kineto_loader.cpp, kineto_scan.cpp, kineto_events.cpp and kineto_sanitize.cpp.
//
// Chrome Trace Event / Kineto JSON → TraceStore.
//
// The top level is walked by a small scanner; the `traceEvents` array is parsed by simdjson
// On-Demand in chunks of about 1 MB. A chunk is made a JSON array in place by writing `[` over
// the byte before its first event and `]` over the comma after its last (both restored
// afterwards), so simdjson's structural index only ever covers one chunk and memory stays
// bounded on multi-GB traces. Chunk boundaries are guessed from `},{` patterns and proven by the
// parse itself: the chunk must close exactly at its `]`, which holds only if the guess was a
// real boundary between events. If a guess fails, the whole trace is parsed again as one piece,
// so a bad guess costs time, never correctness.
//
// The text is not kept: each event's args are copied into the store's compressed args blocks,
// and for a file read from disk the pages of parsed chunks are handed back to the kernel as the
// parse moves on (MADV_DONTNEED), so peak memory is the store plus a few chunks, not the file.
// Anything that must look back (a restart after a bad chunk guess, the slow path below, an error
// message's line number) first reads the file again.
//
// A `.json.gz` is decompressed while it is parsed (GzipStream): the text keeps fixed offsets but
// grows as the parse reads on, so every read past the bytes seen so far goes through `have()`,
// which waits for the decompressor; the size is known once the stream ends. Such a trace is
// parsed by one thread (the second core decompresses), or in two halves when the stream has two
// parts (members indexed by their sizes, gzip_stream.h); a restart reads it again whole.
//
// Tolerance lives on the slow path only: when the fast parse fails, json_repair.h finds what
// chrome://tracing and Perfetto forgive (a file cut off mid-write, trailing commas), the text is
// repaired and parsed once more, and what was forgiven is counted as import issues. Well-formed
// files never pay for it. Trailing commas are counted where some parse meets them: anywhere on
// the slow path, and in the top-level values read on the fast path. Inside values that On-Demand
// merely skips (args keys the loader does not read) simdjson lets them pass, so they are accepted
// there but not counted: counting them would take a second pass over every well-formed file.
#pragma once

#include <simdjson.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/import/common/file_reader.h"
#include "core/store/load_result.h"
#include "core/store/trace_builder.h"

namespace sl::kineto_detail {

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

constexpr size_t kChunkBytes = 512 << 10;  // each parser's working set scales with it (#15 bench: 4 MB, 1 MB, 512 KB)
// Below these, chunks of a half and a quarter of the size (as GzipStream's lead).
constexpr size_t kSmallTextBytes = 32 << 20, kTinyTextBytes = 8 << 20;
constexpr size_t kParallelBytes = 48 << 20;  // below this a second thread costs more than it saves
constexpr uint64_t kProgressEvery = 4096;
// Times beyond ±146 years of µs are refused so that differences never overflow int64.
constexpr TimeNs kMaxAbsNs = INT64_MAX / 2;

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A field value as written: strings without their quotes (unescaped when they had escapes).
struct Token {
  std::string_view text;
  bool present = false;
  bool is_string = false;
};

struct Event {
  Token ph, name, cat, ts, dur, pid, tid, id, bp, scope;
  uint64_t offset = 0;
  // From args:
  const char* args_begin = nullptr;
  const char* args_end = nullptr;
  std::optional<int64_t> correlation, device, stream, sort_index;
  Token arg_name, arg_labels;
  std::vector<std::pair<std::string_view, double>> numbers;  // for `C` events
};

struct ChunkFailed {};       // a guessed chunk boundary did not hold, after events were stored
struct BoundaryInString {};  // the guess fell inside a string: found before storing anything

// Defined in kineto_memory.cpp: the `[memory]` instants of a finished store → store.memory.
void collect_memory_events(TraceStore& store);

// Defined in kineto_sanitize.cpp.
bool sanitize(char* begin, size_t length, uint64_t base_offset, ImportIssues& issues);

class KinetoLoader {
public:
  KinetoLoader(std::shared_ptr<TraceStore::Buffer> buffer, std::string file, LoadOptions options)
      : buffer_(std::move(buffer)), d_(buffer_->data), n_(buffer_->size), options_(std::move(options)) {
    error_.file = std::move(file);
  }

  LoadResult run();
  void set_gzip_cut(uint64_t compressed_size) {
    gzip_truncated_ = true;
    gzip_cut_at_ = compressed_size;
  }
  // Parsed pages may be released; `reload` reads the text again when a restart needs it whole.
  void release_parsed_pages(std::function<FileBytes()> reload) {
    reload_ = std::move(reload);
    release_pages_ = true;
  }
  // The text comes from `stream` as it decompresses (the buffer given is its text).
  void read_from(std::unique_ptr<GzipStream> stream) {
    owned_stream_ = std::move(stream);
    stream_ = owned_stream_.get();
    n_ = 0;
  }

private:
  bool load(bool chunked);
  // Whether byte `pos` of the text exists, waiting for the decompressor when it streams.
  bool have(size_t pos) { return pos < n_ || more(pos); }
  bool more(size_t pos);
  void end_stream();
  bool parse_all();
  bool load_repaired();
  void use_buffer(std::shared_ptr<TraceStore::Buffer> buffer);
  void restore_text();
  void release_before(size_t pos);
  void scan_rank(size_t from, size_t to);
  void record_truncation(uint64_t bytes);
  bool check_events_are_objects();
  void start_store();
  // --- top level ---
  bool parse_top_level();
  bool parse_events(size_t open_bracket, size_t& after);
  bool parse_from(size_t first, size_t limit, size_t& after);
  bool parse_halves(size_t first, size_t split, size_t& after);
  size_t find_split(size_t from);
  bool starts_event(size_t brace);
  bool parse_chunk(size_t first, size_t separator, size_t& array_end);
  bool iterate_chunk(size_t start, size_t length, bool last, size_t& array_end);
  void handle_top_level(std::string_view key, std::string_view value);
  size_t skip_ws(size_t pos);
  bool scan_string(size_t pos, size_t& end);
  bool skip_value(size_t pos, size_t& end);
  size_t find_boundary(size_t from, bool need_space = false);

  // --- events ---
  // `inline`: per-event code defined in kineto_events.cpp, used only there, kept inlinable as
  // when this class was file-local (external linkage alone cost ~10% of the parse).
  inline error_code read_event(od::value element, Event& e, od::document& doc);
  inline error_code read_args(od::value value, Event& e, od::document& doc);
  inline error_code read_token(od::value value, Token& token);
  void store_event(Event& e);
  void store_metadata(const Event& e);
  uint32_t process_for(const Event& e);
  uint32_t track_for(const Event& e);
  uint32_t lookup_track(const Event& e);
  StringId intern(const Token& t) { return store_->strings.intern(t.text); }
  inline uint8_t flags_of(StringId cat);
  bool time_of(const Event& e, const Token& t, TimeNs& out);
  uint32_t args_row(const Event& e);
  uint32_t kept_args_row(const Event& e, StringId name, StringId cat);
  uint64_t key_of(const Event& e, bool per_process);
  void skip(IssueKind kind, const Event& e) {
    store_->issues.add(kind, e.offset);
    ++store_->counts.skipped;
  }

  bool fail(std::string message, size_t offset);
  void locate_error();
  bool fail_json(error_code code, od::document* doc, size_t chunk_end);
  void report(const char* phase, uint64_t done);

  std::shared_ptr<TraceStore::Buffer> buffer_;
  char* d_;
  size_t n_;
  LoadOptions options_;
  std::atomic<uint64_t>* progress_out_ = nullptr;       // the second thread publishes here
  const std::atomic<uint64_t>* progress_in_ = nullptr;  // the first thread adds it
  uint64_t progress_base_ = 0;                           // where the second thread began
  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TraceBuilder> builder_;
  od::parser parser_;
  LoadError error_;
  ImportIssues sanitized_;  // survives a restart: the bytes stay fixed
  bool failed_ = false;
  bool chunked_ = true;
  size_t chunk_bytes_ = kChunkBytes;
  bool saw_trace_events_ = false;
  bool seen_first_object_ = false;  // (HTA) traceEvents[0] is the first event object
  std::optional<int64_t> rank_;     // (HTA) the first `"rank": N` in the bytes scanned so far
  bool want_rank_ = true;           // false: an earlier part of the file already has one
  std::atomic<bool> rank_found_{false};                 // published for the second thread
  const std::atomic<bool>* earlier_rank_ = nullptr;     // the first thread's, in the second
  bool release_pages_ = false;
  size_t released_to_ = 0;          // pages below this may be released (this thread's range start)
  std::function<FileBytes()> reload_;
  std::unique_ptr<GzipStream> owned_stream_;  // while a gzip file decompresses as it is parsed
  GzipStream* stream_ = nullptr;              // the same, shared with the second half's loader
  std::string gzip_error_;              // the gzip data is corrupt: this is the load's error
  std::vector<uint8_t> cat_flags_;  // by StringId; 0xFF = not computed yet
  std::vector<int8_t> keep_args_of_name_;  // by StringId: LoadOptions::keep_args_text's answer, -1 not asked
  struct KeyedIndex {
    std::string key;
    uint32_t index;
  };
  std::unordered_map<uint64_t, KeyedIndex> tracks_by_key_, processes_by_key_;
  uint32_t last_track_ = kNone;
  std::string last_pid_, last_tid_;
  std::string devices_key_;  // "deviceProperties" wins over the old "computeProperties"
  bool gzip_truncated_ = false;
  uint64_t gzip_cut_at_ = 0;
  uint64_t file_bytes_ = 0;  // the JSON as read, before any repair
};

}  // namespace sl::kineto_detail
