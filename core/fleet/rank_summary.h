// A rank summary: what the fleet's job tables and rank overview need from one rank, and nothing
// more, so that a run of thousands of ranks reduces on one client without loading any trace.
// `analysis` holds exactly what analyze_collectives reads (busy/compute intervals, idle gaps,
// collective calls, iteration lengths, the clock origin), so the fleet's tables come from the
// same code as `report DIR`. The rest is for people: a busy/idle-cause pyramid for drawing any
// zoom, per-stream totals, the top kernels, a few insights, the device and distributedInfo.
//
// Serialised as a section container (sections.h, magic "SLRANKS\0"): META, ANLS (the analysis
// inputs), VIEW (pyramid, streams, kernels, insights) and TIME (load and map seconds, the only
// fields that differ between two runs of the same map, kept apart so files compare equal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/collectives.h"
#include "core/job/job.h"

namespace sl::fleet {

// One level of the busy profile over the rank's GPU span: per bin the busy fraction (0..255)
// and the idle cause with most idle time in it (IdleCause, -1 none).
struct ProfileLevel {
  std::vector<uint8_t> busy;
  std::vector<int8_t> cause;
};

// Levels from the finest (about span/65,536 a bin) to one bin, each a quarter of the one before.
struct Profile {
  TimeNs start = 0, end = 0;  // rank-local (store-relative) GPU span
  std::vector<ProfileLevel> levels;
};
constexpr size_t kFinestBins = 65536;

struct StreamTotal {
  int64_t stream = 0;
  uint64_t activities = 0;  // GPU work rows
  TimeNs busy = 0;          // sum of their durations
};

struct TopKernel {
  std::string name;
  uint64_t count = 0;
  TimeNs total = 0;
};

enum class RankStatus : uint8_t { Ok, Failed };

struct RankSummary {
  int64_t rank = -1;
  RankSource rank_source = RankSource::FileOrder;
  std::string path;  // the rank's source file, as the map was given it
  RankStatus status = RankStatus::Failed;
  std::string error;  // failed: why (LoadError::to_string)
  std::string device;            // GPU name(s) of deviceProperties, "" when none
  std::string distributed_info;  // the trace's distributedInfo, raw JSON, "" when absent
  std::string host;              // hostname when the trace names one
  analysis::RankSummary analysis;  // store = null
  std::vector<StreamTotal> streams;
  std::vector<TopKernel> top_kernels;  // most total time first, up to kTopKernels
  std::vector<std::string> insights;
  Profile profile;
  // Timing fields (TIME): differ between runs.
  double load_seconds = 0, map_seconds = 0;

  bool ok() const { return status == RankStatus::Ok; }
};
constexpr size_t kTopKernels = 10;

// The map step on one file: loads it (through `cache` when given), names its rank as a job does
// (`file_order`: its position among the run's rank files) and summarises it. Never throws; a
// rank that fails to load comes back failed with its error.
RankSummary map_rank_file(const std::string& path, size_t file_order, const CacheSettings* cache);
// A rank whose map could not run (its process died): failed with `error`, named as a job would.
RankSummary failed_rank(const std::string& path, size_t file_order, const std::string& error);
// Summarises a loaded rank (the part of map_rank_file after loading).
RankSummary summarize_job_rank(const JobRank& rank);

// The idle cause with most gap time on the rank, none when it never idles.
std::optional<analysis::IdleCause> top_idle_cause(const analysis::RankSummary& a);

// The serialised form; `timing` false leaves TIME out (the fleet file keeps timings elsewhere).
std::string serialize_rank_summary(const RankSummary& s, bool timing = true);
// Parses one; on damage returns false and sets `error` (what, and the byte offset).
bool parse_rank_summary(std::string_view bytes, RankSummary& out, std::string& error);

// The cheap part of a summary: META and TIME (every section's checksum checked, nothing else
// decompressed).
bool parse_rank_meta(std::string_view bytes, RankSummary& out, std::string& error);
// The same, then `bytes` made the summary without TIME (as a fleet file keeps it), in place.
bool pack_rank_summary(std::string& bytes, RankSummary& out, std::string& error);
// Only what analyze_collectives reads (ANLS), with its rank from META.
bool parse_rank_analysis(std::string_view bytes, analysis::RankSummary& out, std::string& error);

// The collectives' first pass straight from a summary's ANLS, without decoding it into a summary:
// rank `rank`'s columns and calls to `sink`, and its top idle cause. False on damage (without
// saying what: parse_rank_analysis names it), `sink` then given part of the rank. `checked`: the
// bytes' checksums were verified before (a Fleet's packed summaries), not again.
bool read_rank_calls(std::string_view bytes, int64_t rank, analysis::CallSink& sink,
                     std::optional<analysis::IdleCause>& top_cause, bool checked = false);
// Only the ANLS section's origin, end, iteration lengths, busy and compute intervals and idle
// gaps into `out` (what a last rank's cause reads; the rest of `out` untouched). False on damage
// (parse_rank_analysis names it).
bool read_rank_activity(std::string_view bytes, analysis::RankSummary& out, bool checked = false);

// Reads/writes a summary file; writing is atomic (a temporary beside it, then a rename).
bool write_file_atomically(const std::string& path, std::string_view bytes, std::string& error);
bool read_whole_file(const std::string& path, std::string& bytes, std::string& error);

}  // namespace sl::fleet
