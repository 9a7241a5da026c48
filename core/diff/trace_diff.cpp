#include "core/diff/trace_diff.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace sl::diff {

using analysis::Cell;
using analysis::Table;

namespace {

analysis::EventTable make_table(const TraceStore& s, analysis::Mode mode) {
  analysis::TableOptions o;
  o.mode = mode;
  o.hta_last_step_filter = false;  // (HTA) TraceDiff parses traces without align/filter
  return analysis::build_table(s, o);
}

void check_rank(std::optional<int64_t> wanted, int64_t have, const char* which) {
  if (wanted && *wanted != have)
    throw std::invalid_argument(std::string("trace ") + which + " holds rank " + std::to_string(have) + ", not " +
                                std::to_string(*wanted));
}

}  // namespace

TraceDiff trace_diff(const TraceStore& a, const TraceStore& b, const DiffOptions& o) {
  TraceDiff d;
  d.mode = o.mode;
  analysis::EventTable ta = make_table(a, o.mode);
  analysis::EventTable tb = make_table(b, o.mode);
  d.rank_a = ta.rank;
  d.rank_b = tb.rank;
  check_rank(o.rank_a, ta.rank, "A");
  check_rank(o.rank_b, tb.rank, "B");

  const bool hta = o.mode == analysis::Mode::Hta;
  OpsSelection sa{o.iteration_a, o.device, o.short_names}, sb{o.iteration_b, o.device, o.short_names};
  if (!hta) {
    // Sightline: the ops diff compares the same iteration pair the alignment chose, so a lone
    // --iteration-a also picks the matching step of B.
    AlignOptions ao;
    ao.iteration_a = o.iteration_a;
    ao.iteration_b = o.iteration_b;
    d.aligned = aligned_diff(a, b, ao);
    if (d.aligned->chosen.a) sa.iteration = d.aligned->chosen.a;
    if (d.aligned->chosen.b) sb.iteration = d.aligned->chosen.b;
  }
  auto summary = [](const analysis::EventTable& t, const OpsSelection& sel, const char* which) {
    try {
      return ops_summary(t, sel);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(e.what()) + " " + which);
    }
  };
  d.ops = ops_diff(summary(ta, sa, "A (control)"), summary(tb, sb, "B (test)"), hta);
  if (!d.ops.control_iteration) d.notes.push_back("control has no ProfilerStep: every event is compared");
  if (!d.ops.test_iteration) d.notes.push_back("test has no ProfilerStep: every event is compared");
  if (hta) return d;

  const IterationPair& p = d.aligned->chosen;
  d.summary_a = run_summary(ta, p.a ? std::optional<TimeNs>(p.dur_a()) : std::nullopt);
  d.summary_b = run_summary(tb, p.b ? std::optional<TimeNs>(p.dur_b()) : std::nullopt);
  for (const auto& n : d.aligned->notes) d.notes.push_back(n);
  d.gpu_warning = gpu_mismatch(*d.summary_a, *d.summary_b);
  if (!d.gpu_warning.empty()) d.notes.push_back(d.gpu_warning);
  d.memory = memory_diff(a, b);
  return d;
}

namespace {

Cell opt_iter(const std::optional<int64_t>& v) { return v ? Cell::integer(*v) : Cell::null(); }

// HTA's eight columns; Sightline mode adds self (exclusive) time, what "what changed" ranks by,
// and each run's own name behind the matching key in `name`.
Table ops_table(const OpsDiff& d, bool sightline) {
  Table t{"ops", {"name", "control_count", "control_total_us", "test_count", "test_total_us", "diff_count",
                  "diff_total_us", "change"}};
  if (sightline)
    for (const char* c : {"control_self_us", "test_self_us", "diff_self_us", "control_name", "test_name"})
      t.columns.emplace_back(c);
  for (const OpsDiffRow& r : d.rows) {
    std::vector<Cell> row{Cell::str(r.name), Cell::integer(int64_t(r.control_count)), Cell::ns(r.control_total),
                          Cell::integer(int64_t(r.test_count)), Cell::ns(r.test_total), Cell::integer(r.diff_count()),
                          Cell::ns(r.diff_total()), Cell::str(std::string(1, r.sign()))};
    if (sightline)
      for (Cell c : {Cell::ns(r.control_self), Cell::ns(r.test_self), Cell::ns(r.diff_self()), Cell::str(r.control_name),
                     Cell::str(r.test_name)})
        row.push_back(std::move(c));
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table ops_diff_table(const OpsDiff& d) {
  Table t{"ops_diff", {"change", "name"}};
  auto add = [&](const char* c, const std::vector<std::string>& names) {
    for (const auto& n : names) t.rows.push_back({Cell::str(c), Cell::str(n)});
  };
  add("added", d.added);
  add("deleted", d.deleted);
  add("increased", d.increased);
  add("decreased", d.decreased);
  add("unchanged", d.unchanged);
  return t;
}

void metric(Table& t, const char* name, Cell a, Cell b) {
  Cell diff = Cell::null();
  if (a.kind == Cell::Ns && b.kind == Cell::Ns && !a.ns_fractional && !b.ns_fractional) diff = Cell::ns(b.i - a.i);
  else if (a.kind == Cell::Ns && b.kind == Cell::Ns) diff = Cell::ns((b.ns_fractional ? b.d : double(b.i)) - (a.ns_fractional ? a.d : double(a.i)));
  else if (a.kind == Cell::Int && b.kind == Cell::Int) diff = Cell::integer(b.i - a.i);
  else if (a.kind == Cell::Num && b.kind == Cell::Num) diff = Cell::num(b.d - a.d);
  t.rows.push_back({Cell::str(name), std::move(a), std::move(b), std::move(diff)});
}

Table summary_table(const RunSummary& a, const RunSummary& b) {
  Table t{"summary", {"metric", "control", "test", "diff"}};
  auto opt_ns = [](const std::optional<TimeNs>& v) { return v ? Cell::ns(*v) : Cell::null(); };
  auto opt_mean = [](const std::optional<double>& v) { return v ? Cell::ns(*v) : Cell::null(); };
  metric(t, "rank", Cell::integer(a.rank), Cell::integer(b.rank));
  metric(t, "iterations", Cell::integer(int64_t(a.iterations)), Cell::integer(int64_t(b.iterations)));
  metric(t, "step_time_us", opt_ns(a.step_time), opt_ns(b.step_time));
  metric(t, "mean_step_time_us", opt_mean(a.mean_step_time), opt_mean(b.mean_step_time));
  t.rows.push_back({Cell::str("steady_state_iterations"), Cell::str(iteration_list_text(a.steady_iterations)),
                    Cell::str(iteration_list_text(b.steady_iterations)), Cell::null()});
  metric(t, "steady_mean_step_time_us", opt_mean(a.steady_step_time), opt_mean(b.steady_step_time));
  metric(t, "gpu_span_us", Cell::ns(a.temporal.span), Cell::ns(b.temporal.span));
  metric(t, "gpu_idle_us", Cell::ns(a.temporal.idle), Cell::ns(b.temporal.idle));
  metric(t, "gpu_compute_us", Cell::ns(a.temporal.compute), Cell::ns(b.temporal.compute));
  metric(t, "gpu_non_compute_us", Cell::ns(a.temporal.non_compute), Cell::ns(b.temporal.non_compute));
  metric(t, "idle_pct", Cell::num(a.temporal.idle_pct), Cell::num(b.temporal.idle_pct));
  metric(t, "compute_pct", Cell::num(a.temporal.compute_pct), Cell::num(b.temporal.compute_pct));
  metric(t, "non_compute_pct", Cell::num(a.temporal.non_compute_pct), Cell::num(b.temporal.non_compute_pct));
  for (int c = 0; c < analysis::kIdleCauseCount; ++c) {
    std::string n(analysis::idle_cause_name(analysis::IdleCause(c)));
    metric(t, ("idle_" + n + "_us").c_str(), Cell::ns(a.idle_by_cause[c]), Cell::ns(b.idle_by_cause[c]));
    metric(t, ("idle_" + n + "_gaps").c_str(), Cell::integer(int64_t(a.gaps_by_cause[c])),
           Cell::integer(int64_t(b.gaps_by_cause[c])));
  }
  metric(t, "launch_pairs", Cell::integer(int64_t(a.launch_pairs)), Cell::integer(int64_t(b.launch_pairs)));
  metric(t, "launch_runtime_sum_us", Cell::ns(a.runtime_sum), Cell::ns(b.runtime_sum));
  metric(t, "launch_delay_sum_us", Cell::ns(a.launch_delay_sum), Cell::ns(b.launch_delay_sum));
  metric(t, "launch_delay_median_us", Cell::ns(a.launch_delay_median), Cell::ns(b.launch_delay_median));
  metric(t, "launch_to_start_median_us", Cell::ns(a.launch_to_start_median), Cell::ns(b.launch_to_start_median));
  metric(t, "launched_gpu_time_us", Cell::ns(a.gpu_time_sum), Cell::ns(b.gpu_time_sum));
  metric(t, "kernels", Cell::integer(int64_t(a.kernels)), Cell::integer(int64_t(b.kernels)));
  return t;
}

Table iterations_table(const AlignedDiff& d) {
  Table t{"iterations", {"iteration_a", "iteration_b", "step_a_us", "step_b_us", "delta_us"}};
  for (const IterationPair& p : d.iterations)
    t.rows.push_back({opt_iter(p.a), opt_iter(p.b), Cell::ns(p.dur_a()), Cell::ns(p.dur_b()),
                      Cell::ns(p.dur_b() - p.dur_a())});
  return t;
}

const std::vector<std::string> kAlignedColumns = {
    "path", "name", "name_a", "name_b", "depth", "dur_a_us", "dur_b_us", "delta_us", "self_a_us", "self_b_us", "self_delta_us",
    "kernels_a", "kernels_b", "kernel_time_a_us", "kernel_time_b_us", "kernels_added", "kernels_removed",
    "kernels_renamed"};

std::vector<Cell> aligned_row(const AlignedOp& x) {
  return {Cell::str(x.path), Cell::str(x.name), Cell::str(x.name_a), Cell::str(x.name_b), Cell::integer(x.depth), Cell::ns(x.dur_a), Cell::ns(x.dur_b),
          Cell::ns(x.delta()), Cell::ns(x.self_a), Cell::ns(x.self_b), Cell::ns(x.self_delta()),
          Cell::integer(x.kernels_a), Cell::integer(x.kernels_b), Cell::ns(x.kernel_time_a),
          Cell::ns(x.kernel_time_b), Cell::strs(x.kernels_added), Cell::strs(x.kernels_removed),
          Cell::strs(x.kernels_renamed)};
}

Table ranked_table(const char* name, const AlignedDiff& d, const std::vector<uint32_t>& which) {
  Table t{name, kAlignedColumns};
  for (uint32_t i : which) t.rows.push_back(aligned_row(d.ops[i]));
  return t;
}

// Kernels of different names paired through their launching operator (another GPU or vendor).
Table kernel_pairs_table(const AlignedDiff& d) {
  Table t{"kernel_pairs", {"operator", "path", "kernel_a", "kernel_b", "dur_a_us", "dur_b_us", "delta_us"}};
  for (const KernelPair& k : d.kernel_pairs)
    t.rows.push_back({Cell::str(d.ops[k.op].name), Cell::str(d.ops[k.op].path), Cell::str(k.name_a),
                      Cell::str(k.name_b), Cell::ns(k.dur_a), Cell::ns(k.dur_b), Cell::ns(k.delta())});
  return t;
}

Table unmatched_table(const char* name, const std::vector<UnmatchedOp>& list) {
  Table t{name, {"name", "where", "position", "dur_us", "ops", "kernels", "kernel_time_us"}};
  for (const UnmatchedOp& u : list)
    t.rows.push_back({Cell::str(u.name), Cell::str(u.where), Cell::integer(u.position), Cell::ns(u.dur),
                      Cell::integer(u.ops), Cell::integer(u.kernels), Cell::ns(u.kernel_time)});
  return t;
}

}  // namespace

std::vector<Table> diff_tables(const TraceDiff& d) {
  std::vector<Table> out;
  out.push_back(ops_table(d.ops, d.mode == analysis::Mode::Sightline));
  out.push_back(ops_diff_table(d.ops));
  if (d.summary_a && d.summary_b) out.push_back(summary_table(*d.summary_a, *d.summary_b));
  if (d.aligned) {
    const AlignedDiff& a = *d.aligned;
    out.push_back(iterations_table(a));
    Table t{"aligned", kAlignedColumns};
    for (const AlignedOp& x : a.ops) t.rows.push_back(aligned_row(x));
    out.push_back(std::move(t));
    out.push_back(unmatched_table("added_ops", a.added));
    out.push_back(unmatched_table("removed_ops", a.removed));
    out.push_back(ranked_table("regressions", a, a.regressions));
    out.push_back(ranked_table("improvements", a, a.improvements));
    out.push_back(ranked_table("inclusive_regressions", a, a.inclusive_regressions));
    out.push_back(ranked_table("inclusive_improvements", a, a.inclusive_improvements));
    out.push_back(kernel_pairs_table(a));
  }
  if (!d.memory.empty())
    for (Table& t : memory_diff_tables(d.memory)) out.push_back(std::move(t));
  return out;
}

namespace {

using analysis::cell_json;
using analysis::json_escape;

std::string rows_json(const Table& t, const char* indent) {
  std::string o = "[";
  for (size_t i = 0; i < t.rows.size(); ++i) {
    o += i ? ",\n" : "\n";
    o += indent;
    o += "{";
    for (size_t k = 0; k < t.columns.size(); ++k)
      o += (k ? ", " : "") + json_escape(t.columns[k]) + ": " + cell_json(t.rows[i][k]);
    o += "}";
  }
  return o + (t.rows.empty() ? "]" : "\n" + std::string(indent).substr(2) + "]");
}

const Table* find(const std::vector<Table>& tables, std::string_view name) {
  for (const Table& t : tables)
    if (t.name == name) return &t;
  return nullptr;
}

std::string numbers_json(const std::vector<int64_t>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + std::to_string(v[i]);
  return o + "]";
}

// The headline: mean step time over the steady-state steps of each run (warm-up excluded).
std::string steady_state_json(const TraceDiff& d) {
  if (!d.summary_a || !d.summary_b || !d.summary_a->steady_step_time || !d.summary_b->steady_step_time) return "null";
  const RunSummary &a = *d.summary_a, &b = *d.summary_b;
  std::optional<double> pct = steady_step_change_pct(a, b);
  return "{\"iterations_a\": " + numbers_json(a.steady_iterations) + ", \"iterations_b\": " +
         numbers_json(b.steady_iterations) + ", \"mean_step_a_us\": " + analysis::format_us(Cell::ns(*a.steady_step_time)) +
         ", \"mean_step_b_us\": " + analysis::format_us(Cell::ns(*b.steady_step_time)) +
         ", \"change_pct\": " + (pct ? analysis::format_number(*pct) : std::string("null")) + "}";
}

std::string steady_state_line(const TraceDiff& d) {
  if (!d.summary_a || !d.summary_b || !d.summary_a->steady_step_time || !d.summary_b->steady_step_time) return "";
  const RunSummary &a = *d.summary_a, &b = *d.summary_b;
  char buf[256];
  std::snprintf(buf, sizeof buf, "step time, steady state (mean of steps %s vs %s): %.3f ms -> %.3f ms (%+.1f%%)\n",
                iteration_list_text(a.steady_iterations).c_str(), iteration_list_text(b.steady_iterations).c_str(),
                *a.steady_step_time / 1e6, *b.steady_step_time / 1e6, steady_step_change_pct(a, b).value_or(0));
  return buf;
}

std::string names_json(const std::vector<std::string>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? ",\n      " : "\n      ") + json_escape(v[i]);
  return o + (v.empty() ? "]" : "\n    ]");
}

// For people, each run's own names only where the two runs' names differ (another address, line
// or step number: what the key in `name` hides); a pair of columns left empty goes. JSON and CSV
// keep every name.
Table without_repeated_names(Table t) {
  auto column = [&](std::string_view name) {
    return size_t(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
  };
  for (auto [first, second] : {std::pair{"name_a", "name_b"}, std::pair{"control_name", "test_name"}}) {
    size_t a = column(first), b = column(second);
    if (a == t.columns.size() || b == t.columns.size()) continue;
    bool any = false;
    for (auto& row : t.rows) {
      if (row[a].s == row[b].s || row[a].s.empty() || row[b].s.empty()) row[a] = row[b] = Cell::str("");
      any |= !row[a].s.empty();
    }
    if (any) continue;
    for (size_t c : {std::max(a, b), std::min(a, b)}) {
      t.columns.erase(t.columns.begin() + long(c));
      for (auto& row : t.rows) row.erase(row.begin() + long(c));
    }
  }
  return t;
}

}  // namespace

std::string render_diff_json(const TraceDiff& d, const std::vector<Table>& tables) {
  std::string o = "{\n";
  o += "  \"mode\": " + json_escape(analysis::mode_name(d.mode)) + ",\n";
  o += "  \"rank_a\": " + std::to_string(d.rank_a) + ", \"rank_b\": " + std::to_string(d.rank_b) + ",\n";
  o += "  \"iteration_a\": " + cell_json(opt_iter(d.ops.control_iteration)) +
       ", \"iteration_b\": " + cell_json(opt_iter(d.ops.test_iteration)) + ",\n";
  o += "  \"steady_state\": " + steady_state_json(d) + ",\n";
  o += "  \"gpu_warning\": " + (d.gpu_warning.empty() ? std::string("null") : json_escape(d.gpu_warning)) + ",\n";
  o += "  \"ops\": " + rows_json(*find(tables, "ops"), "    ") + ",\n";
  o += "  \"ops_diff\": {\n    \"added\": " + names_json(d.ops.added) + ",\n    \"deleted\": " +
       names_json(d.ops.deleted) + ",\n    \"increased\": " + names_json(d.ops.increased) +
       ",\n    \"decreased\": " + names_json(d.ops.decreased) + ",\n    \"unchanged\": " +
       names_json(d.ops.unchanged) + "\n  },\n";
  const Table* summary = find(tables, "summary");
  o += "  \"summary\": " + (summary ? rows_json(*summary, "    ") : std::string("null")) + ",\n";
  if (d.aligned) {
    const AlignedDiff& a = *d.aligned;
    o += "  \"aligned\": {\n";
    o += "    \"iteration_a\": " + cell_json(opt_iter(a.chosen.a)) + ", \"iteration_b\": " +
         cell_json(opt_iter(a.chosen.b)) + ",\n";
    o += "    \"nodes_a\": " + std::to_string(a.nodes_a) + ", \"nodes_b\": " + std::to_string(a.nodes_b) +
         ", \"matched\": " + std::to_string(a.matched) +
         ", \"matched_fraction\": " + analysis::format_number(a.matched_fraction) + ",\n";
    for (const char* name : {"iterations", "regressions", "improvements", "inclusive_regressions",
                             "inclusive_improvements", "kernel_pairs", "added_ops", "removed_ops"})
      o += "    " + json_escape(name) + ": " + rows_json(*find(tables, name), "      ") + ",\n";
    o += "    \"ops\": " + rows_json(*find(tables, "aligned"), "      ") + "\n  },\n";
  } else {
    o += "  \"aligned\": null,\n";
  }
  if (!d.memory.empty())
    for (const char* name : {"memory_diff", "memory_diff_contexts"})
      o += "  " + json_escape(name) + ": " + rows_json(*find(tables, name), "    ") + ",\n";
  o += "  \"notes\": [";
  for (size_t i = 0; i < d.notes.size(); ++i) o += (i ? ", " : "") + json_escape(d.notes[i]);
  o += "]\n}\n";
  return o;
}

std::string render_diff_text(const TraceDiff& d, const std::vector<Table>& tables, const analysis::TextLayout& layout) {
  std::string o = "mode: " + std::string(analysis::mode_name(d.mode)) + "   rank: " + std::to_string(d.rank_a) +
                  " vs " + std::to_string(d.rank_b) + "   iteration: " + cell_json(opt_iter(d.ops.control_iteration)) +
                  " vs " + cell_json(opt_iter(d.ops.test_iteration)) + "\n";
  o += "ops_diff: " + std::to_string(d.ops.added.size()) + " added, " + std::to_string(d.ops.deleted.size()) +
       " deleted, " + std::to_string(d.ops.increased.size()) + " increased, " +
       std::to_string(d.ops.decreased.size()) + " decreased, " + std::to_string(d.ops.unchanged.size()) +
       " unchanged\n";
  o += steady_state_line(d);
  if (d.aligned) {
    const AlignedDiff& a = *d.aligned;
    char buf[160];
    std::snprintf(buf, sizeof buf, "aligned: iteration %s vs %s, %llu of %llu / %llu slices matched (%.1f%%)\n",
                  cell_json(opt_iter(a.chosen.a)).c_str(), cell_json(opt_iter(a.chosen.b)).c_str(),
                  (unsigned long long)a.matched, (unsigned long long)a.nodes_a, (unsigned long long)a.nodes_b,
                  100.0 * a.matched_fraction);
    o += buf;
  }
  for (const Table& full : tables) {
    if (full.name == "ops_diff" || full.name == "aligned") continue;  // counted above / too long for people
    const Table t = without_repeated_names(full);
    if (t.name == "ops") {  // people want the biggest changes first
      // Sightline ranks by self time: the ancestors of a changed op all carry its change in
      // their totals and would crowd it out (analyses.md §9, matching keys).
      const bool by_self = d.mode == analysis::Mode::Sightline;
      const size_t key = by_self ? 10 : 6;
      Table by_delta = t;
      std::stable_sort(by_delta.rows.begin(), by_delta.rows.end(), [key](const auto& x, const auto& y) {
        return std::llabs(x[key].i) > std::llabs(y[key].i);
      });
      by_delta.name = by_self ? "ops (by |diff_self_us|)" : "ops (by |diff_total_us|)";
      by_delta.columns[7] = "count_change";  // + - = compare counts, not times
      analysis::append_text_table(o, by_delta, 40, 70, layout);
      continue;
    }
    size_t rows = t.name == "ops" ? 60 : t.name == "summary" || t.name == "iterations" ? 200 : 20;
    analysis::append_text_table(o, t, rows, t.name == "summary" ? 40 : 70, layout);
  }
  if (!d.notes.empty()) {
    o += "\nnotes:\n";
    for (const auto& n : d.notes) o += "  - " + n + "\n";
  }
  return o;
}

}  // namespace sl::diff
