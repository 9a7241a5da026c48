#include "core/analysis/common.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <unordered_map>

#include "core/analysis/args_util.h"
#include "core/store/huge_pages.h"

namespace sl::analysis {

std::string_view mode_name(Mode mode) { return mode == Mode::Hta ? "hta" : "sightline"; }

std::optional<TimeNs> EventTable::launch_ts(const Row& r) const {
  if (r.launch >= 0) return rows[size_t(r.launch)].ts;
  return std::nullopt;
}

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}


// (HTA) pandas holds `ts` and `dur` as float64 microseconds: the double nearest the decimal
// written in the file (Python's float() is correctly rounded). Sightline keeps the exact ns, so
// the decimal is rebuilt and parsed the same way. At epoch scale (~1.7e15 µs) a double has a
// 0.25 µs step, so `...689.047` is already `...689.0` before HTA's ceil; exact ns arithmetic
// would give 690 and drift every analysis by up to 1 µs per event (hta_ns_resolution_v100).
// Digits beyond the ns were rounded by the loader; that changes the double only when it sits
// within 1 ns of a step boundary.
double hta_float64_us(TimeNs ns) {
  char text[48];
  uint64_t mag = ns < 0 ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
  std::snprintf(text, sizeof text, "%s%llu.%03llu", ns < 0 ? "-" : "", static_cast<unsigned long long>(mag / 1000),
                static_cast<unsigned long long>(mag % 1000));
  return std::strtod(text, nullptr);
}

TimeNs us_to_ns(double whole_us) { return TimeNs(whole_us) * 1000; }

void index_rows(EventTable& t) {
  t.gpu.clear();
  t.cpu.clear();
  const size_t gpu = size_t(std::count_if(t.rows.begin(), t.rows.end(), [](const Row& r) { return r.stream != -1; }));
  t.gpu.reserve(gpu);
  t.cpu.reserve(t.rows.size() - gpu);
  for (uint32_t i = 0; i < t.rows.size(); ++i) (t.rows[i].stream != -1 ? t.gpu : t.cpu).push_back(i);
}

// (HTA) the stream column is args.stream of each event; missing or non-numeric = -1. Read in
// args order (file order): the args sit in compressed blocks, and reading them track by track
// would decompress every block once per track.
void read_hta_streams(const TraceStore& store, std::vector<Row>& rows) {
  std::vector<std::pair<uint32_t, uint32_t>> by_args;  // (args row, row)
  by_args.reserve(rows.size());
  for (uint32_t k = 0; k < rows.size(); ++k) {
    uint32_t args = store.tracks[rows[k].ref.track].slices.args[rows[k].ref.index];
    if (args != kNone) by_args.push_back({args, k});
  }
  std::sort(by_args.begin(), by_args.end());
  for (auto [args, k] : by_args)
    if (auto v = find_int_arg(store.args_json(args), "stream")) rows[k].stream = *v;
}

// Rows in store order: every slice of CPU and GPU tracks. Returns the per-track base offsets.
std::vector<uint32_t> collect_slices(const TraceStore& store, std::vector<Row>& rows, bool hta) {
  std::vector<uint32_t> base(store.tracks.size(), kNone);
  const StringId trace_cat = store.strings.find("Trace");
  const auto& args = store.args_table();
  uint64_t no_args_order = uint64_t(1) << 62;
  size_t slices = 0;  // one allocation for the rows (a 35 MB trace has ~100k)
  for (const Track& track : store.tracks)
    if (track.kind != TrackKind::Async) slices += track.slices.size();
  rows.reserve(rows.size() + slices);
  prepare_fresh_memory(rows.data(), rows.capacity() * sizeof(Row));  // ~80 bytes a row: megabytes
  for (uint32_t t = 0; t < store.tracks.size(); ++t) {
    const Track& track = store.tracks[t];
    if (track.kind == TrackKind::Async) continue;
    base[t] = uint32_t(rows.size());
    const SliceColumns& s = track.slices;
    for (uint32_t i = 0; i < s.size(); ++i) {
      if (hta && (s.cat[i] == 0 || s.cat[i] == trace_cat)) continue;
      Row r;
      r.ts = s.start[i];
      r.dur = s.dur[i];
      r.name = s.name[i];
      r.cat = s.cat[i];
      r.ref = SliceRef{t, i};
      if (s.args[i] != kNone) {
        r.order = args[s.args[i]].offset;  // args are stored in file order
      } else {
        r.order = no_args_order++;
      }
      if (s.corr[i] != kNone) r.corr = store.correlations[s.corr[i]].id;  // = store.correlation_id(r.ref)
      if (hta) {
        r.stream = -1;  // args.stream, read below
      } else if (track.kind == TrackKind::GpuStream) {
        r.stream = track.stream >= 0 ? track.stream : (track.tid_is_number && track.tid >= 0 ? track.tid : 0);
      }
      rows.push_back(r);
    }
  }
  if (hta) read_hta_streams(store, rows);
  return base;
}

void build_sightline(const TraceStore& store, EventTable& t) {
  std::vector<uint32_t> base = collect_slices(store, t.rows, false);
  for (Row& r : t.rows) {
    if (r.stream == -1) continue;
    SliceRef l = store.launch_of(r.ref);
    if (l.valid() && base[l.track] != kNone) r.launch = int32_t(base[l.track] + l.index);
  }
}

// (HTA) pandas' `ts` column turns float64 when any element of traceEvents has a fractional ts, row
// or not (an instant, an event without `cat`, an async slice all count). Flows keep no time in
// the store and are not seen here.

bool hta_gpu_pair_row(const EventTable& t, const Row& r) {
  if (r.stream >= 0 && r.corr >= 0) return true;
  std::string_view n = t.name(r);
  return n == "Event Sync" || n == "Context Sync";
}

void build_hta(const TraceStore& store, const TableOptions& options, EventTable& t) {
  std::vector<Row> rows;
  collect_slices(store, rows, true);
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.order < b.order; });

  // Rule 2: any fractional timestamp switches HTA to ceil(ts), floor(end).
  bool fractional = any_fractional_ts(store);
  if (fractional) {
    t.rounded = true;
    for (Row& r : rows) {
      const Interval x = hta_rounded(store, r.ts, r.dur);
      r.ts = x.start;
      r.dur = x.end - x.start;
    }
  }

  // Event 0 (for the pairing quirk): the row that is traceEvents[0], when it is a row at all.
  int32_t event0 = -1;
  if (!rows.empty()) {
    const TraceMeta::HtaText& text = store.meta.hta;
    if (text.from_text) {
      // traceEvents[0] is the first row when that row holds its args (rows without args sort last).
      uint32_t args = text.first_event_args;
      if (args != kNone && rows.front().order == store.args_table()[args].offset) event0 = 0;
    } else {
      event0 = 0;  // without the text, assume the file starts with an event row (Kineto does)
    }
  }

  // Rule 5: pair GPU rows with CPU rows of equal correlation (last CPU row wins, like HTA's
  // assignment order). Unpaired GPU rows with correlation >= 0 point at event 0.
  std::unordered_map<int64_t, uint32_t> cpu_by_corr;
  cpu_by_corr.reserve(rows.size() / 2);
  std::vector<char> gpu_pair(rows.size());
  for (uint32_t i = 0; i < rows.size(); ++i) {
    gpu_pair[i] = hta_gpu_pair_row(t, rows[i]);
    if (!gpu_pair[i] && rows[i].corr != -1) cpu_by_corr[rows[i].corr] = i;
  }
  for (uint32_t i = 0; i < rows.size(); ++i) {
    Row& r = rows[i];
    if (r.stream == -1) continue;
    auto it = gpu_pair[i] && r.corr != -1 ? cpu_by_corr.find(r.corr) : cpu_by_corr.end();
    if (it != cpu_by_corr.end()) {
      r.launch = int32_t(it->second);
    } else if (r.corr >= 0 && event0 >= 0) {
      r.launch = event0;
      r.launch_is_event0 = true;
    }
  }

  // Rule 4: last-step filter when at least two distinct ProfilerStep names exist.
  std::vector<StringId> step_names;
  TimeNs last_step = INT64_MIN;
  for (const Row& r : rows) {
    if (!t.name(r).starts_with("ProfilerStep")) continue;
    if (std::find(step_names.begin(), step_names.end(), r.name) == step_names.end()) step_names.push_back(r.name);
    if (r.stream == -1) last_step = std::max(last_step, r.ts);
  }
  if (!options.hta_last_step_filter || step_names.size() < 2 || last_step == INT64_MIN) {
    t.rows = std::move(rows);
    t.event0 = event0;
  } else {
    t.last_step_filtered = true;
    std::unordered_map<int64_t, uint32_t> kept_corr;
    std::vector<uint32_t> new_index(rows.size(), kNone);
    for (const Row& r : rows)
      if (r.stream == -1 && r.ts < last_step) ++kept_corr[r.corr];
    std::vector<Row> out;
    out.reserve(rows.size());
    for (uint32_t i = 0; i < rows.size(); ++i) {
      if (rows[i].stream == -1) continue;
      auto it = kept_corr.find(rows[i].corr);
      if (it == kept_corr.end()) continue;
      for (uint32_t k = 0; k < it->second; ++k) out.push_back(rows[i]);
    }
    for (uint32_t i = 0; i < rows.size(); ++i) {
      if (rows[i].stream != -1 || rows[i].ts >= last_step) continue;
      new_index[i] = uint32_t(out.size());
      out.push_back(rows[i]);
    }
    // Launch links follow the rows they point at; a launch outside the kept rows is gone.
    for (Row& r : out) {
      if (r.launch < 0) continue;
      uint32_t ni = new_index[size_t(r.launch)];
      if (ni == kNone) {
        r.launch = -1;
        r.launch_is_event0 = false;
      } else {
        r.launch = int32_t(ni);
      }
    }
    t.rows = std::move(out);
    if (event0 >= 0 && new_index[size_t(event0)] != kNone) t.event0 = int32_t(new_index[size_t(event0)]);
  }
}

// Kernel names run to kilobytes: classify each distinct (name, category) once.
void classify_rows(EventTable& t) {
  auto classify = [&](const Row& r) {
    return uint8_t(t.mode == Mode::Hta ? kernel_type_hta(t.name(r)) : kernel_type_sightline(t.name(r), t.cat(r)));
  };
  // A name nearly always comes with one category: its first (category, type) sits in a vector
  // indexed by name id; other pairs go to a map.
  const size_t names = t.store->strings.size();
  std::vector<StringId> cat_of_name(names, StringPool::kNotFound);
  std::vector<uint8_t> type_of_name(names, 0);
  std::unordered_map<uint64_t, uint8_t> other_pairs;
  for (Row& r : t.rows) {
    if (cat_of_name[r.name] == r.cat) {
      r.kernel_type = type_of_name[r.name];
    } else if (cat_of_name[r.name] == StringPool::kNotFound) {
      cat_of_name[r.name] = r.cat;
      r.kernel_type = type_of_name[r.name] = classify(r);
    } else {
      auto [it, fresh] = other_pairs.try_emplace((uint64_t(r.name) << 32) | r.cat, 0);
      if (fresh) it->second = classify(r);
      r.kernel_type = it->second;
    }
  }
}

// §0: a kernel launched inside a collective CPU op is communication whatever its name (a custom
// all-reduce written in Triton or CUTLASS): the launching op is the stronger signal.
bool is_collective_op_name(std::string_view n) {
  return n == "record_param_comms" || starts_with(n, "c10d::") || starts_with(n, "nccl:") || starts_with(n, "gloo:") ||
         contains(n, "torch/distributed/") || contains(n, "torch.distributed");
}

// Reclassifies the computation kernels whose launch lies inside a collective op (the launch's
// enclosing slices on its thread). Each slice's answer is found once and kept for the slices
// below it, so this is one walk over the launching threads' slices at most.
void classify_collective_launches(EventTable& t) {
  const TraceStore& store = *t.store;
  std::unordered_map<uint32_t, std::vector<int8_t>> inside;  // per track: -1 unknown, 0 no, 1 yes
  std::vector<uint32_t> chain;
  auto in_collective = [&](SliceRef s) {
    const SliceColumns& c = store.tracks[s.track].slices;
    std::vector<int8_t>& known = inside[s.track];
    if (known.empty()) known.assign(c.size(), -1);
    chain.clear();
    int8_t answer = 0;
    for (uint32_t i = s.index; i != kNone; i = c.parent[i]) {
      if (known[i] >= 0) {
        answer = known[i];
        break;
      }
      chain.push_back(i);
      if (is_collective_op_name(store.strings.view(c.name[i]))) {
        answer = 1;
        break;
      }
    }
    for (uint32_t k : chain) known[k] = answer;
    return answer == 1;
  };
  for (uint32_t g : t.gpu) {
    Row& r = t.rows[g];
    if (r.launch < 0 || KernelType(r.kernel_type) != KernelType::Computation || !is_kernel_cat(t.cat(r))) continue;
    const SliceRef launch = t.rows[size_t(r.launch)].ref;
    if (launch.valid() && in_collective(launch)) r.kernel_type = uint8_t(KernelType::Communication);
  }
}

}  // namespace

// §0's collective names: lower-case tokens of letters and digits (split at any other byte and
// where a lower-case letter meets an upper-case one, so `oneShotAllReduce` reads one shot all
// reduce), matched as whole tokens or runs of tokens, so `reduce_kernel` is not one.
bool names_a_collective(std::string_view name) {
  // The tokens as views into one lower-cased copy, both buffers kept per thread: every distinct
  // kernel name (kilobytes, thousands of them) is asked once per table.
  thread_local std::string lowered;
  thread_local std::vector<std::string_view> tokens;
  lowered.resize(name.size());
  tokens.clear();
  size_t begin = 0;
  auto cut = [&](size_t end) {
    if (end > begin) tokens.emplace_back(lowered.data() + begin, end - begin);
  };
  char previous = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    if (!upper && !lower && !digit) {
      cut(i), begin = i + 1;
    } else if (upper && previous >= 'a' && previous <= 'z') {
      cut(i), begin = i;
    }
    lowered[i] = upper ? char(c - 'A' + 'a') : c;
    previous = c;
  }
  cut(name.size());
  auto run = [&](size_t i, std::initializer_list<std::string_view> words) {
    if (i + words.size() > tokens.size()) return false;
    for (std::string_view w : words)
      if (tokens[i++] != w) return false;
    return true;
  };
  bool deep_ep = false, dispatch_or_combine = false;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view w = tokens[i];
    if (w == "allreduce" || w == "allgather" || w == "reducescatter" || w == "alltoall" || w == "multimem" ||
        w == "userbuffers" || run(i, {"all", "reduce"}) || run(i, {"all", "gather"}) || run(i, {"reduce", "scatter"}) ||
        run(i, {"all", "to", "all"}) || run(i, {"cross", "device", "reduce"}))
      return true;
    deep_ep = deep_ep || w == "deepep" || run(i, {"deep", "ep"});
    dispatch_or_combine = dispatch_or_combine || w == "dispatch" || w == "combine";
  }
  return deep_ep && dispatch_or_combine;  // DeepEP's dispatch and combine kernels
}

namespace {

}  // namespace

EventTable build_table(const TraceStore& store, const TableOptions& options) {
  EventTable t;
  t.mode = options.mode;
  t.store = &store;
  if (options.mode == Mode::Hta) {
    build_hta(store, options, t);
    std::optional<int64_t> r = store.meta.hta.from_text ? store.meta.hta.rank : store.meta.rank;
    t.rank = r.value_or(0);
  } else {
    build_sightline(store, t);
    t.rank = store.meta.rank.value_or(0);
  }
  if (options.rank) t.rank = *options.rank;
  classify_rows(t);
  index_rows(t);
  if (t.mode == Mode::Sightline) classify_collective_launches(t);
  return t;
}

// ---- classification ----

std::string_view kernel_type_name(KernelType type) {
  switch (type) {
    case KernelType::Computation: return "COMPUTATION";
    case KernelType::Communication: return "COMMUNICATION";
    case KernelType::Memory: return "MEMORY";
    case KernelType::Sync: return "SYNC";
    case KernelType::Other: return "OTHER";
  }
  return "OTHER";
}

KernelType kernel_type_hta(std::string_view n) {
  if (starts_with(n, "nccl") || starts_with(n, "hip") || starts_with(n, "hccl") || contains(n, "ncclKernel"))
    return KernelType::Communication;
  if (starts_with(n, "Memcpy") || starts_with(n, "Memset") || starts_with(n, "hipMemcpy") ||
      starts_with(n, "hipMemset") || starts_with(n, "dma"))
    return KernelType::Memory;
  static constexpr std::string_view not_compute_prefix[] = {
      "nccl", "hip", "hccl", "runFunction", "job_exe", "packet", "pe_exe", "cpum_exe_subgraph",
      "collective_subgraph_execution", "Stream Wait Event"};
  bool other = false;
  for (auto p : not_compute_prefix) other = other || starts_with(n, p);
  // `cuda...LaunchKernel` as a start-anchored pattern.
  if (starts_with(n, "cuda")) {
    size_t k = n.find("LaunchKernel");
    other = other || k != std::string_view::npos;
  }
  other = other || contains(n, "Memcpy") || contains(n, "Memset") || contains(n, "dma") || ends_with(n, "Sync");
  return other ? KernelType::Other : KernelType::Computation;
}

bool LeafTest::operator()(uint32_t track, uint32_t index) {
  auto [it, fresh] = has_child_.try_emplace(track);
  if (fresh) {
    const SliceColumns& c = store_.tracks[track].slices;
    it->second.assign(c.size(), 0);
    for (size_t k = 0; k < c.size(); ++k)
      if (c.parent[k] != kNone) it->second[c.parent[k]] = 1;
  }
  return !it->second[index];
}

KernelType kernel_type_sightline(std::string_view name, std::string_view cat) {
  // GPU user annotations (`nccl:_all_gather_base` drawn on a GPU row) are labels, never kernels.
  if (cat == "gpu_user_annotation") return KernelType::Other;
  if (contains_icase(name, "nccl") || contains_icase(name, "rccl") || contains_icase(name, "hccl") ||
      contains_icase(cat, "collective") || names_a_collective(name))
    return KernelType::Communication;
  if (cat == "gpu_memcpy" || cat == "gpu_memset" || cat == "Memcpy" || cat == "Memset" ||
      starts_with(name, "Memcpy") || starts_with(name, "Memset"))
    return KernelType::Memory;
  if (cat == "cuda_sync") return KernelType::Sync;
  return KernelType::Computation;
}

KernelType kernel_type(const EventTable&, const Row& row) { return KernelType(row.kernel_type); }

bool is_kernel_cat(std::string_view cat) { return cat == "kernel" || cat == "Kernel"; }

bool is_kernel_memcpy_memset_cat(std::string_view c) {
  return c == "kernel" || c == "Kernel" || c == "gpu_memcpy" || c == "Memcpy" || c == "gpu_memset" ||
         c == "Memset" || c == "mtia_ccp_events";
}

bool is_hta_launch_name(std::string_view n) {
  return n == "cudaLaunchKernel" || n == "cudaLaunchKernelExC" || n == "cudaMemcpyAsync" ||
         n == "cudaMemsetAsync" || starts_with(n, "runFunction");
}

// ---- intervals ----

namespace {

// Sorts by start. Callers pass rows in table order: one sorted run per stream (or one run in
// all), so the runs are merged pairwise instead of sorting from scratch; many runs fall back
// to a plain sort. (The merged intervals do not depend on the order of equal starts.)
void sort_by_start(std::vector<Interval>& v) {
  auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  constexpr size_t kMaxRuns = 64;
  std::vector<size_t> bounds = {0};
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].start >= v[i - 1].start) continue;
    bounds.push_back(i);
    if (bounds.size() > kMaxRuns) {
      std::sort(v.begin(), v.end(), by_start);
      return;
    }
  }
  bounds.push_back(v.size());
  while (bounds.size() > 2) {
    std::vector<size_t> next = {0};
    for (size_t k = 0; k + 1 < bounds.size(); k += 2) {
      if (k + 2 < bounds.size()) {
        std::inplace_merge(v.begin() + ptrdiff_t(bounds[k]), v.begin() + ptrdiff_t(bounds[k + 1]),
                           v.begin() + ptrdiff_t(bounds[k + 2]), by_start);
        next.push_back(bounds[k + 2]);
      } else {
        next.push_back(bounds[k + 1]);
      }
    }
    bounds = std::move(next);
  }
}

}  // namespace

std::vector<Interval> merge_intervals(std::vector<Interval> v) {
  sort_by_start(v);
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (out.empty() || i.start > out.back().end) out.push_back(i);
    else out.back().end = std::max(out.back().end, i.end);
  }
  return out;
}

TimeNs total_length(const std::vector<Interval>& merged) {
  TimeNs sum = 0;
  for (const Interval& i : merged) sum += i.end - i.start;
  return sum;
}

TimeNs intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  TimeNs sum = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    TimeNs lo = std::max(a[i].start, b[j].start), hi = std::min(a[i].end, b[j].end);
    if (hi > lo) sum += hi - lo;
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return sum;
}

// ---- statistics ----

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  double pos = q * double(s.size() - 1);
  size_t lo = size_t(std::floor(pos));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double frac = pos - double(lo);
  return s[lo] + (s[hi] - s[lo]) * frac;
}

Describe describe(std::vector<double> v) {
  Describe d;
  d.count = v.size();
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / double(v.size());
  if (v.size() >= 2) {
    double ss = 0;
    for (double x : v) ss += (x - d.mean) * (x - d.mean);
    d.std = std::sqrt(ss / double(v.size() - 1));
    d.std_valid = true;
  }
  d.min = v.front();
  d.max = v.back();
  d.p25 = quantile_sorted(v, 0.25);
  d.p50 = quantile_sorted(v, 0.5);
  d.p75 = quantile_sorted(v, 0.75);
  return d;
}

double round_to(double value, int digits) {
  double f = std::pow(10.0, digits);
  return std::nearbyint(value * f) / f;
}

bool any_fractional_ts(const TraceStore& store) {
  auto fractional = [&](TimeNs ts) { return (store.origin_ns + ts) % 1000 != 0; };
  for (const Track& track : store.tracks) {
    if (std::any_of(track.slices.start.begin(), track.slices.start.end(), fractional)) return true;
    if (std::any_of(track.instants.ts.begin(), track.instants.ts.end(), fractional)) return true;
  }
  return false;
}

Interval hta_rounded(const TraceStore& store, TimeNs ts, TimeNs dur) {
  // end = floor(ts + dur) and ts = ceil(ts), each in float64 exactly as pandas computes them.
  const double ts_us = hta_float64_us(store.origin_ns + ts), dur_us = hta_float64_us(dur);
  return {us_to_ns(std::ceil(ts_us)) - store.origin_ns, us_to_ns(std::floor(ts_us + dur_us)) - store.origin_ns};
}

// `p` is lower case. ASCII folding inline (std::tolower is a call per byte, and kernel names run
// to kilobytes); bytes outside A-Z compare as they are, as std::tolower leaves them.
bool contains_icase(std::string_view s, std::string_view p) {
  if (p.empty()) return true;
  if (p.size() > s.size()) return false;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  const char first = p[0];
  for (size_t i = 0; i + p.size() <= s.size(); ++i) {
    if (lower(s[i]) != first) continue;
    size_t k = 1;
    while (k < p.size() && lower(s[i + k]) == p[k]) ++k;
    if (k == p.size()) return true;
  }
  return false;
}

}  // namespace sl::analysis
