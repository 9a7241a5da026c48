// `report RUN.slfleet` and `info RUN.slfleet`: the job tables as `report DIR` prints them (the
// same header, straggler line, table text and notes, so on one job the two agree byte for byte),
// then the fleet's own tables. With --rank, the caller loads that rank's trace and hands its
// single-rank tables in (`rank_tables`), as `report DIR --rank R` shows them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/report.h"
#include "core/fleet/fleet.h"

namespace sl::fleet {

struct FleetReportOptions {
  analysis::Mode mode = analysis::Mode::Sightline;
  std::vector<std::string> only;          // table names; empty: every job and fleet table
  std::optional<int64_t> only_rank;       // rows of that rank only (tables with a rank column)
  std::vector<analysis::Table> rank_tables;  // --rank: that rank's own tables (merge_rank_tables)
  std::vector<std::string> rank_notes;       // --rank: that rank's report notes
};

// The rank's single-rank tables and notes as `report DIR --rank R` lists them.
void add_rank_report(FleetReportOptions& o, int64_t rank, analysis::Report report);

std::vector<analysis::Table> fleet_report_tables(const Fleet& fleet, const FleetReportOptions& o);
std::vector<std::string> fleet_report_notes(const Fleet& fleet, const FleetReportOptions& o);
std::string render_fleet_text(const Fleet& fleet, const FleetReportOptions& o);
std::string render_fleet_json(const Fleet& fleet, const FleetReportOptions& o);

// `info RUN.slfleet`: what the file holds, one line per rank.
std::string fleet_info_text(const Fleet& fleet, const std::string& path);
std::string fleet_info_json(const Fleet& fleet, const std::string& path);

}  // namespace sl::fleet
