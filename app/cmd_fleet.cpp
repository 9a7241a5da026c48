// Fleet scale (core/fleet): `fleet-map` summarises one rank file, `fleet-reduce` reduces summary
// files into a `.slfleet`, `fleet` runs both over a Dask cluster (python3 -m sightline.fleet, which
// calls the two back), and `bench fleet-reduce` times the reduce on synthetic summaries.
// `info` and `report` open a `.slfleet` through fleet_cli.h.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>

#include "app/commands.h"
#include "app/fleet_cli.h"
#include "app/job_open.h"
#include "app/process_usage.h"
#include "core/analysis/report_tables.h"
#include "core/fleet/fleet.h"
#include "core/fleet/fleet_report.h"
#include "core/snapshot/snapshot_cache.h"

namespace sl::cli {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// --cache DIR names a shared cache folder; otherwise the worker's own (the environment's).
CacheSettings cache_for(const std::string& dir) {
  if (dir.empty()) return process_cache_settings();
  CacheSettings c = process_cache_settings();
  c.enabled = true;
  c.dir = dir;
  return c;
}

// The plan of `sightline fleet`: the rank files of each folder (as `report DIR` picks them) and
// the files given, as JSON {"source", "files", "skipped"}, so the driver names ranks as jobs do.
void register_fleet_plan(CLI::App& app) {
  auto* cmd = app.add_subcommand("fleet-plan", "List the rank files of folders and files, as a job picks them (JSON)");
  auto paths = std::make_shared<std::vector<std::string>>();
  cmd->add_option("paths", *paths, "Folders of rank traces and rank files")->required();
  cmd->callback([paths] {
    JobPlan all;
    std::vector<std::string> files;
    for (const auto& p : *paths) {
      if (!is_job_dir(p)) {
        files.push_back(p);
        continue;
      }
      JobPlan dir = plan_job_dir(p);
      if (!dir.ok()) std::fprintf(stderr, "sightline fleet-plan: %s\n", dir.error.c_str());
      all.source = all.source.empty() ? dir.source : all.source + ", " + dir.source;
      all.files.insert(all.files.end(), dir.files.begin(), dir.files.end());
      all.skipped.insert(all.skipped.end(), dir.skipped.begin(), dir.skipped.end());
    }
    JobPlan given = plan_job_files(files);
    all.files.insert(all.files.end(), given.files.begin(), given.files.end());
    all.skipped.insert(all.skipped.end(), given.skipped.begin(), given.skipped.end());
    std::string out = "{\"source\": " + analysis::json_escape(all.source) + ", \"files\": [";
    for (size_t i = 0; i < all.files.size(); ++i) out += (i ? ", " : "") + analysis::json_escape(all.files[i]);
    out += "], \"skipped\": [";
    for (size_t i = 0; i < all.skipped.size(); ++i)
      out += (i ? ", " : "") + std::string("{\"path\": ") + analysis::json_escape(all.skipped[i].path) +
             ", \"reason\": " + analysis::json_escape(all.skipped[i].reason) + "}";
    out += "]}\n";
    std::fputs(out.c_str(), stdout);
    if (all.files.empty()) exit_code = 1;
  });
}

void register_fleet_map(CLI::App& app) {
  auto* cmd = app.add_subcommand("fleet-map", "Summarise one rank file for a fleet (the map step of `sightline fleet`)");
  struct Options {
    std::string file, out, cache;
    size_t index = 0;
    std::optional<std::string> failed_with;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("rank_file", o->file, "The rank's trace file")->required();
  cmd->add_option("-o,--output", o->out, "Where to write the rank summary")->required();
  cmd->add_option("--index", o->index, "The file's position among the run's rank files (names ranks that carry no rank)");
  cmd->add_option("--cache", o->cache, "A snapshot cache folder shared by the workers (default: this machine's)");
  cmd->add_option("--failed-with", o->failed_with, "Write the rank as failed with this error, without loading it (the driver's word for a map that crashed)");
  cmd->callback([o] {
    CacheSettings cache = cache_for(o->cache);
    fleet::RankSummary s = o->failed_with ? fleet::failed_rank(o->file, o->index, *o->failed_with)
                                          : fleet::map_rank_file(o->file, o->index, &cache);
    std::string error;
    if (!fleet::write_file_atomically(o->out, fleet::serialize_rank_summary(s), error)) {
      std::fprintf(stderr, "sightline fleet-map: %s\n", error.c_str());
      exit_code = 1;
      return;
    }
    // One line for the driver: what came of the rank (a failed rank is still a summary).
    std::printf("{\"rank\": %lld, \"status\": \"%s\", \"seconds\": %.6f, \"error\": %s}\n", (long long)s.rank,
                s.ok() ? "ok" : "failed", s.map_seconds, analysis::json_escape(s.error).c_str());
  });
}

// SUMMARIES..., plus the lines of --list files (thousands of ranks outgrow a command line).
bool summary_paths(const std::vector<std::string>& given, const std::vector<std::string>& lists, std::vector<std::string>& out) {
  out = given;
  for (const auto& list : lists) {
    std::ifstream f(list);
    if (!f) {
      std::fprintf(stderr, "sightline fleet-reduce: cannot read --list %s\n", list.c_str());
      return false;
    }
    for (std::string line; std::getline(f, line);)
      if (!line.empty()) out.push_back(line);
  }
  return true;
}

void register_fleet_reduce(CLI::App& app) {
  auto* cmd = app.add_subcommand("fleet-reduce", "Reduce rank summaries into a fleet file (the reduce step of `sightline fleet`)");
  struct Options {
    std::vector<std::string> summaries, lists;
    std::string out, source, align = "auto";
    std::optional<int64_t> gpus_per_node;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("summaries", o->summaries, "Rank summary files (from fleet-map)");
  cmd->add_option("--list", o->lists, "A file listing summary files, one a line");
  cmd->add_option("-o,--output", o->out, "The fleet file to write (.slfleet)")->required();
  cmd->add_option("--source", o->source, "What the run was given, as the report's header names it");
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "Ranks per node (node = rank / N); default: the traces' host");
  cmd->add_option("--align", o->align, "Clock alignment across ranks")->check(CLI::IsMember({"auto", "none", "collectives"}));
  cmd->callback([o] {
    std::vector<std::string> paths;
    if (!summary_paths(o->summaries, o->lists, paths)) {
      exit_code = 2;
      return;
    }
    if (paths.empty()) {
      std::fprintf(stderr, "sightline fleet-reduce: no summary files given\n");
      exit_code = 2;
      return;
    }
    std::vector<std::string> summaries(paths.size());
    for (size_t i = 0; i < paths.size(); ++i) {
      std::string error;
      if (!fleet::read_whole_file(paths[i], summaries[i], error)) {
        std::fprintf(stderr, "sightline fleet-reduce: %s: %s\n", paths[i].c_str(), error.c_str());
        exit_code = 1;
        return;
      }
    }
    fleet::FleetOptions fo;
    fo.source = o->source;
    fo.gpus_per_node = o->gpus_per_node;
    fo.collectives.align = align_named(o->align);
    fleet::Fleet f;
    std::string error;
    if (!fleet::reduce_fleet_bytes(std::move(summaries), fo, f, error, &paths) || !fleet::write_fleet_file(o->out, f, error)) {
      std::fprintf(stderr, "sightline fleet-reduce: %s\n", error.c_str());
      exit_code = 1;
      return;
    }
    std::fprintf(stderr, "sightline fleet-reduce: %zu ranks (%zu loaded), %zu collective instances -> %s\n", f.ranks.size(),
                 f.loaded_count(), f.collectives.instances.size(), o->out.c_str());
  });
}

// The folder holding the python package `sightline` (with its compiled extension, which the
// package imports): SIGHTLINE_PYTHON_DIR; else the build tree's python/ the binary was built in;
// else where `cmake --install` put it beside an installed binary (PREFIX/lib/python3*/...);
// else the source tree's python/ (the driver then needs the extension from elsewhere).
std::string python_package_dir() {
  if (const char* env = std::getenv("SIGHTLINE_PYTHON_DIR"); env && *env) return env;
  std::vector<fs::path> candidates = {fs::path(SIGHTLINE_BUILD_PYTHON_DIR)};
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const auto& lib : fs::directory_iterator(exe.parent_path().parent_path() / "lib", ec))
      if (lib.path().filename().string().starts_with("python3"))
        for (const char* site : {"dist-packages", "site-packages"}) candidates.push_back(lib.path() / site);
  candidates.push_back(fs::path(SIGHTLINE_SOURCE_PYTHON_DIR));
  for (const auto& c : candidates)
    if (fs::exists(c / "sightline" / "fleet.py", ec)) return c.string();
  return candidates.back().string();
}

std::string self_path() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("sightline") : exe.string();
}

void register_fleet(CLI::App& app) {
  auto* cmd = app.add_subcommand("fleet", "Map every rank of a run on a Dask cluster and reduce them into a fleet file");
  // Everything after the subcommand goes to the driver as it was typed: it owns the options.
  cmd->allow_extras();
  cmd->prefix_command();
  cmd->footer("Options (python3 -m sightline.fleet): PATHS... -o RUN.slfleet [--scheduler tcp://HOST:PORT | --local N] "
              "[--cache DIR] [--gpus-per-node N] [--align auto|none|collectives]");
  cmd->callback([cmd] {
    std::vector<std::string> args = {"/usr/bin/python3", "-m", "sightline.fleet", "--sightline", self_path()};
    for (const auto& a : cmd->remaining()) args.push_back(a);
    std::string dir = python_package_dir();
    const char* old = std::getenv("PYTHONPATH");
    std::string path = dir + (old && *old ? ":" + std::string(old) : std::string());
    ::setenv("PYTHONPATH", path.c_str(), 1);
    // `sightline --no-cache fleet ...`: the maps (local workers inherit the environment) too.
    if (!process_cache_settings().enabled) ::setenv("SIGHTLINE_NO_CACHE", "1", 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    ::execv(argv[0], argv.data());  // Ctrl-C then reaches the driver, which cancels its futures
    std::perror("sightline fleet: cannot run /usr/bin/python3");
    exit_code = 1;
  });
}

// ---- bench fleet-reduce: synthetic summaries, made directly ----

// Rank r of n: one AllReduce per collective with a seq, arrival jittered per rank and rank 0
// late every 10th, GPU busy up to each call, iteration lengths around 10 ms; a `slow` rank's
// iterations last 3× as long (an outlier in the `outliers` table, for the overview's rows).
fleet::RankSummary synthetic_rank(int64_t r, int64_t collectives, bool slow = false) {
  fleet::RankSummary s;
  s.rank = r;
  s.rank_source = RankSource::DistributedInfo;
  s.status = fleet::RankStatus::Ok;
  s.path = "synthetic/rank" + std::to_string(r) + ".json";
  s.host = "node" + std::to_string(r / 8);
  analysis::RankSummary& a = s.analysis;
  a.rank = r;
  a.origin_ns = 1'000'000'000;
  std::vector<analysis::Interval> busy, compute;
  for (int64_t k = 0; k < collectives; ++k) {
    TimeNs base = k * 1'000'000, jitter = (r * 7919 + k * 104729) % 50'000 + (r == 0 && k % 10 == 0 ? 300'000 : 0);
    analysis::CollectiveCall c;
    c.name = "AllReduce";
    c.group = "default";
    c.seq = k;
    c.start = a.origin_ns + base + 400'000 + jitter;
    c.end = a.origin_ns + base + 900'000;
    c.cpu_start = c.start - 20'000;
    compute.push_back({base, base + 350'000 + jitter});
    busy.push_back({base, base + 350'000 + jitter});
    busy.push_back({c.start - a.origin_ns, c.end - a.origin_ns});
    analysis::IdleGap g;
    g.start = base + 350'000 + jitter, g.end = c.start - a.origin_ns;
    g.cause = k % 3 ? analysis::IdleCause::CollectiveWait : analysis::IdleCause::DataLoading;
    if (g.end > g.start) a.causes.gaps.push_back(g);
    a.calls.push_back(std::move(c));
    if (k % 20 == 19) {  // a step from the group's first collective: its first half's collectives fall in it
      a.iteration_starts.push_back((k - 19) * 1'000'000);
      a.iteration_durations.push_back((10'000'000 + (r % 5) * 10'000) * (slow ? 3 : 1));
    }
  }
  a.busy = analysis::IntervalIndex(std::move(busy));
  a.compute = analysis::IntervalIndex(std::move(compute));
  return s;
}

double peak_rss_gb() { return double(peak_rss_bytes()) / double(1 << 30); }

void register_bench_fleet_reduce(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("fleet-reduce", "Time the fleet reduce on synthetic rank summaries (made directly, not from traces)");
  struct Options {
    int64_t ranks = 256, collectives = 200;
    std::vector<int64_t> slow;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--ranks", o->ranks, "Ranks");
  cmd->add_option("--collectives", o->collectives, "Collective calls per rank");
  cmd->add_option("--slow-rank", o->slow, "Ranks whose iterations last 3x as long (outliers); repeatable");
  cmd->add_option("-o,--output", o->out, "Also write the fleet file here (times the write and the open)");
  cmd->callback([o] {
    auto t0 = std::chrono::steady_clock::now();
    // Serialised as fleet-map hands them over: the client holds the summaries' bytes, not them.
    std::vector<std::string> summaries(size_t(o->ranks));
    parallel_for(summaries.size(), 0, [&](size_t r) { 
      bool slow = std::find(o->slow.begin(), o->slow.end(), int64_t(r)) != o->slow.end();
      summaries[r] = fleet::serialize_rank_summary(synthetic_rank(int64_t(r), o->collectives, slow));
    });
    double make = seconds_since(t0);
    uint64_t summary_bytes = 0;
    for (const auto& s : summaries) summary_bytes += s.size();
    auto t1 = std::chrono::steady_clock::now();
    double c1 = cpu_seconds();
    fleet::Fleet f;
    std::string error;
    fleet::FleetOptions fo;
    fo.gpus_per_node = 8;
    if (!fleet::reduce_fleet_bytes(std::move(summaries), fo, f, error)) std::fprintf(stderr, "sightline bench fleet-reduce: %s\n", error.c_str());
    double reduce = seconds_since(t1), reduce_cpu = cpu_seconds() - c1, rss_reduce = peak_rss_gb();
    double write = -1, open = -1, open_cpu = -1;
    uint64_t bytes = 0;
    if (!o->out.empty()) {
      auto t2 = std::chrono::steady_clock::now();
      if (!fleet::write_fleet_file(o->out, f, error)) std::fprintf(stderr, "sightline bench fleet-reduce: %s\n", error.c_str());
      write = seconds_since(t2);
      bytes = fs::file_size(o->out);
      f = {};
      auto t3 = std::chrono::steady_clock::now();
      double c3 = cpu_seconds();
      fleet::Fleet back;
      if (!fleet::read_fleet_file(o->out, back, error)) std::fprintf(stderr, "sightline bench fleet-reduce: %s\n", error.c_str());
      open = seconds_since(t3), open_cpu = cpu_seconds() - c3;
    }
    std::printf("{\"ranks\": %lld, \"collectives\": %lld, \"make_s\": %.3f, \"summary_bytes\": %llu, \"reduce_s\": %.3f, "
                "\"reduce_cpu_s\": %.3f, \"peak_rss_gb_after_reduce\": %.3f, \"write_s\": %.3f, \"open_s\": %.3f, "
                "\"open_cpu_s\": %.3f, \"file_bytes\": %llu, \"peak_rss_gb\": %.3f}\n",
                (long long)o->ranks, (long long)o->collectives, make, (unsigned long long)summary_bytes, reduce, reduce_cpu,
                rss_reduce, write, open, open_cpu, (unsigned long long)bytes, peak_rss_gb());
  });
}

}  // namespace

bool open_fleet_for_cli(const std::string& path, fleet::Fleet& out, const char* command) {
  std::string error;
  if (fleet::read_fleet_file(path, out, error)) return true;
  std::fprintf(stderr, "sightline %s: %s\n", command, error.c_str());
  return false;
}

void run_fleet_info(const std::string& path, const std::string& format) {
  fleet::Fleet f;
  if (!open_fleet_for_cli(path, f, "info")) {
    exit_code = 1;
    return;
  }
  std::string out = format == "json" ? fleet::fleet_info_json(f, path) : fleet::fleet_info_text(f, path);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (f.loaded_count() != f.ranks.size()) exit_code = 1;
}

void register_fleet_commands(CLI::App& app, CLI::App& bench) {
  register_fleet_plan(app);
  register_fleet_map(app);
  register_fleet_reduce(app);
  register_fleet(app);
  register_bench_fleet_reduce(bench);
}

}  // namespace sl::cli
