// HTA mode of the critical path: the graph Holistic Trace Analysis 0.6.1 builds in
// `critical_path_analysis(rank, annotation, instance_id)` and networkx's `dag_longest_path` over
// it. Each rule below names where it departs from §10 (which Sightline mode follows); the list is
// in core/analysis/README.md ("Critical path", HTA mode).
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/analysis/args_util.h"
#include "core/analysis/counters.h"
#include "core/analysis/critical_path_detail.h"
#include "core/analysis/numpy_sort.h"

namespace sl::analysis::detail {

namespace {

// (HTA) a kernel waits for the previous one on its stream only across a gap below this (as §10);
// a longer gap leaves the kernel with no incoming GPU edge at all.
constexpr TimeNs kKernelKernelMaxGap = 1500 * 1000;

// (HTA) calls whose own duration is waiting on the GPU: the edge into their end weighs 0.
bool is_blocking_call(std::string_view name) {
  static constexpr std::string_view names[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventQuery",
                                               "cudaEventSynchronize"};
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// (HTA) is_comm_kernel: NCCL kernels and Gloo ops; everything else on a stream is compute.
bool is_hta_comm_kernel(std::string_view name) {
  return name.starts_with("nccl") || name.find("gloo:") != std::string_view::npos;
}

enum class EdgeType : uint8_t { Operator, Dependency, LaunchDelay, KernelKernelDelay, SyncDependency };

struct Node {
  uint32_t row;
  TimeNs ts;
  bool is_start;
};

struct HtaEdge {
  uint32_t from, to;  // node ids
  EdgeType type;
  TimeNs weight;  // HTA's edge object weight (may be negative)
};

// HTA's index_correlation for a row pointing at label 0 when label 0 is no row of the table.
constexpr int64_t kMissingRow = -2;

// The names and categories the rules test, looked up once (kNotFound when the trace lacks them).
struct Ids {
  StringId cpu_op, cuda_runtime, cuda_driver, user_annotation, cuda_sync;
  StringId event_sync, context_sync, stream_sync, stream_wait_event, event_record, stream_wait_call;
  explicit Ids(const StringPool& p)
      : cpu_op(p.find("cpu_op")), cuda_runtime(p.find("cuda_runtime")), cuda_driver(p.find("cuda_driver")),
        user_annotation(p.find("user_annotation")), cuda_sync(p.find("cuda_sync")), event_sync(p.find("Event Sync")),
        context_sync(p.find("Context Sync")), stream_sync(p.find("Stream Sync")),
        stream_wait_event(p.find("Stream Wait Event")), event_record(p.find("cudaEventRecord")),
        stream_wait_call(p.find("cudaStreamWaitEvent")) {}
  // (HTA) operators and runtime/driver calls get graph nodes on the CPU side (user annotations and
  // Python frames stay out of the graph, though they still shape the call stacks).
  bool operator_or_runtime(const Row& r) const { return r.cat == cpu_op || r.cat == cuda_runtime || r.cat == cuda_driver; }
  bool device_sync_record(const Row& r) const { return r.name == event_sync || r.name == context_sync; }
};

// The instance's rows and HTA's per-row index_correlation over the whole table.
struct Context {
  const EventTable& t;
  const Ids ids;
  TimeNs window_start = 0, window_end = 0;
  bool annotated = false;  // the window is an annotation instance, not the whole trace
  std::vector<int64_t> index_correlation;  // per row; -1 none, kMissingRow: label 0, not a row
  std::vector<char> clipped;               // per row: in the clipped frame
  std::vector<uint32_t> clipped_rows;      // ascending row order
  std::vector<int64_t> start_node, end_node;  // per row; -1 when the row has no nodes
  std::vector<Node> nodes;
  std::vector<HtaEdge> edges;
  std::unordered_map<uint64_t, uint32_t> edge_of_pair;  // (from, to) -> edges index

  explicit Context(const EventTable& table) : t(table), ids(table.store->strings) {}
  std::string_view name(uint32_t row) const { return t.name(t.rows[row]); }
  std::string_view cat(uint32_t row) const { return t.cat(t.rows[row]); }
  bool has_nodes(int64_t row) const { return row >= 0 && start_node[size_t(row)] >= 0; }
  // HTA's `index_correlation > 0`: a row other than label 0 (the table's event 0).
  bool positive_label(int64_t row) const { return row >= 0 && row != t.event0; }

  // networkx add_edge: adding the same (from, to) again replaces the edge's data.
  void add(uint32_t from, uint32_t to, EdgeType type, bool zero_weight = false) {
    HtaEdge e{from, to, type, 0};
    if (!zero_weight && type != EdgeType::Dependency && type != EdgeType::SyncDependency)
      e.weight = nodes[to].ts - nodes[from].ts;
    uint64_t key = (uint64_t(from) << 32) | to;
    auto [it, fresh] = edge_of_pair.try_emplace(key, uint32_t(edges.size()));
    if (fresh) edges.push_back(e);
    else edges[it->second] = e;
  }
};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool whole_trace_window(Context& c, std::string& note) {
  auto span = whole_trace_span(c.t, note);
  if (!span) return false;
  std::tie(c.window_start, c.window_end) = *span;
  return true;
}

// (HTA) the annotation rows are every row whose name *contains* the annotation, CPU or GPU, in
// row order (not start order); instance N spans [start of row N, end of row N]. An empty
// annotation spans the whole trace, and so does the default one where the trace has none (HTA
// would fail there; §10 has it run as with annotation='').
bool pick_window(Context& c, const CriticalPathOptions& o, int64_t instance, std::string& note) {
  const EventTable& t = c.t;
  if (o.annotation.empty()) return whole_trace_window(c, note);
  std::vector<uint32_t> found;
  for (uint32_t i = 0; i < t.rows.size(); ++i)
    if (contains(t.name(t.rows[i]), o.annotation)) found.push_back(i);
  if (found.empty()) return whole_trace_stands_in(o, note) && whole_trace_window(c, note);
  if (instance < 0 || instance >= int64_t(found.size())) {
    note = "critical_path: instance " + std::to_string(instance) + " out of range (" + std::to_string(found.size()) +
           " rows named '*" + o.annotation + "*')";
    return false;
  }
  const Row& r = t.rows[found[size_t(instance)]];
  c.window_start = r.ts;
  c.window_end = r.end();
  c.annotated = true;
  return true;
}

// (HTA) index_correlation: a GPU row points at its launch (the table's pairing, with the
// "event 0" fallback); a CPU row at the last GPU row of equal correlation, else label 0 when it
// has a correlation, else -1. Event/Context Sync records (stream −1) point at the call that waited.
void compute_index_correlation(Context& c) {
  const EventTable& t = c.t;
  const int64_t label0 = t.event0 >= 0 ? t.event0 : kMissingRow;
  c.index_correlation.assign(t.rows.size(), -1);
  for (uint32_t g : t.gpu) {
    const Row& r = t.rows[g];
    c.index_correlation[g] = r.launch >= 0 ? r.launch : (r.corr >= 0 ? label0 : -1);
    // Usually the call's last GPU row of its correlation is the last row paired with it.
    if (r.launch >= 0 && !r.launch_is_event0 && t.rows[size_t(r.launch)].corr == r.corr) c.index_correlation[size_t(r.launch)] = g;
  }
  std::unordered_map<int64_t, int64_t> unpaired;  // correlation of a CPU row paired with no GPU row
  std::vector<uint32_t> sync_records;
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    if (r.corr == -1 || c.index_correlation[i] != -1) continue;
    if (c.ids.device_sync_record(r)) sync_records.push_back(i);
    else unpaired.emplace(r.corr, label0);
  }
  if (!unpaired.empty()) {
    // A correlation shared by several calls: the GPU rows pair with the last call only.
    for (uint32_t g : t.gpu)
      if (auto it = unpaired.find(t.rows[g].corr); it != unpaired.end()) it->second = g;
    for (uint32_t i : t.cpu) {
      const Row& r = t.rows[i];
      if (r.corr != -1 && c.index_correlation[i] == -1 && !c.ids.device_sync_record(r)) c.index_correlation[i] = unpaired.at(r.corr);
    }
  }
  if (sync_records.empty()) return;
  std::unordered_map<int64_t, int64_t> call_of_corr;
  for (uint32_t i : sync_records) call_of_corr.emplace(t.rows[i].corr, kMissingRow);
  for (uint32_t i : t.cpu)
    if (auto it = call_of_corr.find(t.rows[i].corr); it != call_of_corr.end() && !c.ids.device_sync_record(t.rows[i])) it->second = i;
  for (uint32_t i : sync_records) c.index_correlation[i] = call_of_corr.at(t.rows[i].corr);
}

// (HTA) the clipped frame: CPU rows starting inside the window with a positive duration (§10
// takes rows *inside* the window, any duration), and GPU rows launched by such a row, plus every
// "Stream Wait Event" record.
void clip(Context& c) {
  const EventTable& t = c.t;
  c.clipped.assign(t.rows.size(), 0);
  auto in_window = [&](const Row& r) { return r.ts >= c.window_start && r.ts <= c.window_end && r.dur > 0; };
  for (uint32_t i : t.cpu) {
    const Row& r = t.rows[i];
    if (!in_window(r)) continue;
    c.clipped[i] = 1;
    int64_t target = c.index_correlation[i];
    if (target >= 0 && t.rows[size_t(target)].stream != -1) c.clipped[size_t(target)] = 1;
  }
  if (c.ids.stream_wait_event != StringPool::kNotFound)
    for (uint32_t g : t.gpu)
      if (t.rows[g].name == c.ids.stream_wait_event) c.clipped[g] = 1;
  for (uint32_t i = 0; i < t.rows.size(); ++i)
    if (c.clipped[i]) c.clipped_rows.push_back(i);
  // HTA's frame keeps each row's original position as its label (the last-step filter moves GPU
  // rows first but keeps their labels); the clipped frame is in label order, i.e. file order.
  std::stable_sort(c.clipped_rows.begin(), c.clipped_rows.end(),
                   [&](uint32_t a, uint32_t b) { return t.rows[a].order < t.rows[b].order; });
}

// (HTA) a start and an end node per graph event, numbered in (time, row) order.
void create_nodes(Context& c) {
  const EventTable& t = c.t;
  std::vector<Node> all;
  for (uint32_t i : c.clipped_rows) {
    const Row& r = t.rows[i];
    bool gpu_event = r.stream != -1 && c.index_correlation[i] != -1;
    if (!gpu_event && !(r.stream == -1 && c.ids.operator_or_runtime(r))) continue;
    all.push_back({i, r.ts, true});
    all.push_back({i, r.end(), false});
  }
  // Starts before ends of the same row at equal times (the starts come first in HTA's concat and
  // its two-key sort keeps that order).
  std::stable_sort(all.begin(), all.end(), [&](const Node& a, const Node& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.row != b.row) return t.rows[a.row].order < t.rows[b.row].order;
    return a.is_start && !b.is_start;
  });
  c.start_node.assign(t.rows.size(), -1);
  c.end_node.assign(t.rows.size(), -1);
  for (uint32_t k = 0; k < all.size(); ++k) (all[k].is_start ? c.start_node : c.end_node)[all[k].row] = k;
  c.nodes = std::move(all);
}

// ---- CPU call stacks ----

struct ThreadKey {
  int64_t pid, tid;
  bool operator<(const ThreadKey& o) const { return pid != o.pid ? pid < o.pid : tid < o.tid; }
};

ThreadKey thread_of(const EventTable& t, const Row& r) {
  const TraceStore& s = *t.store;
  const Track& track = s.tracks[r.ref.track];
  int64_t pid = track.process != kNone ? s.processes[track.process].pid : 0;
  return {pid, track.tid_is_number ? track.tid : int64_t(track.tid_text)};
}

// (HTA) the one thread whose CPU ops or user annotations have `part` in their name, if exactly one.
std::optional<int64_t> only_thread_with(const Context& c, std::string_view part) {
  std::optional<int64_t> tid;
  for (uint32_t i : c.clipped_rows) {
    const Row& r = c.t.rows[i];
    if ((r.cat != c.ids.cpu_op && r.cat != c.ids.user_annotation) || !contains(c.t.name(r), part)) continue;
    int64_t this_tid = thread_of(c.t, r).tid;
    if (tid && *tid != this_tid) return std::nullopt;
    tid = this_tid;
  }
  return tid;
}

// HTA's CallStackGraph ordering of start/end events (compare_events): at equal times ends come
// before starts; starts of longer events first, then lower rows; ends of shorter events first,
// then higher rows.
struct StackEvent {
  uint32_t row;
  uint64_t label;  // HTA's row label (file order)
  TimeNs time, dur;
  bool start;
};

bool stack_event_before(const StackEvent& x, const StackEvent& y) {
  if (x.row == y.row) return x.start && !y.start;
  if (x.time != y.time) return x.time < y.time;
  if (x.start == y.start) {
    if (x.dur != y.dur) return x.start ? x.dur > y.dur : x.dur < y.dur;
    return x.start ? x.label < y.label : x.label > y.label;
  }
  if (x.dur > 0 && y.dur > 0) return !x.start;
  if (x.dur == 0 && y.dur == 0) return x.label < y.label;
  return x.start;
}

struct StackTree {
  std::unordered_map<uint32_t, uint32_t> slot;  // member row -> its slot (start order)
  std::vector<std::vector<uint32_t>> children;  // [0]: the root's child rows; [slot + 1]: the row's
};

// The parent of an event is whatever is on top of the stack when it starts; an end pops the top,
// whichever event that is (HTA's stack, partial overlaps included).
StackTree build_stack(const EventTable& t, const std::vector<uint32_t>& members) {
  std::vector<StackEvent> events;
  events.reserve(2 * members.size());
  for (uint32_t i : members) {
    const Row& r = t.rows[i];
    TimeNs dur = std::max<TimeNs>(0, r.dur);
    events.push_back({i, r.order, r.ts, dur, true});
    events.push_back({i, r.order, r.ts + dur, dur, false});
  }
  std::stable_sort(events.begin(), events.end(), stack_event_before);
  StackTree tree;
  tree.children.emplace_back();
  std::vector<uint32_t> stack;
  for (const StackEvent& e : events) {
    if (!e.start) {
      if (!stack.empty()) stack.pop_back();
      continue;
    }
    uint32_t parent_slot = stack.empty() ? 0 : tree.slot[stack.back()] + 1;
    tree.slot[e.row] = uint32_t(tree.children.size() - 1);
    tree.children.emplace_back();
    tree.children[parent_slot].push_back(e.row);
    stack.push_back(e.row);
  }
  return tree;
}

// Depth-first over one thread's stack: consecutive top-level operators are linked by a
// dependency (weight 0, where §10 weighs the gap), nested ones by operator edges. Events without
// nodes (annotations, Python frames) are walked through: their children count as top level
// when no operator encloses them.
class StackWalker {
public:
  StackWalker(Context& c, const StackTree& tree) : c_(c), tree_(tree) {}

  void run() {
    struct Frame {
      uint32_t row;
      size_t next_child = 0;
    };
    std::vector<Frame> frames;  // iterative: deep stacks must not exhaust the C++ stack
    for (uint32_t top : tree_.children[0]) {
      frames.push_back({top});
      enter(top);
      while (!frames.empty()) {
        Frame& f = frames.back();
        const auto& kids = tree_.children[tree_.slot.at(f.row) + 1];
        if (f.next_child < kids.size()) {
          uint32_t child = kids[f.next_child++];
          frames.push_back({child});
          enter(child);
        } else {
          exit(f.row);
          frames.pop_back();
        }
      }
    }
  }

private:
  void enter(uint32_t row) {
    if (!c_.has_nodes(row)) return;
    const uint32_t start = uint32_t(c_.start_node[row]);
    if (depth_ == 0 && last_top_end_ >= 0) c_.add(uint32_t(last_top_end_), start, EdgeType::Dependency);
    ++depth_;
    if (last_node_ >= 0) c_.add(uint32_t(last_node_), start, EdgeType::Operator);
    last_node_ = start;
  }
  void exit(uint32_t row) {
    if (!c_.has_nodes(row)) return;
    const uint32_t end = uint32_t(c_.end_node[row]);
    --depth_;
    if (last_node_ >= 0) c_.add(uint32_t(last_node_), end, EdgeType::Operator, is_blocking_call(c_.name(row)));
    if (depth_ == 0) last_top_end_ = end, last_node_ = -1;
    else last_node_ = end;
  }

  Context& c_;
  const StackTree& tree_;
  int64_t last_node_ = -1, last_top_end_ = -1;  // node ids, -1 none
  int depth_ = 0;                               // operators open (events with nodes only)
};

// (HTA) one call stack per (pid, tid) over the clipped CPU rows; when exactly one thread has
// "autograd" ops and exactly one other has "forward" ops, the backward thread is merged into the
// forward one, so its ops join the forward thread's chain (HTA's only edges between threads).
void add_cpu_edges(Context& c) {
  const EventTable& t = c.t;
  std::optional<int64_t> fwd = only_thread_with(c, "forward"), bwd = only_thread_with(c, "autograd");
  const bool merge = fwd && bwd && *fwd != *bwd;
  std::map<ThreadKey, std::vector<uint32_t>> threads;
  for (uint32_t i : c.clipped_rows) {
    const Row& r = t.rows[i];
    ThreadKey k = thread_of(t, r);
    if (merge && k.tid == *bwd) k.tid = *fwd;
    threads[k].push_back(i);
  }
  for (auto& [key, members] : threads) {
    // A group with GPU rows is a stream (HTA keeps only its rows with stream > 0 and builds no
    // stack for it); a CPU stack needs every row at stream < 0.
    bool cpu = std::all_of(members.begin(), members.end(), [&](uint32_t i) { return t.rows[i].stream < 0; });
    if (!cpu) continue;
    StackWalker(c, build_stack(t, members)).run();
  }
}

// ---- GPU side ----

// HTA's queue length (whole trace) at each launch call and at each GPU row. A call launching
// several rows (HTA's duplicated GPU rows) has one value per row, in series order.
struct Queue {
  std::unordered_map<uint32_t, std::vector<int64_t>> at;
};

Queue queue_at_rows(const EventTable& t) {
  Queue q;
  QueueLengthOptions o;
  o.summary = false;
  for (const QueueLengthStream& s : queue_length(t, o))
    for (const QueuePoint& p : s.series) q.at[p.row].push_back(p.length);
  return q;
}

// cudaEventRecord / cudaStreamWaitEvent bookkeeping for HTA's GPU→GPU and GPU→CPU event syncs.
struct Launch {
  uint32_t row;
  int64_t gpu_row;
};

struct EventSyncs {
  std::unordered_map<int64_t, int64_t> previous_launch_of_record;  // record correlation -> launch row
  std::unordered_map<uint32_t, int64_t> next_launch_of_wait;       // cudaStreamWaitEvent row -> launch row
};

// HTA's launches: runtime launch calls paired with a GPU row on a stream (index_correlation > 0).
std::vector<Launch> launches_by_time(const Context& c) {
  std::vector<Launch> out;
  for (uint32_t i : c.t.cpu) {
    int64_t g = c.index_correlation[i];
    if (!c.positive_label(g) || c.t.rows[size_t(g)].stream == -1 || !is_hta_runtime_launch_name(c.name(i))) continue;
    out.push_back({i, g});
  }
  std::stable_sort(out.begin(), out.end(), [&](const Launch& a, const Launch& b) { return c.t.rows[a.row].ts < c.t.rows[b.row].ts; });
  return out;
}

EventSyncs find_event_syncs(const Context& c) {
  const EventTable& t = c.t;
  EventSyncs out;
  // The stream (and GPU) each recorded event lives on, from the sync records that wait on it.
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> record_stream;  // record corr -> (gpu pid, stream)
  bool any_record = false;
  for (uint32_t i = 0; i < t.rows.size(); ++i) {
    if (t.cat(t.rows[i]) != "cuda_sync") continue;
    std::string_view args = t.store->slice_args_json(t.rows[i].ref);
    int64_t stream = find_int_arg(args, "wait_on_stream").value_or(-1);
    auto corr = find_int_arg(args, "wait_on_cuda_event_record_corr_id");
    if (stream > -1 && corr) record_stream.emplace(*corr, std::make_pair(thread_of(t, t.rows[i]).pid, stream)), any_record = true;
  }
  std::vector<Launch> launches = launches_by_time(c);
  if (any_record) {
    // The last launch on the record's (GPU, stream) before the record call.
    for (uint32_t i : t.cpu) {
      if (c.name(i) != "cudaEventRecord") continue;
      auto rs = record_stream.find(t.rows[i].corr);
      if (rs == record_stream.end()) continue;
      int64_t best = -1;
      for (const Launch& l : launches) {
        if (t.rows[l.row].ts > t.rows[i].ts) break;
        const Row& g = t.rows[size_t(l.gpu_row)];
        if (thread_of(t, g).pid == rs->second.first && g.stream == rs->second.second) best = l.row;
      }
      out.previous_launch_of_record[t.rows[i].corr] = best;
    }
  }
  // The next launch on the wait call's thread onto the waiting stream.
  for (uint32_t i : t.cpu) {
    if (c.name(i) != "cudaStreamWaitEvent") continue;
    int64_t rec = c.index_correlation[i];
    if (!c.positive_label(rec) || t.rows[size_t(rec)].stream == -1) continue;
    int64_t stream = t.rows[size_t(rec)].stream;
    ThreadKey th = thread_of(t, t.rows[i]);
    int64_t next = -1;
    for (const Launch& l : launches) {
      if (t.rows[l.row].ts < t.rows[i].ts) continue;
      ThreadKey lt = thread_of(t, t.rows[l.row]);
      if (lt.pid == th.pid && lt.tid == th.tid && t.rows[size_t(l.gpu_row)].stream == stream) {
        next = l.row;
        break;
      }
    }
    out.next_launch_of_wait[i] = next;
  }
  return out;
}

struct GpuState {
  std::map<int64_t, uint32_t> last_end;              // stream -> end node of its last activity
  std::unordered_map<int64_t, int64_t> kernel_sync;  // GPU row -> GPU row it waits for
};

void add_sync_to_cpu(Context& c, uint32_t gpu_end, int64_t cpu_row) {
  if (c.has_nodes(cpu_row)) c.add(gpu_end, uint32_t(c.end_node[size_t(cpu_row)]), EdgeType::SyncDependency);
}

// A `cuda_sync` record: Stream/Context Sync make the waiting call's end depend on the last
// activity of the stream (all streams); Event Sync on the activity before the event record;
// Stream Wait Event makes the next kernel launched onto the waiting stream wait for that activity.
void handle_sync(Context& c, GpuState& s, const EventSyncs& syncs, uint32_t row) {
  const EventTable& t = c.t;
  std::string_view n = c.name(row);
  int64_t call = c.index_correlation[row];
  if (n == "Stream Wait Event" || n == "Event Sync") {
    auto corr = find_int_arg(t.store->slice_args_json(t.rows[row].ref), "wait_on_cuda_event_record_corr_id");
    if (!corr) return;
    auto prev = syncs.previous_launch_of_record.find(*corr);
    if (prev == syncs.previous_launch_of_record.end() || prev->second < 0) return;
    int64_t src = c.index_correlation[size_t(prev->second)];
    if (n == "Stream Wait Event") {
      if (call < 0) return;
      auto next = syncs.next_launch_of_wait.find(uint32_t(call));
      if (next == syncs.next_launch_of_wait.end() || next->second < 0) return;
      s.kernel_sync[c.index_correlation[size_t(next->second)]] = src;
    } else if (c.has_nodes(src)) {
      add_sync_to_cpu(c, uint32_t(c.end_node[size_t(src)]), call);
    }
    return;
  }
  if (n == "Context Sync") {
    for (auto& [stream, end] : s.last_end) add_sync_to_cpu(c, end, call);
  } else if (n == "Stream Sync") {
    auto it = s.last_end.find(t.rows[row].stream);
    if (it != s.last_end.end()) add_sync_to_cpu(c, it->second, call);
  }
}

// One GPU activity: its start → end, then the edge into its start. A launch edge only when the
// kernel was alone on its stream from launch to start (queue length 1 at the launch call, 0 after
// it started) and the stream's previous activity ended before the call; otherwise a
// kernel-kernel edge from the previous activity, *whatever the gap* (§10 caps it at 1500 µs).
void handle_kernel(Context& c, GpuState& s, const Queue& q, uint32_t row, int64_t queue_at_launch) {
  const EventTable& t = c.t;
  if (!c.has_nodes(row)) return;
  const uint32_t start = uint32_t(c.start_node[row]), end = uint32_t(c.end_node[row]);
  c.add(start, end, EdgeType::Operator);
  const int64_t stream = t.rows[row].stream;
  const int64_t runtime = c.index_correlation[row];
  std::optional<TimeNs> sync_end;
  if (auto it = s.kernel_sync.find(row); it != s.kernel_sync.end() && it->second >= 0) {
    if (c.has_nodes(it->second)) {
      uint32_t src_end = uint32_t(c.end_node[size_t(it->second)]);
      c.add(src_end, start, EdgeType::SyncDependency);
      sync_end = c.nodes[src_end].ts;
    }
    it->second = -1;
  }
  auto q_kernel = q.at.find(row);
  // (HTA would fail on a launch that is no row; here it gets no launch edge.)
  const bool alone = runtime >= 0 && queue_at_launch == 1 && q_kernel != q.at.end() && q_kernel->second.front() == 0;
  auto last = s.last_end.find(stream);
  const TimeNs runtime_ts = runtime >= 0 ? t.rows[size_t(runtime)].ts : 0;
  const bool stream_idle = last == s.last_end.end() || c.nodes[last->second].ts < runtime_ts;
  if (alone && stream_idle && (!sync_end || *sync_end < runtime_ts)) {
    // HTA asserts the launch call is in the graph; a call outside it gets no edge here.
    if (c.has_nodes(runtime)) c.add(uint32_t(c.start_node[size_t(runtime)]), start, EdgeType::LaunchDelay);
  } else if (last != s.last_end.end() && c.nodes[start].ts - c.nodes[last->second].ts < kKernelKernelMaxGap &&
             (!sync_end || *sync_end < c.nodes[last->second].ts)) {
    c.add(last->second, start, EdgeType::KernelKernelDelay);
  }
  s.last_end[stream] = end;
}

// GPU rows of the clipped frame (and the Event/Context Sync records), in start order, sync
// records at their end; numpy's quicksort decides ties, as in HTA.
void add_gpu_edges(Context& c) {
  const EventTable& t = c.t;
  std::vector<uint32_t> rows;
  std::vector<int64_t> keys;
  for (uint32_t i : c.clipped_rows) {
    const Row& r = t.rows[i];
    bool gpu = r.stream != -1 || c.ids.device_sync_record(r);
    if (!gpu || c.index_correlation[i] == -1) continue;
    rows.push_back(i);
    keys.push_back(r.cat == c.ids.cuda_sync ? r.end() : r.ts);
  }
  if (rows.empty()) return;
  const Queue q = queue_at_rows(t);
  const bool any_sync = std::any_of(rows.begin(), rows.end(), [&](uint32_t r) { return t.rows[r].cat == c.ids.cuda_sync; });
  const EventSyncs syncs = any_sync ? find_event_syncs(c) : EventSyncs{};
  GpuState s;
  for (uint32_t k : numpy_quicksort_argsort(keys)) {
    uint32_t row = rows[k];
    if (t.rows[row].cat == c.ids.cuda_sync) {
      handle_sync(c, s, syncs, row);
      continue;
    }
    // The join with the queue series repeats a kernel once per value at its launch call.
    const int64_t launch = c.index_correlation[row];
    auto at_launch = launch >= 0 ? q.at.find(uint32_t(launch)) : q.at.end();
    if (at_launch == q.at.end()) handle_kernel(c, s, q, row, -1);
    else
      for (int64_t v : at_launch->second) handle_kernel(c, s, q, row, v);
  }
}

BoundBy bound_by_of(const Context& c, const HtaEdge& e) {
  switch (e.type) {
    case EdgeType::Dependency:
    case EdgeType::SyncDependency: return BoundBy::Dependency;
    case EdgeType::LaunchDelay: return BoundBy::KernelLaunchOverhead;
    case EdgeType::KernelKernelDelay: return BoundBy::KernelKernelOverhead;
    case EdgeType::Operator: break;
  }
  // HTA attributes an operator edge to an event of its own stack (a CPU event: cpu_bound) or, for
  // a GPU activity's start → end, to the activity.
  const uint32_t row = c.nodes[e.from].row;
  if (c.t.rows[row].stream < 0) return BoundBy::CpuBound;
  return is_hta_comm_kernel(c.name(row)) ? BoundBy::GpuCommunication : BoundBy::GpuCompute;
}

CriticalPathEdge public_edge(const Context& c, const HtaEdge& e) {
  CriticalPathEdge out;
  out.from_row = c.nodes[e.from].row;
  out.to_row = c.nodes[e.to].row;
  out.from_start = c.nodes[e.from].is_start;
  out.to_start = c.nodes[e.to].is_start;
  out.weight = e.weight;
  out.bound_by = bound_by_of(c, e);
  return out;
}

// networkx dag_longest_path: topological order by generations (nodes in id order, successors in
// id order), each node keeping its first best predecessor, the path ending at the first node of
// maximal distance. Negative weights count 0 (HTA's graph validation), the edge keeps its own.
void longest_path(const Context& c, CriticalPath& cp) {
  const size_t n = c.nodes.size();
  // Adjacency in compressed rows: succ[succ_at[v] .. succ_at[v + 1]) are v's out-edges, sorted by
  // target node; pred likewise by source node.
  std::vector<uint32_t> succ_at(n + 1, 0), pred_at(n + 1, 0), succ(c.edges.size()), pred(c.edges.size());
  for (const HtaEdge& e : c.edges) ++succ_at[e.from + 1], ++pred_at[e.to + 1];
  for (size_t v = 0; v < n; ++v) succ_at[v + 1] += succ_at[v], pred_at[v + 1] += pred_at[v];
  {
    std::vector<uint32_t> sfill(succ_at.begin(), succ_at.end() - 1), pfill(pred_at.begin(), pred_at.end() - 1);
    for (uint32_t ei = 0; ei < c.edges.size(); ++ei) succ[sfill[c.edges[ei].from]++] = ei, pred[pfill[c.edges[ei].to]++] = ei;
  }
  for (size_t v = 0; v < n; ++v) {
    std::sort(succ.begin() + succ_at[v], succ.begin() + succ_at[v + 1],
              [&](uint32_t a, uint32_t b) { return c.edges[a].to < c.edges[b].to; });
    std::sort(pred.begin() + pred_at[v], pred.begin() + pred_at[v + 1],
              [&](uint32_t a, uint32_t b) { return c.edges[a].from < c.edges[b].from; });
  }
  std::vector<uint32_t> indegree(n), topo, generation, next;
  for (size_t v = 0; v < n; ++v) {
    indegree[v] = pred_at[v + 1] - pred_at[v];
    if (!indegree[v] && succ_at[v + 1] > succ_at[v]) generation.push_back(uint32_t(v));  // isolated nodes are not in the graph
  }
  while (!generation.empty()) {
    next.clear();
    for (uint32_t v : generation) {
      topo.push_back(v);
      for (uint32_t k = succ_at[v]; k < succ_at[v + 1]; ++k)
        if (--indegree[c.edges[succ[k]].to] == 0) next.push_back(c.edges[succ[k]].to);
    }
    std::swap(generation, next);
  }
  std::vector<TimeNs> dist(n, 0);
  std::vector<int64_t> via(n, -1);
  for (uint32_t v : topo) {
    for (uint32_t k = pred_at[v]; k < pred_at[v + 1]; ++k) {
      const HtaEdge& e = c.edges[pred[k]];
      TimeNs d = dist[e.from] + std::max<TimeNs>(0, e.weight);
      if (via[v] < 0 || d > dist[v]) dist[v] = d, via[v] = pred[k];
    }
  }
  if (topo.size() < n) {
    size_t in_graph = 0;
    for (size_t v = 0; v < n; ++v) in_graph += pred_at[v + 1] > pred_at[v] || succ_at[v + 1] > succ_at[v];
    if (topo.size() < in_graph) cp.note = "critical_path: the event graph has a cycle (HTA fails here); its nodes are left out";
  }
  if (topo.empty()) return;
  uint32_t last = topo.front();
  for (uint32_t v : topo)
    if (dist[v] > dist[last]) last = v;
  std::vector<uint32_t> path_edges;
  uint32_t first = last;
  for (uint32_t v = last; via[v] >= 0; v = c.edges[size_t(via[v])].from) {
    path_edges.push_back(uint32_t(via[v]));
    first = c.edges[size_t(via[v])].from;
  }
  std::reverse(path_edges.begin(), path_edges.end());
  cp.valid = true;
  cp.start = c.nodes[first].ts;
  cp.end = c.nodes[last].ts;
  // HTA's length is networkx's, over the validated weights (negative ones count 0); the edges, and
  // so the bound_by sums of its breakdown, keep their own weights. Sub-µs ops rounded to -1 µs
  // (loading rule 2) make the two differ.
  cp.length = 0;
  for (uint32_t ei : path_edges) {
    cp.length += std::max<TimeNs>(0, c.edges[ei].weight);
    cp.path.push_back(public_edge(c, c.edges[ei]));
  }
  summarize_path(cp);
}

}  // namespace

namespace {

bool build_graph(Context& c, const CriticalPathOptions& o, int64_t instance, std::string& note) {
  if (!pick_window(c, o, instance, note)) return false;
  compute_index_correlation(c);
  clip(c);
  create_nodes(c);
  add_cpu_edges(c);
  add_gpu_edges(c);
  return true;
}

}  // namespace

std::vector<CriticalPathEdge> hta_graph_edges(const EventTable& t, const CriticalPathOptions& o) {
  Context c(t);
  std::string note;
  std::vector<CriticalPathEdge> out;
  if (!build_graph(c, o, o.instance.value_or(0), note)) return out;
  for (const HtaEdge& e : c.edges) out.push_back(public_edge(c, e));
  return out;
}

CriticalPath critical_path_hta(const EventTable& t, const CriticalPathOptions& o) {
  CriticalPath cp;
  cp.rank = t.rank;
  cp.annotation = o.annotation;
  cp.instance = o.instance.value_or(0);  // (HTA) instance_id defaults to 0
  Context c(t);
  if (!build_graph(c, o, cp.instance, cp.note)) return cp;
  if (!c.annotated) cp.annotation.clear();  // the whole trace
  std::vector<char> used(c.nodes.size(), 0);
  for (const HtaEdge& e : c.edges) used[e.from] = used[e.to] = 1;
  cp.graph_nodes = uint64_t(std::count(used.begin(), used.end(), 1));
  cp.graph_edges = c.edges.size();
  if (c.edges.empty()) {
    cp.note = "critical_path: the instance holds no events";
    return cp;
  }
  longest_path(c, cp);
  return cp;
}

}  // namespace sl::analysis::detail
