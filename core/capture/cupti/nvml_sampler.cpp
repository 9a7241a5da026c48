#include "core/capture/cupti/nvml_sampler.h"

#include <dlfcn.h>

#include <chrono>

#include "core/capture/device_match.h"

namespace sl::capture {

// The few NVML entry points used, declared here (their C ABI is stable since NVML 4).
struct NvmlUtilization {
  unsigned gpu, memory;
};
struct NvmlMemory {
  unsigned long long total, free, used;
};
using NvmlDevice = void*;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlTemperatureGpu = 0;

struct NvmlSampler::Api {
  int (*init)();
  int (*shutdown)();
  int (*count)(unsigned*);
  int (*handle)(unsigned, NvmlDevice*);
  int (*clock)(NvmlDevice, int, unsigned*);
  int (*power)(NvmlDevice, unsigned*);
  int (*power_limit)(NvmlDevice, unsigned*);
  int (*utilization)(NvmlDevice, NvmlUtilization*);
  int (*memory)(NvmlDevice, NvmlMemory*);
  int (*temperature)(NvmlDevice, int, unsigned*);
  int (*uuid)(NvmlDevice, char*, unsigned);  // optional
};

namespace {
template <class F>
bool bind(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  return out != nullptr;
}
}  // namespace

std::string NvmlSampler::start(unsigned interval_ms, Clock clock, Sink sink, Note note) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return "NVML (libnvidia-ml.so.1) not found: no GPU counters";
  api_ = new Api{};
  Api& a = *api_;
  bool ok = bind(lib_, "nvmlInit_v2", a.init) && bind(lib_, "nvmlShutdown", a.shutdown) &&
            bind(lib_, "nvmlDeviceGetCount_v2", a.count) && bind(lib_, "nvmlDeviceGetHandleByIndex_v2", a.handle) &&
            bind(lib_, "nvmlDeviceGetClockInfo", a.clock) && bind(lib_, "nvmlDeviceGetPowerUsage", a.power) &&
            bind(lib_, "nvmlDeviceGetEnforcedPowerLimit", a.power_limit) &&
            bind(lib_, "nvmlDeviceGetUtilizationRates", a.utilization) &&
            bind(lib_, "nvmlDeviceGetMemoryInfo", a.memory) && bind(lib_, "nvmlDeviceGetTemperature", a.temperature);
  if (!ok) return "NVML lacks an expected function: no GPU counters";
  bind(lib_, "nvmlDeviceGetUUID", a.uuid);
  if (a.init() != 0) return "NVML failed to initialise: no GPU counters";
  unsigned n = 0;
  if (a.count(&n) != 0 || n == 0) return "NVML sees no GPU: no GPU counters";
  for (unsigned i = 0; i < n; ++i) {
    NvmlDevice d = nullptr;
    devices_.push_back(a.handle(i, &d) == 0 ? d : nullptr);
    char uuid[96] = {};
    nvml_uuids_.push_back(d && a.uuid && a.uuid(d, uuid, sizeof uuid) == 0 ? uuid : "");
  }
  interval_ms_ = interval_ms ? interval_ms : 10;
  clock_ = clock;
  sink_ = std::move(sink);
  note_ = std::move(note);
  thread_ = std::thread([this] { run(); });
  return "";
}

void NvmlSampler::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (api_ && !devices_.empty()) api_->shutdown();
  devices_.clear();
  // The library stays loaded: unloading a driver library at exit gains nothing and risks a crash.
}

namespace {

// The program's CUDA devices' UUIDs, by ordinal; empty until cuInit has finished (this runs on the
// sampler thread, which InitializeInjection starts from inside cuInit) or if the driver lacks them.
std::vector<std::string> cuda_uuids() {
  // The driver is already loaded (it loaded us); RTLD_NOLOAD only looks it up.
  static void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using Uuid = int (*)(uint8_t (*)[16], int);
  Count count = nullptr;
  Get get = nullptr;
  Uuid uuid = nullptr;
  if (!driver || !bind(driver, "cuDeviceGetCount", count) || !bind(driver, "cuDeviceGet", get)) return {};
  if (!bind(driver, "cuDeviceGetUuid_v2", uuid) && !bind(driver, "cuDeviceGetUuid", uuid)) return {};
  int n = 0;
  if (count(&n) != 0) return {};
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    int device = 0;
    uint8_t bytes[16] = {};
    if (get(&device, i) != 0 || uuid(&bytes, device) != 0) return {};
    out.push_back(format_gpu_uuid(bytes));
  }
  return out;
}

}  // namespace

// Samples are labelled with CUDA ordinals, the device ids the trace uses, so counters sit under
// the GPU they measure even when CUDA_VISIBLE_DEVICES hides or reorders GPUs. GPUs the program
// cannot see are not sampled. Without UUIDs (old driver, cuInit never finishing within 2 s),
// NVML index i is taken as CUDA device i, and a message says so.
bool NvmlSampler::resolve_ordinals(std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> cuda = cuda_uuids();
  if (!cuda.empty()) {
    ordinals_ = cuda_ordinals_for_nvml(nvml_uuids_, cuda);
    bool any = false;
    for (int o : ordinals_) any |= o >= 0;
    if (any) return true;
  }
  if (std::chrono::steady_clock::now() < deadline) return false;
  ordinals_.clear();
  for (size_t i = 0; i < devices_.size(); ++i) ordinals_.push_back(int(i));
  note_("NVML devices could not be matched to CUDA devices by UUID: NVML index i is labelled CUDA device i");
  return true;
}

void NvmlSampler::run() {
  auto next = std::chrono::steady_clock::now();
  const auto deadline = next + std::chrono::seconds(2);
  while (!stop_ && !resolve_ordinals(deadline)) {
    next += std::chrono::milliseconds(interval_ms_);
    std::this_thread::sleep_until(next);
  }
  std::vector<ActivityRecord> batch;
  while (!stop_) {
    sample(clock_(), batch);
    // Hand over about every 100 ms: fewer, larger batches.
    if (batch.size() >= devices_.size() * 8 * (100 / interval_ms_ + 1)) sink_(std::move(batch)), batch.clear();
    next += std::chrono::milliseconds(interval_ms_);
    std::this_thread::sleep_until(next);
  }
  if (!batch.empty()) sink_(std::move(batch));
}

void NvmlSampler::sample(uint64_t now, std::vector<ActivityRecord>& out) {
  const Api& a = *api_;
  auto add = [&](uint32_t device, const char* series, double value) {
    ActivityRecord& r = out.emplace_back();
    r.kind = ActivityKind::Counter;
    r.device = device;
    r.start = r.end = now;
    r.name = series;
    r.number = value;
  };
  for (size_t n = 0; n < devices_.size(); ++n) {
    NvmlDevice d = devices_[n];
    if (!d || ordinals_[n] < 0) continue;
    const uint32_t i = uint32_t(ordinals_[n]);
    unsigned v = 0;
    if (a.clock(d, kNvmlClockSm, &v) == 0) add(i, "SM clock (MHz)", v);
    if (a.clock(d, kNvmlClockMem, &v) == 0) add(i, "memory clock (MHz)", v);
    if (a.power(d, &v) == 0) add(i, "power draw (W)", v / 1000.0);
    if (a.power_limit(d, &v) == 0) add(i, "power limit (W)", v / 1000.0);
    NvmlUtilization u{};
    if (a.utilization(d, &u) == 0) add(i, "GPU utilization (%)", u.gpu), add(i, "memory utilization (%)", u.memory);
    NvmlMemory m{};
    if (a.memory(d, &m) == 0) add(i, "memory used (MiB)", double(m.used) / (1024.0 * 1024.0));
    if (a.temperature(d, kNvmlTemperatureGpu, &v) == 0) add(i, "temperature (C)", v);
  }
}

}  // namespace sl::capture
