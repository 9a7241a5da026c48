#include "core/capture/chrome_trace.h"

#include "core/text/json_writer.h"

namespace sl::capture {
namespace {

void write_event(JsonWriter& w, const CaptureEvent& e) {
  w.begin_object();
  char ph[2] = {e.ph, 0};
  w.field("ph", std::string_view(ph, 1));
  if (!e.cat.empty()) w.field("cat", e.cat);
  w.field("name", e.name);
  w.field("pid", e.pid);
  if (e.ph != 'C') w.field("tid", e.tid);
  w.key("ts").micros(e.ts);
  switch (e.ph) {
    case 'X': w.key("dur").micros(e.dur); break;
    case 'i': w.field("s", "t"); break;
    case 's':
    case 'f':
      w.field("id", e.flow_id);
      if (e.bp_enclosing) w.field("bp", "e");
      break;
    case 'C': w.key("args").begin_object().field("value", e.value).end_object(); break;
    default: break;
  }
  if (!e.args.empty()) w.key("args").raw(e.args);
  w.end_object();
}

}  // namespace

std::string device_json(const DeviceInfo& d) {
  JsonWriter w;
  w.begin_object()
      .field("id", uint64_t(d.id))
      .field("name", d.name)
      .field("totalGlobalMem", d.total_global_mem)
      .field("computeMajor", uint64_t(d.compute_major))
      .field("computeMinor", uint64_t(d.compute_minor))
      .field("maxThreadsPerBlock", uint64_t(d.max_threads_per_block))
      .field("maxThreadsPerMultiprocessor", uint64_t(d.max_threads_per_sm))
      .field("regsPerBlock", uint64_t(d.regs_per_block))
      .field("regsPerMultiprocessor", uint64_t(d.regs_per_sm))
      .field("warpSize", uint64_t(d.warp_size))
      .field("sharedMemPerBlock", uint64_t(d.shared_mem_per_block))
      .field("sharedMemPerMultiprocessor", uint64_t(d.shared_mem_per_sm))
      .field("numSms", uint64_t(d.num_sms))
      .field("sharedMemPerBlockOptin", uint64_t(d.shared_mem_per_block_optin))
      .end_object();
  return w.str();
}

std::string chrome_trace_json(const CaptureData& data, const ConvertedTrace& converted) {
  JsonWriter w;
  w.begin_object();
  w.field("schemaVersion", 1);
  w.key("deviceProperties").begin_array();
  for (const DeviceInfo& d : data.devices) w.raw(device_json(d));
  w.end_array();
  const CaptureInfo& info = data.info;
  if (info.cupti_version) w.field("cupti_version", uint64_t(info.cupti_version));
  if (info.cuda_runtime_version) w.field("cuda_runtime_version", uint64_t(info.cuda_runtime_version));
  if (info.cuda_driver_version) w.field("cuda_driver_version", uint64_t(info.cuda_driver_version));
  w.field("baseTimeNanoseconds", info.wall_base_ns);
  w.field("displayTimeUnit", "ms");
  w.field("traceName", info.process_name);
  w.key("sightline_capture").begin_object()
      .field("records", data.drops.records)
      .field("dropped_records", data.drops.dropped_buffer)
      .field("cupti_dropped_records", data.drops.dropped_cupti)
      .key("messages").begin_array();
  for (const std::string& m : data.messages) w.value(m);
  w.end_array().end_object();
  w.key("traceEvents").begin_array();
  for (const CaptureEvent& e : converted.events) write_event(w, e);
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace sl::capture
