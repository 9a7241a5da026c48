// Each format point of shared/specs/trace-format.md, on hand-written minimal traces.
#include <libdeflate.h>

#include <atomic>
#include <cstdio>
#include <fstream>

#include "core/import/kineto/kineto_loader.h"
#include "core/import/trace_loader.h"
#include "core/report/trace_info.h"
#include "tests/unit/test_support.h"

using namespace sl;
using sl::test::find_slice;
using sl::test::load_error;
using sl::test::load_ok;
using sl::test::gzip;

TEST_CASE("object and bare-array top levels load the same events") {
  auto a = load_ok(R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":5}],"schemaVersion":1})");
  auto b = load_ok(R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":5}])");
  CHECK(a->counts.events == 1);
  CHECK(b->counts.events == 1);
  CHECK(a->slice_count() == 1);
  CHECK(b->slice_count() == 1);
  CHECK(a->meta.top_level.size() == 1);
  CHECK(a->meta.top_level[0].first == "schemaVersion");
  auto empty = load_ok(R"({"traceEvents": [ ]})");
  CHECK(empty->counts.events == 0);
}

TEST_CASE("timestamps are exact nanoseconds rebased to the trace start") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"X","name":"late","pid":1,"tid":1,"ts":1661203463029566.123,"dur":0.5},
    {"ph":"X","name":"early","pid":1,"tid":1,"ts":1661203463029566,"dur":0.001},
    {"ph":"X","name":"huge","pid":1,"tid":1,"ts":9007199254740993,"dur":1}]})");
  CHECK(s->origin_ns == 1661203463029566000);
  SliceRef late = find_slice(*s, "late"), early = find_slice(*s, "early");
  REQUIRE(late.valid());
  CHECK(s->start(late) == 123);
  CHECK(s->dur(late) == 500);
  CHECK(s->start(early) == 0);
  CHECK(s->dur(early) == 1);
  // Beyond ±146 years of µs: counted and skipped, neighbours untouched.
  CHECK_FALSE(find_slice(*s, "huge").valid());
  CHECK(s->issues.count(IssueKind::TimestampOutOfRange) == 1);
  CHECK(s->end_ns == 500 + 123);
}

TEST_CASE("pids and tids are opaque keys: strings / negatives / huge numbers") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"X","name":"a","pid":"Spans","tid":"PyTorch Profiler","ts":1,"dur":1},
    {"ph":"X","name":"b","pid":3113936,"tid":-1029147072,"ts":1,"dur":1},
    {"ph":"X","name":"c","pid":3113936,"tid":4294967297,"ts":1,"dur":1},
    {"ph":"X","name":"d","pid":"","tid":"","ts":1,"dur":1},
    {"ph":"X","name":"e","pid":3113936,"tid":-1029147072,"ts":3,"dur":1}]})");
  CHECK(s->processes.size() == 3);
  CHECK(s->tracks.size() == 4);
  SliceRef b = find_slice(*s, "b"), e = find_slice(*s, "e");
  CHECK(b.track == e.track);
  CHECK(s->tracks[b.track].tid == -1029147072);
  CHECK(s->tracks[find_slice(*s, "c").track].tid == 4294967297);
  CHECK(s->strings.view(s->processes[s->tracks[find_slice(*s, "a").track].process].pid_text) == "Spans");
}

TEST_CASE("slices nest by time - partial overlaps go to an extra lane and are counted") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"X","name":"child","pid":1,"tid":1,"ts":2,"dur":3},
    {"ph":"X","name":"parent","pid":1,"tid":1,"ts":0,"dur":10},
    {"ph":"X","name":"grandchild","pid":1,"tid":1,"ts":3,"dur":1},
    {"ph":"X","name":"straddler","pid":1,"tid":1,"ts":8,"dur":5},
    {"ph":"X","name":"after","pid":1,"tid":1,"ts":20,"dur":1}]})");
  SliceRef parent = find_slice(*s, "parent"), child = find_slice(*s, "child");
  SliceRef grandchild = find_slice(*s, "grandchild"), straddler = find_slice(*s, "straddler");
  CHECK(s->parent(child) == parent);
  CHECK(s->parent(grandchild) == child);
  CHECK_FALSE(s->parent(parent).valid());
  const SliceColumns& c = s->slices(parent.track);
  CHECK(c.depth[grandchild.index] == 2);
  CHECK(c.lane[straddler.index] == 1);  // never hidden, never mis-nested
  CHECK(c.lane[find_slice(*s, "after").index] == 0);
  CHECK(s->issues.count(IssueKind::OverlappingSlice) == 1);
  const Track& t = s->tracks[parent.track];
  CHECK(t.row_count() == 4);  // 3 nested rows + 1 overlap lane
  CHECK(t.row_of(straddler.index) == 3);
  CHECK(s->slice_at(parent.track, 3500) == grandchild);
  CHECK(s->slice_at(parent.track, 6000) == parent);
  CHECK_FALSE(s->slice_at(parent.track, 15000).valid());
  auto [lo, hi] = s->rows_overlapping(parent.track, 11000, 19000);
  int overlapping = 0;
  for (uint32_t r = lo; r < hi; ++r) overlapping += c.end(r) > 11000;
  CHECK(overlapping == 1);  // the straddler only
}

TEST_CASE("B/E pairs match per thread last-in-first-out - strays are counted") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"B","name":"outer","pid":1,"tid":1,"ts":0},
    {"ph":"B","name":"inner","pid":1,"tid":1,"ts":1},
    {"ph":"E","pid":1,"tid":1,"ts":2},
    {"ph":"E","pid":1,"tid":1,"ts":5},
    {"ph":"E","pid":1,"tid":1,"ts":6},
    {"ph":"B","name":"open","pid":1,"tid":2,"ts":3},
    {"ph":"X","name":"last","pid":1,"tid":3,"ts":9,"dur":1}]})");
  SliceRef outer = find_slice(*s, "outer"), inner = find_slice(*s, "inner"), open = find_slice(*s, "open");
  CHECK(s->dur(outer) == 5000);
  CHECK(s->dur(inner) == 1000);
  CHECK(s->parent(inner) == outer);
  CHECK(s->issues.count(IssueKind::EndWithoutBegin) == 1);
  CHECK(s->issues.count(IssueKind::BeginWithoutEnd) == 1);
  CHECK(s->end(open) == 10000);  // an unclosed begin ends at the trace end
}

TEST_CASE("instants / counters and metadata") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"M","name":"process_name","pid":7,"args":{"name":"trainer"}},
    {"ph":"M","name":"process_sort_index","pid":7,"args":{"sort_index":3}},
    {"ph":"M","name":"thread_name","pid":7,"tid":8,"args":{"name":"main \"thread\""}},
    {"ph":"M","name":"thread_sort_index","pid":7,"tid":8,"args":{"sort_index":-2}},
    {"ph":"M","name":"process_labels","pid":7,"args":{"labels":"CPU"}},
    {"ph":"i","name":"mark","pid":7,"tid":8,"ts":5,"s":"g"},
    {"ph":"I","name":"mark2","pid":7,"tid":8,"ts":4},
    {"ph":"R","name":"mark3","pid":7,"tid":8,"ts":6},
    {"ph":"C","name":"mem","pid":7,"ts":1,"args":{"used":10,"free":5}},
    {"ph":"C","name":"mem","pid":7,"ts":2,"args":{"used":12.5,"free":2.5}},
    {"ph":"C","name":"queue","pid":7,"ts":2,"args":{"value":3}}]})");
  CHECK(s->counts.metadata == 5);
  CHECK(s->counts.instants == 3);
  CHECK(s->counts.counters == 3);
  REQUIRE(s->processes.size() == 1);
  const Process& p = s->processes[0];
  CHECK(s->strings.view(p.name) == "trainer");
  CHECK(s->strings.view(p.labels) == "CPU");
  CHECK(p.sort_index == 3);
  const Track& t = s->tracks[p.tracks[0]];
  CHECK(s->strings.view(t.name) == "main \"thread\"");
  CHECK(t.sort_index == -2);
  CHECK(t.instants.size() == 3);
  CHECK(t.instants.ts[0] == 3000);  // sorted by time, rebased to ts 1
  CHECK(t.instants.scope[1] == 'g');  // sorted: mark2 (4), mark (5), mark3 (6)
  REQUIRE(s->counters.size() == 3);
  for (const CounterSeries& c : s->counters) {
    std::string_view name = s->strings.view(c.name);
    if (name == "mem.used") CHECK(c.value == std::vector<double>{10, 12.5});
    else if (name == "queue") CHECK(c.value == std::vector<double>{3});
    else CHECK(name == "mem.free");
  }
}

TEST_CASE("flows bind to slices: s to the enclosing slice / f with bp=e to the enclosing / else the next") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":77}},
    {"ph":"s","cat":"ac2g","name":"ac2g","id":77,"pid":1,"tid":1,"ts":10},
    {"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":20,"dur":4,"args":{"correlation":77,"stream":7,"device":0}},
    {"ph":"f","cat":"ac2g","name":"ac2g","id":77,"pid":0,"tid":7,"ts":20,"bp":"e"},
    {"ph":"s","cat":"fwdbwd","id":"0x1a","pid":1,"tid":1,"ts":11},
    {"ph":"f","cat":"fwdbwd","id":"0x1a","pid":1,"tid":1,"ts":30},
    {"ph":"X","name":"backward","cat":"cpu_op","pid":1,"tid":1,"ts":31,"dur":1},
    {"ph":"f","cat":"ac2g","id":99,"pid":0,"tid":7,"ts":20,"bp":"e"},
    {"ph":"s","cat":"ac2g","id":98,"pid":1,"tid":1,"ts":12}]})");
  SliceRef launch = find_slice(*s, "cudaLaunchKernel"), kernel = find_slice(*s, "gemm");
  SliceRef backward = find_slice(*s, "backward");
  REQUIRE(s->flows.size() == 2);
  auto out = s->flows_from(launch);
  REQUIRE(out.size() == 2);
  bool to_kernel = false, to_backward = false;
  for (uint32_t f : out) {
    to_kernel |= s->flows[f].to == kernel;
    to_backward |= s->flows[f].to == backward;
  }
  CHECK(to_kernel);
  CHECK(to_backward);
  CHECK(s->flows_to(kernel).size() == 1);
  CHECK(s->issues.count(IssueKind::FlowEndWithoutStart) == 1);
  CHECK(s->issues.count(IssueKind::FlowStartWithoutEnd) == 1);
  CHECK(s->counts.flows == 6);
}

TEST_CASE("correlation links a GPU activity and its launch both ways / without flows") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"X","name":"cudaGraphLaunch","cat":"cuda_runtime","pid":5,"tid":5,"ts":0,"dur":9,"args":{"correlation":3}},
    {"ph":"X","name":"k1","cat":"kernel","pid":0,"tid":7,"ts":12,"dur":1,"args":{"correlation":3,"stream":7}},
    {"ph":"X","name":"k2","cat":"kernel","pid":0,"tid":7,"ts":14,"dur":1,"args":{"correlation":3,"stream":7}},
    {"ph":"X","name":"copy","cat":"gpu_memcpy","pid":0,"tid":8,"ts":14,"dur":1,"args":{"correlation":4,"stream":8}}]})");
  SliceRef launch = find_slice(*s, "cudaGraphLaunch");
  CHECK(s->launch_of(find_slice(*s, "k1")) == launch);
  CHECK(s->launch_of(find_slice(*s, "k2")) == launch);
  CHECK(s->activities_of(launch).size() == 2);
  CHECK_FALSE(s->launch_of(find_slice(*s, "copy")).valid());
  CHECK(s->launch_link_count() == 2);
  CHECK(s->gpu_activity_count() == 3);
  CHECK(s->kernel_count() == 2);
  CHECK(*s->correlation_id(launch) == 3);
  const Track& gpu = s->tracks[find_slice(*s, "k1").track];
  CHECK(gpu.kind == TrackKind::GpuStream);
  CHECK(gpu.stream == 7);
  CHECK(gpu.device == 0);
}

TEST_CASE("old and new Kineto category names / ROCm and MTIA device work") {
  auto s = load_ok(R"({"traceEvents":[
    {"ph":"X","cat":"Kernel","name":"old","pid":0,"tid":"stream 7","ts":1,"dur":1},
    {"ph":"X","cat":"Memcpy","name":"Memcpy HtoD","pid":0,"tid":"stream 7","ts":3,"dur":1},
    {"ph":"X","cat":"kernel","name":"rocm","pid":2,"tid":1,"ts":1,"dur":1},
    {"ph":"X","cat":"mtia_ccp_events","name":"job","pid":17,"tid":3774,"ts":1,"dur":1},
    {"ph":"X","cat":"mtia_runtime","name":"queue","pid":17,"tid":3568,"ts":1,"dur":1},
    {"ph":"X","cat":"Runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":0,"dur":1}]})");
  CHECK(s->kernel_count() == 2);
  const Track& old_stream = s->tracks[find_slice(*s, "old").track];
  CHECK(old_stream.kind == TrackKind::GpuStream);
  CHECK(old_stream.stream == 7);  // from "stream 7"
  CHECK(s->tracks[find_slice(*s, "job").track].kind == TrackKind::GpuStream);
  // A runtime queue under the device's pid belongs to the device, not to the host.
  CHECK(s->tracks[find_slice(*s, "queue").track].kind == TrackKind::GpuStream);
  TraceSummary sum = summarize(*s);
  CHECK(sum.gpu_streams == 3);
  CHECK(sum.threads == 1);
}

TEST_CASE("async b/n/e and legacy S/T/F events become slices on async tracks") {
  auto s = load_ok(R"([
    {"ph":"b","cat":"io","name":"read","id":"0x1","pid":1,"tid":1,"ts":0},
    {"ph":"n","cat":"io","name":"read","id":"0x1","pid":1,"tid":1,"ts":1},
    {"ph":"e","cat":"io","name":"read","id":"0x1","pid":1,"tid":2,"ts":4},
    {"ph":"S","cat":"r","name":"A","id":"1a","pid":1,"tid":1,"ts":2},
    {"ph":"T","cat":"r","name":"A","id":"1a","pid":1,"tid":1,"ts":3},
    {"ph":"F","cat":"r","name":"A","id":"1a","pid":1,"tid":1,"ts":7},
    {"ph":"e","cat":"io","name":"read","id":"0x2","pid":1,"tid":1,"ts":5},
    {"ph":"P","name":"sample","pid":1,"tid":1,"ts":5},
    {"ph":"O","name":"snapshot","id":"1","pid":1,"tid":1,"ts":5},
    {"ph":"?","name":"odd","pid":1,"tid":1,"ts":5}])");
  SliceRef read = find_slice(*s, "read"), a = find_slice(*s, "A");
  REQUIRE(read.valid());
  CHECK(s->tracks[read.track].kind == TrackKind::Async);
  CHECK(s->dur(read) == 4000);
  CHECK(s->dur(a) == 5000);
  CHECK(s->tracks[read.track].instants.size() == 1);
  CHECK(s->issues.count(IssueKind::AsyncEndWithoutBegin) == 1);
  CHECK(s->issues.count(IssueKind::SkippedPhase) == 2);
  CHECK(s->issues.count(IssueKind::UnknownPhase) == 1);
  CHECK(s->counts.events == 10);
}

TEST_CASE("events with missing or ill-typed fields are skipped and counted with their offsets") {
  std::string json = R"({"traceEvents":[
{"ph":"X","name":"ok","pid":1,"tid":1,"ts":1,"dur":1},
{"ph":"X","name":"no ts","pid":1,"tid":1,"dur":1},
{"ph":"X","name":"string ts","pid":1,"tid":1,"ts":"12","dur":1},
{"ph":"X","name":"object ts","pid":1,"tid":1,"ts":{"a":1},"dur":1},
{"ph":"X","name":"neg","pid":1,"tid":1,"ts":5,"dur":-3},
{"ph":"X","name":"no dur","pid":1,"tid":1,"ts":5},
{"name":"no ph","pid":1,"tid":1,"ts":5},
42,
{"ph":"X","name":"ok2","pid":1,"tid":1,"ts":9,"dur":1}]})";
  auto s = load_ok(json);
  CHECK(s->counts.events == 9);
  CHECK(find_slice(*s, "ok2").valid());
  CHECK(find_slice(*s, "neg").valid());
  CHECK(s->dur(find_slice(*s, "neg")) == 0);
  CHECK(s->issues.count(IssueKind::IllTypedField) == 2);
  CHECK(s->issues.count(IssueKind::MissingField) == 3);  // no ts, no ph, no dur (kept as 0)
  CHECK(s->issues.count(IssueKind::NegativeDuration) == 1);
  CHECK(s->issues.count(IssueKind::NotAnObject) == 1);
  CHECK(s->issues.examples(IssueKind::IllTypedField)[0] == json.find("{\"ph\":\"X\",\"name\":\"string ts\""));
  CHECK(s->issues.examples(IssueKind::NotAnObject)[0] == json.find("42"));
}

TEST_CASE("control characters and invalid UTF-8 inside strings keep the event") {
  std::string json = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"tab\there\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},"
                     "{\"ph\":\"X\",\"name\":\"bad \xff\xfe byte\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1},"
                     "{\"ph\":\"X\",\"name\":\"caf\xc3\xa9 \\u00e9\",\"pid\":1,\"tid\":1,\"ts\":3,\"dur\":1}]}";
  auto s = load_ok(json);
  CHECK(s->slice_count() == 3);
  CHECK(find_slice(*s, "tab here").valid());
  CHECK(find_slice(*s, "bad ?? byte").valid());
  CHECK(find_slice(*s, "caf\xc3\xa9 \xc3\xa9").valid());
  CHECK(s->issues.count(IssueKind::ControlCharacter) == 1);
  CHECK(s->issues.count(IssueKind::InvalidUtf8) == 2);
}

TEST_CASE("args stay raw until asked for / then decode fully") {
  auto s = load_ok(R"({"traceEvents":[{"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":1,"dur":1,
    "args":{"queued":0,"device":0,"stream":7,"correlation":538860,"grid":[64,1,1],"name":"x\ny","nested":{"a":[1,{"b":2}]}}}]})");
  SliceRef k = find_slice(*s, "k");
  CHECK(s->slice_args_json(k).front() == '{');
  CHECK(s->slice_args_json(k).back() == '}');
  auto args = s->decode_args(s->slices(k.track).args[k.index]);
  REQUIRE(args.size() == 7);
  CHECK(args[3] == std::pair<std::string, std::string>{"correlation", "538860"});
  CHECK(args[4] == std::pair<std::string, std::string>{"grid", "[64,1,1]"});
  CHECK(args[5] == std::pair<std::string, std::string>{"name", "x\ny"});
  CHECK(args[6].second == R"({"a":[1,{"b":2}]})");
}

TEST_CASE("trace metadata: devices / distributed info / iterations / other keys") {
  auto s = load_ok(R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H100","numSms":132}],
    "distributedInfo":{"backend":"nccl","rank":3,"world_size":8},"displayTimeUnit":"ms",
    "traceEvents":[
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#12","pid":1,"tid":1,"ts":100,"dur":50},
      {"ph":"X","cat":"user_annotation","name":"ProfilerStep#11","pid":1,"tid":1,"ts":0,"dur":50},
      {"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#11","pid":0,"tid":7,"ts":1,"dur":50}],
    "traceName":"x","cupti_version":28})");
  REQUIRE(s->meta.devices.size() == 1);
  CHECK(s->meta.devices[0].name == "NVIDIA H100");
  CHECK(s->meta.devices[0].properties_json == R"({"id":0,"name":"NVIDIA H100","numSms":132})");
  CHECK(*s->meta.rank == 3);
  CHECK(*s->meta.world_size == 8);
  CHECK(s->meta.backend == "nccl");
  CHECK(s->meta.display_time_unit == "ms");
  REQUIRE(s->iterations.size() == 2);
  CHECK(s->iterations[0].number == 11);
  CHECK(s->iterations[1].number == 12);
  CHECK(s->iterations[1].start == 100000);
  CHECK(s->meta.top_level.size() == 6);
}

TEST_CASE("bad input: a clear error naming where / never a crash") {
  SUBCASE("truncated before any complete event (after one, it loads: kineto_tolerant_test.cpp)") {
    LoadError e = load_error("{\"traceEvents\":[\n\n{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\n\"na");
    CHECK(e.message.find("unexpected end of file") != std::string::npos);
    CHECK(e.line == 4);
    CHECK(e.to_string().starts_with("bad.json: byte "));
  }
  SUBCASE("not JSON") {
    LoadError e = load_error("hello");
    CHECK(e.byte_offset == 0);
    CHECK(e.message.find("not a trace") != std::string::npos);
  }
  SUBCASE("empty") { CHECK(load_error("  \n").message.find("empty file") != std::string::npos); }
  SUBCASE("traceEvents not an array") {
    LoadError e = load_error("{\"traceEvents\": {\"a\": 1}}");
    CHECK(e.message == "\"traceEvents\" is not an array");
    CHECK(e.byte_offset == 16);
    CHECK(e.column == 17);
  }
  SUBCASE("no traceEvents") { CHECK(load_error("{\"nodes\": []}").message.find("no \"traceEvents\"") != std::string::npos); }
  SUBCASE("garbage inside an event") {
    LoadError e = load_error("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,,}]}");
    CHECK(e.byte_offset > 15);
    CHECK(e.byte_offset < 40);
  }
  SUBCASE("trailing data") { CHECK(load_error("[] x").message.find("after the array") != std::string::npos); }
  SUBCASE("missing file") {
    LoadResult r = load_trace("/nonexistent/trace.json");
    CHECK_FALSE(r.ok());
    CHECK(r.error.message == "No such file or directory");
  }
}

TEST_CASE("gzip / including several concatenated members") {
  std::string part1 = R"({"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1},)";
  std::string part2 = R"({"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1}]})";
  std::string path = "/tmp/sightline_multimember_test.json.gz";
  {
    std::ofstream f(path, std::ios::binary);
    f << gzip(part1) << gzip(part2);
  }
  LoadResult r = load_trace(path);
  REQUIRE(r.ok());
  CHECK(r.store->counts.events == 2);
  CHECK(r.store->meta.bytes == part1.size() + part2.size());
  {
    std::ofstream f(path, std::ios::binary);
    std::string z = gzip(part1 + part2);
    f << z.substr(0, z.size() / 2);
  }
  LoadResult broken = load_trace(path);
  CHECK_FALSE(broken.ok());
  CHECK(broken.error.message.find("gzip") != std::string::npos);
  std::remove(path.c_str());
}

// Big enough for several parse chunks, with names that imitate chunk boundaries (`},{` inside
// strings and nested objects in args) so that every wrong guess is exercised.
TEST_CASE("chunked parsing of a large trace loses nothing / even with boundary look-alikes") {
  std::string json = "{\"deviceProperties\":[{\"id\":0,\"name\":\"x\"}],\"traceEvents\":[";
  const int n = 120000;
  for (int i = 0; i < n; ++i) {
    if (i) json += i % 3 ? ",\n" : ",";
    json += "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op},{" + std::to_string(i % 97) +
            "\",\"pid\":1,\"tid\":" + std::to_string(i % 4) + ",\"ts\":" + std::to_string(i * 10) +
            ".5,\"dur\":5,\"args\":{\"nested\":[{\"a\":1},  {\"b\":\"},{\"}],\"External id\":" + std::to_string(i) + "}}";
  }
  json += "],\"traceName\":\"},{\"}";
  REQUIRE(json.size() > 3 * (8u << 20) / 2);
  std::vector<uint64_t> progress;
  LoadOptions options;
  options.on_progress = [&](const LoadProgress& p) { progress.push_back(p.bytes_done); };
  LoadResult r = load_trace_text(json, "big.json", options);
  REQUIRE(r.ok());
  CHECK(r.store->counts.events == n);
  CHECK(r.store->slice_count() == n);
  CHECK(r.store->meta.top_level.size() == 2);
  CHECK(r.store->issues.total() == 0);
  SliceRef last = find_slice(*r.store, "op},{" + std::to_string((n - 1) % 97));
  CHECK(last.valid());
  CHECK(progress.size() > 10);
  CHECK(std::is_sorted(progress.begin(), progress.end() - 1));
  // The buffer is exactly as read: the chunk brackets were restored.
  CHECK(r.store->slice_args_json(find_slice(*r.store, "op},{5")).find("\"nested\":[{\"a\":1},") != std::string::npos);
}

// Args holding arrays of objects that start like events: a guessed boundary there fails mid-chunk,
// and the loader parses the whole array again in one piece.
TEST_CASE("a guessed boundary inside nested args falls back to one piece and loses nothing") {
  std::string json = "{\"traceEvents\":[";
  const int n = 150000;
  for (int i = 0; i < n; ++i) {
    if (i) json += ",";
    json += "{\"ph\":\"X\",\"name\":\"op\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(i) +
            ",\"dur\":1,\"args\":{\"stack\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}";
  }
  json += "]}";
  REQUIRE(json.size() > (8u << 20));
  LoadResult r = load_trace_text(json, "nested.json");
  REQUIRE(r.ok());
  CHECK(r.store->counts.events == n);
  CHECK(r.store->slice_count() == n);
  CHECK(r.store->issues.total() == 0);
}

TEST_CASE("cancellation stops a load with a cancelled error") {
  std::string json = "[";
  for (int i = 0; i < 20000; ++i) json += (i ? "," : "") + std::string(R"({"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1})");
  json += "]";
  std::atomic<bool> cancel{false};
  LoadOptions options;
  options.cancel = &cancel;
  options.on_progress = [&](const LoadProgress&) { cancel = true; };
  LoadResult r = load_trace_text(json, "c.json", options);
  CHECK_FALSE(r.ok());
  CHECK(r.error.cancelled);
}
