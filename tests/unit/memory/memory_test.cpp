// The memory table (Kineto `[memory]` instants, PyTorch memory snapshots), the plain-data pickle
// reader, and the §11 analyses over them (core/memory/).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/analysis/args_util.h"
#include "core/import/memory_snapshot/memory_snapshot_loader.h"
#include "core/import/memory_snapshot/pickle.h"
#include "core/memory/memory_analysis.h"
#include "core/snapshot/snapshot.h"
#include "core/text/format.h"
#include "tests/unit/test_support.h"

namespace sl {
namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const memory::DeviceMemory* device(const memory::MemoryAnalysis& a, int8_t type, int32_t id) {
  for (const auto& d : a.devices)
    if (d.device_type == type && d.device_id == id) return &d;
  return nullptr;
}

// A little pickle writer for hand-made inputs (protocol 4 opcodes).
struct PickleBytes {
  std::string b = std::string("\x80\x04", 2);
  PickleBytes& op(char c) { b += c; return *this; }
  PickleBytes& str(std::string_view s) { b += char(0x8c); b += char(s.size()); b += s; return *this; }
  PickleBytes& int1(uint8_t v) { b += 'K'; b += char(v); return *this; }
  PickleBytes& int4(int32_t v) { b += 'J'; for (int i = 0; i < 4; ++i) b += char(uint32_t(v) >> (8 * i)); return *this; }
  std::string done() { return b + "."; }
};

}  // namespace

TEST_CASE("human::bytes prints binary units with three digits") {
  CHECK(human::bytes(0) == "0 B");
  CHECK(human::bytes(1023) == "1023 B");
  CHECK(human::bytes(1024) == "1.00 KiB");
  CHECK(human::bytes(1536) == "1.50 KiB");
  CHECK(human::bytes(int64_t(12.3 * 1024 * 1024)) == "12.3 MiB");
  CHECK(human::bytes(int64_t(1024) * 1024 * 1024 * 5 / 2) == "2.50 GiB");
  CHECK(human::bytes(1024 * 1024 - 1) == "1.00 MiB");
  CHECK(human::bytes(-2048) == "-2.00 KiB");
}

TEST_CASE("memory: Kineto [memory] instants become the memory table; blocks, peak, leaks, churn, iterations") {
  // Two steps; an alloc of 100 in step 1 freed after 0.5 ms (churn), 300 kept across the end
  // (a leak), a free of a block allocated before the trace, and CPU memory beside the GPU's.
  const char* json = R"({"deviceProperties": [{"id": 0, "name": "G", "totalGlobalMem": 1000}], "traceEvents": [
    {"ph":"X","name":"ProfilerStep#1","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","name":"ProfilerStep#2","cat":"user_annotation","pid":1,"tid":1,"ts":100,"dur":100},
    {"ph":"X","name":"aten::empty","cat":"cpu_op","pid":1,"tid":1,"ts":5,"dur":2},
    {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":20,"dur":5},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":6,"args":{"Addr":4096,"Bytes":100,"Total Allocated":600,"Total Reserved":2000,"Device Type":1,"Device Id":0}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":6.5,"args":{"Addr":4096,"Bytes":-100,"Total Allocated":500,"Total Reserved":2000,"Device Type":1,"Device Id":0}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":21,"args":{"Addr":8192,"Bytes":300,"Total Allocated":800,"Total Reserved":2000,"Device Type":1,"Device Id":0}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":150,"args":{"Addr":1024,"Bytes":-200,"Total Allocated":600,"Total Reserved":2000,"Device Type":1,"Device Id":0}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":22,"args":{"Addr":77,"Bytes":16,"Device Type":0,"Device Id":-1}}
  ]})";
  auto store = test::load_ok(json);
  const MemoryEvents& m = store->memory;
  REQUIRE(m.size() == 5);
  CHECK(std::is_sorted(m.ts.begin(), m.ts.end()));
  CHECK(m.addr[0] == 4096);
  CHECK(m.bytes[1] == -100);
  CHECK(m.action_of(1) == MemoryAction::Free);
  CHECK(m.total_allocated[2] == 800);
  CHECK(m.device_type[3] == kMemoryCpu);
  CHECK(m.device_id[3] == -1);
  CHECK(m.total_allocated[3] == MemoryEvents::kUnknown);
  // The instants stay on their track: nothing is hidden.
  CHECK(store->counts.instants == 5);

  memory::MemoryAnalysis a = memory::analyze_memory(*store);
  const memory::DeviceMemory* gpu = device(a, kMemoryCuda, 0);
  REQUIRE(gpu);
  CHECK(gpu->label == "cuda:0");
  CHECK(gpu->from_totals);
  CHECK(gpu->peak_allocated == 800);
  CHECK(gpu->peak_ts == 21'000 - 0);
  CHECK(gpu->peak_reserved == 2000);
  CHECK(gpu->fragmentation == 1200);
  CHECK(gpu->capacity == 1000);
  CHECK(gpu->blocks == 3);  // 4096 (freed), 8192 (live), 1024 (pre-existing, freed)
  CHECK(gpu->unmatched_frees == 1);
  // At the peak: 8192 by aten::mm (300), and before the trace 500: block 1024 (freed later, 200)
  // and 300 bytes that the totals count and no block explains.
  REQUIRE(gpu->at_peak.size() == 2);
  CHECK(gpu->at_peak[0].context == memory::kBeforeTraceContext);
  CHECK(gpu->at_peak[0].bytes == 500);
  CHECK(memory::context_name(*store, gpu->at_peak[0].context) == "(allocated before the trace)");
  CHECK(store->strings.view(gpu->at_peak[1].context) == "aten::mm");
  CHECK(gpu->at_peak[1].bytes == 300);
  REQUIRE(gpu->leaks.size() == 1);
  CHECK(store->strings.view(gpu->leaks[0].context) == "aten::mm");
  CHECK(gpu->leaks[0].bytes == 300);
  REQUIRE(gpu->churn.size() == 1);
  CHECK(store->strings.view(gpu->churn[0].context) == "aten::empty");
  CHECK(gpu->churn[0].short_lived == 1);
  REQUIRE(gpu->iterations.size() == 2);
  CHECK(gpu->iterations[0].peak == 800);
  CHECK(gpu->iterations[0].live_at_end == 800);
  CHECK(gpu->iterations[1].live_at_end == 600);
  const memory::DeviceMemory* cpu = device(a, kMemoryCpu, -1);
  REQUIRE(cpu);
  CHECK_FALSE(cpu->from_totals);
  CHECK(cpu->peak_allocated == 16);
  // Findings: the peak (800 of 1000) is not within 10%; fragmentation 1200 of 2000 is > 20%.
  auto findings = memory::memory_findings(*store, a);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].kind == "memory_fragmentation");
}

TEST_CASE("memory: the peak near the device's memory and steady growth are findings") {
  std::string json = R"({"deviceProperties": [{"id": 0, "name": "G", "totalGlobalMem": 1000}], "traceEvents": [)";
  for (int s = 0; s < 4; ++s) {
    json += R"({"ph":"X","name":"ProfilerStep#)" + std::to_string(s) + R"(","cat":"user_annotation","pid":1,"tid":1,"ts":)" +
            std::to_string(s * 100) + R"(,"dur":100},)";
    json += R"({"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":)" + std::to_string(s * 100 + 50) +
            R"(,"args":{"Addr":)" + std::to_string(4096 * (s + 1)) + R"(,"Bytes":230,"Total Allocated":)" +
            std::to_string(230 * (s + 1)) + R"(,"Total Reserved":)" + std::to_string(230 * (s + 1)) + R"(,"Device Type":1,"Device Id":0}},)";
  }
  json.back() = ']';
  json += "}";
  auto store = test::load_ok(json);
  memory::MemoryAnalysis a = memory::analyze_memory(*store);
  auto findings = memory::memory_findings(*store, a);
  std::vector<std::string> kinds;
  for (const auto& f : findings) kinds.push_back(f.kind);
  CHECK(kinds == std::vector<std::string>{"memory_peak_near_capacity", "memory_growth"});
}

TEST_CASE("memory: old Kineto traces (Bytes only) give the running sum, and no blocks") {
  auto store = test::load_ok(R"({"traceEvents": [
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Bytes":100,"Device Type":1,"Device Id":0}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":2,"args":{"Bytes":50,"Device Type":1,"Device Id":0}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":3,"args":{"Bytes":-100,"Device Type":1,"Device Id":0}}]})");
  memory::MemoryAnalysis a = memory::analyze_memory(*store);
  REQUIRE(a.devices.size() == 1);
  CHECK(a.devices[0].peak_allocated == 150);
  CHECK(a.devices[0].allocated_at_end == 50);
  CHECK_FALSE(a.devices[0].addresses);
  CHECK(a.devices[0].blocks == 0);
}

TEST_CASE("memory: the memory table survives a .slsnap round trip") {
  auto store = test::load_ok(R"({"traceEvents": [
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Addr":64,"Bytes":100,"Total Allocated":100,"Device Type":6,"Device Id":1}}]})");
  std::string bytes = snapshot_bytes(*store);
  LoadResult back = read_snapshot_bytes(bytes, "s");
  REQUIRE_MESSAGE(back.ok(), back.error.to_string());
  REQUIRE(back.store->memory.size() == 1);
  CHECK(back.store->memory.device_type[0] == kMemoryHip);
  CHECK(back.store->memory.device_id[0] == 1);
  CHECK(back.store->memory.total_allocated[0] == 100);
  CHECK(snapshot_bytes(*back.store) == bytes);
}

TEST_CASE("memory: corpus Kineto traces: the peak is the largest Total Allocated; every alloc pairs with its free") {
  if (!test::have_shared()) return;
  for (const char* name : {"tl_h100_bert_small", "tl_mi300_bert_small", "tl_h100_qwen15_05b", "tl_h100_timesformer",
                           "tl_vllm_graph_capture", "kin_resnet50_nw0_run1"}) {
    CAPTURE(name);
    LoadResult r = load_trace((test::shared_dir() / "corpus" / (std::string(name) + ".json.gz")).string());
    REQUIRE(r.ok());
    const TraceStore& s = *r.store;
    // The oracle reads the instants' args text itself (not the memory table).
    struct Expect {
      double max_total = -1, running = 0, max_running = 0;
      uint64_t allocs = 0, frees = 0;
      bool totals = false;
    };
    std::map<std::pair<int64_t, int64_t>, Expect> expect;
    StringId mem = s.strings.find("[memory]");
    REQUIRE(mem != StringPool::kNotFound);
    std::vector<std::tuple<TimeNs, uint32_t, std::pair<int64_t, int64_t>, double>> sums;  // (time, args row: the file's order)
    for (const Track& t : s.tracks)
      for (size_t i = 0; i < t.instants.size(); ++i) {
        if (t.instants.name[i] != mem) continue;
        std::string_view args = s.args_json(t.instants.args[i]);
        std::pair<int64_t, int64_t> key{analysis::find_int_arg(args, "Device Type").value_or(1),
                                        analysis::find_int_arg(args, "Device Id").value_or(0)};
        Expect& e = expect[key];
        double bytes = analysis::find_number_arg(args, "Bytes").value_or(0);
        if (auto total = analysis::find_number_arg(args, "Total Allocated")) e.max_total = std::max(e.max_total, *total), e.totals = true;
        (bytes < 0 ? e.frees : e.allocs) += 1;
        sums.emplace_back(t.instants.ts[i], t.instants.args[i], key, bytes);
      }
    std::sort(sums.begin(), sums.end());
    for (const auto& [ts, row, key, bytes] : sums) {
      Expect& e = expect[key];
      e.running += bytes;
      e.max_running = std::max(e.max_running, e.running);
    }
    memory::MemoryAnalysis a = memory::analyze_memory(s);
    CHECK(a.devices.size() == expect.size());
    size_t gpu_devices = 0;
    for (const auto& [key, e] : expect) {
      const memory::DeviceMemory* d = device(a, int8_t(key.first), int32_t(key.second));
      REQUIRE(d);
      CAPTURE(d->label);
      if (key.first != kMemoryCpu) {
        ++gpu_devices;
        CHECK(double(d->peak_allocated) == (e.totals ? e.max_total : e.max_running));
      }
      CHECK(d->allocs == e.allocs);
      CHECK(d->frees == e.frees);
      if (d->addresses) {
        // Blocks: one per alloc, plus one per free whose alloc came before the trace; every free
        // closes exactly one block.
        CHECK(d->blocks == e.allocs + d->unmatched_frees);
        uint64_t freed = 0;
        for (uint32_t b : d->block_rows) freed += !a.blocks[b].live_at_end();
        CHECK(freed == e.frees);
      }
    }
    CHECK(gpu_devices >= 1);
  }
}

// ------------------------------------------------------------------ the pickle reader

TEST_CASE("pickle: plain data reads; code is refused with the opcode and its offset") {
  SUBCASE("dicts, lists, tuples, strings, ints, floats, bools, None, memo") {
    PickleBytes p;
    p.op('}').op(char(0x94)).op('(').str("a").int1(7).str("b").op(']').op(char(0x94)).op('(').int4(-5).op(char(0x88)).op('N')
        .op('e').str("c").op('h').b += char(1);  // BINGET 1: the list again
    p.op('u');
    std::string bytes = p.done();
    pickle::Document doc;
    pickle::PickleError err;
    REQUIRE_MESSAGE(doc.parse(bytes, err), err.message);
    uint32_t root = doc.root();
    CHECK(doc.kind(root) == pickle::Kind::Dict);
    CHECK(doc.integer(doc.get(root, "a")) == 7);
    uint32_t list = doc.get(root, "b");
    REQUIRE(doc.items(list).size() == 3);
    CHECK(doc.integer(doc.items(list)[0]) == -5);
    CHECK(doc.kind(doc.items(list)[1]) == pickle::Kind::Bool);
    CHECK(doc.kind(doc.items(list)[2]) == pickle::Kind::None);
    CHECK(doc.get(root, "c") == list);  // the same list, shared as in Python
  }
  SUBCASE("GLOBAL and REDUCE are refused where they stand") {
    std::string bytes = std::string("\x80\x02", 2) + "cposix\nsystem\n" + "(X\x05\0\0\0touch" + "tR.";
    pickle::Document doc;
    pickle::PickleError err;
    REQUIRE_FALSE(doc.parse(bytes, err));
    CHECK(err.message.find("GLOBAL refused") != std::string::npos);
    CHECK(err.offset == 2);
  }
  SUBCASE("every code opcode is named") {
    for (auto [op, name] : std::vector<std::pair<char, const char*>>{{'c', "GLOBAL"}, {char(0x93), "STACK_GLOBAL"}, {'R', "REDUCE"},
             {'i', "INST"}, {'o', "OBJ"}, {char(0x81), "NEWOBJ"}, {char(0x92), "NEWOBJ_EX"}, {'b', "BUILD"},
             {'P', "PERSID"}, {'Q', "BINPERSID"}, {char(0x82), "EXT1"}, {char(0x83), "EXT2"}, {char(0x84), "EXT4"}}) {
      CAPTURE(name);
      std::string bytes = std::string("\x80\x04", 2) + "N" + op + ".";
      pickle::Document doc;
      pickle::PickleError err;
      REQUIRE_FALSE(doc.parse(bytes, err));
      CHECK(err.message == std::string(name) + " refused: it would import or call code, and a memory snapshot is plain data only");
      CHECK(err.offset == 3);
    }
  }
  SUBCASE("cut, corrupt and hostile inputs give errors with offsets") {
    pickle::Document doc;
    pickle::PickleError err;
    CHECK_FALSE(doc.parse(std::string("\x80\x04}", 3), err));
    CHECK(err.message.find("ends before STOP") != std::string::npos);
    CHECK(err.offset == 3);
    CHECK_FALSE(doc.parse(std::string("\x80\x04X\xff\xff\xff\x7f", 7), err));  // a string longer than the data
    CHECK(err.message.find("BINUNICODE") != std::string::npos);
    CHECK(err.offset == 2);
    CHECK_FALSE(doc.parse(std::string("\x80\x04\x95\xff\xff\xff\xff\0\0\0\0N.", 13), err));
    CHECK(err.message.find("FRAME") != std::string::npos);
    CHECK_FALSE(doc.parse(std::string("\x80\x04h\x05.", 5), err));  // memo never stored
    CHECK(err.message.find("memo index 5") != std::string::npos);
    CHECK_FALSE(doc.parse(std::string("\x80\x04" "a.", 4), err));  // APPEND with nothing
    CHECK(err.offset == 2);
    CHECK_FALSE(doc.parse(std::string("\x80\x09N.", 4), err));
    CHECK(err.message.find("protocol 9") != std::string::npos);
    std::string deep = std::string("\x80\x04", 2) + std::string(20000, '(');
    CHECK_FALSE(doc.parse(deep, err));
    CHECK(err.message.find("nesting deeper") != std::string::npos);
    CHECK_FALSE(doc.parse(std::string("\x80\x04NN.", 5), err));
    CHECK(err.message.find("more than one value") != std::string::npos);
  }
}

TEST_CASE("memory snapshot: the corpus snapshot maps to a memory-only store") {
  if (!test::have_shared()) return;
  std::filesystem::path path = test::shared_dir() / "corpus" / "memory" / "cs336_lm_memory_snapshot.pickle";
  CHECK(is_memory_snapshot_file(path.string()));
  LoadResult r = load_trace(path.string());
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  const TraceStore& s = *r.store;
  CHECK(s.meta.format == "pytorch-memory-snapshot");
  CHECK(s.tracks.empty());
  CHECK(s.memory.size() >= 6486);
  memory::MemoryAnalysis a = memory::analyze_memory(s);
  REQUIRE(a.devices.size() == 1);
  CHECK(a.devices[0].peak_allocated > 0);
  CHECK(a.devices[0].unmatched_frees == 0);  // pre-existing blocks were placed by the importer
  REQUIRE_FALSE(a.devices[0].at_peak.empty());
  // Its largest share at the peak was allocated before recording began (blocks with no frames).
  CHECK(a.devices[0].at_peak[0].context == memory::kBeforeTraceContext);
  bool python_frame = false;
  for (const auto& c : a.devices[0].at_peak)
    python_frame |= c.context != memory::kBeforeTraceContext && c.context && s.strings.view(c.context).find(".py:") != std::string_view::npos;
  CHECK(python_frame);

  SUBCASE("cut anywhere: an error with an offset inside the file, never a crash") {
    std::string bytes = read_file(path);
    for (size_t cut : {size_t(0), size_t(1), size_t(2), size_t(11), size_t(100), bytes.size() / 3, bytes.size() / 2, bytes.size() - 1}) {
      CAPTURE(cut);
      LoadResult t = read_memory_snapshot_bytes(std::string_view(bytes).substr(0, cut), "cut.pickle");
      REQUIRE_FALSE(t.ok());
      CHECK(t.error.byte_offset <= cut);
      CHECK_FALSE(t.error.message.empty());
    }
  }
  SUBCASE("corrupt bytes: an error or a store, never a crash") {
    std::string bytes = read_file(path);
    uint64_t seed = 12345;
    for (int trial = 0; trial < 200; ++trial) {
      std::string bad = bytes;
      for (int k = 0; k < 4; ++k) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        bad[size_t(seed >> 33) % bad.size()] = char(seed >> 17);
      }
      LoadResult t = read_memory_snapshot_bytes(bad, "bad.pickle");
      if (!t.ok()) CHECK(t.error.byte_offset <= bad.size());
      else memory::analyze_memory(*t.store);
    }
  }
}

TEST_CASE("memory snapshot: pre-existing blocks, free_completed ends a block, segments give reserved") {
  // One device: a block freed before any alloc of it (pre-existing), an alloc freed, and a block
  // active in the final state that the trace never allocated.
  auto entry = [](PickleBytes& p, const char* action, int32_t addr, int32_t size, int32_t t) {
    p.op('}').op('(').str("action").str(action).str("addr").int4(addr).str("size").int4(size).str("time_us").int4(t).op('u');
  };
  PickleBytes p;
  p.op('}').op('(');
  p.str("segments").op(']').op('(');
  p.op('}').op('(').str("device").int1(0).str("total_size").int4(1 << 20).str("blocks").op(']').op('(');
  p.op('}').op('(').str("address").int4(9000).str("size").int4(64).str("state").str("active_allocated").op('u');
  p.op('e').op('u');
  p.op('e');
  p.str("device_traces").op(']').op('(').op(']').op('(');
  entry(p, "free_requested", 5000, 32, 10);
  entry(p, "free_completed", 5000, 32, 11);
  entry(p, "alloc", 6000, 128, 12);
  entry(p, "free_requested", 6000, 128, 13);
  entry(p, "free_completed", 6000, 128, 20);
  p.op('e').op('e');
  p.op('u');
  LoadResult r = read_memory_snapshot_bytes(p.done(), "made.pickle");
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  memory::MemoryAnalysis a = memory::analyze_memory(*r.store);
  REQUIRE(a.devices.size() == 1);
  const memory::DeviceMemory& d = a.devices[0];
  CHECK(d.blocks == 3);
  // 32 and 64 pre-existing from the first entry (10 µs); 32 freed at 11 µs; 128 allocated at 12 µs.
  CHECK(d.peak_allocated == 64 + 128);
  CHECK(d.peak_ts == 2'000);  // ns after the first entry
  CHECK(d.allocated_at_end == 64);
  CHECK(d.live_bytes_at_end == 64);
  CHECK(d.reserved_known);
  CHECK(d.peak_reserved == 1 << 20);
  // The 128-byte block lives from alloc to free_completed, not to free_requested.
  for (uint32_t b : d.block_rows)
    if (a.blocks[b].addr == 6000) CHECK(a.blocks[b].free - a.blocks[b].alloc == 8'000);  // 12 µs to 20 µs
}

}  // namespace sl

namespace sl {
TEST_CASE("memory: Kineto's Total Reserved 0 on CPU events is no reserve (no negative fragmentation)") {
  auto store = test::load_ok(R"({"traceEvents": [
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":1,"args":{"Addr":77,"Bytes":16,"Total Allocated":16,"Total Reserved":0,"Device Type":0,"Device Id":-1}},
    {"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":2,"args":{"Addr":88,"Bytes":64,"Total Allocated":64,"Total Reserved":0,"Device Type":1,"Device Id":0}}
  ]})");
  memory::MemoryAnalysis a = memory::analyze_memory(*store);
  REQUIRE(a.devices.size() == 2);
  CHECK(a.devices[0].label == "cpu");
  CHECK_FALSE(a.devices[0].reserved_known);
  CHECK(a.devices[0].fragmentation == 0);
  CHECK(a.devices[1].reserved_known);  // a GPU's 0 reserved is what its allocator said
}
}  // namespace sl
