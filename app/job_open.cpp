#include "app/job_open.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>

#include "core/memory/memory_attach.h"
#include "core/report/trace_info.h"
#include "core/store/import_issues.h"

namespace sl::cli {

void print_cache_line(const std::string& line, bool warning) {
  static std::mutex mutex;
  static std::set<std::string> printed;
  std::lock_guard lock(mutex);
  if (line.empty() || !printed.insert(line).second) return;
  std::fprintf(stderr, "sightline: %s%s\n", warning ? "warning: " : "", line.c_str());
}

CliTrace::~CliTrace() { print_cache_line(write.wait(), true); }

void open_cached(const std::string& path, CliTrace& out, bool use_cache) {
  static_cast<OpenedTrace&>(out) = open_trace(path, {}, use_cache ? process_cache_settings() : CacheSettings{});
  for (const std::string& notice : out.notices) print_cache_line(notice, false);
}

bool open_cli_trace(const std::string& path, CliTrace& out) {
  open_cached(path, out);
  return report_load(out.loaded);
}

bool attach_cli_memory(CliTrace& trace, const std::string& path, std::optional<double> offset_us, std::string& note) {
  CliTrace snapshot;
  if (!open_cli_trace(path, snapshot)) return false;
  if (snapshot.loaded.store->memory.empty()) {
    std::fprintf(stderr, "sightline: %s: no memory events (--memory wants a PyTorch memory snapshot)\n", path.c_str());
    return false;
  }
  trace.write.wait_store_unused();  // the cache writer may still be reading the trace's store
  std::optional<TimeNs> offset;
  if (offset_us) offset = TimeNs(*offset_us * 1000.0 + (*offset_us < 0 ? -0.5 : 0.5));
  note = memory::attach_memory_snapshot(*trace.loaded.store, *snapshot.loaded.store, offset);
  return true;
}

bool report_load(const LoadResult& r) {
  if (!r.ok()) {
    std::fprintf(stderr, "sightline: %s\n", r.error.to_string().c_str());
    return false;
  }
  if (!r.warning.empty()) std::fprintf(stderr, "sightline: warning: %s\n", r.warning.c_str());
  if (std::string gpu = missing_gpu_activity_warning(*r.store); !gpu.empty())
    std::fprintf(stderr, "sightline: warning: %s: %s\n", r.store->meta.file.c_str(), gpu.c_str());
  return true;
}

void add_rank_from_option(CLI::App& cmd, std::string& value) {
  cmd.add_option("--rank-from", value,
                 "A job: take every rank's number from distributedInfo (distributed-info), the file name (name) or the "
                 "files' order (order), instead of the first each file has")
      ->check(CLI::IsMember({"distributed-info", "name", "order"}));
}

std::unique_ptr<Job> open_job(const std::string& dir, const std::vector<std::string>& files, std::optional<RankSource> rank_from) {
  JobPlan plan = files.empty() ? plan_job_dir(dir) : plan_job_files(files);
  JobOptions options;
  options.cache = &process_cache_settings();
  options.rank_from = rank_from;
  JobResult result = load_job(plan, options);
  if (!result.ok()) {
    std::fprintf(stderr, "sightline: %s\n", result.error.c_str());
    return nullptr;
  }
  for (const JobRank& r : result.job->ranks) {
    for (const std::string& notice : r.cache_notices) print_cache_line(notice, false);
    print_cache_line(r.cache_warning, true);
  }
  for (const JobRank& r : result.job->ranks)
    if (!r.ok()) std::fprintf(stderr, "sightline: rank %lld failed: %s\n", (long long)r.rank, r.error.to_string().c_str());
  // A rank cut off after complete events loads (its events up to the cut); say so once per rank,
  // in the words of the single-trace warning, so a short rank is not mistaken for a straggler.
  for (const JobRank& r : result.job->ranks)
    if (r.ok() && r.store->issues.truncation)
      std::fprintf(stderr, "sightline: warning: rank %lld: %s: %s\n", (long long)r.rank, r.path.c_str(),
                   describe(*r.store->issues.truncation).c_str());
  // Ranks that may not be one job (a folder of unrelated traces): said before any output.
  for (const std::string& w : job_warnings(*result.job)) std::fprintf(stderr, "sightline: warning: job: %s\n", w.c_str());
  for (const JobRank& r : result.job->ranks)
    if (std::string gpu = r.ok() ? missing_gpu_activity_warning(*r.store) : ""; !gpu.empty())
      std::fprintf(stderr, "sightline: warning: rank %lld: %s: %s\n", (long long)r.rank, r.path.c_str(), gpu.c_str());
  return std::move(result.job);
}

analysis::TextLayout text_layout(bool wide) {
  analysis::TextLayout layout;
  layout.wide = wide;
  if (const char* columns = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long n = std::strtol(columns, &end, 10);
    if (end != columns && *end == 0 && n > 0) layout.width = size_t(n);
  }
  return layout;
}

void add_wide_flag(CLI::App& cmd, bool& wide) {
  cmd.add_flag("--wide", wide, "Text tables print names whole (by default they are cut with … to fit $COLUMNS, else 160)");
}

analysis::Align align_named(const std::string& name) {
  return name == "collectives" ? analysis::Align::Collectives
         : name == "none"      ? analysis::Align::None
                               : analysis::Align::Auto;
}

}  // namespace sl::cli
