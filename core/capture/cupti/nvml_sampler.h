// GPU counters through NVML, loaded at run time from the driver (libnvidia-ml.so.1), so the
// injection library has no link dependency on it. Absent NVML: one message, no counters.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/capture/activity_record.h"

namespace sl::capture {

class NvmlSampler {
public:
  using Sink = std::function<void(std::vector<ActivityRecord>&&)>;
  using Clock = uint64_t (*)();
  using Note = std::function<void(const std::string&)>;

  // Loads NVML and starts sampling every `interval_ms` on a thread. Returns "" or why not.
  // `note` receives later warnings (from the sampler thread).
  std::string start(unsigned interval_ms, Clock clock, Sink sink, Note note);
  void stop();  // joins the thread; safe to call twice
  ~NvmlSampler() { stop(); }

private:
  void run();
  bool resolve_ordinals(std::chrono::steady_clock::time_point deadline);
  void sample(uint64_t now, std::vector<ActivityRecord>& out);

  struct Api;
  Api* api_ = nullptr;
  void* lib_ = nullptr;
  std::vector<void*> devices_;
  std::vector<std::string> nvml_uuids_;  // by NVML index
  std::vector<int> ordinals_;            // NVML index → CUDA ordinal, -1 = not visible
  unsigned interval_ms_ = 10;
  Clock clock_ = nullptr;
  Sink sink_;
  Note note_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace sl::capture
