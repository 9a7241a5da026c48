#include "core/fleet/fleet_report.h"

#include <algorithm>

#include "core/analysis/job_overview.h"
#include "core/analysis/job_report.h"
#include "core/analysis/report_tables.h"

namespace sl::fleet {

using analysis::Table;

namespace {

bool named(const FleetReportOptions& o, std::string_view name) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
}

// As run_job_report: the collectives run when --only names none, or names a job table.
bool shows_collectives(const FleetReportOptions& o) {
  return o.only.empty() || std::any_of(o.only.begin(), o.only.end(), [](auto& n) { return analysis::is_job_table_name(n); });
}

bool shows_fleet_tables(const FleetReportOptions& o) {
  return o.only.empty() || std::any_of(o.only.begin(), o.only.end(), [](auto& n) { return is_fleet_table_name(n); });
}

void keep_rank(std::vector<Table>& tables, int64_t rank) {
  for (Table& t : tables) {
    auto col = std::find(t.columns.begin(), t.columns.end(), "rank");
    if (col == t.columns.end()) continue;
    size_t k = size_t(col - t.columns.begin());
    std::erase_if(t.rows, [&](const std::vector<analysis::Cell>& row) { return row[k].kind == analysis::Cell::Int && row[k].i != rank; });
  }
}

}  // namespace

void add_rank_report(FleetReportOptions& o, int64_t rank, analysis::Report report) {
  std::vector<analysis::RankReport> one;
  one.push_back({rank, std::move(report)});
  o.rank_tables = analysis::merge_rank_tables(one);
  for (const auto& n : one[0].report.notes) o.rank_notes.push_back("rank " + std::to_string(rank) + ": " + n);
}

std::vector<Table> fleet_report_tables(const Fleet& f, const FleetReportOptions& o) {
  std::vector<Table> out = o.rank_tables;
  std::vector<Table> job;
  if (shows_collectives(o))
    for (Table& t : analysis::collective_tables(f.collectives))
      if (named(o, t.name)) job.push_back(std::move(t));
  // `outliers` is a job table (report DIR has it too), kept with the fleet's own.
  for (const Table& t : f.tables)
    if (named(o, t.name) && (analysis::is_job_table_name(t.name) ? shows_collectives(o) : shows_fleet_tables(o)))
      job.push_back(t);
  if (o.only_rank) keep_rank(job, *o.only_rank);
  for (Table& t : job) out.push_back(std::move(t));
  return out;
}

// In run_job_report's order: failed ranks, the rank's own notes, the collectives'; then the fleet's.
std::vector<std::string> fleet_report_notes(const Fleet& f, const FleetReportOptions& o) {
  std::vector<std::string> out;
  for (const RankSummary& r : f.ranks)
    if (!r.ok() && (!o.only_rank || r.rank == *o.only_rank))
      out.push_back("rank " + std::to_string(r.rank) + " failed to load: " + r.error);
  if (o.only_rank && !f.find(*o.only_rank)) out.push_back("no rank " + std::to_string(*o.only_rank) + " in the job");
  for (const auto& n : o.rank_notes) out.push_back(n);
  if (shows_collectives(o))
    for (const auto& n : f.collectives.notes) out.push_back(n);
  if (shows_fleet_tables(o))
    for (const auto& n : f.fleet_notes) out.push_back(n);
  return out;
}

// As render_job_text: the job's insights (the straggler, then each rank's own insights as its
// summary keeps them), the stragglers, clock offsets and outliers, the other tables, the collectives last.
std::string render_fleet_text(const Fleet& f, const FleetReportOptions& o) {
  std::string out = "mode: " + std::string(analysis::mode_name(o.mode)) + "   job: " + f.source + "   ranks: " +
                    std::to_string(f.ranks.size()) + " (" + std::to_string(f.loaded_count()) + " loaded)\n";
  out += "\n== job insights ==\n";
  const size_t insights_start = out.size();
  if (shows_collectives(o))
    if (std::string worst = analysis::straggler_insight(f.collectives); !worst.empty()) out += "stragglers: " + worst + "\n";
  if (o.only.empty())  // the ranks' insights are the full report's, as report DIR prints them
    for (size_t k = 0; k < f.ranks.size(); ++k) {
      if (o.only_rank && f.ranks[k].rank != *o.only_rank) continue;
      RankSummary r;
      std::string error;
      if (!f.summary(k, r, error) || r.insights.empty()) continue;
      out += "rank " + std::to_string(r.rank) + ":\n";
      for (size_t i = 0; i < r.insights.size(); ++i) out += "  " + std::to_string(i + 1) + ". " + r.insights[i] + "\n";
    }
  if (out.size() == insights_start) out += "(none)\n";
  std::vector<Table> tables = fleet_report_tables(f, o);
  auto emit = [&](const Table& t) { analysis::append_text_table(out, t); };
  for (const char* first : {"stragglers", "clock_offsets", "outliers"})
    for (const Table& t : tables)
      if (t.name == first) emit(t);
  for (const Table& t : tables)
    if (t.name != "stragglers" && t.name != "clock_offsets" && t.name != "outliers" && t.name != "collectives" && t.name != "kernel_durations" &&
        t.name != "launch_histograms")
      emit(t);
  for (const Table& t : tables)
    if (t.name == "collectives") emit(t);
  std::vector<std::string> notes = fleet_report_notes(f, o);
  if (!notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& n : notes) out += "  - " + n + "\n";
  }
  return out;
}

std::string render_fleet_json(const Fleet& f, const FleetReportOptions& o) {
  std::string out = "{\n";
  out += "  \"mode\": " + analysis::json_escape(analysis::mode_name(o.mode)) + ",\n";
  out += "  \"rank\": " + (o.only_rank ? std::to_string(*o.only_rank) : std::string("null")) + ",\n";
  out += "  \"job\": {\"source\": " + analysis::json_escape(f.source) + ", \"aligned\": " +
         (f.collectives.aligned ? "true" : "false") + ", \"fleet\": true, \"ranks\": " + std::to_string(f.ranks.size()) +
         ", \"loaded\": " + std::to_string(f.loaded_count()) + "},\n";
  analysis::append_tables_json(out, fleet_report_tables(f, o), fleet_report_notes(f, o));
  return out;
}

std::string fleet_info_text(const Fleet& f, const std::string& path) {
  std::string out = "fleet " + path + "\n";
  out += "source          " + f.source + "\n";
  out += "ranks           " + std::to_string(f.ranks.size()) + " (" + std::to_string(f.loaded_count()) + " loaded, " +
         std::to_string(f.ranks.size() - f.loaded_count()) + " failed)\n";
  out += "collectives     " + std::to_string(f.collectives.instances.size()) + " instances, clocks " +
         (f.collectives.aligned ? "aligned" : "as recorded") + "\n";
  if (std::string worst = analysis::straggler_insight(f.collectives); !worst.empty()) out += "stragglers      " + worst + "\n";
  for (const Table& t : f.tables)
    if (t.name == "ranks") analysis::append_text_table(out, t);
  return out;
}

std::string fleet_info_json(const Fleet& f, const std::string& path) {
  std::string out = "{\n  \"fleet\": " + analysis::json_escape(path) + ",\n  \"source\": " + analysis::json_escape(f.source) +
                    ",\n  \"instances\": " + std::to_string(f.collectives.instances.size()) + ",\n";
  std::vector<Table> ranks;
  for (const Table& t : f.tables)
    if (t.name == "ranks") ranks.push_back(t);
  analysis::append_tables_json(out, ranks, f.fleet_notes);
  return out;
}

}  // namespace sl::fleet
