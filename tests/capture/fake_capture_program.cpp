// Stands in for a CUDA program under `sightline capture` on machines without a GPU: writes the
// frames the injection library would, to $SIGHTLINE_CAPTURE_SOCKET (a live viewer; takes
// precedence, as in the library) or to $SIGHTLINE_CAPTURE_OUT.
//
//   fake_capture_program              the synthetic capture of the unit tests, at once
//   fake_capture_program --crash      ... stopping mid-frame and aborting, like a program that dies
//   fake_capture_program --batches N [--interval-ms M] [--kernels K] [--cut partial|garbage]
//       a training-like stream: N record batches, M ms apart, each with K kernels on stream 7
//       (and their cudaLaunchKernel calls) covering 100 µs of GPU time, a Stats frame after
//       each; then an End frame, or with --cut half a frame (`partial`) or a bad header
//       (`garbage`) and a close, like a program that dies or a corrupted stream.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <algorithm>
#include <string>
#include <thread>

#include "core/capture/live_protocol.h"
#include "tests/unit/capture/capture_test_util.h"

namespace {

using namespace sl::capture;

int open_output() {
  if (const char* sock = std::getenv("SIGHTLINE_CAPTURE_SOCKET"); sock && *sock) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, sock, sizeof addr.sun_path - 1);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      std::fprintf(stderr, "fake_capture_program: cannot connect to %s: %s\n", sock, std::strerror(errno));
      return -1;
    }
    return fd;
  }
  const char* path = std::getenv("SIGHTLINE_CAPTURE_OUT");
  if (!path) return -1;
  return ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

bool send_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

// Batch b: K kernels alternating gemm/relu, launched 3 µs before they start; 100 µs per batch.
std::string batch(uint32_t b, uint32_t kernels) {
  std::vector<ActivityRecord> records;
  const uint64_t span = 100'000, step = span / kernels;
  for (uint32_t i = 0; i < kernels; ++i) {
    uint32_t corr = 1 + b * kernels + i;
    uint64_t t = uint64_t(b) * span + i * step + 5'000;
    records.push_back(sl::test::api(ActivityKind::Runtime, "cudaLaunchKernel", corr, t - 3'000, t - 1'000));
    records.push_back(sl::test::gpu(ActivityKind::Kernel, i % 2 ? "relu_kernel" : "gemm_kernel", corr, 7, t,
                                    t + step * 6 / 10));
  }
  return encode_records(records);
}

int stream_batches(int fd, uint32_t batches, uint32_t interval_ms, uint32_t kernels, const std::string& cut) {
  CaptureData d = sl::test::synthetic_capture();
  d.info.pid = uint32_t(::getpid());
  d.info.process_name = "fake_train";
  if (!send_all(fd, encode_hello(d.info) + encode_devices(d.devices))) return 5;
  DropStats stats;
  for (uint32_t b = 0; b < batches; ++b) {
    if (b && interval_ms) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    stats.records += 2ull * kernels;
    stats.dropped_cupti = b;  // something for the status line to show
    if (!send_all(fd, batch(b, kernels) + encode_stats(stats))) return 5;
  }
  if (cut == "partial") {
    std::string next = batch(batches, kernels);
    send_all(fd, next.substr(0, next.size() / 2));
  } else if (cut == "garbage") {
    send_all(fd, std::string(16, 'x'));
  } else {
    send_all(fd, encode_end());
  }
  ::close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool crash = false;
  uint32_t batches = 0, interval_ms = 0, kernels = 4;
  std::string cut;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto number = [&] { return i + 1 < argc ? uint32_t(std::strtoul(argv[++i], nullptr, 10)) : 0u; };
    if (a == "--crash") crash = true;
    else if (a == "--batches") batches = number();
    else if (a == "--interval-ms") interval_ms = number();
    else if (a == "--kernels") kernels = std::max(1u, number());
    else if (a == "--cut" && i + 1 < argc) cut = argv[++i];
    else return std::fprintf(stderr, "fake_capture_program: unknown argument %s\n", a.c_str()), 2;
  }
  int fd = open_output();
  if (fd < 0) return 3;
  if (batches) return stream_batches(fd, batches, interval_ms, kernels, cut);

  CaptureData d = sl::test::synthetic_capture();
  std::string out = encode_hello(d.info) + encode_devices(d.devices);
  std::span<const ActivityRecord> records(d.records);
  out += encode_records(records.first(12));
  std::string rest = encode_records(records.subspan(12));
  if (crash) {
    out += rest.substr(0, rest.size() / 2);
    send_all(fd, out);
    std::abort();
  }
  out += rest + encode_stats(d.drops) + encode_end();
  send_all(fd, out);
  ::close(fd);
  return 0;
}
