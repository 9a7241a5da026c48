// Captured records → a TraceStore, through TraceBuilder, so every analysis runs on a capture
// unchanged. The same events as chrome_trace_json(), placed the way the Kineto loader places
// them: loading the written JSON gives the same tracks, slices, flows and launch links.
#pragma once

#include <memory>
#include <span>

#include "core/capture/activity_record.h"
#include "core/capture/record_events.h"
#include "core/store/trace_builder.h"
#include "core/store/trace_store.h"

namespace sl::capture {

// Appends the converted events (not finished: call builder.finish() once everything is in).
// `info` names the process (its process_name metadata).
void append_events(const CaptureInfo& info, const ConvertedTrace& converted, TraceBuilder& builder);

// A finished store holding `data`.
std::unique_ptr<TraceStore> build_store(const CaptureData& data);

// A live capture's store, grown batch by batch (TraceBuilder::finish_appended): after each
// append() it is a finished store holding every batch so far, equal to build_store() of the
// same records once end() was called (tested). Batches come from a RecordConverter.
class CaptureAppender {
public:
  CaptureAppender(TraceStore& store, const CaptureInfo& info, std::span<const DeviceInfo> devices);
  void append(const ConvertedTrace& batch);
  // The capture is over (after the converter's close_open_ranges batch): flows that never
  // got their other end become import issues, as in a one-shot build.
  void end();
  TraceStore& store() { return builder_.store(); }
  // Per track, the first row the last append changed, or kNone (TraceBuilder::changed_from).
  const std::vector<uint32_t>& changed_from() const { return builder_.changed_from(); }

private:
  CaptureInfo info_;
  TraceBuilder builder_;
};

}  // namespace sl::capture
