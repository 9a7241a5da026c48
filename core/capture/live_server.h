// The viewer's end of a live capture: a Unix domain socket that the injection library (or the
// tests' fake producer) connects to and streams frames into (live_protocol.h).
//
// One background thread polls the listening socket and the one active connection, feeds the
// bytes into a LiveCapture under a mutex held only for the decode of one read (never for a
// store build), and publishes counts. One capture at a time: a connection arriving while a
// capture that said hello is streaming is refused (closed at once, counted, and named in
// `note`; the library in that program reports that its write failed and the program runs on).
// A connection that closes without a hello (cmd_capture's "is a viewer listening?" probe)
// changes nothing. A new capture replaces the previous one once its hello arrives.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/capture/live_protocol.h"

namespace sl::capture {

// $XDG_RUNTIME_DIR/sightline-live-UID.sock (or /tmp/...): where viewer and `capture --live` meet.
std::string default_live_socket();

// Binds and listens on `path` (non-blocking, close-on-exec). A socket file left by a crashed
// viewer (nothing accepts on it) is replaced; a live viewer on it, a path that is not a socket,
// or a path too long is an error (returned as -1 with `error` saying what and where).
int open_listen_socket(const std::string& path, std::string& error);

// What a viewer shows about the capture; a copy taken under the server's lock.
struct LiveStatus {
  std::string socket;
  bool listening = false;
  bool connected = false;    // a producer is streaming now
  bool has_capture = false;  // a hello arrived (this connection or an earlier one)
  uint64_t session = 0;      // bumped by every new capture (hello)
  uint64_t generation = 0;   // bumped by every accepted frame of the current capture
  CaptureInfo info;
  uint64_t records = 0, kernels = 0, batches = 0, bytes = 0;
  DropStats drops;           // the latest Stats frame (cumulative)
  bool ended = false;        // an End frame arrived
  std::string cut;           // how the stream broke or stopped early ("" while fine or ended)
  uint64_t refused = 0;      // connections refused while a capture was streaming
  std::string note;          // the latest refusal or rejected connection
  double seconds = 0;        // from the hello to the last byte (or now, while connected)
  bool finished() const { return has_capture && !connected; }  // ended or cut: no more data
};

class LiveServer {
public:
  // `wake` is called (from the server thread) when something a viewer shows changed.
  explicit LiveServer(std::function<void()> wake = {});
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  // Listens on `path` and starts the thread. False with `error` set when it cannot.
  bool listen(const std::string& path, std::string& error);
  // Serves an already connected stream (a socketpair end; tests) as if it had been accepted,
  // starting the thread if needed. Takes ownership of `fd`. False (fd closed) if a capture is
  // already streaming.
  bool serve(int fd);
  // Stops the thread, closes everything and removes the socket file we created.
  void stop();

  LiveStatus status() const;
  // Brings `mirror` up to date with the current capture: resets it when `session` differs from
  // the server's (a new capture), then appends the records it does not have yet and copies the
  // small parts (info, devices, drops, messages). Returns the generation copied.
  uint64_t sync(CaptureData& mirror, uint64_t& session) const;
  // The records of the current capture from `cursor` on, copied (only those), and whether the
  // capture is finished (nothing will follow them). A new capture (`session` differs) restarts
  // at record 0 and sets `fresh`; `session` and `cursor` move past what was taken.
  struct NewRecords {
    bool fresh = false, finished = false;
    uint64_t generation = 0;
    CaptureInfo info;
    std::vector<DeviceInfo> devices;
    std::vector<ActivityRecord> records;
  };
  NewRecords take_new(uint64_t& session, size_t& cursor) const;

private:
  struct Connection;
  void run();
  void accept_one();
  void read_from(Connection& c, std::vector<char>& chunk);
  void close_connection(const std::string& why);
  void adopt(int fd);
  void notify() const;

  std::function<void()> wake_;
  mutable std::mutex mutex_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  int listen_fd_ = -1;
  std::string path_;
  std::unique_ptr<Connection> conn_;  // the server thread's alone
  std::vector<int> pending_;          // fds handed to serve(), adopted by the thread
  std::unique_ptr<LiveCapture> current_;  // the capture shown (said hello)
  LiveStatus status_;
  double hello_at_ = 0, last_byte_at_ = 0;
  size_t kernels_counted_ = 0;  // records of current_ scanned for kernels
};

}  // namespace sl::capture
