// Nsight Systems SQLite exports: GPU activities linked to their launches (CUDA graphs, calls and
// activities in any order) and GPU tracks by process and context.
#include <algorithm>
#include <map>

#include "core/import/trace_loader.h"
#include "core/names/track_names.h"
#include "tests/unit/import/nsys_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::nsys_test;

// CUDA graphs traced as whole graphs (nsys --cuda-graph-trace=graph): one slice per launch on
// its stream, linked to its cudaGraphLaunch by correlation id, with the graph's ids as args.
TEST_CASE("nsys: CUDA graph launches become slices linked to cudaGraphLaunch") {
  ScratchDir dir;
  std::string path = dir.file("graphs.sqlite");
  const std::string gpid = global_pid(100), gtid = global_tid(100, 101);
  write_db(path, tiny_report(false) + R"(
INSERT INTO StringIds VALUES (20, 'cudaGraphLaunch_v10000');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10000, 10100, 0, )" + gtid + R"(, 30, 20, 0, NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_GRAPH_TRACE (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER,
  contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,
  graphId INTEGER, graphExecId INTEGER);
INSERT INTO CUPTI_ACTIVITY_KIND_GRAPH_TRACE VALUES (10200, 12200, 0, 1, NULL, 7, 30, )" + gpid + R"(, 3, 5);
)");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  CHECK(count_cat(s, "cuda_graph") == 1);
  SliceRef graph = test::find_slice(s, "CUDA graph 3");
  REQUIRE(graph.valid());
  CHECK(s.is_gpu(graph));
  CHECK(s.dur(graph) == 2000);
  CHECK(s.strings.view(s.tracks[graph.track].name) == "stream 7");
  CHECK(s.slice_args_json(graph).find(R"("graph id":3,"graph exec id":5)") != std::string_view::npos);
  SliceRef launch = s.launch_of(graph);
  REQUIRE(launch.valid());
  CHECK(s.name(launch) == "cudaGraphLaunch");
  CHECK(s.flows_from(launch).size() == 1);
}

// Correlation keys are kept per process in sorted arrays (NsysLoader's LaunchKeys, UnlaunchedKeys):
// an API call's key that comes after a larger one waits to be sorted and merged in before the GPU
// tables; an unlaunched key a little out of order is moved in place, one far out of order goes
// through a hash; searches start where the last ended. Whatever order the API calls and the GPU
// activities come in, each activity links to the first call of its id, and the activities of an
// id no call has share one correlation row.
TEST_CASE("nsys: launches are found whatever order the calls and activities come in") {
  ScratchDir dir;
  std::string path = dir.file("orders.sqlite");
  const std::string gpid = global_pid(100), gtid = global_tid(100, 101);
  // Launch ids 100-399: ascending in groups of four, each group descending, and 150-159 held back
  // to the end (far out of order).
  std::vector<int> calls;
  for (int group = 100; group < 400; group += 4)
    for (int id = group + 3; id >= group; --id)
      if (id < 150 || id >= 160) calls.push_back(id);
  for (int id = 150; id < 160; ++id) calls.push_back(id);
  std::string sql = tiny_report(false) + "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES ";
  for (size_t i = 0; i < calls.size(); ++i)
    sql += (i ? ", (" : "(") + std::to_string(20000 + 10 * i) + ", " + std::to_string(20005 + 10 * i) + ", 0, " + gtid +
           ", " + std::to_string(calls[i]) + ", 1, 0, NULL)";
  // Driver calls with a launch's id, after it: the launch stays the runtime call. Id 200 came
  // late (merged in), id 399 is the last in order.
  sql += ", (30000, 30001, 1, " + gtid + ", 200, 21, 0, NULL), (30010, 30011, 1, " + gtid +
         ", 399, 21, 0, NULL);\nINSERT INTO StringIds VALUES (21, 'cuLaunchKernelEx');\n";
  // Kernels of ids 399 down to 100 (every search goes back from the last), then ids no call has:
  // 1001 before 1000 twice (moved in place), 2000-2099 ascending, 1500 after them twice (far: a
  // hash), 1001 again.
  std::vector<int> kernels;
  for (int id = 399; id >= 100; --id) kernels.push_back(id);
  kernels.insert(kernels.end(), {1001, 1000, 1000});
  for (int id = 2000; id < 2100; ++id) kernels.push_back(id);
  kernels.insert(kernels.end(), {1500, 1500, 1001});
  sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, "
         "demangledName) VALUES ";
  for (size_t i = 0; i < kernels.size(); ++i)
    sql += (i ? ", (" : "(") + std::to_string(40000 + 10 * i) + ", " + std::to_string(40005 + 10 * i) + ", 0, 1, 7, " +
           std::to_string(kernels[i]) + ", " + gpid + ", 8)";
  write_db(path, sql + ";\n");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  std::map<int64_t, std::vector<SliceRef>> by_id;  // the kernels added here, by correlation id
  StringId add = s.strings.find("add");
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    for (uint32_t i = 0; i < s.tracks[t].slices.size(); ++i)
      if (s.tracks[t].slices.name[i] == add) by_id[s.correlation_id({t, i}).value_or(-1)].push_back({t, i});
  REQUIRE(by_id.size() == 300 + 103);
  for (int id = 100; id < 400; ++id) {
    INFO("id " << id);
    REQUIRE(by_id[id].size() == 1);
    SliceRef launch = s.launch_of(by_id[id][0]);
    REQUIRE(launch.valid());
    CHECK(s.name(launch) == "cudaLaunchKernel");
    CHECK(s.correlation_id(launch) == id);
    CHECK(s.flows_from(launch).size() == 1);
  }
  // The driver calls share their ids' rows: their correlation, not launches of their own.
  std::vector<int64_t> driver_ids;
  StringId driver = s.strings.find("cuLaunchKernelEx");
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    for (uint32_t i = 0; i < s.tracks[t].slices.size(); ++i)
      if (s.tracks[t].slices.name[i] == driver) {
        driver_ids.push_back(s.correlation_id({t, i}).value_or(-1));
        CHECK(s.activities_of({t, i}).size() == 1);
      }
  CHECK(driver_ids == std::vector<int64_t>{200, 399});
  for (int id : {1000, 1001, 1500}) {
    INFO("id " << id);
    REQUIRE(by_id[id].size() == 2);
    CHECK_FALSE(s.launch_of(by_id[id][0]).valid());
    CHECK(s.activities_of(by_id[id][0]).size() == 2);  // one row for both
  }
  // One correlation row per id with GPU work: the tiny report's five (1-4, 5 has none: 3), the
  // 300 launched and 103 unlaunched here.
  CHECK(s.correlations.size() == load_tiny(dir, false)->correlations.size() + 300 + 103);
}

// Two processes sharing a GPU: CUPTI numbers streams (and correlation ids) per process, so both
// have a stream 7 in context 1. Each keeps a track of its own, named by its owner, and each kernel
// links to the launch of its own process.
TEST_CASE("nsys: two processes' stream 7 on one GPU stay two tracks") {
  ScratchDir dir;
  std::string path = dir.file("shared_gpu.sqlite");
  const std::string gpid2 = global_pid(200), gtid2 = global_tid(200, 201);
  write_db(path, tiny_report(false) + R"(
INSERT INTO PROCESSES VALUES ()" + gpid2 + R"(, 200, 'server');
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1100, 1300, 0, )" + gtid2 + R"(, 1, 1, 0, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName)
  VALUES (2200, 2500, 0, 1, 7, 1, )" + gpid2 + R"(, 8);
)");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  std::vector<std::string> streams;
  for (const Track& t : s.tracks)
    if (t.kind == TrackKind::GpuStream && t.gpu_work) streams.emplace_back(s.strings.view(t.name));
  std::sort(streams.begin(), streams.end());
  CHECK(streams == std::vector<std::string>{"stream 7 (pid 100, context 1)", "stream 7 (pid 200, context 1)"});
  // No overlap beyond the hand-made report's own (its sync overlaps its copy): none between processes.
  CHECK(s.issues.count(IssueKind::OverlappingSlice) == load_tiny(dir, false)->issues.count(IssueKind::OverlappingSlice));
  SliceRef own = test::find_slice(s, "add");
  REQUIRE(own.valid());
  CHECK(s.strings.view(s.tracks[own.track].name) == "stream 7 (pid 200, context 1)");
  SliceRef launch = s.launch_of(own);
  REQUIRE(launch.valid());
  CHECK(s.start(launch) == 200);  // the server's cudaLaunchKernel at 1100, not the trainer's at 1000
  CHECK(s.strings.view(s.processes[s.tracks[launch.track].process].name) == "server");
  SliceRef trainer = test::find_slice(s, "void add<float>(float*, float const*)");
  REQUIRE(trainer.valid());
  CHECK(s.tracks[trainer.track].process == s.tracks[own.track].process);  // both under GPU 0
  CHECK(s.start(s.launch_of(trainer)) == 100);
}

// Streams and contexts as GPU tracks under their device: one process using GPU 0 through two
// contexts. Context 2 has stream 3, a context-wide sync, and a stream 7 like context 1's.
TEST_CASE("nsys: a device with two contexts groups its streams by context and names the context") {
  ScratchDir dir;
  std::string path = dir.file("two_contexts.sqlite");
  const std::string gpid = global_pid(100);
  write_db(path, tiny_report(false) + R"(
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName)
  VALUES (5000, 5100, 0, 2, 3, 20, )" + gpid + R"(, 8), (5200, 5300, 0, 2, 7, 21, )" + gpid + R"(, 8);
INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start, end, deviceId, contextId, streamId, correlationId, globalPid, syncType, eventId)
  VALUES (5400, 5500, 0, 2, 4294967295, 22, )" + gpid + R"(, 4, 4294967295);
)");
  LoadResult r = load_trace(path);
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  auto rows_of = [&](const TraceStore& store, std::string_view device) {
    std::vector<std::string> names;
    for (const Process& p : store.processes)
      if (store.strings.view(p.name) == device)
        for (uint32_t t : p.tracks) names.emplace_back(store.strings.view(store.tracks[t].name));
    return names;
  };
  // Display order: context 1's streams, then context 2's, the context-wide track first.
  CHECK(rows_of(s, "NVIDIA Test GPU") == std::vector<std::string>{"stream 7 (pid 100, context 1)", "context-wide (context 2)",
                                                                    "stream 3 (context 2)", "stream 7 (pid 100, context 2)"});
  SliceRef add = test::find_slice(s, "add");
  REQUIRE(add.valid());
  CHECK(s.strings.view(s.tracks[add.track].name) == "stream 3 (context 2)");
  CHECK(s.tracks[add.track].stream == 3);  // the stream stays the stream (HTA mode reads args.stream)
  CHECK(s.slice_args_json(add).find(R"("context":2,"stream":3)") != std::string::npos);
  // The timeline and figures label the rows so, not "stream 3" (two rows would read "stream 7").
  CHECK(track_display_name(s, add.track) == "stream 3 (context 2)");
  CHECK(track_full_name(s, add.track) == "GPU 0 stream 3 (context 2)");
  // One context: Kineto's names and order, unchanged.
  auto one = load_tiny(dir, false);
  CHECK(rows_of(*one, "NVIDIA Test GPU") == std::vector<std::string>{"stream 7"});
  SliceRef kernel = test::find_slice(*one, "void add<float>(float*, float const*)");
  REQUIRE(kernel.valid());
  CHECK(track_display_name(*one, kernel.track) == "stream 7");
}
