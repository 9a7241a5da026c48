// The diff figure and the depth limit: change categories shared with the GUI, keys, path
// fitting, the depth cut counted in a timeline, and a diff figure of a hand-made pair.
#include <doctest/doctest.h>

#include <algorithm>

#include "core/diff/trace_diff.h"
#include "core/present/diff_palette.h"
#include "figures/cairo_output.h"
#include "figures/diff_figure.h"
#include "figures/legend.h"
#include "tests/unit/analysis/analysis_test_util.h"

using namespace sl;
using namespace sl::analysis::test;

namespace {

std::string op(const std::string& name, const std::string& ts, const std::string& dur) { return X("cpu_op", name, 1, 1, ts, dur); }
std::string step(int n, const std::string& ts, const std::string& dur) {
  return X("user_annotation", "ProfilerStep#" + std::to_string(n), 1, 1, ts, dur);
}

// step { forward { linear{launch→gemm} relu } }: `linear` lasts `linear_us`, relu 20 µs.
std::string run(const std::string& linear_us, const std::string& gemm_us) {
  return trace({step(1, "100", "300"), op("forward", "105", "250"), op("aten::linear", "110", linear_us),
                launch("cudaLaunchKernel", "120", "5", 1), op("aten::relu", "300", "20"),
                kernel("gemm", 7, "130", gemm_us, 1)});
}

std::vector<std::string> texts(const fig::Scene& scene, fig::Role role) {
  std::vector<std::string> out;
  for (const fig::Item& i : scene.items)
    if (i.kind == fig::Item::Text && i.role == role) out.push_back(i.text);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

TEST_CASE("diff colours: categories and thresholds shared by the diff tab and the figure") {
  using present::Change;
  CHECK(present::change_of(100, 104) == Change::Same);
  CHECK(present::change_of(100, 96) == Change::Same);
  CHECK(present::change_of(100, 95) == Change::Faster);  // -5% is already a change
  CHECK(present::change_of(100, 110) == Change::Slower);
  CHECK(present::change_of(100, 124) == Change::Slower);
  CHECK(present::change_of(100, 125) == Change::MuchSlower);
  CHECK(present::change_of(0, 10) == Change::MuchSlower);  // from nothing: no division by zero
  CHECK(present::change_rgb(100, 101) == present::change_swatch(Change::Same));
  CHECK(present::change_rgb(100, 40) == present::Rgb{0, 114, 178});  // a big speed-up is full Okabe–Ito blue
  CHECK(present::change_rgb(100, 300) == present::Rgb{213, 94, 0});  // much slower saturates at vermillion
  for (int x = 0; x < present::kChangeCount; ++x)
    for (int y = x + 1; y < present::kChangeCount; ++y) CHECK(present::change_swatch(Change(x)) != present::change_swatch(Change(y)));
}

TEST_CASE("figures: one key table per figure and call paths cut from the left") {
  fig::KeyTable keys(2);
  CHECK(keys.key("a very long operator name") == "K1");
  CHECK(keys.key("another one") == "K2");
  CHECK(keys.key("a very long operator name") == "K1");  // the same text keeps its key
  CHECK(keys.key("a third") == "");                      // full
  CHECK(keys.entries().size() == 2);

  std::string path = "ProfilerStep#1 > forward > encoder > aten::linear > aten::addmm";
  float size = 10;
  CHECK(fig::fit_path(path, 1000, size) == path);
  std::string cut = fig::fit_path(path, fig::text_width("… > aten::linear > aten::addmm", size) + 1, size);
  CHECK(cut == "… > aten::linear > aten::addmm");
  CHECK(fig::signed_ms(1'234'567) == "+1.235 ms");
  CHECK(fig::signed_ms(-50'000) == "−0.050 ms");
}

TEST_CASE("figures: the depth limit cuts CPU stacks and counts what it cuts") {
  // Thread 1: step > forward > linear > (launch), and a second top-level op; the kernel on stream 7 stays.
  auto store = load(run("100", "50"));
  fig::Style style = fig::make_style(fig::FigureTheme::Paper);
  fig::TimelineFigureOptions options;
  fig::Scene full, cut;
  fig::TimelineFigureStats full_stats, cut_stats;
  std::string error;
  REQUIRE(fig::timeline_figure(*store, nullptr, style, options, full, full_stats, error));
  options.max_depth = 0;
  REQUIRE(fig::timeline_figure(*store, nullptr, style, options, cut, cut_stats, error));
  CHECK(full_stats.depth_cut == 0);
  CHECK(cut_stats.depth_cut == 4);  // forward, linear, launch, relu
  CHECK(cut_stats.slices + cut_stats.folded == 2);  // the step and the kernel
  CHECK(full_stats.slices + full_stats.folded == cut_stats.slices + cut_stats.folded + cut_stats.depth_cut);
  CHECK(has(texts(cut, fig::Role::Label), "stacks cut below depth 0: 4 slices not drawn"));
  for (const std::string& t : texts(full, fig::Role::Label)) CHECK(t.find("stacks cut") == std::string::npos);
}

TEST_CASE("figures: diff figure of a hand-made pair") {
  auto a = load(run("100", "50"));
  auto b = load(run("180", "90"));  // linear 80% slower, its kernel too
  diff::TraceDiff d = diff::trace_diff(*a, *b, {});
  REQUIRE(d.aligned);
  fig::Style style = fig::make_style(fig::FigureTheme::Paper);
  fig::DiffFigureOptions options;
  options.name_a = "before", options.name_b = "after";
  options.max_depth = -1;
  fig::Scene scene;
  fig::DiffFigureStats stats;
  std::string error;
  REQUIRE(fig::diff_figure(*a, *b, d, style, options, scene, stats, error));
  auto labels = texts(scene, fig::Role::Label);
  CHECK(texts(scene, fig::Role::Title) == std::vector<std::string>{"before vs after"});
  CHECK(has(labels, "A (control) · before"));
  CHECK(has(labels, "B (test) · after"));
  auto legend = texts(scene, fig::Role::Legend);
  for (int c = 0; c < present::kChangeCount; ++c) CHECK(has(legend, present::change_label(present::Change(c))));
  // Inclusive-time changes: linear +80 µs; forward keeps its 250 µs (its child grew inside it),
  // the step is the headline, not a bar.
  REQUIRE(stats.bars == 1);
  CHECK(has(labels, "aten::linear"));
  CHECK(has(labels, fig::signed_ms(80'000)));
  // The kernel under the slower linear takes its "much slower" tint in B's band.
  present::Rgb much = present::change_rgb(100'000, 180'000);
  size_t tinted = 0;
  for (const fig::Item& i : scene.items)
    if (i.role == fig::Role::Slice && i.fill == fig::Color::of(much)) ++tinted;
  CHECK(tinted == 4);  // linear and gemm, in A and in B
  for (const fig::Item& i : scene.items)  // readable at one printed column, like every paper figure
    if (i.kind == fig::Item::Text) CHECK(i.size * fig::kColumnPoints / style.width >= fig::kMinPrintedPt);
  CHECK(stats.a.tracks == 2);  // thread 1 and stream 7
  CHECK(stats.b.tracks == 2);

  options.max_depth = 1;
  fig::Scene limited;
  REQUIRE(fig::diff_figure(*a, *b, d, style, options, limited, stats, error));
  CHECK(stats.a.depth_cut == 3);  // linear, its launch, relu
  CHECK(has(texts(limited, fig::Role::Label), "stacks cut below depth 1: 6 slices not drawn (both runs)"));
}

TEST_CASE("figures: diff bars rank by inclusive change, so a regression spread under one op leads") {
  // `spread` holds five children that each grow by 5 µs (+25 µs in all, +0 own time);
  // `single` grows its own time by 10 µs. Ranked by own time, `single` would lead.
  auto make = [](int child_us, int single_us) {
    std::vector<std::string> ev{step(1, "100", "400"), op("spread", "110", std::to_string(5 * child_us + 10))};
    for (int i = 0; i < 5; ++i) ev.push_back(op("child", std::to_string(115 + i * child_us), std::to_string(child_us)));
    ev.push_back(op("single", "300", std::to_string(single_us)));
    return trace(ev);
  };
  auto a = load(make(10, 30));
  auto b = load(make(15, 40));
  diff::TraceDiff d = diff::trace_diff(*a, *b, {});
  REQUIRE(d.aligned);
  fig::Style style = fig::make_style(fig::FigureTheme::Paper);
  fig::DiffFigureOptions options;
  fig::Scene scene;
  fig::DiffFigureStats stats;
  std::string error;
  REQUIRE(fig::diff_figure(*a, *b, d, style, options, scene, stats, error));
  auto labels = texts(scene, fig::Role::Label);
  auto spread = std::find(labels.begin(), labels.end(), "spread"), single = std::find(labels.begin(), labels.end(), "single");
  REQUIRE(spread != labels.end());
  REQUIRE(single != labels.end());
  CHECK(spread < single);  // drawn first: the largest increase
  CHECK(has(labels, fig::signed_ms(25'000)));
  CHECK(has(labels, fig::signed_ms(10'000)));
}

TEST_CASE("figures: diff figure needs the aligned diff") {
  auto a = load(run("100", "50"));
  diff::DiffOptions o;
  o.mode = analysis::Mode::Hta;
  diff::TraceDiff d = diff::trace_diff(*a, *a, o);
  fig::Scene scene;
  fig::DiffFigureStats stats;
  std::string error;
  CHECK_FALSE(fig::diff_figure(*a, *a, d, fig::make_style(fig::FigureTheme::Paper), {}, scene, stats, error));
  CHECK(error.find("Sightline mode") != std::string::npos);
}
