// Helpers shared by the distributed-job tests: scratch folders of rank traces and hand-made ranks
// with known answers (the straggler job, two hosts whose clocks differ).
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/analysis/analysis_test_util.h"

namespace sl::job_test {

namespace fs = std::filesystem;

using sl::analysis::test::kernel;
using sl::analysis::test::launch;
using sl::analysis::test::trace;
using sl::analysis::test::X;

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() / ("sightline_job_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter++) + "_" + name);
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& file, const std::string& text) const {
    std::ofstream(path / file, std::ios::binary) << text;
    return (path / file).string();
  }
};

inline std::string dist(int rank, int world = 4) {
  return R"("distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(rank) +
         R"(, "world_size": )" + std::to_string(world) + "}";
}

inline std::string us_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// One all-reduce on (pid 1, tid 1) and stream 7: record_param_comms around the launch, the
// kernel from `start` to `end` (µs), in process group `group` over `ranks`.
inline void add_collective(std::vector<std::string>& ev, int& corr, double start, double end, const std::string& group = "",
                    const std::string& ranks = "", const std::string& kernel_name =
                        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)") {
  std::string args = "{}";
  if (!group.empty())
    args = R"({"Process Group Name": ")" + group + R"(", "Process Group Ranks": ")" + ranks + R"("})";
  ev.push_back(X("cpu_op", "record_param_comms", 1, 1, us_text(start - 75), "20", args));
  ev.push_back(launch("cudaLaunchKernel", us_text(start - 70), "5", ++corr));
  ev.push_back(kernel(kernel_name, 7, us_text(start), us_text(end - start), corr));
}

// The straggler job: 4 iterations of 5 ms; every rank computes 1 ms then all-reduces; rank 2
// first spends 3 ms in the data loader, so it arrives 3 ms after the others at every all-reduce.
// All all-reduces end together at b + 4600 µs.
inline std::string straggler_rank(int rank) {
  std::vector<std::string> ev;
  int corr = 0;
  const double t0 = 1'000'000;
  // Warm-up kernel, so iteration 0 also starts after an idle gap.
  ev.push_back(launch("cudaLaunchKernel", us_text(t0 - 1500), "5", ++corr));
  ev.push_back(kernel("warmup_kernel", 7, us_text(t0 - 1400), "1000", corr));
  for (int k = 0; k < 4; ++k) {
    double b = t0 + 5000.0 * k, d = rank == 2 ? 3000 : 0;
    ev.push_back(X("user_annotation", "ProfilerStep#" + std::to_string(k), 1, 1, us_text(b), "4900"));
    if (rank == 2)
      ev.push_back(X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 1, 1,
                     us_text(b + 1), "2999"));
    ev.push_back(launch("cudaLaunchKernel", us_text(b + d + 10), "5", ++corr));
    ev.push_back(kernel("gemm_kernel", 7, us_text(b + d + 20), "1000", corr));
    add_collective(ev, corr, b + d + 1100, b + 4600, "0", "[0, 1, 2, 3]");
  }
  return trace(ev, dist(rank));
}

// Ranks 2 and 3 run on a host whose clock is `kHostB` µs ahead; each all-reduce's end jitters by
// a few µs, as real collectives do; arrivals spread over 300 µs.
inline const double kHostB = 1234.567 * 1000;

inline std::vector<std::string> two_host_ranks() {
  const int jitter[4][6] = {{0, 2, -1, 3, 0, 1}, {1, -2, 0, 2, -3, 0}, {-1, 0, 3, -2, 1, 2}, {2, 1, -3, 0, 2, -1}};
  std::vector<std::string> texts;
  for (int rank = 0; rank < 4; ++rank) {
    std::vector<std::string> ev;
    int corr = 0;
    double shift = rank >= 2 ? kHostB : 0;
    for (int k = 0; k < 6; ++k) {
      double start = 5000 + 4000 * k + 100 * ((rank + k) % 4);
      add_collective(ev, corr, start + shift, 5000 + 4000 * k + 900 + jitter[rank][k] + shift);
    }
    texts.push_back(trace(ev, dist(rank)));
  }
  return texts;
}

}  // namespace sl::job_test
