// The launch-latency histogram (GUI model and figure): the axis starts near the data, zeros are
// counted in the first bar, and the quantile labels never overlap.
#include <doctest/doctest.h>

#include "core/analysis/launch_stats.h"
#include "figures/cairo_output.h"
#include "figures/charts.h"
#include "figures/style.h"
#include "tests/unit/analysis/analysis_test_util.h"
#include "views/latency_model.h"

using namespace sl;
using namespace sl::analysis::test;

namespace {

// Launch i ends at 100 + 40 i + 2 µs; its kernel starts `delay_us[i]` later (0 = no queue time).
std::string launches(const std::vector<int>& delay_us) {
  std::vector<std::string> ev;
  for (size_t i = 0; i < delay_us.size(); ++i) {
    int ts = 100 + 40 * int(i);
    ev.push_back(launch("cudaLaunchKernel", std::to_string(ts), "2", int(i) + 1));
    ev.push_back(kernel("k", 7, std::to_string(ts + 2 + delay_us[i]), "1", int(i) + 1));
  }
  return trace(ev);
}

}  // namespace

TEST_CASE("latency histogram: the axis starts at the smallest non-zero value, zeros in the first bar") {
  auto s = load(launches({0, 0, 0, 10, 12, 30}));
  analysis::EventTable t = table(*s, analysis::Mode::Sightline);
  analysis::LaunchStats stats = analysis::launch_stats(t);
  REQUIRE(stats.pairs.size() == 6);
  const analysis::Histogram* h = nullptr;
  for (const auto& x : stats.histograms)
    if (x.quantity == "launch_delay") h = &x;
  REQUIRE(h);
  CHECK(h->edges.front() == doctest::Approx(10'000));  // not 1 ns: four empty decades gone
  CHECK(h->edges.back() == doctest::Approx(30'000));
  CHECK(h->pairs.front().size() == 4);  // the three zeros and the 10 µs launch
  std::vector<int64_t> no_iterations(t.rows.size(), -1);
  views::LatencyBins b = views::bin_latency(t, stats, no_iterations, views::LatencyQuantity::LaunchDelay, {}, {});
  CHECK(b.edges == h->edges);
  CHECK(b.zeros == 3);
  CHECK(b.p50 == doctest::Approx(5'000));

  auto all_zero = load(launches({0, 0}));
  analysis::EventTable tz = table(*all_zero, analysis::Mode::Sightline);
  analysis::LaunchStats sz = analysis::launch_stats(tz);
  for (const auto& x : sz.histograms)
    if (x.quantity == "launch_delay") CHECK(x.pairs.front().size() == 2);
}

TEST_CASE("latency histogram figure: launch delay, median/p90/p99 labels do not overlap") {
  // Quantiles close together: 20 launches at 10-12 µs and one at 30 µs.
  std::vector<int> delays;
  for (int i = 0; i < 20; ++i) delays.push_back(10 + i % 3);
  delays.push_back(30);
  auto s = load(launches(delays));
  analysis::LaunchStats stats = analysis::launch_stats(table(*s, analysis::Mode::Sightline));
  fig::Style style = fig::make_style(fig::FigureTheme::Paper);
  fig::Scene scene;
  std::string error;
  REQUIRE(fig::histogram_figure(stats, style, "t", scene, error));
  std::vector<const fig::Item*> labels;
  bool axis_says_delay = false;
  for (const fig::Item& i : scene.items) {
    if (i.kind != fig::Item::Text) continue;
    if (i.text.starts_with("median ") || i.text.starts_with("p90 ") || i.text.starts_with("p99 ")) labels.push_back(&i);
    axis_says_delay |= i.text.starts_with("launch delay: launch call end");
  }
  CHECK(axis_says_delay);
  REQUIRE(labels.size() == 3);
  for (size_t i = 0; i < labels.size(); ++i)
    for (size_t j = i + 1; j < labels.size(); ++j) {
      const fig::Item &a = *labels[i], &b = *labels[j];
      bool apart_x = a.x + fig::text_width(a.text, a.size) <= b.x || b.x + fig::text_width(b.text, b.size) <= a.x;
      bool apart_y = std::abs(a.y - b.y) >= a.size;
      CHECK_MESSAGE((apart_x || apart_y), a.text << " overlaps " << b.text);
    }
}
