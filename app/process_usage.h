// What the benchmarks report about their own process: CPU time and peak resident memory.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <ctime>

namespace sl::cli {

// CPU time of the process, every thread: on a shared machine, wall time also counts other jobs' turns.
inline double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

inline uint64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return uint64_t(usage.ru_maxrss) * 1024;  // ru_maxrss is in KiB on Linux
}

}  // namespace sl::cli
