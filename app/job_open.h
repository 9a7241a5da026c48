// Opening traces from the CLI: one file through the snapshot cache, or a job (a directory argument
// or `--job A B C ...`), with errors, warnings and cache notices on stderr.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/collectives.h"
#include "core/analysis/report_tables.h"
#include "core/job/job.h"
#include "core/open_trace.h"

namespace CLI {
class App;
}

namespace sl::cli {

// One trace opened for a command. Its destructor waits for the background cache write (which
// overlaps the command's own work) and prints the write's warning, if any.
struct CliTrace : OpenedTrace {
  CliTrace() = default;
  CliTrace(CliTrace&&) = default;
  ~CliTrace();
};

// Opens `path` through the process's cache (core/snapshot/snapshot_cache.h), or without it (benchmarks
// that time the load); cache notices go to stderr, one line each.
void open_cached(const std::string& path, CliTrace& out, bool use_cache = true);
// Prints the load's error ("sightline: ERROR", returns false) or its warning.
bool report_load(const LoadResult& r);
// open_cached, then report_load.
bool open_cli_trace(const std::string& path, CliTrace& out);

// --memory SNAPSHOT: opens the PyTorch memory snapshot and moves its memory events into `trace`
// (core/memory/memory_attach.h), `offset_us` (--memory-offset) placing it where the clocks cannot.
// False, after printing why, when it does not open or holds no memory events; `note` says how the
// two were aligned.
bool attach_cli_memory(CliTrace& trace, const std::string& snapshot, std::optional<double> offset_us, std::string& note);

// "sightline: LINE" on stderr; `warning` adds "warning: ". A line already printed by this process
// is not printed again (every rank of a job meets the same unwritable cache folder).
void print_cache_line(const std::string& line, bool warning);

// Loads the job; on error prints "sightline: ERROR" and returns null. Failed ranks print a line
// each on stderr (the job still loads; callers exit 1 after printing their output).
std::unique_ptr<Job> open_job(const std::string& dir, const std::vector<std::string>& files,
                              std::optional<RankSource> rank_from = std::nullopt);
// "--rank-from distributed-info|name|order" on a command that opens jobs; `value` "" when absent.
void add_rank_from_option(CLI::App& cmd, std::string& value);

// How wide text tables may be: $COLUMNS when it is a number, else 160; `wide` (--wide): names whole.
analysis::TextLayout text_layout(bool wide);
// "--wide" on a command with text tables.
void add_wide_flag(CLI::App& cmd, bool& wide);

// --align's value (collectives, none, auto; checked by the option) as the analyses take it.
analysis::Align align_named(const std::string& name);

}  // namespace sl::cli
