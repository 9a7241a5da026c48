// Idle over the idle window (analyses.md §1, §2b; issue 18): annotations are not GPU work, the
// edges of the window are idle with a cause, collective-only streams have their own cause, work
// without a launch link borrows the stream's launching thread, and the temporal idle of every
// stream equals the sum of its idle causes. Hand-made traces, then the whole corpus (where the
// fleet map's gaps_only also gives the full analysis' gaps).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/analysis/idle_time.h"
#include "core/analysis/temporal_breakdown.h"
#include "core/import/trace_loader.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "tests/unit/test_support.h"
#include "views/range_stats.h"
#include "views/timeline_view.h"
#include "views/workspace.h"

using namespace sl;
using namespace sl::analysis;
using namespace sl::analysis::test;

namespace {

TimeNs cause_total(const IdleCauses& c, int64_t stream, IdleCause cause) {
  TimeNs total = 0;
  for (const IdleCauseRow& r : c.rows)
    if (r.stream == stream && r.cause == cause) total += r.idle;
  return total;
}

TimeNs idle_of_stream(const IdleCauses& c, int64_t stream) {
  TimeNs total = 0;
  for (const IdleCauseRow& r : c.rows)
    if (r.stream == stream) total += r.idle;
  return total;
}

// A GPU activity with no correlation (no launch link), like MTIA's dma_request.
std::string unlinked_kernel(const std::string& name, int stream, const std::string& ts, const std::string& dur) {
  return X("kernel", name, 0, stream, ts, dur, R"({"device":0,"stream":)" + std::to_string(stream) + "}");
}

}  // namespace

TEST_CASE("idle window: a whole-step GPU annotation is not GPU work in Sightline mode") {
  // ProfilerStep#1 on the CPU (the window, 1000 .. 1200) and as a GPU user annotation covering
  // stream 7 for the whole step; two 10 µs kernels.
  auto s = load(trace({X("user_annotation", "ProfilerStep#1", 1, 1, "1000", "200"),
                       launch("cudaLaunchKernel", "1002", "2", 1), launch("cudaLaunchKernel", "1090", "2", 2),
                       gpu("gpu_user_annotation", "ProfilerStep#1", 7, "1000", "200", 0),
                       kernel("k1", 7, "1010", "10", 1), kernel("k2", 7, "1100", "10", 2)}));
  TemporalBreakdown t = temporal_breakdown(table(*s, Mode::Sightline));
  REQUIRE(t.valid);
  CHECK(t.span == usec(200));
  CHECK(t.idle == usec(180));
  CHECK(t.idle_pct == doctest::Approx(90.0));
  CHECK(t.non_compute == 0);  // the annotation is neither compute nor non-compute work
  REQUIRE(t.streams.size() == 1);
  CHECK(t.streams[0].idle == usec(180));
  IdleCauses c = idle_causes(table(*s, Mode::Sightline));
  CHECK(idle_of_stream(c, 7) == usec(180));
  // (HTA) keeps annotations in G: the stream reads 0 % idle, as HTA prints it.
  TemporalBreakdown h = temporal_breakdown(table(*s, Mode::Hta));
  CHECK(h.idle == 0);
  CHECK(h.span == usec(200));
}

TEST_CASE("idle window: a CPU-only prologue before the first kernel is idle with a host cause") {
  SUBCASE("data loading") {
    // 215 µs in the data loader, then the first launch: the GPU idles from the trace's start.
    auto s = load(trace({X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, 1,
                           "1000", "215"),
                         launch("cudaLaunchKernel", "1216", "2", 1), kernel("k", 7, "1220", "10", 1)}));
    IdleCauses c = idle_causes(table(*s, Mode::Sightline));
    REQUIRE(c.gaps.size() == 1);
    CHECK(c.gaps[0].edge == IdleGap::Edge::Leading);
    CHECK(c.gaps[0].start == 0);  // the trace's start (times are relative to it, 1000 µs)
    CHECK(c.gaps[0].end == usec(220));
    CHECK(c.gaps[0].cause == IdleCause::DataLoading);
    TemporalBreakdown t = temporal_breakdown(table(*s, Mode::Sightline));
    CHECK(t.span == usec(230));
    CHECK(t.idle == usec(220));
  }
  SUBCASE("host work") {
    auto s = load(trace({X("cpu_op", "aten::decode_video", 1, 1, "1000", "215"),
                         launch("cudaLaunchKernel", "1216", "2", 1), kernel("k", 7, "1220", "10", 1),
                         launch("cudaLaunchKernel", "1300", "2", 2), kernel("k", 7, "1305", "10", 2),
                         X("cpu_op", "aten::save", 1, 1, "1310", "90")}));
    IdleCauses c = idle_causes(table(*s, Mode::Sightline));
    REQUIRE(c.gaps.size() == 3);
    CHECK(c.gaps[0].edge == IdleGap::Edge::Leading);
    CHECK(c.gaps[0].cause == IdleCause::HostCompute);  // decode_video launched nothing
    CHECK(c.gaps[0].host_track == s->launch_of(table(*s, Mode::Sightline).rows[size_t(c.gaps[0].next)].ref).track);
    // After the last kernel (1315) the CPU works until 1400: a trailing edge, host compute.
    CHECK(c.gaps[2].edge == IdleGap::Edge::Trailing);
    CHECK(c.gaps[2].length() == usec(85));
    CHECK(c.gaps[2].cause == IdleCause::HostCompute);
    TemporalBreakdown t = temporal_breakdown(table(*s, Mode::Sightline));
    CHECK(t.idle == idle_of_stream(c, 7));
    CHECK(t.idle == usec(220 + 75 + 85));
  }
}

TEST_CASE("idle window: ProfilerStep range, widened to GPU work that runs past the step") {
  auto s = load(trace({X("cpu_op", "setup", 1, 1, "500", "100"), X("user_annotation", "ProfilerStep#3", 1, 1, "1000", "100"),
                       launch("cudaLaunchKernel", "1090", "2", 1), kernel("k", 7, "1095", "50", 1)}));
  EventTable t = table(*s, Mode::Sightline);
  Interval w = idle_window(t);
  // Times are relative to the trace's start (500 µs).
  CHECK(w.start == usec(500));  // the step, not the setup before it
  CHECK(w.end == usec(645));    // the kernel ends after the step's CPU side
}

TEST_CASE("idle causes: a communication stream's launched collective waits for its peers") {
  auto s = load(trace({launch("cudaLaunchKernel", "1000", "2", 1), launch("cudaLaunchKernel", "1003", "2", 2),
                       launch("cudaLaunchKernel", "1150", "2", 3), launch("cudaLaunchKernel", "1160", "2", 4),
                       kernel("gemm", 7, "1010", "100", 1), kernel("ncclKernel_AllReduce_RING_LL_Sum_float", 20, "1110", "20", 2),
                       kernel("gemm", 7, "1155", "50", 3), kernel("ncclDevKernel_AllGather", 20, "1170", "20", 4)}));
  IdleCauses c = idle_causes(table(*s, Mode::Sightline));
  // Stream 20, leading 1000..1110: the all-reduce was launched at 1003 and waited 107 µs (the gap
  // splits at the launch: 3 µs of launch calls before it). 1130..1170: launched late at 1160, the
  // thread was in launch calls (launch-bound). Trailing 1190..1205: nothing traced (host untraced).
  CHECK(cause_total(c, 20, IdleCause::CollectiveWait) == usec(107));
  CHECK(cause_total(c, 20, IdleCause::LaunchBound) == usec(3 + 40));
  CHECK(cause_total(c, 20, IdleCause::HostUntraced) == usec(15));
  CHECK(idle_of_stream(c, 20) == usec(165));
  // Stream 7 mixes compute: its 45 µs gap was launched late with nothing traced on the thread.
  CHECK(cause_total(c, 7, IdleCause::CollectiveWait) == 0);
  CHECK(cause_total(c, 7, IdleCause::HostUntraced) == usec(45));
  CHECK(idle_cause_name(IdleCause::CollectiveWait) == "collective_wait");
}

TEST_CASE("idle causes: work without a launch link borrows the stream's launching thread") {
  // k2 has no correlation (MTIA's dma_request has none). The thread that launches stream 7's
  // linked work is busy in aten::copy_ for the whole gap: launch-bound, not "other" (its launches
  // are invisible, so host compute cannot be told from dispatch).
  auto busy = load(trace({launch("cudaLaunchKernel", "1000", "2", 1), X("cpu_op", "aten::copy_", 1, 1, "1010", "100"),
                          kernel("k1", 7, "1005", "10", 1), unlinked_kernel("dma_request", 7, "1100", "5")}));
  IdleCauses c = idle_causes(table(*busy, Mode::Sightline));
  const IdleGap* gap = nullptr;
  for (const IdleGap& g : c.gaps)
    if (g.edge == IdleGap::Edge::None) gap = &g;
  REQUIRE(gap);
  CHECK(gap->cause == IdleCause::LaunchBound);
  CHECK(gap->host_inferred);
  CHECK(gap->host_track == busy->launch_of(table(*busy, Mode::Sightline).rows[size_t(c.gaps[0].next)].ref).track);
  // The same with the thread doing nothing traced: no evidence of a late launch, "other".
  auto idle = load(trace({launch("cudaLaunchKernel", "1000", "2", 1), kernel("k1", 7, "1005", "10", 1),
                          unlinked_kernel("dma_request", 7, "1100", "5")}));
  IdleCauses d = idle_causes(table(*idle, Mode::Sightline));
  REQUIRE(d.gaps.size() == 2);
  CHECK(d.gaps[1].cause == IdleCause::Other);
  CHECK(d.gaps[1].host_inferred);
}

TEST_CASE("idle breakdown: Sightline never prints a negative gap; (HTA) keeps HTA's") {
  // k2 starts inside k1: HTA's immediately-preceding rule gives -40 µs.
  auto s = load(trace({launch("cudaLaunchKernel", "1000", "2", 1), launch("cudaLaunchKernel", "1001", "2", 2),
                       kernel("k1", 7, "1010", "100", 1), kernel("k2", 7, "1050", "20", 2)}));
  auto idle_sum = [](const std::vector<IdleBreakdownRow>& rows) {
    TimeNs sum = 0;
    for (const auto& r : rows) sum += r.idle;
    return sum;
  };
  CHECK(idle_sum(idle_breakdown(table(*s, Mode::Hta))) == usec(-60));
  std::vector<IdleBreakdownRow> sl_rows = idle_breakdown(table(*s, Mode::Sightline));
  CHECK(idle_sum(sl_rows) == 0);
  for (const auto& r : sl_rows) CHECK(r.stats.min >= 0);
}

TEST_CASE("idle gap hover: what one thread did during the gap, by self time") {
  // step 0..100 holds A 10..40 and B 50..60 on thread 1; thread 2 is busy too but not asked.
  auto s = load(trace({X("cpu_op", "step", 1, 1, "0", "100"), X("cpu_op", "A", 1, 1, "10", "30"),
                       X("cpu_op", "B", 1, 1, "50", "10"), X("cpu_op", "C", 1, 1, "130", "10"),
                       X("cpu_op", "other_thread", 1, 2, "0", "200")}));
  uint32_t track = sl::test::find_slice(*s, "step").track;
  std::vector<sl::views::RangeRow> rows = sl::views::aggregate_range(*s, usec(20), usec(80), track);
  std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.self > b.self; });
  REQUIRE(rows.size() == 3);
  CHECK(s->strings.view(rows[0].name) == "step");  // 60 - 20 (A) - 10 (B)
  CHECK(rows[0].self == usec(30));
  CHECK(s->strings.view(rows[1].name) == "A");
  CHECK(rows[1].self == usec(20));
  CHECK(rows[2].self == usec(10));
  // After the step the thread runs nothing until C: 10 µs traced of 40.
  std::vector<sl::views::RangeRow> late = sl::views::aggregate_range(*s, usec(90), usec(130), track);
  REQUIRE(late.size() == 1);
  CHECK(late[0].self == usec(10));
}

TEST_CASE("idle gap hover: the cause and the launching thread's top ops") {
  auto s = load(trace({X("cpu_op", "aten::decode_video", 1, 1, "1000", "150"), X("cpu_op", "aten::resize", 1, 1, "1150", "50"),
                       launch("cudaLaunchKernel", "1210", "2", 1), kernel("k", 7, "1220", "10", 1)}));
  IdleCauses c = idle_causes(table(*s, Mode::Sightline));
  std::vector<sl::views::IdleGapMark> marks = sl::views::idle_gap_marks(c);
  REQUIRE(marks.size() == 1);
  std::string text = sl::views::idle_gap_explanation(*s, marks[0]);
  CAPTURE(text);
  CHECK(text.find("host compute") != std::string::npos);  // neither op launched anything
  CHECK(text.find("fix: move this CPU work off the launching thread") != std::string::npos);
  CHECK(text.find("until the launch, 210 µs, on") != std::string::npos);  // W ends at the launch
  CHECK(text.find("(the launching thread)") != std::string::npos);
  // Ranked by time in W = [1000, 1210): decode 150 µs, resize 50; 10 µs untraced.
  size_t decode = text.find("aten::decode_video"), resize = text.find("aten::resize");
  REQUIRE(decode != std::string::npos);
  REQUIRE(resize != std::string::npos);
  CHECK(decode < resize);
  CHECK(text.find("(71%)") != std::string::npos);  // 150 of 210 µs
  CHECK(text.find("(no traced op)") != std::string::npos);
}

// On every Kineto trace of the corpus, Sightline mode: no negative duration in the idle and
// temporal tables, and each stream's temporal idle equals the sum of its idle causes (1 µs).
TEST_CASE("corpus: idle and temporal tables agree and are never negative (Sightline mode)") {
  if (!sl::test::have_shared()) return;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(sl::test::shared_dir() / "corpus")) {
    std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.ends_with(".json.gz")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  CHECK(files.size() > 40);
  for (const auto& path : files) {
    LoadResult r = load_trace(path.string());
    if (!r.ok()) continue;  // not a Kineto trace (the corpus test checks which ones load)
    CAPTURE(path.filename().string());
    EventTable t = table(*r.store, Mode::Sightline);
    TemporalBreakdown tb = temporal_breakdown(t);
    IdleCauses causes = idle_causes(t);
    std::vector<IdleBreakdownRow> idle = idle_breakdown(t);
    if (!tb.valid) continue;
    CHECK(tb.idle >= 0);
    CHECK(tb.compute >= 0);
    CHECK(tb.non_compute >= 0);
    for (const StreamTemporal& st : tb.streams) {
      CAPTURE(st.stream);
      CHECK(st.idle >= 0);
      CHECK(st.compute >= 0);
      CHECK(st.non_compute >= 0);
      CHECK(std::llabs(st.idle - idle_of_stream(causes, st.stream)) <= 1000);
    }
    for (const IdleGap& g : causes.gaps) CHECK(g.length() > 0);
    // A fleet map's gaps_only: the same gaps with the same causes, and nothing else.
    IdleCauseOptions only;
    only.gaps_only = true;
    IdleCauses gaps = idle_causes(t, only);
    REQUIRE(gaps.gaps.size() == causes.gaps.size());
    for (size_t k = 0; k < gaps.gaps.size(); ++k) {
      const IdleGap &a = gaps.gaps[k], &b = causes.gaps[k];
      CHECK((a.stream == b.stream && a.start == b.start && a.end == b.end && a.cause == b.cause &&
             a.host_end == b.host_end && a.host_track == b.host_track && a.next == b.next && a.edge == b.edge));
      CHECK(a.top_count == 0);
    }
    CHECK((gaps.rows.empty() && gaps.top_events.empty() && gaps.device.empty()));
    for (const IdleBreakdownRow& row : idle) {
      CHECK(row.idle >= 0);
      CHECK(row.stats.min >= 0);
    }
  }
}
