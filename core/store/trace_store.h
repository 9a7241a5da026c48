// The columnar event store: one trace, held as structs of arrays per track.
//
// Times are int64 nanoseconds relative to the trace start (`origin_ns` keeps the absolute
// start). Every slice has a place: slices that nest go on lanes by depth; a slice that partly
// overlaps another is placed in a further lane group of the same track and counted as an import
// issue. Args stay JSON text, kept compressed in blocks (core/store/args_blocks.h) until asked for.
//
// A store is filled through TraceBuilder (loaders, live capture), then `finalize()` sorts,
// nests, links and indexes. Several stores can be alive at once (diff, multi-rank).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/store/args_range.h"
#include "core/store/import_issues.h"
#include "core/store/memory_events.h"
#include "core/store/string_pool.h"
#include "core/store/track_columns.h"

namespace sl {

struct Process {
  StringId pid_text = 0;
  int64_t pid = 0;
  bool pid_is_number = false;
  StringId name = 0;      // process_name
  StringId labels = 0;    // process_labels
  int64_t sort_index = 0;
  bool has_sort_index = false;
  std::vector<uint32_t> tracks;  // in display order after finalize()
};

struct CounterSeries {
  uint32_t process = kNone;
  StringId name = 0;       // "<event name>" or "<event name>.<arg key>"
  std::vector<TimeNs> ts;  // sorted after finalize()
  std::vector<double> value;
};

struct Device {
  int64_t id = -1;
  std::string name;
  std::string properties_json;  // the deviceProperties entry as written
};

struct Iteration {
  int64_t number = 0;  // N of ProfilerStep#N
  SliceRef slice;
  TimeNs start = 0, end = 0;
};

// Trace-level facts from the top-level keys and metadata events.
struct TraceMeta {
  std::string file;
  std::string format = "kineto-json";
  uint64_t bytes = 0;  // uncompressed JSON bytes
  std::vector<Device> devices;
  std::optional<int64_t> rank, world_size;
  std::string backend;
  std::string display_time_unit;
  std::vector<std::pair<std::string, std::string>> top_level;  // every other key, raw JSON
  // (HTA) What HTA reads from the JSON text itself, noted while loading it, since the text is not
  // kept. `from_text` is false where there was no JSON text (Nsight reports, live capture).
  struct HtaText {
    bool from_text = false;
    std::optional<int64_t> rank;       // the first `"rank": N` anywhere in the text (HTA's regex)
    uint32_t first_event_args = kNone;  // args row of traceEvents[0] (its first object), if any
  } hta;
};

class ArgsBlocks;

// A GPU activity and the CPU call that launched it share a correlation id.
struct Correlation {
  int64_t id = 0;
  SliceRef launch;
  uint32_t first_activity = 0;  // into TraceStore::correlation_activities_
  uint32_t activity_count = 0;
};

struct Flow {
  StringId cat = 0;
  SliceRef from, to;
};

// Counts of what was read, by kind of event.
struct EventCounts {
  uint64_t events = 0;     // elements of traceEvents, every phase
  uint64_t slices = 0;     // X events and matched B/E and async pairs
  uint64_t instants = 0;
  uint64_t counters = 0;   // C events
  uint64_t flows = 0;      // s/t/f events
  uint64_t metadata = 0;   // M events
  uint64_t skipped = 0;    // events not stored (see issues)
};

class TraceStore {
public:
  TraceStore();
  ~TraceStore();
  TraceStore(TraceStore&&) noexcept;
  TraceStore& operator=(TraceStore&&) noexcept;

  StringPool strings;
  TraceMeta meta;
  EventCounts counts;
  ImportIssues issues;
  TimeNs origin_ns = 0;  // absolute time of the trace start (µs epoch × 1000)
  TimeNs end_ns = 0;     // latest end, relative to origin

  std::vector<Process> processes;
  std::vector<uint32_t> process_order;  // display order of `processes` after finalize()
  std::vector<Track> tracks;
  std::vector<CounterSeries> counters;
  std::vector<Flow> flows;
  std::vector<Iteration> iterations;
  std::vector<Correlation> correlations;
  MemoryEvents memory;  // allocator events (core/store/memory_events.h), sorted by time

  // --- slice access ---
  const SliceColumns& slices(uint32_t track) const { return tracks[track].slices; }
  TimeNs start(SliceRef s) const { return tracks[s.track].slices.start[s.index]; }
  TimeNs dur(SliceRef s) const { return tracks[s.track].slices.dur[s.index]; }
  TimeNs end(SliceRef s) const { return start(s) + dur(s); }
  StringId name_id(SliceRef s) const { return tracks[s.track].slices.name[s.index]; }
  std::string_view name(SliceRef s) const { return strings.view(name_id(s)); }
  std::string_view cat(SliceRef s) const { return strings.view(tracks[s.track].slices.cat[s.index]); }
  SliceRef parent(SliceRef s) const;
  uint64_t slice_count() const;
  bool is_gpu(SliceRef s) const { return tracks[s.track].kind == TrackKind::GpuStream; }

  // --- indexes (valid after finalize) ---
  // Rows of `track` whose [start, end) intersects [t0, t1), as a half-open row range to filter.
  std::pair<uint32_t, uint32_t> rows_overlapping(uint32_t track, TimeNs t0, TimeNs t1) const;
  // Deepest slice of lane group 0 on `track` containing t, or invalid.
  SliceRef slice_at(uint32_t track, TimeNs t) const;
  // The same, given `after`: the number of rows of `track` starting at or before t (callers
  // walking times in order keep it as a cursor instead of searching).
  SliceRef slice_at(uint32_t track, TimeNs t, size_t after) const;
  std::span<const SliceRef> slices_named(StringId name) const;
  SliceRef launch_of(SliceRef activity) const;
  std::span<const SliceRef> activities_of(SliceRef launch) const;
  std::optional<int64_t> correlation_id(SliceRef s) const;
  std::span<const uint32_t> flows_from(SliceRef s) const;  // rows of `flows`
  std::span<const uint32_t> flows_to(SliceRef s) const;
  uint64_t launch_link_count() const;  // GPU activities with a resolved launch
  uint64_t gpu_activity_count() const;
  uint64_t kernel_count() const;       // activities in category kernel/Kernel

  // --- args, decoded on demand ---
  // The full args object as written. The view is a per-thread copy out of a decompressed block:
  // it stays valid until the same thread has asked any store for args kArgsViews more times.
  static constexpr int kArgsViews = 8;
  std::string_view args_json(uint32_t args_row) const;
  // The text of args row `args_row` kept as it is (LoadOptions::keep_args_text): args_json then
  // reads it without a block.
  void keep_args_text(uint32_t args_row, std::string_view json) { kept_args_.emplace(args_row, json); }
  std::string_view slice_args_json(SliceRef s) const;
  // Top-level keys of an args object and each value as JSON text (strings unquoted).
  std::vector<std::pair<std::string, std::string>> decode_args(uint32_t args_row) const;

  // --- args storage: JSON text in zstd blocks (core/store/args_blocks.h) ---
  uint32_t add_args(std::string_view json);  // a new args row holding `json`
  const std::vector<ArgsRange>& args_table() const { return args_; }
  ArgsBlocks& args_blocks() { return *args_blocks_; }
  const ArgsBlocks& args_blocks() const { return *args_blocks_; }

  // The raw bytes of a trace file while it is parsed (not kept by the store).
  struct Buffer;

  // Bytes held by columns and indexes, not counting the args blocks.
  size_t store_bytes() const;

  // Every track's slice columns as one array per column: the tracks' rows back to back, in track
  // order. pack_slice_columns() moves the rows so (one column at a time: the peak is the store
  // and one column); packed_slices() is empty until then, or once a track has grown since.
  struct PackedSlices {
    std::span<const TimeNs> start, dur;
    std::span<const StringId> name, cat;
    std::span<const uint32_t> corr;
    std::span<const uint16_t> depth, lane;
  };
  void pack_slice_columns();
  std::optional<PackedSlices> packed_slices() const;

  // Sorting, nesting, correlation resolution, indexes. Call after appending. With
  // `launch_flow_cat`, each GPU activity whose correlation has a launch also gets a flow of that
  // category from the launch, indexed by endpoint (add_launch_flows).
  void finalize(std::optional<StringId> launch_flow_cat = std::nullopt);
  // Indexes `flows` by endpoint; call after appending flows (which need nesting to bind).
  void finalize_flows();

private:
  friend class TraceBuilder;
  std::vector<ArgsRange> args_;
  std::unique_ptr<ArgsBlocks> args_blocks_;
  std::unordered_map<uint32_t, std::string> kept_args_;  // by args row
  std::vector<SliceRef> correlation_activities_;
  std::vector<uint32_t> name_offsets_;  // CSR over string ids
  std::vector<SliceRef> name_refs_;
  std::vector<uint32_t> flows_by_from_, flows_by_to_;
  uint64_t launch_links_ = 0, gpu_activities_ = 0, kernels_ = 0;

  void sort_nest_and_index(std::optional<StringId> launch_flow_cat);
  void index_names();
  void link_correlations();
  void add_launch_flows(StringId cat);
  void index_launch_flows();
  void find_iterations();
  void adopt_device_tracks();
  void order_tracks();
};

// Raw bytes of a trace file being parsed (the loaders' input; args are copied out of it).
// Allocated with malloc so it can grow in place while decompressing; always followed by
// kPadding readable bytes, as simdjson requires.
// The latest end of anything in the store (slices, instants, counters), relative to its origin.
TimeNs latest_end(const TraceStore& store);

struct TraceStore::Buffer {
  static constexpr size_t kPadding = 64;
  char* data = nullptr;
  size_t size = 0;
  size_t capacity = 0;     // bytes usable before the padding
  size_t mapped_bytes = 0;  // non-zero: data is a private file mapping, not malloc'd
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();
  bool reserve(size_t bytes);  // false when out of memory
  std::string_view view() const { return {data, size}; }
};

}  // namespace sl
