#include "core/fleet/fleet.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <type_traits>
#include <unordered_map>

#include "core/analysis/outlier_ranks.h"
#include "core/analysis/rank_lookup.h"
#include "core/fleet/sections.h"

namespace sl::fleet {

namespace fs = std::filesystem;

using analysis::Cell;
using analysis::CollectiveAnalysis;
using analysis::ArrivalList;
using analysis::CollectiveArrival;
using analysis::CollectiveInstance;
using analysis::StragglerRow;
using analysis::Table;

namespace {

constexpr char kMagic[] = "SLFLEET";  // with its NUL: 8 bytes
// 1: arrivals inside COLL as varints; 2: arrivals in ARRV as they are in memory (read in place
// from the mapped file), after a PAD section that puts them on an 8-byte boundary.
constexpr uint32_t kVersion = 2;
constexpr uint32_t kHead = tag("HEAD"), kCollectives = tag("COLL"), kTables = tag("TABL"), kRank = tag("RANK"),
                   kTime = tag("TIME"), kArrivals = tag("ARRV"), kPad = tag("PAD ");
static_assert(std::is_trivially_copyable_v<CollectiveArrival> && sizeof(CollectiveArrival) == 48);
constexpr size_t kArrivalBytes = sizeof(CollectiveArrival);

// ---- the fleet's own tables ----

Cell str_or_null(const std::string& s) { return s.empty() ? Cell::null() : Cell::str(s); }

Cell top_idle_cause_cell(std::optional<analysis::IdleCause> top) {
  return top ? Cell::str(std::string(analysis::idle_cause_name(*top))) : Cell::null();
}

// Node of each rank (by position in fleet.ranks), -1 where unknown; names per node.
struct Nodes {
  std::vector<int64_t> of_rank;
  std::map<int64_t, std::string> hosts;
  bool known = false;
};

Nodes assign_nodes(const Fleet& f) {
  Nodes n;
  n.of_rank.assign(f.ranks.size(), -1);
  if (f.gpus_per_node && *f.gpus_per_node > 0) {
    for (size_t i = 0; i < f.ranks.size(); ++i) {
      n.of_rank[i] = f.ranks[i].rank / *f.gpus_per_node;
      std::string& h = n.hosts[n.of_rank[i]];
      if (h.empty()) h = f.ranks[i].host;
    }
    n.known = true;
    return n;
  }
  std::set<std::string> hosts;
  for (const RankSummary& r : f.ranks)
    if (r.ok()) {
      if (r.host.empty()) return n;
      hosts.insert(r.host);
    }
  if (hosts.empty()) return n;
  std::vector<std::string> order(hosts.begin(), hosts.end());
  for (size_t i = 0; i < f.ranks.size(); ++i) {
    auto it = std::find(order.begin(), order.end(), f.ranks[i].host);
    if (it != order.end()) n.of_rank[i] = int64_t(it - order.begin()), n.hosts[n.of_rank[i]] = *it;
  }
  n.known = true;
  return n;
}

Table ranks_table(const Fleet& f, const Nodes& nodes, const std::vector<std::optional<analysis::IdleCause>>& top_cause) {
  Table t("ranks", {"rank", "status", "file", "rank_source", "node", "host", "device", "iterations", "iteration_mean_us",
                    "wait_us", "delay_caused_us", "late_count", "top_cause", "compute_us", "communication_us", "idle_us",
                    "top_idle_cause", "error"});
  std::unordered_map<int64_t, const StragglerRow*> straggler_of;
  for (const StragglerRow& s : f.collectives.stragglers) straggler_of.emplace(s.rank, &s);
  for (size_t i = 0; i < f.ranks.size(); ++i) {
    const RankSummary& r = f.ranks[i];
    const StragglerRow* s = r.ok() ? straggler_of[r.rank] : nullptr;
    auto ns_or_null = [&](auto get) { return s ? Cell::ns(get(*s)) : Cell::null(); };
    t.rows.push_back({Cell::integer(r.rank), Cell::str(r.ok() ? "ok" : "failed"), Cell::str(r.path),
                      Cell::str(std::string(rank_source_name(r.rank_source))),
                      nodes.of_rank[i] >= 0 ? Cell::integer(nodes.of_rank[i]) : Cell::null(), str_or_null(r.host),
                      str_or_null(r.device), s ? Cell::integer(int64_t(s->iterations)) : Cell::null(),
                      s && s->iteration_mean ? Cell::ns(*s->iteration_mean) : Cell::null(),
                      ns_or_null([](auto& x) { return x.wait; }), ns_or_null([](auto& x) { return x.delay_caused; }),
                      s ? Cell::integer(int64_t(s->late_count)) : Cell::null(), s ? str_or_null(s->top_cause) : Cell::null(),
                      ns_or_null([](auto& x) { return x.compute; }), ns_or_null([](auto& x) { return x.communication; }),
                      ns_or_null([](auto& x) { return x.idle; }),
                      top_idle_cause_cell(r.ok() ? top_cause[i] : std::nullopt), str_or_null(r.error)});
  }
  return t;
}

struct NodeSkew {
  uint64_t instances = 0;
  double intra_sum = 0, lag_sum = 0;
  TimeNs intra_max = 0;
};

// Per node: its spread (last − first arrival among its ranks) and its lag (its first arrival −
// the instance's first) per instance; per instance the inter-node skew is the spread of the
// nodes' first arrivals, the intra-node skew the largest node spread.
Table nodes_table(const Fleet& f, const Nodes& nodes, std::vector<std::string>& notes) {
  Table t("nodes", {"node", "host", "ranks", "first_rank", "last_rank", "instances", "intra_skew_mean_us",
                    "intra_skew_max_us", "lag_mean_us"});
  if (!nodes.known) {
    notes.push_back("nodes: no --gpus-per-node given and the traces name no host for every rank: no node grouping");
    return t;
  }
  // Dense node slots, so a collective's arrivals are grouped without a map lookup each.
  std::map<int64_t, std::vector<int64_t>> members;
  for (size_t i = 0; i < f.ranks.size(); ++i)
    if (nodes.of_rank[i] >= 0) members[nodes.of_rank[i]].push_back(f.ranks[i].rank);
  std::vector<int64_t> node_of_slot;
  std::vector<std::pair<int64_t, size_t>> slots;  // (rank, its node's slot)
  for (auto& [node, ranks] : members) {
    for (int64_t r : ranks) slots.push_back({r, node_of_slot.size()});
    node_of_slot.push_back(node);
  }
  const analysis::RankLookup slot_of_rank(slots);
  std::vector<NodeSkew> skew(node_of_slot.size());
  std::vector<std::pair<TimeNs, TimeNs>> span(node_of_slot.size());  // (first, last) arrival per slot
  std::vector<size_t> touched, seen(node_of_slot.size(), 0);  // seen: 1 + the instance that last touched the slot
  double intra_total = 0, inter_total = 0;
  uint64_t inter_count = 0;
  for (size_t n = 0; n < f.collectives.instances.size(); ++n) {
    const CollectiveInstance& in = f.collectives.instances[n];
    touched.clear();
    TimeNs first = INT64_MAX;
    for (const CollectiveArrival& a : in.arrivals) {
      const size_t slot = slot_of_rank.find(a.rank);
      if (slot == analysis::RankLookup::kNone) continue;
      auto& s = span[slot];
      if (seen[slot] != n + 1) {
        seen[slot] = n + 1;
        s = {a.arrival, a.arrival};
        touched.push_back(slot);
      } else {
        s.first = std::min(s.first, a.arrival), s.second = std::max(s.second, a.arrival);
      }
      first = std::min(first, a.arrival);
    }
    if (touched.empty()) continue;
    TimeNs widest = 0, earliest_node = INT64_MAX, latest_node = INT64_MIN;
    for (size_t slot : touched) {
      auto& fl = span[slot];
      NodeSkew& k = skew[slot];
      ++k.instances;
      k.intra_sum += double(fl.second - fl.first);
      k.intra_max = std::max(k.intra_max, fl.second - fl.first);
      k.lag_sum += double(fl.first - first);
      widest = std::max(widest, fl.second - fl.first);
      earliest_node = std::min(earliest_node, fl.first), latest_node = std::max(latest_node, fl.first);
    }
    intra_total += double(widest);
    if (touched.size() > 1) inter_total += double(latest_node - earliest_node), ++inter_count;
  }
  for (size_t slot = 0; slot < node_of_slot.size(); ++slot) {
    int64_t node = node_of_slot[slot];
    const std::vector<int64_t>& ranks = members.at(node);
    const NodeSkew& k = skew[slot];
    double n = double(std::max<uint64_t>(1, k.instances));
    t.rows.push_back({Cell::integer(node), str_or_null(nodes.hosts.at(node)), Cell::integer(int64_t(ranks.size())),
                      Cell::integer(ranks.front()), Cell::integer(ranks.back()), Cell::integer(int64_t(k.instances)),
                      k.instances ? Cell::ns(k.intra_sum / n) : Cell::null(), k.instances ? Cell::ns(k.intra_max) : Cell::null(),
                      k.instances ? Cell::ns(k.lag_sum / n) : Cell::null()});
  }
  size_t instances = f.collectives.instances.size();
  if (instances) {
    std::string line = "nodes: " + std::to_string(members.size()) + " node(s); skew per collective: intra-node mean " +
                       analysis::format_us(Cell::ns(intra_total / double(instances))) + " us";
    if (inter_count) line += ", inter-node mean " + analysis::format_us(Cell::ns(inter_total / double(inter_count))) + " us";
    notes.push_back(line);
  }
  return t;
}

// ---- serialising the analysis and the tables ----

void write_analysis(ByteWriter& w, const CollectiveAnalysis& a) {
  w.varint(a.ranks.size());
  for (size_t i = 0; i < a.ranks.size(); ++i) w.svarint(a.ranks[i]), w.svarint(a.offsets[i]);
  w.u8(a.aligned);
  w.svarint(a.origin_ns);
  // Where each rank's clock was put: the offset its times carry, whether its group was moved,
  // and the groups of clocks that share no moment (core/analysis/collectives.h).
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    w.svarint(i < a.applied.size() ? a.applied[i] : 0);
    w.u8(i < a.moved.size() && a.moved[i]);
  }
  w.varint(a.clock_groups.size());
  for (const auto& g : a.clock_groups) {
    w.varint(g.size());
    for (int64_t rank : g) w.svarint(rank);
  }
  w.varint(a.notes.size());
  for (const auto& n : a.notes) w.str(n);
  w.varint(a.instances.size());
  for (const CollectiveInstance& in : a.instances) {
    w.str(in.name), w.str(in.group), w.varint(in.instance), w.svarint(in.last_rank), w.svarint(in.skew), w.str(in.last_cause);
    w.varint(in.missing.size());
    for (int64_t m : in.missing) w.svarint(m);
    w.varint(in.arrivals.size());  // the arrivals themselves: ARRV
  }
  w.varint(a.stragglers.size());
  for (const StragglerRow& s : a.stragglers) {
    w.svarint(s.rank), w.varint(s.collectives), w.varint(s.late_count), w.svarint(s.delay_caused), w.svarint(s.wait);
    w.u8(s.iteration_mean.has_value());
    if (s.iteration_mean) w.f64(*s.iteration_mean);
    w.varint(s.iterations), w.svarint(s.compute), w.svarint(s.communication), w.svarint(s.idle), w.str(s.top_cause);
  }
}

// Version 1 kept the arrivals here; version 2 only their counts (`counts`), the arrivals in ARRV.
void read_analysis(ByteReader& r, CollectiveAnalysis& a, uint32_t version, std::vector<uint64_t>& counts) {
  size_t n = r.count("ranks", 2);
  for (size_t i = 0; i < n && r.ok(); ++i) a.ranks.push_back(r.svarint("rank")), a.offsets.push_back(r.svarint("offset"));
  a.aligned = r.u8("aligned") != 0;
  a.origin_ns = r.svarint("origin");
  for (size_t i = 0; i < n && r.ok(); ++i) {
    a.applied.push_back(r.svarint("applied offset"));
    a.moved.push_back(r.u8("moved") != 0);
  }
  a.clock_groups.resize(r.count("clock groups"));
  for (auto& g : a.clock_groups) {
    g.resize(r.count("clock group"));
    for (int64_t& rank : g) rank = r.svarint("clock group rank");
  }
  a.notes.resize(r.count("notes"));
  for (auto& note : a.notes) note = r.str("note");
  a.instances.resize(r.count("instances", 7));
  for (CollectiveInstance& in : a.instances) {
    in.name = r.str("name"), in.group = r.str("group"), in.instance = r.varint("instance");
    in.last_rank = r.svarint("last rank"), in.skew = r.svarint("skew"), in.last_cause = r.str("last cause");
    in.missing.resize(r.count("missing"));
    for (int64_t& m : in.missing) m = r.svarint("missing rank");
    if (version >= 2) {
      counts.push_back(r.varint("arrivals"));
    } else {
      in.arrivals.resize(r.count("arrivals", 5));
      for (CollectiveArrival& ar : in.arrivals) {
        ar.rank = r.svarint("arrival rank"), ar.arrival = r.svarint("arrival");
        ar.end = wrapping_add(ar.arrival, r.svarint("arrival end")), ar.wait = r.svarint("wait");
        if (r.u8("cpu arrival")) ar.cpu_arrival = wrapping_add(ar.arrival, r.svarint("cpu arrival"));
      }
    }
    if (!r.ok()) return;
  }
  a.stragglers.resize(r.count("stragglers", 11));
  for (StragglerRow& s : a.stragglers) {
    s.rank = r.svarint("rank"), s.collectives = r.varint("collectives"), s.late_count = r.varint("late count");
    s.delay_caused = r.svarint("delay"), s.wait = r.svarint("wait");
    if (r.u8("iteration mean")) s.iteration_mean = r.f64("iteration mean");
    s.iterations = r.varint("iterations"), s.compute = r.svarint("compute"), s.communication = r.svarint("communication");
    s.idle = r.svarint("idle"), s.top_cause = r.str("top cause");
    if (!r.ok()) return;
  }
}

void write_cell(ByteWriter& w, const Cell& c) {
  w.u8(uint8_t(c.kind) | (c.ns_fractional ? 0x80 : 0));
  switch (c.kind) {
    case Cell::Null: break;
    case Cell::Int: case Cell::Bytes: w.svarint(c.i); break;
    case Cell::Ns: c.ns_fractional ? w.f64(c.d) : w.svarint(c.i); break;
    case Cell::Num: w.f64(c.d); break;
    case Cell::Str: w.str(c.s); break;
    case Cell::StrList:
      w.varint(c.list.size());
      for (const auto& s : c.list) w.str(s);
      break;
    case Cell::NumList:
      w.varint(c.nums.size());
      for (double d : c.nums) w.f64(d);
      break;
  }
}

Cell read_cell(ByteReader& r) {
  uint8_t k = r.u8("cell kind");
  Cell c;
  c.kind = Cell::Kind(k & 0x7f);
  c.ns_fractional = (k & 0x80) != 0;
  switch (c.kind) {
    case Cell::Null: break;
    case Cell::Int: case Cell::Bytes: c.i = r.svarint("cell"); break;
    case Cell::Ns: c.ns_fractional ? void(c.d = r.f64("cell")) : void(c.i = r.svarint("cell")); break;
    case Cell::Num: c.d = r.f64("cell"); break;
    case Cell::Str: c.s = r.str("cell"); break;
    case Cell::StrList:
      c.list.resize(r.count("cell list"));
      for (auto& s : c.list) s = r.str("cell list");
      break;
    case Cell::NumList:
      c.nums.resize(r.count("cell numbers", 8));
      for (double& d : c.nums) d = r.f64("cell numbers");
      break;
    default: r.fail("cell: unknown kind");
  }
  if (c.ns_fractional && c.kind != Cell::Ns) r.fail("cell: unknown kind");
  return c;
}

void write_tables(ByteWriter& w, const std::vector<Table>& tables) {
  w.varint(tables.size());
  for (const Table& t : tables) {
    w.str(t.name);
    w.varint(t.columns.size());
    for (const auto& c : t.columns) w.str(c);
    w.varint(t.rows.size());
    for (const auto& row : t.rows)
      for (const Cell& c : row) write_cell(w, c);
  }
}

void read_tables(ByteReader& r, std::vector<Table>& tables) {
  size_t n = r.count("tables");
  for (size_t i = 0; i < n && r.ok(); ++i) {
    Table t(r.str("table name"), {});
    t.columns.resize(r.count("columns"));
    for (auto& c : t.columns) c = r.str("column");
    size_t rows = r.count("rows", std::max<size_t>(1, t.columns.size()));
    for (size_t k = 0; k < rows && r.ok(); ++k) {
      std::vector<Cell> row;
      for (size_t c = 0; c < t.columns.size(); ++c) row.push_back(read_cell(r));
      t.rows.push_back(std::move(row));
    }
    tables.push_back(std::move(t));
  }
}

void write_strings(ByteWriter& w, const std::vector<std::string>& v) {
  w.varint(v.size());
  for (const auto& s : v) w.str(s);
}

std::vector<std::string> read_strings(ByteReader& r, std::string_view what) {
  std::vector<std::string> v(r.count(what));
  for (auto& s : v) s = r.str(what);
  return v;
}

}  // namespace

size_t Fleet::loaded_count() const {
  return size_t(std::count_if(ranks.begin(), ranks.end(), [](const RankSummary& r) { return r.ok(); }));
}

const RankSummary* Fleet::find(int64_t rank) const {
  for (const auto& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

bool is_fleet_table_name(std::string_view n) { return n == "ranks" || n == "nodes"; }

bool Fleet::summary(size_t i, RankSummary& out, std::string& error) const {
  if (i >= packed.size()) return error = "fleet: no rank at index " + std::to_string(i), false;
  if (!parse_rank_summary(packed[i], out, error)) return error = "fleet: rank " + std::to_string(ranks[i].rank) + ": " + error, false;
  out.load_seconds = ranks[i].load_seconds, out.map_seconds = ranks[i].map_seconds;
  return true;
}

namespace {

// The fleet's loaded ranks for analyze_collectives, each decoded from its packed summary while
// the analysis reads it (one scratch summary per thread); notes each rank's top idle cause.
class PackedSource : public analysis::SummarySource {
public:
  explicit PackedSource(const Fleet& f) : f_(f) {
    for (size_t i = 0; i < f.ranks.size(); ++i)
      if (f.ranks[i].ok()) loaded_.push_back(i);
    top_cause.resize(f.ranks.size());
  }
  size_t size() const override { return loaded_.size(); }
  int64_t rank(size_t i) const override { return f_.ranks[loaded_[i]].rank; }
  void visit(size_t i, const std::function<void(const analysis::RankSummary&)>& use) const override {
    thread_local analysis::RankSummary scratch;
    std::string error;
    if (!parse_rank_analysis(f_.packed[loaded_[i]], scratch, error)) {
      std::lock_guard lock(mutex_);
      if (first_error.empty()) first_error = f_.ranks[loaded_[i]].path + ": " + error;
      scratch = {};
    }
    scratch.rank = f_.ranks[loaded_[i]].rank;
    top_cause[loaded_[i]] = top_idle_cause(scratch);
    use(scratch);
  }
  // Straight from the packed ANLS (no summary decoded, no interval index built; the checksums
  // were verified as the summaries were packed or opened); a damaged one through visit, which
  // names the damage.
  void first_pass(size_t i, analysis::CallSink& sink) const override {
    if (!read_rank_calls(f_.packed[loaded_[i]], f_.ranks[loaded_[i]].rank, sink, top_cause[loaded_[i]], true))
      SummarySource::first_pass(i, sink);
  }
  // Only the intervals and gaps decoded (no calls); a damaged one through visit.
  void visit_activity(size_t i, const std::function<void(const analysis::RankSummary&)>& use) const override {
    thread_local analysis::RankSummary scratch;
    if (!read_rank_activity(f_.packed[loaded_[i]], scratch, true)) return visit(i, use);
    scratch.rank = f_.ranks[loaded_[i]].rank;
    top_cause[loaded_[i]] = top_idle_cause(scratch);
    use(scratch);
  }
  mutable std::vector<std::optional<analysis::IdleCause>> top_cause;  // per fleet rank
  mutable std::string first_error;

private:
  const Fleet& f_;
  std::vector<size_t> loaded_;
  mutable std::mutex mutex_;
};

// The reduce over ranks already packed (META and TIME decoded): sorted by rank, then the job
// report's own code over them, then the fleet's tables.
bool reduce_packed(std::vector<RankSummary> metas, std::vector<std::string> packed, const FleetOptions& o, Fleet& out,
                   std::string& error, std::chrono::steady_clock::time_point t0) {
  std::vector<size_t> order(metas.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return metas[a].rank < metas[b].rank; });
  for (size_t i = 1; i < order.size(); ++i) {
    const RankSummary &a = metas[order[i - 1]], &b = metas[order[i]];
    if (a.rank == b.rank) {
      error = "two summaries claim rank " + std::to_string(b.rank) + ": " + a.path + " (" +
              std::string(rank_source_name(a.rank_source)) + ") and " + b.path + " (" +
              std::string(rank_source_name(b.rank_source)) + ")";
      return false;
    }
  }
  Fleet f;
  f.source = o.source;
  f.gpus_per_node = o.gpus_per_node;
  auto owned = std::make_shared<std::vector<std::string>>();
  for (size_t i : order) {
    f.ranks.push_back(std::move(metas[i]));
    owned->push_back(std::move(packed[i]));
  }
  metas = {}, packed = {};
  for (const std::string& p : *owned) f.packed.push_back(p);
  f.storage = owned;
  PackedSource source(f);
  // The job report's own code: the same matching, offsets, causes and straggler rows.
  f.collectives = analysis::analyze_collectives(source, o.collectives);
  if (!source.first_error.empty()) return error = source.first_error, false;
  Nodes nodes = assign_nodes(f);
  f.tables.push_back(ranks_table(f, nodes, source.top_cause));
  f.tables.push_back(analysis::outliers_table(analysis::outlier_ranks(f.collectives.stragglers)));
  f.tables.push_back(nodes_table(f, nodes, f.fleet_notes));
  f.reduce_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out = std::move(f);
  return true;
}

// META and TIME of a summary, the rest as it is stored.
RankSummary meta_only(const RankSummary& s) {
  RankSummary m;
  m.rank = s.rank, m.rank_source = s.rank_source, m.path = s.path, m.status = s.status, m.error = s.error;
  m.device = s.device, m.distributed_info = s.distributed_info, m.host = s.host;
  m.analysis.rank = s.rank;
  m.load_seconds = s.load_seconds, m.map_seconds = s.map_seconds;
  return m;
}

}  // namespace

bool reduce_fleet(std::vector<RankSummary> ranks, const FleetOptions& o, Fleet& out, std::string& error) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<RankSummary> metas;
  std::vector<std::string> packed;
  for (RankSummary& r : ranks) {
    packed.push_back(serialize_rank_summary(r, false));
    metas.push_back(meta_only(r));
    r = {};
  }
  return reduce_packed(std::move(metas), std::move(packed), o, out, error, t0);
}

bool reduce_fleet_bytes(std::vector<std::string> summaries, const FleetOptions& o, Fleet& out, std::string& error,
                        const std::vector<std::string>* names) {
  auto t0 = std::chrono::steady_clock::now();
  std::vector<RankSummary> metas(summaries.size());
  std::vector<std::string> errors(summaries.size());
  // In place (TIME cut off the end), so the summaries are never held twice.
  parallel_for(summaries.size(), o.collectives.threads, [&](size_t i) { pack_rank_summary(summaries[i], metas[i], errors[i]); });
  for (size_t i = 0; i < errors.size(); ++i)
    if (!errors[i].empty())
      return error = (names && i < names->size() ? (*names)[i] : "summary " + std::to_string(i)) + ": " + errors[i], false;
  return reduce_packed(std::move(metas), std::move(summaries), o, out, error, t0);
}

std::vector<Table> fleet_tables(const Fleet& f) {
  std::vector<Table> out = analysis::collective_tables(f.collectives);
  for (const Table& t : f.tables) out.push_back(t);
  return out;
}

namespace {

void write_fleet_sections(SectionWriter& w, const Fleet& f) {
  ByteWriter head;
  head.str(f.source);
  head.svarint(f.gpus_per_node.value_or(-1));
  head.varint(f.ranks.size());
  write_strings(head, f.fleet_notes);
  w.add(kHead, head.bytes);
  ByteWriter coll;
  write_analysis(coll, f.collectives);
  w.add(kCollectives, coll.bytes);
  coll = {};
  // The arrivals as they are in memory, on an 8-byte boundary of the file (so of its mapping):
  // two section headers (PAD's, ARRV's) and the padding come first.
  size_t pad = (8 - (w.size() + 2 * 25) % 8) % 8;
  w.add(kPad, std::string(pad, '\0'), false);
  uint64_t total = 0;
  for (const CollectiveInstance& in : f.collectives.instances) total += in.arrivals.size();
  w.begin_section(kArrivals, total * kArrivalBytes);
  for (const CollectiveInstance& in : f.collectives.instances)
    w.append(std::string_view(reinterpret_cast<const char*>(in.arrivals.data()), in.arrivals.size() * kArrivalBytes));
  w.end_section();
  ByteWriter tables;
  write_tables(tables, f.tables);
  w.add(kTables, tables.bytes);
  tables = {};
  // Each rank is already compressed section by section: stored as it is.
  for (std::string_view p : f.packed) w.add(kRank, p, false);
  ByteWriter time;
  time.f64(f.reduce_seconds);
  for (const RankSummary& r : f.ranks) time.f64(r.load_seconds), time.f64(r.map_seconds);
  w.add(kTime, time.bytes, false);
}

// What a parsed fleet points into: the file's bytes (mapped, or a copy), and the ranks it had to
// decompress.
struct FleetStorage {
  std::shared_ptr<const void> bytes;
  std::vector<std::string> unpacked;
};

// A read-only mapping of a whole file.
struct MappedFile {
  void* at = nullptr;
  size_t size = 0;
  ~MappedFile() {
    if (at) ::munmap(at, size);
  }
};

bool parse_fleet_in(std::string_view bytes, std::shared_ptr<const void> keep, Fleet& out, std::string& error) {
  StoredFile file = scan_sections(bytes, std::string_view(kMagic, 8), kVersion, "fleet file");
  if (!file.ok()) return error = file.error, false;
  Fleet f;
  auto storage = std::make_shared<FleetStorage>();
  storage->bytes = keep;
  size_t declared_ranks = 0;
  bool head = false, coll = false;
  std::vector<uint64_t> counts;
  const StoredSection* arrivals = nullptr;
  std::vector<std::pair<size_t, std::string_view>> packed;  // (unpacked index + 1, or 0: the view)
  std::string raw;
  for (const StoredSection& sec : file.sections) {
    std::string where = "fleet file: section " + tag_text(sec.tag) + " at byte " + std::to_string(sec.offset) + ": ";
    if (sec.tag == kRank) {
      // Checked (its sections' checksums) and its META read; the rest decoded when asked.
      std::string_view bytes_of_rank = sec.stored;
      if (sec.flags) {
        std::string unpack_error;
        if (!unpack_section(sec, raw, unpack_error)) return error = "fleet file: " + unpack_error, false;
        storage->unpacked.push_back(std::move(raw));
        raw = {};
        packed.push_back({storage->unpacked.size(), {}});
        bytes_of_rank = storage->unpacked.back();
      } else {
        packed.push_back({0, sec.stored});
      }
      RankSummary s;
      std::string rank_error;
      if (!parse_rank_meta(bytes_of_rank, s, rank_error)) return error = where + rank_error, false;
      f.ranks.push_back(std::move(s));
      continue;
    }
    if (sec.tag == kArrivals && file.version >= 2) {
      if (sec.flags || sec.raw_size % kArrivalBytes) return error = where + "arrivals: not whole records", false;
      arrivals = &sec;
      continue;
    }
    if (sec.tag != kHead && sec.tag != kCollectives && sec.tag != kTables && sec.tag != kTime) continue;  // a later version's
    std::string unpack_error;
    if (!unpack_section(sec, raw, unpack_error)) return error = "fleet file: " + unpack_error, false;
    ByteReader r(raw);
    if (sec.tag == kHead) {
      f.source = r.str("source");
      int64_t g = r.svarint("gpus per node");
      if (g >= 0) f.gpus_per_node = g;
      declared_ranks = size_t(r.varint("rank count"));
      f.fleet_notes = read_strings(r, "fleet notes");
      head = true;
    } else if (sec.tag == kCollectives) {
      read_analysis(r, f.collectives, file.version, counts);
      coll = true;
    } else if (sec.tag == kTables) {
      read_tables(r, f.tables);
    } else {
      f.reduce_seconds = r.f64("reduce seconds");
      for (RankSummary& s : f.ranks) s.load_seconds = r.f64("load seconds"), s.map_seconds = r.f64("map seconds");
    }
    if (!r.ok() || !r.at_end()) return error = where + (r.ok() ? std::to_string(r.left()) + " stray bytes" : r.error()), false;
  }
  if (!head || !coll) return error = "fleet file: no HEAD or COLL section", false;
  if (f.ranks.size() != declared_ranks)
    return error = "fleet file: " + std::to_string(f.ranks.size()) + " rank sections, HEAD says " + std::to_string(declared_ranks), false;
  if (file.version >= 2) {
    if (!arrivals) return error = "fleet file: no ARRV section", false;
    uint64_t total = 0, have = arrivals->raw_size / kArrivalBytes;
    for (uint64_t c : counts) total += std::min<uint64_t>(c, have + 1);
    if (total != have)
      return error = "fleet file: section ARRV at byte " + std::to_string(arrivals->offset) + ": " + std::to_string(have) +
                     " arrivals, COLL says " + std::to_string(total), false;
    // In place when the mapping puts them on their alignment (the writer pads for it), else copied.
    const char* at = arrivals->stored.data();
    bool in_place = reinterpret_cast<uintptr_t>(at) % alignof(CollectiveArrival) == 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      ArrivalList& list = f.collectives.instances[i].arrivals;
      if (in_place) {
        list = ArrivalList::view(reinterpret_cast<const CollectiveArrival*>(at), size_t(counts[i]), storage);
      } else {
        auto& v = list.owned();
        v.resize(size_t(counts[i]));
        std::memcpy(static_cast<void*>(v.data()), at, v.size() * kArrivalBytes);
      }
      at += counts[i] * kArrivalBytes;
    }
  }
  for (auto& [k, view] : packed) f.packed.push_back(k ? std::string_view(storage->unpacked[k - 1]) : view);
  f.storage = std::move(storage);
  out = std::move(f);
  return true;
}

}  // namespace

std::string serialize_fleet(const Fleet& f) {
  SectionWriter w(std::string_view(kMagic, 8), kVersion);
  write_fleet_sections(w, f);
  return w.finish();
}

bool parse_fleet(std::string_view bytes, Fleet& out, std::string& error) {
  auto copy = std::make_shared<std::string>(bytes);
  return parse_fleet_in(*copy, copy, out, error);
}

// Streamed into a temporary beside the target (never the whole file in memory), then renamed.
bool write_fleet_file(const std::string& path, const Fleet& fleet, std::string& error) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return error = "cannot write " + temp, false;
  SectionWriter w(std::string_view(kMagic, 8), kVersion, fd);
  write_fleet_sections(w, fleet);
  w.finish();
  bool ok = w.ok() && ::close(fd) == 0;
  std::error_code ec;
  if (!ok) return fs::remove(temp, ec), error = "cannot write " + temp, false;
  fs::rename(temp, path, ec);
  if (ec) return fs::remove(temp, ec), error = "cannot rename " + temp + " to " + path + ": " + ec.message(), false;
  return true;
}

// Mapped, not read: the arrivals stay in the file's pages, the ranks' summaries too until asked.
bool read_fleet_file(const std::string& path, Fleet& out, std::string& error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return error = path + ": cannot open", false;
  struct stat st {};
  auto mapped = std::make_shared<MappedFile>();
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    void* at = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (at != MAP_FAILED) mapped->at = at, mapped->size = size_t(st.st_size);
  }
  ::close(fd);
  bool ok = false;
  if (mapped->at) {
    ok = parse_fleet_in(std::string_view(static_cast<const char*>(mapped->at), mapped->size), mapped, out, error);
  } else {  // empty, or not mappable (a pipe): read
    std::string bytes;
    if (!read_whole_file(path, bytes, error)) return false;
    ok = parse_fleet(bytes, out, error);
  }
  if (!ok) return error = path + ": " + error, false;
  return true;
}

std::unique_ptr<Job> job_of_fleet(const Fleet& f) {
  auto job = std::make_unique<Job>();
  job->source = f.source;
  for (const RankSummary& r : f.ranks) {
    JobRank jr;
    jr.rank = r.rank;
    jr.rank_source = r.rank_source;
    jr.path = r.path;
    jr.error.file = r.path;
    // The summary's error is LoadError::to_string (FILE: ...): keep it whole, less its file.
    std::string prefix = r.path + ": ";
    jr.error.message = r.ok() ? "not loaded (a fleet rank: its summary only)"
                       : r.error.rfind(prefix, 0) == 0 ? r.error.substr(prefix.size()) : r.error;
    jr.load_seconds = r.load_seconds;
    job->ranks.push_back(std::move(jr));
  }
  return job;
}

analysis::JobOverview overview_of_fleet(const Fleet& f, const analysis::CollectiveOptions& options) {
  analysis::JobOverview base;
  for (size_t i = 0; i < f.ranks.size(); ++i) {
    if (!f.ranks[i].ok()) continue;
    analysis::RankActivity a;
    a.rank = f.ranks[i].rank;
    a.job_index = i;
    auto summary = std::make_shared<analysis::RankSummary>();
    std::string error;
    if (!parse_rank_analysis(f.packed[i], *summary, error)) continue;  // damaged past its checksums: left out
    a.idle = std::make_shared<const analysis::IdleCoverage>(analysis::idle_coverage(summary->causes));
    a.summary = std::move(summary);
    base.ranks.push_back(std::move(a));
  }
  return analysis::realign_job_overview(base, options);
}

std::map<int64_t, int64_t> node_of_ranks(const Fleet& f) {
  Nodes nodes = assign_nodes(f);
  std::map<int64_t, int64_t> out;
  for (size_t i = 0; i < f.ranks.size(); ++i)
    if (nodes.of_rank[i] >= 0) out.emplace(f.ranks[i].rank, nodes.of_rank[i]);
  return out;
}

bool is_fleet_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char magic[8] = {};
  f.read(magic, 8);
  return f.gcount() == 8 && std::string_view(magic, 8) == std::string_view(kMagic, 8);
}

}  // namespace sl::fleet
