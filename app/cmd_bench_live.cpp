// `sightline bench live [--records N] [--repeat R]`: what one live-capture snapshot costs at N
// records (the GUI rebuilds its store from every record received; views/live_feed.h): the
// incremental copy of a batch, convert_records, build_store and the analyses, medians of R runs.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/commands.h"
#include "core/capture/capture_store.h"
#include "core/capture/live_server.h"
#include "core/capture/record_events.h"
#include "views/workspace.h"

namespace sl::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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

void register_bench_live(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("live", "Cost of one live-capture store snapshot (convert + build) at N records");
  struct Options {
    uint64_t records = 1'000'000;
    int repeat = 5;
    bool analyses = true;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--records", o->records, "Records in the capture")->check(CLI::Range(uint64_t(2), uint64_t(50'000'000)));
  cmd->add_option("--repeat", o->repeat, "Runs (medians are reported)")->check(CLI::Range(1, 100));
  cmd->add_flag("!--no-analyses", o->analyses, "Skip timing the analyses");
  cmd->callback([o] {
    capture::CaptureData data = synthetic(o->records);
    auto seconds = [](auto&& f) {
      auto t0 = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    std::vector<double> copy, convert, build, analyse;
    for (int r = 0; r < o->repeat; ++r) {
      // The worker's incremental copy of one 10 000-record batch under the server's lock.
      // (Capacity reserved: the worker's vector grows geometrically, so a reallocation is rare.)
      capture::CaptureData mirror;
      mirror.records.reserve(data.records.size());
      mirror.records.assign(data.records.begin(), data.records.end() - 10'000);
      copy.push_back(seconds([&] { mirror.records.insert(mirror.records.end(), data.records.end() - 10'000, data.records.end()); }));
      convert.push_back(seconds([&] { capture::convert_records(data); }));
      std::unique_ptr<TraceStore> store;
      build.push_back(seconds([&] { store = capture::build_store(data); }));
      if (o->analyses) {
        std::vector<views::IdleGapMark> gaps;
        analyse.push_back(seconds([&] { views::analyse_for_views(*store, gaps); }));
      }
    }
    double b = median(build);
    std::printf("records %llu (%llu kernels), %d runs, medians:\n", (unsigned long long)data.records.size(),
                (unsigned long long)data.records.size() / 2, o->repeat);
    std::printf("  copy of a 10k-record batch   %8.2f ms\n", median(copy) * 1e3);
    std::printf("  convert_records              %8.1f ms\n", median(convert) * 1e3);
    std::printf("  snapshot (convert + build)   %8.1f ms\n", b * 1e3);
    if (o->analyses) std::printf("  analyses (on demand)         %8.1f ms\n", median(analyse) * 1e3);
    std::printf("  throttle: a snapshot at most every %.0f ms\n", capture::RebuildThrottle{}.interval(b) * 1e3);
  });
}

}  // namespace sl::cli
