// One open trace with its views, and the background load that replaces it. No GL here: the
// window (app/gui_window.cpp) and the headless frame benchmark both drive it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/open_trace.h"
#include "views/analysis_panel.h"
#include "views/timeline_view.h"

namespace sl::views {

struct LoadState {
  std::atomic<uint64_t> bytes_done{0}, bytes_total{0}, events{0};
  std::atomic<const char*> phase{""};
  std::atomic<bool> cancel{false};
  double started = 0;  // ImGui time when the load began
};

class Workspace {
public:
  ~Workspace();

  // Starts loading in the background; what is open stays open until the new trace is ready.
  void open(const std::string& path, std::function<void()> wake);
  bool loading() const { return loading_; }
  const LoadState& load_state() const { return state_; }
  void cancel() { state_.cancel = true; }
  // Call once per frame: installs a finished load. Returns true when something changed.
  bool poll();

  TraceStore* store() { return store_.get(); }
  TimelineView* timeline() { return timeline_.get(); }
  AnalysisPanel* panel() { return panel_.get(); }
  const AnalysisModel* model() const { return model_.get(); }
  const std::string& error() const { return error_; }  // the last failed load, until dismissed
  void dismiss_error() { error_.clear(); }
  bool last_load_failed() const { return last_failed_; }
  const std::string& path() const { return path_; }
  // Where the open store came from, and what the snapshot cache had to say (a discarded entry, a
  // failed write): one line, shown under the tab's title, "" when nothing.
  TraceOrigin origin() const { return origin_; }
  const std::string& notice() const { return notice_; }
  // What the last poll() that returned true added to notice() (to print it once).
  const std::string& fresh_notice() const { return fresh_notice_; }

  // Loads synchronously (benchmarks, tests).
  bool open_now(const std::string& path);

  // Shows a store built elsewhere (a live capture snapshot) under `label`. `model` may be null
  // (analyses not run yet: panel() is then null). With `keep` the timeline takes that view state
  // (range, selection, pinned/hidden rows) instead of showing everything.
  void install_store(std::unique_ptr<TraceStore> store, std::unique_ptr<AnalysisModel> model,
                     std::vector<IdleGapMark> gaps, const std::string& label, const TimelineViewState* keep);
  // The store grew in place (a live capture's append): rebuilds the views over it with `keep`.
  // A model replaces the analyses shown (with its gaps); without one the current ones stay.
  void reshow_store(const TimelineViewState& keep, std::unique_ptr<AnalysisModel> model = nullptr,
                    std::vector<IdleGapMark> gaps = {});

private:
  struct Loaded {
    std::unique_ptr<TraceStore> store;
    std::vector<IdleGapMark> gaps;
    std::unique_ptr<AnalysisModel> model;  // every analysis, computed on the loader thread
    std::string error;
    std::string path;
    TraceOrigin origin = TraceOrigin::Source;
    std::string notice;
    PendingCacheWrite write;  // the snapshot cache's write, done with the store, still writing
    // Made on the loader thread too: its lane and counter indexes and the short names take up to
    // ~1 s on a 10 GB trace, which would otherwise freeze the window once the trace is shown.
    std::unique_ptr<TimelineView> timeline;
  };
  static Loaded load(const std::string& path, LoadState& state);
  void install(Loaded loaded);

  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TimelineView> timeline_;
  std::unique_ptr<AnalysisModel> model_;
  std::unique_ptr<AnalysisPanel> panel_;
  std::vector<IdleGapMark> gaps_;  // the model's, kept for reshow_store
  std::string path_, error_, notice_, fresh_notice_;
  // Snapshot cache writes still going on in the background (they no longer read any store);
  // a finished one's warning joins the notice. Destruction waits for them.
  std::vector<PendingCacheWrite> cache_writes_;
  bool poll_cache_writes();
  TraceOrigin origin_ = TraceOrigin::Source;
  bool last_failed_ = false;
  std::thread thread_;
  std::atomic<bool> loading_{false};
  std::mutex mutex_;
  std::unique_ptr<Loaded> finished_;
  LoadState state_;
};

// Every analysis of `store` for the views, with the idle-gap overlay and the derived counter
// rows (added to `store`, so call it before the store is shown). `before_changing_store` runs
// after the analyses, which only read the store, and before the counters are added (a snapshot
// cache write still reading the store waits there: it only serializes it, which is done long
// before the analyses on any trace large enough for it to matter; writing the file goes on).
std::unique_ptr<AnalysisModel> analyse_for_views(TraceStore& store, std::vector<IdleGapMark>& gaps,
                                                 const std::function<void()>& before_changing_store = {});

// Idle gaps of every GPU stream with their causes (Sightline mode), for the overlay.
std::vector<IdleGapMark> idle_gap_marks(const analysis::IdleCauses& causes);

}  // namespace sl::views
