// `sightline diff CONTROL TEST`: compare two runs (cli.md, analyses.md §9), and
// `sightline bench diff A B`: how long loading both and diffing takes.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <thread>

#include "core/analysis/common.h"
#include "app/commands.h"
#include "app/job_open.h"
#include "core/diff/trace_diff.h"
#include "core/import/trace_loader.h"

namespace sl::cli {
namespace {

struct DiffArgs {
  std::string control, test;
  std::optional<int64_t> rank_a, rank_b, iteration_a, iteration_b;
  std::string device = "all";
  bool short_names = false;
  std::string mode = "sightline";
  std::string format = "text";
  std::string table;
  bool wide = false;  // --wide: names whole in text tables
};

// Both traces load at once: the two loads are independent and each is mostly single-threaded.
// `use_cache` false: the benchmark times the loads themselves.
bool load_both(const std::string& a, const std::string& b, CliTrace& ta, CliTrace& tb, bool use_cache) {
  std::thread other([&] { open_cached(b, tb, use_cache); });
  open_cached(a, ta, use_cache);
  other.join();
  const LoadResult &ra = ta.loaded, &rb = tb.loaded;
  for (const LoadResult* r : {&ra, &rb})
    if (!r->ok()) {
      std::fprintf(stderr, "sightline: %s\n", r->error.to_string().c_str());
      return false;
    }
  for (const LoadResult* r : {&ra, &rb})
    if (!r->warning.empty()) std::fprintf(stderr, "sightline: warning: %s\n", r->warning.c_str());
  return true;
}

diff::DiffOptions make_options(const DiffArgs& a) {
  diff::DiffOptions o;
  o.mode = a.mode == "hta" ? analysis::Mode::Hta : analysis::Mode::Sightline;
  o.rank_a = a.rank_a;
  o.rank_b = a.rank_b;
  o.iteration_a = a.iteration_a;
  o.iteration_b = a.iteration_b;
  o.device = a.device == "cpu" ? diff::Device::Cpu : a.device == "gpu" ? diff::Device::Gpu : diff::Device::All;
  o.short_names = a.short_names;
  return o;
}

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

void run_diff_command(const DiffArgs& a) {
  diff::DiffOptions o = make_options(a);
  CliTrace ta, tb;
  if (!load_both(a.control, a.test, ta, tb, true)) {
    exit_code = 1;
    return;
  }
  const LoadResult &ra = ta.loaded, &rb = tb.loaded;
  // (HTA) the rank comes from a regex over the file's text, which each store keeps.
  if (o.mode == analysis::Mode::Hta) {
  }
  diff::TraceDiff d;
  try {
    d = diff::trace_diff(*ra.store, *rb.store, o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "sightline diff: %s\n", e.what());
    exit_code = 1;
    return;
  }
  if (!d.gpu_warning.empty()) std::fprintf(stderr, "sightline diff: warning: %s\n", d.gpu_warning.c_str());
  std::vector<analysis::Table> tables = diff::diff_tables(d);
  if (a.format == "json") return print(diff::render_diff_json(d, tables));
  if (a.format == "text") return print(diff::render_diff_text(d, tables, text_layout(a.wide)));
  if (a.table.empty()) {  // bad usage, but say what would work
    std::fprintf(stderr, "sightline diff: --format csv prints one table: add --table NAME. Tables in %s mode:\n",
                 a.mode.c_str());
    for (const auto& t : tables) std::fprintf(stderr, "  %s\n", t.name.c_str());
    exit_code = 2;
    return;
  }
  auto it = std::find_if(tables.begin(), tables.end(), [&](const auto& t) { return t.name == a.table; });
  if (it == tables.end()) {
    std::fprintf(stderr, "sightline diff: no table '%s' in %s mode (tables:", a.table.c_str(), a.mode.c_str());
    for (const auto& t : tables) std::fprintf(stderr, " %s", t.name.c_str());
    std::fprintf(stderr, ")\n");
    exit_code = 2;
    return;
  }
  print(analysis::render_csv(*it));
}

using analysis::median;

}  // namespace

void register_diff(CLI::App& app) {
  auto* cmd = app.add_subcommand("diff", "Compare two runs: ops diff (HTA TraceDiff), summaries, aligned operators");
  auto a = std::make_shared<DiffArgs>();
  cmd->add_option("control", a->control, "Control trace (A)")->required();
  cmd->add_option("test", a->test, "Test trace (B)")->required();
  cmd->add_option("--rank-a", a->rank_a, "Rank of the control trace (checked against the file)");
  cmd->add_option("--rank-b", a->rank_b, "Rank of the test trace (checked against the file)");
  cmd->add_option("--iteration-a", a->iteration_a, "ProfilerStep number in the control (default: the first steady-state step)");
  cmd->add_option("--iteration-b", a->iteration_b, "ProfilerStep number in the test (default: the first steady-state step)");
  cmd->add_option("--device", a->device, "cpu, gpu or all (ops diff)")->check(CLI::IsMember({"cpu", "gpu", "all"}));
  cmd->add_flag("--short-names", a->short_names, "Compare short names (no templates, arguments, return types)");
  cmd->add_option("--mode", a->mode, "sightline (default) or hta (reproduce HTA 0.6.1 TraceDiff)")
      ->check(CLI::IsMember({"sightline", "hta"}));
  cmd->add_option("--format", a->format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--table", a->table,
                  "Table for --format csv: ops, ops_diff, summary, iterations, aligned, added_ops, removed_ops, "
                  "regressions, improvements, inclusive_regressions, inclusive_improvements, kernel_pairs, memory_diff, "
                  "memory_diff_contexts");
  add_wide_flag(*cmd, a->wide);
  cmd->callback([a] { run_diff_command(*a); });
}

void register_bench_diff(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("diff", "Time loading two traces and diffing them (median of --repeat runs)");
  struct Args {
    std::string a, b;
    int repeat = 5;
    std::string format = "text";
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("control", args->a, "Control trace")->required();
  cmd->add_option("test", args->b, "Test trace")->required();
  cmd->add_option("--repeat", args->repeat, "Number of runs")->check(CLI::Range(1, 1000));
  cmd->add_option("--format", args->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([args] {
    std::vector<double> load_s, diff_s, total_s;
    double fraction = 0;
    for (int i = 0; i < args->repeat; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      CliTrace ta, tb;
      if (!load_both(args->a, args->b, ta, tb, false)) {
        exit_code = 1;
        return;
      }
      const LoadResult &ra = ta.loaded, &rb = tb.loaded;
      auto t1 = std::chrono::steady_clock::now();
      diff::TraceDiff d = diff::trace_diff(*ra.store, *rb.store, {});
      std::vector<analysis::Table> tables = diff::diff_tables(d);
      auto t2 = std::chrono::steady_clock::now();
      fraction = d.aligned ? d.aligned->matched_fraction : 0;
      load_s.push_back(std::chrono::duration<double>(t1 - t0).count());
      diff_s.push_back(std::chrono::duration<double>(t2 - t1).count());
      total_s.push_back(std::chrono::duration<double>(t2 - t0).count());
    }
    if (args->format == "json") {
      std::printf("{\"load_seconds_median\": %.6f, \"diff_seconds_median\": %.6f, \"total_seconds_median\": %.6f, "
                  "\"repeat\": %d, \"matched_fraction\": %.6f}\n",
                  median(load_s), median(diff_s), median(total_s), args->repeat, fraction);
      return;
    }
    std::printf("load both (parallel)   %.4f s\n", median(load_s));
    std::printf("diff + tables          %.4f s\n", median(diff_s));
    std::printf("total (median of %d)    %.4f s\n", args->repeat, median(total_s));
    std::printf("matched fraction       %.4f\n", fraction);
  });
}

}  // namespace sl::cli
