// The report of a job: every single-rank analysis on each rank (each table with its `rank`
// column), then the cross-rank collectives, stragglers and clock offsets.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/collectives.h"
#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/job/job.h"

namespace sl::analysis {

struct JobReportOptions {
  ReportOptions report;               // per rank; `report.table.rank` is set from the job
  CollectiveOptions collectives;
  std::optional<int64_t> only_rank;   // --rank: per-rank tables and rows of that rank only
  unsigned threads = 0;               // ranks analysed in parallel; 0 = one per core
};

struct RankReport {
  int64_t rank = 0;
  Report report;
};

struct JobReport {
  std::vector<RankReport> ranks;                  // loaded ranks (only_rank: just that one)
  std::optional<CollectiveAnalysis> collectives;  // unless --only leaves them out
  std::vector<Table> tables;                      // merged per-rank tables, then the job tables
  std::vector<std::string> notes;
  std::vector<std::pair<std::string, double>> seconds;
};

// Names --only accepts beyond the single-rank analyses.
bool is_job_table_name(std::string_view name);

JobReport run_job_report(const Job& job, const JobReportOptions& options);

// One table per name over all ranks; a table without a `rank` column gets one in front.
std::vector<Table> merge_rank_tables(const std::vector<RankReport>& ranks);

std::string render_job_json(const Job& job, const JobReport& report, const JobReportOptions& options);
std::string render_job_text(const Job& job, const JobReport& report, const JobReportOptions& options,
                            const TextLayout& layout = {});

}  // namespace sl::analysis
