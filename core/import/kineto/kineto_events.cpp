// The Chrome/Kineto JSON loader's per-event work: one chunk's events iterated by simdjson, each
// event's fields and args read, and the event stored (tracks, metadata, slices, counters, flows).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "core/import/kineto/kineto_loader_class.h"
#include "core/store/trace_builder.h"
#include "core/text/decimal.h"

namespace sl::kineto_detail {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ws(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

// ---------------------------------------------------------------- iterating one chunk

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

namespace {

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

}  // namespace

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

// args_row, and the text kept as it is when LoadOptions::keep_args_text accepts the slice's name.
uint32_t KinetoLoader::kept_args_row(const Event& e, StringId name, StringId cat) {
  const uint32_t row = args_row(e);
  if (row == kNone || !options_.keep_args_text) return row;
  if (name >= keep_args_of_name_.size()) keep_args_of_name_.resize(store_->strings.size(), -1);
  int8_t& keep = keep_args_of_name_[name];
  if (keep < 0) keep = options_.keep_args_text(store_->strings.view(name), store_->strings.view(cat));
  if (keep) store_->keep_args_text(row, std::string_view(e.args_begin, size_t(e.args_end - e.args_begin)));
  return row;
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

namespace {

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

}  // namespace

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
      return builder_->add_slice(track, ts, dur, name, cat, kept_args_row(e, name, cat), e.correlation);
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

}  // namespace sl::kineto_detail
