// libFuzzer target for the live capture stream (core/capture/live_protocol.cpp): the bytes a
// capture socket or file delivers, fed to LiveCapture in pieces of the sizes the input's first
// byte picks (any split must give the same frames), then what the live viewer does with the
// records: converted batch by batch (RecordConverter), appended to a finished store
// (CaptureAppender), and the store walked with every query; the one-shot build too. Any bytes
// must give records or a clean error, never a crash, leak or undefined behaviour.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/capture/capture_store.h"
#include "core/capture/live_protocol.h"
#include "core/capture/record_events.h"
#include "tests/fuzz/exercise_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  size_t piece = size_t(data[0] % 64) + 1;
  const char* bytes = reinterpret_cast<const char*>(data) + 1;
  size_t left = size - 1;
  sl::capture::LiveCapture live;
  std::vector<size_t> batch_ends;  // records held after each piece: the viewer's batches
  for (size_t at = 0; at < left; at += piece) {
    if (!live.feed(bytes + at, std::min(piece, left - at))) break;
    batch_ends.push_back(live.data().records.size());
  }
  live.finish();
  const sl::capture::CaptureData& capture = live.data();

  sl::TraceStore store;
  sl::capture::RecordConverter converter(capture.info, capture.devices);
  sl::capture::CaptureAppender appender(store, capture.info, capture.devices);
  std::span<const sl::capture::ActivityRecord> records(capture.records);
  size_t from = 0;
  bool first = true;
  batch_ends.push_back(records.size());
  for (size_t end : batch_ends) {
    if (end == from && !first) continue;
    sl::capture::ConvertedTrace events = converter.convert(records.subspan(from, end - from));
    if (first) converter.add_metadata(events);
    if (end == records.size()) converter.close_open_ranges(events);
    appender.append(events);
    first = false;
    from = end;
    if (from == records.size()) break;
  }
  appender.end();
  sl::fuzz::exercise_store(store);
  sl::fuzz::exercise_store(*sl::capture::build_store(capture));
  return 0;
}
