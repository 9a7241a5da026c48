#include "core/capture/live_protocol.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>


namespace sl::capture {

static_assert(std::endian::native == std::endian::little, "the wire format is written in host order");

namespace {

class Writer {
public:
  template <class T>
  void put(T v) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    out.append(bytes, sizeof(T));
  }
  void str(std::string_view s) {
    if (s.size() > kMaxString) s = s.substr(0, kMaxString);  // names longer than this are cut
    put(uint32_t(s.size()));
    out.append(s);
  }
  std::string out;
};

class Reader {
public:
  explicit Reader(std::string_view bytes) : in_(bytes) {}
  template <class T>
  bool get(T& v) {
    if (in_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(&v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool str(std::string& s) {
    uint32_t n = 0;
    if (!get(n) || n > kMaxString || in_.size() - pos_ < n) return false;
    s.assign(in_.substr(pos_, n));
    pos_ += n;
    return true;
  }
  size_t left() const { return in_.size() - pos_; }

private:
  std::string_view in_;
  size_t pos_ = 0;
};

std::string frame(FrameType type, uint32_t count, const std::string& payload) {
  Writer w;
  w.put(kFrameMagic);
  w.put(kProtocolVersion);
  w.put(uint16_t(type));
  w.put(uint32_t(payload.size()));
  w.put(count);
  w.out += payload;
  return std::move(w.out);
}

void put_record(Writer& w, const ActivityRecord& r) {
  w.put(uint8_t(r.kind));
  w.put(r.flags);
  w.put(r.start);
  w.put(r.end);
  w.put(r.correlation);
  w.put(r.device);
  w.put(r.context);
  w.put(r.stream);
  w.put(r.pid);
  w.put(r.tid);
  w.put(r.cbid);
  w.put(r.copy_kind);
  w.put(r.src_kind);
  w.put(r.dst_kind);
  w.put(r.sync_kind);
  for (int32_t v : r.grid) w.put(v);
  for (int32_t v : r.block) w.put(v);
  w.put(r.registers);
  w.put(r.static_shared);
  w.put(r.dynamic_shared);
  w.put(r.bytes);
  w.put(r.value);
  w.put(r.id);
  w.put(r.number);
  w.str(r.name);
  w.str(r.domain);
}

// Smallest encoded record (empty strings): bounds a batch's claimed count by its size.
constexpr size_t kMinRecordBytes = 1 + 4 + 8 + 8 + 4 * 7 + 4 + 6 * 4 + 4 * 3 + 8 + 4 + 8 + 8 + 4 + 4;

bool get_record(Reader& r, ActivityRecord& a) {
  uint8_t kind = 0;
  bool ok = r.get(kind) && r.get(a.flags) && r.get(a.start) && r.get(a.end) && r.get(a.correlation) &&
            r.get(a.device) && r.get(a.context) && r.get(a.stream) && r.get(a.pid) && r.get(a.tid) &&
            r.get(a.cbid) && r.get(a.copy_kind) && r.get(a.src_kind) && r.get(a.dst_kind) && r.get(a.sync_kind);
  for (int32_t& v : a.grid) ok = ok && r.get(v);
  for (int32_t& v : a.block) ok = ok && r.get(v);
  ok = ok && r.get(a.registers) && r.get(a.static_shared) && r.get(a.dynamic_shared) && r.get(a.bytes) &&
       r.get(a.value) && r.get(a.id) && r.get(a.number) && r.str(a.name) && r.str(a.domain);
  a.kind = ActivityKind(kind);
  return ok && kind >= 1 && kind <= kMaxActivityKind;
}

std::string payload_error(const Frame& f, const char* what) {
  return std::string("malformed ") + what + " frame (" + std::to_string(f.payload.size()) + " bytes, count " +
         std::to_string(f.count) + ")";
}

}  // namespace

std::string encode_hello(const CaptureInfo& info) {
  Writer w;
  w.put(info.pid);
  w.put(info.clock_base_ns);
  w.put(info.wall_base_ns);
  w.put(info.cupti_version);
  w.put(info.cuda_runtime_version);
  w.put(info.cuda_driver_version);
  w.str(info.process_name);
  return frame(FrameType::Hello, 1, w.out);
}

std::string encode_devices(std::span<const DeviceInfo> devices) {
  Writer w;
  for (const DeviceInfo& d : devices) {
    w.put(d.id);
    w.put(d.total_global_mem);
    for (uint32_t v : {d.compute_major, d.compute_minor, d.num_sms, d.max_threads_per_block, d.max_threads_per_sm,
                       d.regs_per_block, d.regs_per_sm, d.warp_size, d.shared_mem_per_block, d.shared_mem_per_sm,
                       d.shared_mem_per_block_optin})
      w.put(v);
    w.str(d.name);
  }
  return frame(FrameType::Devices, uint32_t(devices.size()), w.out);
}

std::string encode_records(std::span<const ActivityRecord> records) {
  Writer w;
  w.out.reserve(records.size() * (kMinRecordBytes + 48));
  for (const ActivityRecord& r : records) put_record(w, r);
  return frame(FrameType::Records, uint32_t(records.size()), w.out);
}

std::string encode_stats(const DropStats& stats) {
  Writer w;
  w.put(stats.records);
  w.put(stats.dropped_buffer);
  w.put(stats.dropped_cupti);
  return frame(FrameType::Stats, 1, w.out);
}

std::string encode_message(std::string_view text) {
  Writer w;
  w.str(text);
  return frame(FrameType::Message, 1, w.out);
}

std::string encode_end() { return frame(FrameType::End, 0, {}); }

void FrameDecoder::feed(const char* data, size_t size) {
  if (!error_.empty()) return;
  // Drop what was consumed before growing, so a long stream does not accumulate.
  if (read_ > 0 && read_ * 2 >= buffer_.size()) {
    buffer_.erase(0, read_);
    read_ = 0;
  }
  buffer_.append(data, size);
}

FrameDecoder::Status FrameDecoder::fail(std::string message) {
  error_ = "frame " + std::to_string(frames_ + 1) + " at byte " + std::to_string(consumed_) + ": " + message;
  return Status::Error;
}

FrameDecoder::Status FrameDecoder::next(Frame& out) {
  if (!error_.empty()) return Status::Error;
  if (pending_bytes() < kFrameHeaderBytes) return Status::NeedMore;
  Reader header(std::string_view(buffer_).substr(read_, kFrameHeaderBytes));
  uint32_t magic = 0, size = 0, count = 0;
  uint16_t version = 0, type = 0;
  header.get(magic), header.get(version), header.get(type), header.get(size), header.get(count);
  if (magic != kFrameMagic) return fail("not a Sightline capture frame (bad magic)");
  if (version != kProtocolVersion)
    return fail("protocol version " + std::to_string(version) + ", this Sightline reads version " +
                std::to_string(kProtocolVersion));
  if (type < uint16_t(FrameType::Hello) || type > uint16_t(FrameType::End))
    return fail("unknown frame type " + std::to_string(type));
  if (size > kMaxPayload)
    return fail("frame of " + std::to_string(size) + " bytes exceeds the limit of " + std::to_string(kMaxPayload));
  if (pending_bytes() < kFrameHeaderBytes + size) return Status::NeedMore;
  out.type = FrameType(type);
  out.count = count;
  out.payload.assign(buffer_, read_ + kFrameHeaderBytes, size);
  read_ += kFrameHeaderBytes + size;
  consumed_ += kFrameHeaderBytes + size;
  ++frames_;
  return Status::Frame;
}

std::string apply_frame(const Frame& f, CaptureData& data) {
  Reader r(f.payload);
  switch (f.type) {
    case FrameType::Hello: {
      CaptureInfo& i = data.info;
      bool ok = r.get(i.pid) && r.get(i.clock_base_ns) && r.get(i.wall_base_ns) && r.get(i.cupti_version) &&
                r.get(i.cuda_runtime_version) && r.get(i.cuda_driver_version) && r.str(i.process_name);
      return ok && !r.left() ? "" : payload_error(f, "hello");
    }
    case FrameType::Devices: {
      std::vector<DeviceInfo> devices(std::min<size_t>(f.count, f.payload.size() / 60));
      if (devices.size() != f.count) return payload_error(f, "devices");
      for (DeviceInfo& d : devices) {
        bool ok = r.get(d.id) && r.get(d.total_global_mem);
        for (uint32_t* v : {&d.compute_major, &d.compute_minor, &d.num_sms, &d.max_threads_per_block,
                            &d.max_threads_per_sm, &d.regs_per_block, &d.regs_per_sm, &d.warp_size,
                            &d.shared_mem_per_block, &d.shared_mem_per_sm, &d.shared_mem_per_block_optin})
          ok = ok && r.get(*v);
        if (!ok || !r.str(d.name)) return payload_error(f, "devices");
      }
      if (r.left()) return payload_error(f, "devices");
      for (DeviceInfo& d : devices) {
        auto same = [&](const DeviceInfo& o) { return o.id == d.id; };
        std::erase_if(data.devices, same);
        data.devices.push_back(std::move(d));
      }
      return "";
    }
    case FrameType::Records: {
      if (f.count > f.payload.size() / kMinRecordBytes) return payload_error(f, "records");
      std::vector<ActivityRecord> batch(f.count);
      for (ActivityRecord& a : batch)
        if (!get_record(r, a)) return payload_error(f, "records");
      if (r.left()) return payload_error(f, "records");
      data.records.insert(data.records.end(), std::make_move_iterator(batch.begin()),
                          std::make_move_iterator(batch.end()));
      return "";
    }
    case FrameType::Stats: {
      DropStats s;
      bool ok = r.get(s.records) && r.get(s.dropped_buffer) && r.get(s.dropped_cupti) && !r.left();
      if (!ok) return payload_error(f, "stats");
      data.drops = s;
      return "";
    }
    case FrameType::Message: {
      std::string text;
      if (!r.str(text) || r.left()) return payload_error(f, "message");
      if (data.messages.size() < 100) data.messages.push_back(std::move(text));
      return "";
    }
    case FrameType::End: return f.payload.empty() ? "" : payload_error(f, "end");
  }
  return "unknown frame type";
}

bool LiveCapture::feed(const char* bytes, size_t size) {
  if (broken_) return false;
  decoder_.feed(bytes, size);
  Frame f;
  for (;;) {
    FrameDecoder::Status s = decoder_.next(f);
    if (s == FrameDecoder::Status::NeedMore) return true;
    if (s == FrameDecoder::Status::Error) {
      error_ = decoder_.error();
      broken_ = true;
      return false;
    }
    if (ended_) {
      error_ = "data after the end of the capture";
      broken_ = true;
      return false;
    }
    if (!hello_ && f.type != FrameType::Hello) {
      error_ = "the stream does not start with a hello frame";
      broken_ = true;
      return false;
    }
    if (std::string e = apply_frame(f, data_); !e.empty()) {
      error_ = "frame " + std::to_string(decoder_.frames()) + ": " + e;
      broken_ = true;
      return false;
    }
    hello_ = true;
    ended_ = f.type == FrameType::End;
    batches_ += f.type == FrameType::Records;
    ++generation_;
  }
}

bool LiveCapture::finish() {
  if (ended_ && !broken_) return true;
  if (!broken_) {
    broken_ = true;
    error_ = decoder_.pending_bytes() ? "the stream stopped in the middle of a frame (" +
                                            std::to_string(decoder_.pending_bytes()) + " bytes of it arrived)"
                                      : "the stream stopped without an end frame (the program exited abnormally?)";
  }
  return false;
}

ReadOutcome read_stream(int fd, LiveCapture& capture, const std::atomic<bool>* stop) {
  ReadOutcome out;
  std::vector<char> chunk(1 << 16);
  for (;;) {
    if (stop && stop->load()) break;
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, 50);
    if (ready < 0 && errno != EINTR) {
      out.error = std::string("reading the capture stream: ") + std::strerror(errno);
      return out;
    }
    if (ready <= 0) continue;
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      out.error = std::string("reading the capture stream: ") + std::strerror(errno);
      return out;
    }
    if (n == 0) break;
    out.bytes += uint64_t(n);
    if (!capture.feed(chunk.data(), size_t(n))) {
      out.error = capture.error();
      return out;
    }
    if (capture.ended()) break;
  }
  out.clean = capture.finish();
  if (!out.clean) out.error = capture.error();
  return out;
}

ReadOutcome read_capture_file(const std::string& path, LiveCapture& capture) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ReadOutcome out;
    out.error = path + ": " + std::strerror(errno);
    return out;
  }
  ReadOutcome out = read_stream(fd, capture);
  ::close(fd);
  return out;
}

}  // namespace sl::capture
