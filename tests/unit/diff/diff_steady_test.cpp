// The diff's headline: the mean of steady-state steps (warm-up excluded), which steps it is over,
// the default aligned pair, and the warning when two runs used different GPUs.
#include <doctest/doctest.h>

#include "core/diff/trace_diff.h"
#include "core/import/trace_loader.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::diff;
using namespace sl::analysis::test;

namespace {

std::string step(int n, int64_t ts_us, int64_t dur_us) {
  return X("user_annotation", "ProfilerStep#" + std::to_string(n), 1, 1, std::to_string(ts_us), std::to_string(dur_us));
}

// Steps numbered from `first`, back to back from 100 µs, each with one op and one kernel.
std::string run(int first, const std::vector<int64_t>& step_us, const std::string& gpu_name) {
  std::vector<std::string> ev;
  int64_t ts = 100;
  int corr = 1;
  for (size_t i = 0; i < step_us.size(); ++i, ts += step_us[i - 1]) {
    ev.push_back(step(first + int(i), ts, step_us[i]));
    ev.push_back(X("cpu_op", "aten::mm", 1, 1, std::to_string(ts + 1), "5"));
    ev.push_back(launch("cudaLaunchKernel", std::to_string(ts + 2), "2", corr));
    ev.push_back(kernel("gemm", 7, std::to_string(ts + 5), "3", corr++));
  }
  return trace(ev, R"("deviceProperties":[{"id":0,"name":")" + gpu_name + R"("}])");
}

}  // namespace

TEST_CASE("diff steady state: the warm-up step is left out of the headline mean") {
  // A: warm-up 900 µs, then 100 µs steps; B: warm-up 300 µs, then 80 µs steps. The first steps
  // alone read +200 % (900 → 300 is -66.7 %, all steps -57 %); the steady state reads -20 %.
  auto a = load(run(5, {900, 100, 100, 100}, "GPU X"));
  auto b = load(run(5, {300, 80, 80, 80}, "GPU X"));
  TraceDiff d = trace_diff(*a, *b, {});
  REQUIRE(d.summary_a);
  REQUIRE(d.summary_b);
  CHECK(d.summary_a->steady_iterations == std::vector<int64_t>{6, 7, 8});
  CHECK(d.summary_b->steady_iterations == std::vector<int64_t>{6, 7, 8});
  REQUIRE(d.summary_a->steady_step_time);
  CHECK(*d.summary_a->steady_step_time == doctest::Approx(100'000));
  CHECK(*d.summary_b->steady_step_time == doctest::Approx(80'000));
  REQUIRE(steady_step_change_pct(*d.summary_a, *d.summary_b));
  CHECK(*steady_step_change_pct(*d.summary_a, *d.summary_b) == doctest::Approx(-20.0));
  CHECK(*d.summary_a->mean_step_time == doctest::Approx(300'000));  // all steps, kept beside it
  // The aligned pair and the ops table: the first steady-state step, and the notes say so.
  REQUIRE(d.aligned);
  CHECK(d.aligned->chosen.a == 6);
  CHECK(d.ops.control_iteration == 6);
  bool said = false;
  for (const auto& n : d.notes) said |= n.find("ProfilerStep#6") != std::string::npos && n.find("warm-up") != std::string::npos;
  CHECK(said);
  CHECK(d.gpu_warning.empty());
  // Text and JSON name the steps the mean is over.
  auto tables = diff_tables(d);
  std::string text = render_diff_text(d, tables);
  CHECK(text.find("step time, steady state (mean of steps 6-8 vs 6-8): 0.100 ms -> 0.080 ms (-20.0%)") != std::string::npos);
  std::string json = render_diff_json(d, tables);
  CHECK(json.find(R"("steady_state": {"iterations_a": [6, 7, 8], "iterations_b": [6, 7, 8], "mean_step_a_us": 100, "mean_step_b_us": 80, "change_pct": -20})") !=
        std::string::npos);
  // `change` compares counts: the text table says so.
  CHECK(text.find("count_change") != std::string::npos);
}

TEST_CASE("diff steady state: with fewer than 3 steps every step counts") {
  auto a = load(run(1, {200, 100}, "GPU X"));
  auto b = load(run(1, {100, 100}, "GPU X"));
  TraceDiff d = trace_diff(*a, *b, {});
  REQUIRE(d.summary_a);
  CHECK(d.summary_a->steady_iterations == std::vector<int64_t>{1, 2});
  CHECK(*d.summary_a->steady_step_time == doctest::Approx(150'000));
  CHECK(d.aligned->chosen.a == 1);
  CHECK(iteration_list_text({6, 7, 8}) == "6-8");
  CHECK(iteration_list_text({6, 8}) == "6, 8");
  CHECK(iteration_list_text({}) == "none");
}

TEST_CASE("diff: runs on different GPUs are flagged") {
  auto a = load(run(1, {100, 100}, "NVIDIA A100-PG509-200"));
  auto b = load(run(1, {100, 100}, "Tesla V100-SXM2-16GB"));
  TraceDiff d = trace_diff(*a, *b, {});
  CHECK(d.gpu_warning.find("A: NVIDIA A100-PG509-200, B: Tesla V100-SXM2-16GB") != std::string::npos);
  CHECK(std::find(d.notes.begin(), d.notes.end(), d.gpu_warning) != d.notes.end());
  std::string json = render_diff_json(d, diff_tables(d));
  CHECK(json.find("\"gpu_warning\": \"the runs used different GPUs") != std::string::npos);
}

TEST_CASE("diff steady state: ResNet-50 nw0 vs nw4 (corpus)") {
  if (!test::have_shared()) return;
  auto path = [](const char* n) { return (test::shared_dir() / "corpus" / n).string(); };
  LoadResult a = load_trace(path("kin_resnet50_nw0_run1.json.gz"));
  LoadResult b = load_trace(path("kin_resnet50_nw4_run1.json.gz"));
  if (!a.ok() || !b.ok()) {
    MESSAGE("skipped: the ResNet-50 nw0/nw4 traces are not in the corpus");
    return;
  }
  TraceDiff d = trace_diff(*a.store, *b.store, {});
  REQUIRE(d.summary_a);
  REQUIRE(d.summary_b);
  // Steps 5..10 in both; step 5 is warm-up. The headline falls by a quarter (it read +3.1 % from
  // the first step pair once).
  CHECK(d.summary_a->steady_iterations == std::vector<int64_t>{6, 7, 8, 9, 10});
  auto pct = steady_step_change_pct(*d.summary_a, *d.summary_b);
  REQUIRE(pct);
  MESSAGE("steady-state mean step change nw0 -> nw4: " << *pct << " %");
  CHECK(*pct < -20);
  CHECK(*pct > -30);
  CHECK(d.gpu_warning.empty());  // both V100-DGXS-32GB
}

TEST_CASE("diff: inclusive changes skip an op whose change one descendant shows, keep a spread one") {
  // Step 1 { chain { mid { leaf } }, spread { c, c, c, c, c }, single }: leaf +20 µs (so mid
  // and chain +20 too), each c +5 µs (spread +25), single +10.
  auto op = [](const std::string& name, int ts, int dur) { return X("cpu_op", name, 1, 1, std::to_string(ts), std::to_string(dur)); };
  auto make = [&](int leaf, int c, int single) {
    std::vector<std::string> ev{X("user_annotation", "ProfilerStep#1", 1, 1, "0", "1000"), op("chain", 10, 10 + leaf),
                                op("mid", 12, 6 + leaf), op("leaf", 14, leaf), op("spread", 200, 5 * c + 10)};
    for (int i = 0; i < 5; ++i) ev.push_back(op("c", 205 + i * c, c));
    ev.push_back(op("single", 500, single));
    return trace(ev);
  };
  auto a = load(make(10, 10, 30));
  auto b = load(make(30, 15, 40));
  TraceDiff d = trace_diff(*a, *b, {});
  REQUIRE(d.aligned);
  std::vector<std::string> names;
  for (uint32_t i : d.aligned->inclusive_regressions) names.push_back(d.aligned->ops[i].name);
  // spread (+25) first; leaf (+20) stands for chain and mid; single (+10); each c (+5).
  REQUIRE(names.size() >= 3);
  CHECK(names[0] == "spread");
  CHECK(names[1] == "leaf");
  CHECK(names[2] == "single");
  CHECK(std::find(names.begin(), names.end(), "chain") == names.end());
  CHECK(std::find(names.begin(), names.end(), "mid") == names.end());
  CHECK(d.aligned->ops[d.aligned->inclusive_regressions[0]].delta() == 25'000);
  // Own-time ranking puts `leaf` first and never shows `spread`'s +25 µs in one place.
  CHECK(d.aligned->ops[d.aligned->regressions[0]].name == "leaf");
  // A smaller top is a prefix.
  auto top2 = largest_inclusive_changes(*a, *d.aligned, 2);
  CHECK(top2.increases == std::vector<uint32_t>(d.aligned->inclusive_regressions.begin(), d.aligned->inclusive_regressions.begin() + 2));
}
