#include "core/import/memory_snapshot/memory_snapshot_loader.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <unordered_map>

#include "core/import/common/file_reader.h"
#include "core/import/memory_snapshot/pickle.h"
#include "core/store/flat_map.h"

namespace sl {

namespace {

using pickle::Document;
using pickle::Kind;
constexpr uint32_t kMissing = Document::kMissing;

struct ActionOf {
  std::string_view name;
  MemoryAction action;
  int sign;  // of the size in the row's bytes (0: no change to allocated or reserved)
};
// `free` is what PyTorch before 2.1 wrote for free_completed.
constexpr ActionOf kActions[] = {
    {"alloc", MemoryAction::Alloc, 1},
    {"free_completed", MemoryAction::Free, -1},
    {"free", MemoryAction::Free, -1},
    {"free_requested", MemoryAction::FreeRequested, 0},
    {"segment_alloc", MemoryAction::SegmentAlloc, 1},
    {"segment_free", MemoryAction::SegmentFree, -1},
    {"segment_map", MemoryAction::SegmentMap, 1},
    {"segment_unmap", MemoryAction::SegmentUnmap, -1},
    {"snapshot", MemoryAction::Snapshot, 0},
    {"oom", MemoryAction::Oom, 0},
};

struct DeviceAddr {
  int32_t device;
  uint64_t addr;
  bool operator==(const DeviceAddr&) const = default;
};

struct DeviceAddrHash {
  size_t operator()(const DeviceAddr& k) const { return mix_bits(k.addr ^ (uint64_t(uint32_t(k.device)) << 48)); }
};
// (device, address) pairs: a snapshot frees and allocates millions of blocks.
using DeviceAddrSet = FlatMap<DeviceAddr, bool, DeviceAddrHash>;

class SnapshotMapper {
public:
  SnapshotMapper(const Document& doc, TraceStore& store) : doc_(doc), store_(store) {}

  std::string run() {
    uint32_t root = doc_.root();
    if (doc_.kind(root) != Kind::Dict) return "not a PyTorch memory snapshot: the pickle holds no dict at its top";
    uint32_t segments = doc_.get(root, "segments"), traces = doc_.get(root, "device_traces");
    if (segments == kMissing && traces == kMissing)
      return "not a PyTorch memory snapshot: its dict has neither \"segments\" nor \"device_traces\"";
    std::vector<Entry> entries;
    if (traces != kMissing) {
      const auto& devices = doc_.items(traces);
      size_t total = 0;
      for (uint32_t d : devices) total += doc_.items(d).size();
      entries.reserve(total);
      for (size_t d = 0; d < devices.size(); ++d)
        for (uint32_t e : doc_.items(devices[d])) read_entry(e, int32_t(d), entries);
    }
    TimeNs first = INT64_MAX;
    for (const Entry& e : entries) first = std::min(first, e.row.ts);
    if (first == INT64_MAX) first = 0;
    // Pre-existing rows first: they existed before anything the trace recorded (the sort by
    // time is stable, so they stay ahead of the first entry at the same instant).
    for (const Entry& e : pre_existing(entries, segments, first)) store_.memory.append(e.row);
    for (const Entry& e : entries) store_.memory.append(e.row);
    store_.memory.sort_by_time();
    if (unknown_actions_) store_.issues.add_count(IssueKind::SkippedPhase, unknown_actions_);
    return {};
  }

private:
  struct Entry {
    MemoryEvents::Row row;
  };
  const Document& doc_;
  TraceStore& store_;
  std::unordered_map<uint32_t, uint32_t> stack_of_frames_;  // frames list node → stack
  struct VectorHash {
    size_t operator()(const std::vector<StringId>& v) const {
      uint64_t h = 1469598103934665603ull;
      for (StringId s : v) h = (h ^ s) * 1099511628211ull;
      return size_t(h);
    }
  };
  std::unordered_map<std::vector<StringId>, uint32_t, VectorHash> stack_of_content_;
  std::unordered_map<uint32_t, StringId> frame_text_;  // frame dict node → its text
  uint64_t unknown_actions_ = 0;

  int64_t int_field(uint32_t dict, std::string_view key, int64_t fallback) const {
    uint32_t v = doc_.get(dict, key);
    return v == kMissing ? fallback : doc_.integer(v, fallback);
  }

  // A size within MemoryEvents' bounds (clamped and counted beyond them).
  int64_t size_of(uint32_t dict, std::string_view key) {
    bool clamped = false;
    int64_t v = MemoryEvents::clamp_bytes(int_field(dict, key, 0), clamped);
    if (clamped) store_.issues.add_count(IssueKind::IllTypedField, 1);
    return v;
  }
  // `time_us` as ns; entries without one take the time before them. Times are kept within
  // [0, 2^52 µs] (epoch µs reach 2^52 in 2112), so differences never overflow.
  TimeNs time_of(uint32_t dict, TimeNs previous) {
    uint32_t v = doc_.get(dict, "time_us");
    if (v == kMissing) return previous;
    int64_t us = doc_.integer(v, 0);
    if (us < 0 || us > (int64_t(1) << 52)) {
      store_.issues.add_count(IssueKind::TimestampOutOfRange, 1);
      us = std::clamp<int64_t>(us, 0, int64_t(1) << 52);
    }
    return us * 1000;
  }

  StringId frame(uint32_t node) {
    auto it = frame_text_.find(node);
    if (it != frame_text_.end()) return it->second;
    std::string text;
    if (doc_.kind(node) == Kind::Dict) {
      uint32_t name = doc_.get(node, "name"), file = doc_.get(node, "filename");
      text = name == kMissing ? "?" : std::string(doc_.str(name));
      text += " (";
      text += file == kMissing ? "?" : doc_.str(file);
      text += ":" + std::to_string(int_field(node, "line", 0)) + ")";
    } else {
      text = doc_.str(node);
    }
    StringId id = store_.strings.intern(text);
    frame_text_.emplace(node, id);
    return id;
  }

  uint32_t stack(uint32_t dict) {
    uint32_t frames = doc_.get(dict, "frames");
    if (frames == kMissing || doc_.items(frames).empty()) return kNone;
    if (auto it = stack_of_frames_.find(frames); it != stack_of_frames_.end()) return it->second;
    std::vector<StringId> ids;
    for (uint32_t f : doc_.items(frames)) ids.push_back(frame(f));
    auto [it, fresh] = stack_of_content_.emplace(ids, 0);
    if (fresh) it->second = store_.memory.add_stack(ids);
    stack_of_frames_.emplace(frames, it->second);
    return it->second;
  }

  void read_entry(uint32_t e, int32_t device, std::vector<Entry>& out) {
    if (doc_.kind(e) != Kind::Dict) return;
    uint32_t action = doc_.get(e, "action");
    const ActionOf* kind = nullptr;
    for (const ActionOf& a : kActions)
      if (action != kMissing && doc_.str(action) == a.name) kind = &a;
    if (!kind) {
      ++unknown_actions_;
      return;
    }
    Entry entry;
    MemoryEvents::Row& r = entry.row;
    r.action = kind->action;
    r.addr = uint64_t(int_field(e, "addr", 0));
    int64_t size = std::abs(size_of(e, "size"));
    r.bytes = kind->sign < 0 ? -size : size;
    r.device_type = kMemoryCuda;
    r.device_id = device;
    r.stream = int_field(e, "stream", -1);
    r.ts = time_of(e, out.empty() ? 0 : out.back().row.ts);
    r.stack = stack(e);
    out.push_back(entry);
  }

  // The pre-existing rule (analyses.md §11): every block freed in the trace before any alloc of
  // its address there, and every block still allocated in the final `segments` state that the
  // trace never allocated, counts from the first trace entry on. Reserved memory the trace did not
  // see being reserved (the final segments less what the trace reserved) likewise.
  std::vector<Entry> pre_existing(const std::vector<Entry>& entries, uint32_t segments, TimeNs first) {
    DeviceAddrSet allocated(entries.size());  // addresses the trace allocated (so far, then at all)
    DeviceAddrSet pre(64);                    // pre-existing blocks already placed
    std::vector<Entry> added;
    std::unordered_map<int32_t, int64_t> reserved_delta;
    for (const Entry& e : entries) {
      const MemoryEvents::Row& r = e.row;
      DeviceAddr key{r.device_id, r.addr};
      if (r.action == MemoryAction::Alloc) allocated.insert(key, true);
      if ((r.action == MemoryAction::Free || r.action == MemoryAction::FreeRequested) && !allocated.contains(key) &&
          pre.insert(key, true)) {
        Entry p = e;
        p.row.action = MemoryAction::Alloc;
        p.row.bytes = std::abs(r.bytes);
        p.row.ts = first;
        p.row.stack = kNone;  // the free's frames say where it was freed, not where it was allocated
        p.row.flags = kMemoryPreExisting;
        added.push_back(p);
      }
      if (r.action == MemoryAction::SegmentAlloc || r.action == MemoryAction::SegmentFree ||
          r.action == MemoryAction::SegmentMap || r.action == MemoryAction::SegmentUnmap)
        reserved_delta[r.device_id] = MemoryEvents::add(reserved_delta[r.device_id], r.bytes);
    }
    std::unordered_map<int32_t, int64_t> reserved_final;
    if (segments != kMissing)
      for (uint32_t s : doc_.items(segments)) {
        if (doc_.kind(s) != Kind::Dict) continue;
        int32_t device = int32_t(std::clamp<int64_t>(int_field(s, "device", 0), 0, INT32_MAX));
        reserved_final[device] = MemoryEvents::add(reserved_final[device], size_of(s, "total_size"));
        uint32_t blocks = doc_.get(s, "blocks");
        if (blocks == kMissing) continue;
        for (uint32_t b : doc_.items(blocks)) {
          uint32_t state = doc_.get(b, "state");
          std::string_view st = state == kMissing ? std::string_view() : doc_.str(state);
          if (st != "active_allocated" && st != "active_pending_free") continue;
          DeviceAddr key{device, uint64_t(int_field(b, "address", 0))};
          if (allocated.contains(key) || !pre.insert(key, true)) continue;
          Entry p;
          p.row.action = MemoryAction::Alloc;
          p.row.addr = key.addr;
          p.row.bytes = std::abs(size_of(b, "size"));
          p.row.device_type = kMemoryCuda;
          p.row.device_id = device;
          p.row.stream = int_field(s, "stream", -1);
          p.row.ts = first;
          p.row.stack = stack(b);
          p.row.flags = kMemoryPreExisting;
          added.push_back(p);
        }
      }
    for (auto& [device, total] : reserved_final) {
      int64_t before = MemoryEvents::add(total, -reserved_delta[device]);
      if (before <= 0) continue;
      Entry p;
      p.row.action = MemoryAction::SegmentAlloc;
      p.row.bytes = before;
      p.row.device_id = device;
      p.row.ts = first;
      p.row.flags = kMemoryPreExisting;
      added.push_back(p);
    }
    return added;
  }
};

}  // namespace

bool is_memory_snapshot_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {};
  if (!in.read(head, 2)) return false;
  return pickle::looks_like_pickle(std::string_view(head, 2));
}

LoadResult read_memory_snapshot_bytes(std::string_view bytes, const std::string& name) {
  auto t0 = std::chrono::steady_clock::now();
  LoadResult result;
  result.error.file = name;
  Document doc;
  pickle::PickleError error;
  if (!doc.parse(bytes, error)) {
    // The offset in the message too: LoadError prints one only with a line, and a pickle has none.
    result.error.message = "memory snapshot, byte " + std::to_string(error.offset) + ": " + error.message;
    result.error.byte_offset = error.offset;
    return result;
  }
  auto store = std::make_unique<TraceStore>();
  std::string problem = SnapshotMapper(doc, *store).run();
  if (!problem.empty()) {
    result.error.message = problem;
    return result;
  }
  MemoryEvents& m = store->memory;
  store->origin_ns = m.empty() ? 0 : m.ts.front();
  m.rebase(store->origin_ns);
  store->meta.file = name;
  store->meta.format = "pytorch-memory-snapshot";
  store->meta.bytes = bytes.size();
  store->finalize();
  result.store = std::move(store);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

LoadResult load_memory_snapshot(const std::string& path, const LoadOptions& options) {
  FileBytes file = read_trace_file(path, options);
  if (!file.buffer) {
    LoadResult result;
    result.error.file = path;
    result.error.message = file.error;
    return result;
  }
  return read_memory_snapshot_bytes(file.buffer->view(), path);
}

}  // namespace sl
