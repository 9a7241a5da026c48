#include "views/live_feed.h"

#include <chrono>

#include "core/capture/chrome_trace.h"

namespace sl::views {

double live_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t count_kernels(const TraceStore& store) {
  StringId kernel = store.strings.find("kernel");
  if (kernel == StringPool::kNotFound) return 0;
  uint64_t n = 0;
  for (const Track& t : store.tracks)
    if (t.kind == TrackKind::GpuStream)
      for (StringId c : t.slices.cat) n += c == kernel;
  return n;
}

std::unique_ptr<TraceStore> LiveStore::apply(const LiveBatch& batch) {
  std::unique_ptr<TraceStore> fresh;
  if (batch.fresh || !appender_) {
    fresh = std::make_unique<TraceStore>();
    store_ = fresh.get();
    appender_ = std::make_unique<capture::CaptureAppender>(*store_, batch.info, batch.devices);
    session_ = batch.session;
    records_ = kernels_ = 0;
    gpu_busy_ns_ = 0;
    gaps_.clear();
  }
  appender_->append(batch.events);
  count_gaps();
  records_ += batch.records;
  kernels_ += batch.kernels;
  for (const capture::CaptureEvent& e : batch.events.events)
    if (e.ph == 'X' && e.gpu) gpu_busy_ns_ += e.dur;
  return fresh;
}

// A gap is a row's start past the latest end of the rows before it (max_end_prefix).
void LiveStore::count_gaps() {
  const std::vector<uint32_t>& changed = appender_->changed_from();
  gaps_.resize(store_->tracks.size());
  for (uint32_t t = 0; t < store_->tracks.size(); ++t) {
    const Track& track = store_->tracks[t];
    if (track.kind != TrackKind::GpuStream || changed[t] == kNone) continue;
    StreamGaps& g = gaps_[t];
    if (changed[t] < g.rows) g = {};  // the batch reached back: its rows before are renumbered
    for (uint32_t r = std::max<uint32_t>(g.rows, 1); r < track.slices.size(); ++r) {
      TimeNs gap = track.slices.start[r] - track.max_end_prefix[r - 1];
      if (gap > 0) g.idle += gap, ++g.gaps;
    }
    g.rows = uint32_t(track.slices.size());
  }
}

TimeNs LiveStore::gpu_idle_ns() const {
  TimeNs idle = 0;
  for (const StreamGaps& g : gaps_) idle += g.idle;
  return idle;
}

uint64_t LiveStore::idle_gaps() const {
  uint64_t n = 0;
  for (const StreamGaps& g : gaps_) n += g.gaps;
  return n;
}

void LiveStore::end() {
  if (appender_) appender_->end();
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

std::vector<LiveBatch> LiveFeed::poll() {
  std::lock_guard lock(mutex_);
  return std::move(ready_);
}

std::string LiveFeed::kineto_json() const {
  capture::CaptureData data;
  uint64_t session = 0;
  server_.sync(data, session);
  return capture::chrome_trace_json(data, capture::convert_records(data));
}

// Converts what arrived, every 20 ms at most: each record once. A capture's converter starts
// with its first records (its devices frame comes before them, so the host pid is chosen
// knowing the devices).
void LiveFeed::work() {
  std::unique_ptr<capture::RecordConverter> converter;
  uint64_t session = 0;
  size_t cursor = 0;
  bool final_sent = false;
  while (!stop_) {
    {
      std::unique_lock lock(mutex_);
      cv_.wait_for(lock, std::chrono::milliseconds(20));
    }
    if (stop_) break;
    LiveBatch b;
    b.arrived_s = live_clock_s();
    capture::LiveServer::NewRecords got = server_.take_new(session, cursor);
    if (got.fresh) converter.reset(), final_sent = false;
    bool closing = got.finished && !final_sent;
    if (got.records.empty() && !closing) continue;
    if (!converter) {
      converter = std::make_unique<capture::RecordConverter>(got.info, got.devices);
      b.fresh = true;
    }
    b.session = session;
    b.generation = got.generation;
    b.info = got.info;
    b.devices = std::move(got.devices);
    b.records = got.records.size();
    b.events = converter->convert(got.records);
    if (b.fresh) converter->add_metadata(b.events);
    if (got.finished) {
      converter->close_open_ranges(b.events);
      b.final = final_sent = true;
    }
    b.kernels = b.events.stats.kernels;
    b.convert_s = live_clock_s() - b.arrived_s;
    {
      std::lock_guard lock(mutex_);
      ready_.push_back(std::move(b));
    }
    if (wake_) wake_();
  }
}

}  // namespace sl::views
