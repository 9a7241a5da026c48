// `--mode hta` against HTA's own TraceDiff output, and real pairs of runs in Sightline mode.
#include <doctest/doctest.h>

#include <simdjson.h>

#include <fstream>
#include <sstream>

#include "core/diff/trace_diff.h"
#include "core/import/common/file_reader.h"
#include "core/import/trace_loader.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::diff;
using sl::analysis::Mode;

namespace {

struct Loaded {
  std::unique_ptr<TraceStore> store;
};

Loaded load_file(const std::string& path) {
  LoadResult r = load_trace(path);
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  Loaded l;
  l.store = std::move(r.store);
  return l;
}

TraceDiff hta_diff(const Loaded& a, const Loaded& b, diff::Device device = diff::Device::All,
                   std::optional<int64_t> ia = {}, std::optional<int64_t> ib = {}) {
  DiffOptions o;
  o.mode = Mode::Hta;
  o.device = device;
  o.iteration_a = ia;
  o.iteration_b = ib;
  return trace_diff(*a.store, *b.store, o);
}

// One CSV record as pandas writes it (fields with commas or quotes are quoted, quotes doubled).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else if (c == '"') quoted = false;
      else out.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::string corpus(const char* name) { return (test::shared_dir() / "corpus" / name).string(); }
std::string reference(const char* name) {
  return (test::shared_dir() / "specs" / "reference" / "trace_diff_control_vs_test" / name).string();
}

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

TEST_CASE("HTA reference: TraceDiff of trace_diff control (A100) vs test (V100)") {
  if (!test::have_shared()) return;
  Loaded a = load_file(corpus("hta_trace_diff_control_a100.json.gz"));
  Loaded b = load_file(corpus("hta_trace_diff_test_v100.json.gz"));
  TraceDiff d = hta_diff(a, b);
  CHECK(d.rank_a == 3);
  CHECK(d.rank_b == 1);
  CHECK(d.ops.control_iteration == 1009);
  CHECK(d.ops.test_iteration == 1009);

  std::ifstream csv(reference("compare_traces.csv"));
  REQUIRE(csv);
  std::string line;
  std::getline(csv, line);  // header
  size_t i = 0;
  while (std::getline(csv, line)) {
    // Names never hold a newline in this file; one line is one record.
    std::vector<std::string> f = csv_fields(line);
    REQUIRE(f.size() == 8);
    REQUIRE(i < d.ops.rows.size());
    const OpsDiffRow& r = d.ops.rows[i++];
    INFO("row " << i << ": " << f[0]);
    CHECK(r.name == f[0]);
    CHECK(double(r.control_count) == std::stod(f[1]));
    CHECK(double(r.control_total) / 1000.0 == std::stod(f[2]));
    CHECK(double(r.test_count) == std::stod(f[3]));
    CHECK(double(r.test_total) / 1000.0 == std::stod(f[4]));
    CHECK(double(r.diff_count()) == std::stod(f[5]));
    CHECK(double(r.diff_total()) / 1000.0 == std::stod(f[6]));
    CHECK(std::string(1, r.sign()) == f[7]);
  }
  CHECK(i == 432);
  CHECK(d.ops.rows.size() == 432);

  simdjson::dom::parser parser;
  simdjson::dom::element ref = parser.load(reference("ops_diff.json"));
  auto same = [&](const char* key, const std::vector<std::string>& mine) {
    std::vector<std::string> theirs;
    for (simdjson::dom::element e : ref[key].get_array()) theirs.emplace_back(std::string_view(e.get_string()));
    INFO(key);
    CHECK(mine == theirs);
  };
  same("added", d.ops.added);
  same("deleted", d.ops.deleted);
  same("increased", d.ops.increased);
  same("decreased", d.ops.decreased);
  same("unchanged", d.ops.unchanged);
  CHECK(d.ops.added.size() == 32);
  CHECK(d.ops.deleted.size() == 138);
  CHECK(d.ops.increased.size() == 35);
  CHECK(d.ops.decreased.size() == 65);
  CHECK(d.ops.unchanged.size() == 162);
}

// Hand-checked from the two files (33 and 34 events): step 1009 is [265087, 365385) µs after
// the epoch, step 1010 is [365430, 487579); the test run adds three ops to step 1010 and lacks
// one nccl:all_reduce and the kernel launched at 487511.
TEST_CASE("HTA mode: trace_compare base vs test (hand-checked)") {
  Loaded a = load_file(test::test_data("hta_trace_compare_base.json.gz"));
  Loaded b = load_file(test::test_data("hta_trace_compare_test.json.gz"));

  TraceDiff first = hta_diff(a, b);
  CHECK(first.ops.control_iteration == 1009);
  // Step 1009: the step, aten::empty, nccl:all_reduce, aten::as_strided, cudaEventQuery,
  // cudaLaunchKernel (at 365315) and its kernel; the same in both runs.
  CHECK(first.ops.rows.size() == 7);
  CHECK(first.ops.unchanged.size() == 7);
  CHECK(first.ops.added.empty());
  CHECK(first.ops.deleted.empty());

  TraceDiff second = hta_diff(a, b, diff::Device::All, 1010, 1010);
  CHECK(second.ops.added == std::vector<std::string>{"AddmmBackward0", "All2All_Pooled_Req", "CatBackward0"});
  REQUIRE(second.ops.deleted.size() == 2);
  CHECK(has(second.ops.deleted, "nccl:all_reduce"));
  CHECK(second.ops.unchanged == std::vector<std::string>{"ProfilerStep#1010", "aten::as_strided", "aten::empty",
                                                         "cudaEventQuery", "cudaLaunchKernel"});
  CHECK(second.ops.increased.empty());
  CHECK(second.ops.decreased.empty());
  for (const auto& r : second.ops.rows)
    if (r.name == "All2All_Pooled_Req") CHECK(r.test_total == 311'000);

  TraceDiff gpu = hta_diff(a, b, diff::Device::Gpu, 1010, 1010);
  REQUIRE(gpu.ops.rows.size() == 1);
  CHECK(gpu.ops.deleted.size() == 1);
  CHECK(gpu.ops.rows[0].control_total == 4'000);
  CHECK(gpu.ops.rows[0].name.starts_with("void at::native::vectorized_elementwise_kernel<4"));

  TraceDiff cpu = hta_diff(a, b, diff::Device::Cpu, 1010, 1010);
  CHECK(cpu.ops.rows.size() == 9);
  CHECK(cpu.ops.deleted == std::vector<std::string>{"nccl:all_reduce"});
}

TEST_CASE("aligned diff: resnet50 run-to-run pair aligns almost fully") {
  if (!test::have_shared()) return;
  Loaded a = load_file(corpus("kin_resnet50_nw4_run1.json.gz"));
  Loaded b = load_file(corpus("kin_resnet50_nw4_run2.json.gz"));
  TraceDiff d = trace_diff(*a.store, *b.store, {});
  REQUIRE(d.aligned);
  MESSAGE("matched " << d.aligned->matched << " of " << d.aligned->nodes_a << " / " << d.aligned->nodes_b
                     << " fraction " << d.aligned->matched_fraction);
  CHECK(d.aligned->nodes_a > 1000);
  CHECK(d.aligned->matched_fraction > 0.98);
  CHECK(d.ops.rows.size() > 50);
}

TEST_CASE("trace diff: resnet50 without vs with data-loader workers shows data loading idle") {
  if (!test::have_shared()) return;
  Loaded a = load_file(corpus("kin_resnet50_nw0_run1.json.gz"));
  Loaded b = load_file(corpus("kin_resnet50_nw4_run1.json.gz"));
  TraceDiff d = trace_diff(*a.store, *b.store, {});
  REQUIRE(d.summary_a);
  REQUIRE(d.summary_b);
  const size_t dl = size_t(analysis::IdleCause::DataLoading);
  TimeNs nw0 = d.summary_a->idle_by_cause[dl], nw4 = d.summary_b->idle_by_cause[dl];
  MESSAGE("data-loading idle: nw0 " << nw0 / 1000 << " us, nw4 " << nw4 / 1000 << " us");
  CHECK(nw0 > 0);
  CHECK(nw0 > 5 * nw4);
  CHECK(double(nw0) > 0.3 * double(d.summary_a->idle_total));
}

TEST_CASE("aligned diff: trace_compare base vs test step 1010 (threads paired by role)") {
  Loaded a = load_file(test::test_data("hta_trace_compare_base.json.gz"));
  Loaded b = load_file(test::test_data("hta_trace_compare_test.json.gz"));
  DiffOptions o;
  o.iteration_a = 1010;  // B's step follows: the same number
  TraceDiff d = trace_diff(*a.store, *b.store, o);
  REQUIRE(d.aligned);
  CHECK(d.aligned->chosen.b == 1010);
  CHECK(d.ops.test_iteration == 1010);
  // The second thread starts with nccl:all_reduce in A and CatBackward0 in B: still paired.
  REQUIRE(d.aligned->added.size() == 3);
  CHECK(d.aligned->added[0].name == "All2All_Pooled_Req");
  CHECK(d.aligned->added[0].where == "ProfilerStep#1010");
  CHECK(d.aligned->added[1].name == "CatBackward0");
  CHECK(d.aligned->added[1].where == "");
  CHECK(d.aligned->added[2].name == "AddmmBackward0");
  REQUIRE(d.aligned->removed.size() == 1);
  CHECK(d.aligned->removed[0].name == "nccl:all_reduce");
  CHECK(d.aligned->matched == 5);
}
