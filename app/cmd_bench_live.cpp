// `sightline bench live [--records N] [--repeat R] [--format json]`: what a live viewer pays to
// show a 10k-record batch once N records are in its store (views/live_feed.h): the worker's
// conversion of the batch's records and the UI thread's append (append_visible_ms, their sum:
// from the batch's arrival to a store that shows it), then the views' rebuild over the grown
// store, the analyses on demand, and for comparison one full rebuild of the store; medians of
// R batches.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/analysis/common.h"
#include "app/commands.h"
#include "core/capture/capture_store.h"
#include "core/capture/record_events.h"
#include "core/text/json_writer.h"
#include "views/workspace.h"

namespace sl::cli {
namespace {

using analysis::median;

// A training-like capture: each kernel with its cudaLaunchKernel, on 4 streams, 10 names.
capture::CaptureData synthetic(uint64_t records) {
  capture::CaptureData d;
  d.info.pid = 1234;
  d.info.process_name = "bench";
  d.info.clock_base_ns = 1'000'000'000;
  d.devices.push_back({});
  static const char* names[] = {"gemm_a", "gemm_b", "relu", "layer_norm", "softmax", "attn", "add", "copy_k",
                                "reduce", "dropout"};
  d.records.reserve(records);
  for (uint64_t i = 0; d.records.size() + 2 <= records; ++i) {
    uint64_t t = d.info.clock_base_ns + i * 5'000;
    capture::ActivityRecord launch;
    launch.kind = capture::ActivityKind::Runtime;
    launch.name = "cudaLaunchKernel";
    launch.correlation = uint32_t(i + 1);
    launch.start = t, launch.end = t + 2'000;
    launch.pid = 1234, launch.tid = 1234, launch.cbid = 211;
    capture::ActivityRecord k;
    k.kind = capture::ActivityKind::Kernel;
    k.name = names[i % 10];
    k.correlation = uint32_t(i + 1);
    k.stream = 7 + uint32_t(i % 4);
    k.context = 1;
    k.start = t + 10'000, k.end = t + 14'000;
    d.records.push_back(std::move(launch));
    d.records.push_back(std::move(k));
  }
  return d;
}

}  // namespace

namespace {

constexpr size_t kBatch = 10'000;

double seconds_of(auto&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct LiveCosts {
  std::vector<double> convert, append, views;
  double grow_s = 0, analyses_s = 0, rebuild_s = 0;
  size_t store_bytes = 0;
};

// Grows a store batch by batch to N records as the live view does; times the last `repeat`.
LiveCosts measure(const capture::CaptureData& data, int repeat, bool analyses, bool rebuild) {
  LiveCosts costs;
  TraceStore store;
  capture::RecordConverter converter(data.info, data.devices);
  capture::CaptureAppender appender(store, data.info, data.devices);
  std::span<const capture::ActivityRecord> records(data.records);
  size_t timed_from = records.size() > kBatch * size_t(repeat) ? records.size() - kBatch * size_t(repeat) : 0;
  auto t0 = std::chrono::steady_clock::now();
  for (size_t at = 0; at < records.size(); at += kBatch) {
    auto batch = records.subspan(at, std::min(kBatch, records.size() - at));
    capture::ConvertedTrace events;
    double convert_s = seconds_of([&] { events = converter.convert(batch); });
    if (at == 0) converter.add_metadata(events);
    double append_s = seconds_of([&] { appender.append(events); });
    if (at < timed_from) continue;
    costs.convert.push_back(convert_s);
    costs.append.push_back(append_s);
    costs.views.push_back(seconds_of([&] { views::TimelineView view(store); }));
  }
  costs.grow_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  costs.store_bytes = store.store_bytes();
  if (analyses) costs.analyses_s = seconds_of([&] { views::build_analysis_model(store); });
  if (rebuild) costs.rebuild_s = seconds_of([&] { capture::build_store(data); });
  return costs;
}

}  // namespace

void register_bench_live(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("live", "Cost of showing a 10k-record live batch at N records (convert + append)");
  struct Options {
    uint64_t records = 1'000'000;
    int repeat = 5;
    bool analyses = true, rebuild = true;
    std::string format = "text";
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--records", o->records, "Records in the capture")->check(CLI::Range(uint64_t(2), uint64_t(50'000'000)));
  cmd->add_option("--repeat", o->repeat, "Batches timed (the last R; medians are reported)")->check(CLI::Range(1, 100));
  cmd->add_flag("!--no-analyses", o->analyses, "Skip timing the analyses");
  cmd->add_flag("!--no-rebuild", o->rebuild, "Skip timing a full rebuild of the store");
  cmd->add_option("--format", o->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([o] {
    capture::CaptureData data = synthetic(o->records);
    LiveCosts c = measure(data, o->repeat, o->analyses, o->rebuild);
    std::vector<double> visible;
    for (size_t i = 0; i < c.convert.size(); ++i) visible.push_back(c.convert[i] + c.append[i]);
    uint64_t records = data.records.size();
    if (o->format == "json") {
      JsonWriter j;
      j.begin_object().field("records", records).field("batch_records", uint64_t(kBatch)).field("batches_timed", uint64_t(visible.size()));
      j.field("append_visible_ms", median(visible) * 1e3).field("convert_ms", median(c.convert) * 1e3);
      j.field("append_ms", median(c.append) * 1e3).field("views_ms", median(c.views) * 1e3);
      j.field("grow_s", c.grow_s).field("store_bytes", uint64_t(c.store_bytes));
      if (o->analyses) j.field("analyses_ms", c.analyses_s * 1e3);
      if (o->rebuild) j.field("rebuild_ms", c.rebuild_s * 1e3);
      std::printf("%s\n", j.end_object().str().c_str());
      return;
    }
    std::printf("records %llu (%llu kernels), batches of %zu, the last %zu timed, medians:\n", (unsigned long long)records,
                (unsigned long long)records / 2, kBatch, visible.size());
    std::printf("  append_visible (convert + append)  %8.1f ms\n", median(visible) * 1e3);
    std::printf("    convert (worker)                 %8.1f ms\n", median(c.convert) * 1e3);
    std::printf("    append (UI thread)               %8.1f ms\n", median(c.append) * 1e3);
    std::printf("  views rebuilt over the store       %8.1f ms\n", median(c.views) * 1e3);
    std::printf("  grown batch by batch to N          %8.2f s (store %.0f MB)\n", c.grow_s, double(c.store_bytes) / 1e6);
    if (o->analyses) std::printf("  analyses (on demand)               %8.1f ms\n", c.analyses_s * 1e3);
    if (o->rebuild) std::printf("  full rebuild (the old way)         %8.1f ms\n", c.rebuild_s * 1e3);
  });
}

}  // namespace sl::cli
