// The capture wire format: what the injection library writes to its output file or streams
// over a Unix domain socket to a live viewer.
//
// A stream is a sequence of frames. Each frame is a 16-byte little-endian header
//   u32 magic "SLCF" | u16 version | u16 type | u32 payload bytes | u32 item count
// followed by the payload. Types: Hello (CaptureInfo, first), Devices, Records (a batch of
// ActivityRecords), Stats (DropStats, cumulative), Message (a warning text), End (clean close).
// Sizes are bounded (kMaxPayload, kMaxString); a reader rejects anything else with a message
// naming the frame and byte offset, and keeps every batch it had already accepted. A stream
// that stops mid-frame (the program died) keeps the complete frames before it.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/capture/activity_record.h"

namespace sl::capture {

constexpr uint32_t kFrameMagic = 0x46434C53;  // bytes "SLCF"
constexpr uint16_t kProtocolVersion = 1;
constexpr size_t kFrameHeaderBytes = 16;
constexpr uint32_t kMaxPayload = 32u << 20;   // 32 MiB per frame
constexpr uint32_t kMaxString = 64u << 10;    // 64 KiB per name

enum class FrameType : uint16_t { Hello = 1, Devices = 2, Records = 3, Stats = 4, Message = 5, End = 6 };

struct Frame {
  FrameType type = FrameType::End;
  uint32_t count = 0;
  std::string payload;
};

// --- encoding (used by the injection library and the tests' fake producers) ---
std::string encode_hello(const CaptureInfo& info);
std::string encode_devices(std::span<const DeviceInfo> devices);
std::string encode_records(std::span<const ActivityRecord> records);
std::string encode_stats(const DropStats& stats);
std::string encode_message(std::string_view text);
std::string encode_end();

// Bytes in, frames out; any split of the byte stream gives the same frames.
class FrameDecoder {
public:
  enum class Status { NeedMore, Frame, Error };
  void feed(const char* data, size_t size);
  Status next(Frame& out);
  const std::string& error() const { return error_; }
  size_t pending_bytes() const { return buffer_.size() - read_; }
  uint64_t frames() const { return frames_; }

private:
  Status fail(std::string message);
  std::string buffer_;
  size_t read_ = 0;
  uint64_t consumed_ = 0;  // stream offset of buffer_[read_]
  uint64_t frames_ = 0;
  std::string error_;
};

// Decodes a frame's payload into `data` (appending records). Returns "" or what is wrong.
std::string apply_frame(const Frame& frame, CaptureData& data);

// A live capture being received: feed it bytes as they arrive; take store snapshots on demand.
class LiveCapture {
public:
  // Returns false once the stream is broken (see error()); accepted batches are kept.
  bool feed(const char* data, size_t size);
  // The stream stopped: true if it ended cleanly, else error() says how it was cut.
  bool finish();

  const CaptureData& data() const { return data_; }
  CaptureData take() { return std::move(data_); }
  const std::string& error() const { return error_; }
  bool ended() const { return ended_; }
  uint64_t batches() const { return batches_; }
  // Bumped by every accepted frame: a viewer converts the records it has not seen yet and
  // appends them to its store when this changed (views/live_feed.h).
  uint64_t generation() const { return generation_; }

private:
  FrameDecoder decoder_;
  CaptureData data_;
  std::string error_;
  bool ended_ = false, broken_ = false, hello_ = false;
  uint64_t batches_ = 0, generation_ = 0;
};

// Reads `fd` (a socket or a file) into `capture` until end of stream, an error or `stop`.
// Polls every 50 ms so `stop` is noticed; never blocks forever on a silent peer when stop is set.
struct ReadOutcome {
  bool clean = false;  // an End frame was received
  std::string error;   // empty when clean
  uint64_t bytes = 0;
};
ReadOutcome read_stream(int fd, LiveCapture& capture, const std::atomic<bool>* stop = nullptr);

// Reads a capture file written by the injection library.
ReadOutcome read_capture_file(const std::string& path, LiveCapture& capture);

}  // namespace sl::capture
