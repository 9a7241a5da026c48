// The GUI's figure export without a window: the timeline's visible rows (pins, hidden rows,
// collapsed processes), the exported range, and export_figure's results and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "core/import/trace_loader.h"
#include "figures/cairo_output.h"
#include "tests/unit/test_support.h"
#include "views/analysis_model.h"
#include "views/figure_export.h"
#include "views/timeline_view.h"

namespace {

namespace fs = std::filesystem;
using sl::views::ExportWhat;

// GPU stream 7 (pinned on top by default), two CPU threads (tid 1 is pid 1's "main thread"), and a process holding only an instant
// (collapsed by default).
const char* kRows = R"JSON({"traceEvents":[
 {"ph":"M","name":"process_name","pid":0,"args":{"name":"python"}},
 {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","name":"aten::add","cat":"cpu_op","pid":1,"tid":2,"ts":5,"dur":50},
 {"ph":"X","name":"void gemm_kernel<float, 128>(float const*, float*)","cat":"kernel","pid":0,"tid":7,"ts":10,"dur":40},
 {"ph":"i","name":"marker","s":"t","pid":3,"tid":3,"ts":20}]})JSON";

uint32_t track_named(const sl::TraceStore& store, const std::string& label) {
  for (uint32_t t = 0; t < store.tracks.size(); ++t)
    if (sl::fig::track_label(store, t) == label) return t;
  FAIL("no track " << label);
  return sl::kNone;
}

fs::path temp_file(const char* name) { return fs::temp_directory_path() / (std::string("sl_export_") + name); }

}  // namespace

TEST_CASE("export: visible rows follow pins and hidden rows and skip collapsed processes") {
  auto store = sl::test::load_ok(kRows);
  sl::views::TimelineView tl(*store);
  uint32_t gpu = track_named(*store, "stream 7"), t1 = track_named(*store, "main thread"), t2 = track_named(*store, "thread 2");
  // Pinned GPU stream first, then the CPU threads in process order; the instant-only process is collapsed.
  CHECK(tl.visible_tracks() == std::vector<uint32_t>{gpu, t1, t2});
  tl.set_hidden(t1, true);
  CHECK(tl.visible_tracks() == std::vector<uint32_t>{gpu, t2});
  tl.set_pinned(gpu, false);
  tl.set_pinned(t2, true);
  std::vector<uint32_t> rows = tl.visible_tracks();
  REQUIRE(rows.size() == 2);
  CHECK(rows.front() == t2);
  CHECK(rows.back() == gpu);
  auto order = tl.display_order();
  CHECK(order.front().kind == sl::views::DisplayRow::PinnedHeader);
}

TEST_CASE("export: the figure draws the listed rows in their order") {
  auto store = sl::test::load_ok(kRows);
  uint32_t gpu = track_named(*store, "stream 7"), t2 = track_named(*store, "thread 2");
  sl::fig::Style style = sl::fig::make_style(sl::fig::FigureTheme::Paper, 640);
  sl::fig::TimelineFigureOptions o;
  o.rows = {t2, gpu};
  sl::fig::Scene scene;
  sl::fig::TimelineFigureStats stats;
  std::string error;
  REQUIRE(sl::fig::timeline_figure(*store, nullptr, style, o, scene, stats, error));
  CHECK(stats.tracks == 2);
  CHECK(stats.slices == 2);  // aten::add and the kernel; aten::mm's thread is not listed
  std::vector<std::string> labels;
  for (const sl::fig::Item& i : scene.items)
    if (i.kind == sl::fig::Item::Text && (i.text == "thread 2" || i.text == "stream 7")) labels.push_back(i.text);
  CHECK(labels == std::vector<std::string>{"thread 2", "stream 7"});
  o.rows = {999};
  CHECK_FALSE(sl::fig::timeline_figure(*store, nullptr, style, o, scene, stats, error));
  CHECK(error.find("999") != std::string::npos);
}

TEST_CASE("export: the visible range is clipped to the trace") {
  using R = std::pair<sl::TimeNs, sl::TimeNs>;
  CHECK(sl::views::visible_trace_range(-10, 500, 300) == R{0, 300});
  CHECK(sl::views::visible_trace_range(10.4, 20.6, 300) == R{10, 21});
  CHECK(sl::views::visible_trace_range(400, 500, 300) == R{0, 0});
  CHECK(sl::fig::trace_title("/a/b/run_1.json.gz") == "run_1");
  CHECK(sl::fig::trace_title("trace.json") == "trace");
  CHECK(sl::views::default_figure_path(sl::test::test_data("x.json.gz")).ends_with("sightline-figure.svg"));
  CHECK(fs::path(sl::views::default_figure_path("")).parent_path() == fs::current_path());
  ExportWhat what{};
  for (int i = 0; i < sl::views::kExportWhatCount; ++i) {
    REQUIRE(sl::views::parse_export_what(sl::views::export_what_name(ExportWhat(i)), what));
    CHECK(int(what) == i);
  }
  CHECK_FALSE(sl::views::parse_export_what("everything", what));
}

TEST_CASE("export: screen, selection and analysis figures and their errors") {
  auto store = sl::test::load_ok(kRows);
  auto model = sl::views::build_analysis_model(*store);
  sl::views::TimelineView tl(*store);
  sl::views::ExportSources src{*store, model.get(), tl, true};
  sl::views::ExportRequest q;
  q.path = temp_file("screen.svg").string();
  tl.zoom_to(0, 60'000);  // 0–60 µs: the kernel and aten::add whole, aten::mm cut
  sl::views::ExportResult r = sl::views::export_figure(src, q);
  REQUIRE_MESSAGE(r.ok, r.error);
  CHECK(r.start == 0);
  CHECK(r.end == 60'000);
  CHECK(r.rows == tl.visible_tracks());
  CHECK(r.timeline.slices == 3);
  CHECK(r.elements > 10);
  CHECK(fs::file_size(q.path) > 1000);
  CHECK(r.summary().starts_with("wrote " + q.path + ": "));

  tl.set_hidden(track_named(*store, "main thread"), true);
  r = sl::views::export_figure(src, q);
  REQUIRE(r.ok);
  CHECK(r.timeline.slices == 2);

  q.what = ExportWhat::Selection;
  r = sl::views::export_figure(src, q);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("no range is selected") != std::string::npos);
  tl.set_range(20'000, 30'000);
  r = sl::views::export_figure(src, q);
  REQUIRE(r.ok);
  CHECK(r.start == 20'000);
  CHECK(r.end == 30'000);

  q.what = ExportWhat::Latency;  // this trace has no launches: an error, not an empty chart
  q.path = temp_file("latency.png").string();
  r = sl::views::export_figure(src, q);
  CHECK_FALSE(r.ok);
  CHECK_FALSE(r.error.empty());

  q.what = ExportWhat::Diff;
  CHECK_FALSE(sl::views::export_figure(src, q).ok);
  q.what = ExportWhat::Screen;
  q.path = temp_file("figure.txt").string();
  r = sl::views::export_figure(src, q);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find(".svg, .pdf or .png") != std::string::npos);
  q.path = "/nonexistent-dir/figure.svg";
  r = sl::views::export_figure(src, q);
  CHECK_FALSE(r.ok);
  CHECK(r.error.find("cannot write") != std::string::npos);
  fs::remove(temp_file("screen.svg"));
}

TEST_CASE("export: analysis views of the sample trace from its analysis model") {
  sl::LoadResult loaded = sl::load_trace(std::string(SIGHTLINE_ASSETS_DIR) + "/sample_bert_h100.json.gz");
  REQUIRE(loaded.ok());
  auto model = sl::views::build_analysis_model(*loaded.store);
  sl::views::TimelineView tl(*loaded.store);
  sl::views::ExportSources src{*loaded.store, model.get(), tl, true};
  for (ExportWhat what : {ExportWhat::Latency, ExportWhat::Breakdown, ExportWhat::Idle, ExportWhat::CriticalPath}) {
    sl::views::ExportRequest q;
    q.what = what;
    q.path = temp_file("view.png").string();
    q.width = 400, q.scale = 2;
    sl::views::ExportResult r = sl::views::export_figure(src, q);
    INFO(sl::views::export_what_name(what));
    REQUIRE_MESSAGE(r.ok, r.error);
    CHECK(r.width == 400);
    CHECK(r.elements > 10);
    CHECK(r.rows.empty());
  }
  // The screen's initial view: the data framed (the last slice ends at 4.97 ms, the trace's
  // "Record Window End" marker at 8.39 ms is left out), clipped to the trace.
  sl::views::ExportRequest q;
  q.path = temp_file("view.svg").string();
  sl::views::ExportResult r = sl::views::export_figure(src, q);
  REQUIRE(r.ok);
  CHECK(r.start == 0);
  CHECK(r.end == sl::TimeNs(std::ceil(src.timeline.view_end())));
  CHECK(r.end < loaded.store->end_ns);
  CHECK(double(r.end) <= 1.05 * double(src.timeline.data_range().second));
  CHECK(r.timeline.gaps > 0);  // the idle overlay is on
  src.idle_overlay = false;
  CHECK(sl::views::export_figure(src, q).timeline.gaps == 0);
  fs::remove(temp_file("view.png"));
  fs::remove(temp_file("view.svg"));
}
