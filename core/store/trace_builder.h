// Appends events to a TraceStore. Loaders and live capture both speak this API: absolute
// nanosecond times in, rebased to the trace start when finished.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/store/trace_store.h"

namespace sl {

// Category facts the builder needs to place an event (computed once per category string).
enum CategoryFlags : uint8_t {
  kCatGpu = 1,        // runs on a GPU stream: kernel, memcpy, memset, gpu annotations, ...
  kCatKernel = 2,     // counted as a kernel
  kCatFlow = 4,       // a launch flow category (ac2g, async, async_gpu, async_cpu_to_gpu)
};
uint8_t category_flags(std::string_view cat);

class TraceBuilder {
public:
  explicit TraceBuilder(TraceStore& store);

  // Opaque pid/tid keys: `text` is the key as written; `number` is set when it is numeric.
  uint32_t process(std::string_view text, std::optional<int64_t> number);
  uint32_t thread_track(uint32_t process, std::string_view text, std::optional<int64_t> number);
  uint32_t async_track(uint32_t process, StringId cat, StringId name);
  void mark_gpu(uint32_t track, std::optional<int64_t> device, std::optional<int64_t> stream);

  void add_slice(uint32_t track, TimeNs abs_start, TimeNs dur, StringId name, StringId cat,
                 uint32_t args, std::optional<int64_t> correlation);

  // For a loader that resolves correlation ids itself (Nsight: sorted arrays of the ids searched
  // from the last one found, where a hash probe per event costs a cache miss): a new row of the store's
  // correlation table, and add_slice with such a row (or kNone). An id given here must not also
  // be given to add_slice/add_begin by value: the builder's own table would not know it.
  // Inline, as add_args_record: the Nsight loader calls them for millions of rows.
  uint32_t new_correlation(int64_t id) {
    store_.correlations.push_back({id, {}, 0, 0});
    return uint32_t(store_.correlations.size() - 1);
  }
  void add_linked_slice(uint32_t track, TimeNs abs_start, TimeNs dur, StringId name, StringId cat,
                        uint32_t args, uint32_t correlation_row) {
    see(abs_start);
    see(abs_start + dur);
    append_slice(track, abs_start, dur, name, cat, args, correlation_row);
  }
  // Args given as fields into store().args_blocks() (begin_record ... end_record): a new args row.
  uint32_t add_args_record(const ArgsRange& range) {
    store_.args_.push_back(range);
    return uint32_t(store_.args_.size() - 1);
  }
  // Room for rows known to come (a loader that knows its tables' sizes), so the columns do not
  // grow by doubling: copies, and fresh pages faulted in for each copy. Only a hint: the memory
  // is reserved, not touched. release_unused() gives back what a track's reservation left unused
  // where that is more than its rows use.
  void reserve_slices(uint32_t track, size_t rows);
  void reserve_args(size_t rows) { store_.args_.reserve(store_.args_.size() + rows); }
  void reserve_correlations(size_t rows) { store_.correlations.reserve(store_.correlations.size() + rows); }
  void release_unused(uint32_t track);
  void add_begin(uint32_t track, TimeNs abs_ts, StringId name, StringId cat, uint32_t args,
                 std::optional<int64_t> correlation, uint64_t offset);
  void add_end(uint32_t track, TimeNs abs_ts, uint64_t offset);
  // Async (`b`/`e`, legacy `S`/`F`): matched LIFO by `key` (process, category and id); the
  // slice goes on the begin's track.
  void add_async_begin(uint32_t track, uint64_t key, TimeNs abs_ts, StringId name, StringId cat,
                       uint32_t args, uint64_t offset);
  void add_async_end(uint64_t key, TimeNs abs_ts, uint64_t offset);
  void add_instant(uint32_t track, TimeNs abs_ts, StringId name, StringId cat, uint32_t args,
                   char scope);
  void add_counter(uint32_t process, std::string_view series, TimeNs abs_ts, double value);
  // Flow points (`s`, `t`, `f`), bound to slices after nesting. `key` identifies the flow
  // (category and id); `enclosing` is true for `s`, `t` and for `f` with bp "e".
  void add_flow_point(uint32_t track, uint64_t key, StringId cat, char phase, TimeNs abs_ts,
                      bool enclosing, uint64_t offset);
  // Launch flows without flow points (an Nsight report: its CUDA calls and the GPU work they
  // launched share correlation ids): finish() gives each GPU activity whose correlation has a
  // launch a flow of category `cat` from that launch, read off the correlation links. Known
  // ends, so no points to keep, sort or bind by time. finish() only: appended batches (live
  // capture) link with flow points.
  void flows_from_launches(StringId cat) { launch_flow_cat_ = cat; }

  void set_process_name(uint32_t process, StringId name) { store_.processes[process].name = name; }
  void set_process_labels(uint32_t process, StringId l) { store_.processes[process].labels = l; }
  void set_process_sort_index(uint32_t process, int64_t index);
  void set_thread_name(uint32_t track, StringId name) { store_.tracks[track].name = name; }
  void set_thread_sort_index(uint32_t track, int64_t index);

  // Matches begin/end pairs, rebases times, finalizes the store and binds flows.
  void finish();
  // An absolute time of an event the loader keeps outside the builder (Nsight's memory rows):
  // the origin finish() rebases to covers it too.
  void include_time(TimeNs abs_ts) { see(abs_ts); }

  // Live capture: folds everything added since the last call into the store, which stays
  // finished after each call (core/store/store_append.cpp). The first call may come on an empty store.
  // New slices are sorted and nested into the tails of their tracks (a batch reaching back in
  // time re-nests only from the first row it lands before), times are rebased (the whole store
  // shifts when a batch starts before the origin), flows bind as both their ends arrive, and the
  // indexes are brought up to date. Use it instead of finish(), not after it.
  void finish_appended();
  // The capture is over: flows still missing an end or a start become import issues.
  void report_open_flows();
  // After finish_appended: per track, the first row the call changed (rows before it are as
  // they were), or kNone where it added nothing; for tallies kept beside the store.
  const std::vector<uint32_t>& changed_from() const { return changed_from_; }

  // Takes in everything `later` has appended (not finished), as if its events had followed
  // this builder's in the file: how two threads parsing halves of one trace join up.
  void absorb(TraceBuilder& later);

  TraceStore& store() { return store_; }

private:
  struct PendingBegin {
    TimeNs ts;
    uint64_t order;
    StringId name, cat;
    uint32_t args;
    std::optional<int64_t> corr;
    uint64_t offset;
  };
  struct PendingEnd {
    TimeNs ts;
    uint64_t order;
    uint64_t offset;
  };
  struct PendingAsync {
    uint32_t track;
    uint64_t key;
    bool begin;
    TimeNs ts;
    uint64_t order;
    StringId name, cat;
    uint32_t args;
    uint64_t offset;
  };
  struct FlowPoint {
    uint32_t track;
    uint64_t key;
    StringId cat;
    char phase;
    bool enclosing;
    TimeNs ts;
    uint64_t order;
    uint64_t offset;
    SliceRef target;  // bound by bind_targets()
  };

  uint32_t correlation_row(int64_t id);
  void grow_correlations(size_t rows);
  static uint64_t mix_id(int64_t id) { return (uint64_t(id) * 0x9E3779B97F4A7C15ull) >> 17; }
  void see(TimeNs abs_ts) { min_ts_ = std::min(min_ts_, abs_ts); max_ts_ = std::max(max_ts_, abs_ts); }
  void append_slice(uint32_t track, TimeNs start, TimeNs dur, StringId name, StringId cat,
                    uint32_t args, uint32_t corr_row) {
    SliceColumns& c = store_.tracks[track].slices;
    c.start.push_back(start);
    c.dur.push_back(dur);
    c.name.push_back(name);
    c.cat.push_back(cat);
    c.args.push_back(args);
    c.corr.push_back(corr_row);
    ++store_.counts.slices;
  }
  void absorb_columns(TraceStore& from, const std::vector<uint32_t>& track, const std::vector<StringId>& str,
                      uint32_t args_base);
  void match_begin_end();
  void match_async();
  void rebase();
  void bind_targets();
  std::vector<uint32_t> flow_points_by_key() const;
  void bind_flows(const std::vector<uint32_t>& by_key);
  // finish_appended()'s steps (core/store/store_append.cpp).
  void rebase_appended();
  void shift_finished(TimeNs delta);
  void nest_appended(uint32_t track);
  void remap_rows(uint32_t track, uint32_t from, const std::vector<uint32_t>& new_row);
  void pair_appended_flows();
  void index_appended_flows(size_t first_new);

  TraceStore& store_;
  uint64_t order_ = 0;
  TimeNs min_ts_ = INT64_MAX;  // absolute, over every event
  TimeNs max_ts_ = INT64_MIN;
  std::unordered_map<std::string, uint32_t> process_index_;
  std::unordered_map<std::string, uint32_t> thread_index_;   // process \x1f tid
  std::map<std::tuple<uint32_t, StringId, StringId>, uint32_t> async_index_;
  struct CorrelationSlot {
    int64_t id;
    uint32_t row;  // kNone: empty
  };
  std::vector<CorrelationSlot> correlation_slots_;  // open addressing; ids inline, no indirection
  std::unordered_map<std::string, uint32_t> counter_index_;  // process \x1f series
  std::unordered_map<uint32_t, std::vector<PendingBegin>> begins_;
  std::unordered_map<uint32_t, std::vector<PendingEnd>> ends_;
  std::vector<PendingAsync> async_;
  std::vector<FlowPoint> flow_points_;
  std::optional<StringId> launch_flow_cat_;  // flows_from_launches

  // finish_appended(): how much of each track and counter series is already in the finished
  // store (the rest was added since), and each flow key's state across batches.
  struct Finished {
    uint32_t slices = 0, instants = 0;
  };
  std::vector<Finished> finished_;           // per track
  std::vector<uint32_t> finished_counters_;  // per counter series: points already finished
  std::vector<uint32_t> changed_from_;       // per track, by the last finish_appended
  struct FlowEnd {
    StringId cat;
    SliceRef target;
    uint64_t offset;
  };
  struct FlowKey {
    bool has_start = false, ended = false;
    SliceRef from;                 // the latest `s`/`t` point's slice
    uint64_t start_offset = 0;
    std::vector<FlowEnd> waiting;  // ends that came before any start
  };
  std::unordered_map<uint64_t, FlowKey> flow_keys_;
};

}  // namespace sl
