#include "core/diff/aligned_diff.h"

#include <algorithm>
#include <array>
#include <span>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "core/analysis/common.h"
#include "core/names/matching_key.h"

namespace sl::diff {

namespace {

// ---- sequence alignment ----

using Match = std::pair<uint32_t, uint32_t>;

// Largest table the exact LCS may use; beyond it a greedy matcher with lookahead takes over.
constexpr size_t kMaxLcsCells = size_t(4) << 20;
constexpr uint32_t kLookahead = 64;

void lcs(const uint64_t* a, uint32_t n, const uint64_t* b, uint32_t m, uint32_t ia, uint32_t ib,
         std::vector<Match>& out) {
  // L[i][j]: LCS length of a[i..] and b[j..]; walking forward from (0, 0) keeps the order.
  std::vector<uint32_t> L(size_t(n + 1) * (m + 1), 0);
  auto at = [&](uint32_t i, uint32_t j) -> uint32_t& { return L[size_t(i) * (m + 1) + j]; };
  for (uint32_t i = n; i-- > 0;)
    for (uint32_t j = m; j-- > 0;) at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  uint32_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] == b[j]) {
      out.push_back({ia + i++, ib + j++});
    } else if (at(i + 1, j) >= at(i, j + 1)) {
      ++i;
    } else {
      ++j;
    }
  }
}

void greedy(const uint64_t* a, uint32_t n, const uint64_t* b, uint32_t m, uint32_t ia, uint32_t ib,
            std::vector<Match>& out) {
  uint32_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] == b[j]) {
      out.push_back({ia + i++, ib + j++});
      continue;
    }
    uint32_t skip_b = kNone, skip_a = kNone;  // how far the other side must skip to match
    for (uint32_t k = 1; k < kLookahead && j + k < m && skip_b == kNone; ++k)
      if (b[j + k] == a[i]) skip_b = k;
    for (uint32_t k = 1; k < kLookahead && i + k < n && skip_a == kNone; ++k)
      if (a[i + k] == b[j]) skip_a = k;
    if (skip_b == kNone && skip_a == kNone) {
      ++i;
      ++j;
    } else if (skip_a == kNone || (skip_b != kNone && skip_b <= skip_a)) {
      j += skip_b;
    } else {
      i += skip_a;
    }
  }
}

// Pairs of equal keys, in order, tolerant to insertions and removals on either side.
std::vector<Match> align(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  std::vector<Match> out;
  uint32_t n = uint32_t(a.size()), m = uint32_t(b.size());
  uint32_t p = 0;
  while (p < n && p < m && a[p] == b[p]) out.push_back({p, p}), ++p;
  uint32_t s = 0;
  while (s < n - p && s < m - p && a[n - 1 - s] == b[m - 1 - s]) ++s;
  uint32_t cn = n - p - s, cm = m - p - s;
  if (cn && cm) {
    if (size_t(cn + 1) * (cm + 1) <= kMaxLcsCells) lcs(a.data() + p, cn, b.data() + p, cm, p, p, out);
    else greedy(a.data() + p, cn, b.data() + p, cm, p, p, out);
  }
  for (uint32_t k = s; k-- > 0;) out.push_back({n - 1 - k, m - 1 - k});
  return out;
}

// ---- call trees of one iteration ----

struct Node {
  SliceRef ref;                  // invalid: the root or a thread
  uint32_t parent = kNone;
  std::vector<uint32_t> children;
  uint64_t key = 0;              // what must be equal to match
  TimeNs dur = 0, child_dur = 0;
  uint32_t kernels = 0, ops = 1;  // subtree
  TimeNs kernel_time = 0;
  bool launch = false;           // has GPU activities of its own
  bool is_virtual() const { return !ref.valid(); }
};

uint64_t key_of(std::string_view label) { return std::hash<std::string_view>{}(label); }

// What a GPU activity is, for pairing: a memory activity stands only for one of its own kind.
enum class ActivityKind : uint8_t { Compute, Communication, Memcpy, Memset, Sync, Other };
constexpr uint32_t kActivityKinds = 6;

ActivityKind activity_kind(const TraceStore& s, SliceRef act) {
  std::string_view name = s.name(act), cat = s.cat(act);
  switch (analysis::kernel_type_sightline(name, cat)) {
    case analysis::KernelType::Computation: return ActivityKind::Compute;
    case analysis::KernelType::Communication: return ActivityKind::Communication;
    case analysis::KernelType::Sync: return ActivityKind::Sync;
    case analysis::KernelType::Memory:
      return cat == "gpu_memset" || cat == "Memset" || name.starts_with("Memset") ? ActivityKind::Memset
                                                                                   : ActivityKind::Memcpy;
    case analysis::KernelType::Other: break;
  }
  return ActivityKind::Other;
}

std::string_view kind_name(ActivityKind k) {
  constexpr std::string_view names[kActivityKinds] = {"kernel", "communication", "memcpy", "memset", "sync", "other"};
  return names[size_t(k)];
}

// A launch call's key: what it launched, not which API (cudaLaunchKernel, hipLaunchKernel,
// cuLaunchKernel, hipExtModuleLaunchKernel are one role), so CUDA and HIP runs align.
std::string launch_key(uint32_t kinds) {
  std::string key = "<launch";
  for (uint32_t k = 0; k < kActivityKinds; ++k)
    if (kinds >> k & 1) key.append(" ").append(kind_name(ActivityKind(k)));
  return key.append(">");
}

// A runtime call that launched nothing in the window (its kernel is missing, or it was a query):
// the role its name says, so a launch whose kernel was not recorded still matches a launch.
std::string runtime_key(std::string_view name) {
  std::string call = runtime_call_key(name);
  if (call.find("LaunchKernel") != std::string::npos || call.find("LaunchCooperativeKernel") != std::string::npos)
    return "<launch kernel>";
  if (call.starts_with("Memcpy")) return "<launch memcpy>";
  if (call.starts_with("Memset")) return "<launch memset>";
  return call;
}

bool is_runtime_cat(std::string_view cat) { return cat == "cuda_runtime" || cat == "cuda_driver"; }

struct Tree {
  const TraceStore* store = nullptr;
  std::vector<Node> nodes;  // 0 is the root; parents come before children
  struct Key {
    std::string text;  // matching_key of the name
    uint64_t hash = 0;
  };
  std::unordered_map<StringId, Key> keys;
  // An activity's kind and alignment key (the kind and its name's matching key), per (name,
  // category): classifying reads the whole name several times, and names repeat.
  struct Activity {
    ActivityKind kind;
    uint64_t key;
  };
  mutable std::unordered_map<uint64_t, Activity> activities;

  Activity activity(SliceRef act) const {
    uint64_t id = uint64_t(store->name_id(act)) << 32 | store->tracks[act.track].slices.cat[act.index];
    auto [it, fresh] = activities.try_emplace(id);
    if (fresh) {
      ActivityKind kind = activity_kind(*store, act);
      it->second = {kind, key_of(matching_key(store->name(act))) * 8 + uint64_t(kind)};
    }
    return it->second;
  }

  const Key& name_key(StringId id) {
    auto [it, fresh] = keys.try_emplace(id);
    if (fresh) {
      it->second.text = matching_key(store->strings.view(id));
      it->second.hash = key_of(it->second.text);
    }
    return it->second;
  }
  // What must be equal for the slice to match: its matching key; for a GPU runtime call what it
  // launched, or the call without its vendor prefix.
  uint64_t match_key(SliceRef ref, std::span<const SliceRef> launched) {
    if (!launched.empty()) {
      uint32_t kinds = 0;
      for (SliceRef act : launched) kinds |= 1u << uint32_t(activity(act).kind);
      return key_of(launch_key(kinds));
    }
    if (is_runtime_cat(store->cat(ref))) return key_of(runtime_key(store->name(ref)));
    return name_key(store->name_id(ref)).hash;
  }
  std::string_view name(uint32_t node) const { return store->name(nodes[node].ref); }
  std::string_view key_text(uint32_t node) const { return keys.at(store->name_id(nodes[node].ref)).text; }
  // A path names each op by its key (no addresses), but the step by its own number: where an op
  // sits reads "ProfilerStep#5 > forward" in run B, as B's timeline labels it.
  std::string_view path_part(uint32_t node) const {
    std::string_view raw = name(node);
    return raw.starts_with("ProfilerStep#") ? raw : key_text(node);
  }
  std::string path(uint32_t node) const {
    std::vector<std::string_view> parts;
    for (uint32_t n = node; n != kNone && !nodes[n].is_virtual(); n = nodes[n].parent) parts.push_back(path_part(n));
    std::string out;
    for (size_t i = parts.size(); i-- > 0;) {
      out += parts[i];
      if (i) out += " > ";
    }
    return out;
  }
};

uint32_t main_track(const TraceStore& s, const IterationPair&, std::optional<int64_t> number) {
  for (const Iteration& it : s.iterations)
    if (number && it.number == *number) return it.slice.track;
  uint32_t best = kNone;
  size_t most = 0;
  for (uint32_t t = 0; t < s.tracks.size(); ++t)
    if (s.tracks[t].kind == TrackKind::CpuThread && s.tracks[t].slices.size() > most) {
      most = s.tracks[t].slices.size();
      best = t;
    }
  return best;
}

Tree build_tree(const TraceStore& s, TimeNs t0, TimeNs t1, uint32_t main) {
  Tree tree;
  tree.store = &s;
  tree.nodes.emplace_back();
  struct ThreadOrder {
    bool main;
    TimeNs first;
    uint32_t node;
  };
  std::vector<ThreadOrder> threads;
  for (uint32_t t = 0; t < s.tracks.size(); ++t) {
    const Track& track = s.tracks[t];
    if (track.kind != TrackKind::CpuThread) continue;
    const SliceColumns& c = track.slices;
    uint32_t lo = uint32_t(std::lower_bound(c.start.begin(), c.start.end(), t0) - c.start.begin());
    uint32_t hi = uint32_t(std::lower_bound(c.start.begin(), c.start.end(), t1) - c.start.begin());
    if (lo == hi) continue;
    uint32_t thread = uint32_t(tree.nodes.size());
    tree.nodes.emplace_back();
    tree.nodes[thread].parent = 0;
    threads.push_back({t == main, c.start[lo], thread});
    std::vector<uint32_t> local(hi - lo);
    for (uint32_t row = lo; row < hi; ++row) {
      uint32_t p = c.parent[row];
      uint32_t parent = p != kNone && p >= lo && p < hi ? local[p - lo] : thread;
      uint32_t id = uint32_t(tree.nodes.size());
      local[row - lo] = id;
      Node& n = tree.nodes.emplace_back();
      n.ref = SliceRef{t, row};
      n.parent = parent;
      tree.name_key(c.name[row]);  // path() prints it
      n.key = tree.match_key(n.ref, s.activities_of(n.ref));
      n.dur = c.dur[row];
      for (SliceRef act : s.activities_of(n.ref)) {
        n.launch = true;
        ++n.kernels;
        n.kernel_time += s.dur(act);
      }
      tree.nodes[parent].children.push_back(id);
    }
    // A thread's role: the main thread, or the name of its first top-level op.
    Node& th = tree.nodes[thread];
    th.key = t == main ? key_of("<main thread>")
                       : key_of("<thread> " + std::string(tree.key_text(th.children.front())));
  }
  std::stable_sort(threads.begin(), threads.end(), [](const ThreadOrder& x, const ThreadOrder& y) {
    return x.main != y.main ? x.main : x.first < y.first;
  });
  for (const ThreadOrder& th : threads) tree.nodes[0].children.push_back(th.node);
  for (uint32_t i = uint32_t(tree.nodes.size()); i-- > 1;) {
    Node& n = tree.nodes[i];
    Node& p = tree.nodes[n.parent];
    p.kernels += n.kernels;
    p.kernel_time += n.kernel_time;
    p.ops += n.ops;
    if (!n.is_virtual()) p.child_dur += n.dur;
  }
  return tree;
}

uint64_t real_nodes(const Tree& t) {
  uint64_t n = 0;
  for (const Node& x : t.nodes) n += x.is_virtual() ? 0 : 1;
  return n;
}

// ---- iteration pairing ----

const Iteration* find_iteration(const TraceStore& s, int64_t number) {
  for (const Iteration& it : s.iterations)
    if (it.number == number) return &it;
  return nullptr;
}

IterationPair make_pair(const Iteration* a, const Iteration* b, const TraceStore& sa, const TraceStore& sb) {
  IterationPair p;
  if (a) p.a = a->number, p.start_a = a->start, p.end_a = a->end;
  else p.start_a = 0, p.end_a = sa.end_ns + 1;
  if (b) p.b = b->number, p.start_b = b->start, p.end_b = b->end;
  else p.start_b = 0, p.end_b = sb.end_ns + 1;
  return p;
}

std::vector<IterationPair> pair_iterations(const TraceStore& a, const TraceStore& b) {
  std::vector<IterationPair> out;
  for (const Iteration& it : a.iterations)
    if (const Iteration* other = find_iteration(b, it.number)) out.push_back(make_pair(&it, other, a, b));
  if (!out.empty()) return out;
  size_t n = std::min(a.iterations.size(), b.iterations.size());
  for (size_t i = 0; i < n; ++i) out.push_back(make_pair(&a.iterations[i], &b.iterations[i], a, b));
  return out;
}

const Iteration* at_index_of(const TraceStore& from, const Iteration* it, const TraceStore& to) {
  size_t index = size_t(it - from.iterations.data());
  return index < to.iterations.size() ? &to.iterations[index] : nullptr;
}

IterationPair choose(const TraceStore& a, const TraceStore& b, const AlignOptions& o,
                     const std::vector<IterationPair>& pairs, std::vector<std::string>& notes) {
  auto need = [](const TraceStore& s, int64_t n, const char* which) {
    const Iteration* it = find_iteration(s, n);
    if (!it) throw std::invalid_argument(std::string("iteration ") + std::to_string(n) + " is not in trace " + which);
    return it;
  };
  const Iteration* ia = o.iteration_a ? need(a, *o.iteration_a, "A") : nullptr;
  const Iteration* ib = o.iteration_b ? need(b, *o.iteration_b, "B") : nullptr;
  if (ia && !ib) ib = find_iteration(b, ia->number) ? find_iteration(b, ia->number) : at_index_of(a, ia, b);
  if (ib && !ia) ia = find_iteration(a, ib->number) ? find_iteration(a, ib->number) : at_index_of(b, ib, a);
  if (ia || ib) return make_pair(ia, ib, a, b);
  // The first step is warm-up (allocator growth, cuDNN autotuning, lazy init): with 3 or more
  // steps to choose from, compare the first steady-state pair (run_summary.h's rule).
  if (pairs.size() >= 3) {
    auto name = [](std::optional<int64_t> n) { return n ? "ProfilerStep#" + std::to_string(*n) : std::string("?"); };
    notes.push_back("aligned and ops tables compare " + name(pairs[1].a) + " vs " + name(pairs[1].b) +
                    ", the first steady-state step (" + name(pairs[0].a) +
                    " is warm-up); --iteration-a/-b pick another");
    return pairs[1];
  }
  if (!pairs.empty()) return pairs.front();
  if (!a.iterations.empty() || !b.iterations.empty())
    notes.push_back("only one run has ProfilerStep iterations: the whole traces are aligned");
  return make_pair(nullptr, nullptr, a, b);
}

// ---- the walk ----

std::vector<uint64_t> child_keys(const Tree& t, uint32_t node) {
  std::vector<uint64_t> keys;
  keys.reserve(t.nodes[node].children.size());
  for (uint32_t c : t.nodes[node].children) keys.push_back(t.nodes[c].key);
  return keys;
}

std::vector<SliceRef> own_kernels(const Tree& t, uint32_t node) {
  std::vector<SliceRef> acts;
  for (uint32_t c : t.nodes[node].children)
    if (t.nodes[c].launch)
      for (SliceRef act : t.store->activities_of(t.nodes[c].ref)) acts.push_back(act);
  return acts;
}

// The kernels of two matched ops' own launches: equal keys align in order; what is left pairs
// up in order within each kind (through their launching operator: another GPU or vendor names
// the same GEMM differently) as renames; the rest were added or removed.
void diff_kernels(const Tree& ta, uint32_t na, const Tree& tb, uint32_t nb, AlignedOp& op, uint32_t op_index,
                  std::vector<KernelPair>& pairs) {
  std::vector<SliceRef> ka = own_kernels(ta, na), kb = own_kernels(tb, nb);
  if (ka.empty() && kb.empty()) return;
  const TraceStore &sa = *ta.store, &sb = *tb.store;
  std::vector<uint64_t> ha, hb;
  for (SliceRef k : ka) ha.push_back(ta.activity(k).key);
  for (SliceRef k : kb) hb.push_back(tb.activity(k).key);
  std::vector<char> used_a(ka.size()), used_b(kb.size());
  for (auto [i, j] : align(ha, hb)) used_a[i] = used_b[j] = 1;
  std::array<size_t, kActivityKinds> next_b{};  // per kind, where B's next candidate is looked for
  for (size_t i = 0; i < ka.size(); ++i) {
    if (used_a[i]) continue;
    ActivityKind kind = ta.activity(ka[i]).kind;
    size_t& j = next_b[size_t(kind)];
    while (j < kb.size() && (used_b[j] || tb.activity(kb[j]).kind != kind)) ++j;
    if (j == kb.size()) continue;
    used_a[i] = used_b[j] = 1;
    std::string name_a(sa.name(ka[i])), name_b(sb.name(kb[j]));
    op.kernels_renamed.push_back(name_a + " -> " + name_b);
    pairs.push_back({op_index, ka[i], kb[j], std::move(name_a), std::move(name_b), sa.dur(ka[i]), sb.dur(kb[j])});
  }
  for (size_t i = 0; i < ka.size(); ++i)
    if (!used_a[i]) op.kernels_removed.emplace_back(sa.name(ka[i]));
  for (size_t j = 0; j < kb.size(); ++j)
    if (!used_b[j]) op.kernels_added.emplace_back(sb.name(kb[j]));
}

UnmatchedOp unmatched(const Tree& t, uint32_t parent, uint32_t position) {
  uint32_t n = t.nodes[parent].children[position];
  const Node& x = t.nodes[n];
  UnmatchedOp u;
  u.where = t.path(parent);
  u.position = position;
  u.ops = x.is_virtual() ? x.ops - 1 : x.ops;
  u.kernels = x.kernels;
  u.kernel_time = x.kernel_time;
  if (x.is_virtual()) {  // a whole thread: name it by its first op
    u.name = "<thread> " + std::string(t.key_text(x.children.front()));
  } else {
    u.name = std::string(t.key_text(n));
    u.ref = x.ref;
    u.dur = x.dur;
  }
  return u;
}

bool is_launch_call(const Tree& t, uint32_t node) {
  return t.nodes[node].launch || is_runtime_cat(t.store->cat(t.nodes[node].ref));
}

// Threads whose first ops differ (a backward thread that starts with another op) are still the
// same role more often than not: pair the leftovers in start order.
void pair_leftover_threads(std::vector<Match>& m, std::vector<char>& used_a, std::vector<char>& used_b) {
  uint32_t j = 0;
  for (uint32_t i = 0; i < used_a.size(); ++i) {
    if (used_a[i]) continue;
    while (j < used_b.size() && used_b[j]) ++j;
    if (j == used_b.size()) break;
    m.push_back({i, j});
    used_a[i] = used_b[j] = 1;
  }
  std::sort(m.begin(), m.end());
}

}  // namespace

AlignedDiff aligned_diff(const TraceStore& a, const TraceStore& b, const AlignOptions& o) {
  AlignedDiff out;
  out.iterations = pair_iterations(a, b);
  out.chosen = choose(a, b, o, out.iterations, out.notes);
  Tree ta = build_tree(a, out.chosen.start_a, out.chosen.end_a, main_track(a, out.chosen, out.chosen.a));
  Tree tb = build_tree(b, out.chosen.start_b, out.chosen.end_b, main_track(b, out.chosen, out.chosen.b));
  out.nodes_a = real_nodes(ta);
  out.nodes_b = real_nodes(tb);

  // Depth-first over matched pairs, children pushed in reverse so output follows A's order.
  struct Pair {
    uint32_t a, b, depth;
  };
  std::vector<Pair> stack{{0, 0, 0}};
  while (!stack.empty()) {
    Pair p = stack.back();
    stack.pop_back();
    const Node& na = ta.nodes[p.a];
    const Node& nb = tb.nodes[p.b];
    if (!na.is_virtual()) {
      ++out.matched;
      if (!is_launch_call(ta, p.a)) {
        AlignedOp op;
        op.name = std::string(ta.key_text(p.a));
        op.name_a = std::string(ta.name(p.a));
        op.name_b = std::string(tb.name(p.b));
        op.path = ta.path(p.a);
        op.depth = p.depth;
        op.a = na.ref;
        op.b = nb.ref;
        op.dur_a = na.dur;
        op.dur_b = nb.dur;
        op.self_a = na.dur - na.child_dur;
        op.self_b = nb.dur - nb.child_dur;
        op.kernels_a = na.kernels;
        op.kernels_b = nb.kernels;
        op.kernel_time_a = na.kernel_time;
        op.kernel_time_b = nb.kernel_time;
        diff_kernels(ta, p.a, tb, p.b, op, uint32_t(out.ops.size()), out.kernel_pairs);
        out.ops.push_back(std::move(op));
      }
    }
    std::vector<Match> m = align(child_keys(ta, p.a), child_keys(tb, p.b));
    std::vector<char> used_a(na.children.size()), used_b(nb.children.size());
    for (auto [i, j] : m) used_a[i] = used_b[j] = 1;
    if (p.a == 0) pair_leftover_threads(m, used_a, used_b);
    for (uint32_t i = 0; i < used_a.size(); ++i)
      if (!used_a[i]) out.removed.push_back(unmatched(ta, p.a, i));
    for (uint32_t j = 0; j < used_b.size(); ++j)
      if (!used_b[j]) out.added.push_back(unmatched(tb, p.b, j));
    uint32_t depth = na.is_virtual() && p.a != 0 ? 0 : p.a == 0 ? 0 : p.depth + 1;
    for (size_t k = m.size(); k-- > 0;) stack.push_back({na.children[m[k].first], nb.children[m[k].second], depth});
  }
  std::stable_sort(out.kernel_pairs.begin(), out.kernel_pairs.end(), [](const KernelPair& x, const KernelPair& y) {
    return std::llabs(x.delta()) > std::llabs(y.delta());
  });
  uint64_t total = out.nodes_a + out.nodes_b;
  out.matched_fraction = total ? 2.0 * double(out.matched) / double(total) : 1.0;

  std::vector<uint32_t> order(out.ops.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t x, uint32_t y) { return out.ops[x].self_delta() > out.ops[y].self_delta(); });
  for (uint32_t i : order)
    if (out.ops[i].self_delta() > 0 && out.regressions.size() < o.top) out.regressions.push_back(i);
  for (size_t k = order.size(); k-- > 0;)
    if (out.ops[order[k]].self_delta() < 0 && out.improvements.size() < o.top) out.improvements.push_back(order[k]);
  InclusiveChanges inclusive = largest_inclusive_changes(a, out, o.top);
  out.inclusive_regressions = std::move(inclusive.increases);
  out.inclusive_improvements = std::move(inclusive.decreases);
  return out;
}

InclusiveChanges largest_inclusive_changes(const TraceStore& a, const AlignedDiff& d, size_t top) {
  // The largest same-sign change among each op's matched descendants: walk up from every op.
  auto key = [](SliceRef r) { return uint64_t(r.track) << 32 | r.index; };
  std::unordered_map<uint64_t, uint32_t> op_of;
  for (uint32_t i = 0; i < d.ops.size(); ++i) op_of[key(d.ops[i].a)] = i;
  std::vector<TimeNs> up_below(d.ops.size(), 0), down_below(d.ops.size(), 0);
  for (const AlignedOp& op : d.ops) {
    TimeNs delta = op.delta();
    if (delta == 0 || !op.a.valid()) continue;
    for (SliceRef p = a.parent(op.a); p.valid(); p = a.parent(p)) {
      auto it = op_of.find(key(p));
      if (it == op_of.end()) continue;
      if (delta > 0) up_below[it->second] = std::max(up_below[it->second], delta);
      else down_below[it->second] = std::min(down_below[it->second], delta);
    }
  }
  InclusiveChanges out;
  for (uint32_t i = 0; i < d.ops.size(); ++i) {
    const AlignedOp& op = d.ops[i];
    if (op.name.starts_with("ProfilerStep#")) continue;
    TimeNs delta = op.delta();
    if (delta > 0 && double(up_below[i]) < 0.9 * double(delta)) out.increases.push_back(i);
    if (delta < 0 && double(down_below[i]) > 0.9 * double(delta)) out.decreases.push_back(i);
  }
  auto keep = [&](std::vector<uint32_t>& v, bool increases) {
    std::stable_sort(v.begin(), v.end(), [&](uint32_t x, uint32_t y) {
      return increases ? d.ops[x].delta() > d.ops[y].delta() : d.ops[x].delta() < d.ops[y].delta();
    });
    if (v.size() > top) v.resize(top);
  };
  keep(out.increases, true);
  keep(out.decreases, false);
  return out;
}

uint32_t main_thread(const TraceStore& store, std::optional<int64_t> iteration) { return main_track(store, {}, iteration); }

}  // namespace sl::diff
