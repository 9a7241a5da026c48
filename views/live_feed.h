// The GUI's live capture source, without any drawing: a LiveServer receiving the stream and a
// worker thread turning what arrived into TraceStore snapshots for the UI to swap in.
//
// Why snapshots and not appending to the store: TraceStore is finalized as a whole
// (TraceBuilder::finish sorts each track, nests slices into lanes, links launches to activities
// through correlation ids that may arrive in different batches, builds name and time indexes).
// An incremental append would have to redo most of that per batch for the tracks touched and
// keep every derived index consistent; a rebuild is simple and correct, and throttled
// adaptively (capture::RebuildThrottle: at most every max(250 ms, 3 × the last build)) it costs
// at most a third of one core however large the capture grows. Measured with
// `sightline bench live` (see core/capture/README.md). The worker keeps its own copy of the
// records (copied incrementally under the server's lock), so a build never holds that lock and
// the UI thread never waits for the socket or a build: it only takes finished snapshots.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/capture/live_server.h"
#include "views/analysis_model.h"
#include "views/timeline_view.h"

namespace sl::views {

struct LiveSnapshot {
  std::unique_ptr<TraceStore> store;
  std::unique_ptr<AnalysisModel> model;  // set when analyses were asked for, or the capture finished
  std::vector<IdleGapMark> gaps;
  uint64_t session = 0, generation = 0;
  uint64_t records = 0;  // records converted
  uint64_t kernels = 0;  // kernel slices in the store
  double build_s = 0;    // convert + build (+ analyses) on the worker
  bool final = false;    // built after the stream ended or broke: nothing newer will come
};

// Kernel slices (category "kernel") on GPU stream tracks.
uint64_t count_kernels(const TraceStore& store);

class LiveFeed {
public:
  explicit LiveFeed(std::function<void()> wake = {});
  ~LiveFeed();

  bool listen(const std::string& path, std::string& error) { return server_.listen(path, error); }
  bool serve(int fd) { return server_.serve(fd); }  // tests: a socketpair end
  capture::LiveStatus status() const { return server_.status(); }
  // Analyses run on demand: once asked for (the "Run analyses" button), every later snapshot
  // runs them too, their cost counted in the throttle; off again with `false`. The snapshot
  // built after the capture ends always has them.
  void set_analyses(bool on);
  bool analyses_on() const { return analyses_; }
  std::unique_ptr<LiveSnapshot> poll();  // the newest finished snapshot, if any (UI thread)
  double last_build_s() const { return last_build_s_; }

  // Everything received so far as Kineto JSON text (chrome_trace_json), for saving.
  std::string kineto_json() const;

private:
  void work();

  capture::LiveServer server_;
  std::function<void()> wake_;
  capture::RebuildThrottle throttle_;
  std::thread thread_;
  std::atomic<bool> stop_{false}, analyses_{false};
  std::atomic<double> last_build_s_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::unique_ptr<LiveSnapshot> ready_;
};

}  // namespace sl::views
