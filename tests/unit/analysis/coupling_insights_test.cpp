// §4 graph launches, §5 corrected HDBI and fusion savings, and the bounded Insights ranking
// (issue 18): hand-made traces for each rule, and a corpus-wide bound on every insight's cost.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/import/trace_loader.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::analysis::test;

namespace {

std::string ts_text(int64_t v) { return std::to_string(v); }

// 20 kernels of 100 µs launched 1 µs apart at 1000 µs, run back to back from 1010 µs: the
// stream is never idle after the first kernel, so everything but the first launch is queue time.
std::string saturated_trace() {
  std::vector<std::string> ev{X("user_annotation", "ProfilerStep#1", 1, 1, "990", "3000")};
  for (int k = 0; k < 20; ++k) {
    ev.push_back(launch("cudaLaunchKernel", ts_text(1000 + k), "1", k + 1));
    ev.push_back(kernel("gemm", 7, ts_text(1010 + 100 * k), "100", k + 1));
  }
  return trace(ev);
}

// 10 kernels of 2 µs, each launched 50 µs after the previous and started 10 µs after its launch
// call began: the device waits for every launch.
std::string launch_bound_trace() {
  std::vector<std::string> ev{X("user_annotation", "ProfilerStep#1", 1, 1, "990", "600"),
                              X("cpu_op", "aten::add", 1, 1, "995", "500")};
  for (int k = 0; k < 10; ++k) {
    ev.push_back(launch("cudaLaunchKernel", ts_text(1000 + 50 * k), "8", k + 1));
    ev.push_back(kernel("tiny", 7, ts_text(1010 + 50 * k), "2", k + 1));
  }
  return trace(ev);
}

// One cudaGraphLaunch (1000 µs, 20 µs long) replaying 50 kernels A, B, A, B... of 2 µs, 3 µs
// apart from 1030 µs.
std::string graph_trace() {
  std::vector<std::string> ev{launch("cudaGraphLaunch", "1000", "20", 1)};
  for (int k = 0; k < 50; ++k) ev.push_back(kernel(k % 2 ? "B" : "A", 7, ts_text(1030 + 3 * k), "2", 1));
  return trace(ev);
}

// A, B pairs launched 1 µs apart at 1000 µs but run from 2000 µs (1000 µs of queue time): A for
// 8 µs, a 2 µs idle gap, B for 8 µs, a 2 µs gap, the next A.
std::string queued_chain_trace() {
  std::vector<std::string> ev;
  for (int j = 0; j < 4; ++j) {
    ev.push_back(launch("cudaLaunchKernel", ts_text(1000 + 2 * j), "1", 2 * j + 1));
    ev.push_back(launch("cudaLaunchKernel", ts_text(1001 + 2 * j), "1", 2 * j + 2));
    ev.push_back(kernel("A", 7, ts_text(2000 + 20 * j), "8", 2 * j + 1));
    ev.push_back(kernel("B", 7, ts_text(2010 + 20 * j), "8", 2 * j + 2));
  }
  return trace(ev);
}

const CouplingRow& iteration_row(const Coupling& c, int64_t n) {
  for (const auto& r : c.rows)
    if (r.iteration == n) return r;
  FAIL("no coupling row for iteration " << n);
  return c.rows.front();
}

}  // namespace

TEST_CASE("HDBI: a saturated stream is device-bound although TKLQT is long") {
  auto s = load(saturated_trace());
  Coupling c = coupling(table(*s, Mode::Sightline));
  const CouplingRow& step = iteration_row(c, 1);
  CHECK(step.kernels == 20);
  // TKLQT keeps the queue time: Σ (1010 + 100k) - (1000 + k) = Σ 10 + 99k.
  CHECK(step.tklqt == usec(20 * 10 + 99 * 190));
  // Host orchestration: 20 × T_sys, plus the 10 µs the idle stream waited for the first kernel.
  CHECK(step.host_orchestration == 20 * TimeNs(4500) + usec(10));
  CHECK(step.hdbi == doctest::Approx(2000.0 / (2000.0 + 90.0 + 10.0)));
  CHECK(step.bound == Boundness::Device);
  CHECK(c.rows.back().bound == Boundness::Device);
}

TEST_CASE("HDBI: a launch-bound stream is host-bound; --tsys auto takes the 5th percentile") {
  auto s = load(launch_bound_trace());
  EventTable t = table(*s, Mode::Sightline);
  Coupling c = coupling(t);
  const CouplingRow& step = iteration_row(c, 1);
  CHECK(step.tklqt == usec(100));
  CHECK(step.host_orchestration == 10 * (TimeNs(4500) + usec(10)));
  CHECK(step.hdbi == doctest::Approx(20.0 / (20.0 + 145.0)));
  CHECK(step.bound == Boundness::Host);
  CouplingOptions o;
  o.t_sys.reset();
  Coupling automatic = coupling(t, o);
  CHECK(automatic.t_sys == usec(10));  // every launch-to-start is 10 µs
  CHECK(iteration_row(automatic, 1).host_orchestration == 10 * usec(20));
}

TEST_CASE("CUDA graph: one launch call for 50 kernels, with graph latencies") {
  auto s = load(graph_trace());
  EventTable t = table(*s, Mode::Sightline);
  LaunchStats ls = launch_stats(t);
  REQUIRE(ls.pairs.size() == 50);
  CHECK(ls.graph_launches == 1);
  CHECK(ls.graph_activities == 50);
  CHECK(ls.runtime_sum == usec(20));  // the call counts once, not 50 times
  CHECK(ls.graph_runtime_sum == usec(20));
  CHECK(ls.short_kernels == 1);
  CHECK(ls.pairs[0].graph_position == 0);
  CHECK(ls.pairs[0].delay == usec(10));     // launch end (1020) → first kernel (1030)
  CHECK(ls.pairs[0].to_start == usec(30));
  CHECK(ls.pairs[49].graph_position == 49);
  CHECK(ls.pairs[49].delay == usec(1));     // previous kernel's end → this start
  CHECK(ls.pairs[49].to_start == usec(3));
  CHECK(ls.delay_median == doctest::Approx(double(usec(1))));
  CHECK(ls.graph_first_delay_median == doctest::Approx(double(usec(10))));
  CHECK(ls.graph_inner_delay_median == doctest::Approx(double(usec(1))));
  // HDBI: T_sys and the 30 µs wait once, for the one call.
  CHECK(coupling(t).rows.back().host_orchestration == TimeNs(4500) + usec(30));
  // Graph kernels are never fusion candidates, however regular their order.
  CHECK(fusion_candidates(t).empty());
  // The report says so.
  Report r = run_report(*s, {});
  auto tables = report_tables(r);
  CHECK(std::any_of(tables.begin(), tables.end(), [](const Table& x) { return x.name == "graph_launches" && x.rows.size() == 1; }));
  CHECK(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("CUDA graph") != std::string::npos; }));
  // HTA mode knows no graphs (nor cudaGraphLaunch as a launch).
  LaunchStats hta = launch_stats(table(*s, Mode::Hta));
  CHECK(hta.pairs.empty());
  CHECK(hta.graph_launches == 0);
}

TEST_CASE("fusion saving: T_sys and idle gaps, never queue time") {
  auto s = load(queued_chain_trace());
  EventTable t = table(*s, Mode::Sightline);
  auto f = fusion_candidates(t);
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].chain == std::vector<std::string>{"A", "B"});
  CHECK(f[0].count == 4);
  // Per occurrence: T_sys for B plus the 2 µs gap; B's ~1000 µs launch-to-start is queue time.
  CHECK(f[0].saving == 4 * (TimeNs(4500) + usec(2)));
  CHECK(f[0].saving <= 4 * usec(18));  // never more than the occurrences' spans
  CHECK(f[0].first_start == usec(1000));  // store times start at the first event (1000 µs)
  CHECK(f[0].first_end == usec(1018));
}

TEST_CASE("fusion saving: back-to-back tiny kernels save at most their span") {
  std::vector<std::string> ev;
  for (int j = 0; j < 3; ++j) {
    ev.push_back(launch("cudaLaunchKernel", ts_text(1000 + 2 * j), "1", 2 * j + 1));
    ev.push_back(launch("cudaLaunchKernel", ts_text(1001 + 2 * j), "1", 2 * j + 2));
    ev.push_back(kernel("A", 7, ts_text(2000 + 10 * j), "1", 2 * j + 1));
    ev.push_back(kernel("B", 7, ts_text(2001 + 10 * j), "1", 2 * j + 2));
  }
  auto s = load(trace(ev));
  auto f = fusion_candidates(table(*s, Mode::Sightline));
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].chain == std::vector<std::string>{"A", "B"});
  CHECK(f[0].saving == 3 * usec(2));  // T_sys 4.5 µs, clamped to the 2 µs occurrence
}

TEST_CASE("fusion saving: a repetitive chain's overlapping occurrences are saved once") {
  // Ten A kernels, 3 µs apart (1 µs long, 2 µs gaps): nine windows "A A" (proximity 0.9), five
  // disjoint ones.
  std::vector<std::string> ev;
  for (int k = 0; k < 10; ++k) {
    ev.push_back(launch("cudaLaunchKernel", ts_text(1000 + k), "1", k + 1));
    ev.push_back(kernel("A", 7, ts_text(2000 + 3 * k), "1", k + 1));
  }
  auto s = load(trace(ev));
  auto f = fusion_candidates(table(*s, Mode::Sightline));
  auto aa = std::find_if(f.begin(), f.end(), [](const FusionCandidate& c) { return c.chain.size() == 2; });
  REQUIRE(aa != f.end());
  CHECK(aa->count == 9);
  CHECK(aa->saving == 5 * usec(4));  // each: min(T_sys + the 2 µs gap, its 4 µs span)
}

TEST_CASE("fusion: communication kernels are never candidates") {
  std::vector<std::string> ev;
  for (int k = 0; k < 8; ++k) {
    ev.push_back(launch("cudaLaunchKernel", ts_text(1000 + k), "1", k + 1));
    ev.push_back(kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 7, ts_text(5000 + 1000 * k), "900", k + 1));
  }
  auto s = load(trace(ev));
  CHECK(fusion_candidates(table(*s, Mode::Sightline)).empty());
}

TEST_CASE("insights: bounded costs, and the text report opens with the headline") {
  for (const std::string& json : {saturated_trace(), launch_bound_trace(), graph_trace(), queued_chain_trace()}) {
    auto s = load(json);
    Report r = run_report(*s, {});
    REQUIRE(r.insights);
    const TimeNs span = trace_span(r.table);
    for (const Insight& in : *r.insights) {
      CAPTURE(in.title);
      CHECK(in.cost > 0);
      CHECK(in.cost <= span);
    }
    for (size_t i = 1; i < r.insights->size(); ++i) CHECK((*r.insights)[i - 1].cost >= (*r.insights)[i].cost);
    std::string text = render_text(r, report_tables(r));
    size_t head = text.find("== headline ==");
    REQUIRE(head != std::string::npos);
    CHECK(head < text.find("== temporal_breakdown =="));
    CHECK(text.find("GPU idle") != std::string::npos);
    CHECK(text.find("== insights ==") == std::string::npos);  // the table is JSON/CSV only
  }
  // The saturated trace is device-bound: no launch-bound finding.
  auto s = load(saturated_trace());
  Report r = run_report(*s, {});
  for (const Insight& in : *r.insights) CHECK(in.kind != "launch_bound");
  // The launch-bound one is, and its cost is the ledger's launch-bound idle: the 20 µs before the
  // first kernel, 9 gaps of 48 µs while aten::add dispatched, the 128 µs after the last kernel to
  // the step's end (aten::add still open, W holds CPU events).
  auto lb = load(launch_bound_trace());
  Report rl = run_report(*lb, {});
  auto host = std::find_if(rl.insights->begin(), rl.insights->end(), [](const Insight& in) { return in.kind == "launch_bound"; });
  REQUIRE(host != rl.insights->end());
  CHECK(host->cost == usec(20 + 9 * 48 + 128));
  CHECK(host->cost == rl.ledger->device_idle(IdleCause::LaunchBound) + rl.ledger->device_idle(IdleCause::LaunchLatency));
  // The fusion finding of the queued chain reports the bounded saving, not the queue time.
  auto qc = load(queued_chain_trace());
  Report rq = run_report(*qc, {});
  auto fusion = std::find_if(rq.insights->begin(), rq.insights->end(), [](const Insight& in) { return in.kind == "fusion"; });
  REQUIRE(fusion != rq.insights->end());
  CHECK(fusion->cost == 4 * (TimeNs(4500) + usec(2)));
  // JSON carries the ranked table; HTA mode has no insights and no headline.
  std::string json = render_json(rq, report_tables(rq), "{}");
  CHECK(json.find("\"insights\": [") != std::string::npos);
  ReportOptions hta;
  hta.table.mode = Mode::Hta;
  Report rh = run_report(*qc, hta);
  CHECK_FALSE(rh.insights);
  CHECK(render_text(rh, report_tables(rh)).find("headline") == std::string::npos);
}

TEST_CASE("insights: a stream idle while another runs costs nothing; the whole GPU idle does") {
  // Stream 7: one 1000 µs kernel, then a 1000 µs gap. Stream 8: an 890 µs gap under stream 7's
  // kernel, then a 1095 µs gap that overlaps stream 7's gap.
  auto s = load(trace({launch("cudaLaunchKernel", "900", "2", 1), launch("cudaLaunchKernel", "903", "2", 2),
                       launch("cudaLaunchKernel", "1890", "2", 3), launch("cudaLaunchKernel", "2990", "2", 4),
                       launch("cudaLaunchKernel", "2995", "2", 5), kernel("long", 7, "1000", "1000", 1),
                       kernel("k", 8, "1000", "10", 2), kernel("k", 8, "1900", "10", 3), kernel("k", 7, "3000", "10", 4),
                       kernel("k", 8, "3005", "10", 5)}));
  Report r = run_report(*s, {});
  REQUIRE(r.ledger);
  const std::vector<DeviceIdle>& idle = r.ledger->device();
  // The idle window is the trace's span (900 .. 3015 µs): before the first kernels, 100 µs while
  // the CPU launches (the leading edge), then the 1000 µs gap.
  REQUIRE(idle.size() == 2);
  CHECK(idle[0].start == 0);
  CHECK(idle[0].end == usec(1000 - 900));
  CHECK(idle[1].start == usec(2000 - 900));
  CHECK(idle[1].end == usec(3000 - 900));
  CHECK(idle[1].resumed == usec(3000 - 900));  // stream 7 resumed first
  // The 1000 µs gap: launched late at 2990 with nothing traced on the thread before it.
  auto untraced = std::find_if(r.insights->begin(), r.insights->end(), [](const Insight& in) { return in.kind == "host_untraced"; });
  REQUIRE(untraced != r.insights->end());
  CHECK(untraced->cost == usec(1000));  // not 1000 + 890 + 1095 µs of per-stream gaps
  CHECK(render_text(r, report_tables(r)).find("idle split (no stream busy, 1.10 ms)") != std::string::npos);
}

TEST_CASE("corpus: no insight costs more than the trace span") {
  if (!sl::test::have_shared()) return;
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(sl::test::shared_dir() / "corpus")) {
    std::string path = entry.path().string();
    if (!path.ends_with(".json.gz")) continue;
    CAPTURE(path);
    LoadResult loaded = load_trace(path);
    if (!loaded.ok()) continue;  // loading is corpus_test's business
    Report r = run_report(*loaded.store, {});
    REQUIRE(r.insights);
    const TimeNs span = trace_span(r.table);
    InsightOptions keep_all;
    keep_all.drop_impossible = false;  // the costs themselves must be bounded, not filtered
    for (const Insight& in : rank_insights(r, keep_all)) {
      CAPTURE(in.title);
      CHECK(in.cost <= span);
    }
    for (const FusionCandidate& f : *r.fusion) CHECK(f.saving <= span);
    for (const CouplingRow& c : r.coupling->rows) CHECK(c.host_orchestration >= 0);
    ++checked;
  }
  CHECK(checked >= 48);  // the top-level traces and the 8 ranks of param_dlrm_8rank
}

TEST_CASE("corpus: ResNet-50 nw4 at ~80 % GPU utilisation is not host-bound") {
  if (!sl::test::have_shared()) return;
  LoadResult loaded = load_trace((sl::test::shared_dir() / "corpus" / "kin_resnet50_nw4_run1.json.gz").string());
  REQUIRE(loaded.ok());
  Coupling c = coupling(table(*loaded.store, Mode::Sightline));
  REQUIRE(c.rows.size() > 2);
  for (const CouplingRow& r : c.rows) {
    CAPTURE(r.iteration.value_or(-1));
    if (r.kernels == 0) continue;
    CHECK(r.bound != Boundness::Host);
    CHECK(r.tklqt > 10 * r.host_orchestration);  // TKLQT is mostly queue time here
  }
}

TEST_CASE("corpus: CUDA graph launches of hta_trace_diff_test_v100 count their call once") {
  if (!sl::test::have_shared()) return;
  LoadResult loaded = load_trace((sl::test::shared_dir() / "corpus" / "hta_trace_diff_test_v100.json.gz").string());
  REQUIRE(loaded.ok());
  LaunchStats ls = launch_stats(table(*loaded.store, Mode::Sightline));
  CHECK(ls.graph_launches == 12);
  CHECK(ls.graph_activities > 12);
  // 12 calls of about 1.2 ms: the old per-kernel sum was 6.74 s.
  CHECK(ls.graph_runtime_sum < usec(20'000));
  CHECK(ls.runtime_sum < usec(1'000'000));
}
