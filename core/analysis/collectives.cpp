#include "core/analysis/collectives.h"

#include <algorithm>
#include <cctype>
#include <sys/mman.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "core/analysis/idle_time.h"
#include "core/analysis/interval_index.h"
#include "core/analysis/rank_lookup.h"
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

// ---- the cross-rank analysis, over flat arrays ----
//
// A fleet of 16,384 ranks × 2,000 collectives is 33 M calls: each is kept as one 48-byte record
// (its (group, name) as a dense id), matched through flat (rank, call) lists per key, and turned
// into its arrival rank by rank, each rank's records freed as soon as they are moved.

// An array of trivially copyable T; mapped from the system when large, so that freeing it gives
// the memory back at once (the allocator keeps freed chunks of the heap for itself).
template <class T>
class LargeArray {
public:
  LargeArray() = default;
  explicit LargeArray(size_t n) : n_(n) {
    if (!n) return;
    if (bytes() >= kMapBytes) {
      void* p = ::mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      p_ = static_cast<T*>(p);
    } else {
      p_ = static_cast<T*>(::operator new(bytes()));
    }
  }
  LargeArray(LargeArray&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  LargeArray& operator=(LargeArray&& o) noexcept {
    if (this != &o) reset(), p_ = std::exchange(o.p_, nullptr), n_ = std::exchange(o.n_, 0);
    return *this;
  }
  ~LargeArray() { reset(); }
  void reset() {
    if (p_) bytes() >= kMapBytes ? void(::munmap(p_, bytes())) : ::operator delete(p_);
    p_ = nullptr, n_ = 0;
  }
  size_t size() const { return n_; }
  T* data() { return p_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }

private:
  static constexpr size_t kMapBytes = 64 * 1024;
  size_t bytes() const { return n_ * sizeof(T); }
  T* p_ = nullptr;
  size_t n_ = 0;
};

// kInKey: placed by its key's counting sort, `at` in the key's own numbering (instance, part)
// until place() makes it the job's (kPlaced).
constexpr uint32_t kHasSeq = 1, kPlaced = 2, kInKey = 4;

// Where a matched call went: its instance (match) and its slot among all the arrivals.
struct Placement {
  uint32_t match, slot;
};

// One call as the analysis keeps it.
struct CallRecord {
  TimeNs start = 0, end = 0;  // the rank's own clock
  OptionalTime cpu_start;
  union {
    int64_t seq = 0;  // until its key is matched
    Placement at;     // once matched (flags & kPlaced)
  };
  SliceRef slice;
  uint32_t key = 0;  // (group, name): the rank's own numbering, then the job's
  uint32_t flags = 0;
};
static_assert(sizeof(CallRecord) == 48);

// A (group, name) as one rank has it: its calls, and the members its first call names.
struct RankKey {
  std::string group, name;
  bool p2p = false;
  bool has_members = false;
  std::vector<size_t> members;  // rank indices, as the first call naming any known rank gives them
  uint32_t global = 0;
  uint64_t count = 0;                                // the rank's calls of this key
  bool all_seq = true;                               // each with a seq
  int64_t seq_lo = INT64_MAX, seq_hi = INT64_MIN;    // their seqs' range
  uint64_t first = 0;                                // its first occurrence among the key's
};

struct RankInfo {
  int64_t rank = 0;
  TimeNs origin_ns = 0, end_ns = 0;
  TimeNs offset = 0;  // applied offset (0 unless aligned)
  bool host_calls = false;
  StragglerRow row;  // the per-rank columns; the collective ones are added from the instances
  LargeArray<CallRecord> calls;
  std::vector<RankKey> keys;
};

struct Occurrence {
  uint32_t rank, call;  // no initialisers: the lists of tens of millions are filled, never zeroed first
};

// A vector whose resize() leaves new trivially constructible elements uninitialised (each is
// written once, in parallel, straight after).
template <class T>
struct NoZeroing : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoZeroing<U>;
  };
  NoZeroing() = default;
  template <class U>
  NoZeroing(const NoZeroing<U>&) {}
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    if constexpr (sizeof...(A) == 0) ::new (static_cast<void*>(p)) U;
    else ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using Occurrences = std::vector<Occurrence, NoZeroing<Occurrence>>;
using Runs = std::vector<std::pair<size_t, size_t>>;  // [begin, end) of each rank's occurrences

// fn(begin, end) over ranges of rank indices [0, n), 64 ranks a task, in parallel (a task per
// rank would be too fine for parallel_for; a range keeps its scratch across its ranks).
template <class Fn>
void for_rank_ranges(size_t n, unsigned threads, Fn fn) {
  constexpr size_t kRanksPerRange = 64;
  parallel_for((n + kRanksPerRange - 1) / kRanksPerRange, threads,
               [&](size_t range) { fn(range * kRanksPerRange, std::min(n, (range + 1) * kRanksPerRange)); });
}

struct KeyInfo {
  std::string group, name;
  bool p2p = false;  // one (sender, receiver) pair: never matched by seq (each rank counts its own)
  bool has_members = false;
  std::vector<size_t> members;  // rank indices expected in this group, sorted
  uint64_t count = 0;
  bool all_seq = true;  // every occurrence has a seq
  int64_t seq_lo = INT64_MAX, seq_hi = INT64_MIN;
  Occurrences occurrences;  // rank-major, each rank's by start
  Runs runs;                // of occurrences, one per rank
  // Its instances: parts[begin[i], begin[i + 1]) per instance, rank-major inside.
  Occurrences parts;
  std::vector<uint64_t> begin;
  bool deferred = false;  // counts differ: matched on the clock once the offsets are known
  bool in_records = false;  // its calls' records hold their instance and part (kInKey)
};

// The rank indices that the call's group ranks (or its peer) name, as group_occurrences did.
std::vector<size_t> named_members(const CallView& c, size_t r, const std::unordered_map<int64_t, size_t>& index_of) {
  std::vector<size_t> out;
  if (c.p2p != P2p::None) {
    if (auto peer = index_of.find(*c.peer); peer != index_of.end()) out = {r, peer->second};
    return out;
  }
  for (size_t i = 0; i < c.group_rank_count; ++i)
    if (auto it = index_of.find(c.group_ranks[i]); it != index_of.end()) out.push_back(it->second);
  return out;
}

// Reads one rank as its source hands it over: its per-rank straggler columns and its calls,
// keyed by the rank's own keys.
class RecordSink final : public CallSink {
public:
  RecordSink(size_t r, const std::unordered_map<int64_t, size_t>& index_of, RankInfo& out) : r_(r), index_of_(index_of), out_(out) {}

  void rank(const RankColumns& d, size_t calls) override {
    out_ = {};
    local_.clear();
    last_ = UINT32_MAX;
    out_.rank = d.rank;
    out_.origin_ns = d.origin_ns;
    out_.end_ns = d.end_ns;
    out_.host_calls = d.host_calls;
    StragglerRow& s = out_.row;
    s.rank = d.rank;
    s.iterations = d.iterations;
    if (s.iterations) s.iteration_mean = d.iteration_sum / double(s.iterations);
    s.compute = d.compute, s.communication = d.communication, s.idle = d.idle;
    out_.calls = LargeArray<CallRecord>(calls);
  }

  void call(size_t k, const CallView& c) override {
    uint32_t id = last_;
    if (id == UINT32_MAX || out_.keys[id].group != c.group || out_.keys[id].name != c.name) {
      joined_.assign(c.group).push_back('\0');
      joined_.append(c.name);
      auto it = local_.find(std::string_view(joined_));
      if (it == local_.end()) {
        it = local_.emplace(joined_, uint32_t(out_.keys.size())).first;
        RankKey key;
        key.group = c.group, key.name = c.name;
        out_.keys.push_back(std::move(key));
      }
      id = last_ = it->second;
    }
    RankKey& key = out_.keys[id];
    key.p2p = key.p2p || c.p2p != P2p::None;
    ++key.count;
    if (c.seq) key.seq_lo = std::min(key.seq_lo, *c.seq), key.seq_hi = std::max(key.seq_hi, *c.seq);
    else key.all_seq = false;
    if (!key.has_members)
      if (auto m = named_members(c, r_, index_of_); !m.empty()) key.members = std::move(m), key.has_members = true;
    CallRecord& rec = out_.calls[k];
    rec = {};
    rec.start = c.start, rec.end = c.end;
    rec.cpu_start = c.cpu_start;
    if (c.seq) rec.seq = *c.seq, rec.flags |= kHasSeq;
    rec.slice = c.slice;
    rec.key = id;
  }

private:
  size_t r_;
  const std::unordered_map<int64_t, size_t>& index_of_;
  RankInfo& out_;
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const { return std::hash<std::string_view>()(v); }
  };
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> local_;  // "group\0name" -> key
  std::string joined_;
  uint32_t last_ = UINT32_MAX;
};

// Matches that need no clock: by seq, or by order when every member has the same count.
// Leaves the key deferred when it needs the clock-based matching. A large key's counting sort
// runs on `threads` (in chunks of the occurrences, each chunk's parts placed after the chunks
// before it, so the sort stays stable).
void match_without_clock(KeyInfo& key, std::vector<RankInfo>& ranks, unsigned threads) {
  const auto& occ = key.occurrences;
  const Runs& runs = key.runs;
  bool all_seq = !key.p2p && key.all_seq;
  bool equal = runs.size() == key.members.size();
  for (auto& [b, e] : runs) equal = equal && e - b == runs.back().second - runs.back().first;
  if (all_seq) {
    // Stable by seq (a map of seq to its parts, each in rank order): counted when the seqs are
    // dense, as they are when every rank numbers its calls of a group.
    const int64_t lo = key.seq_lo, hi = key.seq_hi;
    auto seq_of = [&](const Occurrence& o) { return ranks[o.rank].calls[o.call].seq; };
    key.parts.resize(occ.size());
    if (occ.empty()) {
    } else if (uint64_t(hi) - uint64_t(lo) < 4 * occ.size() + 1024) {
      const size_t buckets = size_t(uint64_t(hi) - uint64_t(lo)) + 1;
      // Chunks only where their counts stay small beside the occurrences.
      size_t chunks = occ.size() >= (size_t(1) << 20) ? std::min<size_t>(64, occ.size() / (8 * buckets)) : 1;
      chunks = std::max<size_t>(1, chunks);
      const size_t per_chunk = (occ.size() + chunks - 1) / chunks;
      std::vector<std::vector<uint64_t>> at(chunks, std::vector<uint64_t>(buckets, 0));
      auto each_chunk = [&](auto&& fn) {
        parallel_for(chunks, chunks > 1 ? threads : 1, [&](size_t c) {
          for (size_t i = c * per_chunk; i < std::min(occ.size(), (c + 1) * per_chunk); ++i) fn(c, occ[i]);
        });
      };
      each_chunk([&](size_t c, const Occurrence& o) { ++at[c][size_t(uint64_t(seq_of(o)) - uint64_t(lo))]; });
      uint64_t placed = 0;
      std::vector<uint32_t> instance_of(buckets);
      for (size_t b = 0; b < buckets; ++b) {
        uint64_t total = 0;
        for (size_t c = 0; c < chunks; ++c) total += at[c][b];
        if (!total) continue;
        instance_of[b] = uint32_t(key.begin.size());
        key.begin.push_back(placed);
        for (size_t c = 0; c < chunks; ++c) {  // each chunk's count becomes its first position
          uint64_t n = at[c][b];
          at[c][b] = placed;
          placed += n;
        }
      }
      // Each record told its instance and part as it goes (in call order: no scattered writes
      // later); beyond 2^32 parts place() refuses the job before reading them.
      each_chunk([&](size_t c, const Occurrence& o) {
        CallRecord& rec = ranks[o.rank].calls[o.call];
        const size_t b = size_t(uint64_t(rec.seq) - uint64_t(lo));
        const uint64_t part = at[c][b]++;
        key.parts[part] = o;
        rec.at = {instance_of[b], uint32_t(part)};
        rec.flags |= kInKey;
      });
      key.in_records = true;
    } else {
      key.parts = occ;
      std::stable_sort(key.parts.begin(), key.parts.end(), [&](auto& a, auto& b) { return seq_of(a) < seq_of(b); });
      for (size_t i = 0; i < key.parts.size(); ++i)
        if (i == 0 || seq_of(key.parts[i]) != seq_of(key.parts[i - 1])) key.begin.push_back(i);
    }
    key.begin.push_back(key.parts.size());
    key.occurrences = {};
    return;
  }
  if (!equal) {
    key.deferred = true;
    return;
  }
  size_t count = runs.back().second - runs.back().first;
  key.parts.reserve(occ.size());
  for (size_t i = 0; i < count; ++i) {
    key.begin.push_back(key.parts.size());
    for (auto& [b, e] : runs) key.parts.push_back(occ[b + i]);
  }
  key.begin.push_back(key.parts.size());
  key.occurrences = {};
}

// Each instance takes every rank's next occurrence that started before the earliest end among
// those next occurrences (times with offsets applied).
void match_by_clock(KeyInfo& key, const std::vector<RankInfo>& ranks) {
  const auto& occ = key.occurrences;
  const Runs& runs = key.runs;
  std::vector<size_t> next;
  for (auto& [b, e] : runs) next.push_back(b);
  auto record = [&](const Occurrence& o) -> const CallRecord& { return ranks[o.rank].calls[o.call]; };
  for (;;) {
    TimeNs earliest_end = INT64_MAX;
    for (size_t j = 0; j < runs.size(); ++j)
      if (next[j] < runs[j].second)
        earliest_end = std::min(earliest_end, record(occ[next[j]]).end + ranks[occ[next[j]].rank].offset);
    if (earliest_end == INT64_MAX) break;
    size_t before = key.parts.size();
    key.begin.push_back(before);
    for (size_t j = 0; j < runs.size(); ++j)
      if (next[j] < runs[j].second && record(occ[next[j]]).start + ranks[occ[next[j]].rank].offset <= earliest_end)
        key.parts.push_back(occ[next[j]++]);
    if (key.parts.size() == before) {  // a call that ends before it starts (a damaged summary): no progress
      key.begin.pop_back();
      break;
    }
  }
  key.begin.push_back(key.parts.size());
  key.occurrences = {};
}

// One instance before timing: its key and its parts.
struct MatchRef {
  uint32_t key = 0;
  uint64_t begin = 0, end = 0;
};

// The median (of an even count: the lower middle plus half the gap to the upper), in linear time.
TimeNs median_of(std::vector<TimeNs> v) {
  size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + n / 2, v.end());
  TimeNs upper = v[n / 2];
  if (n % 2) return upper;
  TimeNs lower = *std::max_element(v.begin(), v.begin() + n / 2);
  return lower + (upper - lower) / 2;
}

// Offsets so that matched instances end together: the first rank with collectives is the
// reference; each other rank, in rounds over the ranks in order, takes the median over instances
// shared with ranks already placed (the first placed one in each instance's parts). A rank
// whose every instance has the reference first depends on nothing else: those are placed in the
// first round in parallel; the others go round by round as before, a rank counting as placed
// where it was by its turn (an earlier round, or this one at a lower index). Needs the calls'
// placements (kPlaced: the matches given).
std::vector<TimeNs> estimate_offsets(const std::vector<RankInfo>& ranks, const std::vector<KeyInfo>& keys,
                                     const std::vector<MatchRef>& matches, unsigned threads) {
  const size_t n = ranks.size();
  constexpr uint32_t kUnplaced = UINT32_MAX;
  std::vector<TimeNs> off(n, 0);
  std::vector<uint32_t> round(n, kUnplaced);  // the round each rank was placed in (0: the reference)
  size_t reference = n;
  for (size_t r = 0; r < n && reference == n; ++r)
    if (ranks[r].calls.size()) reference = r, round[r] = 0;
  if (reference == n) return off;
  auto parts_of = [&](uint32_t m) { return keys[matches[m].key].parts.data() + matches[m].begin; };
  // Each rank's (match, its first call in it) in match order: its calls by match, stably (a
  // rank's calls come in each match's parts in call order), the first of each match kept.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> rest(n);  // the ranks of the later rounds
  std::vector<char> placed_first(n, 0);
  for_rank_ranges(n, threads, [&](size_t begin, size_t end) {
    std::vector<std::pair<uint32_t, uint32_t>> taking;
    std::vector<TimeNs> diffs;
    for (size_t r = begin; r < end; ++r) {
      if (r == reference) continue;
      const RankInfo& d = ranks[r];
      taking.clear();
      for (size_t k = 0; k < d.calls.size(); ++k)
        if (d.calls[k].flags & kPlaced) taking.push_back({d.calls[k].at.match, uint32_t(k)});
      auto by_match = [](auto& a, auto& b) { return a.first < b.first; };
      if (!std::is_sorted(taking.begin(), taking.end(), by_match)) std::stable_sort(taking.begin(), taking.end(), by_match);
      taking.erase(std::unique(taking.begin(), taking.end(), [](auto& a, auto& b) { return a.first == b.first; }), taking.end());
      bool alone = true;  // every instance's first part is the reference's
      diffs.clear();
      for (auto [m, mine] : taking) {
        const Occurrence& first = parts_of(m)[0];
        if (first.rank != reference) {
          alone = false;
          break;
        }
        diffs.push_back(ranks[reference].calls[first.call].end - d.calls[mine].end);
      }
      if (!alone) {
        rest[r] = taking;
      } else if (!diffs.empty()) {
        off[r] = median_of(diffs);
        placed_first[r] = 1;
      }  // else: shares no instance with anyone, never placed
    }
  });
  bool progress = false;
  for (size_t r = 0; r < n; ++r)
    if (placed_first[r]) round[r] = 1, progress = true;
  placed_first = {};
  std::vector<size_t> later;
  for (size_t r = 0; r < n; ++r)
    if (!rest[r].empty()) later.push_back(r);
  for (uint32_t k = 1; !later.empty() && (progress || k == 1); ++k) {
    progress = k == 1 && progress;
    for (size_t r : later) {
      if (round[r] != kUnplaced) continue;
      std::vector<TimeNs> diffs;
      for (auto [m, mine] : rest[r]) {
        const Occurrence* p = parts_of(m);
        for (uint64_t i = 0; i < matches[m].end - matches[m].begin; ++i) {
          const uint32_t q = p[i].rank, at = round[q];
          if (at != kUnplaced && (at < k || (at == k && q < r))) {
            diffs.push_back(ranks[q].calls[p[i].call].end + off[q] - ranks[r].calls[mine].end);
            break;
          }
        }
      }
      if (diffs.empty()) continue;
      off[r] = median_of(std::move(diffs));
      round[r] = k;
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

// Last rank, skew and waits of an instance whose arrivals are in.
void time_instance(CollectiveInstance& in, CollectiveArrival* begin, CollectiveArrival* end) {
  auto by_rank = [](auto& a, auto& b) { return a.rank < b.rank; };
  if (!std::is_sorted(begin, end, by_rank)) std::stable_sort(begin, end, by_rank);
  TimeNs first = INT64_MAX, last = INT64_MIN;
  for (const CollectiveArrival* a = begin; a != end; ++a) {
    first = std::min(first, a->arrival);
    if (a->arrival > last) last = a->arrival, in.last_rank = a->rank;  // ties: the lowest rank
  }
  in.skew = last - first;
  for (CollectiveArrival* a = begin; a != end; ++a) a->wait = std::max<TimeNs>(0, std::min(last, a->end) - a->arrival);
}

// Stable, by each instance's first arrival (computed once per instance, not per comparison).
void sort_by_first_arrival(std::vector<CollectiveInstance>& instances) {
  std::vector<std::pair<TimeNs, size_t>> keys;
  for (size_t i = 0; i < instances.size(); ++i) {
    TimeNs f = INT64_MAX;
    for (const auto& a : std::as_const(instances[i].arrivals)) f = std::min(f, a.arrival);  // as_const: never copied out
    keys.push_back({f, i});
  }
  std::stable_sort(keys.begin(), keys.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<CollectiveInstance> sorted;
  sorted.reserve(instances.size());
  for (auto& [f, i] : keys) sorted.push_back(std::move(instances[i]));
  instances = std::move(sorted);
}

std::vector<StragglerRow> straggler_rows(const std::vector<RankInfo>& ranks, const std::vector<CollectiveInstance>& instances) {
  std::vector<StragglerRow> rows;
  std::map<int64_t, std::map<std::string, TimeNs>> cause_delay;
  for (const RankInfo& d : ranks) rows.push_back(d.row);
  std::vector<std::pair<int64_t, size_t>> row_of_rank;
  for (size_t i = 0; i < rows.size(); ++i) row_of_rank.push_back({rows[i].rank, i});
  const RankLookup row_index(row_of_rank);  // the first row of each rank
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
std::pair<TimeNs, TimeNs> placed_span(const RankInfo& d) {
  TimeNs start = d.origin_ns + d.offset;
  return {start, start + d.end_ns};
}

// Groups of ranks whose clocks share no moment: said in a note, and (unless alignment is off)
// each later group moved to start where the first starts. Fills clock_groups, applied, moved.
void place_clock_groups(std::vector<RankInfo>& ranks, const CollectiveOptions& options, CollectiveAnalysis& out) {
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  for (const RankInfo& d : ranks) spans.push_back(placed_span(d));
  std::vector<std::vector<size_t>> groups = overlapping_groups(spans);
  out.moved.assign(ranks.size(), false);
  for (const auto& g : groups) {
    std::vector<int64_t>& named = out.clock_groups.emplace_back();
    for (size_t r : g) named.push_back(ranks[r].rank);
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
  for (const RankInfo& d : ranks) out.applied.push_back(d.offset);
}

// The job's keys, in (group, name) order, from each rank's own; each rank's records renumbered.
std::vector<KeyInfo> job_keys(std::vector<RankInfo>& ranks, unsigned threads) {
  std::map<std::pair<std::string, std::string>, uint32_t> ids;
  for (const RankInfo& d : ranks)
    for (const RankKey& k : d.keys) ids.try_emplace({k.group, k.name}, 0);
  std::vector<KeyInfo> keys;
  for (auto& [gn, id] : ids) {
    id = uint32_t(keys.size());
    KeyInfo& key = keys.emplace_back();
    key.group = gn.first, key.name = gn.second;
  }
  for (RankInfo& d : ranks)
    for (RankKey& k : d.keys) {
      k.global = ids.at({k.group, k.name});
      KeyInfo& key = keys[k.global];
      key.p2p = key.p2p || k.p2p;
      if (!key.has_members && k.has_members) key.members = k.members, key.has_members = true;
    }
  // Each rank's run of each key's occurrences, from the counts the first pass kept (rank-major).
  std::vector<std::vector<uint32_t>> run_ranks(keys.size());
  for (uint32_t r = 0; r < ranks.size(); ++r)
    for (RankKey& k : ranks[r].keys) {
      if (!k.count) continue;
      KeyInfo& key = keys[k.global];
      k.first = key.count;
      key.runs.push_back({size_t(key.count), size_t(key.count + k.count)});
      run_ranks[k.global].push_back(r);
      key.count += k.count;
      key.all_seq = key.all_seq && k.all_seq;
      key.seq_lo = std::min(key.seq_lo, k.seq_lo), key.seq_hi = std::max(key.seq_hi, k.seq_hi);
    }
  for (KeyInfo& key : keys) key.occurrences.resize(key.count);
  // Renumbered and listed by ranges of ranks in parallel: each rank fills its own runs.
  for_rank_ranges(ranks.size(), threads, [&](size_t begin, size_t end) {
    std::vector<uint64_t> next;
    for (size_t r = begin; r < end; ++r) {
      RankInfo& d = ranks[r];
      next.clear();
      for (const RankKey& k : d.keys) next.push_back(k.first);
      for (size_t c = 0; c < d.calls.size(); ++c) {
        uint32_t local = d.calls[c].key;
        d.calls[c].key = d.keys[local].global;
        keys[d.keys[local].global].occurrences[next[local]++] = {uint32_t(r), uint32_t(c)};
      }
    }
  });
  for (size_t id = 0; id < keys.size(); ++id) {
    std::vector<size_t>& m = keys[id].members;
    if (m.empty()) {
      m.assign(run_ranks[id].begin(), run_ranks[id].end());  // ascending: sorted already
      continue;
    }
    std::vector<size_t> declared = m;  // a rank outside the declared group still takes part
    std::sort(declared.begin(), declared.end());
    for (uint32_t r : run_ranks[id])
      if (!std::binary_search(declared.begin(), declared.end(), size_t(r))) m.push_back(r);
    std::sort(m.begin(), m.end());
  }
  return keys;
}

// Phase times on stderr when SIGHTLINE_PROFILE names "collectives" (for the fleet benchmarks).
class PhaseTimer {
public:
  PhaseTimer() : on_(std::getenv("SIGHTLINE_PROFILE") && std::string_view(std::getenv("SIGHTLINE_PROFILE")).find("collectives") != std::string_view::npos) {}
  void mark(const char* what) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    double cpu = cpu_seconds();
    std::fprintf(stderr, "collectives: %-18s %8.3f s wall %8.3f s CPU\n", what, std::chrono::duration<double>(now - t_).count(), cpu - cpu_);
    t_ = now, cpu_ = cpu;
  }

private:
  static double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  }
  bool on_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
  double cpu_ = cpu_seconds();
};

// Each rank on the job clock, by the summaries' own order.
class PointerSource : public SummarySource {
public:
  explicit PointerSource(const std::vector<const RankSummary*>& ranks) : ranks_(ranks) {}
  size_t size() const override { return ranks_.size(); }
  int64_t rank(size_t i) const override { return ranks_[i]->rank; }
  void visit(size_t i, const std::function<void(const RankSummary&)>& use) const override { use(*ranks_[i]); }

private:
  const std::vector<const RankSummary*>& ranks_;
};
}  // namespace

RankColumns rank_columns(const RankSummary& d) {
  RankColumns c;
  c.rank = d.rank;
  c.origin_ns = d.origin_ns;
  c.end_ns = d.end_ns;
  c.host_calls = d.host_calls;
  c.iterations = d.iteration_durations.size();
  for (TimeNs length : d.iteration_durations) c.iteration_sum += double(length);
  const auto& merged = d.busy.merged();
  if (!merged.empty()) {
    c.compute = d.compute.covered(merged.front().start, merged.back().end);
    c.communication = d.busy.covered(merged.front().start, merged.back().end) - c.compute;
    c.idle = (merged.back().end - merged.front().start) - (c.compute + c.communication);
  }
  return c;
}

void SummarySource::first_pass(size_t i, CallSink& sink) const {
  visit(i, [&](const RankSummary& d) {
    sink.rank(rank_columns(d), d.calls.size());
    for (size_t k = 0; k < d.calls.size(); ++k) {
      const CollectiveCall& c = d.calls[k];
      CallView v;
      v.name = c.name, v.group = c.group;
      v.group_ranks = c.group_ranks.data(), v.group_rank_count = c.group_ranks.size();
      v.seq = c.seq, v.p2p = c.p2p, v.peer = c.peer;
      v.start = c.start, v.end = c.end;
      if (c.cpu_start) v.cpu_start = *c.cpu_start;
      v.slice = c.slice;
      sink.call(k, v);
    }
  });
}

RankSummary summarize_rank(int64_t rank, const TraceStore& store, const EventTable& table, IdleCauses causes) {
  RankSummary out;
  out.rank = rank;
  out.store = &store;
  out.origin_ns = store.origin_ns;
  out.end_ns = store.end_ns;
  for (const Iteration& it : store.iterations) {
    out.iteration_durations.push_back(it.end - it.start);
    out.iteration_starts.push_back(it.start);
  }
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

bool has_collective_args(std::string_view name, std::string_view cat) {
  return name == "record_param_comms" || (is_kernel_cat(cat) && kernel_type_sightline(name, cat) == KernelType::Communication);
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
  return analyze_collectives(PointerSource(summaries), options);
}

CollectiveAnalysis analyze_collectives(const SummarySource& source, const CollectiveOptions& options) {
  PhaseTimer timer;
  CollectiveAnalysis out;
  const size_t n = source.size();
  std::unordered_map<int64_t, size_t> last_index_of;  // rank -> its last index (a group's members)
  for (size_t r = 0; r < n; ++r) last_index_of[source.rank(r)] = r;
  std::vector<RankInfo> ranks(n);
  parallel_for(n, options.threads, [&](size_t r) {
    RecordSink sink(r, last_index_of, ranks[r]);
    source.first_pass(r, sink);
  });
  for (const RankInfo& d : ranks) out.ranks.push_back(d.rank);
  timer.mark("read");
  std::vector<KeyInfo> keys = job_keys(ranks, options.threads);
  timer.mark("keys");
  // The small keys side by side, each large one with the threads to itself.
  constexpr size_t kLargeKey = size_t(1) << 20;
  std::vector<uint32_t> small, large;
  for (uint32_t k = 0; k < keys.size(); ++k) (keys[k].occurrences.size() >= kLargeKey ? large : small).push_back(k);
  parallel_for(small.size(), options.threads, [&](size_t i) { match_without_clock(keys[small[i]], ranks, 1); });
  for (uint32_t k : large) match_without_clock(keys[k], ranks, options.threads);
  timer.mark("match");
  std::vector<MatchRef> matches;
  auto add_matches = [&](uint32_t k) {
    for (size_t i = 0; i + 1 < keys[k].begin.size(); ++i) matches.push_back({k, keys[k].begin[i], keys[k].begin[i + 1]});
  };
  // Each call of the matches from `from` on told its instance and its slot among all the
  // arrivals (one array, each instance's arrivals a range of it in the order of its parts: by
  // rank, as the calls come). The clock-matched keys' come last, so the others' slots stand.
  std::vector<uint64_t> first_slot(1, 0);
  auto place = [&](size_t from) {
    for (size_t m = from; m < matches.size(); ++m) first_slot.push_back(first_slot.back() + (matches[m].end - matches[m].begin));
    if (first_slot.back() >= UINT32_MAX) throw std::length_error("collectives: more than 2^32 collective calls");
    // A key whose records the sort told: its first match and first slot, each record's own
    // numbering shifted by them, rank by rank; the others' records from their parts.
    std::vector<std::pair<uint32_t, uint32_t>> shift(keys.size(), {UINT32_MAX, 0});
    bool in_records = false;
    for (size_t m = from; m < matches.size(); ++m)
      if (keys[matches[m].key].in_records && matches[m].begin == 0)
        shift[matches[m].key] = {uint32_t(m), uint32_t(first_slot[m])}, in_records = true;
    if (in_records)
      for_rank_ranges(n, options.threads, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r)
          for (size_t k = 0; k < ranks[r].calls.size(); ++k) {
            CallRecord& c = ranks[r].calls[k];
            if (!(c.flags & kInKey) || shift[c.key].first == UINT32_MAX) continue;
            c.at = {shift[c.key].first + c.at.match, shift[c.key].second + c.at.slot};
            c.flags = (c.flags & ~kInKey) | kPlaced;
          }
      });
    parallel_for(matches.size() - from, options.threads, [&](size_t j) {
      const size_t m = from + j;
      const MatchRef& ref = matches[m];
      const KeyInfo& key = keys[ref.key];
      if (key.in_records) return;
      for (uint64_t i = ref.begin; i < ref.end; ++i) {
        CallRecord& c = ranks[key.parts[i].rank].calls[key.parts[i].call];  // each call is in one instance
        c.at = {uint32_t(m), uint32_t(first_slot[m] + (i - ref.begin))};
        c.flags |= kPlaced;
      }
    });
  };
  size_t deferred = 0;
  for (uint32_t k = 0; k < keys.size(); ++k) keys[k].deferred ? void(++deferred) : add_matches(k);
  place(0);
  out.offsets = estimate_offsets(ranks, keys, matches, options.threads);
  timer.mark("offsets");
  TimeNs largest = 0;
  for (TimeNs o : out.offsets) largest = std::max(largest, o < 0 ? -o : o);
  out.aligned = options.align == Align::Collectives || (options.align == Align::Auto && largest > options.align_noise);
  if (out.aligned)
    for (size_t r = 0; r < n; ++r) ranks[r].offset = out.offsets[r];
  place_clock_groups(ranks, options, out);
  const size_t clock_matched = matches.size();
  for (uint32_t k = 0; k < keys.size(); ++k)
    if (keys[k].deferred) match_by_clock(keys[k], ranks), add_matches(k);
  place(clock_matched);

  out.origin_ns = INT64_MAX;
  for (const RankInfo& d : ranks) out.origin_ns = std::min(out.origin_ns, d.origin_ns + d.offset);
  if (ranks.empty()) out.origin_ns = 0;
  const TimeNs origin = out.origin_ns;

  // The instances and their missing ranks.
  std::vector<CollectiveInstance> instances(matches.size());
  auto all_arrivals = std::make_shared<LargeArray<CollectiveArrival>>(size_t(first_slot.back()));
  parallel_for(matches.size(), options.threads, [&](size_t m) {
    const MatchRef& ref = matches[m];
    const KeyInfo& key = keys[ref.key];
    CollectiveInstance& in = instances[m];
    in.name = key.name, in.group = key.group;
    std::vector<size_t> present;
    for (uint64_t i = ref.begin; i < ref.end; ++i) present.push_back(key.parts[i].rank);
    if (!std::is_sorted(present.begin(), present.end())) std::sort(present.begin(), present.end());
    // Both sorted: the members not present, in one merge.
    auto p = present.begin();
    for (size_t r : key.members) {
      while (p != present.end() && *p < r) ++p;
      if (p == present.end() || *p != r) in.missing.push_back(ranks[r].rank);
    }
  });
  keys.clear();
  timer.mark("instances");
  // By ranges of ranks in parallel: each call to its slot on the job clock, then the rank's
  // records go.
  for_rank_ranges(n, options.threads, [&](size_t begin, size_t end) {
    CollectiveArrival* slots = all_arrivals->data();
    for (size_t r = begin; r < end; ++r) {
      RankInfo& d = ranks[r];
      for (size_t k = 0; k < d.calls.size(); ++k) {
        const CallRecord& c = d.calls[k];
        if (!(c.flags & kPlaced)) continue;  // in no instance (a damaged summary)
        CollectiveArrival& a = slots[c.at.slot];
        a = {};
        a.rank = d.rank;
        a.arrival = c.start + d.offset - origin;
        if (c.cpu_start) a.cpu_arrival = *c.cpu_start + d.offset - origin;
        a.end = c.end + d.offset - origin;
        a.slice = c.slice;
      }
      d.calls.reset();
    }
  });
  parallel_for(instances.size(), options.threads, [&](size_t m) {
    CollectiveArrival* begin = all_arrivals->data() + first_slot[m];
    size_t count = size_t(first_slot[m + 1] - first_slot[m]);
    time_instance(instances[m], begin, begin + count);
    instances[m].arrivals = ArrivalList::view(begin, count, all_arrivals);
  });
  timer.mark("arrivals+timing");
  out.instances = std::move(instances);
  sort_by_first_arrival(out.instances);

  // What each instance's last rank did while the others waited: the rank visited again, once
  // for all the instances it was last in.
  std::unordered_map<int64_t, size_t> index_of;  // rank -> its first index
  for (size_t r = n; r-- > 0;) index_of[ranks[r].rank] = r;
  std::map<std::pair<std::string, std::string>, uint64_t> numbering;
  std::vector<std::vector<size_t>> last_in(n);
  for (size_t i = 0; i < out.instances.size(); ++i) {
    CollectiveInstance& in = out.instances[i];
    in.instance = numbering[{in.group, in.name}]++;
    if (in.skew <= 0) continue;
    size_t r = index_of.at(in.last_rank);
    if (ranks[r].host_calls) in.last_cause = "host";
    else last_in[r].push_back(i);
  }
  std::vector<size_t> visited;
  for (size_t r = 0; r < n; ++r)
    if (!last_in[r].empty()) visited.push_back(r);
  parallel_for(visited.size(), options.threads, [&](size_t v) {
    size_t r = visited[v];
    const TimeNs to_local = origin - ranks[r].offset - ranks[r].origin_ns;
    source.visit_activity(r, [&](const RankSummary& d) {
      for (size_t i : last_in[r]) {
        CollectiveInstance& in = out.instances[i];
        TimeNs last = 0;
        for (const auto& a : std::as_const(in.arrivals))
          if (a.rank == in.last_rank) last = a.arrival;
        in.last_cause = cause_in_window(d, last - in.skew + to_local, last + to_local);
      }
    });
  });
  out.stragglers = straggler_rows(ranks, out.instances);
  timer.mark("causes+stragglers");
  if (out.instances.empty()) out.notes.push_back("collectives: no NCCL/RCCL kernel or record_param_comms call on any rank");
  if (deferred)
    out.notes.push_back("collectives: " + std::to_string(deferred) +
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
