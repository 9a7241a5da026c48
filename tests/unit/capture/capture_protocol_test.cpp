// The live capture protocol, driven by fake producers: whole streams, every split point,
// partial writes over a socketpair, disconnects mid-frame and garbage.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "core/capture/capture_store.h"
#include "core/capture/live_protocol.h"
#include "core/store/trace_store.h"
#include "tests/unit/capture/capture_test_util.h"

using namespace sl;
using namespace sl::capture;

namespace {

std::string whole_stream(const CaptureData& d, size_t batch = 5) {
  std::string s = encode_hello(d.info) + encode_devices(d.devices);
  for (size_t i = 0; i < d.records.size(); i += batch) {
    size_t n = std::min(batch, d.records.size() - i);
    s += encode_records(std::span(d.records).subspan(i, n));
  }
  s += encode_message("NVML not found: no GPU counters");
  return s + encode_stats(d.drops) + encode_end();
}

void check_same(const CaptureData& got, const CaptureData& want) {
  CHECK(got.info.pid == want.info.pid);
  CHECK(got.info.process_name == want.info.process_name);
  CHECK(got.info.clock_base_ns == want.info.clock_base_ns);
  CHECK(got.info.wall_base_ns == want.info.wall_base_ns);
  REQUIRE(got.devices.size() == want.devices.size());
  CHECK(got.devices[0].name == want.devices[0].name);
  CHECK(got.devices[0].num_sms == want.devices[0].num_sms);
  REQUIRE(got.records.size() == want.records.size());
  for (size_t i = 0; i < got.records.size(); ++i) {
    const ActivityRecord &a = got.records[i], &b = want.records[i];
    CHECK(a.kind == b.kind);
    CHECK(a.start == b.start);
    CHECK(a.end == b.end);
    CHECK(a.correlation == b.correlation);
    CHECK(a.stream == b.stream);
    CHECK(a.flags == b.flags);
    CHECK(a.id == b.id);
    CHECK(a.number == b.number);
    CHECK(a.name == b.name);
    CHECK(a.grid[0] == b.grid[0]);
    CHECK(a.bytes == b.bytes);
  }
  CHECK(got.drops.dropped_buffer == want.drops.dropped_buffer);
  CHECK(got.drops.dropped_cupti == want.drops.dropped_cupti);
}

// Writes `bytes` to `fd` in pieces of `piece` bytes with pauses: partial writes as a
// real producer does them.
void write_slowly(int fd, std::string bytes, size_t piece) {
  for (size_t at = 0; at < bytes.size(); at += piece) {
    size_t n = std::min(piece, bytes.size() - at);
    if (::write(fd, bytes.data() + at, n) != ssize_t(n)) break;
    if (at % (piece * 16) == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

struct SocketPair {
  int fd[2] = {-1, -1};
  SocketPair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) == 0); }
  ~SocketPair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close_writer() { ::close(fd[1]), fd[1] = -1; }
};

}  // namespace

TEST_CASE("capture protocol: a whole stream decodes to the same capture") {
  CaptureData want = test::synthetic_capture();
  LiveCapture live;
  std::string s = whole_stream(want);
  CHECK(live.feed(s.data(), s.size()));
  CHECK(live.finish());
  CHECK(live.ended());
  CHECK(live.batches() == (want.records.size() + 4) / 5);
  check_same(live.data(), want);
  REQUIRE(live.data().messages.size() == 1);
  CHECK(live.data().messages[0] == "NVML not found: no GPU counters");
  auto store = build_store(live.data());
  CHECK(store->kernel_count() == 3);
  CHECK(store->flows.size() == 5);
}

TEST_CASE("capture protocol: every split of the stream gives the same frames") {
  CaptureData want = test::synthetic_capture();
  std::string s = whole_stream(want, 7);
  for (size_t cut = 0; cut <= s.size(); cut += 13) {
    LiveCapture live;
    REQUIRE(live.feed(s.data(), cut));
    REQUIRE(live.feed(s.data() + cut, s.size() - cut));
    REQUIRE(live.finish());
    REQUIRE(live.data().records.size() == want.records.size());
  }
  LiveCapture bytewise;
  for (char c : s) REQUIRE(bytewise.feed(&c, 1));
  CHECK(bytewise.finish());
  check_same(bytewise.data(), want);
}

TEST_CASE("capture protocol: partial writes over a socket arrive whole") {
  CaptureData want = test::synthetic_capture();
  SocketPair sp;
  std::string s = whole_stream(want, 3);
  std::thread producer([&] {
    write_slowly(sp.fd[1], s, 7);
    sp.close_writer();
  });
  LiveCapture live;
  ReadOutcome r = read_stream(sp.fd[0], live);
  producer.join();
  CHECK(r.clean);
  CHECK(r.error.empty());
  CHECK(r.bytes == s.size());
  check_same(live.data(), want);
}

TEST_CASE("capture protocol: a disconnect mid-frame keeps the batches before it") {
  CaptureData want = test::synthetic_capture();
  std::string head = encode_hello(want.info) + encode_records(std::span(want.records).first(4));
  std::string cut = encode_records(std::span(want.records).subspan(4, 4));
  SocketPair sp;
  std::thread producer([&] {
    write_slowly(sp.fd[1], head + cut.substr(0, cut.size() / 2), 11);
    sp.close_writer();  // the program died while writing
  });
  LiveCapture live;
  ReadOutcome r = read_stream(sp.fd[0], live);
  producer.join();
  CHECK_FALSE(r.clean);
  CHECK(r.error.find("stopped in the middle of a frame") != std::string::npos);
  CHECK(live.data().records.size() == 4);
  CHECK(live.data().info.pid == 4242);

  LiveCapture no_end;
  CHECK(no_end.feed(head.data(), head.size()));
  CHECK_FALSE(no_end.finish());
  CHECK(no_end.error().find("without an end frame") != std::string::npos);
  CHECK(no_end.data().records.size() == 4);
}

TEST_CASE("capture protocol: garbage and malformed frames give clear errors") {
  CaptureData want = test::synthetic_capture();
  std::string hello = encode_hello(want.info);
  auto error_of = [](std::string bytes) {
    LiveCapture live;
    CHECK_FALSE(live.feed(bytes.data(), bytes.size()));
    CHECK_FALSE(live.feed("x", 1));  // stays broken
    return live.error();
  };
  CHECK(error_of("GET / HTTP/1.1\r\nHost: x\r\n\r\n").find("frame 1 at byte 0: not a Sightline capture frame") == 0);
  std::string bad_version = hello;
  bad_version[4] = 9;
  CHECK(error_of(bad_version).find("protocol version 9") != std::string::npos);
  std::string huge = hello;
  huge[8] = huge[9] = huge[10] = huge[11] = char(0xff);
  CHECK(error_of(huge).find("exceeds the limit") != std::string::npos);
  std::string bad_type = hello;
  bad_type[6] = 77;
  CHECK(error_of(bad_type).find("unknown frame type 77") != std::string::npos);
  CHECK(error_of(encode_records(want.records)).find("does not start with a hello") != std::string::npos);

  // A batch whose count claims more records than its bytes hold.
  std::string lying = encode_records(std::span(want.records).first(2));
  lying[12] = char(200);
  std::string e = error_of(hello + lying);
  CHECK(e.find("frame 2: malformed records frame") == 0);

  // A record with an unknown kind.
  std::string bad_kind = encode_records(std::span(want.records).first(1));
  bad_kind[kFrameHeaderBytes] = char(99);
  CHECK(error_of(hello + bad_kind).find("malformed records") != std::string::npos);

  // Garbage after a good batch: the batch is kept.
  LiveCapture live;
  std::string good = hello + encode_records(std::span(want.records).first(3)) + "\x01\x02garbage-garbage-garbage";
  CHECK_FALSE(live.feed(good.data(), good.size()));
  CHECK(live.data().records.size() == 3);
  CHECK(live.error().find("frame 3 at byte") == 0);

  // Data after the end frame.
  std::string after = hello + encode_end() + encode_end();
  CHECK(error_of(after).find("after the end") != std::string::npos);
}

TEST_CASE("capture protocol: read_stream stops when asked even if the peer is silent") {
  SocketPair sp;
  std::atomic<bool> stop{false};
  LiveCapture live;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  ReadOutcome r = read_stream(sp.fd[0], live, &stop);
  stopper.join();
  CHECK_FALSE(r.clean);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
}
