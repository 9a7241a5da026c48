// Names for people: what the timeline, the figures and their tooltips call a process or a track.
// A process or thread without a useful name gets one from what it holds ("Python main thread",
// "PyTorch profiler spans"); the raw pid/tid go to the tooltip (raw_ids).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/store/trace_store.h"

namespace sl {

// A process group's header: "GPU 0 · NVIDIA H100", "python3 19392", "PyTorch profiler spans",
// "Python process 42", "markers" (instants only), or "process 42" when nothing better is known.
std::string process_display_name(const TraceStore& store, uint32_t process);
// A row inside its process group: "stream 7", "device-wide", the thread's own name, or one
// derived from its slices ("Python main thread", "Python thread", "main thread", "autograd
// thread"), else "thread TID".
std::string track_display_name(const TraceStore& store, uint32_t track);
// The row's name outside its group (pinned rows, tooltips): "GPU 0 stream 7", else as above.
std::string track_full_name(const TraceStore& store, uint32_t track);
// The raw ids as the trace writes them, for tooltips: "pid 19392 · tid 19392".
std::string track_raw_ids(const TraceStore& store, uint32_t track);
// Per process, the tracks its group shows, in order: its own, except CPU threads filed under a
// GPU's pid (Kineto writes its Python events with pid 0, the GPU's pid), which join the host's
// group (the process, no GPU's, with the most CPU slices) after its own threads. A group is what
// its tracks hold, CPU events or GPU activity, not the pid alone; track_raw_ids keeps the raw
// pid/tid. Where no host process exists such a thread stays where the trace filed it.
std::vector<std::vector<uint32_t>> display_groups(const TraceStore& store);

// True when any of the process's tracks holds slices or instants, or it has counters: a process
// without is not shown as an (empty) group.
bool process_has_content(const TraceStore& store, uint32_t process);

}  // namespace sl
