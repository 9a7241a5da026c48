// The reduce of a fleet and its file. The reduce runs the job report's own cross-rank code
// (analyze_collectives, collective_tables) on the rank summaries, so a fleet's `collectives`,
// `stragglers` and `clock_offsets` equal `report DIR`'s; on top it adds the per-rank table, the
// outlier ranks (iteration time or wait beyond k·MAD above the median) and the nodes (by
// --gpus-per-node, else by the traces' host) with intra- vs inter-node skew.
//
// A `.slfleet` file (sections.h, magic "SLFLEET\0"): HEAD (source, options, fleet notes), COLL (the
// collectives analysis, from which the three job tables are rebuilt on open), TABL (ranks,
// outliers, nodes), one RANK section per rank summary (its source path inside), and TIME last
// (reduce and per-rank map seconds, the only fields that differ between two runs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/collectives.h"
#include "core/analysis/job_overview.h"
#include "core/analysis/report_tables.h"
#include "core/fleet/rank_summary.h"

namespace sl::fleet {

struct FleetOptions {
  analysis::CollectiveOptions collectives;
  std::optional<int64_t> gpus_per_node;  // unset: group ranks by the traces' host, when named
  std::string source;                    // what the run was given (a folder, a list), for people
};

struct Fleet {
  std::string source;
  std::optional<int64_t> gpus_per_node;
  // By rank, failed ones included: META and TIME (status, rank, path, host, ..., seconds); the
  // rest of each summary stays packed, decoded when asked (summary()), so that a fleet of
  // thousands of ranks opens without decoding any.
  std::vector<RankSummary> ranks;
  std::vector<std::string_view> packed;  // per rank: its serialised summary without TIME
  std::shared_ptr<const void> storage;   // what `packed` (and a mapped file's arrivals) point into
  analysis::CollectiveAnalysis collectives;  // over the loaded ranks, in rank order
  std::vector<analysis::Table> tables;   // ranks, outliers, nodes
  std::vector<std::string> fleet_notes;  // about the fleet's own tables (nodes); the others are
                                         // rebuilt as `report DIR` words them (fleet_report.h)
  double reduce_seconds = 0;             // timing field

  size_t loaded_count() const;
  const RankSummary* find(int64_t rank) const;
  // Rank i's whole summary (its META and TIME as ranks[i]); false on damage, with `error`.
  bool summary(size_t i, RankSummary& out, std::string& error) const;
};

// Names of the fleet's own tables (after the job tables).
bool is_fleet_table_name(std::string_view name);

// Sorts the summaries by rank and reduces them. False (with `error`) when two claim one rank.
bool reduce_fleet(std::vector<RankSummary> ranks, const FleetOptions& options, Fleet& out, std::string& error);
// The same from serialised summaries (as fleet-map writes them), each decoded only while the
// collectives read it; false (with `error`, naming the summary by `names` when given, else by its
// position) on a damaged one.
bool reduce_fleet_bytes(std::vector<std::string> summaries, const FleetOptions& options, Fleet& out, std::string& error,
                        const std::vector<std::string>* names = nullptr);

// The job tables (collectives, stragglers, clock_offsets), then ranks, outliers, nodes.
std::vector<analysis::Table> fleet_tables(const Fleet& fleet);

std::string serialize_fleet(const Fleet& fleet);
// On damage false, with `error` naming the section and byte offset; never reads out of bounds.
bool parse_fleet(std::string_view bytes, Fleet& out, std::string& error);
bool write_fleet_file(const std::string& path, const Fleet& fleet, std::string& error);
bool read_fleet_file(const std::string& path, Fleet& out, std::string& error);
// The job tab's view of a fleet (views/job_view.h): its ranks as a Job with no store loaded
// (each rank's number, source path and error), and the rank overview built from the summaries
// alone (the same collectives, shifts and bins a loaded job gives). A rank's store loads from
// its path when the tab expands it.
std::unique_ptr<Job> job_of_fleet(const Fleet& fleet);
analysis::JobOverview overview_of_fleet(const Fleet& fleet, const analysis::CollectiveOptions& options = {});

// The node of each rank the fleet could place (by --gpus-per-node, else by the traces' host), as
// its nodes table groups them; empty when it groups none.
std::map<int64_t, int64_t> node_of_ranks(const Fleet& fleet);

// True when the file starts with the fleet magic (how the CLI tells a fleet from a trace).
bool is_fleet_file(const std::string& path);

}  // namespace sl::fleet
