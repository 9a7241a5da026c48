// The Nsight loader's reference tables: the strings (StringIds), the session's start, processes,
// threads and devices, read before the events that name them.
#include "core/import/nsys/nsys_loader_class.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/text/json_writer.h"

namespace sl::nsys_detail {

// ---------------------------------------------------------------- reference tables

bool NsysLoader::read_strings() {
  if (!require("StringIds", {"id", "value"})) return fail("StringIds lacks its id or value column");
  uint64_t count = 0;
  static constexpr const char* kColumns[] = {"id", "value"};
  bool ok = scan_direct("StringIds", kColumns, [&](const auto& s) {
    std::string_view value = s.text(1).substr(0, kNone - 1);
    if (value.size() > raw_left_) {
      raw_left_ = std::max<size_t>(value.size(), 4 << 20);
      raw_blocks_.push_back(std::make_unique_for_overwrite<char[]>(raw_left_));
      raw_next_ = raw_blocks_.back().get();
    }
    if (!value.empty()) std::memcpy(raw_next_, value.data(), value.size());  // no block yet for ""
    RawString raw{raw_next_, uint32_t(value.size())};
    raw_next_ += value.size(), raw_left_ -= value.size();
    // Ids are dense from 0 in every export seen: by id in a vector (checked below), others in a map.
    int64_t id = s.i64(0);
    if (id >= 0 && uint64_t(id) <= 4 * count + 1024) {
      if (uint64_t(id) >= raw_dense_.size()) raw_dense_.resize(std::max<size_t>(size_t(id) + 1, 2 * raw_dense_.size()));
      raw_dense_[size_t(id)] = raw;
    } else {
      raw_sparse_[id] = raw;
    }
    ++count;
  });
  if (!ok) return false;
  if (raw_dense_.size() > 4 * count + 1024) {  // ids far apart after all
    for (size_t id = 0; id < raw_dense_.size(); ++id)
      if (raw_dense_[id].size != kNone) raw_sparse_.emplace(int64_t(id), raw_dense_[id]);
    raw_dense_.clear();
  }
  strings_.assign(raw_dense_.size(), StringPool::kNotFound);
  api_dense_.assign(strings_.size(), StringPool::kNotFound);
  return true;
}

StringId NsysLoader::string_id_slow(const std::optional<int64_t>& id) {
  if (!id) return 0;
  auto text = [](RawString raw) { return std::string_view(raw.data, raw.size); };
  bool in_dense = *id >= 0 && uint64_t(*id) < raw_dense_.size();
  if (in_dense && raw_dense_[size_t(*id)].size != kNone)
    return strings_[size_t(*id)] = store_->strings.intern(text(raw_dense_[size_t(*id)]));
  auto it = sparse_strings_.find(*id);
  if (it != sparse_strings_.end()) return it->second;
  auto raw = raw_sparse_.find(*id);  // ids are not in order: one far ahead went here
  // A dangling id: keep the event, named by the id.
  StringId sid = raw != raw_sparse_.end() ? store_->strings.intern(text(raw->second))
                                          : store_->strings.intern("<string " + std::to_string(*id) + ">");
  sparse_strings_[*id] = sid;
  return sid;
}

// "cudaLaunchKernel_v7000" → "cudaLaunchKernel": Kineto and CUPTI callback names carry no
// version suffix, and the analyses match API names exactly.
StringId NsysLoader::api_name_slow(const std::optional<int64_t>& id) {
  int64_t key = id.value_or(INT64_MIN);
  bool dense = id && *id >= 0 && size_t(*id) < api_dense_.size();
  auto it = dense ? api_names_.end() : api_names_.find(key);
  if (it != api_names_.end()) return it->second;
  std::string_view name = store_->strings.view(string_id(id));
  size_t v = name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < name.size() &&
      name.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
    name = name.substr(0, v);
  StringId sid = store_->strings.intern(name.empty() ? std::string_view("<unnamed API call>") : name);
  if (dense) api_dense_[size_t(*id)] = sid;
  else api_names_[key] = sid;
  return sid;
}

bool NsysLoader::read_session_start() {
  if (!require("TARGET_INFO_SESSION_START_TIME", {"utcEpochNs"})) return true;
  return scan("TARGET_INFO_SESSION_START_TIME", "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME",
              [&](const Statement& s) {
                int64_t t = s.i64(0);
                if (t > -kMaxAbsNs / 2 && t < kMaxAbsNs / 2) session_ns_ = t;
              });
}

bool NsysLoader::read_processes() {
  if (!require("PROCESSES", {"globalPid", "pid"})) return true;
  return scan("PROCESSES", select("PROCESSES", {"globalPid", "pid", "name"}), [&](const Statement& s) {
    process_info_[s.i64(0)] = {s.i64(1), std::string(s.text(2))};
  });
}

bool NsysLoader::read_threads() {
  if (!require("ThreadNames", {"globalTid", "nameId"})) return true;
  return scan("ThreadNames", "SELECT globalTid, nameId FROM ThreadNames",
              [&](const Statement& s) { thread_names_[s.i64(0)] = s.i64(1); });
}

// TARGET_INFO_GPU → devices, with the keys Kineto writes in deviceProperties (and the clocks,
// bandwidth and cache nsys adds, under their nsys names).
bool NsysLoader::read_devices() {
  if (require("TARGET_INFO_CUDA_CONTEXT_INFO", {"deviceId"})) {
    bool ok = scan("TARGET_INFO_CUDA_CONTEXT_INFO", "SELECT deviceId FROM TARGET_INFO_CUDA_CONTEXT_INFO",
                   [&](const Statement& s) { device_names_.try_emplace(s.i64(0)); });
    if (!ok) return false;
  }
  if (!require("TARGET_INFO_GPU", {"id"})) return true;
  static constexpr std::pair<const char*, const char*> kNumbers[] = {
      {"totalMemory", "totalGlobalMem"},  {"computeMajor", "computeMajor"},
      {"computeMinor", "computeMinor"},   {"maxThreadsPerBlock", "maxThreadsPerBlock"},
      {"maxRegistersPerBlock", "regsPerBlock"}, {"threadsPerWarp", "warpSize"},
      {"maxShmemPerBlock", "sharedMemPerBlock"}, {"smCount", "numSms"},
      {"maxRegistersPerSm", "regsPerMultiprocessor"}, {"maxShmemPerBlockOptin", "sharedMemPerBlockOptin"},
      {"maxShmemPerSm", "sharedMemPerMultiprocessor"}, {"clockRate", "clockRate"},
      {"memoryBandwidth", "memoryBandwidth"}, {"l2CacheSize", "l2CacheSize"}};
  std::string sql = "SELECT id, " + std::string(has_column("TARGET_INFO_GPU", "cuDevice") ? "cuDevice" : "NULL") +
                    ", " + (has_column("TARGET_INFO_GPU", "name") ? "name" : "NULL") + ", " +
                    (has_column("TARGET_INFO_GPU", "maxWarpsPerSm") ? "maxWarpsPerSm" : "NULL");
  for (auto [column, key] : kNumbers) sql += ", " + std::string(has_column("TARGET_INFO_GPU", column) ? column : "NULL");
  for (const char* text : {"busLocation", "uuid", "chipName"})
    sql += ", " + std::string(has_column("TARGET_INFO_GPU", text) ? text : "NULL");
  sql += " FROM TARGET_INFO_GPU";
  return scan("TARGET_INFO_GPU", sql, [&](const Statement& s) {
    // Kernel rows name the CUDA device (cuDevice); `id` is nsys's own GPU number.
    int64_t id = s.opt(1).value_or(s.i64(0));
    std::string name(s.text(2));
    JsonWriter w;
    w.begin_object().field("id", id).field("name", name);
    int c = 4;
    for (auto [column, key] : kNumbers) {
      if (!s.null(c)) w.field(key, s.i64(c));
      ++c;
    }
    constexpr int kWarpSize = 4 + 5;  // threadsPerWarp's place in kNumbers, after the 4 leading columns
    int64_t threads = 0;  // warps per SM × warp size
    if (!s.null(3) && !s.null(kWarpSize) && !__builtin_mul_overflow(s.i64(3), s.i64(kWarpSize), &threads))
      w.field("maxThreadsPerMultiprocessor", threads);
    for (const char* text : {"busLocation", "uuid", "chipName"}) {
      if (!s.null(c)) w.field(text, s.text(c));
      ++c;
    }
    w.end_object();
    device_names_[id] = name;
    store_->meta.devices.push_back({id, name, w.str()});
  });
}

}  // namespace sl::nsys_detail
