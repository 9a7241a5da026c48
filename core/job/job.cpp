#include "core/job/job.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <cstdio>
#include <map>
#include <set>
#include <thread>

#include "core/report/trace_info.h"
#include "core/store/cores.h"
#include "core/text/json_writer.h"

namespace sl {
namespace fs = std::filesystem;

std::string_view rank_source_name(RankSource s) {
  switch (s) {
    case RankSource::DistributedInfo: return "distributedInfo.rank";
    case RankSource::FileName: return "file name";
    case RankSource::FileOrder: return "file order";
  }
  return "?";
}

std::optional<RankSource> rank_source_named(std::string_view option) {
  if (option == "distributed-info") return RankSource::DistributedInfo;
  if (option == "name") return RankSource::FileName;
  if (option == "order") return RankSource::FileOrder;
  return std::nullopt;
}

namespace {

std::string lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = char(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

bool is_snapshot_name(const std::string& path) { return lower(fs::path(path).filename().string()).ends_with(".slsnap"); }

// Rank files: Kineto traces and their snapshots (core/snapshot/SNAPSHOT.md), which every command opens.
bool is_trace_name(const std::string& path) {
  std::string n = lower(fs::path(path).filename().string());
  return n.ends_with(".json") || n.ends_with(".json.gz") || is_snapshot_name(path);
}

constexpr const char* kNotATrace = "not a .json, .json.gz or .slsnap file";

// `sightline convert X.json.gz` writes X.slsnap beside the trace. In a folder holding both, the
// trace is the rank and its snapshot is skipped, so the rank is not counted twice (a reopen of
// the trace is as fast through the snapshot cache). Returns the trace, or "" for a lone snapshot.
std::string trace_beside(const std::string& snapshot) {
  std::string stem = snapshot.substr(0, snapshot.size() - std::string_view(".slsnap").size());
  std::error_code ec;
  for (const char* ext : {".json", ".json.gz"})
    if (fs::is_regular_file(stem + ext, ec)) return stem + ext;
  return {};
}

// Natural order: digit runs compare as numbers, so worker10 sorts after worker9.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t i2 = i, j2 = j;
      while (i2 < a.size() && std::isdigit(static_cast<unsigned char>(a[i2]))) ++i2;
      while (j2 < b.size() && std::isdigit(static_cast<unsigned char>(b[j2]))) ++j2;
      std::string_view da(a.data() + i, i2 - i), db(b.data() + j, j2 - j);
      while (da.size() > 1 && da[0] == '0') da.remove_prefix(1);
      while (db.size() > 1 && db[0] == '0') db.remove_prefix(1);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = i2, j = j2;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

// The loader fails at byte 0 with one of these when the file is JSON of another kind (an
// execution trace, a config) or not JSON at all: such files are skipped, not failed ranks.
// "Not a trace: expected a JSON object" is only said of the first non-blank byte, which
// whitespace or a byte-order mark may put past byte 0 (binary data starting with a '\r').
bool is_wrong_kind(const LoadError& e) {
  if (e.cancelled) return false;
  if (e.message.starts_with("not a trace: expected a JSON object")) return true;
  if (e.byte_offset != 0) return false;
  return e.message.find("not a trace") != std::string::npos ||
         e.message.find("not a Chrome/Kineto trace") != std::string::npos;
}

}  // namespace

std::optional<int64_t> rank_from_file_name(std::string_view file_name) {
  std::string n = lower(file_name);
  for (std::string_view key : {std::string_view("rank"), std::string_view("worker")}) {
    for (size_t at = n.find(key); at != std::string::npos; at = n.find(key, at + 1)) {
      size_t p = at + key.size();
      if (p < n.size() && (n[p] == '-' || n[p] == '_')) ++p;
      int64_t v = 0;
      auto r = std::from_chars(n.data() + p, n.data() + n.size(), v);
      if (r.ec == std::errc{} && r.ptr != n.data() + p) return v;
    }
  }
  return std::nullopt;
}

bool is_job_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

JobPlan plan_job_files(const std::vector<std::string>& files) {
  JobPlan plan;
  for (const auto& f : files) {
    if (is_trace_name(f)) plan.files.push_back(f);
    else plan.skipped.push_back({f, kNotATrace});
  }
  if (plan.files.empty())
    plan.error = files.empty() ? "no trace files given"
                               : "no Kineto traces (.json, .json.gz) or snapshots (.slsnap) among the files given";
  return plan;
}

JobPlan plan_job_dir(const std::string& dir) {
  JobPlan plan;
  plan.source = dir;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    plan.error = dir + ": " + ec.message();
    return plan;
  }
  std::vector<std::string> entries;
  for (const auto& e : it) entries.push_back(e.path().string());
  std::sort(entries.begin(), entries.end(), natural_less);
  for (const auto& p : entries) {
    if (fs::is_directory(p, ec)) plan.skipped.push_back({p, "a directory (jobs are not searched recursively)"});
    else if (!is_trace_name(p)) plan.skipped.push_back({p, kNotATrace});
    else if (std::string trace = is_snapshot_name(p) ? trace_beside(p) : ""; !trace.empty())
      plan.skipped.push_back({p, "the snapshot of " + trace + ", which is read instead"});
    else plan.files.push_back(p);
  }
  if (entries.empty()) plan.error = dir + ": empty directory, no rank traces";
  else if (plan.files.empty())
    plan.error = dir + ": no Kineto traces (.json, .json.gz) or snapshots (.slsnap) among its " +
                 std::to_string(entries.size()) + " entries";
  return plan;
}

JobRank load_rank(const std::string& path, const LoadOptions& options, const CacheSettings* cache) {
  JobRank r;
  r.path = path;
  OpenedTrace opened = open_trace(path, options, cache ? *cache : CacheSettings{}, true);
  LoadResult& loaded = opened.loaded;
  r.origin = opened.origin;
  r.cache_notices = std::move(opened.notices);
  r.cache_warning = std::move(opened.write_warning);
  r.load_seconds = loaded.seconds;
  r.store = std::move(loaded.store);
  r.error = std::move(loaded.error);
  return r;
}

void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)>& fn) {
  if (!threads) threads = usable_cores();
  threads = unsigned(std::min<size_t>(threads, n));
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) fn(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

// distributedInfo.rank, else the file name, else the file's position among the rank files; only
// `from` when given. False (with `error`) when the file has no rank of that source.
bool name_rank(JobRank& r, size_t file_order, std::optional<RankSource> from, std::string& error) {
  std::optional<int64_t> distributed = r.ok() ? r.store->meta.rank : std::nullopt;
  std::optional<int64_t> named = rank_from_file_name(fs::path(r.path).filename().string());
  if (from == RankSource::DistributedInfo && !distributed) {
    error = r.path + ": --rank-from distributed-info, but " + (r.ok() ? "it has no distributedInfo.rank" : "it failed to load");
    return false;
  }
  if (from == RankSource::FileName && !named) {
    error = r.path + ": --rank-from name, but its name holds no rank (rank-N, rank_N, rankN, workerN)";
    return false;
  }
  if (distributed && (!from || from == RankSource::DistributedInfo)) {
    r.rank = *distributed;
    r.rank_source = RankSource::DistributedInfo;
  } else if (named && from != RankSource::FileOrder) {
    r.rank = *named;
    r.rank_source = RankSource::FileName;
  } else {
    r.rank = int64_t(file_order);
    r.rank_source = RankSource::FileOrder;
  }
  return true;
}

namespace {

// "two files claim rank 0: A (distributedInfo.rank) and B (distributedInfo.rank)", and the way
// forward: number them by another source.
std::string duplicate_rank_error(const JobRank& a, const JobRank& b, std::optional<RankSource> from) {
  std::string o = "two files claim rank " + std::to_string(a.rank) + ": " + a.path + " (" + std::string(rank_source_name(a.rank_source)) +
                  ") and " + b.path + " (" + std::string(rank_source_name(b.rank_source)) + ")";
  if (from == RankSource::FileOrder) return o;
  o += "; --rank-from ";
  o += a.rank_source == RankSource::FileName ? "order numbers the files by their order"
                                              : "name takes each rank from its file name, --rank-from order from the files' order";
  return o;
}

}  // namespace

size_t Job::loaded_count() const {
  return size_t(std::count_if(ranks.begin(), ranks.end(), [](const JobRank& r) { return r.ok(); }));
}

const JobRank* Job::find(int64_t rank) const {
  for (const auto& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

namespace {

// Runs load_rank over every planned file on the shared pool.
std::vector<JobRank> load_all(const JobPlan& plan, const JobOptions& options) {
  std::vector<JobRank> out(plan.files.size());
  parallel_for(plan.files.size(), options.threads, [&](size_t i) {
    LoadOptions lo;
    lo.cancel = options.cancel;
    if (options.on_rank_progress) lo.on_progress = [&, i](const LoadProgress& p) { options.on_rank_progress(i, p); };
    out[i] = load_rank(plan.files[i], lo, options.cache);
    if (options.on_rank_done) options.on_rank_done(i, out[i]);
  });
  return out;
}


}  // namespace

namespace {

// "\n  skipped FILE: REASON" per file, so "no traces" errors say what was there instead.
std::string skipped_lines(const std::vector<SkippedFile>& skipped) {
  std::string o;
  for (const auto& s : skipped) o += "\n  skipped " + s.path + ": " + s.reason;
  return o;
}

}  // namespace

JobResult load_job(const JobPlan& plan, const JobOptions& options) {
  JobResult result;
  if (!plan.ok()) {
    result.error = plan.error + skipped_lines(plan.skipped);
    return result;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::vector<JobRank> loaded = load_all(plan, options);
  if (options.cancel && options.cancel->load()) {
    result.error = "cancelled";
    return result;
  }
  auto job = std::make_unique<Job>();
  job->source = plan.source;
  job->skipped = plan.skipped;
  job->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& r : loaded) {
    if (!r.ok() && is_wrong_kind(r.error)) job->skipped.push_back({r.path, r.error.message});
    else job->ranks.push_back(std::move(r));
  }
  if (job->ranks.empty()) {
    result.error = (plan.source.empty() ? std::string("the files given") : plan.source) +
                   ": no Kineto traces among " + std::to_string(plan.files.size() + plan.skipped.size()) + " files" +
                   skipped_lines(job->skipped);
    return result;
  }
  for (size_t i = 0; i < job->ranks.size(); ++i)
    if (!name_rank(job->ranks[i], i, options.rank_from, result.error)) return result;
  std::stable_sort(job->ranks.begin(), job->ranks.end(),
                   [](const JobRank& a, const JobRank& b) { return a.rank < b.rank; });
  for (size_t i = 1; i < job->ranks.size(); ++i) {
    const JobRank &a = job->ranks[i - 1], &b = job->ranks[i];
    if (a.rank == b.rank) {
      result.error = duplicate_rank_error(a, b, options.rank_from);
      return result;
    }
  }
  result.job = std::move(job);
  return result;
}

}  // namespace sl

namespace sl {

std::vector<std::vector<size_t>> overlapping_groups(const std::vector<std::pair<TimeNs, TimeNs>>& spans) {
  std::vector<size_t> order(spans.size());
  for (size_t i = 0; i < spans.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a] < spans[b]; });
  std::vector<std::vector<size_t>> groups;
  TimeNs group_end = 0;
  for (size_t i : order) {
    if (groups.empty() || spans[i].first > group_end) groups.emplace_back(), group_end = spans[i].second;
    groups.back().push_back(i);
    group_end = std::max(group_end, spans[i].second);
  }
  return groups;
}

std::string ranks_text(std::vector<int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string o = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) o += (i ? ", " : "") + std::to_string(ranks[i]);
  return o;
}

namespace {

// "A (ranks 0, 2), B (rank 1)" when the loaded ranks say more than one value; "" otherwise.
// Ranks that say nothing (no devices, no world_size) are left out.
std::string disagreement(const Job& job, const std::function<std::string(const JobRank&)>& value_of) {
  std::map<std::string, std::vector<int64_t>> by_value;
  for (const JobRank& r : job.ranks)
    if (r.ok())
      if (std::string v = value_of(r); !v.empty()) by_value[v].push_back(r.rank);
  if (by_value.size() < 2) return {};
  std::string o;
  for (const auto& [value, ranks] : by_value) o += (o.empty() ? "" : ", ") + value + " (" + ranks_text(ranks) + ")";
  return o;
}

std::string device_type(const JobRank& r) {
  std::set<std::string> types;
  for (const Device& d : r.store->meta.devices) types.insert(device_description(*r.store, d));
  std::string o;
  for (const std::string& t : types) o += (o.empty() ? "" : " + ") + t;
  return o;
}

}  // namespace

std::vector<std::string> job_warnings(const Job& job) {
  std::vector<std::string> out;
  if (std::string d = disagreement(job, device_type); !d.empty()) out.push_back("ranks disagree on device type: " + d);
  auto world = [](const JobRank& r) { return r.store->meta.world_size ? std::to_string(*r.store->meta.world_size) : ""; };
  if (std::string w = disagreement(job, world); !w.empty()) out.push_back("ranks disagree on world_size: " + w);
  std::vector<std::pair<TimeNs, TimeNs>> spans;
  std::vector<int64_t> rank_of;
  for (const JobRank& r : job.ranks)
    if (r.ok()) spans.push_back({r.store->origin_ns, r.store->origin_ns + r.store->end_ns}), rank_of.push_back(r.rank);
  std::vector<std::vector<size_t>> groups = overlapping_groups(spans);
  if (groups.size() > 1) {
    std::string list;
    for (const auto& g : groups) {
      std::vector<int64_t> ranks;
      for (size_t i : g) ranks.push_back(rank_of[i]);
      list += (list.empty() ? "" : " | ") + ranks_text(ranks);
    }
    out.push_back("the ranks' clocks do not overlap at all (" + list +
                  "): separate recordings, or hosts whose clocks differ by more than the traces last");
  }
  if (!out.empty()) out.back() += "; are these one job?";
  return out;
}

namespace {

std::string json_string(std::string_view s) {
  JsonWriter w;
  w.value(s);
  return w.str();
}

}  // namespace

std::string job_ranks_json(const Job& job, std::string_view indent) {
  std::string o = "[";
  for (size_t i = 0; i < job.ranks.size(); ++i) {
    const JobRank& r = job.ranks[i];
    o += (i ? ",\n" : "\n") + std::string(indent);
    o += "{\"rank\": " + std::to_string(r.rank) + ", \"file\": " + json_string(r.path) + ", \"rank_source\": " +
         json_string(rank_source_name(r.rank_source)) + ", \"status\": " + (r.ok() ? "\"ok\"" : "\"failed\"") +
         ", \"error\": " + (r.ok() ? std::string("null") : json_string(r.error.to_string())) +
         ", \"trace\": " + (r.ok() ? info_json(*r.store) : std::string("null")) + "}";
  }
  return o + "]";
}

std::string job_skipped_json(const Job& job) {
  std::string o = "[";
  for (size_t i = 0; i < job.skipped.size(); ++i)
    o += (i ? ", " : "") + std::string("{\"file\": ") + json_string(job.skipped[i].path) +
         ", \"reason\": " + json_string(job.skipped[i].reason) + "}";
  return o + "]";
}

std::string job_warnings_json(const Job& job) {
  std::string o = "[";
  for (const std::string& w : job_warnings(job)) o += (o.size() > 1 ? ", " : "") + json_string(w);
  return o + "]";
}

std::string job_info_json(const Job& job, double load_seconds) {
  std::string o = "{\"job\": " + json_string(job.source) + ", \"ranks\": " + job_ranks_json(job, "  ") +
                  ",\n \"skipped\": " + job_skipped_json(job) + ", \"warnings\": " + job_warnings_json(job);
  if (load_seconds >= 0) {
    JsonWriter w;
    w.value(load_seconds);
    o += ", \"load_seconds\":" + w.str();
  }
  return o + "}";
}

std::string job_info_text(const Job& job, double load_seconds) {
  auto summary_of = [](const TraceStore& s) {
    TraceSummary t = summarize(s);
    char buf[160];
    std::snprintf(buf, sizeof buf, "%10llu %8llu %8llu %14.3f", (unsigned long long)s.counts.events,
                  (unsigned long long)t.kernels, (unsigned long long)s.iterations.size(), double(s.end_ns) / 1000.0);
    return std::string(buf);
  };
  std::string o = "job             " + (job.source.empty() ? std::string("(files)") : job.source) + "\n";
  o += "ranks           " + std::to_string(job.ranks.size()) + " (" + std::to_string(job.loaded_count()) +
       " loaded, " + std::to_string(job.ranks.size() - job.loaded_count()) + " failed)\n";
  if (load_seconds >= 0) o += "loaded in       " + load_time_text(load_seconds) + "\n";
  o += "\nrank  source                status      events  kernels    iters  trace_span_us  file\n";
  for (const JobRank& r : job.ranks) {
    char head[96];
    std::snprintf(head, sizeof head, "%-5lld %-21s %-7s", (long long)r.rank, std::string(rank_source_name(r.rank_source)).c_str(),
                  r.ok() ? "ok" : "failed");
    o += head;
    o += r.ok() ? summary_of(*r.store) : std::string(41, ' ');
    o += "  " + r.path + "\n";
    if (!r.ok()) o += "      error: " + r.error.to_string() + "\n";
  }
  if (!job.skipped.empty()) {
    o += "\nskipped (not rank traces):\n";
    for (const auto& s : job.skipped) o += "  " + s.path + ": " + s.reason + "\n";
  }
  return o;
}

}  // namespace sl
