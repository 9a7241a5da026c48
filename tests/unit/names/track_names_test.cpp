// Names for people (core/names/track_names.h): rows without a useful name are named by what they hold.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/names/track_names.h"
#include "tests/unit/test_support.h"

using namespace sl;

namespace {

// A host process (main thread with Python frames, an autograd thread, a plain worker, a second
// Python thread), a GPU stream, Kineto's "Spans" process, and a pid that holds only metadata.
constexpr const char* kTrace = R"JSON({"traceEvents":[
 {"ph":"M","name":"process_name","pid":100,"tid":0,"args":{"name":"python3"}},
 {"ph":"M","name":"thread_name","pid":100,"tid":100,"args":{"name":"thread 100 (python3)"}},
 {"ph":"M","name":"thread_name","pid":100,"tid":104,"args":{"name":"dataloader"}},
 {"ph":"X","cat":"python_function","name":"run","pid":100,"tid":100,"ts":1,"dur":5},
 {"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: AddBackward0","pid":100,"tid":101,"ts":1,"dur":5},
 {"ph":"X","cat":"cpu_op","name":"aten::add","pid":100,"tid":-1029147072,"ts":1,"dur":5},
 {"ph":"X","cat":"python_function","name":"worker","pid":100,"tid":103,"ts":1,"dur":5},
 {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":100,"tid":104,"ts":1,"dur":5},
 {"ph":"X","cat":"python_function","name":"_bootstrap","pid":0,"tid":0,"ts":1,"dur":3},
 {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":2,"dur":1,"args":{"device":0,"stream":7}},
 {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":0,"dur":10},
 {"ph":"M","name":"process_name","pid":-1,"tid":0,"args":{"name":""}},
 {"ph":"X","cat":"cpu_op","name":"x","pid":200,"tid":200,"ts":1,"dur":1},
 {"ph":"X","cat":"python_function","name":"y","pid":300,"tid":301,"ts":1,"dur":1},
 {"ph":"X","cat":"cpu_op","name":"NllLossBackward","pid":100,"tid":105,"ts":1,"dur":1},
 {"ph":"X","cat":"Operator","name":"aten::conv2d","pid":400,"tid":"400","ts":1,"dur":1},
 {"ph":"i","name":"Record Window End","s":"g","ts":20}
]})JSON";

uint32_t track_with_tid(const TraceStore& s, std::string_view tid) {
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    if (s.strings.view(s.tracks[t].tid_text) == tid) return t;
  FAIL("no track with tid " << tid);
  return 0;
}

uint32_t process_with_pid(const TraceStore& s, std::string_view pid) {
  for (uint32_t p = 0; p < s.processes.size(); ++p)
    if (s.strings.view(s.processes[p].pid_text) == pid) return p;
  FAIL("no process with pid " << pid);
  return 0;
}

}  // namespace

TEST_CASE("threads without a useful name are named by what they hold") {
  auto store = test::load_ok(kTrace);
  const TraceStore& s = *store;
  CHECK(track_display_name(s, track_with_tid(s, "100")) == "Python main thread");  // "thread 100 (python3)"
  CHECK(track_display_name(s, track_with_tid(s, "103")) == "Python thread");
  CHECK(track_display_name(s, track_with_tid(s, "101")) == "autograd thread");
  CHECK(track_display_name(s, track_with_tid(s, "-1029147072")) == "thread -1029147072");
  CHECK(track_display_name(s, track_with_tid(s, "200")) == "main thread");
  CHECK(track_display_name(s, track_with_tid(s, "400")) == "main thread");  // a tid written as a string
  CHECK(track_display_name(s, track_with_tid(s, "105")) == "autograd thread");  // a backward node
  CHECK(track_display_name(s, track_with_tid(s, "104")) == "dataloader");  // its own name wins
  CHECK(track_display_name(s, track_with_tid(s, "PyTorch Profiler")) == "PyTorch Profiler");
}

TEST_CASE("GPU streams are named by device and stream; raw ids go to the tooltip") {
  auto store = test::load_ok(kTrace);
  const TraceStore& s = *store;
  uint32_t stream = track_with_tid(s, "7");
  CHECK(track_display_name(s, stream) == "stream 7");
  CHECK(track_full_name(s, stream) == "GPU 0 stream 7");
  CHECK(track_raw_ids(s, track_with_tid(s, "100")) == "pid 100 · tid 100 · named \"thread 100 (python3)\"");
  CHECK(track_raw_ids(s, track_with_tid(s, "103")) == "pid 100 · tid 103");
}

TEST_CASE("processes without a name are named by what they hold; empty ones have no content") {
  auto store = test::load_ok(kTrace);
  const TraceStore& s = *store;
  CHECK(process_display_name(s, process_with_pid(s, "100")) == "python3 100");
  CHECK(process_display_name(s, process_with_pid(s, "Spans")) == "PyTorch profiler spans");
  CHECK(process_display_name(s, process_with_pid(s, "300")) == "Python process 300");
  CHECK(process_display_name(s, process_with_pid(s, "200")) == "process 200");
  CHECK(process_display_name(s, process_with_pid(s, "")) == "markers");  // a global instant without a pid
  uint32_t device = s.tracks[track_with_tid(s, "7")].process;
  CHECK(process_display_name(s, device).rfind("GPU 0", 0) == 0);
  // Kineto files a host thread under the device's pid (its first track here): the process is
  // still the GPU, and the thread is no process's main thread.
  for (uint32_t t : s.processes[device].tracks)
    if (s.tracks[t].kind == TrackKind::CpuThread) CHECK(track_display_name(s, t) == "Python thread");
  CHECK(process_has_content(s, process_with_pid(s, "100")));
  CHECK_FALSE(process_has_content(s, process_with_pid(s, "-1")));
}

TEST_CASE("a CPU thread filed under a GPU's pid is grouped with the host's threads") {
  auto store = test::load_ok(kTrace);
  const TraceStore& s = *store;
  auto groups = display_groups(s);
  uint32_t device = s.tracks[track_with_tid(s, "7")].process, host = process_with_pid(s, "100");
  uint32_t python0 = track_with_tid(s, "0");  // Kineto's pid-0 Python events (the GPU's pid)
  REQUIRE(s.tracks[python0].process == device);
  auto holds = [&](uint32_t p, uint32_t t) { return std::find(groups[p].begin(), groups[p].end(), t) != groups[p].end(); };
  CHECK_FALSE(holds(device, python0));
  CHECK(holds(device, track_with_tid(s, "7")));  // the GPU keeps its stream
  CHECK(holds(host, python0));
  CHECK(groups[host].back() == python0);  // after the host's own threads
  CHECK(track_raw_ids(s, python0) == "pid 0 · tid 0");  // the tooltip keeps the raw ids
  size_t shown = 0;
  for (const auto& g : groups) shown += g.size();
  CHECK(shown == s.tracks.size());  // every track in exactly one group
}

TEST_CASE("threads of one process with the same name get their tid") {
  auto store = test::load_ok(R"JSON({"traceEvents":[
   {"ph":"M","name":"thread_name","pid":1,"tid":11,"args":{"name":"pt_thread_pool"}},
   {"ph":"M","name":"thread_name","pid":1,"tid":12,"args":{"name":"pt_thread_pool"}},
   {"ph":"M","name":"thread_name","pid":1,"tid":13,"args":{"name":"loader"}},
   {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":11,"ts":1,"dur":1},
   {"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":12,"ts":1,"dur":1},
   {"ph":"X","cat":"cpu_op","name":"c","pid":1,"tid":13,"ts":1,"dur":1}]})JSON");
  const TraceStore& s = *store;
  CHECK(track_display_name(s, track_with_tid(s, "11")) == "pt_thread_pool (tid 11)");
  CHECK(track_display_name(s, track_with_tid(s, "12")) == "pt_thread_pool (tid 12)");
  CHECK(track_display_name(s, track_with_tid(s, "13")) == "loader");
}
