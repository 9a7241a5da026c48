#include "core/names/track_names.h"

#include <algorithm>
#include <cctype>

namespace sl {
namespace {

// How many of a thread's first slices are looked at to tell what it holds: a Python thread
// recorded with_stack has python_function frames from its first slices on; a bounded look keeps
// naming cheap enough to do every frame.
constexpr uint32_t kSlicesLooked = 256;

// A device's pid: it holds a GPU stream with work (Kineto also files host threads there).
bool is_gpu_process(const TraceStore& store, const Process& p) {
  return std::any_of(p.tracks.begin(), p.tracks.end(), [&](uint32_t t) {
    return store.tracks[t].kind == TrackKind::GpuStream && store.tracks[t].gpu_work;
  });
}

// Among the first kSlicesLooked slices of `track`, one with category `cat`.
bool holds_category(const TraceStore& store, const Track& track, std::string_view cat) {
  StringId id = store.strings.find(cat);
  if (id == StringPool::kNotFound) return false;
  const auto& cats = track.slices.cat;
  return std::find(cats.begin(), cats.begin() + std::min<size_t>(cats.size(), kSlicesLooked), id) !=
         cats.begin() + std::min<size_t>(cats.size(), kSlicesLooked);
}

// Among the first kSlicesLooked slices of `track`, autograd's work: its engine's frames
// ("autograd::engine::evaluate_function: AddBackward0", "torch::autograd::AccumulateGrad") or a
// backward node ("NllLossBackward").
bool holds_autograd(const TraceStore& store, const Track& track) {
  uint32_t n = std::min<uint32_t>(uint32_t(track.slices.size()), kSlicesLooked);
  for (uint32_t i = 0; i < n; ++i) {
    std::string_view name = store.strings.view(track.slices.name[i]);
    if (name.starts_with("autograd::") || name.starts_with("torch::autograd::") ||
        name.find("Backward") != std::string_view::npos)
      return true;
  }
  return false;
}

// A thread name that says no more than its id: "", "12", "thread 12", "thread 12 (python3)".
bool says_only_its_id(std::string_view name, std::string_view tid) {
  if (name.empty() || name == tid) return true;
  std::string plain = "thread " + std::string(tid);
  return name == plain || (name.size() > plain.size() + 2 && name.substr(0, plain.size() + 2) == plain + " (");
}

std::string thread_name_from_content(const TraceStore& store, const Track& t) {
  const Process& p = store.processes[t.process];
  // The main thread's tid is its pid (compared as written: Kineto writes some tids as strings).
  // A device's pid (Kineto files some host threads there) has no main thread.
  bool main = store.strings.view(t.tid_text) == store.strings.view(p.pid_text) && !is_gpu_process(store, p);
  if (holds_category(store, t, "python_function")) return main ? "Python main thread" : "Python thread";
  if (main) return "main thread";
  if (holds_autograd(store, t)) return "autograd thread";
  return "thread " + std::string(store.strings.view(t.tid_text));
}

// A GPU row named with its CUDA context by the Nsight loader (core/import/nsys/NSIGHT.md): the streams of a
// device used through several contexts, or a stream number two owners share ("stream 3 (context
// 2)", "stream 7 (pid 4242, context 1)", "context-wide (context 2)"). Shown as named: as "stream
// N" two rows could read the same. Kineto names carry no context and keep the plain label.
bool names_its_context(std::string_view name) {
  return name.ends_with(")") && (name.find(" (context ") != std::string_view::npos ||
                                 name.find(", context ") != std::string_view::npos);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string process_display_name(const TraceStore& store, uint32_t process) {
  const Process& p = store.processes[process];
  std::string pid(store.strings.view(p.pid_text));
  if (is_gpu_process(store, p)) {
    int64_t device = -1;
    for (uint32_t t : p.tracks)
      if (store.tracks[t].kind == TrackKind::GpuStream && device < 0) device = store.tracks[t].device;
    std::string label = "GPU " + std::to_string(device);
    for (const Device& d : store.meta.devices)
      if (d.id == device && !d.name.empty()) label += " · " + d.name;
    return label;
  }
  std::string_view name = store.strings.view(p.name);
  if (!name.empty()) return pid.empty() ? std::string(name) : std::string(name) + " " + pid;
  // Kineto's own spans live under a textual pid ("Spans", "Traces") in a "PyTorch Profiler" track.
  for (uint32_t t : p.tracks)
    for (StringId text : {store.tracks[t].name, store.tracks[t].tid_text})
      if (lower(std::string(store.strings.view(text))).find("pytorch profiler") != std::string::npos)
        return "PyTorch profiler " + lower(pid);
  if (!p.pid_is_number && !pid.empty()) return pid;
  bool slices = false;
  for (uint32_t t : p.tracks) slices |= store.tracks[t].slices.size() > 0;
  if (!slices) return pid.empty() ? "markers" : "markers " + pid;  // instants only (global ones have no pid)
  for (uint32_t t : p.tracks)
    if (store.tracks[t].kind == TrackKind::CpuThread && holds_category(store, store.tracks[t], "python_function"))
      return "Python process " + pid;
  return "process " + pid;
}

std::string track_display_name(const TraceStore& store, uint32_t track) {
  const Track& t = store.tracks[track];
  std::string_view name = store.strings.view(t.name);
  if (t.kind == TrackKind::GpuStream && names_its_context(name)) return std::string(name);
  if (t.kind == TrackKind::GpuStream && t.gpu_work && t.stream >= 0) return "stream " + std::to_string(t.stream);
  if (t.kind == TrackKind::GpuStream && t.stream < 0) return "device-wide";
  if (t.kind == TrackKind::Async) return name.empty() ? "async spans" : std::string(name);
  std::string_view tid = store.strings.view(t.tid_text);
  // A textual tid ("PyTorch Profiler") names itself; a number written as a string does not.
  bool numeric = !tid.empty() && tid.find_first_not_of("-0123456789") == std::string_view::npos;
  if ((name.empty() || name == tid) && !t.tid_is_number && !numeric) return std::string(tid);
  if (says_only_its_id(name, tid)) return thread_name_from_content(store, t);
  // Thread pools name every worker alike ("pt_thread_pool" six times): the tid tells rows apart.
  // Only the stored name is compared (an id per track), so a frame's labels stay cheap.
  for (uint32_t other : store.processes[t.process].tracks)
    if (other != track && store.tracks[other].name == t.name && store.tracks[other].kind == t.kind)
      return std::string(name) + " (tid " + std::string(tid) + ")";
  return std::string(name);
}

std::vector<std::vector<uint32_t>> display_groups(const TraceStore& store) {
  std::vector<std::vector<uint32_t>> groups(store.processes.size());
  std::vector<uint8_t> gpu(store.processes.size());
  uint32_t host = kNone;
  uint64_t host_slices = 0;
  for (uint32_t p = 0; p < store.processes.size(); ++p) {
    gpu[p] = is_gpu_process(store, store.processes[p]);
    if (gpu[p]) continue;
    uint64_t slices = 0;
    for (uint32_t t : store.processes[p].tracks)
      if (store.tracks[t].kind == TrackKind::CpuThread) slices += store.tracks[t].slices.size();
    if (slices > host_slices) host = p, host_slices = slices;
  }
  std::vector<uint32_t> moved;
  for (uint32_t p = 0; p < store.processes.size(); ++p)
    for (uint32_t t : store.processes[p].tracks) {
      bool cpu_under_gpu = gpu[p] && host != kNone && store.tracks[t].kind == TrackKind::CpuThread && store.tracks[t].slices.size();
      (cpu_under_gpu ? moved : groups[p]).push_back(t);
    }
  for (uint32_t t : moved) groups[host].push_back(t);
  return groups;
}

std::string track_full_name(const TraceStore& store, uint32_t track) {
  const Track& t = store.tracks[track];
  if (t.kind == TrackKind::GpuStream && names_its_context(store.strings.view(t.name)))
    return "GPU " + std::to_string(t.device) + " " + track_display_name(store, track);
  if (t.kind == TrackKind::GpuStream && t.gpu_work && t.stream >= 0)
    return "GPU " + std::to_string(t.device) + " stream " + std::to_string(t.stream);
  return track_display_name(store, track);
}

std::string track_raw_ids(const TraceStore& store, uint32_t track) {
  const Track& t = store.tracks[track];
  std::string ids = "pid " + std::string(store.strings.view(store.processes[t.process].pid_text)) + " · tid " +
                    std::string(store.strings.view(t.tid_text));
  std::string_view name = store.strings.view(t.name);
  std::string_view tid = store.strings.view(t.tid_text);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);  // Kineto writes "stream 7 "
  if (!name.empty() && name != tid && name != track_display_name(store, track) && name != track_full_name(store, track)) ids += " · named \"" + std::string(name) + "\"";
  return ids;
}

bool process_has_content(const TraceStore& store, uint32_t process) {
  for (uint32_t t : store.processes[process].tracks)
    if (store.tracks[t].slices.size() || store.tracks[t].instants.size()) return true;
  for (const CounterSeries& c : store.counters)
    if (c.process == process) return true;
  return false;
}

}  // namespace sl
