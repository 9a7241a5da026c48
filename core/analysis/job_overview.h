// The rank overview of a job, GUI-free so the window and `render --view ranks` draw the same
// thing: every loaded rank's GPU activity and idle gaps (by cause) on the job clock, binned on
// demand into pixel columns, plus the collectives analysis that links the ranks.
//
// Each rank is summarised once (one pass over its event table, which is then dropped; see
// RankSummary), and everything here keeps rank-local times plus a shift: the summary and idle
// coverage are shared (immutable) between the overviews of one job, so re-aligning the clocks
// (realign_job_overview) redoes only the offsets, the matching and the shifts. Binning costs O(columns · log n) per rank (prefix sums over
// merged intervals), so a view re-bins on zoom changes only, never per event per frame.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/collectives.h"
#include "core/analysis/idle_time.h"
#include "core/analysis/interval_index.h"
#include "core/job/job.h"

namespace sl::analysis {

// Merged intervals with running totals; `cumulative` bins a row of columns in one pass.
using Coverage = IntervalIndex;
using IdleCoverage = std::array<Coverage, kIdleCauseCount>;  // by IdleCause
// A rank's idle gaps merged per cause (rank-local).
IdleCoverage idle_coverage(const IdleCauses& causes);

// The clock-independent parts (summary, idle coverage) are built once per rank and shared,
// read-only, by every overview of the job: a realign copies the pointers, not the data, and an
// overview being drawn stays valid while another thread builds the realigned one.
struct RankActivity {
  int64_t rank = 0;
  size_t job_index = 0;  // into Job::ranks
  TimeNs shift = 0;      // add to a rank-local store time (relative to its origin) for job time
  TimeNs start = 0, end = 0;                   // the rank's GPU activity span, job clock
  std::shared_ptr<const RankSummary> summary;  // GPU busy, idle causes, collective calls (rank-local)
  std::shared_ptr<const IdleCoverage> idle;    // idle gaps of every stream per cause, merged, rank-local
};

// Column-binned profile of one rank: `busy` in [0, 1]; `cause` the idle cause with the most gap
// time in the column (by IdleCause), -1 where there is none.
struct RankBins {
  std::vector<float> busy;
  std::vector<int8_t> cause;
};

struct JobOverview {
  CollectiveAnalysis collectives;   // ranks in the order of `ranks` below
  std::vector<RankActivity> ranks;  // loaded ranks, by rank
  TimeNs span = 0;                  // job clock end (0 = earliest rank origin)
};

// Builds each loaded rank's table and idle causes (in parallel), the collectives (aligned as
// `options` asks) and the per-rank activity on the job clock.
JobOverview build_job_overview(const Job& job, const CollectiveOptions& options = {});
// The same job with its clocks aligned as `options` asks, reusing `current`'s rank summaries (no
// pass over any rank's events): redoes the offsets, the collective matching, the stragglers and
// the shifts. Equal to build_job_overview(job, options); `current` is only read.
JobOverview realign_job_overview(const JobOverview& current, const CollectiveOptions& options);

// Bins [t0, t1) (job clock) into `columns` equal columns.
RankBins bin_rank(const RankActivity& rank, TimeNs t0, TimeNs t1, int columns);
// The same in two steps, so that many ranks share one set of edges: the columns' edges (job
// clock, strictly increasing; empty when there are no columns), then one rank at those edges.
std::vector<TimeNs> column_edges(TimeNs t0, TimeNs t1, int columns);
RankBins bin_rank(const RankActivity& rank, const std::vector<TimeNs>& edges);

// The straggler row of `rank`, or null.
const StragglerRow* straggler_of(const CollectiveAnalysis& a, int64_t rank);

// The rank that made the others wait longest (most delay caused, late at least once), or null.
const StragglerRow* worst_straggler(const CollectiveAnalysis& a);

// "rank 5 made the others wait 38.0 ms over 12 all-reduces, mostly after data-loading stalls":
// the rank that caused the most delay, empty when no rank was ever last with a skew.
std::string straggler_insight(const CollectiveAnalysis& a);
// A straggler's `top_cause` or an instance's `last_cause` as the insight says it: "data_loading"
// → "data-loading stalls"; compute and communication as they are.
std::string cause_phrase(std::string_view cause);

}  // namespace sl::analysis
