// Kineto `[memory]` instants → the store's memory table (core/store/memory_events.h).
//
// Read once the store is finished: the instants are on their thread tracks with rebased times,
// and their args are decoded from the compressed blocks here, once per load, so the JSON parse
// of every other event pays nothing for it. The instants themselves stay where they are.
#include <simdjson.h>

#include <algorithm>
#include <cmath>

#include "core/import/kineto/kineto_loader_class.h"

namespace sl::kineto_detail {

namespace {

std::optional<int64_t> integer_field(simdjson::dom::object args, std::string_view key) {
  simdjson::dom::element v;
  if (args[key].get(v)) return std::nullopt;
  int64_t i = 0;
  if (!v.get_int64().get(i)) return i;
  uint64_t u = 0;
  if (!v.get_uint64().get(u)) return int64_t(u);  // an address above 2^63 keeps its bits
  double d = 0;
  if (!v.get_double().get(d) && std::isfinite(d) && std::fabs(d) < 9.2e18) return int64_t(std::llround(d));
  return std::nullopt;
}

}  // namespace

void collect_memory_events(TraceStore& store) {
  StringId memory = store.strings.find("[memory]");
  if (memory == StringPool::kNotFound) return;
  // In args order (the file's), so each compressed args block is decoded once, not once per
  // thread whose instants visit it.
  struct Instant {
    uint32_t args, track, row;
  };
  std::vector<Instant> instants;
  for (uint32_t t = 0; t < store.tracks.size(); ++t) {
    const InstantColumns& in = store.tracks[t].instants;
    for (uint32_t i = 0; i < in.size(); ++i)
      if (in.name[i] == memory) instants.push_back({in.args[i], t, i});
  }
  std::sort(instants.begin(), instants.end(), [](const Instant& a, const Instant& b) { return a.args < b.args; });
  simdjson::dom::parser parser;
  MemoryEvents& out = store.memory;
  for (const Instant& it : instants) {
    MemoryEvents::Row row;
    row.ts = store.tracks[it.track].instants.ts[it.row];
    row.track = it.track;
    simdjson::dom::object args;
    // Without readable args there is nothing to say about memory; the instant stays on its track.
    if (it.args == kNone || parser.parse(simdjson::padded_string(store.args_json(it.args))).get(args)) continue;
    bool clamped = false;
    int64_t bytes = MemoryEvents::clamp_bytes(integer_field(args, "Bytes").value_or(0), clamped);
    row.bytes = bytes;
    row.action = bytes < 0 ? MemoryAction::Free : MemoryAction::Alloc;
    row.addr = uint64_t(integer_field(args, "Addr").value_or(0));
    if (auto total = integer_field(args, "Total Allocated")) row.total_allocated = MemoryEvents::clamp_bytes(*total, clamped);
    if (auto total = integer_field(args, "Total Reserved")) row.total_reserved = MemoryEvents::clamp_bytes(*total, clamped);
    if (clamped) store.issues.add_count(IssueKind::IllTypedField, 1);
    int64_t type = integer_field(args, "Device Type").value_or(kMemoryCuda);
    int64_t id = integer_field(args, "Device Id").value_or(type == kMemoryCpu ? -1 : 0);
    row.device_type = int8_t(std::clamp<int64_t>(type, INT8_MIN, INT8_MAX));
    row.device_id = int32_t(std::clamp<int64_t>(id, INT32_MIN, INT32_MAX));
    out.append(row);
  }
  // Time order; at one time, the file's order (args rows are in file order).
  out.sort_by_time();
}

}  // namespace sl::kineto_detail
