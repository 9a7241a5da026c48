// The live capture's pure pieces: the listener's state machine (fed through a socketpair and a
// real socket), the feed's batches grown into one store, and the view kept across a store swap.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "capture_test_util.h"
#include "core/capture/capture_store.h"
#include "core/capture/live_server.h"
#include "tests/unit/test_support.h"
#include "views/live_feed.h"
#include "views/timeline_view.h"

using namespace sl;
using namespace sl::capture;

namespace {

// Batch b: `kernels` kernels on stream 7 with their launches, 100 µs per batch.
std::string batch(uint32_t b, uint32_t kernels) {
  std::vector<ActivityRecord> r;
  for (uint32_t i = 0; i < kernels; ++i) {
    uint32_t corr = 1 + b * kernels + i;
    uint64_t t = uint64_t(b) * 100'000 + i * 10'000 + 5'000;
    r.push_back(test::api(ActivityKind::Runtime, "cudaLaunchKernel", corr, t - 3'000, t - 1'000));
    r.push_back(test::gpu(ActivityKind::Kernel, "gemm_kernel", corr, 7, t, t + 5'000));
  }
  return encode_records(r);
}

std::string hello() {
  CaptureData d = test::synthetic_capture();
  d.info.process_name = "trainer";
  return encode_hello(d.info) + encode_devices(d.devices);
}

bool send_all(int fd, const std::string& s) {
  return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size());
}

template <class F>
bool eventually(F&& done, double seconds = 5) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

int connect_to(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return ::close(fd), -1;
  return fd;
}

std::string temp_socket(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("sl-test-") + std::to_string(::getpid()) + "-" + name)).string();
}

}  // namespace

TEST_CASE("live server reads batches from a socketpair and reports the end") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  LiveServer server;
  REQUIRE(server.serve(sv[1]));
  std::string first = hello() + batch(0, 3);
  // Split mid-frame: the decoder must not care.
  REQUIRE(send_all(sv[0], first.substr(0, 37)));
  REQUIRE(send_all(sv[0], first.substr(37)));
  CHECK(eventually([&] { return server.status().kernels == 3; }));
  LiveStatus s = server.status();
  CHECK(s.connected);
  CHECK(s.info.process_name == "trainer");
  CHECK(s.batches == 1);
  CHECK(s.records == 6);
  DropStats drops{12, 1, 5};
  REQUIRE(send_all(sv[0], batch(1, 3) + encode_stats(drops) + encode_end()));
  CHECK(eventually([&] { return server.status().finished(); }));
  s = server.status();
  CHECK(s.ended);
  CHECK(s.cut.empty());
  CHECK(s.kernels == 6);
  CHECK(s.batches == 2);
  CHECK(s.drops.dropped_buffer == 1);
  CHECK(s.drops.dropped_cupti == 5);
  CaptureData mirror;
  uint64_t session = 0;
  CHECK(server.sync(mirror, session) == s.generation);
  CHECK(mirror.records.size() == 12);
  CHECK(session == 1);
  ::close(sv[0]);
}

TEST_CASE("live server keeps the accepted batches of a cut stream and says why") {
  for (std::string tail : {std::string("partial"), std::string("garbage")}) {
    CAPTURE(tail);
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    LiveServer server;
    server.serve(sv[1]);
    std::string next = batch(1, 2);
    REQUIRE(send_all(sv[0], hello() + batch(0, 2) + (tail == "partial" ? next.substr(0, next.size() / 2) : std::string(16, 'x'))));
    ::close(sv[0]);
    REQUIRE(eventually([&] { return server.status().finished(); }));
    LiveStatus s = server.status();
    CHECK_FALSE(s.ended);
    CHECK(s.kernels == 2);
    CHECK(s.records == 4);
    if (tail == "partial") CHECK(s.cut.find("stopped in the middle of a frame") != std::string::npos);
    else CHECK_MESSAGE(s.cut.find("frame 4 at byte") != std::string::npos, s.cut);
  }
}

TEST_CASE("live listener replaces a stale socket and refuses a second viewer and a second capture") {
  std::string path = temp_socket("listen.sock");
  {  // a socket file left by a crashed viewer: bound, never accepting
    std::string error;
    int fd = open_listen_socket(path, error);
    REQUIRE(fd >= 0);
    ::close(fd);  // the file stays
  }
  REQUIRE(std::filesystem::exists(path));
  LiveServer server;
  std::string error;
  REQUIRE_MESSAGE(server.listen(path, error), error);
  LiveServer other;
  CHECK_FALSE(other.listen(path, error));
  CHECK(error.find("another Sightline viewer is already listening on " + path) != std::string::npos);

  int probe = connect_to(path);  // `capture --live` checks for a viewer, then closes
  REQUIRE(probe >= 0);
  ::close(probe);
  int first = connect_to(path);
  REQUIRE(first >= 0);
  REQUIRE(send_all(first, hello() + batch(0, 1)));
  REQUIRE(eventually([&] { return server.status().kernels == 1; }));
  CHECK(server.status().session == 1);  // the probe was no capture
  int second = connect_to(path);
  REQUIRE(second >= 0);
  char byte;
  CHECK(eventually([&] { return server.status().refused == 1; }));
  CHECK(::read(second, &byte, 1) == 0);  // closed by the viewer
  CHECK(server.status().note.find("refused a second capture while trainer") != std::string::npos);
  ::close(second);
  ::close(first);
  server.stop();
  CHECK_FALSE(std::filesystem::exists(path));  // removed on exit

  std::string long_path(200, 'a');
  CHECK(open_listen_socket("/tmp/" + long_path, error) < 0);
  CHECK(error.find("longer than") != std::string::npos);
}

TEST_CASE("live feed converts each arrival once and the store grown from it holds every kernel") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  views::LiveFeed feed;
  feed.serve(sv[1]);
  REQUIRE(send_all(sv[0], hello() + batch(0, 4)));
  views::LiveStore live;
  std::unique_ptr<TraceStore> owned;
  bool final = false;
  uint64_t fresh = 0;
  auto drain = [&] {
    for (views::LiveBatch& b : feed.poll()) {
      if (auto s = live.apply(b)) owned = std::move(s);
      final |= b.final;
      fresh += b.fresh;
    }
  };
  REQUIRE(eventually([&] { return drain(), live.kernels() == 4; }));
  CHECK(views::count_kernels(*owned) == 4);
  CHECK(owned->launch_link_count() == 4);
  CHECK_FALSE(final);
  REQUIRE(send_all(sv[0], batch(1, 4) + encode_end()));
  REQUIRE(eventually([&] { return drain(), final; }));
  live.end();
  CHECK(fresh == 1);  // one capture, one store, appended to
  CHECK(live.records() == 16);
  CHECK(live.kernels() == 8);
  CHECK(views::count_kernels(*owned) == 8);
  CHECK(owned->launch_link_count() == 8);
  CHECK(owned->flows.size() == 8);
  CHECK(live.gpu_busy_ns() == 8 * 5'000);
  // Stream 7: 5 µs gaps between the kernels of a batch, 65 µs between the batches.
  CHECK(live.idle_gaps() == 7);
  CHECK(live.gpu_idle_ns() == 6 * 5'000 + 65'000);
  CHECK(owned->end_ns == 140'000 - 2'000);  // the last kernel's end; 0 is the first launch's start
  ::close(sv[0]);
}

TEST_CASE("timeline view state survives a store rebuild with more data") {
  CaptureData d;
  d.info = test::synthetic_capture().info;
  auto add = [&](uint32_t b) {
    LiveCapture c;
    REQUIRE(c.feed(hello().data(), hello().size()));
    std::string bytes = batch(b, 3);
    REQUIRE(c.feed(bytes.data(), bytes.size()));
    d.records.insert(d.records.end(), c.data().records.begin(), c.data().records.end());
  };
  add(0);
  auto small = build_store(d);
  views::TimelineView a(*small);
  SliceRef k = test::find_slice(*small, "gemm_kernel");
  REQUIRE(k.valid());
  a.select(k);
  a.zoom_to(1000, 50'000);
  a.set_following(true);
  uint32_t cpu = kNone;
  for (uint32_t t = 0; t < small->tracks.size(); ++t)
    if (small->tracks[t].kind == TrackKind::CpuThread) cpu = t;
  REQUIRE(cpu != kNone);
  a.set_pinned(cpu, true);
  views::TimelineViewState state = a.save_state();
  add(1);
  auto big = build_store(d);
  views::TimelineView b(*big);
  b.restore_state(state);
  CHECK(b.view_start() == 1000);
  CHECK(b.view_end() == 50'000);
  CHECK(b.following());
  REQUIRE(b.selected().valid());
  CHECK(big->name(b.selected()) == "gemm_kernel");
  CHECK(big->start(b.selected()) == small->start(k));
  views::TimelineViewState again = b.save_state();
  bool pinned = false;
  for (auto& [key, bits] : again.rows) pinned |= key == views::track_key(*small, cpu) && (bits & 1);
  CHECK(pinned);
  b.follow(big->end_ns);  // keeps the width, right edge at the newest event
  CHECK(b.view_end() == double(big->end_ns));
  CHECK(b.view_end() - b.view_start() == doctest::Approx(49'000));
  b.zoom_to(0, 10);
  CHECK_FALSE(b.following());  // any zoom stops following
}
