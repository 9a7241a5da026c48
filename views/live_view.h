// The live capture tab's UI: swaps the feed's snapshots into a Workspace at a frame boundary
// (keeping the user's view), follows the newest data, and draws the toolbar and status line.
#pragma once

#include <future>
#include <memory>
#include <string>

#include "core/json_writer.h"
#include "views/live_feed.h"
#include "views/workspace.h"

namespace sl::views {

class LiveView {
public:
  explicit LiveView(std::function<void()> wake) : feed_(std::move(wake)) {}
  bool listen(const std::string& socket, std::string& error);
  const std::string& socket() const { return socket_; }
  LiveFeed& feed() { return feed_; }

  // Once per frame, before drawing: installs the newest snapshot; keeps the view at the newest
  // data while following. Returns true when something changed.
  bool poll(Workspace& ws);
  void draw_bar(Workspace& ws);  // toolbar (Follow, Run analyses, Save) and status line
  void draw_empty() const;       // nothing received yet: where to connect, what to run
  void draw_save_popup();
  void open_save_popup() { save_popup_ = true; }
  bool can_save() const { return status_.has_capture; }

  // Writes the capture as Kineto JSON (gzip for .gz) on a background thread; `wait` blocks
  // until written (scripts). Returns "" or the error.
  std::string save(const std::string& path, bool wait);

  uint64_t store_kernels() const { return shown_.kernels; }
  bool final_shown() const { return shown_.final; }
  void write_state(JsonWriter& w, Workspace& ws) const;
  // The command a user runs to stream a program here.
  std::string command_hint() const;

private:
  struct Shown {
    uint64_t session = 0, generation = 0, records = 0, kernels = 0, snapshots = 0;
    double build_s = 0;
    bool final = false, analysed = false;
  };
  LiveFeed feed_;
  std::string socket_, error_;
  capture::LiveStatus status_;
  Shown shown_;
  bool save_popup_ = false;
  char save_path_[512] = "";
  std::future<std::string> saving_;
  std::string save_message_;
};

}  // namespace sl::views
