#include "core/analysis/job_report.h"

#include <algorithm>
#include <chrono>

#include "core/analysis/insights.h"
#include "core/analysis/job_overview.h"
#include "core/analysis/outlier_ranks.h"


namespace sl::analysis {

bool is_job_table_name(std::string_view n) {
  return n == "collectives" || n == "stragglers" || n == "clock_offsets" || n == "outliers";
}

namespace {

bool wants_collectives(const ReportOptions& o) {
  if (o.only.empty()) return true;
  return std::any_of(o.only.begin(), o.only.end(), [](const std::string& n) { return is_job_table_name(n); });
}

// Keeps only the job tables --only asked for (all of them when none was named).
void keep_wanted(std::vector<Table>& tables, const ReportOptions& o) {
  if (o.only.empty()) return;
  std::erase_if(tables, [&](const Table& t) { return std::find(o.only.begin(), o.only.end(), t.name) == o.only.end(); });
}

void keep_rank(std::vector<Table>& tables, int64_t rank) {
  for (Table& t : tables) {
    auto col = std::find(t.columns.begin(), t.columns.end(), "rank");
    if (col == t.columns.end()) continue;
    size_t k = size_t(col - t.columns.begin());
    std::erase_if(t.rows, [&](const std::vector<Cell>& row) { return row[k].kind == Cell::Int && row[k].i != rank; });
  }
}

// (HTA) get_gpu_kernel_breakdown over a job: each rank's type shares (whole µs) summed per
// label over the ranks, largest first, share of the job total rounded to 1 decimal.
Table hta_kernel_types_over_ranks(const std::vector<RankReport>& ranks) {
  std::vector<std::pair<std::string, TimeNs>> sums;  // label order of first appearance
  for (const RankReport& rr : ranks) {
    if (!rr.report.kernels) continue;
    for (const KernelTypeShare& share : rr.report.kernels->by_type) {
      auto it = std::find_if(sums.begin(), sums.end(), [&](auto& p) { return p.first == share.label; });
      if (it == sums.end()) sums.push_back({share.label, share.time});
      else it->second += share.time;
    }
  }
  std::stable_sort(sums.begin(), sums.end(), [](auto& a, auto& b) { return a.second > b.second; });
  TimeNs total = 0;
  for (auto& [label, t] : sums) total += t;
  Table out("kernel_type_breakdown", {"kernel_type", "sum_us", "pct"});
  for (auto& [label, t] : sums)
    out.rows.push_back({Cell::str(label), Cell::ns(t),
                        Cell::num(total > 0 ? round_to(double(t) / double(total) * 100.0, 1) : 0.0)});
  return out;
}

// (HTA) the per-kernel tables over a job are sorted by kernel type, name, then rank.
void sort_by_type_name_rank(Table& t) {
  auto col = [&](const char* name) {
    return size_t(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
  };
  size_t type = col("kernel_type"), name = col("name"), rank = col("rank");
  if (type >= t.columns.size() || name >= t.columns.size() || rank >= t.columns.size()) return;
  std::stable_sort(t.rows.begin(), t.rows.end(), [&](const std::vector<Cell>& a, const std::vector<Cell>& b) {
    if (a[type].s != b[type].s) return a[type].s < b[type].s;
    if (a[name].s != b[name].s) return a[name].s < b[name].s;
    return a[rank].i < b[rank].i;
  });
}

// HTA's multi-rank outputs differ from the per-rank concatenation in two tables (see README).
void apply_hta_job_rules(std::vector<Table>& tables, const std::vector<RankReport>& ranks) {
  for (Table& t : tables) {
    if (t.name == "kernel_type_breakdown") t = hta_kernel_types_over_ranks(ranks);
    else if (t.name == "kernel_breakdown" || t.name == "kernel_breakdown_full") sort_by_type_name_rank(t);
  }
}

}  // namespace

std::vector<Table> merge_rank_tables(const std::vector<RankReport>& ranks) {
  std::vector<Table> merged;
  for (const RankReport& rr : ranks) {
    for (Table& t : report_tables(rr.report)) {
      bool has_rank = std::find(t.columns.begin(), t.columns.end(), "rank") != t.columns.end();
      auto it = std::find_if(merged.begin(), merged.end(), [&](const Table& m) { return m.name == t.name; });
      if (it == merged.end()) {
        std::vector<std::string> cols = t.columns;
        if (!has_rank) cols.insert(cols.begin(), "rank");
        merged.emplace_back(t.name, std::move(cols));
        it = merged.end() - 1;
      }
      for (auto& row : t.rows) {
        if (!has_rank) row.insert(row.begin(), Cell::integer(rr.rank));
        it->rows.push_back(std::move(row));
      }
    }
  }
  return merged;
}

namespace {

void release_rows(EventTable& t) {
  std::vector<Row>().swap(t.rows);
  std::vector<uint32_t>().swap(t.gpu);
  std::vector<uint32_t>().swap(t.cpu);
}

bool wants_rank_tables(const ReportOptions& o) {
  if (o.only.empty()) return true;
  return std::any_of(o.only.begin(), o.only.end(), [](const std::string& n) { return !is_job_table_name(n); });
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// One parallel pass over the loaded ranks: each runs its full report when its per-rank tables are
// wanted (every rank, or the --rank one), and is summarised for the collectives (reusing that
// report's table and idle causes in Sightline mode; otherwise from a table dropped right after).
// A job summary alone (--only collectives,stragglers,...) runs no per-rank report at all.
JobReport run_job_report(const Job& job, const JobReportOptions& o) {
  JobReport out;
  const bool reports = wants_rank_tables(o.report), summaries = wants_collectives(o.report);
  std::vector<const JobRank*> loaded;
  std::vector<int> report_of;  // per loaded rank: index into out.ranks, -1 when no report is wanted
  for (const JobRank& r : job.ranks) {
    bool chosen = !o.only_rank || r.rank == *o.only_rank;
    if (!r.ok()) {
      if (chosen) out.notes.push_back("rank " + std::to_string(r.rank) + " failed to load: " + r.error.to_string());
      continue;
    }
    if (!chosen && !summaries) continue;
    loaded.push_back(&r);
    report_of.push_back(chosen && reports ? int(out.ranks.size()) : -1);
    if (chosen && reports) out.ranks.push_back({r.rank, {}});
  }
  if (o.only_rank && !job.find(*o.only_rank)) out.notes.push_back("no rank " + std::to_string(*o.only_rank) + " in the job");
  std::vector<RankSummary> summary(summaries ? loaded.size() : 0);
  auto t0 = std::chrono::steady_clock::now();
  parallel_for(loaded.size(), o.threads, [&](size_t i) {
    const JobRank& r = *loaded[i];
    Report* report = nullptr;
    if (report_of[i] >= 0) {
      ReportOptions ro = o.report;
      ro.threads = 1;  // the ranks already run in parallel
      ro.table.rank = r.rank;
      // (HTA) the rank regex reads the file text; the job's rank already is what it would find.
      report = &(out.ranks[size_t(report_of[i])].report = run_report(*r.store, ro));
    }
    if (summaries) {
      // Reuse a Sightline-mode report's table and idle causes (HTA tables follow other rules).
      if (report && report->table.mode == Mode::Sightline && report->causes)
        summary[i] = summarize_rank(r.rank, *r.store, report->table, *report->causes);
      else
        summary[i] = summarize_rank(r.rank, *r.store);
    }
    // The rank's tables need the analyses' results and the table's mode and rank, not its rows
    // (critical path edges aside): drop them, so the job holds one event table per thread at a
    // time instead of one per rank (~10 MB each for a 35 MB rank).
    if (report && !report->critical_path) release_rows(report->table);
  });
  out.seconds.push_back({"ranks", seconds_since(t0)});
  for (const RankReport& rr : out.ranks)
    for (const auto& n : rr.report.notes) out.notes.push_back("rank " + std::to_string(rr.rank) + ": " + n);
  out.tables = merge_rank_tables(out.ranks);
  if (o.report.table.mode == Mode::Hta) apply_hta_job_rules(out.tables, out.ranks);
  if (summaries) {
    auto t1 = std::chrono::steady_clock::now();
    std::vector<const RankSummary*> inputs;
    for (const RankSummary& s : summary) inputs.push_back(&s);
    out.collectives = analyze_collectives(inputs, o.collectives);
    std::vector<Table> job_tables = collective_tables(*out.collectives);
    job_tables.push_back(outliers_table(outlier_ranks(out.collectives->stragglers)));
    keep_wanted(job_tables, o.report);
    if (o.only_rank) keep_rank(job_tables, *o.only_rank);
    for (auto& t : job_tables) out.tables.push_back(std::move(t));
    for (const auto& n : out.collectives->notes) out.notes.push_back(n);
    out.seconds.push_back({"collectives", seconds_since(t1)});
  }
  return out;
}

namespace {

std::string job_json(const Job& job, const JobReport& report) {
  std::string o = "{\"source\": " + json_escape(job.source) + ", \"aligned\": ";
  o += report.collectives && report.collectives->aligned ? "true" : "false";
  return o + ", \"ranks\": " + job_ranks_json(job, "    ") + ", \"skipped\": " + job_skipped_json(job) +
         ", \"warnings\": " + job_warnings_json(job) + "}";
}

}  // namespace

std::string render_job_json(const Job& job, const JobReport& report, const JobReportOptions& opt) {
  std::string o = "{\n";
  o += "  \"mode\": " + json_escape(mode_name(opt.report.table.mode)) + ",\n";
  o += "  \"rank\": " + (opt.only_rank ? std::to_string(*opt.only_rank) : std::string("null")) + ",\n";
  o += "  \"job\": " + job_json(job, report) + ",\n";
  append_tables_json(o, report.tables, report.notes);
  return o;
}

namespace {

// The job's findings: the straggler (as the job tab's Insights show it), then each rank's
// headline (its costliest findings), so a job's report reads like a rank's from its first line.
std::string job_insights_text(const JobReport& report) {
  std::string o = "\n== job insights ==\n";
  if (report.collectives)
    if (std::string worst = straggler_insight(*report.collectives); !worst.empty()) o += "stragglers: " + worst + "\n";
  for (const RankReport& rr : report.ranks) {
    std::string headline = headline_text(rr.report);
    size_t body = headline.find("==\n");  // past the headline's own title
    if (body == std::string::npos) continue;
    std::string lines = headline.substr(body + 3);  // indented under the rank's own line
    for (size_t nl = lines.find('\n'); nl != std::string::npos && nl + 1 < lines.size(); nl = lines.find('\n', nl + 3))
      lines.insert(nl + 1, "  ");
    o += "rank " + std::to_string(rr.rank) + ": " + lines;
  }
  return o.ends_with("==\n") ? o + "(none)\n" : o;
}

bool is_job_table(const Table& t) { return is_job_table_name(t.name); }

}  // namespace

// The job's insights and stragglers first, then the per-rank tables, then the collectives
// instance by instance (the longest table, and the detail behind the stragglers).
std::string render_job_text(const Job& job, const JobReport& report, const JobReportOptions& opt, const TextLayout& layout) {
  std::string o = "mode: " + std::string(mode_name(opt.report.table.mode)) + "   job: " + job.source + "   ranks: " +
                  std::to_string(job.ranks.size()) + " (" + std::to_string(job.loaded_count()) + " loaded)\n";
  o += job_insights_text(report);
  auto emit = [&](const Table& t) { append_text_table(o, t, SIZE_MAX, 60, layout); };
  for (const char* first : {"stragglers", "clock_offsets", "outliers"})
    for (const Table& t : report.tables)
      if (t.name == first) emit(t);
  // Each rank's report decides which of its tables text prints (all ranks share the options).
  const Report* any_rank = report.ranks.empty() ? nullptr : &report.ranks.front().report;
  for (const Table& t : report.tables)
    if (!is_job_table(t) && any_rank && is_text_table(t.name, *any_rank)) emit(t);
  for (const Table& t : report.tables)
    if (t.name == "collectives") emit(t);
  if (!report.notes.empty()) {
    o += "\nnotes:\n";
    for (const auto& n : report.notes) o += "  - " + n + "\n";
  }
  return o;
}

}  // namespace sl::analysis
