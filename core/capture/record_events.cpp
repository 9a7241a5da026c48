#include "core/capture/record_events.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/text/json_writer.h"

namespace sl::capture {
namespace {

constexpr const char* kMemoryKinds[] = {"Unknown", "Pageable", "Pinned", "Device", "Array",
                                        "Managed", "Device Static", "Managed Static"};
constexpr const char* kCopyKinds[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                      "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};

const char* memory_kind(uint8_t k) { return k < std::size(kMemoryKinds) ? kMemoryKinds[k] : "Unknown"; }

std::string args_text(JsonWriter& w) {
  w.end_object();
  return w.str();
}

// Fields every GPU activity carries, in Kineto's order.
void gpu_args(JsonWriter& w, const ActivityRecord& r) {
  w.begin_object();
  w.field("device", uint64_t(r.device)).field("context", uint64_t(r.context));
  w.key("stream");
  if (r.stream == kNoStream) w.value(int64_t(-1));
  else w.value(uint64_t(r.stream));
  if (r.correlation) w.field("correlation", uint64_t(r.correlation));
}

}  // namespace

static bool is_gpu(ActivityKind k) {
  return k == ActivityKind::Kernel || k == ActivityKind::Memcpy || k == ActivityKind::Memset;
}
static bool is_api(ActivityKind k) { return k == ActivityKind::Runtime || k == ActivityKind::Driver; }
// Kinds whose `end` is a time (the others carry one instant in `start`).
static bool has_span(ActivityKind k) {
  return is_gpu(k) || is_api(k) || k == ActivityKind::Synchronization || k == ActivityKind::Overhead;
}

// One batch through a RecordConverter: its events, with the links to earlier batches.
class BatchConversion {
  using Placed = RecordConverter::Placed;

public:
  BatchConversion(RecordConverter& state, std::span<const ActivityRecord> batch) : s_(state), batch_(batch) {}

  ConvertedTrace run() {
    if (!s_.started_) choose_host_pid();
    out_.host_pid = s_.host_pid_;
    index_correlations();
    for (const ActivityRecord& r : batch_) {
      if (!times_in_range(r)) {
        ++out_.stats.invalid;
        continue;
      }
      s_.last_ = std::max({s_.last_, r.start, has_span(r.kind) ? r.end : 0});
      convert(r);
    }
    // A launch record that was invalid (never converted) links its work without a flow start.
    for (uint32_t id : chosen_here_)
      if (auto& launch = s_.launch_[id]; launch.pending) launch.pending = nullptr, launch.flow_started = true;
    s_.batch_activity_.clear();
    return std::move(out_);
  }

private:
  void choose_host_pid() {
    // Kineto writes GPU tracks under pid = device: a process whose pid equals a device id
    // (pid 1 in a container) would merge with that GPU, so move it out of the way.
    std::unordered_set<int64_t>& devices = s_.devices_;
    for (const ActivityRecord& r : batch_)
      if (is_gpu(r.kind) || r.kind == ActivityKind::Synchronization || r.kind == ActivityKind::Counter)
        devices.insert(r.device);
    int64_t pid = s_.info_.pid;
    s_.host_pid_ = devices.count(pid) ? pid + (int64_t(1) << 32) : pid;
    s_.started_ = true;
  }

  // A correlation id links one launch to its GPU work. CUPTI may report a runtime call and the
  // driver call it made with the same id: the runtime call is the launch.
  void index_correlations() {
    for (const ActivityRecord& r : batch_) {
      if (!r.correlation) continue;
      if (is_gpu(r.kind)) s_.batch_activity_.insert(r.correlation);
      if (r.kind == ActivityKind::CudaEvent) s_.event_records_[r.id] = {r.stream, r.correlation};
      if (!is_api(r.kind)) continue;
      auto [it, added] = s_.launch_.try_emplace(r.correlation);
      if (added) it->second.pending = &r, chosen_here_.push_back(r.correlation);
      else if (r.kind == ActivityKind::Runtime && it->second.pending && it->second.pending->kind == ActivityKind::Driver)
        it->second.pending = &r;
    }
  }

  int64_t rel(uint64_t t) const { return relative_ns(t, s_.info_.clock_base_ns); }

  // A time further than 2^61 ns (73 years) from the capture's clock base is a garbled record,
  // refused as the loaders refuse theirs: the store's times (relative to its earliest) then stay
  // within the ±2^62 a snapshot accepts, and no difference of two times overflows.
  bool near_base(uint64_t t) const {
    uint64_t base = s_.info_.clock_base_ns;
    return (t >= base ? t - base : base - t) <= uint64_t(1) << 61;
  }
  bool times_in_range(const ActivityRecord& r) const { return near_base(r.start) && (!has_span(r.kind) || near_base(r.end)); }
  bool valid_span(const ActivityRecord& r) {
    if (r.end >= r.start) return true;
    ++out_.stats.invalid;
    return false;
  }

  CaptureEvent& slice(int64_t pid, int64_t tid, std::string name, std::string_view cat, const ActivityRecord& r) {
    CaptureEvent& e = out_.events.emplace_back();
    e.ph = 'X';
    e.pid = pid;
    e.tid = tid;
    e.name = std::move(name);
    e.cat = cat;
    e.ts = rel(r.start);
    e.dur = int64_t(r.end - r.start);
    return e;
  }

  CaptureEvent& gpu_slice(std::string name, std::string_view cat, const ActivityRecord& r, std::string args) {
    int64_t stream = r.stream == kNoStream ? -1 : int64_t(r.stream);
    CaptureEvent& e = slice(r.device, stream, std::move(name), cat, r);
    e.gpu = true;
    e.device = r.device;
    e.stream = stream;
    e.args = std::move(args);
    if (r.correlation) e.correlation = r.correlation;
    return e;
  }

  // Placed like the slice `at` (taken by value: emplace_back may move the slice).
  void flow(char ph, int64_t pid, int64_t tid, int64_t ts, uint32_t id) {
    CaptureEvent& f = out_.events.emplace_back();
    f.ph = ph;
    f.pid = pid;
    f.tid = tid;
    f.name = "ac2g";
    f.cat = "ac2g";
    f.ts = ts;
    f.flow_id = id;
    f.bp_enclosing = ph == 'f';
  }


  void convert(const ActivityRecord& r) {
    switch (r.kind) {
      case ActivityKind::Kernel: return kernel(r);
      case ActivityKind::Memcpy: return memcpy(r);
      case ActivityKind::Memset: return memset(r);
      case ActivityKind::Runtime:
      case ActivityKind::Driver: return api(r);
      case ActivityKind::Synchronization: return sync(r);
      case ActivityKind::Marker: return marker(r);
      case ActivityKind::Overhead: return overhead(r);
      case ActivityKind::CudaEvent: return;  // only feeds Stream Wait Event args
      case ActivityKind::Counter: return counter(r);
    }
    ++out_.stats.invalid;
  }

  // The launch of a GPU activity gets the flow start; the activity the end. Work whose launch
  // is not seen yet waits for it; a launch converted in an earlier batch gets its start now.
  void finish_gpu(const CaptureEvent& e, const ActivityRecord& r) {
    if (!r.correlation) return;
    auto it = s_.launch_.find(r.correlation);
    if (it == s_.launch_.end()) return s_.unlaunched_[r.correlation].push_back({e.pid, e.tid, e.ts});
    Placed at{e.pid, e.tid, e.ts};  // `e` may move as events are added
    RecordConverter::Launch& launch = it->second;
    if (!launch.pending && !launch.flow_started) {
      flow('s', s_.host_pid_, launch.tid, launch.ts, r.correlation);
      launch.flow_started = true;
    }
    flow_end(at, r.correlation);
  }

  void flow_end(Placed at, uint32_t correlation) {
    flow('f', at.pid, at.tid, at.ts, correlation);
    ++out_.stats.flows;
  }

  void kernel(const ActivityRecord& r) {
    if (!valid_span(r)) return;
    JsonWriter w;
    gpu_args(w, r);
    w.field("registers per thread", uint64_t(r.registers));
    w.field("shared memory", uint64_t(r.static_shared) + r.dynamic_shared);
    w.key("grid").begin_array().value(r.grid[0]).value(r.grid[1]).value(r.grid[2]).end_array();
    w.key("block").begin_array().value(r.block[0]).value(r.block[1]).value(r.block[2]).end_array();
    ++out_.stats.kernels;
    finish_gpu(gpu_slice(demangle(r.name), "kernel", r, args_text(w)), r);
  }

  void memcpy(const ActivityRecord& r) {
    if (!valid_span(r)) return;
    JsonWriter w;
    gpu_args(w, r);
    w.field("bytes", r.bytes);
    // bytes per ns is GB/s (10^9 bytes per second).
    if (r.end > r.start) w.field("memory bandwidth (GB/s)", double(r.bytes) / double(r.end - r.start));
    ++out_.stats.memcpys;
    finish_gpu(gpu_slice(memcpy_name(r.copy_kind, r.src_kind, r.dst_kind), "gpu_memcpy", r, args_text(w)), r);
  }

  void memset(const ActivityRecord& r) {
    if (!valid_span(r)) return;
    JsonWriter w;
    gpu_args(w, r);
    w.field("bytes", r.bytes).field("value", uint64_t(r.value));
    if (r.end > r.start) w.field("memory bandwidth (GB/s)", double(r.bytes) / double(r.end - r.start));
    ++out_.stats.memsets;
    finish_gpu(gpu_slice(memset_name(r.dst_kind), "gpu_memset", r, args_text(w)), r);
  }

  void api(const ActivityRecord& r) {
    if (!valid_span(r)) return;
    bool runtime = r.kind == ActivityKind::Runtime;
    (runtime ? out_.stats.runtime : out_.stats.driver)++;
    JsonWriter w;
    w.begin_object().field("cbid", uint64_t(r.cbid));
    // Only the chosen launch keeps the correlation, so a reader links the GPU work to one call.
    auto it = r.correlation ? s_.launch_.find(r.correlation) : s_.launch_.end();
    bool launch = it != s_.launch_.end() && it->second.pending == &r;
    if (launch) w.field("correlation", uint64_t(r.correlation));
    else if (r.correlation) w.field("runtime correlation", uint64_t(r.correlation));
    std::string name = r.name.empty() ? (runtime ? "cuda_runtime " : "cuda_driver ") + std::to_string(r.cbid) : r.name;
    CaptureEvent& e = slice(out_.host_pid, r.tid, std::move(name), runtime ? "cuda_runtime" : "cuda_driver", r);
    e.args = args_text(w);
    if (launch) e.correlation = r.correlation;
    if (launch) launched(it->second, e.tid, e.ts, r.correlation);
  }

  // The launch is written: its flow start goes with it when its GPU work is known (in this
  // batch, or waiting from an earlier one, whose flow ends come now).
  void launched(RecordConverter::Launch& launch, int64_t tid, int64_t ts, uint32_t correlation) {
    launch.pending = nullptr;
    launch.tid = tid, launch.ts = ts;
    auto waiting = s_.unlaunched_.find(correlation);
    bool has_work = s_.batch_activity_.count(correlation) || waiting != s_.unlaunched_.end();
    if (!has_work) return;
    flow('s', s_.host_pid_, tid, ts, correlation);
    launch.flow_started = true;
    if (waiting == s_.unlaunched_.end()) return;
    for (Placed at : waiting->second) flow_end(at, correlation);
    s_.unlaunched_.erase(waiting);
  }

  void sync(const ActivityRecord& r) {
    if (!valid_span(r)) return;
    ++out_.stats.syncs;
    JsonWriter w;
    std::string_view kind = sync_name(r.sync_kind);
    w.begin_object().field("cuda_sync_kind", kind);
    w.key("stream");
    if (r.stream == kNoStream) w.value(int64_t(-1));
    else w.value(uint64_t(r.stream));
    if (r.correlation) w.field("correlation", uint64_t(r.correlation));
    w.field("device", uint64_t(r.device)).field("context", uint64_t(r.context));
    bool waits = r.sync_kind == uint8_t(SyncKind::StreamWaitEvent) || r.sync_kind == uint8_t(SyncKind::EventSynchronize);
    if (waits) {
      w.field("cuda event", r.id);
      if (auto it = s_.event_records_.find(r.id); it != s_.event_records_.end()) {
        w.field("wait_on_stream", uint64_t(it->second.stream));
        w.field("wait_on_cuda_event_record_corr_id", uint64_t(it->second.correlation));
      }
    }
    int64_t stream = r.stream == kNoStream ? -1 : int64_t(r.stream);
    CaptureEvent& e = slice(r.device, stream, std::string(kind), "cuda_sync", r);
    e.device = r.device;
    e.stream = stream;
    e.args = args_text(w);
    if (r.correlation) e.correlation = r.correlation;
  }

  // NVTX: push/pop and start/end ranges arrive as a start and an end record sharing an id;
  // marks are single instant records.
  void marker(const ActivityRecord& r) {
    if (r.flags & kMarkerInstant) return void(annotation('i', r));
    auto key = std::make_pair(r.domain, r.id);
    if (r.flags & kMarkerStart) {
      s_.open_[key] = r;
      return;
    }
    if (!(r.flags & kMarkerEnd)) return void(++out_.stats.invalid);
    auto it = s_.open_.find(key);
    if (it == s_.open_.end()) return void(++out_.stats.unmatched_markers);
    range(it->second, r.start);
    s_.open_.erase(it);
  }

  // An NVTX mark ('i') or range ('X', from its start record) on the thread that made it.
  CaptureEvent& annotation(char ph, const ActivityRecord& start) {
    CaptureEvent& e = out_.events.emplace_back();
    e.ph = ph;
    e.pid = out_.host_pid;
    e.tid = start.tid;
    e.name = start.name;
    e.cat = "user_annotation";
    e.ts = rel(start.start);
    e.args = domain_args(start.domain);
    ++out_.stats.markers;
    return e;
  }

  void range(const ActivityRecord& start, uint64_t end) {
    CaptureEvent& e = annotation('X', start);
    e.dur = end >= start.start ? int64_t(end - start.start) : 0;
  }

  static std::string domain_args(const std::string& domain) {
    if (domain.empty()) return {};
    JsonWriter w;
    w.begin_object().field("domain", domain).end_object();
    return w.str();
  }

  void overhead(const ActivityRecord& r) {
    if (!valid_span(r)) return;
    ++out_.stats.overhead;
    slice(out_.host_pid, r.tid, r.name.empty() ? "CUPTI overhead" : r.name, "overhead", r);
  }

  void counter(const ActivityRecord& r) {
    CaptureEvent& e = out_.events.emplace_back();
    e.ph = 'C';
    e.pid = r.device;
    e.name = r.name;
    e.cat = "gpu_counter";
    e.ts = rel(r.start);
    e.value = r.number;
    e.device = r.device;
    ++out_.stats.counters;
  }

public:
  // A range still open when the program stopped ends at the last time seen.
  void close_open_ranges() {
    for (auto& [key, start] : s_.open_) {
      range(start, s_.last_);
      ++out_.stats.unmatched_markers;
    }
    s_.open_.clear();
  }

  ConvertedTrace& out() { return out_; }

private:
  RecordConverter& s_;
  std::span<const ActivityRecord> batch_;
  ConvertedTrace out_;
  std::vector<uint32_t> chosen_here_;  // launches first seen in this batch
};

RecordConverter::RecordConverter(const CaptureInfo& info, std::span<const DeviceInfo> devices) : info_(info) {
  for (const DeviceInfo& d : devices) devices_.insert(d.id);
}

namespace {
void add_stats(ConvertStats& into, const ConvertStats& s) {
  into.kernels += s.kernels, into.memcpys += s.memcpys, into.memsets += s.memsets, into.runtime += s.runtime;
  into.driver += s.driver, into.syncs += s.syncs, into.markers += s.markers, into.overhead += s.overhead;
  into.counters += s.counters, into.flows += s.flows, into.unmatched_markers += s.unmatched_markers;
  into.invalid += s.invalid;
}
}  // namespace

ConvertedTrace RecordConverter::convert(std::span<const ActivityRecord> batch) {
  ConvertedTrace out = BatchConversion(*this, batch).run();
  add_stats(totals_, out.stats);
  return out;
}

void RecordConverter::close_open_ranges(ConvertedTrace& out) {
  BatchConversion closing(*this, {});
  closing.out().host_pid = host_pid_;
  closing.close_open_ranges();
  ConvertedTrace& closed = closing.out();
  add_stats(totals_, closed.stats);
  add_stats(out.stats, closed.stats);
  for (CaptureEvent& e : closed.events) out.events.push_back(std::move(e));
}

void RecordConverter::add_metadata(ConvertedTrace& out) const {
  CaptureEvent& e = out.events.emplace_back();
  e.ph = 'M';
  e.pid = host_pid_;
  e.name = "process_name";
  JsonWriter w;
  w.begin_object().field("name", info_.process_name.empty() ? "process" : info_.process_name).end_object();
  e.args = w.str();
}

ConvertedTrace convert_records(const CaptureData& data) {
  RecordConverter converter(data.info, data.devices);
  ConvertedTrace out = converter.convert(data.records);
  converter.close_open_ranges(out);
  converter.add_metadata(out);
  return out;
}


std::string memcpy_name(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind) {
  const char* kind = copy_kind < std::size(kCopyKinds) ? kCopyKinds[copy_kind] : "Unknown";
  return std::string("Memcpy ") + kind + " (" + memory_kind(src_kind) + " -> " + memory_kind(dst_kind) + ")";
}

std::string memset_name(uint8_t dst_kind) { return std::string("Memset (") + memory_kind(dst_kind) + ")"; }

std::string_view sync_name(uint8_t sync_kind) {
  switch (SyncKind(sync_kind)) {
    case SyncKind::EventSynchronize: return "Event Sync";
    case SyncKind::StreamWaitEvent: return "Stream Wait Event";
    case SyncKind::StreamSynchronize: return "Stream Sync";
    case SyncKind::ContextSynchronize: return "Context Sync";
    case SyncKind::Unknown: break;
  }
  return "Unknown Sync";
}

std::string demangle(const std::string& name) {
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !text) return name;
  std::string out(text);
  std::free(text);
  return out;
}

}  // namespace sl::capture
