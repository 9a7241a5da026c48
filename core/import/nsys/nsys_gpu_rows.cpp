// The Nsight loader's GPU rows: kernels, memcpy, memset, syncs, graphs and GPU metrics, on the
// streams of their devices, with the GPU tracks and the correlations to the API calls.
#include "core/import/nsys/nsys_loader_class.h"

#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/capture/record_events.h"

namespace sl::nsys_detail {
namespace {

// CUPTI's "no stream" (context-wide synchronisation) and "no event".
constexpr int64_t kNoId = 0xFFFFFFFF;

// Sums of numbers read from an untrusted file: wrap instead of overflowing (undefined behaviour).
int64_t wrapping_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }

}  // namespace

// ---------------------------------------------------------------- placement

uint32_t NsysLoader::device_process(int64_t device) {
  auto it = device_processes_.find(device);
  if (it != device_processes_.end()) return it->second;
  uint32_t p = builder_->process(std::to_string(device), device);
  std::string label = "GPU " + std::to_string(device);
  auto name = device_names_.find(device);
  builder_->set_process_name(p, store_->strings.intern(name != device_names_.end() && !name->second.empty()
                                                           ? name->second : label));
  builder_->set_process_labels(p, store_->strings.intern(label));
  builder_->set_process_sort_index(p, wrapping_add(5000000, device));  // after the host processes, as Kineto sorts
  device_processes_[device] = p;
  return p;
}

// CUPTI numbers streams per process (each process's first streams get the same ids), so two
// processes sharing a GPU would put their work on one "stream 7" row. A stream belongs to a process
// and context: the first owner keeps the plain track ("stream 7", as Kineto names it); another owner
// gets a track of its own, and then both tracks name their owner ("stream 7 (pid 4242, context 1)").
uint32_t NsysLoader::owned_stream_track(const GpuRow& row) {
  uint32_t track = stream_track(row.device, row.stream);
  if (stream_owners_.size() <= track) stream_owners_.resize(track + 1);
  StreamOwner& owner = stream_owners_[track];
  if (!owner.set) owner = {row.global_pid, row.context, true};
  if (owner.global_pid == row.global_pid && owner.context == row.context) return track;
  auto [it, added] = shared_streams_.try_emplace({track, row.global_pid, row.context}, 0);
  if (!added) return it->second;
  std::string name = stream_owner_name(row.stream, row.global_pid, row.context);
  it->second = builder_->thread_track(device_process(row.device), std::to_string(row.stream) + " " + name, row.stream);
  builder_->mark_gpu(it->second, row.device, row.stream);
  builder_->set_thread_name(it->second, store_->strings.intern(name));
  builder_->set_thread_sort_index(it->second, row.stream);
  builder_->set_thread_name(track, store_->strings.intern(stream_owner_name(row.stream, owner.global_pid, owner.context)));
  return it->second;
}

std::string NsysLoader::stream_owner_name(int64_t stream, int64_t global_pid, int64_t context) const {
  auto info = process_info_.find(global_pid);
  int64_t pid = info != process_info_.end() ? info->second.pid : int64_t((uint64_t(global_pid) >> 24) & 0xFFFFFF);
  return (stream >= 0 ? "stream " + std::to_string(stream) : std::string("context-wide")) + " (pid " +
         std::to_string(pid) + ", context " + std::to_string(context) + ")";
}

// Streams and contexts as GPU tracks under their device: a device used through more than one CUDA
// context (several processes, or one process with several contexts) shows each context's streams
// together, ordered by context, then stream (the context-wide track first), each named with its
// context: "stream 3 (context 2)", "context-wide (context 2)". A track already named by its owner
// (a stream number two owners share: "stream 7 (pid P, context C)") keeps that name. A device with
// one context (every corpus report) keeps Kineto's names and order: "stream 7", sorted by stream.
void NsysLoader::group_streams_by_context() {
  struct Stream {
    uint32_t track;
    int64_t context;
  };
  std::map<int64_t, std::vector<Stream>> by_device;
  std::unordered_set<uint32_t> owner_named;
  for (const auto& [owner, track] : shared_streams_) {
    owner_named.insert(std::get<0>(owner));
    owner_named.insert(track);
    by_device[store_->tracks[track].device].push_back({track, std::get<2>(owner)});
  }
  for (auto [key, track] : stream_tracks_) by_device[store_->tracks[track].device].push_back({track, stream_owners_[track].context});
  for (const auto& [device, streams] : by_device) {
    int64_t first = streams.front().context;
    if (std::all_of(streams.begin(), streams.end(), [&](const Stream& s) { return s.context == first; })) continue;
    for (auto [track, context] : streams) {
      int64_t stream = store_->tracks[track].stream;
      builder_->set_thread_sort_index(track, wrapping_add(int64_t(uint64_t(context) << 32), stream));
      if (owner_named.count(track)) continue;
      std::string name = stream >= 0 ? "stream " + std::to_string(stream) : std::string("context-wide");
      builder_->set_thread_name(track, store_->strings.intern(name + " (context " + std::to_string(context) + ")"));
    }
  }
}

// Correlation spaces are numbered by the processes' first rows: the process of the first GPU
// activity of each GPU table first (read here, one row each), so that it keeps its ids whatever
// process calls CUDA first; then each process as its first API call or GPU activity comes.
void NsysLoader::seed_correlation_spaces() {
  for (const char* table : kGpuTables) {
    if (!has_column(table, "correlationId")) continue;
    Statement first(db_, select(table, {"globalPid"}) + " WHERE correlationId IS NOT NULL LIMIT 1");
    if (first.prepared() && first.step() == SQLITE_ROW) correlation_key(first.opt(0).value_or(0), 0);
  }
}

// ---------------------------------------------------------------- rows

namespace {

// A GPU activity's stream id, -1 when it has none.
int64_t stream_or_none(const std::optional<int64_t>& stream) {
  return !stream || *stream == kNoId || *stream < 0 ? -1 : *stream;
}

template <class Out>
void gpu_fields(Out& out, int64_t device, int64_t context, int64_t stream, const std::optional<int64_t>& correlation) {
  out.number(kArgDevice, device);
  out.number(kArgContext, context);
  out.number(kArgStream, stream);
  if (correlation) out.number(kArgCorrelation, *correlation);
}

// A kernel's args, Kineto's fields and order (gpu_args, then the launch's shape), from its row
// (kKernelColumns) alone: written on a decoding thread (prepare_args) or the loading one.
template <class Source, class Out>
void kernel_args(const Source& s, Out& out) {
  // i64() of a NULL is 0 on either source (as sqlite3_column_int64 gives).
  auto n = [&](int c) { return s.i64(c); };
  gpu_fields(out, n(2), n(3), stream_or_none(s.opt(4)), s.opt(5));
  out.number(kArgRegistersPerThread, n(16));
  out.number(kArgSharedMemory, wrapping_add(n(17), n(18)));
  out.triple(kArgGrid, n(10), n(11), n(12));
  out.triple(kArgBlock, n(13), n(14), n(15));
  out.number(kArgStaticSharedMemory, n(17));
  out.number(kArgDynamicSharedMemory, n(18));
  out.number(kArgLocalMemoryPerThread, n(19));
  out.number(kArgLocalMemoryTotal, n(20));
  for (auto [column, key] : {std::pair{21, kArgSharedMemoryExecuted}, {22, kArgGridId}, {23, kArgGraphNodeId},
                             {24, kArgLaunchType}})
    if (!s.null(column)) out.number(key, n(column));
}
constexpr size_t kKernelArgsBytes = 14 * ArgsRecordWriter::kMaxIntBytes + 2 * ArgsRecordWriter::kMaxTripleBytes;

// Kernels of one launch shape: every column of kernel_args the same, and the same present, but
// the correlation and grid ids (columns 5 and 22, which only their presence must share).
// Branch-free: the differences of every value and presence byte compared, or'ed together.
bool same_kernel_shape(const int64_t* a, const uint8_t* a_present, const int64_t* b, const uint8_t* b_present) {
  uint64_t differ = 0;
  for (int c : {2, 3, 4, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24}) differ |= uint64_t(a[c] ^ b[c]);
  auto bytes8 = [](const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  // Presence of columns 2-5 (and 6-9: the process and names, alike in practice) and 10-24.
  differ |= bytes8(a_present + 2) ^ bytes8(b_present + 2);
  differ |= bytes8(a_present + 10) ^ bytes8(b_present + 10);
  differ |= bytes8(a_present + 17) ^ bytes8(b_present + 17);
  return differ == 0;
}
// A few fields of a kernel's shape, mixed: the slot of its shape in prepare_kernel_args's table.
size_t kernel_shape_slot(const int64_t* v, int bits) {
  uint64_t h = uint64_t(v[10]) * 0x9E3779B97F4A7C15ull + uint64_t(v[11]) * 0xC2B2AE3D27D4EB4Full +
               uint64_t(v[13]) * 0x165667B19E3779F9ull + uint64_t(v[16]) * 0x27D4EB2F165667C5ull +
               uint64_t(v[18]) * 0x94D049BB133111EBull + uint64_t(v[4]) * 0xBF58476D1CE4E5B9ull +
               uint64_t(v[23]) * 0xD6E8FEB86659FD93ull;
  return size_t((h ^ h >> 29) * 0x9E3779B97F4A7C15ull >> (64 - bits));
}

}  // namespace

// Columns 0-6 of every GPU query: start, end, deviceId, contextId, streamId, correlationId, globalPid.
template <class Source>
bool NsysLoader::gpu_row(const Source& s, GpuRow& row) {
  ++store_->counts.events;
  bool open;
  if (!time_span(s, 0, row.start, row.dur, open)) return false;
  if (open) store_->issues.add_count(IssueKind::MissingField, 1);
  row.device = s.opt(2).value_or(0);
  row.context = s.opt(3).value_or(0);
  row.stream = stream_or_none(s.opt(4));
  row.correlation = s.opt(5);
  row.global_pid = s.opt(6).value_or(0);
  return true;
}

// The fields every Kineto GPU activity carries, in Kineto's order.
void NsysLoader::gpu_args(const GpuRow& row) {
  args_->begin();
  gpu_fields(*args_, row.device, row.context, row.stream, row.correlation);
}

void NsysLoader::add_gpu(const GpuRow& row, StringId name, StringId cat, uint32_t args) {
  uint32_t track = owned_stream_track(row);
  if (cat != cat_sync_ && !has_gpu_work(track)) {
    if (gpu_work_tracks_.size() <= track) gpu_work_tracks_.resize(size_t(track) + 1);
    gpu_work_tracks_[track] = true;
  }
  if (!row.correlation) return builder_->add_linked_slice(track, row.start, row.dur, name, cat, args, kNone);
  int64_t key = correlation_key(row.global_pid, *row.correlation);
  const SlicePlace* launch = launches_.find(key);
  if (!launch) return builder_->add_linked_slice(track, row.start, row.dur, name, cat, args, unlaunched_correlation(key));
  builder_->add_linked_slice(track, row.start, row.dur, name, cat, args, launched_correlation(key, *launch));
  store_->counts.flows += 2;  // its flow is made from the link (TraceBuilder::flows_from_launches)
}

bool NsysLoader::read_kernels() {
  const char* table = "CUPTI_ACTIVITY_KIND_KERNEL";
  if (!require(table, {"start", "end"})) return true;
  auto encode = [](const auto& s, auto& out) { kernel_args(s, out); };
  return scan_direct(table, kKernelColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    // Kineto shows demangled names; the short and mangled ones are fallbacks.
    std::optional<int64_t> demangled = s.opt(7), short_name = demangled ? demangled : s.opt(8);
    StringId name = string_id(short_name ? short_name : s.opt(9));
    if (name == 0) name = store_->strings.intern("<unnamed kernel>");
    add_gpu(row, name, cat_kernel_, row_args<kKernelArgsBytes>(s, encode));
  }, prepare_kernel_args());
}

// A kernel's args on its decoding thread. Kernels of one launch shape (same_kernel_shape: device,
// stream, grid, block, registers, shared and local memory, graph node, launch type) have the
// same args but for the correlation and grid ids, and a run repeats a few hundred shapes: a
// kernel whose shape an earlier kernel of the batch had is written as a repeat of that kernel's
// record with the two ids (row_args, ArgsBlocks::append_repeat): ~12 bytes where the record in
// full takes ~45, and no encoding of the 14 other fields. The text is the same either way.
// Shapes are remembered in a small table by a hash of a few fields, the last of each slot kept.
std::function<void(nsys::RowBatch&)> NsysLoader::prepare_kernel_args() const {
  return [this](nsys::RowBatch& b) {
    constexpr size_t N = std::size(kKernelColumns);
    constexpr int kSlotBits = 6;
    struct Shape {
      uint32_t row = UINT32_MAX;  // the last kernel of this slot written in full
      uint32_t text = 0;
    };
    std::array<Shape, size_t(1) << kSlotBits> shapes{};
    size_t rows = b.rows();
    if (b.prepared.size() < rows * kKernelArgsBytes) b.prepared.resize(rows * kKernelArgsBytes);
    b.prepared_rows.resize(rows);
    size_t used = 0;
    for (size_t i = 0; i < rows; ++i) {
      const int64_t* v = &b.values[i * N];
      const uint8_t* p = &b.present[i * N];
      Shape& shape = shapes[kernel_shape_slot(v, kSlotBits)];
      ArgsText::Fields fields(*args_, b.prepared.data() + used);
      if (shape.row != UINT32_MAX && same_kernel_shape(v, p, &b.values[shape.row * N], &b.present[shape.row * N])) {
        const int64_t* base = &b.values[shape.row * N];
        int64_t text = shape.text;
        uint32_t replaced = 0;
        for (auto [column, key] : {std::pair{5, kArgCorrelation}, {22, kArgGridId}}) {
          if (!p[column]) continue;
          fields.number(key, v[column]);
          text += int64_t(ArgsRecordWriter::decimal_size(v[column])) - ArgsRecordWriter::decimal_size(base[column]);
          ++replaced;
        }
        used += fields.writer().bytes();
        b.prepared_rows[i] = {uint32_t(used), replaced, uint32_t(text), shape.row};
        continue;
      }
      kernel_args(nsys::BatchRow{v, p}, fields);
      const ArgsRecordWriter& w = fields.writer();
      used += w.bytes();
      b.prepared_rows[i] = {uint32_t(used), w.fields(), uint32_t(w.text_size())};
      shape = {uint32_t(i), uint32_t(w.text_size())};
    }
  };
}

namespace {

// nsys numbers memory kinds from 0 = Pageable (ENUM_CUDA_MEM_KIND, 7 = Unknown); CUPTI, whose
// names record_events.h writes, from 0 = Unknown.
uint8_t cupti_memory_kind(std::optional<int64_t> nsys_kind) {
  return nsys_kind && *nsys_kind >= 0 && *nsys_kind <= 6 ? uint8_t(*nsys_kind + 1) : 0;
}

}  // namespace

bool NsysLoader::read_memcpy() {
  const char* table = "CUPTI_ACTIVITY_KIND_MEMCPY";
  if (!require(table, {"start", "end"})) return true;
  std::unordered_map<uint32_t, StringId> names;
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "bytes", "copyKind", "srcKind", "dstKind", "graphNodeId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    // ENUM_CUDA_MEMCPY_OPER numbers copy kinds as CUPTI does (1 HtoD, 2 DtoH, ... 10 PtoP).
    int64_t kind = s.opt(8).value_or(0);
    uint8_t copy = kind >= 0 && kind <= 10 ? uint8_t(kind) : 0;
    uint8_t src = cupti_memory_kind(s.opt(9)), dst = cupti_memory_kind(s.opt(10));
    auto [it, added] = names.try_emplace(uint32_t(copy) << 16 | uint32_t(src) << 8 | dst, 0);
    if (added) it->second = store_->strings.intern(capture::memcpy_name(copy, src, dst));
    int64_t bytes = s.opt(7).value_or(0);
    gpu_args(row);
    args_->number(kArgBytes, bytes);
    // bytes per ns is GB/s (10^9 bytes per second).
    if (row.dur > 0) args_->real(kArgMemoryBandwidth, double(bytes) / double(row.dur));
    if (!s.null(11)) args_->number(kArgGraphNodeId, s.i64(11));
    add_gpu(row, it->second, cat_memcpy_, args_->end());
  });
}

bool NsysLoader::read_memset() {
  const char* table = "CUPTI_ACTIVITY_KIND_MEMSET";
  if (!require(table, {"start", "end"})) return true;
  std::unordered_map<uint8_t, StringId> names;
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "bytes", "value", "memKind", "graphNodeId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    uint8_t kind = cupti_memory_kind(s.opt(9));
    auto [it, added] = names.try_emplace(kind, 0);
    if (added) it->second = store_->strings.intern(capture::memset_name(kind));
    int64_t bytes = s.opt(7).value_or(0);
    gpu_args(row);
    args_->number(kArgBytes, bytes);
    args_->number(kArgValue, s.opt(8).value_or(0));
    if (row.dur > 0) args_->real(kArgMemoryBandwidth, double(bytes) / double(row.dur));
    if (!s.null(10)) args_->number(kArgGraphNodeId, s.i64(10));
    add_gpu(row, it->second, cat_memset_, args_->end());
  });
}

namespace {

// The kind of a synchronisation, by the API call that made it when known. The stored syncType
// does not follow ENUM_CUPTI_SYNC_TYPE's labels: in both corpus versions (2024.6, 2025.1)
// cudaStreamSynchronize gives 2 (labelled "Stream wait sync") and cudaDeviceSynchronize 4; so
// the number is only the fallback, read as 1 event, 2 stream, 3 stream-wait-event, 4 context.
std::string_view sync_kind(std::string_view api, int64_t type) {
  if (api.find("StreamWaitEvent") != std::string_view::npos) return "Stream Wait Event";
  if (api.find("StreamSynchronize") != std::string_view::npos) return "Stream Sync";
  if (api.find("EventSynchronize") != std::string_view::npos) return "Event Sync";
  if (api.find("DeviceSynchronize") != std::string_view::npos || api.find("CtxSynchronize") != std::string_view::npos)
    return "Context Sync";
  switch (type) {
    case 1: return "Event Sync";
    case 2: return "Stream Sync";
    case 3: return "Stream Wait Event";
    case 4: return "Context Sync";
    default: return "Unknown Sync";
  }
}

}  // namespace

bool NsysLoader::read_sync() {
  const char* table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
  if (!require(table, {"start", "end"})) return true;
  // 2025.1 moved the old column to deprecatedSyncType and added syncType; 2024.6 has syncType only.
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "syncType", "deprecatedSyncType", "eventId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    std::string_view api;
    if (row.correlation) {
      if (const SlicePlace* launch = launches_.find(correlation_key(row.global_pid, *row.correlation)))
        api = store_->strings.view(store_->tracks[launch->track].slices.name[launch->row]);
    }
    std::string_view kind = sync_kind(api, s.opt(7).value_or(s.opt(8).value_or(0)));
    args_->begin();
    args_->text(kArgCudaSyncKind, kind);
    args_->number(kArgStream, row.stream);
    if (row.correlation) args_->number(kArgCorrelation, *row.correlation);
    args_->number(kArgDevice, row.device);
    args_->number(kArgContext, row.context);
    if (!s.null(9) && s.i64(9) != kNoId) args_->number(kArgCudaEvent, s.i64(9));
    add_gpu(row, store_->strings.intern(kind), cat_sync_, args_->end());
  });
}

// Whole-graph activity (nsys --cuda-graph-trace=graph): one slice per graph launch.
bool NsysLoader::read_graphs() {
  const char* table = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
  if (!require(table, {"start", "end"})) return true;
  static constexpr const char* kColumns[] = {"start", "end", "deviceId", "contextId", "streamId", "correlationId", "globalPid",
                                   "graphId", "graphExecId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    GpuRow row;
    if (!gpu_row(s, row)) return;
    gpu_args(row);
    if (!s.null(7)) args_->number(kArgGraphId, s.i64(7));
    if (!s.null(8)) args_->number(kArgGraphExecId, s.i64(8));
    std::string name = "CUDA graph " + (s.null(7) ? std::string("?") : std::to_string(s.i64(7)));
    add_gpu(row, store_->strings.intern(name), cat_graph_, args_->end());
  });
}

// GPU metrics sampling (nsys --gpu-metrics-devices): one counter series per metric, in a
// process per metric set (typeId), named by TARGET_INFO_GPU_METRICS.
bool NsysLoader::read_gpu_metrics() {
  const char* table = "GPU_METRICS";
  if (!require(table, {"timestamp", "metricId", "value"})) return true;
  std::unordered_map<uint64_t, std::string> metric_names;  // typeId << 32 ^ metricId → name
  std::unordered_map<int64_t, std::string> type_names;
  if (require("TARGET_INFO_GPU_METRICS", {"metricId", "metricName"})) {
    std::string sql = select("TARGET_INFO_GPU_METRICS", {"typeId", "metricId", "metricName", "typeName"});
    bool ok = scan("TARGET_INFO_GPU_METRICS", sql, [&](const Statement& s) {
      int64_t type = s.opt(0).value_or(0);
      metric_names[uint64_t(type) << 32 ^ uint64_t(s.i64(1))] = std::string(s.text(2));
      if (!s.null(3)) type_names[type] = std::string(s.text(3));
      --rows_;
    });
    if (!ok) return false;
  }
  std::unordered_map<int64_t, uint32_t> processes;
  std::unordered_map<uint64_t, std::string> fallback_names;
  static constexpr const char* kColumns[] = {"timestamp", "typeId", "metricId", "value"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    ++store_->counts.events;
    TimeNs ts;
    if (s.null(0) || s.null(2)) return skip_row(IssueKind::MissingField);
    if (!absolute(s.i64(0), ts)) return;
    int64_t type = s.opt(1).value_or(0);
    auto [p, added] = processes.try_emplace(type, 0);
    if (added) {
      std::string key = "gpu metrics " + std::to_string(type);
      p->second = builder_->process(key, std::nullopt);
      auto name = type_names.find(type);
      builder_->set_process_name(p->second, store_->strings.intern(name != type_names.end() ? "GPU metrics: " + name->second
                                                                                            : key));
      builder_->set_process_sort_index(p->second, wrapping_add(6000000, type));
    }
    uint64_t metric = uint64_t(type) << 32 ^ uint64_t(s.i64(2));
    auto name = metric_names.find(metric);
    if (name == metric_names.end()) {
      name = fallback_names.try_emplace(metric, "metric " + std::to_string(s.i64(2))).first;
    }
    ++store_->counts.counters;
    builder_->add_counter(p->second, name->second, ts, s.f64(3));
  });
}

}  // namespace sl::nsys_detail

namespace sl::nsys_detail {

namespace {

// ENUM_CUDA_MEM_KIND: 0 pageable and 1 pinned are host memory; device, array, managed and their
// static kinds (2..6) live on the GPU; 7 unknown is taken as the GPU's (what --cuda-memory-usage
// tracks is device allocations).
bool host_memory_kind(int64_t kind) { return kind == 0 || kind == 1; }

}  // namespace

// CUDA_GPU_MEMORY_USAGE_EVENTS (nsys --cuda-memory-usage=true): each allocation and free as a
// row of the memory table (analyses.md §11), on the thread of the runtime call that made it (by
// correlation id), so its allocating context is that call's enclosing range. Nsight writes no
// totals: allocated is the running sum of the rows' bytes.
bool NsysLoader::read_memory_usage() {
  const char* table = "CUDA_GPU_MEMORY_USAGE_EVENTS";
  if (!require(table, {"start", "bytes", "memoryOperationType"})) return true;
  static constexpr const char* kColumns[] = {"start", "globalPid", "deviceId", "address", "bytes", "memKind",
                                             "memoryOperationType", "streamId", "correlationId"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    ++store_->counts.events;
    std::optional<int64_t> start = s.opt(0);
    MemoryEvents::Row row;
    if (!start) return skip_row(IssueKind::MissingField);
    if (!absolute(*start, row.ts)) return;
    int64_t operation = s.opt(6).value_or(-1);
    if (operation != 0 && operation != 1) return skip_row(IssueKind::IllTypedField);
    bool clamped = false;
    int64_t bytes = std::abs(MemoryEvents::clamp_bytes(s.opt(4).value_or(0), clamped));
    if (clamped) store_->issues.add_count(IssueKind::IllTypedField, 1);
    row.action = operation == 0 ? MemoryAction::Alloc : MemoryAction::Free;
    row.bytes = operation == 0 ? bytes : -bytes;
    row.addr = uint64_t(s.opt(3).value_or(0));
    bool host = host_memory_kind(s.opt(5).value_or(2));
    row.device_type = host ? kMemoryCpu : kMemoryCuda;
    row.device_id = host ? -1 : int32_t(std::clamp<int64_t>(s.opt(2).value_or(0), 0, INT32_MAX));
    row.stream = stream_or_none(s.opt(7));
    if (std::optional<int64_t> correlation = s.opt(8))
      if (const SlicePlace* call = launches_.find(correlation_key(s.opt(1).value_or(0), *correlation))) row.track = call->track;
    builder_->include_time(row.ts);
    memory_rows_.push_back(row);
  });
}

void NsysLoader::add_memory_rows() {
  MemoryEvents& m = store_->memory;
  for (MemoryEvents::Row& row : memory_rows_) {
    row.ts -= store_->origin_ns;
    m.append(row);
  }
  std::vector<MemoryEvents::Row>().swap(memory_rows_);
  m.sort_by_time();
}

}  // namespace sl::nsys_detail
