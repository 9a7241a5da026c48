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
#include <simdjson.h>
#include <sys/mman.h>
#if defined(__AVX2__)
#include <immintrin.h>
#endif
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <charconv>
#include <cmath>
#include <thread>
#include <unordered_map>

#include "core/decimal.h"
#include "core/file_reader.h"
#include "core/json_repair.h"
#include "core/nsys_loader.h"
#include "core/phase_timer.h"
#include "core/snapshot.h"
#include "core/trace_builder.h"
#include "core/trace_loader.h"

namespace sl {
namespace {

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

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The first `key` (at least 5 bytes) in [at, end), or null. Files without the key are scanned
// whole, so with AVX2 it tests 32 positions at once for key[1] and key[4] (for `"rank":`, an `r`
// and a `k` three bytes apart: rare in JSON, where a test of the quotes or the colon would stop
// at every key) and compares the rest only there; memmem (~1.5 GB/s here) does the remainder.
const char* find_key(const char* at, const char* end, std::string_view key) {
#if defined(__AVX2__)
  const __m256i second = _mm256_set1_epi8(key[1]), fifth = _mm256_set1_epi8(key[4]);
  for (; end - at >= ptrdiff_t(32 + key.size()); at += 32) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 1));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 4));
    auto mask = uint32_t(_mm256_movemask_epi8(_mm256_and_si256(_mm256_cmpeq_epi8(a, second), _mm256_cmpeq_epi8(b, fifth))));
    for (; mask; mask &= mask - 1) {
      const char* candidate = at + __builtin_ctz(mask);
      if (std::memcmp(candidate, key.data(), key.size()) == 0) return candidate;
    }
  }
#endif
  return static_cast<const char*>(::memmem(at, size_t(end - at), key.data(), key.size()));
}

// (HTA) HTA reads the rank with a regex over the whole file: `"rank":`, at least one whitespace,
// digits; the first match anywhere (top-level key or event args) wins.
std::optional<int64_t> hta_rank_in_text(std::string_view text) {
  constexpr std::string_view key = "\"rank\":";
  auto isspace = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  auto isdigit = [](char c) { return c >= '0' && c <= '9'; };
  for (const char* at = text.data(), *end = text.data() + text.size();;) {
    const char* hit = find_key(at, end, key);
    if (!hit) return std::nullopt;
    const char* p = hit + key.size();
    at = hit + 1;
    const char* digits = p;
    while (digits < end && isspace(*digits)) ++digits;
    if (digits == p || digits == end || !isdigit(*digits)) continue;
    int64_t v = 0;
    for (; digits < end && isdigit(*digits); ++digits)
      // HTA's Python takes any number; one past int64 is no rank a store can hold: none, as if
      // the file named none (found by fuzzing: the product overflowed).
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *digits - '0', &v)) return std::nullopt;
    return v;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

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

// Replaces what simdjson refuses inside strings, keeping every byte offset: invalid UTF-8
// bytes become '?', raw control characters inside strings become ' '.
bool sanitize(char* begin, size_t length, uint64_t base_offset, ImportIssues& issues) {
  bool changed = false, in_string = false;
  auto* p = reinterpret_cast<unsigned char*>(begin);
  for (size_t i = 0; i < length;) {
    unsigned char c = p[i];
    if (c < 0x80) {
      if (in_string && c == '\\') {
        i += 2;
        continue;
      }
      if (c == '"') in_string = !in_string;
      else if (in_string && c < 0x20) {
        p[i] = ' ';
        issues.add(IssueKind::ControlCharacter, base_offset + i);
        changed = true;
      }
      ++i;
      continue;
    }
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    bool valid = n && i + n <= length;
    for (size_t k = 1; valid && k < n; ++k) valid = (p[i + k] & 0xC0) == 0x80;
    if (valid && n == 3) {
      unsigned cp = (c & 0x0F) << 12 | (p[i + 1] & 0x3F) << 6;
      valid = cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF);
    }
    if (valid && n == 4) {
      unsigned cp = (c & 0x07) << 18 | (p[i + 1] & 0x3F) << 12;
      valid = cp >= 0x10000 && cp <= 0x10FFFF;
    }
    if (valid) {
      i += n;
      continue;
    }
    p[i] = '?';
    issues.add(IssueKind::InvalidUtf8, base_offset + i);
    changed = true;
    ++i;
  }
  return changed;
}

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
  error_code read_event(od::value element, Event& e, od::document& doc);
  error_code read_args(od::value value, Event& e, od::document& doc);
  error_code read_token(od::value value, Token& token);
  void store_event(Event& e);
  void store_metadata(const Event& e);
  uint32_t process_for(const Event& e);
  uint32_t track_for(const Event& e);
  uint32_t lookup_track(const Event& e);
  StringId intern(const Token& t) { return store_->strings.intern(t.text); }
  uint8_t flags_of(StringId cat);
  bool time_of(const Event& e, const Token& t, TimeNs& out);
  uint32_t args_row(const Event& e);
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

// ---------------------------------------------------------------- driver

LoadResult KinetoLoader::run() {
  auto t0 = std::chrono::steady_clock::now();
  LoadResult result;
  file_bytes_ = n_;
  bool ok = parse_all();
  if (stream_) end_stream();
  if (!ok && !error_.cancelled) restore_text();  // the slow path and the error's line number read the whole text
  file_bytes_ = n_;
  if (!gzip_error_.empty()) {
    result.error.file = error_.file;
    result.error.message = gzip_error_;
    return result;
  }
  if (!ok && !error_.cancelled) ok = load_repaired();
  if (ok) ok = check_events_are_objects();
  if (!ok && !error_.cancelled) restore_text();
  if (ok && gzip_truncated_ && !store_->issues.truncation) record_truncation(n_);
  if (ok) release_before(n_);  // the store holds no pointer into the text: drop its last chunks
  if (ok) {
    report("linking", n_);
    auto t1 = std::chrono::steady_clock::now();
    builder_->finish();
    if (std::getenv("SIGHTLINE_TIMING"))
      std::fprintf(stderr, "parse %.1f ms, finish %.1f ms\n", std::chrono::duration<double, std::milli>(t1 - t0).count(),
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count());
    store_->issues.merge(sanitized_);
    store_->meta.bytes = file_bytes_;
    store_->meta.file = error_.file;
    store_->meta.hta.from_text = true;
    store_->meta.hta.rank = rank_;
    if (store_->issues.truncation) result.warning = error_.file + ": " + describe(*store_->issues.truncation);
    result.store = std::move(store_);
  } else {
    if (gzip_truncated_ && !error_.cancelled)
      error_.message += " (the gzip stream itself stops at compressed byte " + std::to_string(gzip_cut_at_) + ")";
    locate_error();
    result.error = error_;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

bool KinetoLoader::parse_all() {
  try {
    return load(true);
  } catch (const ChunkFailed&) {
    restore_text();
    return load(false);
  }
}

// Reads the text again if parsed pages may have been released, and keeps it whole from then on.
void KinetoLoader::restore_text() {
  if (!release_pages_) return;
  release_pages_ = false;
  FileBytes again = reload_ ? reload_() : FileBytes{};
  if (stream_) {  // the text was never whole: read it whole now, whatever its size
    owned_stream_.reset();
    stream_ = nullptr;
    if (!again.buffer && again.was_gzip) gzip_error_ = again.error;
    if (again.gzip_truncated) set_gzip_cut(again.gzip_cut_at);
    if (!again.buffer) return;
  } else if (!again.buffer || again.buffer->size != n_) {
    return;  // the file changed meanwhile: the error stands as found
  }
  use_buffer(std::move(again.buffer));
  sanitized_ = ImportIssues{};  // the fresh bytes are sanitized again by the next parse
}

// Hands the pages wholly below `pos` (and above where this thread's range began) back to the
// kernel: a private file mapping drops its copies, a decompressed buffer its memory.
void KinetoLoader::release_before(size_t pos) {
  if (!release_pages_) return;
  static const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
  // Releasing part of a 2 MB page splits it into 512 small ones, freed one by one: a text in
  // huge pages goes back in whole ones.
  const uintptr_t unit = stream_ && stream_->huge_pages() ? uintptr_t(2) << 20 : page;
  uintptr_t from = (reinterpret_cast<uintptr_t>(d_ + released_to_) + page - 1) / page * page;
  uintptr_t to = reinterpret_cast<uintptr_t>(d_ + pos) / unit * unit;
  if (stream_) stream_->consumed(pos);
  if (to <= from) return;
  ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
  released_to_ = size_t(to - reinterpret_cast<uintptr_t>(d_));
}

// The slow part of have(): waits for the decompressor to reach `pos` or end.
bool KinetoLoader::more(size_t pos) {
  if (!stream_) return false;
  n_ = stream_->wait_for(pos);
  return pos < n_;
}

// Once the parse is over: the stream's verdict (corrupt data, a cut-off file) and its size.
void KinetoLoader::end_stream() {
  if (!stream_->ended()) return;  // the parse stopped early: restore_text() learns it all again
  if (!stream_->error().empty()) gzip_error_ = stream_->error();
  else if (stream_->cut_off()) set_gzip_cut(stream_->cut_at());
}

// (HTA) Scans bytes in file order, before they are released, for HTA's rank regex.
void KinetoLoader::scan_rank(size_t from, size_t to) {
  if (!want_rank_ || rank_ || to <= from) return;
  if (earlier_rank_ && earlier_rank_->load(std::memory_order_relaxed)) return;  // ours would not count
  rank_ = hta_rank_in_text({d_ + from, to - from});
  if (rank_) rank_found_.store(true, std::memory_order_relaxed);
}

void KinetoLoader::use_buffer(std::shared_ptr<TraceStore::Buffer> buffer) {
  buffer_ = std::move(buffer);
  d_ = buffer_->data;
  n_ = buffer_->size;
}

// The repaired text of a cut-off file: the bytes up to the last complete event, then the brackets
// that close what is open there. A copy, so that the original stays for an error message.
std::shared_ptr<TraceStore::Buffer> repaired_copy(std::string_view text, const JsonRepair& plan) {
  auto copy = std::make_shared<TraceStore::Buffer>();
  size_t size = plan.keep + plan.closers.size();
  if (!copy->reserve(std::max<size_t>(size, 1))) return nullptr;
  std::memcpy(copy->data, text.data(), plan.keep);
  std::memcpy(copy->data + plan.keep, plan.closers.data(), plan.closers.size());
  copy->size = size;
  std::memset(copy->data + size, 0, TraceStore::Buffer::kPadding);
  return copy;
}

// The slow path, once the fast parse has failed: repair what chrome://tracing and Perfetto
// forgive and parse again. Trailing commas are blanked in place (offsets hold); a cut-off file is
// parsed from a repaired copy whose prefix is the original, so offsets hold there too. If the
// repaired text still fails, the error that lies in the original bytes is the one reported.
bool KinetoLoader::load_repaired() {
  JsonRepair plan = plan_json_repair({d_, n_});
  if (!plan.needed()) return false;
  if (!plan.error.empty()) {
    failed_ = false;
    return fail(plan.error, plan.error_offset);
  }
  LoadError original = error_;
  std::shared_ptr<TraceStore::Buffer> original_buffer = buffer_;
  for (uint64_t comma : plan.trailing_commas) d_[comma] = ' ';
  if (plan.truncated) {
    std::shared_ptr<TraceStore::Buffer> copy = repaired_copy({d_, n_}, plan);
    if (!copy) return false;  // out of memory: the original error stands
    use_buffer(std::move(copy));
  }
  error_ = LoadError{};
  error_.file = original.file;
  if (!parse_all()) {
    if (!error_.cancelled && (error_.message.empty() || (plan.truncated && error_.byte_offset >= plan.keep)))
      error_ = original;
    use_buffer(original_buffer);
    return false;
  }
  for (uint64_t comma : plan.trailing_commas) store_->issues.add(IssueKind::TrailingComma, comma);
  if (plan.truncated) record_truncation(file_bytes_);
  return true;
}

void KinetoLoader::record_truncation(uint64_t bytes) {
  store_->issues.add(IssueKind::Truncated, bytes);
  Truncation t;
  t.byte_offset = bytes;
  t.events = store_->counts.events;
  t.gzip = gzip_truncated_;
  t.compressed_offset = gzip_cut_at_;
  store_->issues.truncation = t;
}

// An array of numbers, strings or arrays parses, but it is not a trace (`[1,2,3]`): say so rather
// than open an empty one. An empty array stays a valid, empty trace.
bool KinetoLoader::check_events_are_objects() {
  uint64_t not_objects = store_->issues.count(IssueKind::NotAnObject);
  if (store_->counts.events == 0 || not_objects < store_->counts.events) return true;
  const std::vector<uint64_t>& where = store_->issues.examples(IssueKind::NotAnObject);
  return fail("not a trace: no element of the events array is an event object", where.empty() ? 0 : where.front());
}

void KinetoLoader::start_store() {
  store_ = std::make_unique<TraceStore>();
  builder_ = std::make_unique<TraceBuilder>(*store_);
  seen_first_object_ = false;
  rank_.reset();
  rank_found_ = false;
}

bool KinetoLoader::load(bool chunked) {
  start_store();
  tracks_by_key_.clear();
  processes_by_key_.clear();
  last_track_ = kNone;
  cat_flags_.clear();
  devices_key_.clear();
  failed_ = false;
  chunked_ = chunked;
  saw_trace_events_ = false;
  return parse_top_level();
}

// ---------------------------------------------------------------- errors and progress

bool KinetoLoader::fail(std::string message, size_t offset) {
  if (failed_) return false;
  failed_ = true;
  error_.message = std::move(message);
  error_.byte_offset = std::min(offset, n_);
  return false;
}

// Called once the chunk brackets are restored, so newlines are where the file has them.
void KinetoLoader::locate_error() {
  size_t offset = error_.byte_offset;
  error_.line = 1;
  size_t line_start = 0;
  for (const char* p = d_; (p = static_cast<const char*>(std::memchr(p, '\n', d_ + offset - p)));) {
    ++error_.line;
    line_start = ++p - d_;
  }
  error_.column = offset - line_start + 1;
}

// `doc` is null when simdjson refused the chunk before iterating (stage 1): then only the
// chunk's end is known.
bool KinetoLoader::fail_json(error_code code, od::document* doc, size_t chunk_end) {
  const char* where = nullptr;
  size_t offset = doc && doc->current_location().get(where) == SUCCESS ? size_t(where - d_) : chunk_end;
  bool at_end = !have(offset) || !have(skip_ws(offset));
  if (at_end || code == simdjson::UNCLOSED_STRING || code == simdjson::INCOMPLETE_ARRAY_OR_OBJECT)
    return fail("unexpected end of file: the trace is truncated or a string or bracket is not closed", at_end ? n_ : offset);
  return fail(std::string("invalid JSON: ") + simdjson::error_message(code), offset);
}

void KinetoLoader::report(const char* phase, uint64_t done) {
  if (!options_.on_progress) return;
  LoadProgress p;
  p.phase = phase;
  p.bytes_done = done;
  p.bytes_total = stream_ ? std::max<uint64_t>(stream_->expected_size(), done) : n_;  // an estimate never behind
  p.events = store_ ? store_->counts.events : 0;
  options_.on_progress(p);
}

// ---------------------------------------------------------------- top level

size_t KinetoLoader::skip_ws(size_t pos) {
  while (have(pos) && is_ws(d_[pos])) ++pos;
  return pos;
}

// `pos` is at an opening quote; `end` becomes the position after the closing one.
bool KinetoLoader::scan_string(size_t pos, size_t& end) {
  for (size_t i = pos + 1; have(i);) {
    const void* hit = std::memchr(d_ + i, '"', n_ - i);
    if (!hit) {
      i = n_;  // on in what the stream has added since, if anything
      continue;
    }
    size_t quote = static_cast<const char*>(hit) - d_;
    size_t backslashes = 0;
    while (quote - backslashes > pos + 1 && d_[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) {
      end = quote + 1;
      return true;
    }
    i = quote + 1;
  }
  return false;
}

bool KinetoLoader::skip_value(size_t pos, size_t& end) {
  char c = d_[pos];
  if (c == '"') return scan_string(pos, end) || fail("unexpected end of file inside a string", n_);
  if (c != '{' && c != '[') {
    end = pos;
    while (have(end) && !is_ws(d_[end]) && d_[end] != ',' && d_[end] != '}' && d_[end] != ']') ++end;
    return end > pos || fail(std::string("unexpected character '") + c + "'", pos);
  }
  int depth = 0;
  for (size_t i = pos; have(i);) {
    c = d_[i];
    if (c == '"') {
      if (!scan_string(i, i)) return fail("unexpected end of file inside a string", n_);
      continue;
    }
    if (c == '{' || c == '[') ++depth;
    if ((c == '}' || c == ']') && --depth == 0) {
      end = i + 1;
      return true;
    }
    ++i;
  }
  return fail("unexpected end of file: a bracket is not closed", n_);
}

bool KinetoLoader::parse_top_level() {
  size_t pos = skip_ws(0);
  if (have(pos + 2) && std::memcmp(d_ + pos, "\xEF\xBB\xBF", 3) == 0) pos = skip_ws(pos + 3);
  if (!have(pos)) return fail("empty file: expected a JSON object with \"traceEvents\" or an array of events", pos);
  if (d_[pos] == '[') {
    size_t after = 0;
    if (!parse_events(pos, after)) return false;
    pos = skip_ws(after);
    return !have(pos) || fail("unexpected data after the array of events", pos);
  }
  if (d_[pos] != '{')
    return fail("not a trace: expected a JSON object with \"traceEvents\" or an array of events", pos);
  pos = skip_ws(pos + 1);
  while (have(pos) && d_[pos] != '}') {
    size_t key_start = pos, key_end = 0;
    if (d_[pos] != '"') return fail("expected a key in the top-level object", pos);
    if (!scan_string(pos, key_end)) return fail("unexpected end of file inside a key", n_);
    std::string_view key(d_ + pos + 1, key_end - pos - 2);
    pos = skip_ws(key_end);
    if (!have(pos) || d_[pos] != ':') return fail("expected ':' after the key \"" + std::string(key) + "\"", pos);
    pos = skip_ws(pos + 1);
    if (!have(pos)) return fail("unexpected end of file: the key \"" + std::string(key) + "\" has no value", n_);
    size_t end = 0;
    if (key == "traceEvents") {
      if (d_[pos] != '[') return fail("\"traceEvents\" is not an array", pos);
      saw_trace_events_ = true;
      if (!parse_events(pos, end)) return false;
    } else {
      if (!skip_value(pos, end)) return false;
      handle_top_level(key, std::string_view(d_ + pos, end - pos));
      scan_rank(key_start, end);
    }
    pos = skip_ws(end);
    if (have(pos) && d_[pos] == ',') {
      size_t comma = pos;
      pos = skip_ws(pos + 1);
      if (have(pos) && d_[pos] == '}') store_->issues.add(IssueKind::TrailingComma, comma);  // accepted, as viewers do
    } else if (have(pos) && d_[pos] != '}') {
      return fail("expected ',' or '}' in the top-level object", pos);
    }
  }
  if (!have(pos)) return fail("unexpected end of file: the top-level object is not closed", n_);
  pos = skip_ws(pos + 1);
  if (have(pos)) return fail("unexpected data after the top-level object", pos);
  if (!saw_trace_events_) return fail("no \"traceEvents\" array: this is not a Chrome/Kineto trace", 0);
  return true;
}

// Finds a likely boundary between two events at or after `from`: the comma in `}` ws `,` ws `{`
// (with `need_space`, only where whitespace follows the comma).
size_t KinetoLoader::find_boundary(size_t from, bool need_space) {
  for (size_t i = from; have(i + 1);) {
    const void* hit = std::memchr(d_ + i, '}', n_ - i);
    if (!hit) {
      i = n_;
      continue;
    }
    size_t brace = static_cast<const char*>(hit) - d_;
    size_t comma = skip_ws(brace + 1);
    if (have(comma) && d_[comma] == ',') {
      size_t next = skip_ws(comma + 1);
      if (have(next) && d_[next] == '{' && (!need_space || next > comma + 1) && starts_event(next)) return comma;
    }
    i = brace + 1;
  }
  return std::string_view::npos;
}

// Whether the object at `brace` opens with a key events have: nested objects in args rarely do.
bool KinetoLoader::starts_event(size_t brace) {
  size_t quote = skip_ws(brace + 1);
  if (!have(quote) || d_[quote] != '"') return false;
  size_t end = quote + 1;
  while (have(end) && end - quote <= 6 && d_[end] != '"') ++end;
  std::string_view key(d_ + quote + 1, end - quote - 1);
  for (std::string_view k : {"ph", "name", "cat", "pid", "tid", "ts", "dur", "args", "id", "bp", "s"})
    if (key == k) return have(end);
  return false;
}

// A split point for two threads: near the middle, and with whitespace after the comma so the
// `]` of the first half and the `[` of the second are written to different bytes.
size_t KinetoLoader::find_split(size_t from) {
  size_t split = find_boundary(from, true);
  return split != std::string_view::npos && split < from + (16u << 20) ? split : std::string_view::npos;
}

bool KinetoLoader::parse_events(size_t open_bracket, size_t& after) {
  size_t first = skip_ws(open_bracket + 1);
  if (!have(first)) return fail("unexpected end of file inside \"traceEvents\"", n_);
  if (d_[first] == ']') {
    after = first + 1;
    return true;
  }
  if (chunked_ && std::thread::hardware_concurrency() > 1) {
    // A stream splits where its second part begins (one decompressing thread per half), if it has two.
    size_t middle = stream_ ? stream_->second_part() : n_ - first > kParallelBytes ? first + (n_ - first) / 2 : 0;
    if (middle > first) {
      size_t split = find_split(middle);
      if (stream_) n_ = 0;  // as in parse_halves: what this thread reads below `middle` is asked again
      if (split != std::string_view::npos) return parse_halves(first, split, after);
    }
  }
  // A small trace's fixed costs are most of its peak memory: a smaller chunk shrinks the parser's
  // working set and the text resident around it (#15: tl_h100_qwen15_05b peak 11.0 -> 9.1 MB with the shorter lead).
  if (stream_) chunk_bytes_ = kChunkBytes / (GzipStream::kLead / stream_->lead());
  else chunk_bytes_ = kChunkBytes >> (n_ < kTinyTextBytes ? 2 : n_ < kSmallTextBytes ? 1 : 0);
  return parse_from(first, std::string_view::npos, after);
}

// Parses events from `first` in chunks, up to the separator `limit` (npos: to the array's end,
// which then sets `after`).
bool KinetoLoader::parse_from(size_t first, size_t limit, size_t& after) {
  constexpr size_t npos = std::string_view::npos;
  for (;;) {
    size_t separator = npos;
    // Past `limit` the text is the other half's, which its parser releases as it goes (zeros,
    // in a stream): a chunk reaching beyond the limit ends at it without a look there.
    bool limit_near = limit != npos && first + chunk_bytes_ >= limit;
    if (chunked_ && !limit_near && have(first + chunk_bytes_)) separator = find_boundary(first + chunk_bytes_);
    if (limit != npos && (separator == npos || separator > limit)) separator = limit;
    size_t array_end = npos;
    try {
      if (!parse_chunk(first, separator, array_end)) return false;
    } catch (const BoundaryInString&) {
      // Nothing was stored: try the next boundary (or the rest, or the limit).
      size_t next = separator == limit ? npos : find_boundary(separator + 1);
      if (separator == limit || next == npos || (limit != npos && next > limit)) throw ChunkFailed{};
      separator = next;
      if (!parse_chunk(first, separator, array_end)) return false;
    }
    if (array_end != npos) {
      if (limit != npos) throw ChunkFailed{};  // the split lay beyond traceEvents
      after = array_end;
      return true;
    }
    if (separator == limit) return true;
    first = skip_ws(separator + 1);
    release_before(separator);
  }
}

// The second core parses the second half into its own builder while this thread parses the
// first; the first half's last chunk proves the split (it must close exactly there). Then the
// second builder is absorbed, as if its events had followed ours. Any doubt: parse again
// sequentially (ChunkFailed).
bool KinetoLoader::parse_halves(size_t first, size_t split, size_t& after) {
  LoadOptions quiet;
  quiet.cancel = options_.cancel;
  KinetoLoader second(buffer_, error_.file, quiet);
  second.start_store();
  second.stream_ = stream_;
  second.release_pages_ = release_pages_;
  second.released_to_ = skip_ws(split + 1);
  second.want_rank_ = !rank_;  // usually found in the top-level keys before traceEvents
  second.earlier_rank_ = &rank_found_;
  std::atomic<uint64_t> second_done{0};
  second.progress_out_ = &second_done;
  progress_in_ = &second_done;
  size_t second_first = skip_ws(split + 1), second_after = std::string_view::npos;
  second.progress_base_ = second_first;
  bool second_ok = false, second_chunk_failed = false;
  std::thread worker([&] {
    try {
      second_ok = second.parse_from(second_first, std::string_view::npos, second_after);
    } catch (const ChunkFailed&) {
      second_chunk_failed = true;
    }
  });
  bool first_ok = false, first_chunk_failed = false;
  // A stream's n_ is how far the part last asked for is readable: after peeking into the second
  // part (find_split, skip_ws above), what this thread reads in the first part is asked again.
  if (stream_) n_ = 0;
  PhaseTimer timer("halves");
  try {
    size_t unused = 0;
    first_ok = parse_from(first, split, unused);
  } catch (const ChunkFailed&) {
    first_chunk_failed = true;
  }
  timer.mark("first");
  worker.join();
  timer.mark("wait_second");
  progress_in_ = nullptr;
  if (first_chunk_failed || second_chunk_failed) throw ChunkFailed{};
  sanitized_.merge(second.sanitized_);
  if (!rank_) rank_ = second.rank_;  // this half comes first in the file
  if (!first_ok) return false;
  if (!second_ok) return fail(second.error_.message, second.error_.byte_offset);
  builder_->absorb(*second.builder_);
  timer.mark("absorb");
  after = second_after;
  return true;
}

// Parses the events from `first` up to the comma at `separator` (npos: to the array's end).
// Sets `array_end` to the position after the closing `]` of traceEvents once it is reached.
bool KinetoLoader::parse_chunk(size_t first, size_t separator, size_t& array_end) {
  bool last = separator == std::string_view::npos;
  size_t start = first - 1;  // '[', ',' or whitespace: never part of an event
  size_t length = last ? n_ - start : separator + 1 - start;
  char saved_start = d_[start], saved_separator = last ? 0 : d_[separator];
  d_[start] = '[';
  if (!last) d_[separator] = ']';
  struct Restore {
    char* d;
    size_t start, separator;
    char a, b;
    bool last;
    ~Restore() {
      d[start] = a;
      if (!last) d[separator] = b;
    }
  } restore{d_, start, separator, saved_start, saved_separator, last};
  // On-Demand requires a root array to end with its `]`: the last chunk must stop exactly at
  // the end of traceEvents, which only a bracket-matching scan can tell.
  if (last) {
    size_t end = 0;
    if (!skip_value(start, end)) return false;
    length = end - start;
  }
  return iterate_chunk(start, length, last, array_end);
}

bool KinetoLoader::iterate_chunk(size_t start, size_t length, bool last, size_t& array_end) {
  scan_rank(start + 1, start + length);
  size_t capacity = buffer_->capacity + TraceStore::Buffer::kPadding - start;
  od::document doc;
  error_code code = parser_.iterate(d_ + start, length, capacity).get(doc);
  if ((code == simdjson::UTF8_ERROR || code == simdjson::UNESCAPED_CHARS) &&
      sanitize(d_ + start + 1, length - (last ? 1 : 2), start + 1, sanitized_))
    code = parser_.iterate(d_ + start, length, capacity).get(doc);
  if (code == simdjson::UNCLOSED_STRING && !last) throw BoundaryInString{};
  bool iterated = !code;
  od::array events;
  if (!code) code = doc.get_array().get(events);
  if (code && !last) throw ChunkFailed{};
  if (code) return fail_json(code, iterated ? &doc : nullptr, start + length);
  for (auto element : events) {
    od::value value;
    Event e;
    if (!(code = element.get(value))) code = read_event(value, e, doc);
    if (code == simdjson::INCORRECT_TYPE) {
      ++store_->counts.events;
      skip(IssueKind::NotAnObject, e);
      continue;
    }
    if (code && !last) throw ChunkFailed{};
    if (code) return fail_json(code, &doc, start + length);
    ++store_->counts.events;
    size_t args_before = store_->args_table().size();
    store_event(e);
    if (!seen_first_object_) {
      seen_first_object_ = true;
      if (store_->args_table().size() > args_before) store_->meta.hta.first_event_args = uint32_t(args_before);
    }
    if (store_->counts.events % kProgressEvery == 0) {
      if (progress_out_) progress_out_->store(e.offset - progress_base_, std::memory_order_relaxed);
      else report("parsing", e.offset + (progress_in_ ? progress_in_->load(std::memory_order_relaxed) : 0));
      if (options_.cancel && options_.cancel->load(std::memory_order_relaxed)) {
        error_.cancelled = true;
        return fail("cancelled", e.offset);
      }
    }
  }
  // Where did the array close? At our ']' (nothing left in the chunk), or earlier at the real
  // end of traceEvents, with the rest of the top-level object after it.
  const char* next = nullptr;
  if (doc.current_location().get(next) != SUCCESS) {
    if (!last) return true;  // closed exactly at the separator: the guess held
    size_t end = start + length;
    while (end > start && is_ws(d_[end - 1])) --end;
    array_end = end;
    return true;
  }
  size_t end = next - d_;
  while (end > start && d_[end - 1] != ']') --end;
  array_end = end;
  return true;
}

void KinetoLoader::handle_top_level(std::string_view key, std::string_view value) {
  store_->meta.top_level.emplace_back(std::string(key), std::string(value));
  bool devices = key == "deviceProperties" || (key == "computeProperties" && devices_key_.empty());
  if (!devices && key != "distributedInfo" && key != "displayTimeUnit") return;
  simdjson::dom::parser parser;
  simdjson::padded_string text(value);
  simdjson::dom::element root;
  if (parser.parse(text).get(root)) {
    // Trailing commas (`"deviceProperties": [{...},]`) are forgiven here too, and counted; a
    // value broken otherwise is kept as raw text above, with nothing else to learn from it.
    JsonRepair plan = plan_json_repair(value);
    if (plan.trailing_commas.empty() || plan.truncated || !plan.error.empty()) return;
    std::string fixed(value);
    for (uint64_t comma : plan.trailing_commas) {
      fixed[comma] = ' ';
      store_->issues.add(IssueKind::TrailingComma, uint64_t(value.data() - d_) + comma);
    }
    text = simdjson::padded_string(fixed);
    if (parser.parse(text).get(root)) return;
  }
  TraceMeta& meta = store_->meta;
  if (devices) {
    devices_key_ = std::string(key);
    meta.devices.clear();
    simdjson::dom::array list;
    if (root.get_array().get(list)) return;
    for (simdjson::dom::element item : list) {
      Device device;
      int64_t id = 0;
      std::string_view name;
      if (!item["id"].get_int64().get(id)) device.id = id;
      if (!item["name"].get_string().get(name)) device.name = std::string(name);
      device.properties_json = simdjson::minify(item);
      meta.devices.push_back(std::move(device));
    }
  } else if (key == "distributedInfo") {
    int64_t number = 0;
    std::string_view backend;
    if (!root["rank"].get_int64().get(number)) meta.rank = number;
    if (!root["world_size"].get_int64().get(number)) meta.world_size = number;
    if (!root["backend"].get_string().get(backend)) meta.backend = std::string(backend);
  } else {
    std::string_view unit;
    if (!root.get_string().get(unit)) meta.display_time_unit = std::string(unit);
  }
}

// ---------------------------------------------------------------- reading one event

error_code KinetoLoader::read_token(od::value value, Token& token) {
  std::string_view raw = trim(value.raw_json_token());
  token.present = true;
  if (raw.empty() || raw.front() != '"') {
    token.text = raw;
    return SUCCESS;
  }
  token.is_string = true;
  token.text = raw.substr(1, raw.size() >= 2 ? raw.size() - 2 : 0);
  if (token.text.find('\\') != std::string_view::npos) return value.get_string().get(token.text);
  return SUCCESS;
}

error_code KinetoLoader::read_event(od::value element, Event& e, od::document& doc) {
  e.offset = element.raw_json_token().data() - d_;
  od::object object;
  if (error_code code = element.get_object().get(object)) return code;
  for (auto result : object) {
    if (error_code code = result.error()) return code;
    od::field field = result.value_unsafe();
    od::raw_json_string key = field.key();
    od::value value = field.value();
    error_code code = SUCCESS;
    if (key.unsafe_is_equal("ph")) code = read_token(value, e.ph);
    else if (key.unsafe_is_equal("name")) code = read_token(value, e.name);
    else if (key.unsafe_is_equal("cat")) code = read_token(value, e.cat);
    else if (key.unsafe_is_equal("ts")) code = read_token(value, e.ts);
    else if (key.unsafe_is_equal("dur")) code = read_token(value, e.dur);
    else if (key.unsafe_is_equal("pid")) code = read_token(value, e.pid);
    else if (key.unsafe_is_equal("tid")) code = read_token(value, e.tid);
    else if (key.unsafe_is_equal("args")) code = read_args(value, e, doc);
    else if (key.unsafe_is_equal("id")) code = read_token(value, e.id);
    else if (key.unsafe_is_equal("bp")) code = read_token(value, e.bp);
    else if (key.unsafe_is_equal("s")) code = read_token(value, e.scope);
    if (code) return code == simdjson::INCORRECT_TYPE ? simdjson::TAPE_ERROR : code;
  }
  return SUCCESS;
}

// A counter series value: a JSON number, or a string that is a number as a whole ("12.5").
// Perfetto's JSON importer parses numeric strings into counter values (StringToDouble; other
// strings are dropped and counted in its stats), and catapult keeps the string, which JavaScript
// arithmetic then reads as the number. Strings that are not numbers are not series, as before.
bool counter_value(od::value v, double& number) {
  std::string_view raw = trim(v.raw_json_token());
  if (raw.size() < 3 || raw.front() != '"' || raw.back() != '"') return !v.get_double().get(number);
  std::string_view inside = raw.substr(1, raw.size() - 2);
  auto [end, ec] = std::from_chars(inside.data(), inside.data() + inside.size(), number);
  return ec == std::errc() && end == inside.data() + inside.size() && std::isfinite(number);
}

// Records where the args object lies and picks out the few fields the store needs now.
error_code KinetoLoader::read_args(od::value value, Event& e, od::document& doc) {
  std::string_view raw = value.raw_json_token();
  od::object args;
  if (value.get_object().get(args)) return SUCCESS;  // not an object: ignored, skipped by the iterator
  e.args_begin = raw.data();
  bool counter = !e.ph.present || e.ph.text.starts_with('C');  // see phase_of
  for (auto result : args) {
    if (error_code code = result.error()) return code;
    od::field field = result.value_unsafe();
    od::raw_json_string key = field.key();
    od::value v = field.value();
    Token t;
    error_code code = SUCCESS;
    if (key.unsafe_is_equal("correlation")) {
      if (!(code = read_token(v, t))) e.correlation = parse_int64(t.text);
    } else if (key.unsafe_is_equal("device")) {
      if (!(code = read_token(v, t))) e.device = parse_int64(t.text);
    } else if (key.unsafe_is_equal("stream")) {
      if (!(code = read_token(v, t))) e.stream = parse_int64(t.text);
    } else if (key.unsafe_is_equal("sort_index")) {
      if (!(code = read_token(v, t))) e.sort_index = parse_int64(t.text);
    } else if (key.unsafe_is_equal("name")) {
      code = read_token(v, e.arg_name);
      if (!code && !e.arg_name.is_string) e.arg_name = {};
    } else if (key.unsafe_is_equal("labels")) {
      code = read_token(v, e.arg_labels);
    }
    if (counter && !code && !key.unsafe_is_equal("correlation")) {
      double number = 0;
      std::string_view k;
      if (counter_value(v, number) && !field.unescaped_key().get(k)) e.numbers.emplace_back(k, number);
    }
    if (code) return code;
  }
  const char* next = nullptr;
  size_t end = doc.current_location().get(next) == SUCCESS ? next - d_ : n_;
  while (end > size_t(e.args_begin - d_) && d_[end - 1] != '}') --end;
  e.args_end = d_ + end;
  return SUCCESS;
}

// ---------------------------------------------------------------- storing one event

uint8_t KinetoLoader::flags_of(StringId cat) {
  if (cat >= cat_flags_.size()) cat_flags_.resize(store_->strings.size(), 0xFF);
  if (cat_flags_[cat] == 0xFF) cat_flags_[cat] = category_flags(store_->strings.view(cat));
  return cat_flags_[cat];
}

bool KinetoLoader::time_of(const Event& e, const Token& t, TimeNs& out) {
  if (!t.present) return skip(IssueKind::MissingField, e), false;
  if (t.is_string) return skip(IssueKind::IllTypedField, e), false;
  switch (micros_to_nanos(t.text, out)) {
    case NumberStatus::Ok:
      if (out > kMaxAbsNs || out < -kMaxAbsNs) return skip(IssueKind::TimestampOutOfRange, e), false;
      return true;
    case NumberStatus::OutOfRange: return skip(IssueKind::TimestampOutOfRange, e), false;
    case NumberStatus::NotANumber: break;
  }
  return skip(IssueKind::IllTypedField, e), false;
}

uint32_t KinetoLoader::args_row(const Event& e) {
  if (!e.args_begin || !e.args_end) return kNone;
  // Copied out of the file's text (which is not kept) into the store's compressed args blocks.
  return store_->add_args(std::string_view(e.args_begin, size_t(e.args_end - e.args_begin)));
}

// pid and tid are opaque keys: the text as written, numbers and strings alike.
uint32_t KinetoLoader::process_for(const Event& e) {
  uint64_t h = hash_bytes(e.pid.text);
  auto it = processes_by_key_.find(h);
  if (it != processes_by_key_.end() && it->second.key == e.pid.text) return it->second.index;
  std::optional<int64_t> number = e.pid.is_string ? std::nullopt : parse_int64(e.pid.text);
  uint32_t index = builder_->process(e.pid.text, number);
  processes_by_key_[h] = {std::string(e.pid.text), index};
  return index;
}

uint32_t KinetoLoader::track_for(const Event& e) {
  // Events of one thread come in runs: check the last thread before hashing.
  if (last_track_ != kNone && e.pid.text == last_pid_ && e.tid.text == last_tid_) return last_track_;
  last_track_ = lookup_track(e);
  last_pid_.assign(e.pid.text);
  last_tid_.assign(e.tid.text);
  return last_track_;
}

uint32_t KinetoLoader::lookup_track(const Event& e) {
  uint64_t h = hash_bytes(e.pid.text) * 0x9E3779B97F4A7C15ull ^ hash_bytes(e.tid.text);
  auto it = tracks_by_key_.find(h);
  auto same = [&](const std::string& key) {
    return key.size() == e.pid.text.size() + 1 + e.tid.text.size() && key.starts_with(e.pid.text) &&
           key.ends_with(e.tid.text) && key[e.pid.text.size()] == '\x1f';
  };
  if (it != tracks_by_key_.end() && same(it->second.key)) return it->second.index;
  uint32_t process = process_for(e);
  std::optional<int64_t> number = e.tid.is_string ? std::nullopt : parse_int64(e.tid.text);
  uint32_t index = builder_->thread_track(process, e.tid.text, number);
  tracks_by_key_[h] = {std::string(e.pid.text) + '\x1f' + std::string(e.tid.text), index};
  return index;
}

uint64_t KinetoLoader::key_of(const Event& e, bool per_process) {
  uint64_t h = hash_bytes(e.cat.text) * 0x9E3779B97F4A7C15ull ^ hash_bytes(e.id.text);
  return per_process ? h * 0xC2B2AE3D27D4EB4Full ^ hash_bytes(e.pid.text) : h;
}

void KinetoLoader::store_metadata(const Event& e) {
  ++store_->counts.metadata;
  std::string_view what = e.name.text;
  if (what == "process_name" && e.arg_name.present) builder_->set_process_name(process_for(e), intern(e.arg_name));
  else if (what == "process_labels" && e.arg_labels.present)
    builder_->set_process_labels(process_for(e), intern(e.arg_labels));
  else if (what == "process_sort_index" && e.sort_index)
    builder_->set_process_sort_index(process_for(e), *e.sort_index);
  else if (what == "thread_name" && e.arg_name.present) builder_->set_thread_name(track_for(e), intern(e.arg_name));
  else if (what == "thread_sort_index" && e.sort_index)
    builder_->set_thread_sort_index(track_for(e), *e.sort_index);
}

// The phase is the first character of `ph`, as Perfetto's JSON importer reads it (`"XB"` is an
// `X`; catapult compares the whole string and drops such events with an import warning, and we
// would rather show them). An empty or non-string `ph` is an unknown phase.
char phase_of(const Token& ph) { return ph.is_string && !ph.text.empty() ? ph.text[0] : '?'; }

// Where an event without `pid` or `tid` goes, as Perfetto places it: a missing pid is 0 and a
// missing tid is the pid, so tid-less events of a process share its main thread's track (the
// thread whose tid equals the pid). Catapult groups them the same way, one thread per process,
// under an "undefined" pid/tid label. A global-scope instant (`"s":"g"`) without a pid is the
// exception: Perfetto draws it on a global track, not in process 0 (which in Kineto files is
// often GPU 0), so it keeps its own pid-less "markers" process.
void default_pid_tid(Event& e, char ph) {
  bool global_instant = std::strchr("iIR", ph) && e.scope.present && e.scope.text == "g";
  if (!e.pid.present && !global_instant) e.pid = Token{"0", true, false};
  if (!e.tid.present) e.tid = e.pid;
}

void KinetoLoader::store_event(Event& e) {
  if (!e.ph.present) return skip(IssueKind::MissingField, e);
  char ph = phase_of(e.ph);
  default_pid_tid(e, ph);
  if (ph == 'M') return store_metadata(e);
  if (std::strchr("PODN()", ph)) return skip(IssueKind::SkippedPhase, e);
  if (!std::strchr("XBEiIRCstfbneSTF", ph)) return skip(IssueKind::UnknownPhase, e);
  TimeNs ts = 0;
  if (!time_of(e, e.ts, ts)) return;
  StringId name = intern(e.name), cat = intern(e.cat);
  switch (ph) {
    case 'X': {
      TimeNs dur = 0;
      if (e.dur.present && !time_of(e, e.dur, dur)) return;
      if (!e.dur.present) store_->issues.add(IssueKind::MissingField, e.offset);
      if (dur < 0) store_->issues.add(IssueKind::NegativeDuration, e.offset), dur = 0;
      uint32_t track = track_for(e);
      if (flags_of(cat) & kCatGpu) builder_->mark_gpu(track, e.device, e.stream);
      return builder_->add_slice(track, ts, dur, name, cat, args_row(e), e.correlation);
    }
    case 'B': return builder_->add_begin(track_for(e), ts, name, cat, args_row(e), e.correlation, e.offset);
    case 'E': return builder_->add_end(track_for(e), ts, e.offset);
    case 'i':
    case 'I':
    case 'R': {
      char scope = e.scope.present && e.scope.text.size() == 1 ? e.scope.text[0] : 't';
      return builder_->add_instant(track_for(e), ts, name, cat, args_row(e), scope);
    }
    case 'C': {
      ++store_->counts.counters;
      uint32_t process = process_for(e);
      for (const auto& [key, value] : e.numbers) {
        std::string series(e.name.text);
        if (e.numbers.size() > 1) series.append(".").append(key);
        builder_->add_counter(process, series, ts, value);
      }
      return;
    }
    case 's':
    case 't':
    case 'f': {
      ++store_->counts.flows;
      bool enclosing = ph != 'f' || e.bp.text == "e";
      return builder_->add_flow_point(track_for(e), key_of(e, false), cat, ph, ts, enclosing, e.offset);
    }
    case 'b':
    case 'S': {
      uint32_t track = builder_->async_track(process_for(e), cat, name);
      return builder_->add_async_begin(track, key_of(e, true), ts, name, cat, args_row(e), e.offset);
    }
    case 'e':
    case 'F': return builder_->add_async_end(key_of(e, true), ts, e.offset);
    default: {  // 'n', 'T': a point on the async track
      uint32_t track = builder_->async_track(process_for(e), cat, name);
      return builder_->add_instant(track, ts, name, cat, args_row(e), 't');
    }
  }
}

}  // namespace

std::string LoadError::to_string() const {
  std::string out = file + ": ";
  if (line) out += "byte " + std::to_string(byte_offset) + " (line " + std::to_string(line) + ", column " +
                   std::to_string(column) + "): ";
  return out + message;
}

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
  if (std::optional<std::string> reason = empty_non_json_file(path)) {
    LoadResult result;
    result.error.file = path;
    result.error.message = *reason;
    return result;
  }
  auto t0 = std::chrono::steady_clock::now();
  FileBytes bytes = read_trace_file(path, options, /*stream_gzip=*/true);
  if (!bytes.buffer) {
    LoadResult result;
    result.error.file = path;
    result.error.message = bytes.error;
    result.error.cancelled = bytes.error == "cancelled";
    return result;
  }
  KinetoLoader loader(std::move(bytes.buffer), path, options);
  if (bytes.stream) loader.read_from(std::move(bytes.stream));
  if (bytes.gzip_truncated) loader.set_gzip_cut(bytes.gzip_cut_at);
  loader.release_parsed_pages([path, options] { return read_trace_file(path, options); });
  LoadResult result = loader.run();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

LoadResult load_trace_text(std::string_view json, const std::string& name, const LoadOptions& options) {
  auto buffer = std::make_shared<TraceStore::Buffer>();
  buffer->reserve(std::max<size_t>(json.size(), 1));
  if (!json.empty()) std::memcpy(buffer->data, json.data(), json.size());
  buffer->size = json.size();
  std::memset(buffer->data + buffer->size, 0, TraceStore::Buffer::kPadding);
  return KinetoLoader(std::move(buffer), name, options).run();
}

}  // namespace sl
