#include "core/analysis/critical_path.h"

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

#include "core/analysis/args_util.h"
#include "core/analysis/critical_path_detail.h"

namespace sl::analysis {

std::string_view bound_by_name(BoundBy b) {
  switch (b) {
    case BoundBy::Dependency: return "";
    case BoundBy::CpuBound: return "cpu_bound";
    case BoundBy::GpuCompute: return "gpu_compute_bound";
    case BoundBy::GpuCommunication: return "gpu_communication_bound";
    case BoundBy::KernelLaunchOverhead: return "gpu_kernel_launch_overhead";
    case BoundBy::KernelKernelOverhead: return "gpu_kernel_kernel_overhead";
  }
  return "";
}

namespace {

// A kernel queued behind its predecessor waits for it only when the gap is short (§10); a longer
// gap means something else held it back, and the launch is taken as its cause instead.
constexpr TimeNs kKernelKernelMaxGap = 1500 * 1000;

bool is_instance_of(std::string_view name, std::string_view annotation) {
  if (name.substr(0, annotation.size()) != annotation) return false;
  return name.size() == annotation.size() || name[annotation.size()] == '#';
}

// The graph over the selected events: node 2*i is event i's start, 2*i+1 its end.
struct Graph {
  const EventTable& table;
  std::vector<uint32_t> events;  // EventTable rows
  std::vector<CriticalPathEdge> edges;
  std::vector<uint32_t> from, to;  // edge -> its source and target nodes

  TimeNs node_ts(uint32_t node) const {
    const Row& r = table.rows[events[node / 2]];
    return node % 2 ? r.end() : r.ts;
  }
  void add(uint32_t from_node, uint32_t to_node, BoundBy by) {
    CriticalPathEdge e;
    e.from_row = events[from_node / 2];
    e.to_row = events[to_node / 2];
    e.from_start = from_node % 2 == 0;
    e.to_start = to_node % 2 == 0;
    // Dependency edges carry no time (§10); others the time between their endpoints, never
    // negative (partially overlapping siblings, clock skew between CPU and GPU).
    e.weight = by == BoundBy::Dependency ? 0 : std::max<TimeNs>(0, node_ts(to_node) - node_ts(from_node));
    e.bound_by = by;
    from.push_back(from_node);
    to.push_back(to_node);
    edges.push_back(e);
  }
};

uint32_t start_node(uint32_t i) { return 2 * i; }
uint32_t end_node(uint32_t i) { return 2 * i + 1; }

// Nesting and sequence on each CPU thread: parent start → first child start, child end → next
// sibling start, last child end → parent end, a leaf's start → end, top-level end → next start.
//
// A host call that waits on the GPU (`waited`) has no start → end edge: its time is the GPU's,
// reached through the sync dependency, not CPU work. (HTA keeps the edge at weight 0 for its
// blocking calls: critical_path_hta.cpp.)
void add_cpu_edges(Graph& g, const std::vector<uint32_t>& cpu_events, const std::vector<char>& waited) {
  std::unordered_map<uint32_t, std::vector<uint32_t>> by_track;
  for (uint32_t i : cpu_events) by_track[g.table.rows[g.events[i]].ref.track].push_back(i);
  for (auto& [track, list] : by_track) {
    std::sort(list.begin(), list.end(), [&](uint32_t a, uint32_t b) {
      const Row &x = g.table.rows[g.events[a]], &y = g.table.rows[g.events[b]];
      if (x.ts != y.ts) return x.ts < y.ts;
      if (x.dur != y.dur) return x.dur > y.dur;  // the enclosing one first
      return x.order < y.order;
    });
    struct Open {
      uint32_t event;
      int64_t last_child = -1;
    };
    std::vector<Open> stack;
    int64_t last_top = -1;
    auto close_top = [&] {
      Open o = stack.back();
      stack.pop_back();
      if (o.last_child >= 0) g.add(end_node(uint32_t(o.last_child)), end_node(o.event), BoundBy::CpuBound);
      else if (!waited[o.event]) g.add(start_node(o.event), end_node(o.event), BoundBy::CpuBound);
      (stack.empty() ? last_top : stack.back().last_child) = o.event;
    };
    for (uint32_t i : list) {
      const Row& r = g.table.rows[g.events[i]];
      while (!stack.empty() && g.table.rows[g.events[stack.back().event]].end() < r.end()) close_top();
      if (!stack.empty()) {
        Open& parent = stack.back();
        if (parent.last_child >= 0) g.add(end_node(uint32_t(parent.last_child)), start_node(i), BoundBy::CpuBound);
        else g.add(start_node(parent.event), start_node(i), BoundBy::CpuBound);
      } else if (last_top >= 0) {
        g.add(end_node(uint32_t(last_top)), start_node(i), BoundBy::CpuBound);
      }
      stack.push_back({i});
    }
    while (!stack.empty()) close_top();
  }
}

struct GpuStreams {
  std::unordered_map<int64_t, std::vector<uint32_t>> by_stream;  // events, by start
  // Per stream: (launch call start, event), by launch time then start order, for the sync lookups.
  std::map<int64_t, std::vector<std::pair<TimeNs, uint32_t>>> by_launch;
  // Per (GPU, stream): every kernel, copy and set of the table on it, in the graph or not
  // (launched before the instance, say), by start: the work an activity may have queued behind.
  std::map<std::pair<uint32_t, int64_t>, std::vector<uint32_t>> work;  // EventTable rows
  // Per GPU (its process): (end, row) of that work, by end, for the waits on another stream.
  std::unordered_map<uint32_t, std::vector<std::pair<TimeNs, uint32_t>>> ends_by_gpu;
};

bool starts_before(const Row& x, const Row& y) { return x.ts != y.ts ? x.ts < y.ts : x.order < y.order; }

uint32_t gpu_of(const EventTable& t, const Row& r) { return t.store->tracks[r.ref.track].process; }

void sort_work(const EventTable& t, GpuStreams& s) {
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (!is_kernel_memcpy_memset_cat(t.cat(r))) continue;
    s.work[{gpu_of(t, r), r.stream}].push_back(i);
    s.ends_by_gpu[gpu_of(t, r)].push_back({r.end(), i});
  }
  for (auto& [lane, rows] : s.work)
    std::sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return starts_before(t.rows[a], t.rows[b]); });
  for (auto& [gpu, ends] : s.ends_by_gpu) std::sort(ends.begin(), ends.end());
}

void sort_streams(const Graph& g, GpuStreams& s) {
  for (auto& [stream, list] : s.by_stream) {
    std::sort(list.begin(), list.end(),
              [&](uint32_t a, uint32_t b) { return starts_before(g.table.rows[g.events[a]], g.table.rows[g.events[b]]); });
    auto& launches = s.by_launch[stream];
    for (uint32_t k : list) launches.push_back({g.table.rows[g.table.rows[g.events[k]].launch].ts, k});
    std::stable_sort(launches.begin(), launches.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  sort_work(g.table, s);
}

// When GPU activity `r` could have started as far as its own stream knows: once its launch was
// issued and the work ahead of it (`a`, may be null) ended. The launch is issued by the call's
// return, or at its start for an activity that began inside its call (a blocking copy, whose
// call returns only after it).
TimeNs ready_at(const Row& launch, const Row& r, const Row* a) {
  const TimeNs issued = r.ts >= launch.end() ? launch.end() : launch.ts;
  return a ? std::max(issued, a->end()) : issued;
}

// Waits on another stream that traces without Kineto's cuda_sync records do not show (an event
// wait, NCCL's stream joins, a GPU full of other streams' work). §10 leaves their inference open:
// an activity that started more than kWaitSlack after it was ready (see ready_at) waited for the
// work on another stream of its GPU that ended last before it started — within kWaitSlack (a
// few times an event's signal-to-start latency, well below launch-bound gaps) or, past the 1500
// µs that §10 takes as the most a GPU gap is the stream's own, any time after it was ready.
constexpr TimeNs kWaitSlack = 20 * 1000;

std::optional<uint32_t> awaited_other_stream(const EventTable& t, const GpuStreams& s, const Row& r, TimeNs ready) {
  const TimeNs late = r.ts - ready;
  if (late <= kWaitSlack) return std::nullopt;
  const TimeNs from = late >= kKernelKernelMaxGap ? ready : r.ts - kWaitSlack;
  const auto& ends = s.ends_by_gpu.at(gpu_of(t, r));
  auto it = std::upper_bound(ends.begin(), ends.end(), std::make_pair(r.ts, UINT32_MAX));
  while (it != ends.begin()) {
    --it;
    if (it->first < from) break;
    if (t.rows[it->second].stream != r.stream) return it->second;
  }
  return std::nullopt;
}

// The edge into GPU activity k's start; `ahead` (-1: none) is the work on its stream that ended
// last among what started before it. §10: an edge's category is what its time was spent on.
// - k started late, after work on another stream (awaited_other_stream): a dependency on that
//   work, as for a recorded cross-stream wait; neither the launch's time nor the stream's gap.
// - The stream was empty when the launch call began: launch call start → k, launch overhead (the
//   call itself, then the empty stream until k started).
// - Else k queued behind `ahead`; the time until `ahead` ended is that work's, on the path
//   through it, and the edge from its end carries only the empty stream after it: launch
//   overhead when the call still ran as the stream drained (the stream waited for the launch),
//   else kernel-kernel overhead, and that only below 1500 µs (something else held a longer gap).
// A kernel with a recorded cross-stream wait (`waited`) gets only the kernel-kernel edge: the
// wait held it back. Work ahead that is not in the graph (launched before the instance) gives no
// edge: that queue is not this instance's.
void add_edge_into_start(Graph& g, const GpuStreams& s, uint32_t k, int64_t ahead,
                         const std::vector<int32_t>& event_of_row, const std::vector<char>& waited) {
  const EventTable& t = g.table;
  const Row& r = t.rows[g.events[k]];
  const Row& launch = t.rows[size_t(r.launch)];
  const Row* a = ahead >= 0 ? &t.rows[size_t(ahead)] : nullptr;
  if (!waited[k])
    if (auto src = awaited_other_stream(t, s, r, ready_at(launch, r, a))) {
      if (event_of_row[*src] >= 0) g.add(end_node(uint32_t(event_of_row[*src])), start_node(k), BoundBy::Dependency);
      return;
    }
  if (!a || a->end() <= launch.ts) {
    if (!waited[k]) g.add(start_node(uint32_t(event_of_row[size_t(r.launch)])), start_node(k), BoundBy::KernelLaunchOverhead);
    return;
  }
  if (event_of_row[size_t(ahead)] < 0) return;
  const uint32_t from = end_node(uint32_t(event_of_row[size_t(ahead)]));
  const bool awaited_launch = a->end() < launch.end() && launch.end() <= r.ts;
  if (awaited_launch && !waited[k]) g.add(from, start_node(k), BoundBy::KernelLaunchOverhead);
  else if (!awaited_launch && r.ts - a->end() < kKernelKernelMaxGap) g.add(from, start_node(k), BoundBy::KernelKernelOverhead);
}

// A call that returns only after its own copy or set ended (cudaMemcpy, a cudaMemcpyAsync from
// pageable memory) spent that time waiting on the GPU: a dependency from the activity's end to
// the call's end and (`waited`) no start → end edge of its own, as for a *Synchronize call.
// Kernel launches are left out: a kernel short enough to end inside its launch call was not
// waited for.
void add_blocking_copy_edges(Graph& g, const GpuStreams& s, const std::vector<int32_t>& event_of_row,
                             std::vector<char>& waited) {
  for (const auto& [stream, list] : s.by_stream)
    for (uint32_t k : list) {
      const Row& r = g.table.rows[g.events[k]];
      if (KernelType(r.kernel_type) != KernelType::Memory || r.end() > g.table.rows[size_t(r.launch)].end()) continue;
      const uint32_t call = uint32_t(event_of_row[size_t(r.launch)]);
      g.add(end_node(k), end_node(call), BoundBy::Dependency);
      waited[call] = 1;
    }
}

// Per stream in start order over all its work: each activity of the graph gets the edge into its
// start, then its start → end.
void add_gpu_edges(Graph& g, const GpuStreams& s, const std::vector<int32_t>& event_of_row,
                   const std::vector<char>& waited) {
  for (const auto& [lane, rows] : s.work) {
    int64_t ahead = -1;
    for (uint32_t row : rows) {
      const Row& r = g.table.rows[row];
      if (const int32_t k = event_of_row[row]; k >= 0) {
        add_edge_into_start(g, s, uint32_t(k), ahead, event_of_row, waited);
        const bool comm = KernelType(r.kernel_type) == KernelType::Communication;
        g.add(start_node(uint32_t(k)), end_node(uint32_t(k)), comm ? BoundBy::GpuCommunication : BoundBy::GpuCompute);
      }
      if (ahead < 0 || r.end() > g.table.rows[size_t(ahead)].end()) ahead = row;
    }
  }
}

// The last GPU activity on `stream` (any stream when < 0) launched before `before`: of several
// launched at that same time, the first by start; across streams, the lowest stream id.
std::optional<uint32_t> last_launched_before(const GpuStreams& s, int64_t stream, TimeNs before) {
  std::optional<std::pair<TimeNs, uint32_t>> best;
  for (const auto& [st, launches] : s.by_launch) {
    if (stream >= 0 && st != stream) continue;
    auto key = [](const auto& e, TimeNs t) { return e.first < t; };
    auto it = std::lower_bound(launches.begin(), launches.end(), before, key);
    if (it == launches.begin()) continue;
    auto first_of_time = std::lower_bound(launches.begin(), it, std::prev(it)->first, key);
    if (!best || first_of_time->first > best->first) best = *first_of_time;
  }
  if (!best) return std::nullopt;
  return best->second;
}

std::optional<uint32_t> first_launched_after(const Graph& g, const GpuStreams& s, int64_t stream, TimeNs after) {
  auto it = s.by_stream.find(stream);
  if (it == s.by_stream.end()) return std::nullopt;
  for (uint32_t k : it->second)
    if (g.table.rows[g.table.rows[g.events[k]].launch].ts > after) return k;
  return std::nullopt;
}

// Synchronisation: a `cuda_sync` activity (Kineto) names what it waits on (`wait_on_stream`, the
// event record's correlation) and who waits (its `stream`, or the host when −1). A host
// `*Synchronize` call without such an activity waits for the GPU work launched before it.
// Marks in `waited` the GPU activities that wait on another stream and the host calls that wait
// on the GPU.
void add_sync_edges(Graph& g, const GpuStreams& s, const std::unordered_map<int64_t, uint32_t>& cpu_by_corr,
                    const std::vector<uint32_t>& cpu_events, std::vector<char>& waited) {
  const TraceStore& store = *g.table.store;
  std::vector<char> covered(g.events.size(), 0);
  const StringId cuda_sync = store.strings.find("cuda_sync");
  for (const Row& r : g.table.rows) {
    if (r.cat != cuda_sync || r.corr < 0) continue;
    auto call = cpu_by_corr.find(r.corr);
    if (call == cpu_by_corr.end()) continue;
    const Row& c = g.table.rows[g.events[call->second]];
    std::string_view args = store.slice_args_json(r.ref);
    int64_t wait_stream = find_int_arg(args, "wait_on_stream").value_or(-1);
    int64_t record_corr = find_int_arg(args, "wait_on_cuda_event_record_corr_id").value_or(-1);
    int64_t waiter = find_int_arg(args, "stream").value_or(-1);
    TimeNs before = c.ts;
    if (record_corr >= 0) {
      auto rec = cpu_by_corr.find(record_corr);
      if (rec == cpu_by_corr.end()) continue;
      before = g.table.rows[g.events[rec->second]].ts;
    }
    auto src = last_launched_before(s, wait_stream, before);
    if (!src) continue;
    covered[call->second] = 1;
    if (waiter >= 0) {
      if (auto dst = first_launched_after(g, s, waiter, c.ts)) {
        g.add(end_node(*src), start_node(*dst), BoundBy::Dependency);
        waited[*dst] = 1;
      }
    } else {
      g.add(end_node(*src), end_node(call->second), BoundBy::Dependency);
      waited[call->second] = 1;
    }
  }
  std::unordered_map<StringId, bool> is_sync_name;  // names repeat: test each once
  for (uint32_t i : cpu_events) {
    const Row& c = g.table.rows[g.events[i]];
    auto [name, fresh] = is_sync_name.try_emplace(c.name, false);
    if (fresh) name->second = g.table.name(c).find("Synchronize") != std::string_view::npos;
    if (covered[i] || !name->second) continue;
    if (auto src = last_launched_before(s, -1, c.ts); src && g.table.rows[g.events[*src]].end() <= c.end()) {
      g.add(end_node(*src), end_node(i), BoundBy::Dependency);
      waited[i] = 1;
    }
  }
}

// Longest weighted path over the DAG in topological order (Kahn); every node may start a path.
// Ties keep the first predecessor found and the earliest-numbered final node, so the result is
// deterministic. Nodes on a cycle (inconsistent input) are left out with a note.
void longest_path(const Graph& g, CriticalPath& cp) {
  const size_t n = 2 * g.events.size();
  // Out-edges in compressed rows, in the order they were added: out[out_at[v] .. out_at[v + 1]).
  std::vector<uint32_t> out_at(n + 1, 0), out(g.from.size()), indegree(n, 0);
  for (uint32_t v : g.from) ++out_at[v + 1];
  for (size_t v = 0; v < n; ++v) out_at[v + 1] += out_at[v];
  {
    std::vector<uint32_t> fill(out_at.begin(), out_at.end() - 1);
    for (uint32_t ei = 0; ei < g.from.size(); ++ei) out[fill[g.from[ei]]++] = ei;
  }
  for (uint32_t v : g.to) ++indegree[v];
  std::deque<uint32_t> ready;
  for (uint32_t v = 0; v < n; ++v)
    if (!indegree[v]) ready.push_back(v);
  std::vector<TimeNs> dist(n, 0);
  std::vector<int64_t> via(n, -1);  // edge into the node on its longest path
  size_t visited = 0;
  while (!ready.empty()) {
    uint32_t v = ready.front();
    ready.pop_front();
    ++visited;
    for (uint32_t k = out_at[v]; k < out_at[v + 1]; ++k) {
      const uint32_t ei = out[k], w = g.to[ei];
      TimeNs d = dist[v] + g.edges[ei].weight;
      if (via[w] < 0 || d > dist[w]) dist[w] = d, via[w] = ei;
      if (--indegree[w] == 0) ready.push_back(w);
    }
  }
  if (visited < n) cp.note = "critical_path: the event graph has a cycle; its nodes are left out";
  uint32_t last = 0;
  for (uint32_t v = 1; v < n; ++v)
    if (dist[v] > dist[last]) last = v;
  std::vector<uint32_t> path_edges;
  uint32_t first = last;
  for (uint32_t v = last; via[v] >= 0;) {
    path_edges.push_back(uint32_t(via[v]));
    v = g.from[size_t(via[v])];
    first = v;
  }
  std::reverse(path_edges.begin(), path_edges.end());
  cp.valid = true;
  cp.length = dist[last];
  cp.start = g.node_ts(first);
  cp.end = g.node_ts(last);
  for (uint32_t ei : path_edges) cp.path.push_back(g.edges[ei]);
  detail::summarize_path(cp);
}

// The time span the graph covers: one annotation instance (left out of its own graph), or with
// an empty annotation the whole trace.
struct Window {
  TimeNs start = 0, end = 0;
  const Row* self = nullptr;
  int64_t index = 0;
};

std::optional<Window> whole_trace(const EventTable& t, std::string& note) {
  auto span = detail::whole_trace_span(t, note);
  if (!span) return std::nullopt;
  return Window{span->first, span->second};
}

std::optional<Window> pick_instance(const EventTable& t, const CriticalPathOptions& o, std::string& note) {
  if (o.annotation.empty()) return whole_trace(t, note);
  std::vector<const Row*> found;
  for (uint32_t i : t.cpu)
    if (is_instance_of(t.name(t.rows[i]), o.annotation)) found.push_back(&t.rows[i]);
  std::stable_sort(found.begin(), found.end(), [](const Row* a, const Row* b) { return a->ts < b->ts; });
  if (found.empty()) {
    if (!detail::whole_trace_stands_in(o, note)) return std::nullopt;
    return whole_trace(t, note);
  }
  // Default: the first instance ("complete": the profiler may cut only the last one short).
  int64_t index = o.instance.value_or(0);
  if (index < 0 || index >= int64_t(found.size())) {
    note = "critical_path: instance " + std::to_string(index) + " out of range (" + std::to_string(found.size()) +
           " instances of '" + o.annotation + "')";
    return std::nullopt;
  }
  const Row* r = found[size_t(index)];
  return Window{r->ts, r->end(), r, index};
}

}  // namespace

namespace detail {

std::optional<std::pair<TimeNs, TimeNs>> whole_trace_span(const EventTable& t, std::string& note) {
  if (t.rows.empty()) {
    note = "critical_path: the trace holds no events";
    return std::nullopt;
  }
  std::pair<TimeNs, TimeNs> span{INT64_MAX, INT64_MIN};
  for (const Row& r : t.rows) span.first = std::min(span.first, r.ts), span.second = std::max(span.second, r.end());
  return span;
}

bool whole_trace_stands_in(const CriticalPathOptions& o, std::string& note) {
  if (o.annotation_explicit) {
    note = "critical_path: no '" + o.annotation + "' annotation";
    return false;
  }
  if (o.instance.value_or(0) != 0) {
    note = "critical_path: instance " + std::to_string(*o.instance) + " out of range (no '" + o.annotation +
           "' annotation: the whole trace is instance 0)";
    return false;
  }
  note = "critical_path: no " + o.annotation + " annotation: the whole trace is one instance";
  return true;
}

void summarize_path(CriticalPath& cp) {
  std::vector<CriticalPathShare> shares;
  for (const CriticalPathEdge& e : cp.path) {
    auto it = std::find_if(shares.begin(), shares.end(), [&](const auto& s) { return s.bound_by == e.bound_by; });
    if (it == shares.end()) it = shares.insert(shares.end(), CriticalPathShare{e.bound_by});
    it->sum += e.weight;
    ++it->count;
  }
  std::sort(shares.begin(), shares.end(), [](const auto& a, const auto& b) { return a.bound_by < b.bound_by; });
  // Shares of the edges' own weights (HTA: sum / duration.sum()), which is the length except where
  // HTA's length counts negative weights as 0.
  TimeNs total = 0;
  for (const auto& s : shares) total += s.sum;
  for (auto& s : shares) s.pct = total > 0 ? 100.0 * double(s.sum) / double(total) : 0.0;
  cp.summary = std::move(shares);
}

}  // namespace detail

CriticalPath critical_path(const EventTable& t, const CriticalPathOptions& o) {
  if (t.mode == Mode::Hta) return detail::critical_path_hta(t, o);
  CriticalPath cp;
  cp.rank = t.rank;
  cp.annotation = o.annotation;
  auto inst = pick_instance(t, o, cp.note);
  if (!inst) return cp;
  cp.instance = inst->index;
  if (!inst->self) cp.annotation.clear();  // the whole trace

  Graph g{t, {}, {}, {}, {}};
  g.events.reserve(t.rows.size());
  std::vector<uint32_t> cpu_events;
  std::vector<int32_t> event_of_row(t.rows.size(), -1);
  std::unordered_map<int64_t, uint32_t> cpu_by_corr;  // only read for cuda_sync records
  const StringId python_function = t.store->strings.find("python_function"), cuda_sync = t.store->strings.find("cuda_sync");
  // CPU side: every CPU event inside the instance but the instance itself; Python stack frames
  // would only lengthen CPU chains that their ops already cover.
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    if (&r == inst->self || r.ts < inst->start || r.end() > inst->end || r.cat == python_function) continue;
    if (r.cat == cuda_sync) continue;  // GPU-side record even when its stream is −1
    event_of_row[i] = int32_t(g.events.size());
    cpu_events.push_back(uint32_t(g.events.size()));
    if (r.corr >= 0 && cuda_sync != StringPool::kNotFound) cpu_by_corr.emplace(r.corr, uint32_t(g.events.size()));
    g.events.push_back(i);
  }
  // GPU side: kernels, copies and sets launched from inside the instance.
  GpuStreams streams;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (r.launch < 0 || event_of_row[size_t(r.launch)] < 0 || !is_kernel_memcpy_memset_cat(t.cat(r))) continue;
    streams.by_stream[r.stream].push_back(uint32_t(g.events.size()));
    event_of_row[i] = int32_t(g.events.size());
    g.events.push_back(i);
  }
  sort_streams(g, streams);
  std::vector<char> waited(g.events.size(), 0);
  g.edges.reserve(2 * g.events.size()), g.from.reserve(2 * g.events.size()), g.to.reserve(2 * g.events.size());
  add_sync_edges(g, streams, cpu_by_corr, cpu_events, waited);
  add_blocking_copy_edges(g, streams, event_of_row, waited);
  add_cpu_edges(g, cpu_events, waited);
  add_gpu_edges(g, streams, event_of_row, waited);
  cp.graph_nodes = 2 * g.events.size();
  cp.graph_edges = g.edges.size();
  if (g.events.empty()) {
    cp.note = "critical_path: the instance holds no events";
    return cp;
  }

  longest_path(g, cp);
  return cp;
}

}  // namespace sl::analysis
