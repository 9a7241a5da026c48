// Figure layouts: readable text at one column, the element budget, row filters, colours.
#include <doctest/doctest.h>

#include "core/analysis/common.h"
#include "core/analysis/idle_time.h"
#include "core/import/trace_loader.h"
#include "figures/cairo_output.h"
#include "figures/timeline_figure.h"
#include "tests/unit/test_support.h"

namespace {

const char* kTwoKernels = R"JSON({"traceEvents":[
 {"ph":"M","name":"process_name","pid":0,"args":{"name":"python"}},
 {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":100},
 {"ph":"X","name":"void gemm_kernel<float, 128>(float const*, float*)","cat":"kernel","pid":0,"tid":7,"ts":10,"dur":40},
 {"ph":"X","name":"Memcpy HtoD (Pageable -> Device)","cat":"gpu_memcpy","pid":0,"tid":7,"ts":60,"dur":30}]})JSON";

std::unique_ptr<sl::TraceStore> sample() {
  sl::LoadResult r = sl::load_trace(std::string(SIGHTLINE_ASSETS_DIR) + "/sample_bert_h100.json.gz");
  REQUIRE(r.ok());
  return std::move(r.store);
}

}  // namespace

TEST_CASE("figures: paper text stays at least 6 pt at one column") {
  auto store = sample();
  for (float width : {300.f, 640.f, 1600.f}) {
    sl::fig::Style style = sl::fig::make_style(sl::fig::FigureTheme::Paper, width);
    sl::fig::Scene scene;
    sl::fig::TimelineFigureStats stats;
    std::string error;
    REQUIRE(sl::fig::timeline_figure(*store, nullptr, style, {}, scene, stats, error));
    size_t texts = 0;
    for (const sl::fig::Item& i : scene.items)
      if (i.kind == sl::fig::Item::Text) {
        ++texts;
        CHECK(i.size * sl::fig::kColumnPoints / width >= sl::fig::kMinPrintedPt);
      }
    CHECK(texts > 10);
    CHECK(scene.width == width);
  }
}

TEST_CASE("figures: the element budget widens the folding and is never exceeded") {
  auto store = sample();
  sl::fig::Style style = sl::fig::make_style(sl::fig::FigureTheme::Light, 1200);
  sl::fig::Scene full, tight;
  sl::fig::TimelineFigureStats full_stats, tight_stats;
  std::string error;
  REQUIRE(sl::fig::timeline_figure(*store, nullptr, style, {}, full, full_stats, error));
  CHECK(full_stats.fold_px == sl::fig::kFoldPx);
  sl::fig::TimelineFigureOptions options;
  options.max_elements = 400;
  REQUIRE(sl::fig::timeline_figure(*store, nullptr, style, options, tight, tight_stats, error));
  CHECK(tight.items.size() < full.items.size());
  CHECK(tight.items.size() <= 400 + 80);  // legend and key table come after the rows
  CHECK((tight_stats.fold_px > sl::fig::kFoldPx || tight_stats.truncated));
}

TEST_CASE("figures: rows by label and kernel colours by type") {
  auto store = sl::test::load_ok(kTwoKernels);
  sl::analysis::EventTable table = sl::analysis::build_table(*store, {});
  sl::analysis::IdleCauses idle = sl::analysis::idle_causes(table);
  sl::fig::Style style = sl::fig::make_style(sl::fig::FigureTheme::Paper);
  sl::fig::Scene scene;
  sl::fig::TimelineFigureStats stats;
  std::string error;
  sl::fig::TimelineFigureOptions options;
  options.tracks = "stream 7";
  REQUIRE(sl::fig::timeline_figure(*store, &idle, style, options, scene, stats, error));
  CHECK(stats.tracks == 1);
  CHECK(stats.slices == 2);
  CHECK(stats.gaps == 3);  // before the kernel (the trace starts at 0), before the copy, after it (until 100)
  std::vector<sl::fig::Color> fills;
  for (const sl::fig::Item& i : scene.items)
    if (i.role == sl::fig::Role::Slice) fills.push_back(i.fill);
  REQUIRE(fills.size() == 2);
  CHECK(fills[0] == sl::fig::Color::of(sl::present::kernel_kind_rgb(sl::present::KernelKind::Computation)));
  CHECK(fills[1] == sl::fig::Color::of(sl::present::kernel_kind_rgb(sl::present::KernelKind::Memory)));

  options.tracks = "no such row";
  CHECK_FALSE(sl::fig::timeline_figure(*store, &idle, style, options, scene, stats, error));
  CHECK(error.find("no such row") != std::string::npos);
  options.tracks = "^stream [0-9]+$";  // a regex
  scene = {};
  CHECK(sl::fig::timeline_figure(*store, &idle, style, options, scene, stats, error));
  CHECK(stats.tracks == 1);
}

TEST_CASE("figures: fit_text shortens with an ellipsis") {
  std::string name = "a_rather_long_kernel_name_for_a_small_box";
  float full = sl::fig::text_width(name, 12);
  CHECK(full > 100);
  std::string fitted = sl::fig::fit_text(name, full / 2, 12);
  CHECK(fitted.ends_with("…"));
  CHECK(sl::fig::text_width(fitted, 12) <= full / 2);
  CHECK(sl::fig::fit_text(name, full + 1, 12) == name);
  CHECK(sl::fig::fit_text(name, 2, 12).empty());
}

TEST_CASE("figures: wrap_text uses the lanes below a long track label") {
  using sl::fig::text_width;
  using sl::fig::wrap_text;
  float word = text_width("Python", 12);
  CHECK(wrap_text("Python main thread", 1000, 12, 3) == std::vector<std::string>{"Python main thread"});
  // Room for one or two words a line: broken at spaces, never mid-word.
  auto lines = wrap_text("Python main thread", text_width("Python main", 12) + 1, 12, 3);
  CHECK(lines == std::vector<std::string>{"Python main", "thread"});
  // One lane: cut as fit_text would.
  CHECK(wrap_text("Python main thread", word * 1.5f, 12, 1) == std::vector<std::string>{sl::fig::fit_text("Python main thread", word * 1.5f, 12)});
  // Too few lines for all words: the last line is cut with an ellipsis.
  lines = wrap_text("thread 3113936 of process python3", text_width("thread 3113936", 12) + 1, 12, 2);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "thread 3113936");
  CHECK(lines[1].ends_with("…"));
  for (const auto& l : lines) CHECK(text_width(l, 12) <= text_width("thread 3113936", 12) + 1);
}

TEST_CASE("figures: colours by name are stable") {
  CHECK(sl::present::key_rgb("aten::mm", false) == sl::present::key_rgb("aten::mm", false));
  CHECK_FALSE(sl::present::key_rgb("aten::mm", false) == sl::present::key_rgb("aten::add", false));
}
