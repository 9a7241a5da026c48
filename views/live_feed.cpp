#include "views/live_feed.h"

#include <chrono>

#include "core/capture/capture_store.h"
#include "core/capture/chrome_trace.h"
#include "views/workspace.h"

namespace sl::views {
namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

uint64_t count_kernels(const TraceStore& store) {
  StringId kernel = store.strings.find("kernel");
  if (kernel == StringPool::kNotFound) return 0;
  uint64_t n = 0;
  for (const Track& t : store.tracks)
    if (t.kind == TrackKind::GpuStream)
      for (StringId c : t.slices.cat) n += c == kernel;
  return n;
}

LiveFeed::LiveFeed(std::function<void()> wake) : server_(wake), wake_(std::move(wake)) {
  thread_ = std::thread([this] { work(); });
}

LiveFeed::~LiveFeed() {
  stop_ = true;
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  server_.stop();
}

void LiveFeed::set_analyses(bool on) {
  analyses_ = on;
  cv_.notify_all();
}

std::unique_ptr<LiveSnapshot> LiveFeed::poll() {
  std::lock_guard lock(mutex_);
  return std::move(ready_);
}

std::string LiveFeed::kineto_json() const {
  capture::CaptureData data;
  uint64_t session = 0;
  server_.sync(data, session);
  return capture::chrome_trace_json(data, capture::convert_records(data));
}

void LiveFeed::work() {
  capture::CaptureData mirror;
  uint64_t session = 0, built_session = 0, built_generation = 0;
  bool built_final = false, built_model = false;
  double last_start = -1;
  while (!stop_) {
    {
      std::unique_lock lock(mutex_);
      cv_.wait_for(lock, std::chrono::milliseconds(50));
    }
    if (stop_) break;
    capture::LiveStatus st = server_.status();
    if (!st.has_capture) continue;
    bool fresh = st.session != built_session, want_analyses = analyses_;
    bool final = st.finished();
    bool newer = fresh || st.generation != built_generation || (final && !built_final);
    bool asked = want_analyses && !built_model;  // the button was pressed since the last build
    if (!newer && !asked) continue;
    // A new capture and a press of the button go at once; growth waits for the throttle.
    if (!fresh && !asked && !throttle_.due(now_s(), last_start, last_build_s_)) continue;
    last_start = now_s();
    auto snap = std::make_unique<LiveSnapshot>();
    snap->generation = server_.sync(mirror, session);
    snap->session = session;
    snap->final = final;
    snap->records = mirror.records.size();
    snap->store = capture::build_store(mirror);
    snap->kernels = count_kernels(*snap->store);
    if (want_analyses || final) {
      snap->model = analyse_for_views(*snap->store, snap->gaps);
    }
    snap->build_s = now_s() - last_start;
    last_build_s_ = snap->build_s;
    built_session = session, built_generation = snap->generation, built_final = final;
    built_model = snap->model != nullptr;
    {
      std::lock_guard lock(mutex_);
      ready_ = std::move(snap);  // an older one not yet taken is dropped: the UI wants the newest
    }
    if (wake_) wake_();
  }
}

}  // namespace sl::views
