#include "core/capture/capture_store.h"

#include <cstring>
#include <string>

#include "core/capture/chrome_trace.h"

namespace sl::capture {
namespace {

// Args stay JSON text, as for loaded traces: one buffer per call holds them all.
class ArgsSink {
public:
  explicit ArgsSink(TraceStore& store) : store_(store) {}

  void collect(const ConvertedTrace& converted) {
    offsets_.reserve(converted.events.size());
    for (const CaptureEvent& e : converted.events) {
      offsets_.push_back(text_.size());
      text_ += e.args;
    }
    auto buffer = std::make_shared<TraceStore::Buffer>();
    if (!buffer->reserve(std::max<size_t>(text_.size(), 1))) return;
    std::memcpy(buffer->data, text_.data(), text_.size());
    buffer->size = text_.size();
    std::memset(buffer->data + buffer->size, 0, TraceStore::Buffer::kPadding);
    buffer_ = store_.adopt_buffer(std::move(buffer));
    ok_ = true;
  }

  uint32_t row(size_t event, const CaptureEvent& e) {
    if (!ok_ || e.args.empty()) return kNone;
    return store_.add_args({offsets_[event], uint32_t(e.args.size()), buffer_});
  }

private:
  TraceStore& store_;
  std::string text_;
  std::vector<uint64_t> offsets_;
  uint32_t buffer_ = 0;
  bool ok_ = false;
};

}  // namespace

void append_events(const CaptureInfo& info, const ConvertedTrace& converted, TraceBuilder& builder) {
  TraceStore& store = builder.store();
  ArgsSink args(store);
  args.collect(converted);
  auto process = [&](int64_t pid) { return builder.process(std::to_string(pid), pid); };
  auto track = [&](int64_t pid, int64_t tid) { return builder.thread_track(process(pid), std::to_string(tid), tid); };
  for (size_t i = 0; i < converted.events.size(); ++i) {
    const CaptureEvent& e = converted.events[i];
    StringId name = store.strings.intern(e.name), cat = store.strings.intern(e.cat);
    switch (e.ph) {
      case 'X': {
        uint32_t t = track(e.pid, e.tid);
        if (e.gpu) builder.mark_gpu(t, e.device, e.stream);
        builder.add_slice(t, e.ts, e.dur, name, cat, args.row(i, e), e.correlation);
        break;
      }
      case 'i': builder.add_instant(track(e.pid, e.tid), e.ts, name, cat, args.row(i, e), 't'); break;
      case 'C':
        ++store.counts.counters;
        builder.add_counter(process(e.pid), e.name, e.ts, e.value);
        break;
      case 's':
      case 'f':
        ++store.counts.flows;
        builder.add_flow_point(track(e.pid, e.tid), e.flow_id, cat, e.ph, e.ts, e.ph == 's' || e.bp_enclosing, i);
        break;
      case 'M':
        ++store.counts.metadata;
        if (e.name == "process_name") {
          std::string_view label = info.process_name;  // not `?:`: that would make a temporary
          if (label.empty()) label = "process";
          builder.set_process_name(process(e.pid), store.strings.intern(label));
        }
        break;
      default: break;
    }
    ++store.counts.events;
  }
}

namespace {
void describe(TraceStore& store, const CaptureInfo& info, std::span<const DeviceInfo> devices) {
  store.meta.format = "sightline-capture";
  store.meta.file = info.process_name;
  for (const DeviceInfo& d : devices) store.meta.devices.push_back({int64_t(d.id), d.name, device_json(d)});
}
}  // namespace

std::unique_ptr<TraceStore> build_store(const CaptureData& data) {
  auto store = std::make_unique<TraceStore>();
  TraceBuilder builder(*store);
  append_events(data.info, convert_records(data), builder);
  describe(*store, data.info, data.devices);
  builder.finish();
  return store;
}

CaptureAppender::CaptureAppender(TraceStore& store, const CaptureInfo& info, std::span<const DeviceInfo> devices)
    : info_(info), builder_(store) {
  describe(store, info, devices);
}

void CaptureAppender::append(const ConvertedTrace& batch) {
  append_events(info_, batch, builder_);
  builder_.finish_appended();
}

void CaptureAppender::end() { builder_.report_open_flows(); }

}  // namespace sl::capture
