// The coupling verdict (analyses.md §5) reads the idle ledger (§2b): device-bound only when the GPU
// is busy >= 80 % of the window, else host-bound naming the host cause that holds most of the
// device-wide idle, waiting, or mixed; so the report never prints two verdicts that disagree.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/analysis/insights.h"
#include "core/analysis/report_tables.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"

namespace sl::analysis {
namespace {

using namespace test;

std::string us(int64_t v) { return std::to_string(v); }

// One step of 10 short kernels, each launched late: the host runs an op that launches nothing for
// 20 µs before every launch, so the stream idles 25 µs before each 10 µs kernel. SODA's HDBI
// (kernel time against T_sys plus the 5 µs each launch call waited) reads it as balanced.
std::string host_late_trace() {
  std::vector<std::string> ev = {X("user_annotation", "ProfilerStep#1", 1, 1, "1000", "400")};
  for (int k = 0; k < 10; ++k) {
    int64_t t0 = 1005 + 35 * k;
    ev.push_back(X("cpu_op", "aten::mul", 1, 1, us(t0), "30"));
    ev.push_back(launch("cudaLaunchKernel", us(t0 + 20), "5", k + 1));
    ev.push_back(kernel("k", 7, us(t0 + 25), "10", k + 1));
  }
  return trace(ev);
}

// The same kernels back to back, all launched up front: the GPU is busy the whole step.
std::string saturated_trace() {
  std::vector<std::string> ev = {X("user_annotation", "ProfilerStep#1", 1, 1, "1000", "200")};
  ev.push_back(X("cpu_op", "aten::mul", 1, 1, "1001", "60"));
  for (int k = 0; k < 10; ++k) {
    ev.push_back(launch("cudaLaunchKernel", us(1002 + 5 * k), "4", k + 1));
    ev.push_back(kernel("k", 7, us(1010 + 10 * k), "10", k + 1));
  }
  return trace(ev);
}

const CouplingRow& step_row(const Report& r, int64_t n) {
  REQUIRE(r.coupling);
  for (const CouplingRow& c : r.coupling->rows)
    if (c.iteration == n) return c;
  FAIL("no coupling row for step " << n);
  return r.coupling->rows.front();
}

Report sightline_report(const TraceStore& store) {
  ReportOptions o;
  return run_report(store, o);
}

}  // namespace

TEST_CASE("coupling verdict: a GPU idle because the host launched late is host-bound, naming the cause") {
  auto s = load(host_late_trace());
  Report r = sightline_report(*s);
  const CouplingRow& step = step_row(r, 1);
  CHECK(step.utilization < 0.8);
  CHECK(step.hdbi > 0.35);  // SODA's index alone would not call it host-bound
  CHECK(step.bound == Boundness::Host);
  REQUIRE(step.bound_cause);
  CHECK(*step.bound_cause == IdleCause::LaunchBound);  // aten::mul dispatches the launch that ends each gap
  // The nine gaps between the kernels, and the 25 µs from the step's first op to its first kernel.
  CHECK(step.bound_cause_idle == usec(10 * 25));
  CHECK(verdict_text(step) == "host-bound: launch_bound 250 µs");
  // The text table says the same in its bound / bound_by columns.
  bool found = false;
  for (const Table& t : report_tables(r)) {
    if (t.name != "coupling") continue;
    found = true;
    CHECK(t.columns.back() == "bound_by_idle_us");
  }
  CHECK(found);
}

TEST_CASE("coupling verdict: a GPU busy over 80 % of the step is device-bound") {
  auto s = load(saturated_trace());
  Report r = sightline_report(*s);
  const CouplingRow& step = step_row(r, 1);
  CHECK(step.utilization >= 0.8);
  CHECK(step.bound == Boundness::Device);
  CHECK_FALSE(step.bound_cause);
}

TEST_CASE("coupling verdict: HTA mode keeps SODA's HDBI thresholds") {
  auto s = load(host_late_trace());
  ReportOptions o;
  o.table.mode = Mode::Hta;
  o.only = {"coupling"};
  Report r = run_report(*s, o);
  REQUIRE(r.coupling);
  for (const CouplingRow& c : r.coupling->rows)
    if (c.kernels) CHECK((c.bound == Boundness::Host || c.bound == Boundness::Balanced || c.bound == Boundness::Device));
}

TEST_CASE("coupling verdict: on every corpus trace it agrees with the ledger") {
  if (!sl::test::have_shared()) return;
  size_t rows = 0;
  const size_t traces = sl::test::for_each_corpus_trace([&](const std::string& file, const TraceStore& store) {
    Report r = sightline_report(store);
    if (!r.coupling) return;
    REQUIRE(r.ledger);
    const std::vector<DeviceIdle>& idle = r.ledger->device();
    for (const CouplingRow& c : r.coupling->rows) {
      if (c.kernels == 0) continue;
      ++rows;
      INFO(file << " step " << c.iteration.value_or(-1) << ": utilisation " << c.utilization << ", " << verdict_text(c));
      // Recounted here, piece by piece: the device-wide idle of the window and its host part.
      TimeNs total = 0, host = 0;
      for (const DeviceIdle& d : idle) {
        TimeNs len = std::min(d.end, c.end) - std::max(d.start, c.start);
        if (len <= 0) continue;
        total += len;
        if (is_host_cause(d.cause)) host += len;
      }
      CHECK((c.bound == Boundness::Device) == (c.utilization >= 0.8));
      if (c.bound == Boundness::Host) CHECK(2 * host >= total);
      if (c.utilization < 0.8 && total > 0 && 2 * host >= total) CHECK(c.bound == Boundness::Host);
      CHECK(c.bound != Boundness::Balanced);  // SODA's middle ground is HTA mode's only
    }
  });
  CHECK(traces > 40);
  CHECK(rows > 100);
}

}  // namespace sl::analysis
