#include "core/analysis/report_tables.h"

#include "core/names/name_elision.h"
#include "core/names/short_names.h"
#include "core/text/format.h"
#include "core/text/json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace sl::analysis {

namespace {

using C = Cell;

Cell opt_num(const std::optional<double>& v) { return v ? C::num(*v) : C::null(); }
Cell opt_ns(const std::optional<double>& v) { return v ? C::ns(*v) : C::null(); }

// describe() columns in µs (idle intervals) or plain numbers (queue length, GB/s).
// How add_describe writes the statistics: plain numbers, ns (printed as µs), or µs rounded to 2
// decimals as HTA rounds its idle interval statistics (kept as exact integer ns, so 32.88 prints
// as 32.88).
enum class DescribeUnit : uint8_t { Number, Ns, HtaMicros2 };

void add_describe(std::vector<Cell>& row, const Describe& d, DescribeUnit unit) {
  row.push_back(C::integer(int64_t(d.count)));
  auto v = [&](double x) {
    if (unit == DescribeUnit::HtaMicros2) return C::ns(int64_t(std::llround(round_to(x / 1000.0, 2) * 1000.0)));
    return unit == DescribeUnit::Ns ? C::ns(x) : C::num(x);
  };
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

namespace {

// Derived columns shared by the per-kernel and per-operator CUPTI tables.
const std::vector<std::string> kCuptiDerived = {"flops", "dram_bytes", "kernel_time_us", "gflop_per_s",
                                                "dram_gb_per_s", "flop_per_byte"};

void add_cupti_derived(std::vector<Cell>& row, std::optional<double> flops, std::optional<double> bytes,
                       std::optional<double> seconds) {
  auto opt = [](std::optional<double> v, double scale = 1) { return v ? Cell::num(*v * scale) : Cell::null(); };
  row.push_back(opt(flops));
  row.push_back(opt(bytes));
  row.push_back(opt(seconds, 1e6));
  row.push_back(opt(per_second(flops, seconds), 1e-9));
  row.push_back(opt(per_second(bytes, seconds), 1e-9));
  row.push_back(opt(intensity(flops, bytes)));
}

// critical_path: the path of one annotation instance; critical_path_summary: its edges by what
// bounds them (bound_by "" = zero-weight dependency edges, as HTA lists them).
void add_critical_path_tables(const CriticalPath& p, std::vector<Table>& out) {
  Table t{"critical_path", {"rank", "annotation", "instance", "start_us", "end_us", "length_us"}};
  t.rows.push_back({C::integer(p.rank), C::str(p.annotation), C::integer(p.instance), C::ns(p.start), C::ns(p.end),
                    C::ns(p.length)});
  out.push_back(std::move(t));
  Table s{"critical_path_summary", {"bound_by", "sum_us", "count", "pct"}};
  for (const auto& share : p.summary)
    s.rows.push_back({C::str(std::string(bound_by_name(share.bound_by))), C::ns(share.sum),
                      C::integer(int64_t(share.count)), C::num(share.pct)});
  out.push_back(std::move(s));
}

// critical_path_edges: the path itself, edge by edge (the slices the GUI's overlay outlines).
void add_critical_path_edges(const EventTable& table, const CriticalPath& p, std::vector<Table>& out) {
  Table e{"critical_path_edges", {"step", "from", "from_start_us", "from_node", "to", "to_start_us", "to_node", "weight_us", "bound_by"}};
  auto node = [](bool start) { return C::str(start ? "start" : "end"); };
  for (size_t i = 0; i < p.path.size(); ++i) {
    const CriticalPathEdge& edge = p.path[i];
    const Row& from = table.rows[edge.from_row];
    const Row& to = table.rows[edge.to_row];
    e.rows.push_back({C::integer(int64_t(i)), C::str(std::string(table.name(from))), C::ns(from.ts), node(edge.from_start),
                      C::str(std::string(table.name(to))), C::ns(to.ts), node(edge.to_start), C::ns(edge.weight),
                      C::str(std::string(bound_by_name(edge.bound_by)))});
  }
  out.push_back(std::move(e));
}

// cupti_counters: one row per profiled kernel; cupti_counters_by_operator (Sightline mode): the
// same summed per innermost operator. (HTA) a metric a range lacks reads -1, HTA's default.
void add_cupti_tables(const CuptiCounters& c, Mode mode, std::vector<Table>& out) {
  std::vector<std::string> cols = {"rank", "kernel", "operator", "top_level_op", "op_stack", "ts_us", "dur_us"};
  cols.insert(cols.end(), c.metrics.begin(), c.metrics.end());
  cols.insert(cols.end(), kCuptiDerived.begin(), kCuptiDerived.end());
  Table t{"cupti_counters", cols};
  for (const CuptiKernelCounters& k : c.kernels) {
    std::vector<Cell> row = {C::integer(c.rank), C::str(k.kernel), C::str(k.bottom_op), C::str(k.top_op),
                             C::strs(k.op_stack),  C::ns(k.ts),      C::ns(k.dur)};
    for (const auto& v : k.values) row.push_back(v ? C::num(*v) : mode == Mode::Hta ? C::num(-1) : C::null());
    add_cupti_derived(row, k.flops, k.dram_bytes, k.seconds);
    t.rows.push_back(std::move(row));
  }
  out.push_back(std::move(t));
  if (c.operators.empty()) return;
  std::vector<std::string> op_cols = {"rank", "operator", "kernels"};
  op_cols.insert(op_cols.end(), c.metrics.begin(), c.metrics.end());
  op_cols.insert(op_cols.end(), kCuptiDerived.begin(), kCuptiDerived.end());
  Table ops{"cupti_counters_by_operator", op_cols};
  for (const CuptiOperatorCounters& o : c.operators) {
    std::vector<Cell> row = {C::integer(c.rank), C::str(o.op), C::integer(int64_t(o.kernels))};
    for (double v : o.sums) row.push_back(C::num(v));
    add_cupti_derived(row, o.flops, o.dram_bytes, o.seconds);
    ops.rows.push_back(std::move(row));
  }
  out.push_back(std::move(ops));
}

// "name 12.3 ms; other 1.2 ms": a window's top CPU events by self time.
std::string host_events_text(const TraceStore& s, const std::vector<HostEvent>& events) {
  std::string o;
  for (const HostEvent& e : events)
    o += (o.empty() ? "" : "; ") + std::string(s.strings.view(e.name)) + " " + human::duration(e.self);
  return o;
}

// The ledger (§2b), so any verdict can be audited: per cause its device-wide total, pieces, share,
// longest piece, top CPU events and fix; then each cause's longest pieces with their windows.
void add_ledger_tables(const Report& r, std::vector<Table>& out) {
  const IdleLedger& l = *r.ledger;
  Table sum{"ledger", {"rank", "cause", "idle_us", "gaps", "share", "longest_us", "longest_start_us", "longest_end_us",
                       "top_cpu_events", "fix"}};
  Table gaps{"ledger_gaps", {"rank", "cause", "stream", "start_us", "end_us", "idle_us", "host_window_end_us"}};
  for (int k = 0; k < kIdleCauseCount; ++k) {
    const IdleCause c = IdleCause(k);
    if (l.pieces(c) == 0) continue;
    const DeviceIdle* longest = l.longest(c);
    sum.rows.push_back({C::integer(r.table.rank), C::str(std::string(idle_cause_name(c))), C::ns(l.device_idle(c)),
                        C::integer(int64_t(l.pieces(c))), C::num(double(l.device_idle(c)) / double(l.device_idle())),
                        C::ns(longest->end - longest->start), C::ns(longest->start), C::ns(longest->end),
                        C::str(host_events_text(*r.table.store, l.top_events(*r.causes, c))),
                        C::str(std::string(idle_cause_fix(c)))});
    std::vector<const DeviceIdle*> pieces;
    for (const DeviceIdle& d : l.device())
      if (d.cause == c) pieces.push_back(&d);
    const size_t keep = std::min<size_t>(5, pieces.size());
    std::partial_sort(pieces.begin(), pieces.begin() + ptrdiff_t(keep), pieces.end(), [](const DeviceIdle* a, const DeviceIdle* b) {
      return a->end - a->start != b->end - b->start ? a->end - a->start > b->end - b->start : a->start < b->start;
    });
    for (size_t i = 0; i < keep; ++i) {
      const IdleGap& g = r.causes->gaps[pieces[i]->gap];
      gaps.rows.push_back({C::integer(r.table.rank), C::str(std::string(idle_cause_name(c))), C::integer(g.stream),
                           C::ns(pieces[i]->start), C::ns(pieces[i]->end), C::ns(pieces[i]->end - pieces[i]->start),
                           C::ns(g.host_end)});
    }
  }
  out.push_back(std::move(sum));
  out.push_back(std::move(gaps));
}

// The memory tables (§11, core/memory/): each asked for by name or in a full report.
void add_memory_tables(const Report& r, const memory::MemoryAnalysis& m, std::vector<Table>& out) {
  const TraceStore& s = *r.table.store;
  auto wanted = [&](const char* name) { return r.wants(name); };
  if (wanted("memory_timeline")) {
    Table t{"memory_timeline", {"device", "ts_us", "allocated_bytes", "reserved_bytes"}};
    for (const memory::DeviceMemory& d : m.devices)
      for (const memory::MemoryPoint& p : d.timeline)
        t.rows.push_back({C::str(d.label), C::ns(p.ts), C::bytes(p.allocated), d.reserved_known ? C::bytes(p.reserved) : C::null()});
    out.push_back(std::move(t));
  }
  if (wanted("memory_peak")) {
    Table t{"memory_peak", {"device", "ts_us", "allocated_bytes", "reserved_bytes", "fragmentation_bytes", "device_memory_bytes",
                            "blocks_live", "blocks", "allocated_at_end_bytes", "live_at_end_bytes", "source"}};
    for (const memory::DeviceMemory& d : m.devices)
      t.rows.push_back({C::str(d.label), C::ns(d.peak_ts), C::bytes(d.peak_allocated),
                        d.reserved_known ? C::bytes(d.peak_reserved) : C::null(),
                        d.reserved_known ? C::bytes(d.fragmentation) : C::null(), d.capacity ? C::bytes(*d.capacity) : C::null(),
                        d.addresses ? C::integer(int64_t(d.blocks_at_peak)) : C::null(),
                        d.addresses ? C::integer(int64_t(d.blocks)) : C::null(), C::bytes(d.allocated_at_end),
                        d.addresses ? C::bytes(d.live_bytes_at_end) : C::null(),
                        C::str(d.from_totals ? "total_allocated" : "sum_of_bytes")});
    out.push_back(std::move(t));
  }
  auto contexts = [&](const char* name, auto member) {
    if (!wanted(name)) return;
    Table t{name, {"device", "context", "bytes", "blocks", "first_alloc_us"}};
    for (const memory::DeviceMemory& d : m.devices)
      for (const memory::ContextBytes& c : d.*member)
        t.rows.push_back({C::str(d.label), C::str(memory::context_name(s, c.context)), C::bytes(c.bytes), C::integer(int64_t(c.blocks)),
                          C::ns(c.first_alloc)});
    out.push_back(std::move(t));
  };
  contexts("memory_at_peak", &memory::DeviceMemory::at_peak);
  contexts("memory_leaks", &memory::DeviceMemory::leaks);
  if (wanted("memory_churn")) {
    Table t{"memory_churn", {"device", "context", "short_lived", "allocations", "short_lived_bytes"}};
    for (const memory::DeviceMemory& d : m.devices)
      for (const memory::ChurnContext& c : d.churn)
        t.rows.push_back({C::str(d.label), C::str(memory::context_name(s, c.context)), C::integer(int64_t(c.short_lived)),
                          C::integer(int64_t(c.allocations)), C::bytes(c.short_lived_bytes)});
    out.push_back(std::move(t));
  }
  if (wanted("memory_iterations")) {
    Table t{"memory_iterations", {"device", "iteration", "start_us", "end_us", "peak_bytes", "live_at_end_bytes"}};
    for (const memory::DeviceMemory& d : m.devices)
      for (const memory::IterationMemory& it : d.iterations)
        t.rows.push_back({C::str(d.label), C::integer(it.number), C::ns(it.start), C::ns(it.end), C::bytes(it.peak),
                          C::bytes(it.live_at_end)});
    out.push_back(std::move(t));
  }
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
      add_describe(row, x.stats, r.table.mode == Mode::Hta ? DescribeUnit::HtaMicros2 : DescribeUnit::Ns);
      b.rows.push_back(std::move(row));
    }
    out.push_back(std::move(a));
    out.push_back(std::move(b));
  }
  if (r.causes) {
    Table t{"idle_causes", {"rank", "stream", "cause", "idle_us", "count", "share", "top_cpu_events"}};
    for (const auto& x : r.causes->rows)
      t.rows.push_back({C::integer(x.rank), C::integer(x.stream), C::str(std::string(idle_cause_name(x.cause))),
                        C::ns(x.idle), C::integer(int64_t(x.count)), C::num(x.share),
                        C::str(host_events_text(*r.table.store, x.top_events))});
    out.push_back(std::move(t));
  }
  if (r.ledger) add_ledger_tables(r, out);
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
    if (s.graph_launches) {  // Sightline mode: graph kernels' own latencies (see launch_stats.h)
      Table g{"graph_launches", {"rank", "graph_launches", "graph_activities", "runtime_sum_us",
                                 "first_activity_delay_median_us", "in_graph_delay_median_us"}};
      g.rows.push_back({C::integer(s.rank), C::integer(int64_t(s.graph_launches)), C::integer(int64_t(s.graph_activities)),
                        C::ns(s.graph_runtime_sum), C::ns(s.graph_first_delay_median), C::ns(s.graph_inner_delay_median)});
      out.push_back(std::move(g));
    }
  }
  if (r.queues) {
    Table t{"queue_length_summary", {"rank", "stream", "count", "mean", "std", "min", "p25", "p50", "p75", "max", "time_at_max_us"}};
    for (const auto& q : *r.queues) {
      std::vector<Cell> row{C::integer(q.rank), C::integer(q.stream)};
      add_describe(row, q.summary, DescribeUnit::Number);
      row.push_back(C::ns(q.time_at_max));
      t.rows.push_back(std::move(row));
    }
    out.push_back(std::move(t));
  }
  if (r.bandwidth) {
    Table t{"memory_bw_summary", {"rank", "copy_kind", "count", "mean", "std", "min", "p25", "p50", "p75", "max"}};
    for (const auto& k : *r.bandwidth) {
      std::vector<Cell> row{C::integer(k.rank), C::str(k.copy_kind)};
      add_describe(row, k.summary, DescribeUnit::Number);
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
    // tklqt_us (SKIP, queue time included) beside host_orchestration_us (queue-free, the HDBI's
    // host term), so a reader sees why a long TKLQT can still be device-bound.
    // Sightline mode: the verdict from the ledger, with the host cause it names (bound_by).
    const bool ledger = r.table.mode == Mode::Sightline;
    // TKLQT is a sum over every kernel and can exceed the trace many times: text shows it per
    // kernel (tklqt_per_kernel_us), JSON and CSV also the sum (json_only_column).
    Table t{"coupling", {"rank", "iteration", "tklqt_us", "tklqt_per_kernel_us", "host_orchestration_us", "akd_us",
                         "latency_us", "gpu_busy_us", "utilization", "exposed_host_us", "hdbi", "bound"}};
    if (ledger) t.columns.insert(t.columns.end(), {"bound_by", "bound_by_idle_us"});
    for (const auto& c : r.coupling->rows) {
      if (c.kernels == 0 && c.iteration) continue;  // an iteration without kernels says nothing
      t.rows.push_back({C::integer(c.rank), c.iteration ? C::integer(*c.iteration) : C::null(), C::ns(c.tklqt),
                        c.launched ? C::ns(double(c.tklqt) / double(c.launched)) : C::null(),
                        C::ns(c.host_orchestration), C::ns(c.akd), C::ns(c.latency), C::ns(c.gpu_busy), C::num(c.utilization),
                        C::ns(c.exposed_host), C::num(c.hdbi),
                        c.kernels && c.bound != Boundness::Unmeasured ? C::str(std::string(boundness_name(c.bound))) : C::null()});
      if (ledger) {
        t.rows.back().push_back(c.bound_cause ? C::str(std::string(idle_cause_name(*c.bound_cause))) : C::null());
        t.rows.back().push_back(c.bound_cause ? C::ns(c.bound_cause_idle) : C::null());
      }
    }
    out.push_back(std::move(t));
  }
  if (r.fusion) {
    Table t{"fusion_candidates", {"chain", "length", "count", "proximity", "launch_overhead_us"}};
    for (const auto& f : *r.fusion)
      t.rows.push_back({C::strs(f.chain), C::integer(int64_t(f.chain.size())), C::integer(int64_t(f.count)),
                        C::num(f.proximity), C::ns(f.saving)});
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
  if (r.insights) {
    Table t{"insights", {"position", "kind", "cost_us", "start_us", "end_us", "title", "detail"}};
    for (size_t i = 0; i < r.insights->size(); ++i) {
      const Insight& in = (*r.insights)[i];
      t.rows.push_back({C::integer(int64_t(i + 1)), C::str(in.kind), C::ns(in.cost), C::ns(in.t0), C::ns(in.t1),
                        C::str(in.title), C::str(in.detail)});
    }
    out.push_back(std::move(t));
  }
  if (!r.memory_findings.empty()) {
    // Memory findings cost memory, not time: after the ranked ones, with no cost.
    Table& t = !out.empty() && out.back().name == "insights" ? out.back() : out.emplace_back(Table{"insights", {"position", "kind", "cost_us", "start_us", "end_us", "title", "detail"}});
    for (const memory::MemoryFinding& f : r.memory_findings)
      t.rows.push_back({C::integer(int64_t(t.rows.size() + 1)), C::str(f.kind), C::null(), C::ns(f.t0), C::ns(f.t1),
                        C::str(f.title), C::str(f.detail)});
  }
  if (r.memory_analysis) add_memory_tables(r, *r.memory_analysis, out);
  if (r.cupti && !r.cupti->kernels.empty()) add_cupti_tables(*r.cupti, r.table.mode, out);
  if (r.critical_path && r.critical_path->valid) {
    add_critical_path_tables(*r.critical_path, out);
    add_critical_path_edges(r.table, *r.critical_path, out);
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
    case Cell::Int:
    case Cell::Bytes: return std::to_string(c.i);
    case Cell::Ns: return format_us(c);
    case Cell::Num: return format_number(c.d);
    case Cell::Str: return json_escape(c.s);
    case Cell::StrList: {
      std::string o = "[";
      for (size_t i = 0; i < c.list.size(); ++i) {
        if (i) o += ',';
        o += json_escape(c.list[i]);
      }
      return o + "]";
    }
    case Cell::NumList: {
      std::string o = "[";
      for (size_t i = 0; i < c.nums.size(); ++i) {
        if (i) o += ',';
        o += format_number(c.nums[i]);
      }
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
      for (size_t i = 0; i < c.nums.size(); ++i) {
        if (i) o += '|';
        o += format_number(c.nums[i]);
      }
      return o;
    }
    default: return cell_json(c);
  }
}

void append_tables_json(std::string& o, const std::vector<Table>& tables, const std::vector<std::string>& notes) {
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
  for (size_t i = 0; i < notes.size(); ++i) o += (i ? ", " : "") + json_escape(notes[i]);
  o += "]\n}\n";
}

std::string render_json(const Report& r, const std::vector<Table>& tables, const std::string& info) {
  std::string o = "{\n";
  o += "  \"mode\": " + json_escape(mode_name(r.table.mode)) + ",\n";
  o += "  \"rank\": " + std::to_string(r.table.rank) + ",\n";
  o += "  \"trace\": " + (info.empty() ? std::string("null") : info) + ",\n";
  append_tables_json(o, tables, r.notes);
  return o;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

// Cut to n bytes with "..." at the end; never inside a UTF-8 sequence (names hold "→", "…"),
// so the text output stays valid UTF-8.
std::string shorten(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t cut = n - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // a continuation byte
  return s.substr(0, cut) + "...";
}

// Columns that hold kernel or operator names (or lists of them); other text is cut to fit.
bool is_name_column(std::string_view column) {
  return column == "name" || column == "operator" || column == "chain" || column == "pattern" ||
         column == "kernels_added" || column == "kernels_removed";
}

std::string short_list(const ShortNames& names, const std::vector<std::string>& list) {
  std::string o;
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) o += '|';
    o += names(list[i]);
  }
  return o;
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

// The text format is for people (core/text/format.h): durations in the unit that fits, percentages
// with one decimal, counts with thousands separators. Identifier columns (rank, stream, ...) print
// as they are; JSON and CSV keep full precision.
namespace {

bool is_identifier_column(std::string_view column) {
  for (std::string_view id : {"rank", "stream", "device", "pid", "tid"})
    if (column == id) return true;
  return column.rfind("iteration", 0) == 0;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Columns of fractions of one (an idle category's ratio, a cause's share, utilization, how
// close a fusion chain's kernels run): percentages in text.
bool is_fraction_column(std::string_view column) {
  for (std::string_view f : {"ratio", "share", "utilization", "proximity"})
    if (column == f) return true;
  return false;
}

// A plain number as text says what it is: percentages, bandwidths with their unit (GB/s in the
// model), other numbers with at most three decimals.
std::string text_number(std::string_view table, std::string_view column, double v) {
  if (ends_with(column, "_pct") || column == "pct") return human::percent(v);
  if (is_fraction_column(column)) return human::percent(v * 100);
  if ((table == "memory_bw_summary" && column != "count") || ends_with(column, "_gb_per_s")) return human::bandwidth(v * 1e9);
  if (column == "gflop_per_s") return human::decimal(v) + " GFLOP/s";
  return human::decimal(v);
}

std::string text_cell(std::string_view table, std::string_view column, const Cell& c) {
  switch (c.kind) {
    case Cell::Ns: return c.ns_fractional ? human::duration(c.d) : human::duration(c.i);
    case Cell::Bytes: return human::bytes(c.i);
    case Cell::Int: return is_identifier_column(column) ? std::to_string(c.i) : human::count(c.i);
    case Cell::Num: return text_number(table, column, c.d);
    default: return cell_text(c);
  }
}

// A column of durations drops its "_us": its cells carry their own unit ("1.62 ms").
std::vector<std::string> text_header(const Table& t) {
  std::vector<std::string> header = t.columns;
  for (size_t k = 0; k < header.size(); ++k) {
    bool durations = !t.rows.empty() && ends_with(header[k], "_us");
    for (const auto& row : t.rows)
      if (k < row.size() && row[k].kind != Cell::Ns && row[k].kind != Cell::Null) durations = false;
    if (durations) header[k].resize(header[k].size() - 3);
  }
  return header;
}

}  // namespace

// Sums a reader would take for a bug in text (TKLQT over a whole trace: seconds on a trace of
// milliseconds); text shows their per-kernel form beside them.
bool is_json_only_column(std::string_view table, std::string_view column) {
  return table == "coupling" && column == "tklqt_us";
}

namespace {

// The cells of the shown rows as text, and which columns hold names (shown short: distinct
// among every name of the table, core/names/short_names.h).
struct TextCells {
  std::vector<bool> is_name, is_list;  // is_list: the cells are names joined with '|'
  // Cut in the middle to fit rather than at 60 characters: names, and call paths (a diff's
  // "A > B > C", whose leaf at the end is what the row is about).
  std::vector<bool> elided;

  std::vector<std::vector<std::string>> rows;
  bool shortened = false, clipped = false;
};

TextCells text_cells(const Table& t, size_t max_rows, size_t clip_width) {
  TextCells out;
  out.is_name.resize(t.columns.size());
  out.is_list.resize(t.columns.size());
  std::vector<std::string_view> names;
  for (size_t k = 0; k < t.columns.size(); ++k) {
    out.is_name[k] = is_name_column(t.columns[k]);
    out.is_list[k] = out.is_name[k] && !t.rows.empty() && t.rows.front()[k].kind == Cell::StrList;
    out.elided.push_back(out.is_name[k] || t.columns[k] == "path");
  }
  for (const auto& row : t.rows)
    for (size_t k = 0; k < row.size(); ++k) {
      if (!out.is_name[k]) continue;
      if (row[k].kind == Cell::Str) names.push_back(row[k].s);
      if (row[k].kind == Cell::StrList) names.insert(names.end(), row[k].list.begin(), row[k].list.end());
    }
  ShortNames short_names(names);
  for (size_t i = 0; i < t.rows.size() && i < max_rows; ++i) {
    std::vector<std::string> line;
    for (size_t k = 0; k < t.rows[i].size(); ++k) {
      const Cell& cell = t.rows[i][k];
      std::string s;
      if (out.is_name[k] && (cell.kind == Cell::Str || cell.kind == Cell::StrList)) {
        s = cell.kind == Cell::Str ? short_names(cell.s) : short_list(short_names, cell.list);
        out.shortened |= s != cell_text(cell);
      } else {
        // A table of `metric` rows (the diff's summary): each value is what its row's metric
        // names (`idle_pct` a percentage), not what its column does.
        std::string_view column = t.columns[k];
        if (k > 0 && t.columns[0] == "metric" && t.rows[i][0].kind == Cell::Str) column = t.rows[i][0].s;
        s = text_cell(t.name, column, cell);
        if (s.size() > clip_width && !out.elided[k]) s = shorten(s, clip_width), out.clipped = true;
      }
      line.push_back(std::move(s));
    }
    out.rows.push_back(std::move(line));
  }
  return out;
}

// The names of list cells, as short_list joined them.
std::vector<std::vector<std::string>> split_lists(const std::vector<std::string>& cells) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& cell : cells) {
    std::vector<std::string>& list = out.emplace_back();
    for (size_t from = 0;;) {
      size_t bar = cell.find('|', from);
      list.push_back(cell.substr(from, bar == std::string::npos ? std::string::npos : bar - from));
      if (bar == std::string::npos) break;
      from = bar + 1;
    }
  }
  return out;
}

std::vector<size_t> column_widths(const std::vector<std::string>& header, const TextCells& cells) {
  std::vector<size_t> width(header.size());
  for (size_t k = 0; k < header.size(); ++k) width[k] = display_width(header[k]);
  for (const auto& line : cells.rows)
    for (size_t k = 0; k < line.size(); ++k) width[k] = std::max(width[k], display_width(line[k]));
  return width;
}

// A name column is never cut below this: a few letters of head and tail read as nothing.
constexpr size_t kNarrowestName = 24;

// Name columns cut (in the middle, distinct within the column) to the width the other columns
// leave, shared by the name columns in proportion to their own widths. Numbers are never cut: a
// table of numbers wider than the terminal stays as it is. Returns whether a name was cut.
bool fit_names(TextCells& cells, const std::vector<size_t>& shown, std::vector<size_t>& width, size_t total) {
  size_t fixed = shown.empty() ? 0 : 2 * (shown.size() - 1), names = 0;
  for (size_t k : shown) (cells.elided[k] ? names : fixed) += width[k];
  if (fixed + names <= total || names == 0) return false;
  const size_t room = total > fixed ? total - fixed : 0;
  bool cut = false;
  for (size_t k : shown) {
    if (!cells.elided[k]) continue;
    size_t budget = std::max(kNarrowestName, size_t(double(room) * double(width[k]) / double(names)));
    if (width[k] <= budget) continue;
    std::vector<std::string> column;
    for (const auto& line : cells.rows) column.push_back(k < line.size() ? line[k] : std::string());
    column = cells.is_list[k] ? elide_lists(split_lists(column), budget) : elide_names(column, budget);
    for (size_t i = 0; i < cells.rows.size(); ++i)
      if (k < cells.rows[i].size()) cells.rows[i][k] = std::move(column[i]);
    cut = true;
  }
  return cut;
}

}  // namespace

void append_text_table(std::string& o, const Table& t, size_t max_rows, size_t clip_width, const TextLayout& layout) {
  o += "\n== " + t.name + " ==\n";
  if (t.rows.empty()) {
    o += "(none)\n";
    return;
  }
  TextCells cells = text_cells(t, max_rows, clip_width);
  std::vector<std::string> header = text_header(t);
  // Lists of names (a fusion chain, a kernel pattern) are long: in text they go last, so the
  // columns after them stay aligned and readable.
  std::vector<size_t> order;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t k = 0; k < t.columns.size(); ++k) {
      if (is_json_only_column(t.name, t.columns[k])) continue;
      if (cells.is_list[k] == (pass == 1)) order.push_back(k);
    }
  std::vector<size_t> width = column_widths(header, cells);
  const bool cut = !layout.wide && fit_names(cells, order, width, layout.width);
  if (cut) width = column_widths(header, cells);
  auto emit = [&](const std::vector<std::string>& line) {
    for (size_t i = 0; i < order.size(); ++i) {
      size_t k = order[i];
      o += line[k];
      if (i + 1 < order.size()) o += std::string(width[k] - display_width(line[k]) + 2, ' ');
    }
    o += "\n";
  };
  emit(header);
  for (const auto& line : cells.rows) emit(line);
  if (cut)
    o += "(names cut with … to fit " + std::to_string(layout.width) + " columns; --wide or --format json/csv: whole)\n";
  else if (cells.shortened)
    o += "(names shortened where they stay distinct; --format json or csv prints them whole)\n";
  if (cells.clipped) o += "(long cells cut with ...; --format json or csv prints them whole)\n";
  if (t.rows.size() > max_rows)
    o += "... " + std::to_string(t.rows.size() - max_rows) + " more rows (--format json or csv for all)\n";
}

bool is_text_table(std::string_view name, const Report& r) {
  // The ledger's own tables are for auditing: text prints them with --explain (or --only ledger).
  const bool explain = r.explain || std::find(r.only.begin(), r.only.end(), "ledger") != r.only.end();
  if (!explain && (name == "ledger" || name == "ledger_gaps")) return false;
  return name != "kernel_durations" && name != "launch_histograms" && name != "insights" && name != "memory_timeline";
}

std::string render_text(const Report& r, const std::vector<Table>& tables, const TextLayout& layout) {
  std::string o = "mode: " + std::string(mode_name(r.table.mode)) + "   rank: " + std::to_string(r.table.rank) + "\n";
  o += headline_text(r);  // the findings first; the insights table itself: JSON/CSV only
  for (const Table& t : tables)
    if (is_text_table(t.name, r)) append_text_table(o, t, SIZE_MAX, 60, layout);
  if (!r.notes.empty()) {
    o += "\nnotes:\n";
    for (const auto& n : r.notes) o += "  - " + n + "\n";
  }
  return o;
}

}  // namespace sl::analysis
