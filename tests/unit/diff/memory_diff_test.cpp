// The memory diff (core/diff/memory_diff): peaks per device pair and the contexts at the peak
// whose bytes changed most, compared under matching keys.
#include <doctest/doctest.h>

#include "core/diff/trace_diff.h"
#include "tests/unit/test_support.h"

namespace sl {

namespace {

// One step: `op` (an address-bearing name, as PyTorch writes bound methods) allocates `big`
// bytes and aten::mm 100 on `device` ("1" CUDA, "6" HIP).
std::string memory_trace(const char* op, int64_t big, const char* device_type) {
  std::string mem = R"({"ph":"i","s":"t","name":"[memory]","pid":1,"tid":1,"ts":%TS%,"args":{"Addr":%ADDR%,"Bytes":%B%,"Device Type":%T%,"Device Id":0}})";
  auto event = [&](int ts, int addr, int64_t bytes) {
    std::string e = mem;
    auto put = [&](const std::string& k, const std::string& v) { e.replace(e.find(k), k.size(), v); };
    put("%TS%", std::to_string(ts)), put("%ADDR%", std::to_string(addr)), put("%B%", std::to_string(bytes)), put("%T%", device_type);
    return e;
  };
  return std::string(R"({"traceEvents": [
    {"ph":"X","name":"ProfilerStep#3","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","name":")") + op + R"(","cat":"cpu_op","pid":1,"tid":1,"ts":10,"dur":5},
    {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":20,"dur":5},)" +
         event(11, 4096, big) + "," + event(21, 8192, 100) + "," + event(50, 4096, -big) + "," + event(60, 8192, -100) + "]}";
}

}  // namespace

TEST_CASE("memory diff: peaks per device and the contexts whose bytes at the peak changed, under matching keys") {
  auto a = test::load_ok(memory_trace("<built-in method cpu of Tensor object at 0x703a305e9e00>", 300, "1"));
  auto b = test::load_ok(memory_trace("<built-in method cpu of Tensor object at 0x7028f79af840>", 1000, "1"));
  diff::TraceDiff d = diff::trace_diff(*a, *b, {});
  REQUIRE(d.memory.size() == 1);
  const diff::MemoryDevicePair& p = d.memory[0];
  CHECK(p.device_a == "cuda:0");
  CHECK(p.device_b == "cuda:0");
  CHECK(p.peak_a == 400);
  CHECK(p.peak_b == 1100);
  // aten::mm is unchanged (100 in both): only the method, one context under its key.
  REQUIRE(p.contexts.size() == 1);
  CHECK(p.contexts[0].context == "<built-in method cpu of Tensor object at 0x…>");
  CHECK(p.contexts[0].bytes_a == 300);
  CHECK(p.contexts[0].bytes_b == 1000);
  CHECK(p.contexts[0].delta() == 700);
  auto tables = diff::diff_tables(d);
  auto has = [&](const char* name) {
    for (const auto& t : tables)
      if (t.name == name) return t.rows.size();
    return size_t(0);
  };
  CHECK(has("memory_diff") == 1);
  CHECK(has("memory_diff_contexts") == 1);
  std::string json = diff::render_diff_json(d, tables);
  CHECK(json.find("\"memory_diff\": [") != std::string::npos);
  CHECK(json.find("\"peak_delta_bytes\": 700") != std::string::npos);
}

TEST_CASE("memory diff: a CUDA GPU pairs with a HIP one; runs without memory events get no memory tables") {
  auto a = test::load_ok(memory_trace("aten::empty", 300, "1"));
  auto b = test::load_ok(memory_trace("aten::empty", 200, "6"));
  diff::TraceDiff d = diff::trace_diff(*a, *b, {});
  REQUIRE(d.memory.size() == 1);
  CHECK(d.memory[0].device_a == "cuda:0");
  CHECK(d.memory[0].device_b == "hip:0");
  CHECK(d.memory[0].peak_b - d.memory[0].peak_a == -100);
  auto plain = test::load_ok(R"({"traceEvents": [{"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":5}]})");
  diff::TraceDiff none = diff::trace_diff(*plain, *plain, {});
  CHECK(none.memory.empty());
  for (const auto& t : diff::diff_tables(none)) CHECK(t.name.find("memory") == std::string::npos);
  diff::DiffOptions hta;
  hta.mode = analysis::Mode::Hta;
  CHECK(diff::trace_diff(*a, *b, hta).memory.empty());  // HTA's diff has no memory tables
}

}  // namespace sl
