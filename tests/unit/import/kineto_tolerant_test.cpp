// Tolerant reading (issue 17): a trace cut off anywhere loads exactly the events complete before
// the cut, or fails with an offset; trailing commas, pid-only events, phases with extra
// characters and numeric-string counter values load as chrome://tracing / Perfetto read them.
#include <libdeflate.h>
#include <simdjson.h>

#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "core/import/common/file_reader.h"
#include "core/import/kineto/json_repair.h"
#include "core/import/kineto/kineto_loader.h"
#include "core/import/trace_loader.h"
#include "tests/unit/test_support.h"

using namespace sl;
using sl::test::load_error;
using sl::test::load_ok;
using sl::test::gzip;

namespace {

// Where each element of the events array ends, found by simdjson alone (not by the loader's
// repair scan), and the elements' text, to build the reference trace of the first K events.
struct Layout {
  bool object = false;
  size_t events_open = 0;   // offset of the events array's `[`
  size_t events_close = 0;  // offset after its `]`
  std::vector<size_t> ends;
  std::vector<std::string> elements;
};

Layout layout_of(const std::string& text) {
  namespace od = simdjson::ondemand;
  Layout l;
  simdjson::padded_string padded(text);
  od::parser parser;
  od::document doc = parser.iterate(padded);
  std::string_view array_text;
  l.object = doc.type().value() == od::json_type::object;
  od::array events_array = l.object ? doc["traceEvents"].get_array().value() : doc.get_array().value();
  array_text = events_array.raw_json().value();
  while (!array_text.empty() && std::strchr(" \n\r\t", array_text.back())) array_text.remove_suffix(1);
  l.events_open = array_text.data() - padded.data();
  l.events_close = l.events_open + array_text.size();
  simdjson::padded_string sub(array_text);
  od::parser sub_parser;
  od::document events = sub_parser.iterate(sub);
  for (auto element : events.get_array()) {
    od::value v = element.value();
    std::string_view raw;
    od::object object;
    if (v.get_object().get(object) == simdjson::SUCCESS) raw = object.raw_json().value();
    else raw = v.raw_json_token();
    while (!raw.empty() && std::strchr(" \n\r\t", raw.back())) raw.remove_suffix(1);
    l.ends.push_back(l.events_open + size_t(raw.data() + raw.size() - sub.data()));
    l.elements.emplace_back(raw);
  }
  return l;
}

// Everything a load stored, in a canonical order: counts, issues (but the ones that describe the
// repair itself), and every slice, instant and counter sample with its track.
std::string digest(const TraceStore& s) {
  std::vector<std::string> rows;
  auto row = [&](auto&&... parts) {
    std::ostringstream r;
    ((r << parts << ' '), ...);
    rows.push_back(r.str());
  };
  for (const Track& t : s.tracks) {
    std::string_view pid = t.process == kNone ? "-" : s.strings.view(s.processes[t.process].pid_text);
    std::string_view tid = s.strings.view(t.tid_text), name = s.strings.view(t.name);
    for (size_t i = 0; i < t.slices.size(); ++i)
      row(pid, tid, name, "slice", s.origin_ns + t.slices.start[i], t.slices.dur[i], s.strings.view(t.slices.name[i]));
    for (size_t i = 0; i < t.instants.size(); ++i)
      row(pid, tid, name, "instant", s.origin_ns + t.instants.ts[i], s.strings.view(t.instants.name[i]));
  }
  for (const CounterSeries& c : s.counters)
    for (size_t i = 0; i < c.ts.size(); ++i) row("counter", s.strings.view(c.name), s.origin_ns + c.ts[i], c.value[i]);
  std::sort(rows.begin(), rows.end());
  std::ostringstream out;
  const EventCounts& n = s.counts;
  out << n.events << " " << n.slices << " " << n.instants << " " << n.counters << " " << n.flows << " "
      << n.metadata << " " << n.skipped << " flows " << s.flows.size() << "\n";
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k)
    if (IssueKind(k) != IssueKind::Truncated && IssueKind(k) != IssueKind::TrailingComma)
      out << issue_name(IssueKind(k)) << "=" << s.issues.count(IssueKind(k)) << " ";
  out << "\n";
  for (const std::string& r : rows) out << r << "\n";
  return out.str();
}

// Cuts `text` at each offset of `cuts` and checks every load against the reference: the events
// complete before the cut, parsed from a well-formed trace of just those events.
void check_cuts(const std::string& text, const std::vector<size_t>& cuts) {
  // Tens of thousands of loads: keep freed memory instead of returning it to the kernel after
  // each one (glibc's trimming made this test spend most of its time in brk).
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  Layout l = layout_of(text);
  REQUIRE(!l.ends.empty());
  std::map<size_t, std::string> reference;  // by K
  auto reference_of = [&](size_t k) -> const std::string& {
    auto it = reference.find(k);
    if (it != reference.end()) return it->second;
    // The file's own top level up to the events array (devices, rank), then just those events.
    std::string json = text.substr(0, l.events_open + 1);
    for (size_t i = 0; i < k; ++i) json += (i ? "," : "") + l.elements[i];
    json += l.object ? "]}" : "]";
    return reference[k] = digest(*load_ok(json));
  };
  size_t loaded = 0, refused = 0;
  for (size_t cut : cuts) {
    std::string_view prefix(text.data(), cut);
    LoadResult r = load_trace_text(prefix, "cut.json");
    size_t k = size_t(std::upper_bound(l.ends.begin(), l.ends.end(), cut) - l.ends.begin());
    bool expect_events = cut > l.events_open && k > 0;
    INFO("cut at byte " << cut << " of " << text.size() << ", " << k << " events complete");
    if (!expect_events) {
      CHECK_FALSE(r.ok());
      if (!r.ok()) {
        CHECK(r.error.message.size() > 0);
        CHECK(r.error.byte_offset <= cut);
        CHECK(r.error.line >= 1);
      }
      ++refused;
      continue;
    }
    REQUIRE_MESSAGE(r.ok(), r.error.to_string());
    ++loaded;
    CHECK(r.store->counts.events == k);
    bool whole = cut == text.size() || (cut >= l.events_close && std::string_view(text).substr(cut).find_first_not_of(" \n\r\t") == std::string_view::npos);
    if (!whole) {
      REQUIRE(r.store->issues.truncation.has_value());
      CHECK(r.store->issues.truncation->byte_offset == cut);
      CHECK(r.store->issues.truncation->events == k);
      CHECK(r.store->issues.count(IssueKind::Truncated) == 1);
      CHECK(r.warning == "cut.json: " + describe(*r.store->issues.truncation));
    }
    CHECK(digest(*r.store) == reference_of(k));
  }
  MESSAGE(cuts.size() << " cuts: " << loaded << " loaded, " << refused << " refused with an offset");
}

std::vector<size_t> every_offset(size_t size) {
  std::vector<size_t> cuts(size + 1);
  for (size_t i = 0; i <= size; ++i) cuts[i] = i;
  return cuts;
}

// `count` offsets spread over the file, each nudged by a different amount so that they land at
// every kind of place (inside strings, numbers, args, between events).
std::vector<size_t> spread_offsets(size_t size, size_t count) {
  std::vector<size_t> cuts;
  for (size_t i = 0; i < count; ++i) cuts.push_back(std::min(size, i * size / count + (i * 7919) % 97));
  cuts.push_back(size);
  return cuts;
}

std::string read_text(const std::string& path) {
  FileBytes bytes = read_trace_file(path, {});
  REQUIRE(bytes.buffer);
  return std::string(bytes.buffer->view());
}

}  // namespace

TEST_CASE("a small test trace cut at every byte loads exactly the complete events or fails with an offset") {
  for (const char* name : {"catapult_async_begin_end.json.gz", "catapult_flow_simple.json.gz",
                           "kin_tfviewer_demo_generic.json.gz", "hta_trace_compare_base.json.gz",
                           "hta_trace_compare_test.json.gz", "hta_inference_rank1_oldfmt.json.gz",
                           "kin_docs_after_fix_h100.json.gz"}) {
    CAPTURE(name);
    std::string text = read_text(sl::test::test_data(name));
    check_cuts(text, every_offset(text.size()));
  }
}

TEST_CASE("larger test traces cut at a few hundred offsets") {
  for (const char* name : {"hta_amd_mi250_minitoy.json.gz", "hta_cp_simple_add_input.json.gz"}) {
    CAPTURE(name);
    std::string text = read_text(sl::test::test_data(name));
    check_cuts(text, spread_offsets(text.size(), 300));
  }
}

TEST_CASE("a corpus trace cut at a few hundred offsets") {  // kernel names up to 10 KB: many cuts land in strings
  if (!sl::test::have_shared()) return;
  std::string text = read_text((sl::test::shared_dir() / "corpus" / "hta_cupti_profiler_a100.json.gz").string());
  check_cuts(text, spread_offsets(text.size(), 300));
}

TEST_CASE("a bare array cut anywhere: the Trace Event Format lets it end without its closing bracket") {
  std::string text = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":2,"args":{"k":[1,{"x":"}]"}]}},)"
                     "\n" R"({"ph":"i","name":"b\"],","pid":1,"tid":2,"ts":3},{"ph":"C","name":"c","pid":1,"ts":4,"args":{"v":1}}])";
  check_cuts(text, every_offset(text.size()));
  auto s = load_ok(std::string_view(text).substr(0, text.size() - 1));  // just the `]` missing
  CHECK(s->counts.events == 3);
  REQUIRE(s->issues.truncation.has_value());
  CHECK(s->issues.truncation->byte_offset == text.size() - 1);
}

TEST_CASE("a cut-off trace: truncated issue, offset, events read, one warning") {
  std::string text = "{\"traceEvents\":[\n{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n"
                     "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1},\n{\"ph\":\"X\",\"na";
  LoadResult r = load_trace_text(text, "run.json");
  REQUIRE(r.ok());
  CHECK(r.store->counts.events == 2);
  CHECK(r.store->slice_count() == 2);
  CHECK(r.store->issues.count(IssueKind::Truncated) == 1);
  CHECK(r.store->issues.examples(IssueKind::Truncated) == std::vector<uint64_t>{text.size()});
  REQUIRE(r.store->issues.truncation.has_value());
  CHECK(r.store->issues.truncation->events == 2);
  CHECK(r.store->meta.bytes == text.size());
  CHECK(r.warning == "run.json: this trace ends at byte " + std::to_string(text.size()) +
                         ": the run was probably cut off; 2 events loaded");
  CHECK(r.warning.find('\n') == std::string::npos);
  CHECK(r.store->meta.hta.from_text);  // HTA's facts come from the repaired text
}

TEST_CASE("what is cut before any complete event is still an error with the offset") {
  LoadError e = load_error("{\"traceEvents\":[{\"ph\":\"X\",\"na");
  CHECK(e.message == "unexpected end of file: the trace stops before its first complete event");
  CHECK(e.byte_offset == 29);
  e = load_error("{\"deviceProperties\":[{\"id\":0}], \"trace");
  CHECK(e.message == "unexpected end of file: the trace stops before its \"traceEvents\" array");
  CHECK(e.byte_offset == 38);
  e = load_error("[");
  CHECK(e.byte_offset == 1);
  // Broken JSON in the middle of a cut-off file: the real syntax error, not a cut.
  e = load_error("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1 2},{\"ph\":\"X\",\"na");
  CHECK(e.message.find("invalid JSON") != std::string::npos);
  CHECK(e.byte_offset < 40);
}

TEST_CASE("arrays of non-events are not traces (issue 18)") {
  LoadError e = load_error("[1,2,3]");
  CHECK(e.message == "not a trace: no element of the events array is an event object");
  CHECK(e.byte_offset == 1);
  CHECK(e.column == 2);
  e = load_error("{\"traceEvents\": [\"a\", [1]]}");
  CHECK(e.message.starts_with("not a trace"));
  CHECK(e.byte_offset == 17);
  CHECK(load_error("[1,2,").message.find("not a trace") != std::string::npos);
  // An empty array is an empty trace, and one stray element among events is only counted.
  CHECK(load_ok("[]")->counts.events == 0);
  auto mixed = load_ok(R"([1,{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}])");
  CHECK(mixed->counts.events == 2);
  CHECK(mixed->issues.count(IssueKind::NotAnObject) == 1);
  CHECK(mixed->slice_count() == 1);
}

TEST_CASE("trailing commas anywhere are accepted and counted") {
  std::string text = R"({"traceEvents":[)"
                     R"({"ph":"X","name":"a,]","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":1,"list":[1,2,],},},)"
                     R"({"ph":"C","name":"c","pid":1,"ts":2,"args":{"v":3,}},],"schemaVersion":1,})";
  LoadResult r = load_trace_text(text, "commas.json");
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  CHECK(r.store->counts.events == 2);
  CHECK(r.store->slice_count() == 1);
  CHECK(r.store->counts.counters == 1);
  CHECK(r.store->issues.count(IssueKind::TrailingComma) == 6);
  CHECK(r.store->issues.examples(IssueKind::TrailingComma).front() == text.find("2,]") + 1);
  CHECK_FALSE(r.store->issues.truncation.has_value());
  CHECK(r.warning.empty());
  CHECK(r.store->meta.top_level.size() == 1);
  // The comma inside the name is text, not a trailing comma.
  CHECK(sl::test::find_slice(*r.store, "a,]").valid());
  // The args read back without the blanked commas failing them.
  SliceRef a = sl::test::find_slice(*r.store, "a,]");
  CHECK(r.store->decode_args(r.store->slices(a.track).args[a.index]).size() == 2);
  // In the top-level values the loader reads itself (devices): forgiven and counted there too.
  LoadResult devices = load_trace_text(
      R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}],"deviceProperties":[{"id":0,"name":"H100",},],})",
      "devices.json");
  REQUIRE(devices.ok());
  REQUIRE(devices.store->meta.devices.size() == 1);
  CHECK(devices.store->meta.devices[0].name == "H100");
  CHECK(devices.store->issues.count(IssueKind::TrailingComma) == 3);
  // A trailing comma and a cut together.
  LoadResult both = load_trace_text(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1,"args":{"x":1,}},{"ph":"X")", "both.json");
  REQUIRE(both.ok());
  CHECK(both.store->counts.events == 1);
  CHECK(both.store->issues.count(IssueKind::TrailingComma) == 1);
  CHECK(both.store->issues.count(IssueKind::Truncated) == 1);
}

TEST_CASE("events without tid (or pid) go where Perfetto puts them") {
  auto s = load_ok(R"([
    {"ph":"X","name":"pid only","pid":5,"ts":1,"dur":1},
    {"ph":"X","name":"main thread","pid":5,"tid":5,"ts":3,"dur":1},
    {"ph":"X","name":"other thread","pid":5,"tid":6,"ts":3,"dur":1},
    {"ph":"X","name":"string pid only","pid":"Spans","ts":1,"dur":1},
    {"ph":"X","name":"neither","ts":2,"dur":1},
    {"ph":"X","name":"pid zero","pid":0,"tid":0,"ts":4,"dur":1}])");
  CHECK(s->counts.slices == 6);
  CHECK(s->processes.size() == 3);  // 5, "Spans", 0
  CHECK(s->tracks.size() == 4);     // 5/5 (with the tid-less one), 5/6, Spans/Spans, 0/0
  SliceRef pid_only = sl::test::find_slice(*s, "pid only"), main = sl::test::find_slice(*s, "main thread");
  CHECK(pid_only.track == main.track);
  SliceRef neither = sl::test::find_slice(*s, "neither"), zero = sl::test::find_slice(*s, "pid zero");
  CHECK(neither.track == zero.track);
  const Track& spans = s->tracks[sl::test::find_slice(*s, "string pid only").track];
  CHECK(s->strings.view(spans.tid_text) == "Spans");
  CHECK(s->strings.view(s->processes[spans.process].pid_text) == "Spans");
  CHECK(s->issues.total() == 0);
}

TEST_CASE("phases with extra characters read by their first character / numeric-string counters") {
  auto s = load_ok(R"([
    {"ph":"XB","name":"x","pid":1,"tid":1,"ts":1,"dur":4},
    {"ph":"iX","name":"mark","pid":1,"tid":1,"ts":2},
    {"ph":"","name":"empty","pid":1,"tid":1,"ts":2},
    {"ph":7,"name":"number","pid":1,"tid":1,"ts":2},
    {"ph":"Counter","name":"mem","pid":1,"ts":1,"args":{"a":"12.5","b":3,"c":"abc","d":"-2e3","e":" 1"}},
    {"ph":"C","name":"q","pid":1,"ts":2,"args":{"value":"7"}}])");
  CHECK(s->counts.slices == 1);
  CHECK(s->counts.instants == 1);
  CHECK(s->issues.count(IssueKind::UnknownPhase) == 2);
  CHECK(s->counts.counters == 2);
  std::map<std::string, double> values;
  for (const CounterSeries& c : s->counters) {
    REQUIRE(c.value.size() == 1);
    values[std::string(s->strings.view(c.name))] = c.value[0];
  }
  CHECK(values == std::map<std::string, double>{{"mem.a", 12.5}, {"mem.b", 3}, {"mem.d", -2000}, {"q", 7}});
}

TEST_CASE("a cut-off gzip stream loads what decompresses") {
  std::string text = read_text(sl::test::test_data("hta_trace_compare_base.json.gz"));
  Layout l = layout_of(text);
  std::string z = gzip(text);
  std::string path = "/tmp/sightline_tolerant_cut_test.json.gz";
  size_t loaded = 0;
  for (size_t cut : spread_offsets(z.size() - 3, 40)) {
    cut += 2;  // from inside the gzip header (a file of 0 or 1 bytes is not recognisably gzip)
    CAPTURE(cut);
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << z.substr(0, cut);
    }
    LoadResult r = load_trace(path);
    if (!r.ok()) {
      CHECK(r.error.message.find("gzip stream itself stops at compressed byte " + std::to_string(cut)) != std::string::npos);
      continue;
    }
    ++loaded;
    REQUIRE(r.store->issues.truncation.has_value());
    const Truncation& t = *r.store->issues.truncation;
    CHECK(t.gzip);
    CHECK(t.compressed_offset == cut);
    CHECK(t.byte_offset == r.store->meta.bytes);
    CHECK(t.byte_offset <= text.size());
    size_t k = size_t(std::upper_bound(l.ends.begin(), l.ends.end(), t.byte_offset) - l.ends.begin());
    CHECK(r.store->counts.events == k);
    CHECK(r.warning.find("compressed byte " + std::to_string(cut)) != std::string::npos);
    // Exactly what decompressed: the same as loading that prefix of the plain text.
    LoadResult plain = load_trace_text(std::string_view(text).substr(0, t.byte_offset));
    REQUIRE(plain.ok());
    CHECK(digest(*plain.store) == digest(*r.store));
  }
  CHECK(loaded > 30);
  // Only the 8-byte trailer missing: every event is there, and the cut is still reported.
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << z.substr(0, z.size() - 8);
  }
  LoadResult r = load_trace(path);
  REQUIRE(r.ok());
  CHECK(r.store->counts.events == l.ends.size());
  REQUIRE(r.store->issues.truncation.has_value());
  CHECK(r.store->issues.truncation->byte_offset == text.size());
  // A corrupt stream (not a cut) stays an error.
  std::string corrupt = z;
  for (size_t i = 20; i < 60; ++i) corrupt[i] = char(0xFF);
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << corrupt;
  }
  CHECK_FALSE(load_trace(path).ok());
  std::remove(path.c_str());
}

TEST_CASE("the repair scan alone: what it keeps, closes and counts") {
  JsonRepair whole = plan_json_repair(R"({"traceEvents":[{"a":1}]})");
  CHECK_FALSE(whole.needed());
  JsonRepair cut = plan_json_repair(R"({"x":{"y":[1,]},"traceEvents":[{"a":"},{"},{"b":)");
  CHECK(cut.truncated);
  CHECK(cut.complete_events == 1);
  CHECK(cut.keep == std::string_view(R"({"x":{"y":[1,]},"traceEvents":[{"a":"},{"})").size());
  CHECK(cut.closers == "]}");
  CHECK(cut.trailing_commas == std::vector<uint64_t>{12});
  JsonRepair after = plan_json_repair(R"({"traceEvents":[{"a":1}],"traceName":"ru)");
  CHECK(after.truncated);
  CHECK(after.closers == "}");
  CHECK(after.keep == 24);
  JsonRepair mismatch = plan_json_repair(R"({"traceEvents":[{"a":1]]})");
  CHECK_FALSE(mismatch.needed());
}
