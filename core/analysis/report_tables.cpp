#include "core/analysis/report_tables.h"

#include "core/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace sl::analysis {

namespace {

using C = Cell;

Cell opt_num(const std::optional<double>& v) { return v ? C::num(*v) : C::null(); }
Cell opt_ns(const std::optional<double>& v) { return v ? C::ns(*v) : C::null(); }

// describe() columns in µs (idle intervals) or plain numbers (queue length, GB/s).
void add_describe(std::vector<Cell>& row, const Describe& d, bool in_ns) {
  row.push_back(C::integer(int64_t(d.count)));
  auto v = [&](double x) { return in_ns ? C::ns(x) : C::num(x); };
  if (d.count == 0) {
    for (int k = 0; k < 7; ++k) row.push_back(C::null());
    return;
  }
  row.push_back(v(d.mean));
  row.push_back(d.std_valid ? v(d.std) : C::null());
  row.push_back(v(d.min));
  row.push_back(v(d.p25));
  row.push_back(v(d.p50));
  row.push_back(v(d.p75));
  row.push_back(v(d.max));
}

}  // namespace

std::vector<Table> report_tables(const Report& r) {
  std::vector<Table> out;
  const int64_t rank = r.table.rank;
  const bool hta = r.table.mode == Mode::Hta;
  if (r.temporal) {
    Table t{"temporal_breakdown",
            {"rank", "idle_us", "compute_us", "non_compute_us", "span_us", "idle_pct", "compute_pct", "non_compute_pct"}};
    const auto& x = *r.temporal;
    if (x.valid)
      t.rows.push_back({C::integer(rank), C::ns(x.idle), C::ns(x.compute), C::ns(x.non_compute), C::ns(x.span),
                        C::num(x.idle_pct), C::num(x.compute_pct), C::num(x.non_compute_pct)});
    out.push_back(std::move(t));
    if (!hta) {  // Sightline: the same split per stream; its idle_us is the sum of the stream's idle_causes
      Table s{"temporal_breakdown_streams", {"rank", "stream", "idle_us", "compute_us", "non_compute_us", "span_us",
                                             "idle_pct", "compute_pct", "non_compute_pct"}};
      for (const StreamTemporal& y : x.streams)
        s.rows.push_back({C::integer(rank), C::integer(y.stream), C::ns(y.idle), C::ns(y.compute), C::ns(y.non_compute),
                          C::ns(y.span), C::num(y.idle_pct), C::num(y.compute_pct), C::num(y.non_compute_pct)});
      out.push_back(std::move(s));
    }
  }
  if (r.idle) {
    Table a{"idle_breakdown", {"rank", "stream", "category", "idle_us", "ratio"}};
    Table b{"idle_interval_stats", {"rank", "stream", "category", "count", "mean", "std", "min", "p25", "p50", "p75", "max"}};
    for (const auto& x : *r.idle) {
      a.rows.push_back({C::integer(x.rank), C::integer(x.stream), C::str(std::string(idle_category_name(x.category))),
                        C::ns(x.idle), opt_num(x.ratio)});
      std::vector<Cell> row{C::integer(x.rank), C::integer(x.stream), C::str(std::string(idle_category_name(x.category)))};
      add_describe(row, x.stats, true);
      b.rows.push_back(std::move(row));
    }
    out.push_back(std::move(a));
    out.push_back(std::move(b));
  }
  if (r.causes) {
    Table t{"idle_causes", {"rank", "stream", "cause", "idle_us", "count", "share"}};
    for (const auto& x : r.causes->rows)
      t.rows.push_back({C::integer(x.rank), C::integer(x.stream), C::str(std::string(idle_cause_name(x.cause))),
                        C::ns(x.idle), C::integer(int64_t(x.count)), C::num(x.share)});
    out.push_back(std::move(t));
  }
  if (r.kernels) {
    Table a{"kernel_type_breakdown", {"kernel_type", "sum_us", "pct"}};
    for (const auto& x : r.kernels->by_type) a.rows.push_back({C::str(x.label), C::ns(x.time), C::num(x.pct)});
    out.push_back(std::move(a));
    auto per_kernel = [&](const char* name, const std::vector<KernelStats>& list) {
      Table b{name, {"rank", "kernel_type", "name", "count", "sum_us", "min_us", "max_us", "mean_us", "std_us",
                     "median_us", "p95_us"}};
      for (const auto& k : list)
        b.rows.push_back({C::integer(k.rank), C::str(std::string(kernel_type_name(k.type))), C::str(k.name),
                          C::integer(int64_t(k.count)), C::ns(k.sum), C::ns(k.min), C::ns(k.max), C::ns(k.mean),
                          C::ns(k.std), opt_ns(k.median), opt_ns(k.p95)});
      out.push_back(std::move(b));
    };
    per_kernel("kernel_breakdown", r.kernels->per_kernel);
    if (hta) per_kernel("kernel_breakdown_full", r.kernels->per_kernel_full);
  }
  if (r.durations) {
    Table t{"kernel_durations", {"name", "edges_us", "counts"}};
    for (const auto& h : *r.durations) {
      std::vector<double> edges, counts;
      for (double e : h.edges) edges.push_back(e / 1000.0);
      for (const auto& b : h.rows) counts.push_back(double(b.size()));
      t.rows.push_back({C::str(h.name), C::nums_of(std::move(edges)), C::nums_of(std::move(counts))});
    }
    out.push_back(std::move(t));
  }
  if (r.launches) {
    const auto& s = *r.launches;
    Table t{"launch_stats",
            {"rank", "pairs", "short_kernels", "runtime_outliers", "launch_delay_outliers", "runtime_sum_us",
             "gpu_duration_sum_us", "launch_delay_sum_us", "launch_delay_mean_us", "launch_delay_median_us",
             "launch_delay_max_us", "launch_to_start_median_us"}};
    if (!s.pairs.empty())
      t.rows.push_back({C::integer(s.rank), C::integer(int64_t(s.pairs.size())), C::integer(int64_t(s.short_kernels)),
                        C::integer(int64_t(s.runtime_outliers)), C::integer(int64_t(s.launch_delay_outliers)),
                        C::ns(s.runtime_sum), C::ns(s.gpu_sum), C::ns(s.delay_sum), C::ns(s.delay_mean),
                        C::ns(s.delay_median), C::ns(s.delay_max), C::ns(s.to_start_median)});
    out.push_back(std::move(t));
    Table h{"launch_histograms", {"quantity", "edges_us", "counts"}};
    for (const auto& x : s.histograms) {
      std::vector<double> edges, counts;
      for (double e : x.edges) edges.push_back(e / 1000.0);
      for (const auto& b : x.pairs) counts.push_back(double(b.size()));
      h.rows.push_back({C::str(x.quantity), C::nums_of(std::move(edges)), C::nums_of(std::move(counts))});
    }
    out.push_back(std::move(h));
  }
  if (r.queues) {
    Table t{"queue_length_summary", {"rank", "stream", "count", "mean", "std", "min", "p25", "p50", "p75", "max", "time_at_max_us"}};
    for (const auto& q : *r.queues) {
      std::vector<Cell> row{C::integer(q.rank), C::integer(q.stream)};
      add_describe(row, q.summary, false);
      row.push_back(C::ns(q.time_at_max));
      t.rows.push_back(std::move(row));
    }
    out.push_back(std::move(t));
  }
  if (r.bandwidth) {
    Table t{"memory_bw_summary", {"rank", "copy_kind", "count", "mean", "std", "min", "p25", "p50", "p75", "max"}};
    for (const auto& k : *r.bandwidth) {
      std::vector<Cell> row{C::integer(k.rank), C::str(k.copy_kind)};
      add_describe(row, k.summary, false);
      t.rows.push_back(std::move(row));
    }
    out.push_back(std::move(t));
  }
  if (r.memory) {
    Table t{"memory_in_use", {"device", "samples", "max_allocated_bytes", "max_reserved_bytes", "last_allocated_bytes"}};
    for (const auto& m : *r.memory)
      t.rows.push_back({C::integer(m.device), C::integer(int64_t(m.samples)), C::num(m.max_allocated),
                        C::num(m.max_reserved), C::num(m.last_allocated)});
    out.push_back(std::move(t));
  }
  if (r.overlap) {
    Table t{"comm_comp_overlap", {"rank", "overlap_pct"}};
    t.rows.push_back({C::integer(r.overlap->rank), opt_num(r.overlap->overlap_pct)});
    out.push_back(std::move(t));
  }
  if (r.coupling) {
    Table t{"coupling", {"rank", "iteration", "tklqt_us", "akd_us", "latency_us", "gpu_busy_us", "utilization",
                         "exposed_host_us", "hdbi", "bound"}};
    for (const auto& c : r.coupling->rows) {
      if (c.kernels == 0 && c.iteration) continue;  // an iteration without kernels says nothing
      t.rows.push_back({C::integer(c.rank), c.iteration ? C::integer(*c.iteration) : C::null(), C::ns(c.tklqt),
                        C::ns(c.akd), C::ns(c.latency), C::ns(c.gpu_busy), C::num(c.utilization),
                        C::ns(c.exposed_host), C::num(c.hdbi),
                        c.kernels ? C::str(std::string(boundness_name(c.bound))) : C::null()});
    }
    out.push_back(std::move(t));
  }
  if (r.fusion) {
    Table t{"fusion_candidates", {"chain", "length", "count", "proximity", "launch_overhead_us"}};
    for (const auto& f : *r.fusion)
      t.rows.push_back({C::strs(f.chain), C::integer(int64_t(f.chain.size())), C::integer(int64_t(f.count)),
                        C::num(f.proximity), C::ns(f.launch_overhead)});
    out.push_back(std::move(t));
  }
  if (r.repeated) {
    Table t{"repeated_kernels", {"name", "count", "sum_us", "mean_us"}};
    for (const auto& k : *r.repeated)
      t.rows.push_back({C::str(k.name), C::integer(int64_t(k.count)), C::ns(k.sum), C::ns(k.mean)});
    out.push_back(std::move(t));
  }
  if (r.sequences) {
    Table t{"kernel_sequences", {"operator", "pattern", "count", "gpu_kernel_us", "cpu_op_us"}};
    for (const auto& k : *r.sequences)
      t.rows.push_back({C::str(k.op), C::strs(k.pattern), C::integer(int64_t(k.count)), C::ns(k.gpu_kernel_time),
                        C::ns(k.cpu_op_time)});
    out.push_back(std::move(t));
  }
  return out;
}

std::string format_number(double v) {
  if (!std::isfinite(v)) return "null";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string format_us(const Cell& c) {
  if (!c.ns_fractional) {
    // Exact: integer ns as µs with up to 3 decimals.
    int64_t ns = c.i;
    bool neg = ns < 0;
    uint64_t a = neg ? uint64_t(-(ns + 1)) + 1 : uint64_t(ns);
    std::string s = (neg ? "-" : "") + std::to_string(a / 1000);
    uint64_t frac = a % 1000;
    if (frac) {
      char buf[8];
      std::snprintf(buf, sizeof buf, ".%03u", unsigned(frac));
      std::string f = buf;
      while (f.back() == '0') f.pop_back();
      s += f;
    }
    return s;
  }
  if (!std::isfinite(c.d)) return "null";
  double us = c.d / 1000.0;
  // Keep full precision for means/std (HTA prints them unrounded); integers print bare.
  return format_number(us);
}

std::string json_escape(std::string_view s) {
  std::string o;
  append_json_string(o, s);  // one escaping rule for every JSON the project writes
  return o;
}

std::string cell_json(const Cell& c) {
  switch (c.kind) {
    case Cell::Null: return "null";
    case Cell::Int: return std::to_string(c.i);
    case Cell::Ns: return format_us(c);
    case Cell::Num: return format_number(c.d);
    case Cell::Str: return json_escape(c.s);
    case Cell::StrList: {
      std::string o = "[";
      for (size_t i = 0; i < c.list.size(); ++i) o += (i ? "," : "") + json_escape(c.list[i]);
      return o + "]";
    }
    case Cell::NumList: {
      std::string o = "[";
      for (size_t i = 0; i < c.nums.size(); ++i) o += (i ? "," : "") + format_number(c.nums[i]);
      return o + "]";
    }
  }
  return "null";
}

std::string cell_text(const Cell& c) {
  switch (c.kind) {
    case Cell::Null: return "";
    case Cell::Str: return c.s;
    case Cell::StrList: {
      std::string o;
      for (size_t i = 0; i < c.list.size(); ++i) o += (i ? "|" : "") + c.list[i];
      return o;
    }
    case Cell::NumList: {
      std::string o;
      for (size_t i = 0; i < c.nums.size(); ++i) o += (i ? "|" : "") + format_number(c.nums[i]);
      return o;
    }
    default: return cell_json(c);
  }
}

std::string render_json(const Report& r, const std::vector<Table>& tables, const std::string& info) {
  std::string o = "{\n";
  o += "  \"mode\": " + json_escape(mode_name(r.table.mode)) + ",\n";
  o += "  \"rank\": " + std::to_string(r.table.rank) + ",\n";
  o += "  \"trace\": " + (info.empty() ? std::string("null") : info) + ",\n";
  for (const Table& t : tables) {
    o += "  " + json_escape(t.name) + ": [";
    for (size_t i = 0; i < t.rows.size(); ++i) {
      o += i ? ",\n    {" : "\n    {";
      for (size_t k = 0; k < t.columns.size(); ++k)
        o += (k ? ", " : "") + json_escape(t.columns[k]) + ": " + cell_json(t.rows[i][k]);
      o += "}";
    }
    o += t.rows.empty() ? "],\n" : "\n  ],\n";
  }
  o += "  \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) o += (i ? ", " : "") + json_escape(r.notes[i]);
  o += "]\n}\n";
  return o;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string shorten(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  return s.substr(0, n - 3) + "...";
}

}  // namespace

std::string render_csv(const Table& t) {
  std::string o;
  for (size_t k = 0; k < t.columns.size(); ++k) {
    if (k) o += ',';
    o += csv_field(t.columns[k]);
  }
  o += "\n";
  for (const auto& row : t.rows) {
    for (size_t k = 0; k < row.size(); ++k) {
      if (k) o += ',';
      o += csv_field(cell_text(row[k]));
    }
    o += "\n";
  }
  return o;
}

void append_text_table(std::string& o, const Table& t, size_t max_rows, size_t clip_width) {
  o += "\n== " + t.name + " ==\n";
  if (t.rows.empty()) {
    o += "(none)\n";
    return;
  }
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width(t.columns.size());
  for (size_t k = 0; k < t.columns.size(); ++k) width[k] = t.columns[k].size();
  for (size_t i = 0; i < t.rows.size() && i < max_rows; ++i) {
    std::vector<std::string> line;
    for (size_t k = 0; k < t.rows[i].size(); ++k) {
      const Cell& cell = t.rows[i][k];
      std::string s = shorten(cell_text(cell), clip_width);
      if (cell.kind == Cell::Num && s.size() > 12) {  // people read 4 decimals
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.4f", cell.d);
        s = buf;
      }
      width[k] = std::max(width[k], s.size());
      line.push_back(std::move(s));
    }
    cells.push_back(std::move(line));
  }
  auto emit = [&](const std::vector<std::string>& line) {
    for (size_t k = 0; k < line.size(); ++k) {
      o += line[k];
      if (k + 1 < line.size()) o += std::string(width[k] - line[k].size() + 2, ' ');
    }
    o += "\n";
  };
  emit(t.columns);
  for (const auto& line : cells) emit(line);
  if (t.rows.size() > max_rows)
    o += "... " + std::to_string(t.rows.size() - max_rows) + " more rows (--format json or csv for all)\n";
}

std::string render_text(const Report& r, const std::vector<Table>& tables) {
  std::string o = "mode: " + std::string(mode_name(r.table.mode)) + "   rank: " + std::to_string(r.table.rank) + "\n";
  for (const Table& t : tables)
    if (t.name != "kernel_durations" && t.name != "launch_histograms") append_text_table(o, t);  // those: JSON only
  if (!r.notes.empty()) {
    o += "\nnotes:\n";
    for (const auto& n : r.notes) o += "  - " + n + "\n";
  }
  return o;
}

}  // namespace sl::analysis
