// The GUI's live capture source, without any drawing: a LiveServer receiving the stream, a
// worker thread converting each arrival's new records (capture::RecordConverter: only the new
// ones), and LiveStore, which appends the converted batches to one TraceStore on the UI thread
// (capture::CaptureAppender → TraceBuilder::finish_appended) between frames.
//
// Why the append happens on the UI thread: the views read the store while they draw, and an
// append changes it in place (columns grow, a tail may be renumbered). Conversion (names,
// args JSON, demangling: the expensive part) is done by the worker; the append is the cheap
// part (sorting and nesting the new rows into track tails, a few linear index passes), so the
// store is never copied and the records are held once (by the server's capture; the worker
// copies only each arrival's new records, and drops them once converted).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/capture/capture_store.h"
#include "core/capture/live_server.h"
#include "views/analysis_model.h"
#include "views/timeline_view.h"

namespace sl::views {

// The records that arrived since the previous batch, converted on the worker.
struct LiveBatch {
  uint64_t session = 0, generation = 0;
  bool fresh = false;  // the first batch of a new capture: start a new store
  capture::CaptureInfo info;
  std::vector<capture::DeviceInfo> devices;
  capture::ConvertedTrace events;
  uint64_t records = 0;  // records in this batch
  uint64_t kernels = 0;  // kernels converted in this batch
  bool final = false;    // the capture ended or broke: nothing newer will come
  double arrived_s = 0;  // when the worker took the records (steady clock, seconds)
  double convert_s = 0;
};

// Kernel slices (category "kernel") on GPU stream tracks.
uint64_t count_kernels(const TraceStore& store);

// Seconds on the steady clock (LiveBatch::arrived_s).
double live_clock_s();

// One capture's store, grown from its batches. Tallies kept incrementally (no pass over the
// store per batch): records, kernels, GPU busy time (kernel, copy and set durations), and the
// idle gaps between GPU work on each stream, measured from the running maximum end as the
// idle analysis does (analyses.md §2; without its idle window's edges and causes): only the
// rows a batch added are visited, a track's whole gap list again only when a batch reached back
// into it.
class LiveStore {
public:
  // Appends `batch`. A fresh batch starts a new store, returned for the caller to show (this
  // keeps a pointer: the caller keeps it alive while batches of this session come).
  std::unique_ptr<TraceStore> apply(const LiveBatch& batch);
  // After the final batch: flows still missing an end become import issues.
  void end();
  TraceStore* store() const { return store_; }
  uint64_t session() const { return session_; }
  uint64_t records() const { return records_; }
  uint64_t kernels() const { return kernels_; }
  TimeNs gpu_busy_ns() const { return gpu_busy_ns_; }
  TimeNs gpu_idle_ns() const;  // summed over GPU stream tracks
  uint64_t idle_gaps() const;

private:
  struct StreamGaps {
    uint32_t rows = 0;  // rows of the track already counted
    TimeNs idle = 0;
    uint64_t gaps = 0;
  };
  void count_gaps();
  std::vector<StreamGaps> gaps_;  // per track
  TraceStore* store_ = nullptr;
  std::unique_ptr<capture::CaptureAppender> appender_;
  uint64_t session_ = 0, records_ = 0, kernels_ = 0;
  TimeNs gpu_busy_ns_ = 0;
};

class LiveFeed {
public:
  explicit LiveFeed(std::function<void()> wake = {});
  ~LiveFeed();

  bool listen(const std::string& path, std::string& error) { return server_.listen(path, error); }
  bool serve(int fd) { return server_.serve(fd); }  // tests: a socketpair end
  capture::LiveStatus status() const { return server_.status(); }
  // Every batch converted since the last call, oldest first (UI thread).
  std::vector<LiveBatch> poll();

  // Everything received so far as Kineto JSON text (chrome_trace_json), for saving.
  std::string kineto_json() const;

private:
  void work();

  capture::LiveServer server_;
  std::function<void()> wake_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<LiveBatch> ready_;
};

}  // namespace sl::views
