// The live capture tab's UI: appends the feed's batches to the shown store at a frame boundary
// (keeping the user's view), follows the newest data, and draws the toolbar and status line.
// Analyses run on demand (Run analyses) and once when the capture ends, never per batch;
// counts (records, kernels, GPU busy time) are kept per batch (LiveStore).
#pragma once

#include <functional>
#include <future>
#include <memory>
#include <string>

#include "core/text/json_writer.h"
#include "views/live_feed.h"
#include "views/workspace.h"

namespace sl::views {

class LiveView {
public:
  explicit LiveView(std::function<void()> wake) : feed_(std::move(wake)) {}
  bool listen(const std::string& socket, std::string& error);
  const std::string& socket() const { return socket_; }
  LiveFeed& feed() { return feed_; }

  // Once per frame, before drawing: appends the batches converted since the last frame (not
  // while a snapshot is being written); keeps the view at the newest data while following.
  // Returns true when something changed.
  bool poll(Workspace& ws);
  void draw_bar(Workspace& ws);  // toolbar (Follow, Run analyses, Save) and status line
  void draw_empty() const;       // nothing received yet: where to connect, what to run
  void draw_save_popup();  // and the snapshot's
  void open_save_popup() { save_popup_ = true; }
  void open_snapshot_popup() { snapshot_popup_ = true; }
  bool can_save() const { return status_.has_capture; }
  bool can_save_snapshot() const { return live_.store() != nullptr; }
  // Analyses of the store as it is now, at the next poll (on the UI thread).
  void request_analyses() { analyses_asked_ = true; }

  // Writes the capture as Kineto JSON (gzip for .gz) on a background thread; `wait` blocks
  // until written (scripts). Returns "" or the error.
  std::string save(const std::string& path, bool wait);
  // Writes the shown store as a snapshot (core/snapshot/snapshot.h; opens like any trace) on a
  // background thread; batches wait until it is written. Returns "" or the error.
  std::string save_snapshot(const std::string& path, bool wait);

  uint64_t store_kernels() const { return shown_.kernels; }
  // The capture is over, its last batch appended and the analyses of everything shown.
  bool final_shown() const { return shown_.final; }
  void write_state(JsonWriter& w, Workspace& ws) const;
  // The command a user runs to stream a program here.
  std::string command_hint() const;

private:
  struct Shown {
    uint64_t session = 0, generation = 0, records = 0, kernels = 0, batches = 0;
    double visible_s = 0;   // the last batch: from the worker taking its records to shown
    double append_s = 0;    // the last poll's appends and view rebuild, on the UI thread
    double analyses_s = 0;  // the last analyses, on the UI thread
    uint64_t analysed_records = 0;  // records in the store when analysed
    bool last_batch = false;  // the final batch is appended
    bool final = false, analysed = false;
  };
  void apply(std::vector<LiveBatch>& batches, Workspace& ws);
  // Analyses run on a worker over the store as it is (batches wait meanwhile, the UI draws on).
  void start_analyses();
  void show_analyses(Workspace& ws);
  LiveFeed feed_;
  LiveStore live_;
  bool analyses_asked_ = false;
  std::string socket_, error_;
  capture::LiveStatus status_;
  Shown shown_;
  bool save_popup_ = false, snapshot_popup_ = false;
  char save_path_[512] = "", snapshot_path_[512] = "";
  std::future<std::string> saving_, snapshotting_;
  std::future<std::unique_ptr<AnalysisModel>> analysing_;
  bool analysing_last_ = false;  // the running analyses are of the final store
  double analyses_started_ = 0;
  std::string save_message_;
};

}  // namespace sl::views
