#include "views/workspace.h"

#include "core/analysis/common.h"
#include "core/analysis/counters.h"
#include "core/analysis/idle_time.h"

namespace sl::views {

Workspace::~Workspace() {
  state_.cancel = true;
  if (thread_.joinable()) thread_.join();
}

std::vector<IdleGapMark> idle_gap_marks(const TraceStore& store) {
  analysis::EventTable table = analysis::build_table(store, analysis::TableOptions{});
  analysis::IdleCauses causes = analysis::idle_causes(table);
  std::vector<IdleGapMark> marks;
  marks.reserve(causes.gaps.size());
  for (const analysis::IdleGap& g : causes.gaps)
    if (g.track != kNone && g.end > g.start) marks.push_back({g.track, g.start, g.end, int(g.cause)});
  return marks;
}

// Counter rows derived from the analyses, shown under the GPU they describe: queue length per
// stream, memory-copy bandwidth per kind, memory in use per device (from `[memory]` events).
void add_derived_counters(TraceStore& store) {
  auto gpu_process = [&](int64_t device, int64_t stream) {
    uint32_t any = kNone;
    for (const Track& t : store.tracks) {
      if (t.kind != TrackKind::GpuStream) continue;
      if (any == kNone) any = t.process;
      if ((device < 0 || t.device == device) && (stream < 0 || t.stream == stream)) return t.process;
    }
    return any;
  };
  auto add = [&](uint32_t process, std::string name, auto&& points) {
    if (process == kNone || points.empty()) return;
    CounterSeries series;
    series.process = process;
    series.name = store.strings.intern(name);
    for (const auto& [ts, value] : points) series.ts.push_back(ts), series.value.push_back(value);
    store.counters.push_back(std::move(series));
  };
  analysis::EventTable table = analysis::build_table(store, analysis::TableOptions{});
  for (const auto& q : analysis::queue_length(table)) {
    std::vector<std::pair<TimeNs, double>> points;
    for (const auto& p : q.series) points.emplace_back(p.ts, double(p.length));
    add(gpu_process(-1, q.stream), "queue length, stream " + std::to_string(q.stream), points);
  }
  for (const auto& k : analysis::memory_bandwidth(table)) {
    std::vector<std::pair<TimeNs, double>> points;
    for (const auto& p : k.series) points.emplace_back(p.ts, p.gbps);
    add(gpu_process(-1, -1), k.copy_kind + " GB/s", points);
  }
  for (const auto& m : analysis::memory_in_use(store))
    if (m.device >= 0)  // host memory (device -1) is not a GPU's
      add(gpu_process(m.device, -1), "memory allocated, GPU " + std::to_string(m.device) + " (bytes)", m.allocated);
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
  LoadResult r = load_trace(path, options);
  if (!r.ok()) {
    out.error = r.error.cancelled ? "" : r.error.to_string();
    return out;
  }
  state.phase = "analysing idle time";
  out.gaps = idle_gap_marks(*r.store);
  add_derived_counters(*r.store);
  out.store = std::move(r.store);
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
  std::unique_ptr<Loaded> done;
  {
    std::lock_guard lock(mutex_);
    done = std::move(finished_);
  }
  if (!done) return false;
  if (thread_.joinable()) thread_.join();
  install(std::move(*done));
  return true;
}

void Workspace::install(Loaded loaded) {
  last_failed_ = !loaded.store;
  if (!loaded.store) {  // keep what was open; say what went wrong
    error_ = loaded.error;
    return;
  }
  timeline_.reset();
  store_ = std::move(loaded.store);
  path_ = loaded.path;
  timeline_ = std::make_unique<TimelineView>(*store_);
  timeline_->set_idle_gaps(std::move(loaded.gaps));
}

bool Workspace::open_now(const std::string& path) {
  install(load(path, state_));
  return !last_failed_;
}

}  // namespace sl::views
