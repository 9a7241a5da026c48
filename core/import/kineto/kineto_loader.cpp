// The Chrome/Kineto JSON loader's driver: run, restarts and the slow path, chunk planning and the
// two-thread split, errors and progress, and the public entry points (kineto_loader.h).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "core/import/common/file_reader.h"
#include "core/import/kineto/json_repair.h"
#include "core/import/kineto/kineto_loader.h"
#include "core/import/kineto/kineto_loader_class.h"
#include "core/store/cores.h"
#include "core/store/phase_timer.h"
#include "core/store/trace_builder.h"

namespace sl::kineto_detail {

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
    collect_memory_events(*store_);
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

void KinetoLoader::use_buffer(std::shared_ptr<TraceStore::Buffer> buffer) {
  buffer_ = std::move(buffer);
  d_ = buffer_->data;
  n_ = buffer_->size;
}

namespace {

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

}  // namespace

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

// ---------------------------------------------------------------- chunks

bool KinetoLoader::parse_events(size_t open_bracket, size_t& after) {
  size_t first = skip_ws(open_bracket + 1);
  if (!have(first)) return fail("unexpected end of file inside \"traceEvents\"", n_);
  if (d_[first] == ']') {
    after = first + 1;
    return true;
  }
  if (chunked_ && usable_cores() > 1) {
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
  quiet.keep_args_text = options_.keep_args_text;
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

}  // namespace sl::kineto_detail

namespace sl {

using kineto_detail::KinetoLoader;

LoadResult load_kineto_file(const std::string& path, const LoadOptions& options) {
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
