// `sightline report TRACE`: every analysis of analyses.md as text, JSON or CSV (cli.md), and
// `sightline bench report TRACE`: how long the analyses take after loading.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include "core/analysis/common.h"
#include "app/commands.h"
#include "app/fleet_cli.h"
#include "core/fleet/fleet_report.h"
#include "app/job_open.h"
#include "core/analysis/job_overview.h"
#include "core/analysis/job_report.h"
#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/import/trace_loader.h"
#include "core/report/trace_info.h"

namespace sl::cli {
namespace {

struct ReportArgs {
  std::string file;
  std::string mode = "sightline";
  std::optional<int64_t> rank;
  std::string only;
  bool explain = false;
  std::string op;
  std::string format = "text";
  std::string table;
  std::string tsys = "4.5";
  std::vector<std::string> job;
  std::string align = "auto";
  std::optional<std::string> annotation;  // unset: ProfilerStep, or the whole trace where it is absent
  std::optional<int64_t> instance;
  std::string memory;                     // --memory SNAPSHOT
  std::optional<double> memory_offset_us;  // --memory-offset
  bool wide = false;                       // --wide: names whole in text tables
  std::string rank_from;                   // --rank-from: a job's ranks from this source
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Names --only accepts: the analyses and the tables they produce.
bool known_name(const std::string& n) {
  static const char* tables[] = {"temporal_breakdown_streams", "idle_interval_stats", "queue_length_summary",
                                 "memory_bw_summary", "launch_histograms", "kernel_breakdown_full",
                                 "critical_path_summary"};
  const auto& names = analysis::analysis_names();
  if (std::find(names.begin(), names.end(), n) != names.end()) return true;
  if (analysis::is_job_table_name(n) || fleet::is_fleet_table_name(n)) return true;
  return std::any_of(std::begin(tables), std::end(tables), [&](const char* t) { return n == t; });
}

// Builds the options; on a usage error prints it and returns false (exit code 2).
bool make_options(const ReportArgs& a, analysis::ReportOptions& o) {
  o.table.mode = a.mode == "hta" ? analysis::Mode::Hta : analysis::Mode::Sightline;
  o.table.rank = a.rank;
  o.only = split_list(a.only);
  for (const auto& n : o.only)
    if (!known_name(n)) {
      std::fprintf(stderr, "sightline report: unknown analysis '%s' in --only\n", n.c_str());
      return false;
    }
  o.operator_name = a.op;
  o.explain = a.explain;
  if (a.annotation) o.critical_path.annotation = *a.annotation;
  o.critical_path.annotation_explicit = a.annotation.has_value();
  o.critical_path.instance = a.instance;
  if (a.tsys == "auto") {
    o.coupling.t_sys.reset();
  } else {
    char* end = nullptr;
    double us = std::strtod(a.tsys.c_str(), &end);
    if (end == a.tsys.c_str() || *end || us < 0) {
      std::fprintf(stderr, "sightline report: --tsys wants microseconds or 'auto'\n");
      return false;
    }
    o.coupling.t_sys = TimeNs(us * 1000.0 + 0.5);
  }
  return true;
}

// Prints one table as CSV; false (after naming the tables there are) when none is named or it does not exist.
bool print_csv_table(const std::vector<analysis::Table>& tables, const std::string& name) {
  if (name.empty()) {  // bad usage, but say what would work
    std::fprintf(stderr, "sightline report: --format csv prints one table: add --table NAME. Tables of this report:\n");
    for (const auto& t : tables) std::fprintf(stderr, "  %s\n", t.name.c_str());
    return false;
  }
  auto it = std::find_if(tables.begin(), tables.end(), [&](const auto& t) { return t.name == name; });
  if (it == tables.end()) {
    std::fprintf(stderr, "sightline report: no table '%s' (tables:", name.c_str());
    for (const auto& t : tables) std::fprintf(stderr, " %s", t.name.c_str());
    std::fprintf(stderr, ")\n");
    return false;
  }
  std::string out = analysis::render_csv(*it);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return true;
}

// A directory or --job: every analysis per rank, then collectives and stragglers across ranks.
void run_job_report_command(const ReportArgs& a, analysis::ReportOptions o) {
  analysis::JobReportOptions jo;
  jo.only_rank = o.table.rank;  // on a job, --rank picks one rank
  o.table.rank.reset();
  jo.report = std::move(o);
  jo.collectives.align = align_named(a.align);
  auto job = open_job(a.file, a.job, rank_source_named(a.rank_from));
  if (!job) {
    exit_code = 1;
    return;
  }
  if (jo.only_rank && !job->find(*jo.only_rank)) {
    std::fprintf(stderr, "sightline report: --rank %lld: the job has no such rank (ranks %lld to %lld)\n",
                 (long long)*jo.only_rank, (long long)job->ranks.front().rank, (long long)job->ranks.back().rank);
    exit_code = 2;
    return;
  }
  analysis::JobReport report = analysis::run_job_report(*job, jo);
  if (a.format == "json") {
    std::string out = analysis::render_job_json(*job, report, jo);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else if (a.format == "csv") {
    if (!print_csv_table(report.tables, a.table)) {
      exit_code = 2;
      return;
    }
  } else {
    std::string out = analysis::render_job_text(*job, report, jo, text_layout(a.wide));
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (job->loaded_count() != job->ranks.size()) exit_code = 1;
}

// A fleet file: its job tables as `report DIR` prints them; --rank R loads that rank's trace (its
// source path) for the single-rank tables.
void run_fleet_report_command(const ReportArgs& a, analysis::ReportOptions o) {
  fleet::Fleet f;
  if (!open_fleet_for_cli(a.file, f, "report")) {
    exit_code = 1;
    return;
  }
  fleet::FleetReportOptions fo;
  fo.mode = o.table.mode;
  fo.only = o.only;
  fo.only_rank = o.table.rank;
  if (fo.only_rank) {
    const fleet::RankSummary* rank = f.find(*fo.only_rank);
    if (!rank) {
      std::fprintf(stderr, "sightline report: --rank %lld: the fleet has no such rank\n", (long long)*fo.only_rank);
      exit_code = 2;
      return;
    }
    bool rank_tables = o.only.empty() || std::any_of(o.only.begin(), o.only.end(), [](auto& n) {
                         return !analysis::is_job_table_name(n) && !fleet::is_fleet_table_name(n);
                       });
    CliTrace opened;
    if (rank->ok() && rank_tables) {
      if (!open_cli_trace(rank->path, opened)) {
        exit_code = 1;
        return;
      }
      std::erase_if(o.only, [](auto& n) { return analysis::is_job_table_name(n) || fleet::is_fleet_table_name(n); });
      o.threads = 1;
      fleet::add_rank_report(fo, rank->rank, analysis::run_report(*opened.loaded.store, o));
    }
  }
  if (a.format == "json") {
    std::string out = fleet::render_fleet_json(f, fo);
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else if (a.format == "csv") {
    if (!print_csv_table(fleet::fleet_report_tables(f, fo), a.table)) exit_code = 2;
    return;
  } else {
    std::string out = fleet::render_fleet_text(f, fo);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  if (f.loaded_count() != f.ranks.size()) exit_code = 1;
}

void run_report_command(const ReportArgs& a) {
  analysis::ReportOptions o;
  if (!make_options(a, o)) {
    exit_code = 2;
    return;
  }
  if (a.file.empty() == a.job.empty()) {
    std::fprintf(stderr, "sightline report: trace (a file or a directory of ranks) or --job FILES... is required\n"
                           "Run with --help for more information.\n");
    exit_code = 2;
    return;
  }
  if (a.job.empty() && fleet::is_fleet_file(a.file)) {
    run_fleet_report_command(a, std::move(o));
    return;
  }
  if (!a.job.empty() || is_job_dir(a.file)) {
    run_job_report_command(a, std::move(o));
    return;
  }
  CliTrace opened;
  if (!open_cli_trace(a.file, opened)) {
    exit_code = 1;
    return;
  }
  std::string memory_note;
  if (!a.memory.empty() && !attach_cli_memory(opened, a.memory, a.memory_offset_us, memory_note)) {
    exit_code = 1;
    return;
  }
  const LoadResult& loaded = opened.loaded;
  analysis::Report report = analysis::run_report(*loaded.store, o);
  if (!memory_note.empty()) report.notes.push_back(memory_note);
  std::vector<analysis::Table> tables = analysis::report_tables(report);
  if (a.format == "json") {
    std::string out = analysis::render_json(report, tables, info_json(*loaded.store));
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else if (a.format == "csv") {
    if (!print_csv_table(tables, a.table)) exit_code = 2;
  } else {
    std::string out = analysis::render_text(report, tables, text_layout(a.wide));
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
}

using analysis::median;

// CPU time of the whole process (every thread), s: comparable when other jobs load the machine.
double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// Medians of `repeat` runs of one job report: wall, process CPU, and its two phases.
struct JobReportTiming {
  double wall = 0, cpu = 0, ranks = 0, collectives = 0;
};

JobReportTiming time_job_report(const Job& job, const analysis::JobReportOptions& jo, int repeat) {
  std::vector<double> totals, cpus, ranks, collectives;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    double c0 = process_cpu_seconds();
    analysis::JobReport r = analysis::run_job_report(job, jo);
    cpus.push_back(process_cpu_seconds() - c0);
    totals.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    for (auto& [name, s] : r.seconds) (name == "ranks" ? ranks : collectives).push_back(s);
  }
  return {median(totals), median(cpus), median(ranks), median(collectives)};
}

// Medians of `repeat` clock re-alignments as the job tab's Align toggle does them: from an
// overview built once (auto), reusing its rank summaries; and, for comparison, a fresh overview
// with that alignment (every rank summarised again: what a realign cost before).
struct RealignTiming {
  double realign = 0, rebuild = 0;
};

RealignTiming time_realign(const Job& job, analysis::Align align, int repeat) {
  analysis::CollectiveOptions o;
  o.align = align;
  analysis::JobOverview opened = analysis::build_job_overview(job);
  std::vector<double> realigns, rebuilds;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    analysis::JobOverview realigned = analysis::realign_job_overview(opened, o);
    auto t1 = std::chrono::steady_clock::now();
    analysis::JobOverview rebuilt = analysis::build_job_overview(job, o);
    auto t2 = std::chrono::steady_clock::now();
    realigns.push_back(std::chrono::duration<double>(t1 - t0).count());
    rebuilds.push_back(std::chrono::duration<double>(t2 - t1).count());
  }
  return {median(realigns), median(rebuilds)};
}

// A job: the job summary (every rank summarised, collectives, stragglers: what the GUI and
// `--only collectives,stragglers` compute), then the full report (every analysis on every rank
// as well), medians of runs each; with `align`, a clock re-alignment too.
void bench_job_report(const std::string& dir, int repeat, analysis::Mode mode, const std::string& format,
                      const std::string& align) {
  auto job = open_job(dir, {});
  if (!job) {
    exit_code = 1;
    return;
  }
  analysis::JobReportOptions jo;
  jo.report.table.mode = mode;
  analysis::JobReportOptions summary_only = jo;
  summary_only.report.only = {"collectives", "stragglers", "clock_offsets"};
  JobReportTiming summary = time_job_report(*job, summary_only, repeat);
  JobReportTiming full = time_job_report(*job, jo, repeat);
  std::optional<RealignTiming> realign;
  if (!align.empty()) realign = time_realign(*job, align_named(align), repeat);
  if (format == "json") {
    auto num = [](double v) { return analysis::format_number(v); };
    std::string realign_json;
    if (realign)
      realign_json = ", \"realign\": " + analysis::json_escape(align) + ", \"realign_seconds_median\": " +
                     num(realign->realign) + ", \"rebuild_seconds_median\": " + num(realign->rebuild);
    std::printf("{\"ranks\": %zu, \"load_seconds\": %s, \"summary_seconds_median\": %s, \"summary_cpu_seconds_median\": %s, "
                "\"report_seconds_median\": %s, \"report_cpu_seconds_median\": %s, \"per_analysis_seconds\": "
                "{\"ranks\": %s, \"collectives\": %s}%s}\n",
                job->ranks.size(), num(job->load_seconds).c_str(), num(summary.wall).c_str(), num(summary.cpu).c_str(),
                num(full.wall).c_str(), num(full.cpu).c_str(), num(full.ranks).c_str(), num(full.collectives).c_str(),
                realign_json.c_str());
    return;
  }
  std::printf("job                     %s (%zu ranks)\n", dir.c_str(), job->ranks.size());
  std::printf("load seconds            %.4f\n", job->load_seconds);
  std::printf("job summary (median/%d) %.4f s wall, %.4f s CPU (every rank summarised, collectives, stragglers)\n", repeat,
              summary.wall, summary.cpu);
  std::printf("  %-22s %.2f ms\n", "rank summaries", summary.ranks * 1000.0);
  std::printf("  %-22s %.2f ms\n", "collectives", summary.collectives * 1000.0);
  std::printf("full report (median/%d) %.4f s wall, %.4f s CPU (every analysis on every rank as well)\n", repeat, full.wall,
              full.cpu);
  std::printf("  %-22s %.2f ms\n", "every rank's analyses", full.ranks * 1000.0);
  std::printf("  %-22s %.2f ms\n", "collectives", full.collectives * 1000.0);
  if (realign)
    std::printf("realign %s (median/%d) %.3f ms reusing the rank summaries; %.3f ms summarising every rank again\n",
                align.c_str(), repeat, realign->realign * 1000.0, realign->rebuild * 1000.0);
}

}  // namespace

void register_report(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "Run the analyses (temporal, idle, kernels, launches, coupling, ...)");
  auto a = std::make_shared<ReportArgs>();
  cmd->add_option("trace", a->file, "Trace file (.json, .json.gz, Nsight .sqlite, .sqlite.gz, .nsys-rep), or a directory of rank traces (a job)");
  cmd->add_option("--job", a->job, "Rank trace files of one job (instead of TRACE)");
  cmd->add_option("--align", a->align,
                  "Job clocks: collectives (apply offsets from collective ends), none, or auto (default: "
                  "apply only offsets above 50 us)")
      ->check(CLI::IsMember({"auto", "collectives", "none"}));
  cmd->add_option("--mode", a->mode, "sightline (exact, default) or hta (reproduce HTA 0.6.1)")
      ->check(CLI::IsMember({"sightline", "hta"}));
  cmd->add_option("--rank", a->rank, "Rank to report (default: the trace's own); on a job, the one rank to show");
  cmd->add_option("--only", a->only, "Comma-separated analyses to run");
  cmd->add_flag("--explain", a->explain,
                "Text: also print the idle ledger (per cause: total, gaps, longest gaps with their windows, top CPU "
                "events, fix), the figures every verdict reads");
  cmd->add_option("--operator", a->op, "Operator name substring for kernel_sequences");
  cmd->add_option("--annotation", a->annotation, "Annotation for critical_path (default ProfilerStep, else the whole trace); '' = the whole trace");
  cmd->add_option("--instance", a->instance, "Instance of the annotation for critical_path (default: the first complete one)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--format", a->format, "text, json or csv")->check(CLI::IsMember({"text", "json", "csv"}));
  cmd->add_option("--table", a->table, "Table to print with --format csv");
  cmd->add_option("--memory", a->memory, "A PyTorch memory snapshot (.pickle) of the same run: the memory tables read it");
  cmd->add_option("--memory-offset", a->memory_offset_us,
                  "µs from the trace start to the snapshot's first entry (default: by wall clock when both have one, else 0)");
  cmd->add_option("--tsys", a->tsys, "Null-launch floor for HDBI in µs, or 'auto' (default 4.5)");
  add_wide_flag(*cmd, a->wide);
  add_rank_from_option(*cmd, a->rank_from);
  cmd->callback([a] { run_report_command(*a); });
}

void register_bench_report(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("report", "Time every analysis after loading (median of --repeat runs)");
  struct Args {
    std::string file;
    int repeat = 5;
    std::string format = "text";
    std::string mode = "sightline";
    std::string op = "aten::linear";
    std::string only;  // empty: every analysis a full report runs
    std::string align;  // a job: also time re-aligning its clocks this way
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("trace", a->file, "Trace file")->required();
  cmd->add_option("--repeat", a->repeat, "Number of report runs")->check(CLI::Range(1, 1000));
  cmd->add_option("--format", a->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--mode", a->mode, "sightline or hta")->check(CLI::IsMember({"sightline", "hta"}));
  cmd->add_option("--operator", a->op, "Operator for kernel_sequences");
  cmd->add_option("--only", a->only, "Comma-separated analyses to time (e.g. critical_path, which a full report skips)");
  cmd->add_option("--align", a->align, "A job: also time re-aligning its clocks (collectives, none or auto), as the GUI's toggle")
      ->check(CLI::IsMember({"auto", "collectives", "none"}));
  cmd->callback([a] {
    if (is_job_dir(a->file)) {
      bench_job_report(a->file, a->repeat, a->mode == "hta" ? analysis::Mode::Hta : analysis::Mode::Sightline,
                       a->format, a->align);
      return;
    }
    if (!a->align.empty()) {
      std::fprintf(stderr, "sightline bench report: --align times a job's clock re-alignment; %s is not a directory\n",
                   a->file.c_str());
      exit_code = 2;
      return;
    }
    LoadResult loaded = load_trace(a->file);
    if (!loaded.ok()) {
      std::fprintf(stderr, "sightline: %s\n", loaded.error.to_string().c_str());
      exit_code = 1;
      return;
    }
    analysis::ReportOptions o;
    o.table.mode = a->mode == "hta" ? analysis::Mode::Hta : analysis::Mode::Sightline;
    o.operator_name = a->op;
    o.only = split_list(a->only);
    std::vector<double> totals;
    std::map<std::string, std::vector<double>> per;
    std::vector<std::string> order;
    for (int i = 0; i < a->repeat; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      analysis::Report r = analysis::run_report(*loaded.store, o);
      totals.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      for (auto& [name, s] : r.seconds) {
        if (!per.count(name)) order.push_back(name);
        per[name].push_back(s);
      }
    }
    if (a->format == "json") {
      std::string o2 = "{\"load_seconds\": " + analysis::format_number(loaded.seconds) +
                       ", \"report_seconds_median\": " + analysis::format_number(median(totals)) +
                       ", \"repeat\": " + std::to_string(a->repeat) + ", \"mode\": " + analysis::json_escape(a->mode) +
                       ", \"per_analysis_seconds\": {";
      for (size_t i = 0; i < order.size(); ++i)
        o2 += (i ? ", " : "") + analysis::json_escape(order[i]) + ": " + analysis::format_number(median(per[order[i]]));
      o2 += "}}\n";
      std::fwrite(o2.data(), 1, o2.size(), stdout);
      return;
    }
    std::printf("file                    %s\n", a->file.c_str());
    std::printf("mode                    %s\n", a->mode.c_str());
    std::printf("load seconds            %.4f\n", loaded.seconds);
    std::printf("report seconds (median/%d) %.4f\n", a->repeat, median(totals));
    for (const auto& n : order) std::printf("  %-22s %.2f ms\n", n.c_str(), median(per[n]) * 1000.0);
  });
}

}  // namespace sl::cli
