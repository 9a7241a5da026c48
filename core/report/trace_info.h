// The `info` summary of a loaded trace: counts, span, devices, iterations, import issues.
#pragma once

#include <optional>
#include <string>

#include "core/store/trace_store.h"

namespace sl {

struct TraceSummary {
  uint64_t processes = 0, threads = 0, gpu_streams = 0, async_tracks = 0, counter_series = 0;
  uint64_t slices = 0, instants = 0, gpu_activities = 0, kernels = 0, launch_links = 0, flows_bound = 0;
};

TraceSummary summarize(const TraceStore& store);

// The two extents a trace is measured by, each named wherever it is printed (info, the report's
// headline), so that two outputs never call different things "span":
//   trace span: first to last event of any kind, as recorded (Kineto's own markers included);
//   GPU window: first start to last end of GPU activity (kernels, copies, sets, GPU annotations).
TimeNs trace_span(const TraceStore& store);
struct TimeWindow {
  TimeNs start = 0, end = 0;  // store-relative
  TimeNs length() const { return end - start; }
};
std::optional<TimeWindow> gpu_window(const TraceStore& store);  // none without GPU activity
// What info prints for a device: its name, or, where the trace left the name empty, what is known
// ("(unnamed; AMD, compute capability 9.4)": the vendor from the HIP/CUDA runtime's calls or the
// wavefront size, the compute capability from deviceProperties); "(unnamed)" when nothing is.
std::string device_description(const TraceStore& store, const Device& device);

// The `info --format json` object; load_seconds < 0 leaves it out.
std::string info_json(const TraceStore& store, double load_seconds = -1);
// Aligned text for people, with the import issues and their first byte offsets.
std::string info_text(const TraceStore& store, double load_seconds = -1);
// The `loaded in` value of info_text (and a job's): "4.62 ms", "310 µs" (a snapshot opens in
// less than a millisecond, which "%.3f s" showed as 0.000 s).
std::string load_time_text(double seconds);

// A trace with CPU launches but no GPU activity at all (CUPTI or roctracer activity not recorded,
// or a trace cut before its GPU events) is not healthy (analyses.md §2b): "no GPU activity
// recorded: 268 launches have no GPU event — was CUPTI activity tracing on?". "" when the trace
// has GPU activity, or launched nothing.
std::string missing_gpu_activity_warning(const TraceStore& store);

}  // namespace sl
