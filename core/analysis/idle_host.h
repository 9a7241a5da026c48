// What the launching thread did during a host-side window W of §2b (internal to idle_time.cpp):
// how much of W was data loading, blocking calls, capture/compile/warm-up, CPU work that launched
// nothing, and the top CPU events by self time. Indexed once per report, one entry per thread
// that launches GPU work.
#pragma once

#include <unordered_map>
#include <vector>

#include "core/analysis/idle_rules_input.h"
#include "core/analysis/interval_index.h"

namespace sl::analysis::detail {

// What W held, in ns of W (each measure on its own: they may overlap).
struct HostWindow {
  TimeNs length = 0;
  TimeNs data_loading = 0;  // any thread of the launching process
  TimeNs blocking = 0;      // synchronising calls and ops that wait for the GPU
  TimeNs capture = 0;       // stream capture, graph instantiation, compile/autotune/warm-up frames
  TimeNs compute = 0;       // CPU events that issued no GPU launch inside W
  bool any_event = false;   // some op or Python function of the thread overlaps W
  std::vector<HostEvent> top;  // up to 3, by self time in W
};

// One CPU thread's events (ops and Python functions; annotations and profiler spans are labels),
// sorted by start with parents first, and the starts of its launch calls.
struct ThreadWork {
  std::vector<TimeNs> ts, end;
  std::vector<StringId> name;
  std::vector<int32_t> parent;  // index of the enclosing event, -1 at the top
  std::vector<uint8_t> launch_call;  // a launch call itself (linked to GPU work, or named like one)
  std::vector<TimeNs> launches;  // launch call starts, sorted
  IntervalIndex blocking, capture;
};

// §2b rule 2's calls: synchronise, blocking copies and sets, ops that wait for the GPU.
bool is_blocking_call(std::string_view name);

class HostIndex {
public:
  // Indexes every thread in `threads` (the launching threads and their stand-ins).
  HostIndex(const EventTable& t, const IdleCauseOptions& o, const std::vector<uint32_t>& threads);

  // `top` false leaves HostWindow::top empty (the rest is the same).
  HostWindow window(uint32_t thread, TimeNs start, TimeNs end, bool top = true) const;
  // The same in two steps, for a caller that may stop at rules 1-3: the interval measures
  // (data loading, blocking, capture), then the events' (compute and any_event; with `compute`
  // false, any_event alone, which costs a search instead of a walk over W's events).
  HostWindow intervals(uint32_t thread, TimeNs start, TimeNs end) const;
  void add_events(uint32_t thread, TimeNs start, TimeNs end, bool compute, HostWindow& w) const;
  // Host work (ops, runtime calls; no Python frames or labels) of a stand-in thread in [start, end).
  TimeNs worked(uint32_t thread, TimeNs start, TimeNs end) const;
  bool stream_wait_between(uint32_t thread, TimeNs lo, TimeNs hi) const;  // a cudaStreamWaitEvent call
  bool gpu_stream_wait_between(int64_t stream, TimeNs lo, TimeNs hi) const;  // a `Stream Wait Event`

private:
  void measure_events(const ThreadWork& w, TimeNs start, TimeNs end, bool top, HostWindow& out) const;
  static bool any_event(const ThreadWork& w, TimeNs start, TimeNs end);

  const EventTable& t_;
  std::unordered_map<uint32_t, IntervalIndex> data_loading_by_process_;
  std::unordered_map<uint32_t, ThreadWork> threads_;
  std::unordered_map<uint32_t, IntervalIndex> work_by_track_;  // stand-in coverage
  std::unordered_map<uint32_t, std::vector<TimeNs>> stream_waits_by_track_;  // starts, sorted
  std::unordered_map<int64_t, std::vector<TimeNs>> gpu_stream_waits_;        // by stream
  mutable std::vector<TimeNs> self_by_name_;  // measure_events' scratch, zero between calls
  struct Scratch {  // measure_events' columns, per event overlapping the window
    std::vector<uint32_t> events;
    std::vector<TimeNs> self;
    std::vector<uint8_t> launched;
    std::vector<ptrdiff_t> parent_slot;
  };
  mutable Scratch scratch_;
};

}  // namespace sl::analysis::detail
