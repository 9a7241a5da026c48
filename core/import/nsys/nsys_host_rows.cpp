// The Nsight loader's host rows: CUDA API calls, OS runtime calls and NVTX, on the threads of
// their processes (NVTX start/end ranges on async tracks), with the host processes and threads.
#include "core/import/nsys/nsys_loader_class.h"

#include <cstdio>
#include <optional>
#include <string>
#include <utility>

namespace sl::nsys_detail {
namespace {

// nsys NVTX_EVENTS.eventType values (ENUM_NSYS_EVENT_TYPE).
enum NvtxType : int64_t {
  kNvtxCategory = 33,
  kNvtxMark = 34,
  kNvtxThread = 39,
  kNvtxPushPop = 59,
  kNvtxStartEnd = 60,
  kNvtxtCategory = 64,
  kNvtxtMark = 65,
  kNvtxtPushPop = 70,
  kNvtxtStartEnd = 71,
  kNvtxtMetaThread = 72,
  kNvtxtMetaProcess = 73,
  kNvtxtMetaFile = 74,
  kNvtxDomainCreate = 75,
};

}  // namespace

// ---------------------------------------------------------------- placement

// Kineto files GPU work under pid = device id: a host process whose pid equals a device id
// (pid 1 in a container) moves to pid + 2^32 so the two never merge.
uint32_t NsysLoader::host_process(int64_t global_pid) {
  auto it = host_processes_.find(global_pid);
  if (it != host_processes_.end()) return it->second;
  auto info = process_info_.find(global_pid);
  int64_t pid = info != process_info_.end() ? info->second.pid : int64_t((uint64_t(global_pid) >> 24) & 0xFFFFFF);
  int64_t key = device_names_.count(pid) ? pid + (int64_t(1) << 32) : pid;
  uint32_t p = builder_->process(std::to_string(key), key);
  if (info != process_info_.end() && !info->second.name.empty())
    builder_->set_process_name(p, store_->strings.intern(info->second.name));
  builder_->set_process_labels(p, store_->strings.intern("CPU"));
  builder_->set_process_sort_index(p, pid);
  host_processes_[global_pid] = p;
  return p;
}

// nsys global thread ids pack the process (bits 24 and up) and the thread id (low 24 bits).
uint32_t NsysLoader::thread_track(int64_t global_tid) {
  if (last_track_ != kNone && global_tid == last_tid_) return last_track_;
  auto it = thread_tracks_.find(global_tid);
  uint32_t track;
  if (it != thread_tracks_.end()) {
    track = it->second;
  } else {
    int64_t tid = int64_t(uint64_t(global_tid) & 0xFFFFFF);
    track = builder_->thread_track(host_process(pid_of(global_tid)), std::to_string(tid), tid);
    reserve_track(track, host_rows_, host_track_reserved_);
    auto name = thread_names_.find(global_tid);
    if (name != thread_names_.end()) builder_->set_thread_name(track, string_id(name->second));
    thread_tracks_[global_tid] = track;
  }
  last_tid_ = global_tid;
  last_track_ = track;
  return track;
}

// ---------------------------------------------------------------- rows

namespace {

// A CUDA API call's args from its row (kRuntimeColumns): its correlation id and return value.
template <class Source, class Out>
void api_args(const Source& s, Out& out) {
  if (std::optional<int64_t> id = s.opt(4)) out.number(kArgCorrelation, *id);
  if (std::optional<int64_t> result = s.opt(6)) out.number(kArgReturnValue, *result);
}
constexpr size_t kApiArgsBytes = 2 * ArgsRecordWriter::kMaxIntBytes;

}  // namespace

bool NsysLoader::read_runtime() {
  const char* table = "CUPTI_ACTIVITY_KIND_RUNTIME";
  if (!require(table, {"start", "end", "globalTid", "nameId"})) return true;
  auto encode = [](const auto& s, auto& out) { api_args(s, out); };
  return scan_direct(table, kRuntimeColumns, [&](const auto& s) {
    ++store_->counts.events;
    TimeNs start, dur;
    bool open;
    std::optional<int64_t> thread = s.opt(3);
    if (!thread) return skip_row(IssueKind::MissingField);
    if (!time_span(s, 0, start, dur, open)) return;
    if (open) store_->issues.add_count(IssueKind::MissingField, 1);
    StringId name = api_name(s.opt(5));
    // eventClass (ENUM_NSYS_EVENT_CLASS): 0 CUDA runtime, 1 CUDA driver; else by the name.
    std::optional<int64_t> event_class = s.opt(2);
    bool runtime = event_class ? *event_class == 0 : store_->strings.view(name).starts_with("cuda");
    int64_t gtid = *thread;
    uint32_t track = thread_track(gtid);
    std::optional<int64_t> id = s.opt(4);
    if (id) {
      // Its correlation row comes with its first GPU activity (launched_correlation).
      SlicePlace place{track, uint32_t(store_->tracks[track].slices.size())};
      launches_.add(correlation_key(pid_of(gtid), *id), place);
    }
    uint32_t args = row_args<kApiArgsBytes>(s, encode);
    builder_->add_linked_slice(track, start, dur, name, runtime ? cat_runtime_ : cat_driver_, args, kNone);
  }, prepare_args<std::size(kRuntimeColumns), kApiArgsBytes>(encode));
}

bool NsysLoader::read_osrt() {
  const char* table = "OSRT_API";
  if (!require(table, {"start", "end", "globalTid", "nameId"})) return true;
  static constexpr const char* kColumns[] = {"start", "end", "globalTid", "nameId", "returnValue"};
  return scan_direct(table, kColumns, [&](const auto& s) {
    ++store_->counts.events;
    TimeNs start, dur;
    bool open;
    if (s.null(2)) return skip_row(IssueKind::MissingField);
    if (!time_span(s, 0, start, dur, open)) return;
    if (open) store_->issues.add_count(IssueKind::MissingField, 1);
    uint32_t args = kNone;
    if (!s.null(4)) {
      args_->begin();
      args_->number(kArgReturnValue, s.i64(4));
      args = args_->end();
    }
    builder_->add_slice(thread_track(s.i64(2)), start, dur, string_id(s.opt(3)), cat_osrt_, args, std::nullopt);
  });
}

// Domain and category names are rows of NVTX_EVENTS themselves; read them before the ranges.
bool NsysLoader::read_nvtx_names() {
  static constexpr const char* kColumns[] = {"eventType", "domainId", "category", "text", "textId"};
  return scan_direct("NVTX_EVENTS", kColumns, [&](const auto& s) {
    --rows_;  // read again for the ranges: progress counts the rows there
    int64_t type = s.i64(0);
    if (type != kNvtxDomainCreate && type != kNvtxCategory && type != kNvtxtCategory) return;
    std::string name(s.null(3) ? store_->strings.view(string_id(s.opt(4))) : s.text(3));
    uint64_t domain = uint64_t(s.opt(1).value_or(0));
    if (type == kNvtxDomainCreate) nvtx_domains_[domain] = name;
    else nvtx_categories_[domain << 32 ^ uint64_t(s.opt(2).value_or(0))] = name;
  });
}

bool NsysLoader::read_nvtx() {
  const char* table = "NVTX_EVENTS";
  if (!require(table, {"start", "eventType"})) return true;
  if (!read_nvtx_names()) return false;
  static constexpr const char* kColumns[] = {"start", "end", "eventType", "globalTid", "text", "textId",
                                             "domainId", "category", "color", "int64Value", "uint64Value",
                                             "doubleValue", "int32Value", "uint32Value", "floatValue", "rangeId"};
  uint64_t row = 0;
  return scan_direct(table, kColumns, [&](const auto& s) {
    ++row;
    int64_t type = s.opt(2).value_or(-1);
    if (type == kNvtxCategory || type == kNvtxtCategory || type == kNvtxDomainCreate || type == kNvtxThread ||
        type == kNvtxtMetaThread || type == kNvtxtMetaProcess || type == kNvtxtMetaFile) {
      ++store_->counts.metadata;
      return;
    }
    ++store_->counts.events;
    bool range = type == kNvtxPushPop || type == kNvtxtPushPop, async = type == kNvtxStartEnd || type == kNvtxtStartEnd;
    bool mark = type == kNvtxMark || type == kNvtxtMark;
    if (!range && !async && !mark) return skip_row(IssueKind::SkippedPhase);
    if (s.null(3)) return skip_row(IssueKind::MissingField);
    TimeNs start, dur;
    bool open;
    if (!time_span(s, 0, start, dur, open)) return;
    StringId name = s.null(4) ? string_id(s.opt(5)) : store_->strings.intern(s.text(4));
    uint64_t domain = uint64_t(s.opt(6).value_or(0));
    args_->begin();
    if (domain) {
      auto d = nvtx_domains_.find(domain);
      d != nvtx_domains_.end() ? args_->text(kArgDomain, d->second) : args_->number(kArgDomain, int64_t(domain));
    }
    if (int64_t category = s.opt(7).value_or(0)) {
      auto c = nvtx_categories_.find(domain << 32 ^ uint64_t(category));
      c != nvtx_categories_.end() ? args_->text(kArgCategory, c->second) : args_->number(kArgCategory, category);
    }
    if (!s.null(8)) {
      char color[8];
      std::snprintf(color, sizeof color, "#%06x", unsigned(uint64_t(s.i64(8)) & 0xFFFFFF));  // ARGB → #rrggbb
      args_->text(kArgColor, color);
    }
    for (int c = 9; c <= 14; ++c) {
      if (s.null(c)) continue;
      c == 11 || c == 14 ? args_->real(kArgPayload, s.f64(c)) : args_->number(kArgPayload, s.i64(c));
      break;
    }
    uint32_t args = args_->end();
    int64_t gtid = s.i64(3);
    if (mark) return builder_->add_instant(thread_track(gtid), start, name, cat_annotation_, args, 't');
    if (range) {
      uint32_t track = thread_track(gtid);
      if (open) return builder_->add_begin(track, start, name, cat_annotation_, args, std::nullopt, row);
      return builder_->add_slice(track, start, dur, name, cat_annotation_, args, std::nullopt);
    }
    // Start/end ranges may end on another thread: one async track per process and domain.
    uint32_t process = host_process(pid_of(gtid));
    auto [it, added] = nvtx_async_.try_emplace({process, domain}, 0);
    if (added) {
      auto d = nvtx_domains_.find(domain);
      std::string track_name = d != nvtx_domains_.end() ? "NVTX " + d->second : std::string("NVTX");
      it->second = builder_->async_track(process, cat_annotation_, store_->strings.intern(track_name));
    }
    if (open) return builder_->add_async_begin(it->second, ~row, start, name, cat_annotation_, args, row);
    builder_->add_slice(it->second, start, dur, name, cat_annotation_, args, std::nullopt);
  });
}

}  // namespace sl::nsys_detail
