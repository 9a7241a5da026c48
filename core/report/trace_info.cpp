#include "core/report/trace_info.h"

#include <simdjson.h>

#include <cstdio>
#include <set>

#include "core/import/nsys/nsys_loader.h"
#include "core/report/issue_classes.h"
#include "core/text/format.h"
#include "core/text/json_writer.h"

namespace sl {

TraceSummary summarize(const TraceStore& store) {
  TraceSummary s;
  for (const Process& p : store.processes) {
    bool has_events = false, device_process = false;
    for (uint32_t t : p.tracks) device_process |= store.tracks[t].kind == TrackKind::GpuStream;
    for (uint32_t t : p.tracks) {
      const Track& track = store.tracks[t];
      bool events = track.slices.size() || track.instants.size();
      has_events |= events;
      if (track.kind == TrackKind::GpuStream) s.gpu_streams += track.gpu_work;
      else if (track.kind == TrackKind::Async) ++s.async_tracks;
      // As the corpus manifest counts them: threads filed under a device's pid are not host threads.
      else if (track.slices.size() && !device_process) ++s.threads;
    }
    s.processes += has_events;
  }
  for (const Track& t : store.tracks) {
    s.slices += t.slices.size();
    s.instants += t.instants.size();
  }
  s.counter_series = store.counters.size();
  s.gpu_activities = store.gpu_activity_count();
  s.kernels = store.kernel_count();
  s.launch_links = store.launch_link_count();
  s.flows_bound = store.flows.size();
  return s;
}

TimeNs trace_span(const TraceStore& store) { return store.end_ns; }

std::optional<TimeWindow> gpu_window(const TraceStore& store) {
  std::optional<TimeWindow> w;
  for (const Track& t : store.tracks) {
    if (t.kind != TrackKind::GpuStream) continue;
    for (size_t i = 0; i < t.slices.size(); ++i) {
      TimeNs a = t.slices.start[i], b = t.slices.end(i);
      if (!w) w = TimeWindow{a, b};
      w->start = std::min(w->start, a), w->end = std::max(w->end, b);
    }
  }
  return w;
}

namespace {

// "AMD" or "NVIDIA" from what the trace recorded of its runtime ("" when it says neither).
std::string vendor_of(const TraceStore& store, simdjson::dom::element properties) {
  int64_t warp = 0;
  if (!properties["warpSize"].get_int64().get(warp) && warp == 64) return "AMD";  // a wavefront; NVIDIA warps are 32
  for (const char* call : {"hipLaunchKernel", "hipExtModuleLaunchKernel", "hipModuleLaunchKernel", "hipMemcpyAsync"})
    if (store.strings.find(call) != StringPool::kNotFound) return "AMD";
  for (const char* call : {"cudaLaunchKernel", "cuLaunchKernel", "cudaMemcpyAsync", "cudaLaunchKernelExC"})
    if (store.strings.find(call) != StringPool::kNotFound) return "NVIDIA";
  return {};
}

}  // namespace

std::string device_description(const TraceStore& store, const Device& device) {
  if (!device.name.empty()) return device.name;
  simdjson::dom::parser parser;
  simdjson::dom::element properties;
  std::vector<std::string> known;
  if (!device.properties_json.empty() && !parser.parse(device.properties_json).get(properties)) {
    if (std::string vendor = vendor_of(store, properties); !vendor.empty()) known.push_back(vendor);
    int64_t major = 0, minor = 0;
    if (!properties["computeMajor"].get_int64().get(major) && !properties["computeMinor"].get_int64().get(minor))
      known.push_back("compute capability " + std::to_string(major) + "." + std::to_string(minor));
  }
  std::string o = "(unnamed";
  for (size_t i = 0; i < known.size(); ++i) {
    o += i ? ", " : "; ";
    o += known[i];
  }
  return o + ")";
}

std::string info_json(const TraceStore& store, double load_seconds) {
  TraceSummary s = summarize(store);
  const TraceMeta& m = store.meta;
  JsonWriter w;
  w.begin_object();
  w.field("file", m.file).field("format", m.format).field("bytes", m.bytes);
  w.field("events", store.counts.events).field("slices", s.slices).field("instants", s.instants);
  w.field("counters", store.counts.counters).field("flows", store.counts.flows);
  w.field("metadata", store.counts.metadata).field("skipped", store.counts.skipped);
  w.field("gpu_activities", s.gpu_activities).field("kernels", s.kernels).field("launch_links", s.launch_links);
  w.field("flow_links", s.flows_bound);
  w.field("processes", s.processes).field("threads", s.threads).field("gpu_streams", s.gpu_streams);
  w.field("async_tracks", s.async_tracks).field("counter_series", s.counter_series);
  if (!store.memory.empty()) w.field("memory_events", uint64_t(store.memory.size()));
  w.key("start_us").micros(store.origin_ns);
  w.key("end_us").micros(store.origin_ns + store.end_ns);
  w.key("span_us").micros(trace_span(store));
  if (auto gpu = gpu_window(store)) {  // store-relative, as the report's times
    w.key("gpu_window_start_us").micros(gpu->start);
    w.key("gpu_window_us").micros(gpu->length());
  }
  w.key("rank");
  m.rank ? w.value(*m.rank) : w.null();
  w.key("world_size");
  m.world_size ? w.value(*m.world_size) : w.null();
  w.key("devices").begin_array();
  for (const Device& d : m.devices) {
    if (!d.properties_json.empty()) w.raw(d.properties_json);
    else w.begin_object().field("id", d.id).field("name", d.name).end_object();
  }
  w.end_array();
  w.key("iterations").begin_array();
  for (const Iteration& it : store.iterations) w.value(it.number);
  w.end_array();
  w.key("issues").begin_object();
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k)
    if (uint64_t n = store.issues.count(IssueKind(k))) w.field(issue_name(IssueKind(k)), n);
  w.end_object();
  // Which of them are normal in profiler traces (core/report/issue_classes.h); a badge counts the rest.
  w.field("issues_attention", attention_issues(store.issues));
  w.key("issue_classes").begin_object();
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k)
    if (store.issues.count(IssueKind(k))) w.field(issue_name(IssueKind(k)), issue_class_name(issue_class(IssueKind(k))));
  w.end_object();
  w.key("issue_examples").begin_object();
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) {
    const auto& offsets = store.issues.examples(IssueKind(k));
    if (offsets.empty()) continue;
    w.key(issue_name(IssueKind(k))).begin_array();
    for (uint64_t o : offsets) w.value(o);
    w.end_array();
  }
  w.end_object();
  nsys_info_json(m, w);
  if (load_seconds >= 0) w.field("load_seconds", load_seconds);
  w.end_object();
  return w.str();
}

// Built with appends only: GCC 12 warns falsely (-Wrestrict) on `"literal" + std::string&&`.
std::string info_text(const TraceStore& store, double load_seconds) {
  TraceSummary s = summarize(store);
  const TraceMeta& m = store.meta;
  std::string out;
  auto line = [&](const char* key, std::initializer_list<std::string_view> parts) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%-16s", key);
    out += buf;
    for (std::string_view p : parts) out += p;
    out += '\n';
  };
  auto num = [](uint64_t v) { return std::to_string(v); };
  line("file", {m.file});
  line("format", {m.format, ", ", num(m.bytes),
                  m.format == "nsys-sqlite" ? " bytes of SQLite" : m.format == "pytorch-memory-snapshot" ? " bytes of pickle" : " bytes of JSON"});
  line("events", {num(store.counts.events), " (", num(s.slices), " slices, ", num(s.instants), " instants, ",
                  num(store.counts.counters), " counter, ", num(store.counts.flows), " flow, ",
                  num(store.counts.metadata), " metadata, ", num(store.counts.skipped), " skipped)"});
  line("gpu", {num(s.gpu_activities), " activities, ", num(s.kernels), " kernels, ", num(s.launch_links),
               " linked to their launch, ", num(s.gpu_streams), " streams"});
  line("cpu", {num(s.processes), " processes, ", num(s.threads), " threads"});
  if (!store.memory.empty()) {
    std::set<std::pair<int8_t, int32_t>> devices;
    for (size_t i = 0; i < store.memory.size(); ++i) devices.insert({store.memory.device_type[i], store.memory.device_id[i]});
    line("memory", {num(store.memory.size()), " allocator events on ", num(devices.size()), devices.size() == 1 ? " device" : " devices",
                    " (report --only memory_peak,memory_at_peak)"});
  }
  line("trace span", {human::duration(trace_span(store)), ", first to last event (", format_micros(trace_span(store)), " us from ",
                      format_micros(store.origin_ns), " us)"});
  if (auto gpu = gpu_window(store))
    line("GPU window", {human::duration(gpu->length()), ", first to last GPU activity (", format_micros(gpu->start), " to ",
                        format_micros(gpu->end), " us into the trace)"});
  if (m.rank) line("rank", {num(*m.rank), m.world_size ? " of " : "", m.world_size ? num(*m.world_size) : ""});
  for (const Device& d : m.devices) line("device", {std::to_string(d.id), ": ", device_description(store, d)});
  if (!store.iterations.empty())
    line("iterations", {num(store.iterations.size()), " (ProfilerStep#", std::to_string(store.iterations.front().number),
                        " .. #", std::to_string(store.iterations.back().number), ")"});
  out += nsys_info_text(m);
  if (load_seconds >= 0) line("loaded in", {load_time_text(load_seconds)});
  if (store.issues.total() == 0) return out + "issues          none\n";
  uint64_t attention = attention_issues(store.issues);
  out += "issues:         ";
  out += std::to_string(attention);
  out += " to look at, ";
  out += std::to_string(store.issues.total() - attention);
  out += " normal in profiler traces\n";
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k) {
    uint64_t n = store.issues.count(IssueKind(k));
    if (!n) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "  %-26s %10llu", std::string(issue_name(IssueKind(k))).c_str(), (unsigned long long)n);
    out += buf;
    const auto& offsets = store.issues.examples(IssueKind(k));
    if (!offsets.empty()) out += "  first at byte";
    for (uint64_t o : offsets) {
      out += ' ';
      out += std::to_string(o);
    }
    out += "\n    ";
    out += issue_reason(IssueKind(k));
    out += '\n';
  }
  return out;
}

std::string load_time_text(double seconds) { return human::duration(seconds * 1e9); }

std::string missing_gpu_activity_warning(const TraceStore& store) {
  if (store.gpu_activity_count() > 0) return {};
  int64_t launches = 0;
  for (const Correlation& c : store.correlations) launches += c.launch.valid() && c.activity_count == 0;
  if (launches == 0) return {};
  return "no GPU activity recorded: " + human::count(launches) + (launches == 1 ? " launch has" : " launches have") +
         " no GPU event — was CUPTI activity tracing on?";
}

}  // namespace sl
