#include "views/workspace.h"

#include "core/analysis/common.h"
#include "core/analysis/counters.h"
#include "core/analysis/idle_time.h"
#include "core/analysis/report.h"

namespace sl::views {

Workspace::~Workspace() {
  state_.cancel = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<IdleGapMark> idle_gap_marks(const analysis::IdleCauses& causes) {
  std::vector<IdleGapMark> marks;
  marks.reserve(causes.gaps.size());
  for (const analysis::IdleGap& g : causes.gaps)
    if (g.track != kNone && g.end > g.start) marks.push_back({g.track, g.start, g.end, int(g.cause), g.host_track, g.host_inferred, g.host_end});
  return marks;
}

// Counter rows derived from the analyses, shown under the GPU they describe: queue length per
// stream, memory-copy bandwidth per kind, memory allocated and reserved per device (§11).
void add_derived_counters(TraceStore& store, const analysis::Report& report) {
  auto gpu_process = [&](int64_t device, int64_t stream) {
    uint32_t any = kNone;
    for (const Track& t : store.tracks) {
      if (t.kind != TrackKind::GpuStream) continue;
      if (any == kNone) any = t.process;
      if ((device < 0 || t.device == device) && (stream < 0 || t.stream == stream)) return t.process;
    }
    return any;
  };
  // A process of its own for a device's memory rows (a memory snapshot has no GPU streams).
  auto memory_process = [&](const std::string& label) {
    Process p;
    p.name = store.strings.intern("Memory · " + label);
    p.pid = -1 - int64_t(store.processes.size());
    p.pid_text = store.strings.intern("");  // no process of the program: the header is the name alone
    store.processes.push_back(p);
    store.process_order.push_back(uint32_t(store.processes.size() - 1));
    return uint32_t(store.processes.size() - 1);
  };
  auto add = [&](uint32_t process, std::string name, auto&& points) {
    if (process == kNone || points.empty()) return;
    CounterSeries series;
    series.process = process;
    series.name = store.strings.intern(name);
    for (const auto& [ts, value] : points) series.ts.push_back(ts), series.value.push_back(value);
    store.counters.push_back(std::move(series));
  };
  for (const auto& q : report.queues.value_or(std::vector<analysis::QueueLengthStream>{})) {
    std::vector<std::pair<TimeNs, double>> points;
    for (const auto& p : q.series) points.emplace_back(p.ts, double(p.length));
    add(gpu_process(-1, q.stream), "queue length, stream " + std::to_string(q.stream), points);
  }
  for (const auto& k : report.bandwidth.value_or(std::vector<analysis::MemoryBandwidthKind>{})) {
    std::vector<std::pair<TimeNs, double>> points;
    for (const auto& p : k.series) points.emplace_back(p.ts, p.gbps);
    add(gpu_process(-1, -1), k.copy_kind + " GB/s", points);
  }
  // The memory row group: allocated and reserved per device, as the Memory view and `report`'s
  // memory tables read them (core/memory/), under the GPU they belong to.
  if (report.memory_analysis)
    for (const memory::DeviceMemory& d : report.memory_analysis->devices) {
      if (d.device_type == kMemoryCpu) continue;  // host memory is not a GPU's
      std::vector<std::pair<TimeNs, double>> allocated, reserved;
      for (const memory::MemoryPoint& p : d.timeline) {
        allocated.emplace_back(p.ts, double(p.allocated));
        if (d.reserved_known) reserved.emplace_back(p.ts, double(p.reserved));
      }
      uint32_t process = gpu_process(d.device_id, -1);
      if (process == kNone) process = memory_process(d.label);  // a snapshot: no GPU rows to join
      add(process, "memory allocated, " + d.label + " (bytes)", allocated);
      add(process, "memory reserved, " + d.label + " (bytes)", reserved);
    }
}

std::unique_ptr<AnalysisModel> analyse_for_views(TraceStore& store, std::vector<IdleGapMark>& gaps,
                                                 const std::function<void()>& before_changing_store) {
  auto model = build_analysis_model(store);
  gaps = model->report.causes ? idle_gap_marks(*model->report.causes) : std::vector<IdleGapMark>{};
  if (before_changing_store) before_changing_store();
  add_derived_counters(store, model->report);
  return model;
}

Workspace::Loaded Workspace::load(const std::string& path, LoadState& state) {
  LoadOptions options;
  options.cancel = &state.cancel;
  options.on_progress = [&state](const LoadProgress& p) {
    state.bytes_done = p.bytes_done;
    state.bytes_total = p.bytes_total;
    state.events = p.events;
    state.phase = p.phase;
  };
  Loaded out;
  out.path = path;
  // Through the snapshot cache: the snapshot of a trace parsed here is made while the analyses
  // run, and must be made before the derived counters change the store; it is written to disk
  // in the background while the trace is shown (a failure joins the notice when it is known).
  OpenedTrace opened = open_trace(path, options);
  LoadResult& r = opened.loaded;
  out.origin = opened.origin;
  auto note = [&out](const std::string& line) {
    if (!line.empty()) out.notice += (out.notice.empty() ? "" : "; ") + line;
  };
  for (const std::string& line : opened.notices) note(line);
  if (!r.ok()) {
    out.error = r.error.cancelled ? "" : r.error.to_string();
    return out;
  }
  state.phase = "analysing";
  out.model = analyse_for_views(*r.store, out.gaps, [&] { opened.write.wait_store_unused(); });
  state.phase = "indexing";
  out.timeline = std::make_unique<TimelineView>(*r.store);
  out.store = std::move(r.store);
  out.write = std::move(opened.write);
  return out;
}

void Workspace::open(const std::string& path, std::function<void()> wake) {
  if (loading_) return;
  if (thread_.joinable()) thread_.join();
  state_.cancel = false;
  state_.bytes_done = state_.bytes_total = state_.events = 0;
  state_.phase = "reading";
  loading_ = true;
  thread_ = std::thread([this, path, wake] {
    auto loaded = std::make_unique<Loaded>(load(path, state_));
    {
      std::lock_guard lock(mutex_);
      finished_ = std::move(loaded);
    }
    loading_ = false;
    if (wake) wake();
  });
}

bool Workspace::poll() {
  fresh_notice_.clear();
  bool written = poll_cache_writes();
  std::unique_ptr<Loaded> done;
  {
    std::lock_guard lock(mutex_);
    done = std::move(finished_);
  }
  if (!done) return written;
  if (thread_.joinable()) thread_.join();
  install(std::move(*done));
  fresh_notice_ = notice_;
  return true;
}

bool Workspace::poll_cache_writes() {
  bool noted = false;
  for (auto it = cache_writes_.begin(); it != cache_writes_.end();) {
    if (!it->finished()) {
      ++it;
      continue;
    }
    if (std::string line = it->wait(); !line.empty()) {
      notice_ += (notice_.empty() ? "" : "; ") + line;
      fresh_notice_ += (fresh_notice_.empty() ? "" : "; ") + line;
      noted = true;
    }
    it = cache_writes_.erase(it);
  }
  return noted;
}

void Workspace::install(Loaded loaded) {
  last_failed_ = !loaded.store;
  if (!loaded.store) {  // keep what was open; say what went wrong
    error_ = loaded.error;
    return;
  }
  panel_.reset();
  timeline_.reset();
  model_ = std::move(loaded.model);
  store_ = std::move(loaded.store);
  path_ = loaded.path;
  origin_ = loaded.origin;
  notice_ = std::move(loaded.notice);
  if (loaded.write.running()) cache_writes_.push_back(std::move(loaded.write));
  timeline_ = loaded.timeline ? std::move(loaded.timeline) : std::make_unique<TimelineView>(*store_);
  timeline_->set_idle_gaps(std::move(loaded.gaps));
  panel_ = std::make_unique<AnalysisPanel>(*store_, *model_, *timeline_);
}

void Workspace::install_store(std::unique_ptr<TraceStore> store, std::unique_ptr<AnalysisModel> model,
                              std::vector<IdleGapMark> gaps, const std::string& label, const TimelineViewState* keep) {
  panel_.reset();
  timeline_.reset();
  model_ = std::move(model);
  gaps_ = std::move(gaps);
  store_ = std::move(store);
  path_ = label;
  origin_ = TraceOrigin::Source;
  notice_.clear();
  last_failed_ = false;
  timeline_ = std::make_unique<TimelineView>(*store_);
  if (keep) timeline_->restore_state(*keep);
  timeline_->set_idle_gaps(gaps_);
  if (model_) panel_ = std::make_unique<AnalysisPanel>(*store_, *model_, *timeline_);
}

void Workspace::reshow_store(const TimelineViewState& keep, std::unique_ptr<AnalysisModel> model,
                             std::vector<IdleGapMark> gaps) {
  if (model) model_ = std::move(model), gaps_ = std::move(gaps);
  install_store(std::move(store_), std::move(model_), gaps_, path_, &keep);
}

bool Workspace::open_now(const std::string& path) {
  install(load(path, state_));
  return !last_failed_;
}

}  // namespace sl::views
