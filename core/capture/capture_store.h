// Captured records → a TraceStore, through TraceBuilder, so every analysis runs on a capture
// unchanged. The same events as chrome_trace_json(), placed the way the Kineto loader places
// them: loading the written JSON gives the same tracks, slices, flows and launch links.
#pragma once

#include <memory>

#include "core/capture/activity_record.h"
#include "core/capture/record_events.h"
#include "core/trace_builder.h"
#include "core/trace_store.h"

namespace sl::capture {

// Appends the converted events (not finished: call builder.finish() once everything is in).
void append_events(const CaptureData& data, const ConvertedTrace& converted, TraceBuilder& builder);

// A finished store holding `data`.
std::unique_ptr<TraceStore> build_store(const CaptureData& data);

}  // namespace sl::capture
