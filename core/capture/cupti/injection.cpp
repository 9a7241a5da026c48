// libsightline_cupti.so: loaded by the CUDA driver through CUDA_INJECTION64_PATH, which calls
// InitializeInjection() from cuInit. Records CUPTI activity and NVML samples and writes them
// as live-protocol frames (core/capture/live_protocol.h) to SIGHTLINE_CAPTURE_OUT (a file) or
// SIGHTLINE_CAPTURE_SOCKET (a Unix socket a viewer listens on).
//
// Rule one: the captured program must never crash or hang because of this library. Every
// CUPTI call is checked; the first failure is printed once and capture stops (the program runs
// on). Buffers and queues are bounded and what does not fit is counted as dropped. Socket
// writes time out. A forked child does not capture (and never writes into the parent's file).
#include <cupti.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/capture/cupti/nvml_sampler.h"
#include "core/capture/live_protocol.h"

namespace sl::capture {
namespace {

constexpr size_t kBufferBytes = 8u << 20;       // one CUPTI activity buffer
constexpr size_t kAlign = 8;
constexpr size_t kMaxPendingRecords = 2'000'000;  // records waiting to be written
constexpr int kSocketTimeoutMs = 2000;

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}
int64_t wall_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000ll + ts.tv_nsec;
}
uint64_t CUPTIAPI cupti_clock() { return monotonic_ns(); }

unsigned env_uint(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  unsigned long n = std::strtoul(v, &end, 10);
  return *end ? fallback : unsigned(n);
}

// "cudaLaunchKernel_v7000" → "cudaLaunchKernel", as Kineto shows API names.
std::string api_name(CUpti_CallbackDomain domain, uint32_t cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return {};
  std::string s(name);
  size_t v = s.rfind("_v");
  if (v != std::string::npos && v + 2 < s.size() && s.find_first_not_of("0123456789", v + 2) == std::string::npos)
    s.resize(v);
  return s;
}

const char* overhead_name(CUpti_ActivityOverheadKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: return "Driver compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: return "CUPTI buffer flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: return "CUPTI instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: return "CUPTI resource";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING: return "Lazy function loading";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST: return "CUPTI buffer request";
    default: return "CUPTI overhead";
  }
}

class Session {
public:
  static Session& get() {
    static Session* s = new Session;  // never destroyed: atexit and CUPTI threads may outlive statics
    return *s;
  }

  void start();
  // Starts; when CUPTI refuses, closes the stream with the reason so `capture` can report it.
  void start_or_explain() {
    start();
    if (active_ || fd_ < 0) return;
    drain(true);
    write_all(encode_end());
    ::close(fd_);
    fd_ = -1;
  }
  void at_exit();
  void forked_child() { child_ = true, active_ = false; }

  void* request_buffer();
  void complete_buffer(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid);
  void push(std::vector<ActivityRecord>&& records);

private:
  bool check(CUptiResult r, const char* what);
  void fail(const std::string& message);
  bool open_output();
  bool write_all(const std::string& bytes);
  void writer_loop();
  void drain(bool final);
  void convert(const CUpti_Activity* a, std::vector<ActivityRecord>& out);

  std::atomic<bool> active_{false}, stopping_{false}, output_ok_{true};
  std::atomic<bool> failed_{false};
  bool child_ = false;
  int fd_ = -1;
  bool socket_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<ActivityRecord> pending_;
  DropStats drops_;
  std::atomic<size_t> buffers_out_{0};
  size_t max_buffers_ = 64;
  unsigned flush_ms_ = 200;
  bool own_clock_ = false;
  std::unordered_map<uint32_t, uint32_t> context_device_;  // for records that name only a context
  std::vector<std::string> messages_;
  std::vector<DeviceInfo> new_devices_;
  std::thread writer_;
  NvmlSampler nvml_;
  std::mutex write_mutex_;
  std::mutex convert_mutex_;
};

void CUPTIAPI on_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *max_records = 0;
  *buffer = static_cast<uint8_t*>(Session::get().request_buffer());
  *size = *buffer ? kBufferBytes : 0;
}

void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t, size_t valid) {
  Session::get().complete_buffer(ctx, stream, buffer, valid);
}

void fail_message(const std::string& m) { std::fprintf(stderr, "sightline capture: %s\n", m.c_str()); }

void Session::fail(const std::string& message) {
  if (failed_.exchange(true)) return;  // the first failure only: never flood the program's stderr
  fail_message(message + "; capture stopped, the program continues");
  active_ = false;
  std::lock_guard lock(mutex_);
  messages_.push_back(message);
}

bool Session::check(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown error";
  fail(std::string(what) + " failed: " + text);
  return false;
}

bool Session::open_output() {
  if (const char* path = std::getenv("SIGHTLINE_CAPTURE_SOCKET"); path && *path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof addr.sun_path) return fail_message("socket path too long"), false;
    std::strcpy(addr.sun_path, path);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      fail_message(std::string("cannot connect to the viewer at ") + path + ": " + std::strerror(errno));
      return false;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    socket_ = true;
    return true;
  }
  const char* path = std::getenv("SIGHTLINE_CAPTURE_OUT");
  if (!path || !*path) return fail_message("neither SIGHTLINE_CAPTURE_OUT nor SIGHTLINE_CAPTURE_SOCKET is set"), false;
  fd_ = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return fail_message(std::string("cannot write ") + path + ": " + std::strerror(errno)), false;
  return true;
}

// Writes everything or gives up (peer gone, or a viewer not reading for kSocketTimeoutMs):
// never blocks the program for long, never raises SIGPIPE.
bool Session::write_all(const std::string& bytes) {
  if (!output_ok_) return false;
  std::lock_guard lock(write_mutex_);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = socket_ ? ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL)
                        : ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && socket_ && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      if (::poll(&p, 1, kSocketTimeoutMs) > 0) continue;
      errno = ETIMEDOUT;
    }
    output_ok_ = false;
    fail_message(std::string("writing the capture failed (") + std::strerror(errno) + "); later records are lost");
    return false;
  }
  return true;
}

void Session::start() {
  flush_ms_ = env_uint("SIGHTLINE_CAPTURE_FLUSH_MS", 200);
  max_buffers_ = env_uint("SIGHTLINE_CAPTURE_MAX_BUFFERS", 64);
  if (!open_output()) return;
  CaptureInfo info;
  info.pid = uint32_t(::getpid());
  if (FILE* f = std::fopen("/proc/self/comm", "r")) {
    char name[64] = {};
    if (std::fgets(name, sizeof name, f)) info.process_name = std::string(name, strcspn(name, "\n"));
    std::fclose(f);
  }
  cuptiGetVersion(&info.cupti_version);
  using DriverVersion = int (*)(int*);
  // The driver loaded us, so it is there; RTLD_DEFAULT would miss it when it was loaded RTLD_LOCAL.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (auto get = driver ? reinterpret_cast<DriverVersion>(dlsym(driver, "cuDriverGetVersion")) : nullptr) {
    int v = 0;
    if (get(&v) == 0) info.cuda_driver_version = uint32_t(v);
  }
  // One clock for GPU activity, API calls and NVML samples: CLOCK_MONOTONIC, when CUPTI lets
  // us supply it; otherwise CUPTI's own clock (and NVML samples read it too).
  own_clock_ = cuptiActivityRegisterTimestampCallback(cupti_clock) == CUPTI_SUCCESS;
  if (!own_clock_) cuptiGetTimestamp(&info.clock_base_ns);
  else info.clock_base_ns = monotonic_ns();
  info.wall_base_ns = wall_ns();
  if (!write_all(encode_hello(info))) return;

  if (!check(cuptiActivityRegisterCallbacks(on_request, on_complete), "cuptiActivityRegisterCallbacks")) return;
  const CUpti_ActivityKind kinds[] = {
      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,    CUPTI_ACTIVITY_KIND_MEMSET,
      CUPTI_ACTIVITY_KIND_RUNTIME,           CUPTI_ACTIVITY_KIND_DRIVER,    CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
      CUPTI_ACTIVITY_KIND_MARKER,            CUPTI_ACTIVITY_KIND_OVERHEAD,  CUPTI_ACTIVITY_KIND_CUDA_EVENT,
      CUPTI_ACTIVITY_KIND_DEVICE,            CUPTI_ACTIVITY_KIND_CONTEXT};
  for (CUpti_ActivityKind k : kinds) {
    CUptiResult r = cuptiActivityEnable(k);
    // Optional kinds an older driver lacks: note it and go on; the core kinds must work.
    if (r != CUPTI_SUCCESS && (k == CUPTI_ACTIVITY_KIND_CUDA_EVENT || k == CUPTI_ACTIVITY_KIND_OVERHEAD ||
                               k == CUPTI_ACTIVITY_KIND_MARKER || k == CUPTI_ACTIVITY_KIND_DEVICE)) {
      messages_.push_back("activity kind " + std::to_string(int(k)) + " unavailable");
      continue;
    }
    if (!check(r, "cuptiActivityEnable")) return;
  }
  active_ = true;
  pthread_atfork(nullptr, nullptr, [] { Session::get().forked_child(); });
  std::atexit([] { Session::get().at_exit(); });
  writer_ = std::thread([this] { writer_loop(); });
  if (env_uint("SIGHTLINE_CAPTURE_NVML", 1)) {
    NvmlSampler::Clock clock = own_clock_ ? &monotonic_ns : +[]() -> uint64_t {
      uint64_t t = 0;
      cuptiGetTimestamp(&t);
      return t;
    };
    auto note = [this](const std::string& m) {
      std::lock_guard lock(mutex_);
      messages_.push_back(m);
    };
    std::string why = nvml_.start(env_uint("SIGHTLINE_NVML_INTERVAL_MS", 10), clock,
                                  [this](std::vector<ActivityRecord>&& r) { push(std::move(r)); }, note);
    if (!why.empty()) {
      fail_message(why);
      std::lock_guard lock(mutex_);
      messages_.push_back(why);
    }
  }
}

void* Session::request_buffer() {
  // Bounded: past max_buffers_ CUPTI gets no buffer and drops records (counted by CUPTI).
  if (!active_ || buffers_out_ >= max_buffers_) return nullptr;
  void* p = std::aligned_alloc(kAlign, kBufferBytes);
  if (p) ++buffers_out_;
  return p;
}

void Session::complete_buffer(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t valid) {
  std::vector<ActivityRecord> records;
  if (!child_ && buffer && valid) {
    std::lock_guard convert_lock(convert_mutex_);  // CUPTI may complete buffers on two threads
    CUpti_Activity* a = nullptr;
    for (;;) {
      CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &a);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (!check(r, "cuptiActivityGetNextRecord")) break;
      convert(a, records);
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
      std::lock_guard lock(mutex_);
      drops_.dropped_cupti += dropped;
    }
  }
  if (buffer) {
    std::free(buffer);
    --buffers_out_;
  }
  if (!records.empty()) push(std::move(records));
}

void Session::push(std::vector<ActivityRecord>&& records) {
  std::lock_guard lock(mutex_);
  size_t room = pending_.size() < kMaxPendingRecords ? kMaxPendingRecords - pending_.size() : 0;
  if (records.size() > room) {
    drops_.dropped_buffer += records.size() - room;
    records.resize(room);
  }
  pending_.insert(pending_.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
  if (pending_.size() > 65536) wake_.notify_one();
}

void Session::convert(const CUpti_Activity* a, std::vector<ActivityRecord>& out) {
  ActivityRecord r;
  switch (a->kind) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL: {
      auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(a);
      r.kind = ActivityKind::Kernel;
      r.start = k->start, r.end = k->end, r.correlation = k->correlationId;
      r.device = k->deviceId, r.context = k->contextId, r.stream = k->streamId;
      r.grid[0] = k->gridX, r.grid[1] = k->gridY, r.grid[2] = k->gridZ;
      r.block[0] = k->blockX, r.block[1] = k->blockY, r.block[2] = k->blockZ;
      r.registers = k->registersPerThread;
      r.static_shared = uint32_t(k->staticSharedMemory), r.dynamic_shared = uint32_t(k->dynamicSharedMemory);
      if (k->name) r.name = k->name;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(a);
      r.kind = ActivityKind::Memcpy;
      r.start = m->start, r.end = m->end, r.correlation = m->correlationId;
      r.device = m->deviceId, r.context = m->contextId, r.stream = m->streamId;
      r.copy_kind = m->copyKind, r.src_kind = m->srcKind, r.dst_kind = m->dstKind, r.bytes = m->bytes;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(a);
      r.kind = ActivityKind::Memset;
      r.start = m->start, r.end = m->end, r.correlation = m->correlationId;
      r.device = m->deviceId, r.context = m->contextId, r.stream = m->streamId;
      r.dst_kind = uint8_t(m->memoryKind), r.bytes = m->bytes, r.value = m->value;
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(a);
      bool runtime = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
      r.kind = runtime ? ActivityKind::Runtime : ActivityKind::Driver;
      r.start = api->start, r.end = api->end, r.correlation = api->correlationId;
      r.pid = api->processId, r.tid = api->threadId, r.cbid = api->cbid;
      r.name = api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, api->cbid);
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      auto* s = reinterpret_cast<const CUpti_ActivitySynchronization2*>(a);
      r.kind = ActivityKind::Synchronization;
      r.start = s->start, r.end = s->end, r.correlation = s->correlationId;
      r.context = s->contextId, r.stream = s->streamId, r.sync_kind = uint8_t(s->type), r.id = s->cudaEventId;
      auto it = context_device_.find(s->contextId);
      r.device = it == context_device_.end() ? 0 : it->second;
      break;
    }
    case CUPTI_ACTIVITY_KIND_CUDA_EVENT: {
      auto* e = reinterpret_cast<const CUpti_ActivityCudaEvent2*>(a);
      r.kind = ActivityKind::CudaEvent;
      r.correlation = e->correlationId, r.context = e->contextId, r.stream = e->streamId;
      r.device = e->deviceId, r.id = e->eventId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(a);
      r.kind = ActivityKind::Marker;
      r.flags = uint32_t(m->flags), r.start = r.end = m->timestamp, r.id = m->id;
      if (m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || m->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
        r.pid = m->objectId.pt.processId, r.tid = m->objectId.pt.threadId;
      if (m->name) r.name = m->name;
      if (m->domain) r.domain = m->domain;
      break;
    }
    case CUPTI_ACTIVITY_KIND_OVERHEAD: {
      auto* o = reinterpret_cast<const CUpti_ActivityOverhead3*>(a);
      r.kind = ActivityKind::Overhead;
      r.start = o->start, r.end = o->end, r.name = overhead_name(o->overheadKind);
      if (o->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD || o->objectKind == CUPTI_ACTIVITY_OBJECT_PROCESS)
        r.pid = o->objectId.pt.processId, r.tid = o->objectId.pt.threadId;
      break;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      auto* c = reinterpret_cast<const CUpti_ActivityContext3*>(a);
      context_device_[c->contextId] = c->deviceId;
      return;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(a);
      DeviceInfo info;
      info.id = d->id;
      if (d->name) info.name = d->name;
      info.total_global_mem = d->globalMemorySize;
      info.compute_major = d->computeCapabilityMajor, info.compute_minor = d->computeCapabilityMinor;
      info.num_sms = d->numMultiprocessors;
      info.max_threads_per_block = d->maxThreadsPerBlock;
      info.max_threads_per_sm = d->maxWarpsPerMultiprocessor * d->numThreadsPerWarp;
      info.regs_per_block = d->maxRegistersPerBlock, info.regs_per_sm = d->maxRegistersPerMultiprocessor;
      info.warp_size = d->numThreadsPerWarp;
      info.shared_mem_per_block = d->maxSharedMemoryPerBlock;
      info.shared_mem_per_sm = d->maxSharedMemoryPerMultiprocessor;
      std::lock_guard lock(mutex_);
      new_devices_.push_back(std::move(info));
      return;
    }
    default: return;
  }
  out.push_back(std::move(r));
}

// Takes what is pending and writes it as frames.
void Session::drain(bool final) {
  std::vector<ActivityRecord> batch;
  std::vector<DeviceInfo> devices;
  std::vector<std::string> messages;
  DropStats drops;
  {
    std::lock_guard lock(mutex_);
    batch.swap(pending_);
    devices.swap(new_devices_);
    messages.swap(messages_);
    drops_.records += batch.size();
    drops = drops_;
  }
  if (!devices.empty()) write_all(encode_devices(devices));
  for (const std::string& m : messages) write_all(encode_message(m));
  constexpr size_t kBatch = 100'000;  // well under kMaxPayload
  for (size_t i = 0; i < batch.size(); i += kBatch)
    write_all(encode_records(std::span(batch).subspan(i, std::min(kBatch, batch.size() - i))));
  if (!batch.empty() || final) write_all(encode_stats(drops));
}

void Session::writer_loop() {
  while (!stopping_) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(flush_ms_));
    }
    if (stopping_ || child_) break;
    // Completed buffers arrive on CUPTI's thread; this asks for partly filled ones too, so a
    // live viewer sees recent work and a crash loses at most one flush period.
    if (active_) cuptiActivityFlushAll(0);
    drain(false);
  }
}

void Session::at_exit() {
  if (child_ || stopping_.exchange(true)) return;
  wake_.notify_all();
  if (writer_.joinable()) writer_.join();
  nvml_.stop();
  if (active_) {
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS) fail_message("the final CUPTI flush failed; the last records may be missing");
  }
  active_ = false;
  drain(true);
  write_all(encode_end());
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace
}  // namespace sl::capture

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, [] { sl::capture::Session::get().start_or_explain(); });
  return 1;  // never fail the program's cuInit because of capture
}
