// A distributed job: the traces of every rank of one training run, loaded side by side.
//
// Opening a job is two steps so that a fleet-scale driver can replace either one:
//   1. plan_job_dir / plan_job_files list the candidate rank files (and the files skipped),
//   2. load_job maps load_rank over the plan on a bounded thread pool, then names the ranks.
// A rank that fails to load stays in the job, marked failed with its error; the others stay
// usable. Stores are never merged: each rank keeps its own TraceStore and its own clock, and
// `clock_offset_ns` (set by the collectives analysis when aligning) maps it onto the job's clock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/open_trace.h"
#include "core/store/trace_store.h"

namespace sl {

// A file of the folder (or of --job) that is not a rank, and why.
struct SkippedFile {
  std::string path;
  std::string reason;
};

// Where a rank number came from, most trusted first.
enum class RankSource : uint8_t { DistributedInfo, FileName, FileOrder };
std::string_view rank_source_name(RankSource s);  // "distributedInfo.rank", "file name", "file order"
// --rank-from's values: "distributed-info", "name", "order"; none for anything else.
std::optional<RankSource> rank_source_named(std::string_view option);

struct JobRank {
  int64_t rank = -1;
  RankSource rank_source = RankSource::FileOrder;
  std::string path;
  std::unique_ptr<TraceStore> store;  // null when the rank failed to load
  LoadError error;                    // set when failed
  double load_seconds = 0;
  TraceOrigin origin = TraceOrigin::Source;  // read from the snapshot cache, or parsed
  std::vector<std::string> cache_notices;     // cached entries discarded, and why
  std::string cache_warning;                  // why the rank could not be cached ("" if it was)
  TimeNs clock_offset_ns = 0;         // added to this rank's absolute times to align clocks
  bool ok() const { return store != nullptr; }
};

struct JobPlan {
  std::string source;               // the directory, or "" for an explicit file list
  std::vector<std::string> files;   // candidate rank files, in natural name order
  std::vector<SkippedFile> skipped;
  std::string error;                // non-empty: nothing to load (missing dir, no trace files)
  bool ok() const { return error.empty(); }
};

// Every `.json`/`.json.gz`/`.slsnap` file directly in `dir` is a candidate; other entries are
// skipped, and so is a snapshot beside its own trace (`X.slsnap` next to `X.json[.gz]`).
JobPlan plan_job_dir(const std::string& dir);
// The given files, in the given order; files with another extension are skipped.
JobPlan plan_job_files(const std::vector<std::string>& files);
// True when `path` names a directory (the CLI's test for "is this a job?").
bool is_job_dir(const std::string& path);

// The rank a file name gives: `rank-N`, `rank_N`, `rankN`, `workerN` (case-insensitive).
std::optional<int64_t> rank_from_file_name(std::string_view file_name);

struct JobOptions {
  unsigned threads = 0;  // loader threads; 0 = one per core, never more than the files
  // Called from loader threads; `file_index` indexes JobPlan::files. Keep them cheap.
  std::function<void(size_t file_index, const LoadProgress&)> on_rank_progress;
  std::function<void(size_t file_index, const JobRank&)> on_rank_done;
  const std::atomic<bool>* cancel = nullptr;  // stops every rank; load_job then fails
  // Non-null: each rank opens through this snapshot cache; a rank parsed from its file is
  // cached by its loader thread right after loading (the pool keeps the other cores busy).
  const CacheSettings* cache = nullptr;
  // Where every rank's number comes from (--rank-from), instead of the most trusted source each
  // file has: two files that both claim rank 0 in distributedInfo load by their names or order.
  std::optional<RankSource> rank_from;
};

struct Job {
  std::string source;
  std::vector<JobRank> ranks;        // sorted by rank
  std::vector<SkippedFile> skipped;  // wrong-kind files, with the reason
  double load_seconds = 0;           // wall time of the whole parallel load

  size_t loaded_count() const;
  const JobRank* find(int64_t rank) const;
};

struct JobResult {
  std::unique_ptr<Job> job;  // null on error
  std::string error;         // empty dir, no traces, duplicate ranks, cancelled
  bool ok() const { return job != nullptr; }
};

// Loads one rank file (the unit a fleet-scale driver maps over machines or processes).
// With `cache`, through that snapshot cache (written before returning).
JobRank load_rank(const std::string& path, const LoadOptions& options = {}, const CacheSettings* cache = nullptr);

// Names a loaded (or failed) rank: distributedInfo.rank, else the file name, else `file_order`,
// its position among the job's rank files; only `from` (--rank-from) when given. False, with
// `error`, when the file has no rank of that source. load_job does it; a fleet map per file.
bool name_rank(JobRank& r, size_t file_order, std::optional<RankSource> from, std::string& error);

// Loads every planned file in parallel and names the ranks. Files that turn out not to be
// traces at all (no "traceEvents" at byte 0) move to `skipped`; two files with one rank fail
// (the error names --rank-from), and so does a file without the rank `rank_from` asks for.
JobResult load_job(const JobPlan& plan, const JobOptions& options = {});

}  // namespace sl

namespace sl {
// Indices of `spans` ([start, end], one clock) in groups that overlap, directly or through
// others, each group by start, groups by their first start. Spans touching at one instant share
// that moment: only a true gap starts a new group.
std::vector<std::vector<size_t>> overlapping_groups(const std::vector<std::pair<TimeNs, TimeNs>>& spans);

// "ranks 0, 2" / "rank 1", in rank order.
std::string ranks_text(std::vector<int64_t> ranks);

// What says these ranks may not be one job, one line each: ranks that disagree on their device
// type or on distributedInfo.world_size, or whose clocks share no moment at all (the traces'
// first to last events, as recorded). Empty for a job that looks like one.
std::vector<std::string> job_warnings(const Job& job);
}  // namespace sl

namespace sl {
// Calls fn(i) for i in [0, n) on up to `threads` threads (0 = one per core), each taking the
// next index in turn; returns when all are done. The job's loader and analyses share it.
void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)>& fn);
}  // namespace sl

namespace sl {
// `info DIR`: one line per rank (file, where its rank came from, status, counts) and the files
// skipped; JSON: {"job", "ranks": [{rank, file, rank_source, status, error, trace}], "skipped",
// "warnings", "load_seconds"} with each rank's `info` object as `trace`. load_seconds < 0 leaves it out.
std::string job_info_json(const Job& job, double load_seconds = -1);
// The `ranks` array (each line starting with `indent`) and the `skipped` array of that object.
std::string job_ranks_json(const Job& job, std::string_view indent);
std::string job_skipped_json(const Job& job);
std::string job_warnings_json(const Job& job);  // job_warnings() as a JSON array of strings
std::string job_info_text(const Job& job, double load_seconds = -1);
}  // namespace sl
