// View-models of the analysis views (headless): tables, latency binning and brushing, pattern
// occurrences, idle gap order, iteration splits and insight ranking, on real traces.
#include <doctest/doctest.h>

#include "core/analysis/job_overview.h"
#include "core/import/trace_loader.h"
#include "tests/unit/test_support.h"
#include "views/analysis_model.h"
#include "views/data_table.h"
#include "views/idle_view.h"
#include "views/insights_model.h"
#include "views/latency_model.h"
#include "views/pattern_model.h"

using namespace sl;
using namespace sl::views;

namespace {

std::unique_ptr<TraceStore> load_file(const std::string& path) {
  LoadResult r = load_trace(path);
  INFO(r.error.to_string());
  REQUIRE(r.ok());
  return std::move(r.store);
}

std::string sample() { return std::string(SIGHTLINE_ASSETS_DIR) + "/sample_bert_h100.json.gz"; }

}  // namespace

TEST_CASE("data table sorts filters and copies as CSV") {
  DataTable t;
  t.headers = {"name", "count"};
  t.add_row({DataTable::text("b, quoted \"x\""), DataTable::number("10", 10)});
  t.add_row({DataTable::text("a"), DataTable::number("2", 2)});
  t.add_row({DataTable::text("c"), DataTable::number("30", 30)});
  CHECK(t.order() == std::vector<uint32_t>{0, 1, 2});  // the analysis' order by default
  t.sort(1, true);
  CHECK(t.order() == std::vector<uint32_t>{1, 0, 2});  // numeric, not "10" < "2"
  t.sort(0, false);
  CHECK(t.order() == std::vector<uint32_t>{2, 0, 1});
  t.set_filter("C");
  CHECK(t.order() == std::vector<uint32_t>{2});
  CHECK(t.csv() == "rank,name,count\n3,c,30\n");
  t.set_filter("");
  t.sort(-1, true);
  CHECK(t.csv() == "rank,name,count\n1,\"b, quoted \"\"x\"\"\",10\n2,a,2\n3,c,30\n");
  t.set_filter("nothing matches");
  CHECK(t.csv() == "rank,name,count\n");
}

TEST_CASE("latency bins equal launch_stats histograms and brushing returns their kernels") {
  auto store = load_file(sl::test::test_data("hta_cp_simple_add_input.json.gz"));
  auto model = build_analysis_model(*store);
  REQUIRE(model->report.launches);
  const analysis::LaunchStats& s = *model->report.launches;
  REQUIRE(s.pairs.size() > 10);
  for (int q = 0; q < kLatencyQuantityCount; ++q) {
    LatencyBins b = bin_latency(model->table(), s, model->iteration_of_row, LatencyQuantity(q), {}, {});
    const analysis::Histogram* h = nullptr;
    for (const auto& x : s.histograms)
      if (x.quantity == latency_quantity_key(LatencyQuantity(q))) h = &x;
    REQUIRE(h);
    CHECK(b.edges == h->edges);
    REQUIRE(b.pairs.size() == h->pairs.size());
    for (size_t i = 0; i < b.pairs.size(); ++i) CHECK(b.pairs[i] == h->pairs[i]);
    CHECK(b.total == s.pairs.size());
    CHECK(b.short_kernels == s.short_kernels);
    CHECK(b.runtime_outliers == s.runtime_outliers);
    CHECK(b.launch_delay_outliers == s.launch_delay_outliers);
    CHECK(b.p50 <= b.p90);
    CHECK(b.p90 <= b.p99);
    // Brushing the middle third: exactly the pairs whose value falls in those bins.
    size_t first = b.pairs.size() / 3, last = 2 * b.pairs.size() / 3;
    auto brushed = brushed_pairs(b, first, last);
    size_t expected = 0;
    for (uint32_t i = 0; i < s.pairs.size(); ++i) {
      double v = double(latency_value(s.pairs[i], LatencyQuantity(q)));
      size_t bin = analysis::bin_of(b.edges, v);
      if (bin >= first && bin <= last) ++expected;
    }
    CHECK(brushed.size() == expected);
    auto [a, z] = bins_in_range(b, b.edges[first] * 1.0001, b.edges[last + 1] * 0.9999);
    CHECK(a == first);
    CHECK(z == last);
  }
  // Filters: one stream only, then a name nothing has.
  LatencyFilter f;
  f.stream = model->table().rows[s.pairs.front().activity].stream;
  LatencyBins one = bin_latency(model->table(), s, model->iteration_of_row, LatencyQuantity::LaunchDelay, f, {});
  uint64_t on_stream = 0;
  for (const auto& p : s.pairs) on_stream += model->table().rows[p.activity].stream == f.stream;
  CHECK(one.total == on_stream);
  f = {};
  f.name = "no kernel is called this";
  CHECK(bin_latency(model->table(), s, model->iteration_of_row, LatencyQuantity::LaunchDelay, f, {}).total == 0);
  // Cutoffs: a zero runtime cutoff makes every launch a runtime outlier.
  LatencyBins all = bin_latency(model->table(), s, model->iteration_of_row, LatencyQuantity::Runtime, {}, {0, 0});
  uint64_t positive = 0;
  for (const auto& p : s.pairs) positive += p.runtime > 0;
  CHECK(all.runtime_outliers == positive);
}

TEST_CASE("pattern occurrences match the counts of the analyses") {
  auto store = load_file(sample());
  auto model = build_analysis_model(*store);
  REQUIRE(model->report.fusion);
  REQUIRE(!model->report.fusion->empty());
  for (const auto& c : *model->report.fusion) {
    auto occ = fusion_occurrences(model->table(), c);
    CHECK(occ.size() == c.count);
    for (const auto& o : occ) {
      REQUIRE(o.kernels.size() == c.chain.size());
      for (size_t k = 0; k < o.kernels.size(); ++k) CHECK(store->name(o.kernels[k]) == c.chain[k]);
    }
  }
  REQUIRE(model->report.repeated);
  for (const auto& k : *model->report.repeated) CHECK(kernel_occurrences(model->table(), k.name).size() == k.count);
  REQUIRE(!model->launching_ops.empty());
  size_t checked = 0;
  for (size_t i = 0; i < model->launching_ops.size() && i < 40 && checked < 8; ++i) {
    const LaunchingOp& op = model->launching_ops[i];
    analysis::KernelSequenceOptions o;
    o.operator_name = op.name;
    for (const auto& seq : analysis::kernel_sequences(model->table(), o)) {
      auto occ = sequence_occurrences(model->table(), op.name, seq);
      CHECK(occ.size() == seq.count);
      for (const auto& x : occ) CHECK(store->name(x.anchor) == seq.op);
      ++checked;
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("idle gaps step longest first and iterations split their step time") {
  auto store = load_file(sample());
  auto model = build_analysis_model(*store);
  REQUIRE(model->report.causes);
  const auto& causes = *model->report.causes;
  REQUIRE(!causes.rows.empty());
  for (const auto& row : causes.rows) {
    auto gaps = gaps_longest_first(causes, row.stream, row.cause);
    CHECK(gaps.size() == row.count);
    for (size_t i = 1; i < gaps.size(); ++i) CHECK(causes.gaps[gaps[i - 1]].length() >= causes.gaps[gaps[i]].length());
    TimeNs sum = 0;
    for (uint32_t g : gaps) sum += causes.gaps[g].length();
    CHECK(sum == row.idle);
  }
  REQUIRE(!model->iterations.empty());
  for (const auto& it : model->iterations) {
    CHECK(it.compute + it.communication + it.memory + it.idle == it.end - it.start);
    CHECK(it.compute > 0);
    CHECK(it.idle > 0);  // the sample's GPU is mostly idle (launch-bound BERT inference)
  }
}

TEST_CASE("insights are ranked by cost and point into the trace") {
  auto store = load_file(sample());
  auto model = build_analysis_model(*store);
  auto found = find_insights(*model);
  REQUIRE(found.size() >= 2);
  for (size_t i = 1; i < found.size(); ++i) CHECK(found[i - 1].cost >= found[i].cost);
  bool fusion = false, launch_bound = false;
  for (const auto& in : found) {
    CHECK(in.cost > 0);
    CHECK(in.t1 >= in.t0);
    CHECK(in.t0 >= 0);
    CHECK(!in.detail.empty());
    fusion |= in.kind == "fusion";
    launch_bound |= in.kind == "launch_bound";
  }
  CHECK(fusion);
  CHECK(launch_bound);  // the sample is launch-bound BERT inference
  // A threshold of 1 ns names every idle gap in the detail lines (the umbrella's parts).
  InsightOptions o;
  o.starvation_gap = 1;
  bool named = false;
  for (const auto& in : find_insights(*model, o)) named |= in.detail.find("or more with no stream busy") != std::string::npos;
  CHECK(named);
}

TEST_CASE("insights: a job's Stragglers entry names the rank, costs its delay and points at its worst collective") {
  analysis::CollectiveAnalysis a;
  CHECK_FALSE(straggler_finding(a).has_value());  // nothing late: no entry
  auto instance = [&](int64_t last, TimeNs skew, TimeNs first_arrival) {
    analysis::CollectiveInstance in;
    in.name = "AllReduce", in.group = "default", in.instance = a.instances.size(), in.last_rank = last, in.skew = skew;
    for (int64_t r = 0; r < 3; ++r) {
      analysis::CollectiveArrival x;
      x.rank = r, x.arrival = first_arrival + (r == last ? skew : 0), x.end = first_arrival + skew + 1000;
      x.slice = SliceRef{uint32_t(r), uint32_t(a.instances.size())};
      in.arrivals.push_back(x);
    }
    a.instances.push_back(in);
  };
  instance(2, 3000, 10'000);
  instance(2, 9000, 50'000);  // rank 2's worst
  instance(1, 20'000, 90'000);  // larger, but rank 1's
  analysis::StragglerRow two, one;
  two.rank = 2, two.collectives = 3, two.late_count = 2, two.delay_caused = 2'400'000, two.top_cause = "data_loading";
  one.rank = 1, one.collectives = 3, one.late_count = 1, one.delay_caused = 2'000'000;
  a.stragglers = {two, one};
  auto f = straggler_finding(a);
  REQUIRE(f.has_value());
  CHECK(f->rank == 2);
  CHECK(f->instance == 1);
  CHECK(f->insight.kind == "stragglers");
  CHECK(f->insight.title == analysis::straggler_insight(a));
  CHECK(f->insight.title == "rank 2 made the others wait 2.4 ms over 2 all-reduces, mostly after data-loading stalls");
  CHECK(f->insight.cost == 2'400'000);
  CHECK(f->insight.t0 == 50'000);
  CHECK(f->insight.t1 == 60'000);
  CHECK(f->insight.ref == SliceRef{2, 1});
}
