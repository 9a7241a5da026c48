// `sightline info TRACE`: what a trace holds, and what the loader could not place.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>

#include "app/commands.h"
#include "app/fleet_cli.h"
#include "app/job_open.h"
#include "core/open_trace.h"
#include "core/report/trace_info.h"

namespace sl::cli {
namespace {

// "source          cache (ENTRY)", in the layout of info_text's lines.
std::string source_line(const OpenedTrace& opened, const std::string& path) {
  const std::string& where = opened.origin == TraceOrigin::Cache ? opened.cache_entry : path;
  char key[32];
  std::snprintf(key, sizeof key, "%-16s", "source");
  return key + std::string(trace_origin_name(opened.origin)) + " (" + where + ")\n";
}

}  // namespace

void register_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Summarise a trace: events, tracks, devices, iterations, import issues");
  struct Options {
    std::string file;
    std::string format = "text";
    std::vector<std::string> job;
    bool verbose = false;
    bool wide = false;  // accepted as on report and diff; info's text has no names to cut
    std::string rank_from;  // --rank-from: a job's ranks from this source
    std::string memory;                     // --memory SNAPSHOT
    std::optional<double> memory_offset_us;  // --memory-offset
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("trace", options->file, "Trace file (.json, .json.gz, Nsight .sqlite, .sqlite.gz, .nsys-rep), a directory of rank traces (a job), or a fleet file (.slfleet)");
  cmd->add_option("--job", options->job, "Rank trace files of one job (instead of TRACE)");
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--memory", options->memory, "A PyTorch memory snapshot (.pickle) of the same run");
  cmd->add_option("--memory-offset", options->memory_offset_us, "µs from the trace start to the snapshot's first entry");
  cmd->add_flag("-v,--verbose", options->verbose, "Text output also says where the store came from (the trace, a snapshot, the cache)");
  add_wide_flag(*cmd, options->wide);
  add_rank_from_option(*cmd, options->rank_from);
  cmd->callback([options] {
    if (options->file.empty() == options->job.empty()) {
      std::fprintf(stderr, "sightline info: trace (a file or a directory of ranks) or --job FILES... is required\n"
                           "Run with --help for more information.\n");
      exit_code = 2;
      return;
    }
    if (options->job.empty() && fleet::is_fleet_file(options->file)) {
      run_fleet_info(options->file, options->format);
      return;
    }
    if (!options->job.empty() || is_job_dir(options->file)) {
      auto job = open_job(options->file, options->job, rank_source_named(options->rank_from));
      if (!job) {
        exit_code = 1;
        return;
      }
      std::string out = options->format == "json" ? job_info_json(*job, job->load_seconds) + "\n"
                                                   : job_info_text(*job, job->load_seconds);
      std::fputs(out.c_str(), stdout);
      if (job->loaded_count() != job->ranks.size()) exit_code = 1;
      return;
    }
    CliTrace opened;
    if (!open_cli_trace(options->file, opened)) {
      exit_code = 1;
      return;
    }
    if (!options->memory.empty()) {
      std::string note;
      if (!attach_cli_memory(opened, options->memory, options->memory_offset_us, note)) {
        exit_code = 1;
        return;
      }
      std::fprintf(stderr, "sightline: %s\n", note.c_str());
    }
    const LoadResult& loaded = opened.loaded;
    std::string out = options->format == "json" ? info_json(*loaded.store, loaded.seconds) + "\n"
                                                 : info_text(*loaded.store, loaded.seconds);
    // A line of its own under --verbose: the default output is the same from a cache hit.
    if (options->verbose && options->format == "text") out += source_line(opened, options->file);
    std::fputs(out.c_str(), stdout);
  });
}

}  // namespace sl::cli
