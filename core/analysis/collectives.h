// Collectives across the ranks of a job: which instance of which collective each rank's kernel
// belongs to, who arrived last and why, and which ranks make the others wait (stragglers).
//
// A collective occurrence on a rank is an NCCL/RCCL/HCCL communication kernel (its CPU call is
// the enclosing `record_param_comms`, else the launch); a rank with no such kernel contributes
// its `record_param_comms` CPU calls instead. Occurrences are grouped by process group
// (`Process Group Name` arg, else "default") and collective name (`Collective name` arg, else
// the kernel name's operation, e.g. AllReduce of ncclKernel_AllReduce_RING_LL_Sum_float), then
// matched into instances:
//   - by `Seq`/`seq` arg when every occurrence of the group has one,
//   - else by order, when every member rank has the same count,
//   - else greedily on the aligned clock: an instance takes each rank's next occurrence that
//     started before the earliest end among them (no rank can finish a collective before the
//     last one arrived), so a rank that missed an instance is listed as missing, not shifted.
// Point-to-point sends and receives with a peer arg (`Dst Rank` on a send, `Src Rank` on a
// recv, as PyTorch's record_param_comms writes them; or `peer` with the direction from the
// collective name) are instances of two ranks: the k-th send from A to B matches the k-th recv
// on B from A (name "send/recv A->B"), never by seq (each rank numbers its own P2P calls), by
// the clock rule above when the two counts differ. Sends/recvs without peer args (all-to-all's
// SendRecv kernels) are matched like any collective.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/common.h"
#include "core/analysis/idle_time.h"
#include "core/analysis/interval_index.h"

namespace sl::analysis {

struct Table;

// Point-to-point direction of a call (send/recv with a peer arg), else None.
enum class P2p : uint8_t { None, Send, Recv };

// One collective call on one rank; times absolute ns on the rank's own clock.
struct CollectiveCall {
  std::string name;                  // P2P with a peer: "send/recv A->B"
  std::string group;                 // `Process Group Name`, else "default"
  std::vector<int64_t> group_ranks;  // from `Process Group Ranks`; empty when absent
  std::optional<int64_t> seq;
  P2p p2p = P2p::None;
  std::optional<int64_t> peer;       // P2P: the other rank (global), from the peer args
  TimeNs start = 0, end = 0;
  std::optional<TimeNs> cpu_start;
  SliceRef slice;
};

// What the cross-rank analyses need from one rank, taken in one pass over its event table, so
// that the table (the big part) can be dropped as soon as the rank is summarised: GPU busy time,
// idle gaps by cause, iterations (from the store) and the collective calls. Times store-relative
// unless said otherwise.
// Everything analyze_collectives reads is a field here (never the store), so that a summary
// rebuilt from its serialised form (core/fleet) gives the same tables as the live one.
struct RankSummary {
  int64_t rank = 0;
  const TraceStore* store = nullptr;  // the rank's store while loaded; null for a fleet summary
  TimeNs origin_ns = 0;               // the store's origin_ns (absolute ns of its time 0)
  TimeNs end_ns = 0;                  // the store's end_ns (its last event, store time)
  std::vector<TimeNs> iteration_durations;  // ProfilerStep#N lengths, in store order
  std::vector<TimeNs> iteration_starts;     // their starts (store time); empty in a fleet summary of format 1
  IntervalIndex busy;     // GPU kernels, memcpys, memsets
  IntervalIndex compute;  // the non-communication part of them
  IdleCauses causes;
  std::vector<CollectiveCall> calls;  // by start
  bool host_calls = false;            // no communication kernel: the calls are CPU record_param_comms
};

// Summarises a rank from a Sightline-mode table and its idle causes (a report's, when one ran).
RankSummary summarize_rank(int64_t rank, const TraceStore& store, const EventTable& table, IdleCauses causes);
// Builds the Sightline-mode table and idle causes itself, and drops the table when done.
RankSummary summarize_rank(int64_t rank, const TraceStore& store);
// Whether summarize_rank reads the args of slices of this name and category: record_param_comms
// ops and kernels that name a collective (for LoadOptions::keep_args_text; kernels that are
// communication only because a collective op launched them are found later, from the table).
bool has_collective_args(std::string_view name, std::string_view cat);

struct RankInput {
  int64_t rank = 0;
  const TraceStore* store = nullptr;
  // Optional: the rank's Sightline-mode table and idle causes when a report already built them
  // (both or neither); otherwise they are built here.
  const EventTable* table = nullptr;
  const IdleCauses* causes = nullptr;
};

// none: raw clocks; collectives: apply the estimated offsets; auto: apply them only when one
// exceeds `align_noise` (ranks on one host share a clock, so their offsets stay within noise).
enum class Align : uint8_t { None, Collectives, Auto };

struct CollectiveOptions {
  Align align = Align::Auto;
  TimeNs align_noise = 50'000;  // 50 µs: well above kernel-end jitter of one host's ranks
  unsigned threads = 0;         // ranks summarised in parallel; 0 = one per core
};

// An optional time in 8 bytes (INT64_MIN stands for none), so that the tens of millions of
// arrivals of a fleet stay compact (std::optional<TimeNs> takes 16).
class OptionalTime {
public:
  constexpr OptionalTime() = default;
  constexpr OptionalTime(std::nullopt_t) {}
  constexpr OptionalTime(TimeNs v) : v_(v) {}
  constexpr bool has_value() const { return v_ != kAbsent; }
  constexpr explicit operator bool() const { return has_value(); }
  constexpr TimeNs operator*() const { return v_; }
  constexpr TimeNs value_or(TimeNs otherwise) const { return has_value() ? v_ : otherwise; }
  friend constexpr bool operator==(OptionalTime, OptionalTime) = default;
  friend constexpr bool operator==(OptionalTime a, TimeNs b) { return a.has_value() && a.v_ == b; }

private:
  static constexpr TimeNs kAbsent = INT64_MIN;
  TimeNs v_ = kAbsent;
};

// 48 bytes, trivially copyable: a fleet file keeps them as they are in memory (core/fleet).
struct CollectiveArrival {
  int64_t rank = 0;
  TimeNs arrival = 0;        // kernel start (CPU call start for CPU-only ranks), job clock
  OptionalTime cpu_arrival;  // the CPU call's start, job clock
  TimeNs end = 0;
  TimeNs wait = 0;           // inside the collective before the last rank arrived
  SliceRef slice;            // the kernel (or the CPU call) in the rank's store
};
static_assert(sizeof(CollectiveArrival) == 48);

// An instance's arrivals: owned, or a read-only view into storage kept alive alongside (a
// memory-mapped fleet file), copied out on the first write. Reads as a vector does.
class ArrivalList {
public:
  using value_type = CollectiveArrival;
  using const_iterator = const CollectiveArrival*;
  using iterator = CollectiveArrival*;

  ArrivalList() = default;
  ArrivalList(std::vector<CollectiveArrival> owned) : owned_(std::move(owned)) {}
  // A view of `n` arrivals at `at`, valid while `keep` lives.
  static ArrivalList view(const CollectiveArrival* at, size_t n, std::shared_ptr<const void> keep) {
    ArrivalList a;
    a.view_ = at, a.view_size_ = n, a.keep_ = std::move(keep);
    return a;
  }

  size_t size() const { return view_ ? view_size_ : owned_.size(); }
  bool empty() const { return size() == 0; }
  const CollectiveArrival* data() const { return view_ ? view_ : owned_.data(); }
  const_iterator begin() const { return data(); }
  const_iterator end() const { return data() + size(); }
  const CollectiveArrival& operator[](size_t i) const { return data()[i]; }
  const CollectiveArrival& front() const { return data()[0]; }
  const CollectiveArrival& back() const { return data()[size() - 1]; }

  std::vector<CollectiveArrival>& owned() {
    if (view_) owned_.assign(view_, view_ + view_size_), view_ = nullptr, view_size_ = 0, keep_.reset();
    return owned_;
  }
  iterator begin() { return owned().data(); }
  iterator end() { return owned().data() + owned_.size(); }
  CollectiveArrival& operator[](size_t i) { return owned()[i]; }
  void push_back(const CollectiveArrival& a) { owned().push_back(a); }
  void reserve(size_t n) { owned().reserve(n); }
  void resize(size_t n) { owned().resize(n); }
  void clear() { owned().clear(); }

private:
  std::vector<CollectiveArrival> owned_;
  const CollectiveArrival* view_ = nullptr;
  size_t view_size_ = 0;
  std::shared_ptr<const void> keep_;
};

struct CollectiveInstance {
  std::string name;
  std::string group;
  uint64_t instance = 0;                    // 0-based within (group, name)
  ArrivalList arrivals;                     // by rank
  std::vector<int64_t> missing;             // member ranks without this instance
  int64_t last_rank = -1;
  TimeNs skew = 0;                          // last arrival - first arrival
  std::string last_cause;                   // what the last rank did just before (empty: skew 0)
};

struct StragglerRow {
  int64_t rank = 0;
  uint64_t collectives = 0;      // instances it took part in
  uint64_t late_count = 0;       // instances where it arrived last (skew > 0)
  TimeNs delay_caused = 0;       // sum, over those, of the other ranks' waits
  TimeNs wait = 0;               // its own waits
  std::optional<double> iteration_mean;  // ns, over ProfilerStep#N
  uint64_t iterations = 0;
  TimeNs compute = 0, communication = 0, idle = 0;  // GPU time (union) and idle within the GPU span
  std::string top_cause;         // cause behind most of delay_caused (empty when never late)
};

struct CollectiveAnalysis {
  std::vector<CollectiveInstance> instances;  // by first arrival
  std::vector<StragglerRow> stragglers;       // most delay caused first
  std::vector<int64_t> ranks;                 // as given
  std::vector<TimeNs> offsets;                // estimated, per rank as given (add to its clock)
  bool aligned = false;                       // offsets applied to the times above
  // Ranks whose clocks, as placed, share no moment with the others' fall into separate groups
  // (unrelated traces in one folder, or hosts whose clocks differ by more than the trace). Unless
  // alignment is off, each later group is moved to start where the first does, so that the job
  // clock reads in seconds of the run, not in days between recordings.
  std::vector<std::vector<int64_t>> clock_groups;  // ranks, by group; one group when the clocks overlap
  std::vector<TimeNs> applied;                     // per rank as given: the offset its times carry
  std::vector<bool> moved;                         // per rank as given: its group was moved
  TimeNs origin_ns = 0;                       // job clock zero: earliest rank origin (aligned)
  std::vector<std::string> notes;
};

// What the first pass of analyze_collectives takes of a rank (its straggler columns) and of each
// of its calls, so that a source can hand them over without building a RankSummary (a fleet reads
// them straight from a summary's bytes). Views are valid during the call only.
struct RankColumns {
  int64_t rank = 0;
  TimeNs origin_ns = 0, end_ns = 0;
  uint64_t iterations = 0;
  double iteration_sum = 0;  // of the lengths as doubles, in store order
  TimeNs compute = 0, communication = 0, idle = 0;  // as StragglerRow has them
  bool host_calls = false;
};
struct CallView {
  std::string_view name, group;
  const int64_t* group_ranks = nullptr;
  size_t group_rank_count = 0;
  std::optional<int64_t> seq;
  P2p p2p = P2p::None;
  std::optional<int64_t> peer;
  TimeNs start = 0, end = 0;
  OptionalTime cpu_start;
  SliceRef slice;
};
class CallSink {
public:
  // The rank's columns and its call count; then call(k, ...) for k = 0.. in order. A source may
  // start again with rank() (the sink then forgets what it was given).
  virtual void rank(const RankColumns& columns, size_t calls) = 0;
  virtual void call(size_t k, const CallView& c) = 0;

protected:
  ~CallSink() = default;
};
// The straggler columns of a summary (what first_pass hands over for it).
RankColumns rank_columns(const RankSummary& d);

// Where analyze_collectives reads its ranks: a job's summaries in memory, or a fleet's, decoded on
// demand from their serialised form so that thousands of them are never decoded at once. The
// analysis reads each rank once for its calls and its straggler row (first_pass), and visits
// again only the ranks that arrived last somewhere (for the cause), in parallel
// (`CollectiveOptions::threads`).
class SummarySource {
public:
  virtual ~SummarySource() = default;
  virtual size_t size() const = 0;
  virtual int64_t rank(size_t i) const = 0;
  // Calls `use` with rank i's summary, valid during the call only; from several threads at once.
  virtual void visit(size_t i, const std::function<void(const RankSummary&)>& use) const = 0;
  // Rank i's columns and calls to `sink`; from several threads at once. By default through visit.
  virtual void first_pass(size_t i, CallSink& sink) const;
  // As visit, where `use` reads only the summary's busy and compute intervals and idle gaps (the
  // last rank's cause): a source may hand over a summary holding just those. By default visit.
  virtual void visit_activity(size_t i, const std::function<void(const RankSummary&)>& use) const { visit(i, use); }
};

// Per-rank clock offsets (ns to add) from matched collective ends, relative to the first rank
// with collectives; ranks linked only through others are chained; unlinked ranks get 0.
CollectiveAnalysis analyze_collectives(const SummarySource& ranks, const CollectiveOptions& options = {});
CollectiveAnalysis analyze_collectives(const std::vector<const RankSummary*>& ranks, const CollectiveOptions& options = {});
// The same, summarising each rank first (in parallel, `options.threads`).
CollectiveAnalysis analyze_collectives(const std::vector<RankInput>& ranks, const CollectiveOptions& options = {});

// The `collectives`, `stragglers` and `clock_offsets` report tables.
std::vector<Table> collective_tables(const CollectiveAnalysis& analysis);

// "AllReduce" of "ncclKernel_AllReduce_RING_LL_Sum_float(...)"; the name up to '(' otherwise.
std::string collective_op_name(std::string_view kernel_name);

}  // namespace sl::analysis
