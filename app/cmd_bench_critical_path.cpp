// `sightline bench critical-path TRACE [--annotation NAME] [--instance N] [--repeat N]`: how long
// the critical path of one annotation instance takes once the trace is loaded and its event table
// built (both timed separately, since a report builds the table once for every analysis).
// `--annotation ''` takes the whole trace as one instance.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/commands.h"
#include "core/analysis/critical_path.h"
#include "core/import/trace_loader.h"

namespace sl::cli {
namespace {

struct BenchCriticalPathArgs {
  std::string file;
  std::string mode = "sightline";
  std::string annotation = "ProfilerStep";
  bool annotation_given = false;  // --annotation was passed: no whole-trace stand-in when absent
  std::optional<int64_t> instance;
  int repeat = 9;
  std::string format = "text";
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void run_bench_critical_path(const BenchCriticalPathArgs& a) {
  auto t0 = std::chrono::steady_clock::now();
  LoadResult loaded = load_trace(a.file);
  if (!loaded.ok()) {
    std::fprintf(stderr, "sightline: %s\n", loaded.error.to_string().c_str());
    exit_code = 1;
    return;
  }
  const double load_s = seconds_since(t0);
  analysis::TableOptions to;
  to.mode = a.mode == "hta" ? analysis::Mode::Hta : analysis::Mode::Sightline;
  analysis::CriticalPathOptions o;
  o.annotation = a.annotation;
  o.annotation_explicit = a.annotation_given;
  o.instance = a.instance;
  std::vector<double> table_s, path_s;
  analysis::CriticalPath p;
  size_t rows = 0;
  for (int i = 0; i < a.repeat; ++i) {
    t0 = std::chrono::steady_clock::now();
    analysis::EventTable t = analysis::build_table(*loaded.store, to);
    table_s.push_back(seconds_since(t0));
    rows = t.rows.size();
    t0 = std::chrono::steady_clock::now();
    p = analysis::critical_path(t, o);
    path_s.push_back(seconds_since(t0));
  }
  if (!p.valid) {
    std::fprintf(stderr, "sightline: %s\n", p.note.c_str());
    exit_code = 1;
    return;
  }
  const double path_ms = median_of(path_s) * 1e3, table_ms = median_of(table_s) * 1e3;
  const double min_ms = *std::min_element(path_s.begin(), path_s.end()) * 1e3;
  if (a.format == "json") {
    std::printf("{\"mode\": \"%s\", \"annotation\": \"%s\", \"instance\": %lld, \"rows\": %zu, \"graph_nodes\": %llu, "
                "\"graph_edges\": %llu, \"path_edges\": %zu, \"length_us\": %.3f, \"load_ms\": %.1f, "
                "\"table_ms_median\": %.2f, \"critical_path_ms_median\": %.2f, \"critical_path_ms_min\": %.2f}\n",
                a.mode.c_str(), a.annotation.c_str(), (long long)p.instance, rows, (unsigned long long)p.graph_nodes,
                (unsigned long long)p.graph_edges, p.path.size(), double(p.length) / 1e3, load_s * 1e3, table_ms,
                path_ms, min_ms);
    return;
  }
  std::printf("trace                   %s (%s mode, %zu table rows)\n", a.file.c_str(), a.mode.c_str(), rows);
  std::printf("instance                '%s' #%lld: graph %llu nodes, %llu edges; path %zu edges, %.3f us\n",
              a.annotation.c_str(), (long long)p.instance, (unsigned long long)p.graph_nodes,
              (unsigned long long)p.graph_edges, p.path.size(), double(p.length) / 1e3);
  std::printf("load                    %.1f ms (once)\n", load_s * 1e3);
  std::printf("event table (median/%d)  %.2f ms\n", a.repeat, table_ms);
  std::printf("critical path (median/%d) %.2f ms (min %.2f ms)\n", a.repeat, path_ms, min_ms);
}

}  // namespace

void register_bench_critical_path(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("critical-path", "Time the critical path of one annotation instance (median of --repeat runs)");
  auto a = std::make_shared<BenchCriticalPathArgs>();
  cmd->add_option("trace", a->file, "Trace file")->required();
  cmd->add_option("--mode", a->mode, "sightline or hta")->check(CLI::IsMember({"sightline", "hta"}));
  auto* annotation = cmd->add_option("--annotation", a->annotation,
                                     "Annotation (default ProfilerStep, else the whole trace); '' = the whole trace as one instance");
  cmd->add_option("--instance", a->instance, "Instance of the annotation (default: the first)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--repeat", a->repeat, "Runs (the median is reported)")->check(CLI::Range(1, 1000));
  cmd->add_option("--format", a->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([a, annotation] {
    a->annotation_given = annotation->count() > 0;
    run_bench_critical_path(*a);
  });
}

}  // namespace sl::cli
