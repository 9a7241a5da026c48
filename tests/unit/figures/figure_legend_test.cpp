// The timeline figure's legend: the CPU-op swatch is clearly distinct from the idle-cause tints
// (it once shared a light blue with "cross-stream wait").
#include <cmath>

#include <doctest/doctest.h>

#include "core/analysis/idle_time.h"
#include "core/present/palette.h"
#include "figures/timeline_figure.h"
#include "tests/unit/test_support.h"

using namespace sl;

namespace {

double distance(fig::Color a, present::Rgb b) {
  return std::sqrt(std::pow(a.r - b.r, 2) + std::pow(a.g - b.g, 2) + std::pow(a.b - b.b, 2));
}

// `c` at `alpha` over white, as the figure's idle tints read on paper.
present::Rgb over_white(present::Rgb c, int alpha) {
  auto ch = [&](int v) { return uint8_t((v * alpha + 255 * (255 - alpha) + 127) / 255); };
  return {ch(c.r), ch(c.g), ch(c.b)};
}

}  // namespace

TEST_CASE("figures: the CPU-op legend swatch differs from every idle cause and kernel type") {
  auto store = test::load_ok(R"([
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":50},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10,"dur":5,"args":{"stream":7}},
    {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":40,"dur":5,"args":{"stream":7}}])");
  analysis::EventTable table = analysis::build_table(*store, {});
  analysis::IdleCauses idle = analysis::idle_causes(table);
  fig::Style style = fig::make_style(fig::FigureTheme::Paper);
  fig::Scene scene;
  fig::TimelineFigureStats stats;
  std::string error;
  REQUIRE(fig::timeline_figure(*store, &idle, style, {}, scene, stats, error));
  const fig::Item* swatch = nullptr;
  for (size_t i = 1; i < scene.items.size(); ++i)
    if (scene.items[i].role == fig::Role::Legend && scene.items[i].text.starts_with("CPU op"))
      swatch = &scene.items[i - 1];
  REQUIRE(swatch);
  CHECK(swatch->kind == fig::Item::Rect);
  for (int c = 0; c < analysis::kIdleCauseCount; ++c) {
    CHECK(distance(swatch->fill, present::idle_cause_rgb(c)) > 60);
    CHECK(distance(swatch->fill, over_white(present::idle_cause_rgb(c), 95)) > 40);
  }
  for (int k = 0; k < 5; ++k) CHECK(distance(swatch->fill, present::kernel_kind_rgb(present::KernelKind(k))) > 60);
}
