// Captured records → Kineto-compatible Chrome trace JSON (Perfetto, HTA and Sightline open it).
//
// `ts`/`dur` are the exact ns since CaptureInfo::clock_base_ns written as µs with 3 decimals
// (integer formatting, never double*1000); `baseTimeNanoseconds` gives the wall clock at ts 0,
// as recent Kineto does.
#pragma once

#include <string>

#include "core/capture/activity_record.h"
#include "core/capture/record_events.h"

namespace sl::capture {

std::string chrome_trace_json(const CaptureData& data, const ConvertedTrace& converted);
inline std::string chrome_trace_json(const CaptureData& data) { return chrome_trace_json(data, convert_records(data)); }

// The deviceProperties entry of one GPU.
std::string device_json(const DeviceInfo& d);

}  // namespace sl::capture
