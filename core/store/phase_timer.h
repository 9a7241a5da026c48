// Wall time of a load's phases on stderr, when SIGHTLINE_TIMING is set: for finding where a
// load spends its time without a profiler (what `bench load` cannot split).
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <ctime>

namespace sl {

class PhaseTimer {
public:
  explicit PhaseTimer(const char* what) : on_(std::getenv("SIGHTLINE_TIMING") != nullptr), what_(what) {}
  ~PhaseTimer() {
    if (on_ && !line_.empty()) std::fprintf(stderr, "%s:%s\n", what_, line_.c_str());
  }
  // Ends the phase running since the last mark (or construction).
  void mark(const char* phase) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    double cpu = cpu_ms(CLOCK_THREAD_CPUTIME_ID), all = cpu_ms(CLOCK_PROCESS_CPUTIME_ID);
    char text[128];
    std::snprintf(text, sizeof text, " %s %.1f ms (cpu %.1f, all threads %.1f)", phase,
                  std::chrono::duration<double, std::milli>(now - last_).count(), cpu - last_cpu_, all - last_all_);
    line_ += text;
    last_ = now;
    last_cpu_ = cpu;
    last_all_ = all;
  }

private:
  // CPU time of this thread or of the process: on a busy machine wall time is mostly waiting.
  static double cpu_ms(clockid_t clock) {
    timespec t{};
    clock_gettime(clock, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
  }

  bool on_;
  const char* what_;
  std::string line_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  double last_cpu_ = on_ ? cpu_ms(CLOCK_THREAD_CPUTIME_ID) : 0;
  double last_all_ = on_ ? cpu_ms(CLOCK_PROCESS_CPUTIME_ID) : 0;
};

}  // namespace sl
