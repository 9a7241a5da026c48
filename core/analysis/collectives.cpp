#include "core/analysis/collectives.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "core/analysis/idle_time.h"
#include "core/analysis/interval_index.h"
#include "core/analysis/report_tables.h"
#include "core/job/job.h"

namespace sl::analysis {

std::string collective_op_name(std::string_view n) {
  n = n.substr(0, n.find('('));
  size_t k = n.find("Kernel_");
  if (k != std::string_view::npos) {
    std::string_view op = n.substr(k + 7);
    return std::string(op.substr(0, op.find('_')));
  }
  return std::string(n);
}

namespace {

std::vector<int64_t> integers_in(std::string_view text) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < text.size();) {
    if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      int64_t v = 0;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) v = v * 10 + (text[i++] - '0');
      out.push_back(v);
    } else {
      ++i;
    }
  }
  return out;
}

std::optional<int64_t> single_integer(std::string_view text) {
  auto v = integers_in(text);
  if (v.size() == 1) return v[0];
  return std::nullopt;
}

// A peer rank: one non-negative integer (PyTorch writes -1 when it has none).
std::optional<int64_t> peer_rank(std::string_view text) {
  return text.find('-') == std::string_view::npos ? single_integer(text) : std::nullopt;
}

// Reads the process-group, sequence and peer args of one slice into `c` (keeps what is already
// set). Peers: PyTorch's record_param_comms writes `Dst Rank` on a send and `Src Rank` on a recv
// (global ranks); a plain `peer` arg takes its direction from the collective name.
void read_comm_args(const TraceStore& s, SliceRef ref, CollectiveCall& c, std::string& collective_name,
                    std::optional<int64_t>& peer_of_name) {
  uint32_t args = s.tracks[ref.track].slices.args[ref.index];
  if (args == kNone) return;
  for (auto& [key, value] : s.decode_args(args)) {
    if (key == "Process Group Name" && c.group.empty()) c.group = value;
    else if (key == "Process Group Ranks" && c.group_ranks.empty()) c.group_ranks = integers_in(value);
    else if ((key == "Seq" || key == "seq") && !c.seq) c.seq = single_integer(value);
    else if (key == "Collective name" && collective_name.empty()) collective_name = value;
    else if (key == "Dst Rank" && !c.peer) c.peer = peer_rank(value), c.p2p = c.peer ? P2p::Send : P2p::None;
    else if (key == "Src Rank" && !c.peer) c.peer = peer_rank(value), c.p2p = c.peer ? P2p::Recv : P2p::None;
    else if ((key == "peer" || key == "Peer") && !peer_of_name) peer_of_name = peer_rank(value);
  }
}

// "send"/"isend" or "recv"/"irecv" (any case): the direction a bare `peer` arg goes with.
P2p p2p_of_name(std::string_view name) {
  std::string lower;
  for (char c : name) lower += char(std::tolower(static_cast<unsigned char>(c)));
  bool send = lower.find("send") != std::string::npos, recv = lower.find("recv") != std::string::npos;
  return send == recv ? P2p::None : send ? P2p::Send : P2p::Recv;
}

// Names the call and settles its group and P2P direction. A send on rank A to B and a recv on
// rank B from A belong to pair "A->B": the k-th send of the pair matches its k-th recv (in order
// per pair, as NCCL delivers them), whatever else either rank sends or receives in between.
// Sends/recvs without peer args keep their collective name.
void finish_call(CollectiveCall& c, int64_t own_rank, std::string name, std::optional<int64_t> peer_of_name) {
  c.name = std::move(name);
  if (c.group.empty()) c.group = "default";
  if (!c.peer && peer_of_name && p2p_of_name(c.name) != P2p::None) c.peer = peer_of_name, c.p2p = p2p_of_name(c.name);
  if (c.p2p != P2p::None && c.peer == own_rank) c.p2p = P2p::None;  // to itself: no pair
  if (c.p2p == P2p::None) return;
  int64_t src = c.p2p == P2p::Send ? own_rank : *c.peer, dst = c.p2p == P2p::Send ? *c.peer : own_rank;
  c.name = "send/recv " + std::to_string(src) + "->" + std::to_string(dst);
}

SliceRef enclosing_named(const TraceStore& s, SliceRef ref, std::string_view name) {
  for (SliceRef p = ref; p.valid(); p = s.parent(p))
    if (s.name(p) == name) return p;
  return {};
}

// A communication kernel's call: its args, then those of the record_param_comms around its launch.
CollectiveCall kernel_call(const TraceStore& s, int64_t rank, const EventTable& t, const Row& r) {
  CollectiveCall c;
  c.start = s.origin_ns + r.ts;
  c.end = s.origin_ns + r.end();
  c.slice = r.ref;
  std::string cname;
  std::optional<int64_t> peer;
  read_comm_args(s, r.ref, c, cname, peer);
  SliceRef launch = s.launch_of(r.ref);
  if (launch.valid()) {
    SliceRef call = enclosing_named(s, launch, "record_param_comms");
    if (call.valid()) read_comm_args(s, call, c, cname, peer);
    c.cpu_start = s.origin_ns + s.start(call.valid() ? call : launch);
  }
  finish_call(c, rank, cname.empty() ? collective_op_name(t.name(r)) : cname, peer);
  return c;
}

// No communication kernel (CPU-only backends such as gloo): the CPU calls are the collectives.
void collect_host_calls(RankSummary& out) {
  const TraceStore& s = *out.store;
  StringId id = s.strings.find("record_param_comms");
  if (id == StringPool::kNotFound) return;
  for (SliceRef ref : s.slices_named(id)) {
    if (s.tracks[ref.track].kind != TrackKind::CpuThread) continue;
    CollectiveCall c;
    c.start = s.origin_ns + s.start(ref);
    c.end = s.origin_ns + s.end(ref);
    c.cpu_start = c.start;
    c.slice = ref;
    std::string cname;
    std::optional<int64_t> peer;
    read_comm_args(s, ref, c, cname, peer);
    finish_call(c, out.rank, cname.empty() ? "record_param_comms" : cname, peer);
    out.calls.push_back(std::move(c));
  }
  out.host_calls = !out.calls.empty();
}

// The rank's data as the analysis uses it: its summary and, once aligned, its clock offset.
struct RankData {
  const RankSummary* s = nullptr;
  TimeNs offset = 0;  // applied offset (0 unless aligned)
  int64_t rank() const { return s->rank; }
  const std::vector<CollectiveCall>& calls() const { return s->calls; }
};

// An instance before timing: (rank index, call index) per participant.
struct Match {
  std::string group, name;
  std::vector<std::pair<size_t, size_t>> parts;
  std::vector<size_t> members;  // rank indices expected in this group
};

using Key = std::pair<std::string, std::string>;  // (group, name)

struct KeyOccurrences {
  std::vector<size_t> members;
  std::map<size_t, std::vector<size_t>> by_rank;  // rank index -> call indices, by start
  bool p2p = false;  // one (sender, receiver) pair: never matched by seq (each rank counts its own)
};

std::map<Key, KeyOccurrences> group_occurrences(const std::vector<RankData>& ranks) {
  std::map<Key, KeyOccurrences> keys;
  std::unordered_map<int64_t, size_t> index_of;
  for (size_t r = 0; r < ranks.size(); ++r) index_of[ranks[r].rank()] = r;
  for (size_t r = 0; r < ranks.size(); ++r)
    for (size_t k = 0; k < ranks[r].calls().size(); ++k) {
      const CollectiveCall& c = ranks[r].calls()[k];
      KeyOccurrences& ko = keys[{c.group, c.name}];
      ko.by_rank[r].push_back(k);
      if (c.p2p != P2p::None) {
        ko.p2p = true;
        if (auto peer = index_of.find(*c.peer); peer != index_of.end() && ko.members.empty())
          ko.members = {r, peer->second};
        continue;
      }
      if (ko.members.empty())
        for (int64_t g : c.group_ranks)
          if (auto it = index_of.find(g); it != index_of.end()) ko.members.push_back(it->second);
    }
  for (auto& [key, ko] : keys) {
    if (ko.members.empty())
      for (auto& [r, v] : ko.by_rank) ko.members.push_back(r);
    for (auto& [r, v] : ko.by_rank)  // a rank outside the declared group still takes part
      if (std::find(ko.members.begin(), ko.members.end(), r) == ko.members.end()) ko.members.push_back(r);
    std::sort(ko.members.begin(), ko.members.end());
  }
  return keys;
}

// Matches that need no clock: by seq, or by order when every member has the same count.
// Returns false when the key needs the clock-based matching.
bool match_without_clock(const Key& key, const KeyOccurrences& ko, const std::vector<RankData>& ranks,
                         std::vector<Match>& out) {
  bool all_seq = !ko.p2p;
  size_t count = SIZE_MAX;
  bool equal = ko.by_rank.size() == ko.members.size();
  for (auto& [r, v] : ko.by_rank) {
    for (size_t k : v) all_seq = all_seq && ranks[r].calls()[k].seq.has_value();
    if (count != SIZE_MAX && v.size() != count) equal = false;
    count = v.size();
  }
  if (all_seq) {
    std::map<int64_t, Match> by_seq;
    for (auto& [r, v] : ko.by_rank)
      for (size_t k : v) by_seq[*ranks[r].calls()[k].seq].parts.push_back({r, k});
    for (auto& [seq, m] : by_seq) {
      m.group = key.first, m.name = key.second, m.members = ko.members;
      out.push_back(std::move(m));
    }
    return true;
  }
  if (!equal) return false;
  for (size_t i = 0; i < count; ++i) {
    Match m{key.first, key.second, {}, ko.members};
    for (auto& [r, v] : ko.by_rank) m.parts.push_back({r, v[i]});
    out.push_back(std::move(m));
  }
  return true;
}

// Each instance takes every rank's next occurrence that started before the earliest end among
// those next occurrences (times with offsets applied).
void match_by_clock(const Key& key, const KeyOccurrences& ko, const std::vector<RankData>& ranks,
                    std::vector<Match>& out) {
  std::map<size_t, size_t> next;
  for (auto& [r, v] : ko.by_rank) next[r] = 0;
  for (;;) {
    TimeNs earliest_end = INT64_MAX;
    for (auto& [r, i] : next) {
      const auto& v = ko.by_rank.at(r);
      if (i < v.size()) earliest_end = std::min(earliest_end, ranks[r].calls()[v[i]].end + ranks[r].offset);
    }
    if (earliest_end == INT64_MAX) return;
    Match m{key.first, key.second, {}, ko.members};
    for (auto& [r, i] : next) {
      const auto& v = ko.by_rank.at(r);
      if (i < v.size() && ranks[r].calls()[v[i]].start + ranks[r].offset <= earliest_end) m.parts.push_back({r, v[i++]});
    }
    out.push_back(std::move(m));
  }
}

TimeNs median_of(std::vector<TimeNs> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

// Offsets so that matched instances end together: the first rank with collectives is the
// reference; each other rank takes the median over instances shared with ranks already placed.
std::vector<TimeNs> estimate_offsets(const std::vector<RankData>& ranks, const std::vector<Match>& matches) {
  std::vector<TimeNs> off(ranks.size(), 0);
  std::vector<char> placed(ranks.size(), 0);
  for (size_t r = 0; r < ranks.size(); ++r)
    if (!ranks[r].calls().empty()) {
      placed[r] = 1;
      break;
    }
  // Each rank's (match, its call) in match order, so a pass costs the parts, not ranks × matches.
  std::vector<std::vector<std::pair<const Match*, size_t>>> taking(ranks.size());
  for (const Match& m : matches)
    for (auto& [r, k] : m.parts)
      if (taking[r].empty() || taking[r].back().first != &m) taking[r].push_back({&m, k});  // its first part
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (placed[r]) continue;
      std::vector<TimeNs> diffs;
      for (auto& [m, mine] : taking[r])
        for (auto& [q, k] : m->parts)
          if (placed[q]) {
            diffs.push_back(ranks[q].calls()[k].end + off[q] - ranks[r].calls()[mine].end);
            break;
          }
      if (diffs.empty()) continue;
      off[r] = median_of(std::move(diffs));
      placed[r] = 1;
      progress = true;
    }
  }
  return off;
}

// What the last rank did in [w0, w1) (its own relative clock): compute, communication, or the
// idle cause of the gaps covering the device-idle part of the window.
std::string cause_in_window(const RankSummary& d, TimeNs w0, TimeNs w1) {
  TimeNs busy = d.busy.covered(w0, w1), compute = d.compute.covered(w0, w1);
  TimeNs idle = (w1 - w0) - busy, comm = busy - compute;
  if (compute >= idle && compute >= comm && compute > 0) return "compute";
  if (comm > idle) return "communication";
  TimeNs by_cause[kIdleCauseCount] = {};
  for (const IdleGap& g : d.causes.gaps) {
    TimeNs a = std::max(g.start, w0), b = std::min(g.end, w1);
    if (a < b) by_cause[int(g.cause)] += (b - a) - d.busy.covered(a, b);
  }
  int best = -1;
  for (int c = 0; c < kIdleCauseCount; ++c)
    if (by_cause[c] > 0 && (best < 0 || by_cause[c] > by_cause[best])) best = c;
  return best < 0 ? "idle" : std::string(idle_cause_name(IdleCause(best)));
}

CollectiveInstance time_instance(const Match& m, const std::vector<RankData>& ranks, TimeNs origin) {
  CollectiveInstance in;
  in.name = m.name;
  in.group = m.group;
  for (auto& [r, k] : m.parts) {
    const CollectiveCall& o = ranks[r].calls()[k];
    CollectiveArrival a;
    a.rank = ranks[r].rank();
    a.arrival = o.start + ranks[r].offset - origin;
    if (o.cpu_start) a.cpu_arrival = *o.cpu_start + ranks[r].offset - origin;
    a.end = o.end + ranks[r].offset - origin;
    a.slice = o.slice;
    in.arrivals.push_back(a);
  }
  std::sort(in.arrivals.begin(), in.arrivals.end(), [](auto& a, auto& b) { return a.rank < b.rank; });
  std::vector<size_t> present;
  for (auto& [r, k] : m.parts) present.push_back(r);
  std::sort(present.begin(), present.end());
  for (size_t r : m.members)
    if (!std::binary_search(present.begin(), present.end(), r)) in.missing.push_back(ranks[r].rank());
  TimeNs first = INT64_MAX, last = INT64_MIN;
  for (const auto& a : in.arrivals) {
    first = std::min(first, a.arrival);
    if (a.arrival > last) last = a.arrival, in.last_rank = a.rank;  // ties: the lowest rank
  }
  in.skew = last - first;
  for (auto& a : in.arrivals) a.wait = std::max<TimeNs>(0, std::min(last, a.end) - a.arrival);
  return in;
}

// What the instance's last rank (`last_rank`) did while the others waited for it.
void add_cause(CollectiveInstance& in, const RankData& last_rank, TimeNs origin) {
  const RankSummary& d = *last_rank.s;
  TimeNs to_local = origin - last_rank.offset - d.origin_ns;
  TimeNs last = 0;
  for (const auto& a : in.arrivals)
    if (a.rank == in.last_rank) last = a.arrival;
  in.last_cause = d.host_calls ? "host" : cause_in_window(d, last - in.skew + to_local, last + to_local);
}

// Stable, by each instance's first arrival (computed once per instance, not per comparison).
void sort_by_first_arrival(std::vector<CollectiveInstance>& instances) {
  std::vector<std::pair<TimeNs, size_t>> keys;
  for (size_t i = 0; i < instances.size(); ++i) {
    TimeNs f = INT64_MAX;
    for (const auto& a : instances[i].arrivals) f = std::min(f, a.arrival);
    keys.push_back({f, i});
  }
  std::stable_sort(keys.begin(), keys.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<CollectiveInstance> sorted;
  sorted.reserve(instances.size());
  for (auto& [f, i] : keys) sorted.push_back(std::move(instances[i]));
  instances = std::move(sorted);
}

std::vector<StragglerRow> straggler_rows(const std::vector<RankData>& ranks,
                                         const std::vector<CollectiveInstance>& instances) {
  std::vector<StragglerRow> rows;
  std::map<int64_t, std::map<std::string, TimeNs>> cause_delay;
  for (const RankData& rd : ranks) {
    const RankSummary& d = *rd.s;
    StragglerRow s;
    s.rank = d.rank;
    s.iterations = d.iteration_durations.size();
    if (s.iterations) {
      double sum = 0;
      for (TimeNs length : d.iteration_durations) sum += double(length);
      s.iteration_mean = sum / double(s.iterations);
    }
    const auto& merged = d.busy.merged();
    if (!merged.empty()) {
      s.compute = d.compute.covered(merged.front().start, merged.back().end);
      s.communication = d.busy.covered(merged.front().start, merged.back().end) - s.compute;
      s.idle = (merged.back().end - merged.front().start) - (s.compute + s.communication);
    }
    rows.push_back(std::move(s));
  }
  std::unordered_map<int64_t, size_t> row_index;  // the first row of each rank
  for (size_t i = rows.size(); i-- > 0;) row_index[rows[i].rank] = i;
  auto row_of = [&](int64_t rank) -> StragglerRow& { return rows[row_index.at(rank)]; };
  for (const auto& in : instances) {
    TimeNs others = 0;
    for (const auto& a : in.arrivals) {
      StragglerRow& s = row_of(a.rank);
      ++s.collectives;
      s.wait += a.wait;
      if (a.rank != in.last_rank) others += a.wait;
    }
    if (in.skew <= 0) continue;
    StragglerRow& last = row_of(in.last_rank);
    ++last.late_count;
    last.delay_caused += others;
    cause_delay[in.last_rank][in.last_cause] += others;
  }
  for (auto& s : rows) {
    TimeNs best = -1;
    for (auto& [cause, t] : cause_delay[s.rank])
      if (t > best) best = t, s.top_cause = cause;
  }
  std::stable_sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.delay_caused > b.delay_caused; });
  return rows;
}

// A rank's trace on the job clock as placed so far: absolute, first to last event.
std::pair<TimeNs, TimeNs> placed_span(const RankData& d) {
  TimeNs start = d.s->origin_ns + d.offset;
  return {start, start + d.s->end_ns};
}

// Groups of ranks whose clocks share no moment: said in a note, and (unless alignment is off)
// each later group moved to start where the first starts. Fills clock_groups, applied, moved.
void place_clock_groups(std::vector<RankData>& ranks, const CollectiveOptions& options, CollectiveAnalysis& out) {
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (const RankData& d : ranks) spans.push_back(placed_span(d));
  std::vector<std::vector<size_t>> groups = overlapping_groups(spans);
  out.moved.assign(ranks.size(), false);
  for (const auto& g : groups) {
    std::vector<int64_t>& named = out.clock_groups.emplace_back();
    for (size_t r : g) named.push_back(ranks[r].rank());
    std::sort(named.begin(), named.end());
  }
  if (groups.size() > 1) {
    const bool move = options.align != Align::None;
    const TimeNs zero = placed_span(ranks[groups.front().front()]).first;
    for (size_t k = 1; move && k < groups.size(); ++k) {
      const TimeNs shift = zero - placed_span(ranks[groups[k].front()]).first;
      for (size_t r : groups[k]) ranks[r].offset += shift, out.moved[r] = true;
    }
    std::string list;
    for (size_t k = 0; k < out.clock_groups.size(); ++k) list += (k ? " | " : "") + ranks_text(out.clock_groups[k]);
    out.notes.push_back("collectives: the ranks' clocks share no moment (" + list + "): " +
                        (move ? "each group's clock is started where the first group's starts"
                              : "times are on the raw clocks (--align none)") +
                        "; were these traces recorded together?");
  }
  out.applied.clear();
  for (const RankData& d : ranks) out.applied.push_back(d.offset);
}

}  // namespace

RankSummary summarize_rank(int64_t rank, const TraceStore& store, const EventTable& table, IdleCauses causes) {
  RankSummary out;
  out.rank = rank;
  out.store = &store;
  out.origin_ns = store.origin_ns;
  out.end_ns = store.end_ns;
  for (const Iteration& it : store.iterations) out.iteration_durations.push_back(it.end - it.start);
  out.causes = std::move(causes);
  // One pass over the GPU rows: busy and compute time, and the communication kernels' calls.
  std::vector<Interval> busy, compute;
  for (uint32_t i : table.gpu) {
    const Row& r = table.rows[i];
    std::string_view cat = table.cat(r);
    if (!is_kernel_memcpy_memset_cat(cat)) continue;
    busy.push_back({r.ts, r.end()});
    bool communication = KernelType(r.kernel_type) == KernelType::Communication;
    if (!communication) compute.push_back({r.ts, r.end()});
    else if (is_kernel_cat(cat)) out.calls.push_back(kernel_call(store, rank, table, r));
  }
  out.busy = IntervalIndex(std::move(busy));
  out.compute = IntervalIndex(std::move(compute));
  if (out.calls.empty()) collect_host_calls(out);
  std::stable_sort(out.calls.begin(), out.calls.end(), [](const CollectiveCall& a, const CollectiveCall& b) { return a.start < b.start; });
  return out;
}

RankSummary summarize_rank(int64_t rank, const TraceStore& store) {
  TableOptions to;
  to.rank = rank;
  EventTable table = build_table(store, to);
  IdleCauses causes = idle_causes(table);
  return summarize_rank(rank, store, table, std::move(causes));
}

CollectiveAnalysis analyze_collectives(const std::vector<RankInput>& inputs, const CollectiveOptions& options) {
  std::vector<RankSummary> summaries(inputs.size());
  parallel_for(inputs.size(), options.threads, [&](size_t r) {
    const RankInput& in = inputs[r];
    summaries[r] = in.table && in.causes ? summarize_rank(in.rank, *in.store, *in.table, *in.causes)
                                         : summarize_rank(in.rank, *in.store);
  });
  std::vector<const RankSummary*> pointers;
  for (const RankSummary& s : summaries) pointers.push_back(&s);
  return analyze_collectives(pointers, options);
}

CollectiveAnalysis analyze_collectives(const std::vector<const RankSummary*>& summaries, const CollectiveOptions& options) {
  CollectiveAnalysis out;
  std::vector<RankData> ranks;
  for (const RankSummary* s : summaries) ranks.push_back({s});
  for (const RankData& d : ranks) out.ranks.push_back(d.rank());
  auto keys = group_occurrences(ranks);
  std::vector<Match> matches;
  std::vector<const Key*> deferred;
  for (auto& [key, ko] : keys)
    if (!match_without_clock(key, ko, ranks, matches)) deferred.push_back(&key);
  out.offsets = estimate_offsets(ranks, matches);
  TimeNs largest = 0;
  for (TimeNs o : out.offsets) largest = std::max(largest, o < 0 ? -o : o);
  out.aligned = options.align == Align::Collectives || (options.align == Align::Auto && largest > options.align_noise);
  if (out.aligned)
    for (size_t r = 0; r < ranks.size(); ++r) ranks[r].offset = out.offsets[r];
  place_clock_groups(ranks, options, out);
  for (const Key* key : deferred) match_by_clock(*key, keys.at(*key), ranks, matches);

  out.origin_ns = INT64_MAX;
  for (const RankData& d : ranks) out.origin_ns = std::min(out.origin_ns, d.s->origin_ns + d.offset);
  if (ranks.empty()) out.origin_ns = 0;
  for (const Match& m : matches) out.instances.push_back(time_instance(m, ranks, out.origin_ns));
  sort_by_first_arrival(out.instances);
  std::unordered_map<int64_t, size_t> index_of;  // rank -> its first RankData
  for (size_t r = ranks.size(); r-- > 0;) index_of[ranks[r].rank()] = r;
  std::map<Key, uint64_t> numbering;
  for (auto& in : out.instances) {
    in.instance = numbering[{in.group, in.name}]++;
    if (in.skew > 0) add_cause(in, ranks[index_of.at(in.last_rank)], out.origin_ns);
  }
  out.stragglers = straggler_rows(ranks, out.instances);
  if (out.instances.empty()) out.notes.push_back("collectives: no NCCL/RCCL kernel or record_param_comms call on any rank");
  if (!deferred.empty())
    out.notes.push_back("collectives: " + std::to_string(deferred.size()) +
                        " collective(s) differ in count between ranks; matched on the clock, missing ranks listed");
  return out;
}

std::vector<Table> collective_tables(const CollectiveAnalysis& a) {
  std::vector<Table> out;
  Table c("collectives", {"rank", "name", "instance", "group", "arrival_us", "end_us", "wait_us", "last_rank",
                          "skew_us", "cpu_arrival_us", "last_cause"});
  for (const auto& in : a.instances)
    for (const auto& ar : in.arrivals)
      c.rows.push_back({Cell::integer(ar.rank), Cell::str(in.name), Cell::integer(int64_t(in.instance)),
                        Cell::str(in.group), Cell::ns(ar.arrival), Cell::ns(ar.end), Cell::ns(ar.wait),
                        Cell::integer(in.last_rank), Cell::ns(in.skew),
                        ar.cpu_arrival ? Cell::ns(*ar.cpu_arrival) : Cell::null(),
                        in.last_cause.empty() ? Cell::null() : Cell::str(in.last_cause)});
  out.push_back(std::move(c));
  // The columns first, then the per-rank breakdown the Ranks view shows beside them.
  Table s("stragglers", {"rank", "late_count", "delay_caused_us", "wait_us", "iteration_mean_us", "top_cause",
                         "collectives", "iterations", "compute_us", "communication_us", "idle_us"});
  for (const auto& r : a.stragglers)
    s.rows.push_back({Cell::integer(r.rank), Cell::integer(int64_t(r.late_count)), Cell::ns(r.delay_caused),
                      Cell::ns(r.wait), r.iteration_mean ? Cell::ns(*r.iteration_mean) : Cell::null(),
                      r.top_cause.empty() ? Cell::null() : Cell::str(r.top_cause),
                      Cell::integer(int64_t(r.collectives)), Cell::integer(int64_t(r.iterations)),
                      Cell::ns(r.compute), Cell::ns(r.communication), Cell::ns(r.idle)});
  out.push_back(std::move(s));
  Table o("clock_offsets", {"rank", "offset_us", "applied"});
  // applied: "moved" for a rank whose clock shares no moment with the first group's (see
  // CollectiveAnalysis::clock_groups): its times carry that move instead.
  for (size_t i = 0; i < a.ranks.size(); ++i)
    o.rows.push_back({Cell::integer(a.ranks[i]), Cell::ns(a.offsets[i]),
                      Cell::str(i < a.moved.size() && a.moved[i] ? "moved" : a.aligned ? "yes" : "no")});
  out.push_back(std::move(o));
  return out;
}

}  // namespace sl::analysis
