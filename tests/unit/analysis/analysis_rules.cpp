// One small hand-made trace per analysis rule (analyses.md), in both modes where they differ.
#include <doctest/doctest.h>

#include <algorithm>
#include <tuple>

#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "tests/unit/analysis/analysis_test_util.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::analysis::test;

namespace {

const IdleBreakdownRow* find_idle(const std::vector<IdleBreakdownRow>& rows, int64_t stream, IdleCategory c) {
  for (const auto& r : rows)
    if (r.stream == stream && r.category == c) return &r;
  return nullptr;
}

// Two kernels and a memcpy on stream 7, launched early.
std::string basic_trace() {
  return trace({launch("cudaLaunchKernel", "1000", "5", 1), launch("cudaLaunchKernel", "1006", "5", 2),
                launch("cudaMemcpyAsync", "1012", "3", 3), kernel("gemm", 7, "1010", "10", 1),
                kernel("gemm", 7, "1030", "10", 2),
                gpu("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 7, "1040", "5", 3,
                    R"x(,"bytes":10000,"memory bandwidth (GB/s)":2.0)x")});
}

}  // namespace

TEST_CASE("temporal breakdown: span / idle / compute and non-compute") {
  auto s = load(basic_trace());
  // (HTA) span = the GPU activities' own span, 1010 .. 1045.
  TemporalBreakdown h = temporal_breakdown(table(*s, Mode::Hta));
  REQUIRE(h.valid);
  CHECK(h.span == usec(35));
  CHECK(h.idle == usec(10));
  CHECK(h.compute == usec(20));
  CHECK(h.non_compute == usec(5));
  CHECK(h.idle_pct == doctest::Approx(28.57));
  CHECK(h.compute_pct == doctest::Approx(57.14));
  CHECK(h.non_compute_pct == doctest::Approx(14.29));
  CHECK(h.streams.empty());
  // Sightline: the idle window is the trace's span (no ProfilerStep), 1000 .. 1045: the 10 µs
  // before the first kernel, while the CPU launches, are idle too.
  TemporalBreakdown t = temporal_breakdown(table(*s, Mode::Sightline));
  REQUIRE(t.valid);
  CHECK(t.span == usec(45));
  CHECK(t.idle == usec(20));
  CHECK(t.compute == usec(20));
  CHECK(t.non_compute == usec(5));
  CHECK(t.idle_pct == doctest::Approx(100.0 * 20 / 45));
  REQUIRE(t.streams.size() == 1);
  CHECK(t.streams[0].stream == 7);
  CHECK(t.streams[0].idle == usec(20));
  CHECK(t.streams[0].span == usec(45));
}

TEST_CASE("idle breakdown: host_wait / kernel_wait (negative and zero gaps) / other / event-0 quirk") {
  // The first event of the file is a CPU op at 1500 µs: HTA uses it as the "launch" of an
  // unpaired kernel (correlation 99), which turns that kernel's gap into host_wait.
  auto json = trace({X("cpu_op", "aten::late", 1, 2, "1500", "10"), launch("cudaLaunchKernel", "1000", "2", 1),
                     launch("cudaLaunchKernel", "1025", "2", 2), launch("cudaLaunchKernel", "1026", "1", 3),
                     launch("cudaLaunchKernel", "1027", "1", 4), launch("cudaLaunchKernel", "1028", "1", 5),
                     kernel("k", 7, "1010", "10", 1), kernel("k", 7, "1030", "10", 2), kernel("k", 7, "1045", "5", 3),
                     kernel("k", 7, "1100", "10", 4), kernel("k", 7, "1105", "15", 5),
                     kernel("k", 7, "1200", "10", 99)});
  auto s = load(json);
  auto hta = idle_breakdown(table(*s, Mode::Hta));
  REQUIRE(find_idle(hta, 7, IdleCategory::HostWait));
  CHECK(find_idle(hta, 7, IdleCategory::HostWait)->idle == usec(10 + 80));
  CHECK(find_idle(hta, 7, IdleCategory::KernelWait)->idle == usec(5 - 5));  // a negative gap lands here
  CHECK(find_idle(hta, 7, IdleCategory::KernelWait)->stats.count == 2);
  CHECK(find_idle(hta, 7, IdleCategory::KernelWait)->stats.min == doctest::Approx(-5000));
  CHECK(find_idle(hta, 7, IdleCategory::Other)->idle == usec(50));
  CHECK(*find_idle(hta, 7, IdleCategory::HostWait)->ratio == doctest::Approx(0.64));
  CHECK(*find_idle(hta, 7, IdleCategory::Other)->ratio == doctest::Approx(0.36));

  auto sl_rows = idle_breakdown(table(*s, Mode::Sightline));
  CHECK(find_idle(sl_rows, 7, IdleCategory::HostWait)->idle == usec(10));
  CHECK(find_idle(sl_rows, 7, IdleCategory::Other)->idle == usec(50 + 80));  // no launch: other

  // Sightline's 2a measures from the running maximum end: the overlapped kernel (1105 inside
  // 1100..1110) has a zero gap, not -5 µs.
  CHECK(find_idle(sl_rows, 7, IdleCategory::KernelWait)->idle == usec(5 + 0));
  CHECK(find_idle(sl_rows, 7, IdleCategory::KernelWait)->stats.min == doctest::Approx(0));

  // Sightline's causes use the running maximum end: the overlap makes no negative gap. The idle
  // window is the trace's span (1000 .. 1510, aten::late's end): edges before the first kernel
  // (10 µs) and after the last (300 µs) count.
  IdleCauses c = idle_causes(table(*s, Mode::Sightline));
  for (const auto& g : c.gaps) CHECK(g.length() > 0);
  TimeNs total = 0;
  for (const auto& g : c.gaps) total += g.length();
  CHECK(total == usec(10 + (10 + 5 + 50 + 80) + 300));
  REQUIRE(c.gaps.size() == 6);
  CHECK(c.gaps.front().edge == IdleGap::Edge::Leading);
  CHECK(c.gaps.back().edge == IdleGap::Edge::Trailing);
  CHECK(c.gaps.back().next == -1);
  CHECK(c.window.start == 0);  // times are relative to the trace's start, 1000 µs
  CHECK(c.window.end == usec(510));
}

TEST_CASE("idle breakdown: touching kernels give a zero kernel_wait gap - one kernel gives an empty stream") {
  auto s = load(trace({launch("cudaLaunchKernel", "1000", "2", 1), launch("cudaLaunchKernel", "1003", "2", 2),
                       launch("cudaLaunchKernel", "1006", "2", 3), kernel("a", 7, "1010", "10", 1),
                       kernel("b", 7, "1020", "10", 2), kernel("c", 9, "1010", "10", 3)}));
  auto rows = idle_breakdown(table(*s, Mode::Hta));
  const auto* kw = find_idle(rows, 7, IdleCategory::KernelWait);
  REQUIRE(kw);
  CHECK(kw->idle == 0);
  CHECK(kw->stats.count == 1);
  const auto* lone = find_idle(rows, 9, IdleCategory::Other);
  REQUIRE(lone);
  CHECK(lone->idle == 0);
  CHECK(lone->stats.count == 0);
  CHECK_FALSE(lone->ratio.has_value());  // 0 / 0, HTA prints NaN
  // No gap between activities; only the edges of the window 1000 .. 1030 (stream 9 ends at 1020).
  std::vector<std::tuple<int64_t, TimeNs, IdleGap::Edge>> edges;
  for (const IdleGap& g : idle_causes(table(*s, Mode::Sightline)).gaps) edges.push_back({g.stream, g.length(), g.edge});
  std::vector<std::tuple<int64_t, TimeNs, IdleGap::Edge>> want = {{7, usec(10), IdleGap::Edge::Leading},
                                                                  {9, usec(10), IdleGap::Edge::Leading},
                                                                  {9, usec(10), IdleGap::Edge::Trailing}};
  CHECK(edges == want);
  CHECK(idle_causes(table(*s, Mode::Hta)).gaps.empty());  // (HTA) mode: no window, no edges
}

TEST_CASE("idle causes: every cause") {
  auto s = load(trace({
      launch("cudaLaunchKernel", "1000", "5", 1),
      X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, 1, "1021", "69"),
      launch("cudaLaunchKernel", "1095", "5", 2),
      X("cuda_runtime", "cudaStreamSynchronize", 1, 1, "1111", "69"),
      launch("cudaLaunchKernel", "1185", "5", 3),
      X("cpu_op", "aten::add", 1, 1, "1201", "79"),
      launch("cudaLaunchKernel", "1281", "1", 4),
      launch("cudaLaunchKernel", "1282", "1", 5),
      launch("cudaLaunchKernel", "1284", "1", 6),
      launch("cudaLaunchKernel", "1286", "1", 7),
      launch("cudaLaunchKernel", "1287", "1", 8),
      kernel("k1", 7, "1010", "10", 1),
      kernel("k2", 7, "1100", "10", 2),
      kernel("k3", 7, "1190", "10", 3),
      kernel("k4", 7, "1290", "10", 4),
      kernel("k5", 7, "1400", "10", 5),
      kernel("k6", 8, "1300", "100", 6),
      kernel("k7", 7, "1420", "10", 7),
      kernel("k8", 7, "1500", "10", 8),
  }));
  IdleCauses c = idle_causes(table(*s, Mode::Sightline));
  std::vector<std::pair<IdleCause, TimeNs>> got;
  for (const auto& g : c.gaps)
    if (g.stream == 7) got.push_back({g.cause, g.length()});
  // The leading edge 1000 .. 1010: k1 was launched at the window's start, so it is launch latency.
  std::vector<std::pair<IdleCause, TimeNs>> want = {
      {IdleCause::LaunchLatency, usec(10)},
      {IdleCause::DataLoading, usec(80)},     {IdleCause::HostSync, usec(80)},
      {IdleCause::HostCompute, usec(90)},     {IdleCause::CrossStreamWait, usec(100)},
      {IdleCause::LaunchLatency, usec(10)},   {IdleCause::Other, usec(70)}};
  CHECK(got == want);
  // Summary rows: one per cause on stream 7, shares add up to 1.
  double share = 0;
  int rows7 = 0;
  for (const auto& r : c.rows)
    if (r.stream == 7) {
      share += r.share;
      ++rows7;
    }
  CHECK(rows7 == 6);
  CHECK(share == doctest::Approx(1.0));
}

TEST_CASE("idle causes: stream wait event between the launches means cross-stream wait") {
  auto s = load(trace({launch("cudaLaunchKernel", "1000", "2", 1), X("cuda_runtime", "cudaStreamWaitEvent", 1, 1, "1003", "1"),
                       launch("cudaLaunchKernel", "1005", "2", 2), kernel("a", 7, "1010", "10", 1),
                       kernel("b", 7, "1100", "10", 2)}));
  IdleCauses c = idle_causes(table(*s, Mode::Sightline));
  REQUIRE(c.gaps.size() == 2);
  CHECK(c.gaps[0].edge == IdleGap::Edge::Leading);
  CHECK(c.gaps[1].cause == IdleCause::CrossStreamWait);
}

TEST_CASE("launch stats: every launch API in Sightline mode / HTA's four names in HTA mode") {
  const char* apis[] = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                        "cudaGraphLaunch",  "cudaMemcpyAsync",     "cudaMemsetAsync", "hipLaunchKernel",
                        "hipExtModuleLaunchKernel", "hipModuleLaunchKernel"};
  std::vector<std::string> ev;
  int corr = 1;
  for (const char* api : apis) {
    int t0 = 1000 + corr * 100;
    ev.push_back(launch(api, std::to_string(t0), "10", corr));
    ev.push_back(kernel(std::string("k_") + api, 7, std::to_string(t0 + 30), "5", corr));
    ++corr;
  }
  auto s = load(trace(ev));
  LaunchStats sl_stats = launch_stats(table(*s, Mode::Sightline));
  CHECK(sl_stats.pairs.size() == 10);
  LaunchStats hta = launch_stats(table(*s, Mode::Hta));
  CHECK(hta.pairs.size() == 4);
  for (const LaunchStats* st : {&sl_stats, &hta}) {
    for (const auto& p : st->pairs) {
      CHECK(p.runtime == usec(10));
      CHECK(p.delay == usec(20));
      CHECK(p.to_start == usec(30));
      CHECK(p.gpu == usec(5));
    }
    CHECK(st->delay_median == doctest::Approx(usec(20)));
    CHECK(st->short_kernels == st->pairs.size());  // runtime 10 <= 50 and gpu 5 < 10
    CHECK(st->runtime_outliers == 0);
    REQUIRE(st->histograms.size() == 4);
    size_t in_bins = 0;
    for (const auto& b : st->histograms[1].pairs) in_bins += b.size();
    CHECK(in_bins == st->pairs.size());
  }
}

TEST_CASE("launch stats: launch delay is clamped at 0 / outliers counted") {
  auto s = load(trace({launch("cudaLaunchKernel", "1000", "60", 1), kernel("a", 7, "1030", "5", 1),
                       launch("cudaLaunchKernel", "1100", "5", 2), kernel("b", 7, "1300", "5", 2)}));
  LaunchStats st = launch_stats(table(*s, Mode::Hta));
  REQUIRE(st.pairs.size() == 2);
  CHECK(st.pairs[0].delay == 0);
  CHECK(st.runtime_outliers == 1);
  CHECK(st.launch_delay_outliers == 1);
  CHECK(st.delay_max == usec(195));
  CHECK(st.runtime_sum == usec(65));
}

TEST_CASE("kernel type breakdown: overlap labels and comm/comp overlap") {
  auto s = load(trace({launch("cudaLaunchKernel", "1000", "1", 1), launch("cudaLaunchKernel", "1001", "1", 2),
                       launch("cudaMemcpyAsync", "1002", "1", 3), kernel("gemm", 7, "2000", "100", 1),
                       kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 8, "2050", "100", 2),
                       gpu("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 9, "2140", "20", 3)}));
  for (Mode m : {Mode::Sightline, Mode::Hta}) {
    KernelBreakdown kb = kernel_breakdown(table(*s, m));
    auto find = [&](const std::string& label) -> TimeNs {
      for (const auto& x : kb.by_type)
        if (x.label == label) return x.time;
      return -1;
    };
    CHECK(find("COMPUTATION") == usec(50));
    CHECK(find("COMPUTATION overlapping COMMUNICATION") == usec(50));
    CHECK(find("COMMUNICATION") == usec(40));
    CHECK(find("COMMUNICATION overlapping MEMORY") == usec(10));
    CHECK(find("MEMORY") == usec(10));
    CommCompOverlap o = comm_comp_overlap(table(*s, m));
    REQUIRE(o.overlap_pct);
    CHECK(*o.overlap_pct == doctest::Approx(50.0));
    if (m == Mode::Hta) {
      CHECK(kb.by_type[0].pct == doctest::Approx(31.2));  // 31.25 rounds half to even
    }
  }
}

TEST_CASE("kernel breakdown per kernel: statistics and HTA's others folding") {
  std::vector<std::string> ev;
  int corr = 1;
  // 12 computation kernels k00..k11 with totals 12..1 (k00 largest), k00 three times.
  for (int k = 0; k < 12; ++k) {
    int reps = k == 0 ? 3 : 1;
    for (int r = 0; r < reps; ++r) {
      int t0 = 1000 + corr * 100;
      ev.push_back(launch("cudaLaunchKernel", std::to_string(t0), "1", corr));
      char name[8];
      std::snprintf(name, sizeof name, "k%02d", k);
      ev.push_back(kernel(name, 7, std::to_string(t0 + 10), std::to_string(k == 0 ? 4 : 12 - k), corr));
      ++corr;
    }
  }
  auto s = load(trace(ev));
  KernelBreakdown sl_kb = kernel_breakdown(table(*s, Mode::Sightline));
  CHECK(sl_kb.per_kernel.size() == 12);
  const KernelStats& k0 = sl_kb.per_kernel[0];
  CHECK(k0.name == "k00");
  CHECK(k0.count == 3);
  CHECK(k0.sum == doctest::Approx(usec(12)));
  CHECK(k0.std == doctest::Approx(0));
  CHECK(*k0.median == doctest::Approx(usec(4)));
  KernelBreakdown hta = kernel_breakdown(table(*s, Mode::Hta));
  CHECK(hta.per_kernel_full.size() == 12);
  auto others = std::find_if(hta.per_kernel.begin(), hta.per_kernel.end(), [](const auto& k) { return k.name == "others"; });
  REQUIRE(others != hta.per_kernel.end());
  CHECK(hta.per_kernel.size() < 12);
  // Kept names report their total as min = max = mean.
  auto kept = std::find_if(hta.per_kernel.begin(), hta.per_kernel.end(), [](const auto& k) { return k.name == "k00"; });
  REQUIRE(kept != hta.per_kernel.end());
  CHECK(kept->min == doctest::Approx(usec(12)));
  CHECK(kept->max == doctest::Approx(usec(12)));
}

TEST_CASE("fractional timestamps: HTA rounds start up and end down / Sightline keeps ns") {
  auto s = load(trace({launch("cudaLaunchKernel", "100.4", "0.3", 1), kernel("k", 7, "110.6", "0.2", 1),
                       kernel("k", 7, "120.25", "3.5", 1)}));
  EventTable hta = table(*s, Mode::Hta);
  CHECK(hta.rounded);
  std::vector<TimeNs> durs;
  for (const auto& r : hta.rows) durs.push_back(r.dur);
  std::sort(durs.begin(), durs.end());
  CHECK(durs == std::vector<TimeNs>{-1000, -1000, 2000});  // 120.25+3.5: ceil 121, floor 123
  EventTable exact = table(*s, Mode::Sightline);
  std::vector<TimeNs> edurs;
  for (const auto& r : exact.rows) edurs.push_back(r.dur);
  std::sort(edurs.begin(), edurs.end());
  CHECK(edurs == std::vector<TimeNs>{200, 300, 3500});
}

TEST_CASE("a trace without GPU activity: every analysis empty / notes / no crash") {
  auto s = load(trace({X("cpu_op", "aten::add", 1, 1, "0", "10"), X("cpu_op", "aten::mul", 1, 1, "20", "10")}));
  for (Mode m : {Mode::Sightline, Mode::Hta}) {
    ReportOptions o;
    o.table.mode = m;
    o.operator_name = "aten";
    Report r = run_report(*s, o);
    CHECK_FALSE(r.temporal->valid);
    CHECK(r.idle->empty());
    CHECK(r.causes->gaps.empty());
    CHECK(r.kernels->by_type.empty());
    CHECK(r.launches->pairs.empty());
    CHECK_FALSE(r.overlap->overlap_pct);
    CHECK(r.fusion->empty());
    CHECK(r.sequences->empty());
    CHECK_FALSE(r.notes.empty());
    std::string json = render_json(r, report_tables(r), "{}");
    CHECK(json.find("\"temporal_breakdown\": []") != std::string::npos);
    CHECK(json.find("\"overlap_pct\": null") != std::string::npos);
  }
}

TEST_CASE("queue length and memory bandwidth") {
  auto s = load(basic_trace());
  auto q = queue_length(table(*s, Mode::Sightline));
  REQUIRE(q.size() == 1);
  CHECK(q[0].stream == 7);
  CHECK(q[0].summary.count == 6);
  CHECK(q[0].summary.max == 2);
  CHECK(q[0].summary.min == 0);
  auto bw = memory_bandwidth(table(*s, Mode::Hta));
  REQUIRE(bw.size() == 1);
  CHECK(bw[0].copy_kind == "Memcpy HtoD");
  CHECK(bw[0].summary.count == 1);
  CHECK(bw[0].summary.mean == doctest::Approx(2.0));
}

TEST_CASE("coupling: TKLQT / AKD / latency / utilisation / HDBI verdict") {
  auto s = load(trace({X("cpu_op", "aten::mm", 1, 1, "1000", "20"), launch("cudaLaunchKernel", "1001", "2", 1),
                       kernel("gemm", 7, "1010", "20", 1)}));
  Coupling c = coupling(table(*s, Mode::Sightline));
  REQUIRE(!c.rows.empty());
  const CouplingRow& all = c.rows.back();
  CHECK_FALSE(all.iteration.has_value());
  CHECK(all.tklqt == usec(9));
  // The stream was idle when the launch call started: T_sys + the 9 µs the device waited.
  CHECK(all.host_orchestration == TimeNs(4500) + usec(9));
  CHECK(all.akd == doctest::Approx(usec(20)));
  CHECK(all.latency == usec(30));
  CHECK(all.gpu_busy == usec(20));
  CHECK(all.exposed_host == usec(10));
  CHECK(all.utilization == doctest::Approx(20.0 / 30.0));
  CHECK(all.hdbi == doctest::Approx(20.0 / 33.5));
  CHECK(all.bound == Boundness::Balanced);
}

TEST_CASE("fusion candidates and repeated kernels") {
  std::vector<std::string> ev;
  for (int i = 0; i < 6; ++i) {
    int t0 = 1000 + i * 10;
    ev.push_back(launch("cudaLaunchKernel", std::to_string(t0), "2", i + 1));
    ev.push_back(kernel(i % 2 ? "B" : "A", 7, std::to_string(2000 + i * 10), "5", i + 1));
  }
  auto s = load(trace(ev));
  auto f = fusion_candidates(table(*s, Mode::Sightline));
  REQUIRE_FALSE(f.empty());
  CHECK(f[0].chain == std::vector<std::string>{"A", "B"});
  CHECK(f[0].count == 3);
  CHECK(f[0].proximity == doctest::Approx(1.0));
  // Per occurrence: T_sys (4.5 µs) for B plus the stream's 5 µs idle gap between A and B; the
  // 1000 µs launch-to-start of B is queue-free here but is not what fusing would save.
  CHECK(f[0].saving == 3 * (TimeNs(4500) + usec(5)));
  auto rep = repeated_kernels(table(*s, Mode::Sightline));
  REQUIRE(rep.size() == 2);
  CHECK(rep[0].count == 3);
}

TEST_CASE("kernel sequences per operator") {
  std::vector<std::string> ev;
  int corr = 1;
  for (int rep = 0; rep < 2; ++rep) {
    int t0 = 1000 + rep * 1000;
    ev.push_back(X("cpu_op", "aten::linear", 1, 1, std::to_string(t0), "50"));
    for (int k = 0; k < 3; ++k) {
      ev.push_back(launch("cudaLaunchKernel", std::to_string(t0 + 1 + 2 * k), "1", corr));
      ev.push_back(kernel(std::string(1, 'k').append(std::to_string(k)), 7, std::to_string(t0 + 100 + 10 * k), "5", corr));
      ++corr;
    }
  }
  // An aten::linear launching only two kernels is below the minimum length.
  ev.push_back(X("cpu_op", "aten::linear", 1, 1, "5000", "50"));
  for (int k = 0; k < 2; ++k) {
    ev.push_back(launch("cudaLaunchKernel", std::to_string(5001 + 2 * k), "1", corr));
    ev.push_back(kernel(std::string(1, 'k').append(std::to_string(k)), 7, std::to_string(5100 + 10 * k), "5", corr));
    ++corr;
  }
  auto s = load(trace(ev));
  for (Mode m : {Mode::Sightline, Mode::Hta}) {
    KernelSequenceOptions o;
    o.operator_name = "linear";
    auto seqs = kernel_sequences(table(*s, m), o);
    REQUIRE(seqs.size() == 1);
    CHECK(seqs[0].count == 2);
    CHECK(seqs[0].pattern == std::vector<std::string>{"aten::linear", "k0", "k1", "k2"});
    CHECK(seqs[0].gpu_kernel_time == usec(30));
    CHECK(seqs[0].cpu_op_time == usec(100));
  }
}

TEST_CASE("report tables: JSON / CSV and text agree on columns") {
  auto s = load(basic_trace());
  ReportOptions o;
  Report r = run_report(*s, o);
  auto tables = report_tables(r);
  std::string json = render_json(r, tables, "{}");
  CHECK(json.find("\"mode\": \"sightline\"") != std::string::npos);
  CHECK(json.find("\"idle_us\": 10") != std::string::npos);
  auto it = std::find_if(tables.begin(), tables.end(), [](const Table& t) { return t.name == "launch_stats"; });
  REQUIRE(it != tables.end());
  std::string csv = render_csv(*it);
  CHECK(csv.rfind("rank,pairs,short_kernels", 0) == 0);
  CHECK(render_text(r, tables).find("== temporal_breakdown ==") != std::string::npos);
}

TEST_CASE("merge_intervals: several sorted runs (one per stream), one run, many runs, empty") {
  auto merged = [](std::vector<Interval> v) {
    std::vector<std::pair<TimeNs, TimeNs>> out;
    for (const Interval& i : merge_intervals(std::move(v))) out.push_back({i.start, i.end});
    return out;
  };
  using P = std::vector<std::pair<TimeNs, TimeNs>>;
  // Three runs: a new group starts only strictly after the largest end so far (touching merges).
  CHECK(merged({{0, 10}, {20, 30}, {50, 60}, {5, 12}, {30, 35}, {70, 80}, {12, 15}, {40, 45}}) ==
        P{{0, 15}, {20, 35}, {40, 45}, {50, 60}, {70, 80}});
  CHECK(merged({{0, 5}, {5, 9}, {11, 12}}) == P{{0, 9}, {11, 12}});
  // More runs than the run merge takes (strictly decreasing starts): the plain sort.
  std::vector<Interval> many;
  for (TimeNs k = 200; k > 0; --k) many.push_back({k * 10, k * 10 + 3});
  P expected;
  for (TimeNs k = 1; k <= 200; ++k) expected.push_back({k * 10, k * 10 + 3});
  CHECK(merged(many) == expected);
  CHECK(merged({}).empty());
}
