// `sightline info TRACE`: what a trace holds, and what the loader could not place.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "app/commands.h"
#include "app/job_open.h"
#include "core/trace_info.h"
#include "core/trace_loader.h"

namespace sl::cli {

void register_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Summarise a trace: events, tracks, devices, iterations, import issues");
  struct Options {
    std::string file;
    std::string format = "text";
    std::vector<std::string> job;
  };
  auto options = std::make_shared<Options>();
  cmd->add_option("trace", options->file, "Trace file (.json, .json.gz, Nsight .sqlite, .sqlite.gz, .nsys-rep), or a directory of rank traces (a job)");
  cmd->add_option("--job", options->job, "Rank trace files of one job (instead of TRACE)");
  cmd->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([options] {
    if (options->file.empty() == options->job.empty()) {
      std::fprintf(stderr, "sightline info: trace (a file or a directory of ranks) or --job FILES... is required\n"
                           "Run with --help for more information.\n");
      exit_code = 2;
      return;
    }
    if (!options->job.empty() || is_job_dir(options->file)) {
      auto job = open_job(options->file, options->job);
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
    LoadResult loaded = load_trace(options->file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "sightline: %s\n", loaded.error.to_string().c_str());
      exit_code = 1;
      return;
    }
    if (!loaded.warning.empty()) std::fprintf(stderr, "sightline: warning: %s\n", loaded.warning.c_str());
    std::string out = options->format == "json" ? info_json(*loaded.store, loaded.seconds) + "\n"
                                                 : info_text(*loaded.store, loaded.seconds);
    std::fputs(out.c_str(), stdout);
  });
}

}  // namespace sl::cli
