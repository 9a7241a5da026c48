#include "core/fleet/rank_summary.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <unistd.h>

#include "core/analysis/job_overview.h"
#include "core/fleet/sections.h"
#include "core/store/huge_pages.h"

namespace sl::fleet {

namespace fs = std::filesystem;
using analysis::CollectiveCall;
using analysis::IdleCause;
using analysis::Interval;
using analysis::kIdleCauseCount;

namespace {

constexpr char kMagic[] = "SLRANKS";  // with its NUL: 8 bytes
// 2: the analysis section ends with the iteration starts (a format-1 summary reads without them).
constexpr uint32_t kVersion = 2;
// zstd level 1: the summary is written once per rank by the map and read once by the reduce;
// level 3 made it ~8% smaller (58 → 62 KB on a 35 MB trace) for ~1 ms more a rank.
constexpr int kSummaryLevel = 1;
constexpr uint32_t kMeta = tag("META"), kAnalysis = tag("ANLS"), kView = tag("VIEW"), kTime = tag("TIME");

// ---- summarising a loaded rank ----

// The GPUs the rank's work ran on (deviceProperties lists every GPU of the host): "NAME" for
// one, "NAME (xN)" for N of one name, else the names joined; every listed GPU when no GPU
// track names its device.
std::string device_text(const TraceStore& s) {
  std::set<int64_t> used;
  for (const Track& t : s.tracks)
    if (t.kind == TrackKind::GpuStream && t.gpu_work && t.device >= 0) used.insert(t.device);
  std::vector<std::string> names;
  size_t count = 0;
  for (const Device& d : s.meta.devices) {
    if (!used.empty() && !used.count(d.id)) continue;
    ++count;
    if (std::find(names.begin(), names.end(), d.name) == names.end()) names.push_back(d.name);
  }
  if (names.size() == 1 && count > 1) return names[0] + " (x" + std::to_string(count) + ")";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string top_level(const TraceStore& s, std::string_view key) {
  for (const auto& [k, v] : s.meta.top_level)
    if (k == key) return v;
  return {};
}

// A JSON string value without its quotes (hostnames are plain); other values as written.
std::string unquoted(std::string v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
  return v;
}

// A test of a row's category, asked once per run of rows of one category (GPU rows come in runs
// of a track; comparing the text for each row costs more than the rest of the walk).
template <class Test>
class ByCategory {
public:
  explicit ByCategory(Test test) : test_(test) {}
  bool operator()(StringId cat) {
    if (cat != cat_) cat_ = cat, answer_ = test_(cat);
    return answer_;
  }

private:
  Test test_;
  StringId cat_ = StringPool::kNotFound;
  bool answer_ = false;
};

// gpu_work_by_stream's streams (first appearance; a stream of syncs only is none) with their row
// counts and summed durations, in one pass: no stream's rows need sorting for a sum.
std::vector<StreamTotal> stream_totals(const analysis::EventTable& table) {
  std::vector<StreamTotal> out;
  std::vector<char> works;  // per stream: some row is not a sync
  size_t last = 0;          // a trace has a few streams, and rows of one stream come in runs
  ByCategory gpu_work([&](StringId cat) {  // of a GPU row, is_gpu_work depends on its category only
    analysis::Row r;
    r.stream = 0, r.cat = cat;
    return analysis::is_gpu_work(table, r);
  });
  for (uint32_t i : table.gpu) {
    const analysis::Row& r = table.rows[i];
    if (r.stream == -1 || !gpu_work(r.cat)) continue;
    if (last >= out.size() || out[last].stream != r.stream) {
      last = 0;
      while (last < out.size() && out[last].stream != r.stream) ++last;
      if (last == out.size()) out.push_back({r.stream, 0, 0}), works.push_back(0);
    }
    ++out[last].activities;
    out[last].busy += r.dur;
    if (analysis::KernelType(r.kernel_type) != analysis::KernelType::Sync) works[last] = 1;
  }
  size_t kept = 0;
  for (size_t k = 0; k < out.size(); ++k)
    if (works[k]) out[kept++] = out[k];
  out.resize(kept);
  return out;
}

std::vector<TopKernel> top_kernels(const analysis::EventTable& table) {
  std::vector<uint32_t> slot(table.store->strings.size(), kNone);  // name id -> its entry
  std::vector<std::pair<StringId, TopKernel>> by_name;
  ByCategory kernel([&](StringId cat) { return analysis::is_kernel_cat(table.store->strings.view(cat)); });
  for (uint32_t i : table.gpu) {
    const analysis::Row& r = table.rows[i];
    if (!kernel(r.cat)) continue;
    if (slot[r.name] == kNone) slot[r.name] = uint32_t(by_name.size()), by_name.push_back({r.name, {}});
    TopKernel& k = by_name[slot[r.name]].second;
    ++k.count;
    k.total += r.dur;
  }
  // Most total time first, ties by name (names are distinct: one per id).
  auto first = [&](const auto& a, const auto& b) {
    if (a.second.total != b.second.total) return a.second.total > b.second.total;
    return table.store->strings.view(a.first) < table.store->strings.view(b.first);
  };
  const size_t keep = std::min(kTopKernels, by_name.size());
  std::partial_sort(by_name.begin(), by_name.begin() + ptrdiff_t(keep), by_name.end(), first);
  std::vector<TopKernel> out;
  for (size_t k = 0; k < keep; ++k) {
    out.push_back(std::move(by_name[k].second));
    out.back().name = std::string(table.store->strings.view(by_name[k].first));
  }
  return out;
}

// Covered nanoseconds of sorted, disjoint intervals in each bin [edges[k], edges[k + 1]), added
// to `out` (zero on entry), in one walk over the intervals and the bins together (what the
// difference of IntervalIndex::cumulative at the two edges says, without a search per edge).
void covered_per_bin(const std::vector<Interval>& merged, std::span<const TimeNs> edges, std::span<TimeNs> out) {
  const size_t n = edges.size() - 1;
  size_t k = 0;
  for (const Interval& i : merged) {
    TimeNs from = std::max(i.start, edges[0]);
    const TimeNs to = std::min(i.end, edges[n]);
    if (to <= from) continue;
    if (edges[k + 1] <= from) k = size_t(std::upper_bound(edges.begin() + ptrdiff_t(k), edges.end(), from) - edges.begin()) - 1;
    for (;;) {
      const TimeNs stop = std::min(to, edges[k + 1]);
      out[k] += stop - from;
      if (stop == to) break;
      from = stop, ++k;
    }
  }
}

// The finest level's sums per bin, column after column in one allocation (bin widths, busy
// time, each present cause's idle time): megabytes, faulted in on huge pages rather than a
// 4 KB page at a time. Coarsening sums four bins in place; `bins` is the current level's count.
class BinSums {
public:
  BinSums(size_t bins, size_t columns) : bins_(bins), stride_(bins), columns_(columns), data_(new TimeNs[columns * bins]) {
    prepare_fresh_memory(data_.get(), columns * bins * sizeof(TimeNs));  // before the first write
    std::fill_n(data_.get(), columns * bins, TimeNs(0));
  }
  std::span<TimeNs> column(size_t c) { return {data_.get() + c * stride_, bins_}; }
  size_t bins() const { return bins_; }
  size_t columns() const { return columns_; }
  // Bin k of the next level is the sum of bins 4k..4k+3 (in place: written after they are read).
  void coarsen() {
    const size_t n = (bins_ + 3) / 4;
    for (size_t c = 0; c < columns(); ++c) {
      TimeNs* v = data_.get() + c * stride_;
      for (size_t k = 0; k < n; ++k) {
        TimeNs sum = 0;
        for (size_t j = 4 * k; j < std::min(bins_, 4 * k + 4); ++j) sum += v[j];
        v[k] = sum;
      }
    }
    bins_ = n;
  }

private:
  size_t bins_, stride_, columns_;
  std::unique_ptr<TimeNs[]> data_;  // not value-initialised: zeroed once its pages are prepared
};

// One level from its sums: busy fraction (0..255) and the cause with most idle time per bin.
ProfileLevel quantize(BinSums& sums, const std::vector<int>& present) {
  ProfileLevel level;
  const size_t n = sums.bins();
  level.busy.resize(n);
  level.cause.resize(n);
  std::span<TimeNs> width = sums.column(0), busy = sums.column(1);
  std::vector<std::span<TimeNs>> idle;
  for (size_t j = 0; j < present.size(); ++j) idle.push_back(sums.column(2 + j));
  for (size_t k = 0; k < n; ++k) {
    level.busy[k] = uint8_t(width[k] > 0 ? (busy[k] * 255 + width[k] / 2) / width[k] : 0);
    int best = -1;
    TimeNs most = 0;
    for (size_t j = 0; j < idle.size(); ++j)  // in cause order: ties go to the first
      if (idle[j][k] > most) best = present[j], most = idle[j][k];
    level.cause[k] = int8_t(best);
  }
  return level;
}

// The finest level from exact coverage of its bins; each coarser level sums four bins of the one
// below (exact, since the sums are of covered nanoseconds, not of rounded fractions).
Profile build_profile(const analysis::RankSummary& a) {
  Profile p;
  const auto& merged = a.busy.merged();
  if (merged.empty()) return p;
  p.start = merged.front().start, p.end = merged.back().end;
  TimeNs span = p.end - p.start;
  size_t n = size_t(std::min<TimeNs>(TimeNs(kFinestBins), std::max<TimeNs>(1, span)));
  // Bin k's left edge start + floor(span·k / n), exactly, without 128-bit division: with
  // span = q·n + r, it is k·q + floor(k·r / n), and k·r < n² fits 64 bits.
  std::vector<TimeNs> edges(n + 1);
  const TimeNs q = span / TimeNs(n), r = span % TimeNs(n);
  for (size_t k = 0; k <= n; ++k) edges[k] = p.start + TimeNs(k) * q + TimeNs(k) * r / TimeNs(n);
  // Only the causes the rank has: the others are zero in every bin and never the top one.
  analysis::IdleCoverage idle = analysis::idle_coverage(a.causes);
  std::vector<int> present;
  for (int c = 0; c < kIdleCauseCount; ++c)
    if (!idle[size_t(c)].empty()) present.push_back(c);
  BinSums sums(n, 2 + present.size());
  std::span<TimeNs> width = sums.column(0);
  for (size_t k = 0; k < n; ++k) width[k] = edges[k + 1] - edges[k];
  covered_per_bin(merged, edges, sums.column(1));
  for (size_t j = 0; j < present.size(); ++j) covered_per_bin(idle[size_t(present[j])].merged(), edges, sums.column(2 + j));
  for (;;) {
    p.levels.push_back(quantize(sums, present));
    if (sums.bins() == 1) return p;
    sums.coarsen();
  }
}

// A few lines for people, from the summary alone (the full insights need the rank's report).
std::vector<std::string> summary_insights(const analysis::RankSummary& a, const Profile& p) {
  std::vector<std::string> out;
  TimeNs span = p.end - p.start;
  if (span <= 0) return {"no GPU activity"};
  TimeNs busy = a.busy.covered(p.start, p.end);
  char line[256];
  std::snprintf(line, sizeof line, "GPU idle %.1f%% of its span", 100.0 * double(span - busy) / double(span));
  std::string text = line;
  if (auto top = top_idle_cause(a))
    text += ", mostly " + std::string(analysis::idle_cause_name(*top)) + ": " + std::string(analysis::idle_cause_fix(*top));
  out.push_back(text);
  if (a.host_calls) out.push_back("no communication kernel: collectives are the CPU record_param_comms calls");
  return out;
}

// ---- serialising ----

void write_intervals(ByteWriter& w, const std::vector<Interval>& v) {
  w.varint(v.size());
  TimeNs prev = 0;
  for (const Interval& i : v) {
    w.svarint(i.start - prev);
    w.svarint(i.end - i.start);
    prev = i.start;
  }
}

std::vector<Interval> read_intervals(ByteReader& r, std::string_view what) {
  std::vector<Interval> out(r.count(what, 2));
  TimeNs prev = 0;
  for (Interval& i : out) {
    i.start = wrapping_add(prev, r.svarint(what));
    int64_t length = r.svarint(what);
    i.end = wrapping_add(i.start, length);
    if (length < 0 || i.start < prev) r.fail(std::string(what) + ": intervals out of order");
    prev = i.start;
  }
  return r.ok() ? out : std::vector<Interval>{};
}

enum CallFlags : uint8_t { kSeq = 1, kPeer = 2, kCpuStart = 4 };

void write_calls(ByteWriter& w, const std::vector<CollectiveCall>& calls) {
  w.varint(calls.size());
  TimeNs prev = 0;
  for (const CollectiveCall& c : calls) {
    w.str(c.name);
    w.str(c.group);
    w.varint(c.group_ranks.size());
    for (int64_t g : c.group_ranks) w.svarint(g);
    w.u8(uint8_t((c.seq ? kSeq : 0) | (c.peer ? kPeer : 0) | (c.cpu_start ? kCpuStart : 0)));
    w.u8(uint8_t(c.p2p));
    if (c.seq) w.svarint(*c.seq);
    if (c.peer) w.svarint(*c.peer);
    w.svarint(c.start - prev);
    w.svarint(c.end - c.start);
    if (c.cpu_start) w.svarint(*c.cpu_start - c.start);
    // Where the call's kernel lives in the rank's store (the same file loads to the same store),
    // so an expanded fleet rank highlights it as a loaded job's does; kNone + 1 wraps to 0.
    w.varint((uint64_t(c.slice.track) + 1) & 0xffffffffu);
    w.varint((uint64_t(c.slice.index) + 1) & 0xffffffffu);
    prev = c.start;
  }
}

std::vector<CollectiveCall> read_calls(ByteReader& r) {
  std::vector<CollectiveCall> out(r.count("collective calls", 8));
  TimeNs prev = 0;
  for (CollectiveCall& c : out) {
    c.name = r.str("call name");
    c.group = r.str("call group");
    c.group_ranks.resize(r.count("group ranks"));
    for (int64_t& g : c.group_ranks) g = r.svarint("group rank");
    uint8_t flags = r.u8("call flags"), p2p = r.u8("call direction");
    if (flags > 7 || p2p > 2 || (p2p && !(flags & kPeer))) r.fail("call flags: unknown value");
    c.p2p = analysis::P2p(p2p);
    if (flags & kSeq) c.seq = r.svarint("call seq");
    if (flags & kPeer) c.peer = r.svarint("call peer");
    c.start = wrapping_add(prev, r.svarint("call start"));
    c.end = wrapping_add(c.start, r.svarint("call end"));
    if (flags & kCpuStart) c.cpu_start = wrapping_add(c.start, r.svarint("call cpu start"));
    c.slice.track = uint32_t(r.varint("call slice") - 1);
    c.slice.index = uint32_t(r.varint("call slice") - 1);
    prev = c.start;
    if (!r.ok()) return {};
  }
  return out;
}

std::string meta_bytes(const RankSummary& s) {
  ByteWriter w;
  w.u8(uint8_t(s.status));
  w.svarint(s.rank);
  w.u8(uint8_t(s.rank_source));
  for (const std::string* t : {&s.path, &s.error, &s.device, &s.distributed_info, &s.host}) w.str(*t);
  return w.bytes;
}

std::string analysis_bytes(const analysis::RankSummary& a) {
  ByteWriter w;
  w.svarint(a.origin_ns);
  w.svarint(a.end_ns);
  w.varint(a.iteration_durations.size());
  for (TimeNs d : a.iteration_durations) w.svarint(d);
  write_intervals(w, a.busy.merged());
  write_intervals(w, a.compute.merged());
  w.varint(a.causes.gaps.size());
  TimeNs prev = 0;
  for (const auto& g : a.causes.gaps) {
    w.svarint(g.stream);
    w.svarint(g.start - prev);
    w.svarint(g.end - g.start);
    w.u8(uint8_t(g.cause));
    prev = g.start;
  }
  w.u8(a.host_calls);
  write_calls(w, a.calls);
  w.varint(a.iteration_starts.size());  // format 2
  prev = 0;
  for (TimeNs t : a.iteration_starts) w.svarint(t - prev), prev = t;
  return w.bytes;
}

std::string view_bytes(const RankSummary& s) {
  ByteWriter w;
  w.svarint(s.profile.start);
  w.svarint(s.profile.end);
  w.varint(s.profile.levels.size());
  for (const ProfileLevel& l : s.profile.levels) {
    w.varint(l.busy.size());
    w.bytes.append(reinterpret_cast<const char*>(l.busy.data()), l.busy.size());
    w.bytes.append(reinterpret_cast<const char*>(l.cause.data()), l.cause.size());
  }
  w.varint(s.streams.size());
  for (const StreamTotal& t : s.streams) w.svarint(t.stream), w.varint(t.activities), w.svarint(t.busy);
  w.varint(s.top_kernels.size());
  for (const TopKernel& k : s.top_kernels) w.str(k.name), w.varint(k.count), w.svarint(k.total);
  w.varint(s.insights.size());
  for (const std::string& i : s.insights) w.str(i);
  return w.bytes;
}

void read_meta(ByteReader& r, RankSummary& s) {
  uint8_t status = r.u8("status");
  s.rank = r.svarint("rank");
  uint8_t source = r.u8("rank source");
  if (status > 1 || source > 2) r.fail("META: unknown status or rank source");
  s.status = RankStatus(status);
  s.rank_source = RankSource(source);
  for (std::string* t : {&s.path, &s.error, &s.device, &s.distributed_info, &s.host}) *t = r.str("META text");
}

// The analysis section up to its idle gaps: origin, end, iteration lengths, busy and compute
// intervals, gaps (what a last rank's cause reads).
void read_activity(ByteReader& r, analysis::RankSummary& a) {
  a.origin_ns = r.svarint("origin");
  a.end_ns = r.svarint("end");
  a.iteration_durations.resize(r.count("iterations"));
  for (TimeNs& d : a.iteration_durations) d = r.svarint("iteration length");
  a.busy = analysis::IntervalIndex(read_intervals(r, "busy intervals"));
  a.compute = analysis::IntervalIndex(read_intervals(r, "compute intervals"));
  a.causes.gaps.resize(r.count("idle gaps", 4));
  TimeNs prev = 0;
  for (auto& g : a.causes.gaps) {
    g.stream = r.svarint("gap stream");
    g.start = wrapping_add(prev, r.svarint("gap start"));
    int64_t length = r.svarint("gap length");
    g.end = wrapping_add(g.start, length);
    uint8_t cause = r.u8("gap cause");
    if (cause >= kIdleCauseCount || length < 0) r.fail("idle gap: bad cause or length");
    g.cause = IdleCause(cause);
    prev = g.start;
    if (!r.ok()) break;
  }
}

void read_analysis(ByteReader& r, analysis::RankSummary& a, uint32_t version) {
  read_activity(r, a);
  a.host_calls = r.u8("host calls") != 0;
  a.calls = read_calls(r);
  a.iteration_starts.clear();
  if (version < 2 || !r.ok()) return;
  a.iteration_starts.resize(r.count("iteration starts"));
  TimeNs prev = 0;
  for (TimeNs& t : a.iteration_starts) t = prev = wrapping_add(prev, r.svarint("iteration start"));
}

void read_view(ByteReader& r, RankSummary& s) {
  s.profile.start = r.svarint("profile start");
  s.profile.end = r.svarint("profile end");
  s.profile.levels.resize(r.count("profile levels"));
  for (ProfileLevel& l : s.profile.levels) {
    size_t n = r.count("profile bins", 2);
    std::string_view busy = r.bytes(n, "profile busy"), cause = r.bytes(n, "profile causes");
    l.busy.assign(busy.begin(), busy.end());
    l.cause.assign(cause.begin(), cause.end());
  }
  s.streams.resize(r.count("streams", 3));
  for (StreamTotal& t : s.streams) t.stream = r.svarint("stream"), t.activities = r.varint("stream activities"), t.busy = r.svarint("stream busy");
  s.top_kernels.resize(r.count("top kernels", 3));
  for (TopKernel& k : s.top_kernels) k.name = r.str("kernel name"), k.count = r.varint("kernel count"), k.total = r.svarint("kernel time");
  s.insights.resize(r.count("insights"));
  for (std::string& i : s.insights) i = r.str("insight");
}

}  // namespace

std::optional<IdleCause> top_idle_cause(const analysis::RankSummary& a) {
  TimeNs by_cause[kIdleCauseCount] = {};
  for (const auto& g : a.causes.gaps) by_cause[int(g.cause)] += g.end - g.start;
  int top = int(std::max_element(by_cause, by_cause + kIdleCauseCount) - by_cause);
  return by_cause[top] > 0 ? std::optional<IdleCause>(IdleCause(top)) : std::nullopt;
}

RankSummary summarize_job_rank(const JobRank& rank) {
  RankSummary s;
  s.rank = rank.rank;
  s.rank_source = rank.rank_source;
  s.path = rank.path;
  s.load_seconds = rank.load_seconds;
  if (!rank.ok()) {
    s.status = RankStatus::Failed;
    s.error = rank.error.to_string();
    return s;
  }
  const TraceStore& store = *rank.store;
  s.status = RankStatus::Ok;
  s.device = device_text(store);
  s.distributed_info = top_level(store, "distributedInfo");
  s.host = unquoted(top_level(store, "hostname"));
  // The same table and idle causes as summarize_rank(rank, store), kept a moment longer for the
  // per-stream totals and the top kernels.
  analysis::TableOptions to;
  to.rank = rank.rank;
  analysis::EventTable table = analysis::build_table(store, to);
  analysis::IdleCauseOptions io;
  io.gaps_only = true;  // the summary keeps only the gaps (stream, span, cause)
  analysis::IdleCauses causes = analysis::idle_causes(table, io);
  s.analysis = analysis::summarize_rank(rank.rank, store, table, std::move(causes));
  s.streams = stream_totals(table);
  s.top_kernels = top_kernels(table);
  s.analysis.store = nullptr;
  s.profile = build_profile(s.analysis);
  s.insights = summary_insights(s.analysis, s.profile);
  return s;
}

RankSummary map_rank_file(const std::string& path, size_t file_order, const CacheSettings* cache) {
  auto t0 = std::chrono::steady_clock::now();
  LoadOptions options;
  options.keep_args_text = analysis::has_collective_args;  // the calls' args, without their blocks
  JobRank rank = load_rank(path, options, cache);
  std::string unused;  // without --rank-from every file has a rank
  name_rank(rank, file_order, std::nullopt, unused);
  RankSummary s = summarize_job_rank(rank);
  s.map_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s;
}

RankSummary failed_rank(const std::string& path, size_t file_order, const std::string& error) {
  JobRank rank;
  rank.path = path;
  std::string unused;
  name_rank(rank, file_order, std::nullopt, unused);
  RankSummary s = summarize_job_rank(rank);
  s.error = path + ": " + error;
  return s;
}

std::string serialize_rank_summary(const RankSummary& s, bool timing) {
  SectionWriter w(std::string_view(kMagic, 8), kVersion);
  w.add(kMeta, meta_bytes(s), true, kSummaryLevel);
  w.add(kAnalysis, analysis_bytes(s.analysis), true, kSummaryLevel);
  w.add(kView, view_bytes(s), true, kSummaryLevel);
  if (timing) {
    ByteWriter t;
    t.f64(s.load_seconds);
    t.f64(s.map_seconds);
    w.add(kTime, t.bytes, false);
  }
  return w.finish();
}

bool parse_rank_summary(std::string_view bytes, RankSummary& out, std::string& error) {
  SectionFile file = read_sections(bytes, std::string_view(kMagic, 8), kVersion, "rank summary");
  if (!file.ok()) return error = file.error, false;
  RankSummary s;
  bool meta = false;
  for (const Section& sec : file.sections) {
    ByteReader r(sec.data);
    if (sec.tag == kMeta) read_meta(r, s), meta = true;
    else if (sec.tag == kAnalysis) read_analysis(r, s.analysis, file.version);
    else if (sec.tag == kView) read_view(r, s);
    else if (sec.tag == kTime) s.load_seconds = r.f64("load seconds"), s.map_seconds = r.f64("map seconds");
    else continue;  // a later version's section: skipped
    if (!r.ok() || !r.at_end()) {
      error = "rank summary: section " + tag_text(sec.tag) + " at byte " + std::to_string(sec.offset) + ": " +
              (r.ok() ? std::to_string(r.left()) + " stray bytes" : r.error());
      return false;
    }
  }
  if (!meta) return error = "rank summary: no META section", false;
  s.analysis.rank = s.rank;  // not stored twice
  out = std::move(s);
  return true;
}

namespace {

// The summary's sections checked, then `read` on those tagged `wanted` (decompressed, parsed).
template <class Read>
bool parse_some(std::string_view bytes, std::initializer_list<uint32_t> wanted, std::string& error, StoredFile* file_out, Read read) {
  StoredFile file = scan_sections(bytes, std::string_view(kMagic, 8), kVersion, "rank summary");
  if (!file.ok()) return error = file.error, false;
  bool meta = false;
  std::string raw;
  for (const StoredSection& sec : file.sections) {
    if (std::find(wanted.begin(), wanted.end(), sec.tag) == wanted.end()) continue;
    if (!unpack_section(sec, raw, error)) return error = "rank summary: " + error, false;
    ByteReader r(raw);
    read(sec.tag, r, file.version);
    meta = meta || sec.tag == kMeta;
    if (!r.ok() || !r.at_end()) {
      error = "rank summary: section " + tag_text(sec.tag) + " at byte " + std::to_string(sec.offset) + ": " +
              (r.ok() ? std::to_string(r.left()) + " stray bytes" : r.error());
      return false;
    }
  }
  if (!meta) return error = "rank summary: no META section", false;
  if (file_out) *file_out = std::move(file);
  return true;
}

}  // namespace

namespace {

bool read_meta_and_time(std::string_view bytes, RankSummary& out, std::string& error, StoredFile* file) {
  RankSummary s;
  bool ok = parse_some(bytes, {kMeta, kTime}, error, file, [&](uint32_t t, ByteReader& r, uint32_t) {
    if (t == kMeta) read_meta(r, s);
    else s.load_seconds = r.f64("load seconds"), s.map_seconds = r.f64("map seconds");
  });
  if (!ok) return false;
  s.analysis.rank = s.rank;
  out = std::move(s);
  return true;
}

}  // namespace

bool parse_rank_meta(std::string_view bytes, RankSummary& out, std::string& error) {
  return read_meta_and_time(bytes, out, error, nullptr);
}

bool pack_rank_summary(std::string& bytes, RankSummary& out, std::string& error) {
  StoredFile file;
  if (!read_meta_and_time(bytes, out, error, &file)) return false;
  const auto& sections = file.sections;
  size_t times = size_t(std::count_if(sections.begin(), sections.end(), [](auto& s) { return s.tag == kTime; }));
  if (!times) return true;
  if (times == 1 && sections.back().tag == kTime) {  // as fleet-map writes it: cut off the end
    uint32_t count = uint32_t(sections.size() - 1);
    size_t cut = size_t(sections.back().offset);
    std::memcpy(bytes.data() + 12, &count, 4);
    bytes.resize(cut);
    return true;
  }
  bytes = without_sections(std::string_view(kMagic, 8), file.version, file, kTime);  // its own version: its sections' layout
  return true;
}

bool parse_rank_analysis(std::string_view bytes, analysis::RankSummary& out, std::string& error) {
  RankSummary meta;
  bool ok = parse_some(bytes, {kMeta, kAnalysis}, error, nullptr, [&](uint32_t t, ByteReader& r, uint32_t version) {
    if (t == kMeta) read_meta(r, meta);
    else read_analysis(r, out, version);
  });
  out.rank = meta.rank;
  return ok;
}

namespace {

// Sorted intervals (as read_intervals checks them) merged as IntervalIndex merges them, one at a
// time: what is covered in all, and within [t0, t1), without keeping them.
class MergedCover {
public:
  MergedCover(TimeNs t0 = INT64_MIN, TimeNs t1 = INT64_MAX) : t0_(t0), t1_(t1) {}
  void add(TimeNs start, TimeNs end) {
    if (any_ && start <= cur_.end) return void(cur_.end = std::max(cur_.end, end));
    if (any_) emit();
    cur_ = {start, end}, any_ = true;
  }
  void finish() {
    if (any_) emit();
    any_ = false;
  }
  bool empty() const { return !seen_; }
  TimeNs first_start = 0, last_end = 0, total = 0, within = 0;

private:
  void emit() {
    if (!seen_) first_start = cur_.start, seen_ = true;
    last_end = cur_.end;
    total += cur_.end - cur_.start;
    within += std::max<TimeNs>(0, std::min(cur_.end, t1_) - std::max(cur_.start, t0_));
  }
  TimeNs t0_, t1_;
  Interval cur_;
  bool any_ = false, seen_ = false;
};

// read_intervals' reading and checks, each interval to `cover`.
bool cover_intervals(ByteReader& r, std::string_view what, MergedCover& cover) {
  size_t n = r.count(what, 2);
  TimeNs prev = 0;
  for (size_t k = 0; k < n; ++k) {
    TimeNs start = wrapping_add(prev, r.svarint(what));
    int64_t length = r.svarint(what);
    if (length < 0 || start < prev) return false;
    cover.add(start, wrapping_add(start, length));
    prev = start;
  }
  cover.finish();
  return r.ok();
}

}  // namespace

namespace {

// The summary's one ANLS section decompressed into `raw` (its META present); false where the
// whole parse would say more.
bool unpack_analysis(std::string_view bytes, bool checked, std::string& raw, uint32_t& version) {
  StoredFile file = scan_sections(bytes, std::string_view(kMagic, 8), kVersion, "rank summary", !checked);
  if (!file.ok()) return false;
  version = file.version;
  const StoredSection* anls = nullptr;
  bool meta = false;
  for (const StoredSection& sec : file.sections) {
    if (sec.tag == kMeta) meta = true;
    if (sec.tag != kAnalysis) continue;
    if (anls) return false;  // two: the whole parse says what it makes of them
    anls = &sec;
  }
  std::string error;
  return meta && anls && unpack_section(*anls, raw, error);
}

}  // namespace

bool read_rank_activity(std::string_view bytes, analysis::RankSummary& out, bool checked) {
  thread_local std::string raw;
  uint32_t version = 0;
  if (!unpack_analysis(bytes, checked, raw, version)) return false;
  ByteReader r(raw);
  read_activity(r, out);
  return r.ok();
}

bool read_rank_calls(std::string_view bytes, int64_t rank, analysis::CallSink& sink, std::optional<IdleCause>& top_cause,
                     bool checked) {
  thread_local std::string raw;
  thread_local std::vector<int64_t> group_ranks;
  uint32_t version = 0;
  if (!unpack_analysis(bytes, checked, raw, version)) return false;
  ByteReader r(raw);
  analysis::RankColumns columns;
  columns.rank = rank;
  columns.origin_ns = r.svarint("origin");
  columns.end_ns = r.svarint("end");
  columns.iterations = r.count("iterations");
  for (uint64_t k = 0; k < columns.iterations; ++k) columns.iteration_sum += double(r.svarint("iteration length"));
  MergedCover busy;
  if (!cover_intervals(r, "busy intervals", busy)) return false;
  MergedCover compute(busy.first_start, busy.last_end);
  if (!cover_intervals(r, "compute intervals", compute)) return false;
  if (!busy.empty()) {  // rank_columns' covered() over the busy span, on the merged lists
    columns.compute = compute.within;
    columns.communication = busy.total - columns.compute;
    columns.idle = (busy.last_end - busy.first_start) - (columns.compute + columns.communication);
  }
  size_t gaps = r.count("idle gaps", 4);
  TimeNs by_cause[kIdleCauseCount] = {};
  TimeNs prev = 0;
  for (size_t k = 0; k < gaps; ++k) {
    r.svarint("gap stream");
    TimeNs start = wrapping_add(prev, r.svarint("gap start"));
    int64_t length = r.svarint("gap length");
    TimeNs end = wrapping_add(start, length);
    uint8_t cause = r.u8("gap cause");
    if (cause >= kIdleCauseCount || length < 0 || !r.ok()) return false;
    by_cause[cause] += end - start;
    prev = start;
  }
  int top = int(std::max_element(by_cause, by_cause + kIdleCauseCount) - by_cause);
  top_cause = by_cause[top] > 0 ? std::optional<IdleCause>(IdleCause(top)) : std::nullopt;
  columns.host_calls = r.u8("host calls") != 0;
  size_t calls = r.count("collective calls", 8);
  if (!r.ok()) return false;
  sink.rank(columns, calls);
  prev = 0;
  analysis::CallView c;
  for (size_t k = 0; k < calls; ++k) {
    c.name = r.bytes(size_t(r.varint("call name")), "call name");
    c.group = r.bytes(size_t(r.varint("call group")), "call group");
    group_ranks.resize(r.count("group ranks"));
    for (int64_t& g : group_ranks) g = r.svarint("group rank");
    c.group_ranks = group_ranks.data(), c.group_rank_count = group_ranks.size();
    uint8_t flags = r.u8("call flags"), p2p = r.u8("call direction");
    if (flags > 7 || p2p > 2 || (p2p && !(flags & kPeer))) return false;
    c.p2p = analysis::P2p(p2p);
    c.seq = flags & kSeq ? std::optional<int64_t>(r.svarint("call seq")) : std::nullopt;
    c.peer = flags & kPeer ? std::optional<int64_t>(r.svarint("call peer")) : std::nullopt;
    c.start = wrapping_add(prev, r.svarint("call start"));
    c.end = wrapping_add(c.start, r.svarint("call end"));
    c.cpu_start = flags & kCpuStart ? analysis::OptionalTime(wrapping_add(c.start, r.svarint("call cpu start"))) : analysis::OptionalTime();
    c.slice.track = uint32_t(r.varint("call slice") - 1);
    c.slice.index = uint32_t(r.varint("call slice") - 1);
    prev = c.start;
    if (!r.ok()) return false;
    sink.call(k, c);
  }
  if (version >= 2) {  // the iteration starts (read_analysis' checks; the first pass needs none)
    size_t starts = r.count("iteration starts");
    for (size_t k = 0; k < starts; ++k) r.svarint("iteration start");
  }
  return r.ok() && r.at_end();
}

bool write_file_atomically(const std::string& path, std::string_view bytes, std::string& error) {
  std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), std::streamsize(bytes.size()));
    f.flush();
    if (!f) {
      std::error_code ec;
      fs::remove(temp, ec);
      return error = "cannot write " + temp, false;
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    fs::remove(temp, ec);
    return error = "cannot rename " + temp + " to " + path + ": " + ec.message(), false;
  }
  return true;
}

bool read_whole_file(const std::string& path, std::string& bytes, std::string& error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return error = path + ": cannot open", false;
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (!ec && fs::is_regular_file(path, ec)) {  // exactly its size: a reduce holds thousands of them
    bytes.resize(size_t(size));
    f.read(bytes.data(), std::streamsize(size));
    if (size_t(f.gcount()) != size_t(size)) return error = path + ": read error", false;
    return true;
  }
  bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (f.bad()) return error = path + ": read error", false;
  return true;
}

}  // namespace sl::fleet
