// Nsight Systems SQLite exports: a hand-made report built here with the SQLite API (so a plain
// clone tests itself) maps every kind of row; progress, cancelling, and HTA mode on it.
#include <algorithm>
#include <atomic>

#include "core/analysis/common.h"
#include "core/import/trace_loader.h"
#include "core/memory/memory_analysis.h"
#include "core/report/trace_info.h"
#include "tests/unit/import/nsys_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::nsys_test;

TEST_CASE("nsys: a hand-made report maps every kind of row") {
  ScratchDir dir;
  for (bool schema_2025 : {false, true}) {
    CAPTURE(schema_2025);
    auto s = load_tiny(dir, schema_2025);
    CHECK(s->meta.format == "nsys-sqlite");
    // 5 runtime/driver + 2 kernels + 1 memcpy + 1 memset + 1 sync + 4 NVTX events + 1 OS runtime
    // + 5 GPU metric samples.
    CHECK(s->counts.events == 20);
    CHECK(s->counts.counters == 5);
    REQUIRE(s->counters.size() == 2);
    const CounterSeries& sm = s->counters[0];
    CHECK(s->strings.view(sm.name) == "SM Active [Throughput %]");
    CHECK(sm.ts == std::vector<TimeNs>{100, 1100, 2100});
    CHECK(sm.value == std::vector<double>{10, 55, 0});
    CHECK(s->strings.view(s->processes[sm.process].name) == "GPU metrics: GH100");
    CHECK(s->counts.metadata == 1);  // the domain's name
    CHECK(s->kernel_count() == 2);
    CHECK(s->gpu_activity_count() == 5);
    CHECK(count_cat(*s, "cuda_runtime") == 4);
    CHECK(count_cat(*s, "cuda_driver") == 1);
    CHECK(count_cat(*s, "gpu_memcpy") == 1);
    CHECK(count_cat(*s, "gpu_memset") == 1);
    CHECK(count_cat(*s, "cuda_sync") == 1);
    CHECK(count_cat(*s, "user_annotation") == 3);  // push/pop, start/end, the unclosed one
    CHECK(count_cat(*s, "os_runtime") == 1);
    CHECK(s->issues.count(IssueKind::BeginWithoutEnd) == 1);
    // Times: exact integer ns, session start + row time, rebased to the earliest (the NVTX range at 900).
    CHECK(s->origin_ns == 1000000000000000900);
    SliceRef launch = test::find_slice(*s, "cudaLaunchKernel");  // "_v7000" stripped
    REQUIRE(launch.valid());
    CHECK(s->start(launch) == 100);
    CHECK(s->dur(launch) == 500);
    CHECK(test::find_slice(*s, "cudaGetDeviceProperties_v2").valid());  // only the version suffix goes
    // The kernel: demangled name, Kineto's args, its launch by correlation and an ac2g flow.
    SliceRef kernel = test::find_slice(*s, "void add<float>(float*, float const*)");
    REQUIRE(kernel.valid());
    CHECK(s->is_gpu(kernel));
    CHECK(s->start(kernel) == 700);
    CHECK(s->dur(kernel) == 500);
    CHECK(s->launch_of(kernel) == launch);
    CHECK(s->slice_args_json(kernel) ==
          R"({"device":0,"context":1,"stream":7,"correlation":1,"registers per thread":32,"shared memory":3072,)"
          R"("grid":[64,2,1],"block":[256,1,1],"static shared memory":1024,"dynamic shared memory":2048,)"
          R"("local memory per thread":0,"local memory total":0,"launch type":0})");
    CHECK(s->flows_from(launch).size() == 1);
    const Track& stream = s->tracks[kernel.track];
    CHECK(stream.device == 0);
    CHECK(stream.stream == 7);
    CHECK(s->strings.view(stream.name) == "stream 7");
    CHECK(s->strings.view(s->processes[stream.process].name) == "NVIDIA Test GPU");
    // The driver launch's kernel links to cuLaunchKernel; it carries its graph node.
    SliceRef driver = test::find_slice(*s, "cuLaunchKernel");
    REQUIRE(driver.valid());
    auto driven = s->activities_of(driver);
    REQUIRE(driven.size() == 1);
    CHECK(s->slice_args_json(driven[0]).find(R"("graph node id":17)") != std::string_view::npos);
    // Copies and sets are named as Kineto names them, with the bandwidth in GB/s (bytes per ns).
    SliceRef copy = test::find_slice(*s, "Memcpy DtoH (Device -> Pinned)");
    REQUIRE(copy.valid());
    CHECK(s->slice_args_json(copy) ==
          R"j({"device":0,"context":1,"stream":7,"correlation":2,"bytes":4000,"memory bandwidth (GB/s)":2})j");
    CHECK(s->name(s->launch_of(copy)) == "cudaMemcpyAsync");
    SliceRef set = test::find_slice(*s, "Memset (Device)");
    REQUIRE(set.valid());
    CHECK_FALSE(s->launch_of(set).valid());  // no correlation id
    // The sync is named by its API call, whatever the version numbered it.
    SliceRef sync = test::find_slice(*s, "Stream Sync");
    REQUIRE(sync.valid());
    CHECK(s->name(s->launch_of(sync)) == "cudaStreamSynchronize");
    // NVTX: the push/pop range by its textId, with colour and payload; the mark in its domain.
    SliceRef step = test::find_slice(*s, "step");
    REQUIRE(step.valid());
    CHECK(s->slice_args_json(step) == R"({"color":"#ff0000","payload":42})");
    CHECK(s->strings.view(s->tracks[step.track].name) == "main");
    CHECK(s->strings.view(s->processes[s->tracks[step.track].process].name) == "trainer");
    CHECK(s->is_gpu(launch) == false);
    CHECK(launch.track == step.track);
    SliceRef load = test::find_slice(*s, "load");
    REQUIRE(load.valid());
    CHECK(s->tracks[load.track].kind == TrackKind::Async);
    CHECK(s->strings.view(s->tracks[load.track].name) == "NVTX trainer");
    CHECK(s->slice_args_json(load) == R"({"domain":"trainer"})");
    const InstantColumns& marks = s->tracks[step.track].instants;
    REQUIRE(marks.size() == 1);
    CHECK(s->strings.view(marks.name[0]) == "mark");
    // The GPU description, with Kineto's keys.
    REQUIRE(s->meta.devices.size() == 1);
    CHECK(s->meta.devices[0].name == "NVIDIA Test GPU");
    CHECK(s->meta.devices[0].properties_json.find(R"("numSms":132)") != std::string::npos);
    CHECK(s->meta.devices[0].properties_json.find(R"("maxThreadsPerMultiprocessor":2048)") != std::string::npos);
    // Unmapped tables and missing content are said in `info`, never dropped silently.
    std::string info = info_text(*s);
    CHECK(info.find("not mapped      SCHED_EVENTS (2 rows)") != std::string::npos);
    CHECK(info.find("not recorded    GPU descriptions") == std::string::npos);
    CHECK(info_json(*s).find(R"("nsys":{"export":{"schema_version":"3.16.1")") != std::string::npos);
  }
}

TEST_CASE("nsys: progress names each table, and cancelling stops the load") {
  ScratchDir dir;
  std::string path = dir.file("tiny.sqlite");
  write_db(path, tiny_report(false));
  std::vector<std::string> phases;
  uint64_t last_done = 0, total = 0;
  bool monotonic = true;
  LoadOptions options;
  options.on_progress = [&](const LoadProgress& p) {
    phases.emplace_back(p.phase);
    monotonic &= p.bytes_done >= last_done && p.bytes_done <= p.bytes_total;
    last_done = p.bytes_done;
    total = p.bytes_total;
  };
  LoadResult r = load_trace(path, options);
  REQUIRE(r.ok());
  CHECK(monotonic);
  CHECK(total == fs::file_size(path));
  CHECK(std::find(phases.begin(), phases.end(), "CUPTI_ACTIVITY_KIND_KERNEL") != phases.end());
  CHECK(std::find(phases.begin(), phases.end(), "NVTX_EVENTS") != phases.end());
  std::atomic<bool> cancel{true};
  LoadOptions cancelling;
  cancelling.cancel = &cancel;
  LoadResult c = load_trace(path, cancelling);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error.cancelled);
}

TEST_CASE("nsys: HTA mode reads an Nsight report as if Kineto had written it") {
  ScratchDir dir;
  auto s = load_tiny(dir, false);
  CHECK_FALSE(s->meta.hta.from_text);  // no file text: rank from the metadata, not a regex over args
  analysis::TableOptions options;
  options.mode = analysis::Mode::Hta;
  analysis::EventTable hta = analysis::build_table(*s, options);
  analysis::EventTable own = analysis::build_table(*s, {});
  CHECK(hta.rounded);  // ns timestamps are fractional µs: HTA's ceil/floor rule applies
  CHECK(hta.gpu.size() == 5);  // kernels, copy, set and sync: args.stream is 7 on each
  CHECK(own.gpu.size() == 5);
  CHECK(hta.cpu.size() == own.cpu.size());
}

namespace sl::nsys_test {

TEST_CASE("nsys: CUDA memory usage events fill the memory table, on the thread of the call that made them") {
  ScratchDir dir;
  std::string path = dir.file("memory.sqlite");
  write_db(path, tiny_report(false) + R"(
CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER, deviceId INTEGER, contextId INTEGER,
  address INTEGER, pc INTEGER, bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER, name TEXT,
  correlationId INTEGER, streamId INTEGER);
INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES
  (1100, )" + global_pid(100) + R"(, 0, 1, 65536, 0, 4096, 2, 0, NULL, 1, 7),
  (1200, )" + global_pid(100) + R"(, 0, 1, 131072, 0, 512, 1, 0, NULL, NULL, NULL),
  (9600, )" + global_pid(100) + R"(, 0, 1, 65536, 0, 4096, 2, 1, NULL, NULL, NULL),
  (9650, )" + global_pid(100) + R"(, 0, 1, 1, 0, 8, 2, 9, NULL, NULL, NULL);
)");
  LoadResult r = load_trace(path);
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  const TraceStore& s = *r.store;
  const MemoryEvents& m = s.memory;
  REQUIRE(m.size() == 3);  // the unknown operation (9) is skipped and counted
  CHECK(s.issues.count(IssueKind::IllTypedField) == 1);
  CHECK(m.ts[0] == 1100 - 900);  // rebased as every other row (the origin is the NVTX range at 900)
  CHECK(m.action_of(0) == MemoryAction::Alloc);
  CHECK(m.bytes[0] == 4096);
  CHECK(m.addr[0] == 65536);
  CHECK(m.device_type[0] == kMemoryCuda);
  CHECK(m.device_id[0] == 0);
  CHECK(m.stream[0] == 7);
  REQUIRE(m.track[0] != kNone);  // the cudaLaunchKernel call of correlation 1
  CHECK(s.strings.view(s.tracks[m.track[0]].name) == "main");
  CHECK(m.device_type[1] == kMemoryCpu);  // pinned host memory
  CHECK(m.action_of(2) == MemoryAction::Free);
  CHECK(m.bytes[2] == -4096);
  memory::MemoryAnalysis a = memory::analyze_memory(s);
  const memory::DeviceMemory* gpu = nullptr;
  for (const auto& d : a.devices)
    if (d.device_type == kMemoryCuda) gpu = &d;
  REQUIRE(gpu);
  CHECK(gpu->peak_allocated == 4096);
  CHECK(gpu->blocks == 1);
  CHECK(gpu->live_blocks_at_end == 0);
  CHECK_FALSE(gpu->from_totals);
}

}  // namespace sl::nsys_test
