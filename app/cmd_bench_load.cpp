// `sightline bench load TRACE`: end-to-end load speed and memory, median of --repeat runs.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

#include "core/analysis/common.h"
#include "app/commands.h"
#include "app/process_usage.h"
#include "core/import/memory_snapshot/memory_snapshot_loader.h"
#include "core/import/nsys/nsys_loader.h"
#include "core/import/trace_loader.h"
#include "core/job/job.h"
#include "core/text/json_writer.h"

namespace sl::cli {
namespace {

using analysis::median;

// A directory: the whole job per run (ranks in parallel), aggregate MB/s over every rank's JSON.
void bench_job(const std::string& dir, int repeat, const std::string& format) {
  std::vector<double> seconds;
  uint64_t bytes = 0, events = 0;
  size_t ranks = 0, failed = 0;
  for (int i = 0; i < repeat; ++i) {
    JobResult r = load_job(plan_job_dir(dir));
    if (!r.ok()) {
      std::fprintf(stderr, "sightline: %s\n", r.error.c_str());
      exit_code = 1;
      return;
    }
    seconds.push_back(r.job->load_seconds);
    bytes = events = 0;
    for (const JobRank& k : r.job->ranks)
      if (k.ok()) bytes += k.store->meta.bytes, events += k.store->counts.events;
    ranks = r.job->ranks.size();
    failed = ranks - r.job->loaded_count();
  }
  double s = median(seconds);
  double mbps = bytes / 1e6 / s, eps = events / s;
  uint64_t rss = peak_rss_bytes();
  if (format == "json") {
    JsonWriter w;
    w.begin_object().field("ranks", uint64_t(ranks)).field("failed", uint64_t(failed)).field("bytes", bytes);
    w.field("events", events).field("seconds_median", s).field("mb_per_s", mbps).field("events_per_s", eps);
    w.field("peak_rss_bytes", rss).field("repeat", int64_t(repeat)).end_object();
    std::printf("%s\n", w.str().c_str());
    return;
  }
  std::printf("job                  %s (%zu ranks, %zu failed)\n", dir.c_str(), ranks, failed);
  std::printf("json bytes           %llu (uncompressed, all ranks)\n", (unsigned long long)bytes);
  std::printf("events               %llu\n", (unsigned long long)events);
  std::printf("seconds (median/%d)   %.4f\n", repeat, s);
  std::printf("throughput           %.1f MB/s, %.2f M events/s (aggregate)\n", mbps, eps / 1e6);
  std::printf("peak RSS             %.1f MB (%.2fx the JSON)\n", rss / 1e6, bytes ? double(rss) / bytes : 0);
}

}  // namespace

// PyTorch memory snapshots: Python's own pickle.load of the same file is the yardstick (issue 39:
// Sightline at least 5x faster). Run by /usr/bin/python3 in a child process, timed there around
// the load alone; 0 when Python is not there.
static double python_pickle_load_seconds(const std::string& file) {
  std::string quoted = "'";
  for (char c : file) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  std::string command = "/usr/bin/python3 -c 'import pickle,sys,time\nf=open(sys.argv[1],\"rb\")\nt=time.perf_counter()\n"
                        "pickle.load(f)\nprint(time.perf_counter()-t)' " + quoted + " 2>/dev/null";
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return 0;
  double seconds = 0;
  if (std::fscanf(p, "%lf", &seconds) != 1) seconds = 0;
  ::pclose(p);
  return seconds;
}

void register_bench_load(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("load", "Load a trace repeatedly: MB/s, events/s, bytes per event, peak RSS");
  struct Options {
    std::string file;
    int repeat = 5;
    std::string format = "text";
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("trace", options->file, "Trace file, or a directory of rank traces (a job)")->required();
  cmd->add_option("--repeat", options->repeat, "Number of loads (the median is reported)")->check(CLI::Range(1, 1000));
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] {
    if (is_job_dir(options->file)) {
      bench_job(options->file, options->repeat, options->format);
      return;
    }
    std::vector<double> seconds, cpu;
    uint64_t bytes = 0, events = 0, store_bytes = 0;
    for (int i = 0; i < options->repeat; ++i) {
      double cpu0 = cpu_seconds();
      LoadResult r = load_trace(options->file);
      cpu.push_back(cpu_seconds() - cpu0);
      if (!r.ok()) {
        std::fprintf(stderr, "sightline: %s\n", r.error.to_string().c_str());
        exit_code = 1;
        return;
      }
      seconds.push_back(r.seconds);
      bytes = r.store->meta.bytes;
      events = r.store->counts.events;
      store_bytes = r.store->store_bytes();
    }
    double s = median(seconds);
    // Nsight reports: SQLite's own scan of the kernel and runtime columns is the yardstick.
    std::vector<double> scan_seconds, scan_cpu;
    uint64_t scan_rows = 0;
    if (nsys_file_kind(options->file) == NsysFileKind::Sqlite || nsys_file_kind(options->file) == NsysFileKind::SqliteGz) {
      for (int i = 0; i < options->repeat; ++i) {
        double cpu0 = cpu_seconds();
        NsysScan scan = nsys_bare_scan(options->file);
        if (!scan.error.empty()) break;
        scan_seconds.push_back(scan.seconds);
        scan_cpu.push_back(cpu_seconds() - cpu0);
        scan_rows = scan.rows;
      }
    }
    std::vector<double> python_seconds;
    if (is_memory_snapshot_file(options->file))
      for (int i = 0; i < options->repeat; ++i)
        if (double py = python_pickle_load_seconds(options->file); py > 0) python_seconds.push_back(py);
    double python_s = python_seconds.empty() ? 0 : median(python_seconds);
    double scan_s = scan_seconds.empty() ? 0 : median(scan_seconds);
    double scan_cpu_s = scan_cpu.empty() ? 0 : median(scan_cpu);  // includes opening (and gunzip)
    double mbps = bytes / 1e6 / s, eps = events / s;
    double per_event = events ? double(store_bytes) / double(events) : 0;
    uint64_t rss = peak_rss_bytes();
    if (options->format == "json") {
      JsonWriter w;
      w.begin_object().field("bytes", bytes).field("events", events).field("seconds_median", s);
      w.field("mb_per_s", mbps).field("events_per_s", eps).field("store_bytes_per_event", per_event);
      w.field("peak_rss_bytes", rss).field("repeat", int64_t(options->repeat)).field("cpu_seconds_median", median(cpu));
      if (python_s > 0) w.field("python_pickle_load_seconds_median", python_s);
      if (scan_s > 0)
        w.field("sqlite_scan_rows", scan_rows).field("sqlite_scan_seconds_median", scan_s).field("sqlite_scan_cpu_seconds_median", scan_cpu_s);
      w.end_object();
      std::printf("%s\n", w.str().c_str());
      return;
    }
    std::printf("file                 %s\n", options->file.c_str());
    std::printf("input bytes          %llu (uncompressed JSON or SQLite)\n", (unsigned long long)bytes);
    std::printf("events               %llu\n", (unsigned long long)events);
    std::printf("seconds (median/%d)   %.4f\n", options->repeat, s);
    std::printf("cpu seconds (median) %.4f\n", median(cpu));
    std::printf("throughput           %.1f MB/s, %.2f M events/s\n", mbps, eps / 1e6);
    std::printf("store bytes/event    %.1f (excluding the raw JSON buffer)\n", per_event);
    std::printf("peak RSS             %.1f MB (%.2fx the JSON)\n", rss / 1e6, bytes ? double(rss) / bytes : 0);
    if (python_s > 0)
      std::printf("python pickle.load   %.4f s (median/%zu, /usr/bin/python3): Sightline %.1fx faster\n", python_s,
                  python_seconds.size(), python_s / s);
    if (scan_s > 0) {
      // The loader's rate over the same rows, for the whole load (every table, finish()).
      double cpu_s = median(cpu);
      std::printf("loader               %llu kernel + runtime rows: %.2f M rows/s (cpu %.2f M rows/s)\n",
                  (unsigned long long)scan_rows, scan_rows / s / 1e6, cpu_s > 0 ? scan_rows / cpu_s / 1e6 : 0.0);
      std::printf("bare SQLite scan     %llu kernel + runtime rows in %.4f s (cpu %.4f s): %.2f M rows/s (cpu %.2f M rows/s)\n",
                  (unsigned long long)scan_rows, scan_s, scan_cpu_s, scan_rows / scan_s / 1e6,
                  scan_cpu_s > 0 ? scan_rows / scan_cpu_s / 1e6 : 0.0);
    }
  });
}

}  // namespace sl::cli
