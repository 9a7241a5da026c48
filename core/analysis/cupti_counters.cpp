#include "core/analysis/cupti_counters.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace sl::analysis {

namespace {

constexpr std::string_view kRangeCat = "cuda_profiler_range";
constexpr std::string_view kSassPrefix = "smsp__sass_thread_inst_executed_op_";
constexpr std::string_view kKernelTimeMetric = "gpu__time_duration.sum";  // ns

size_t skip_ws(std::string_view s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  return i;
}

// Index just past the JSON string starting at s[i] == '"'.
size_t skip_string(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') ++i;
    else if (s[i] == '"') return i + 1;
  }
  return s.size();
}

// Index just past the JSON value starting at s[i] (objects and arrays skipped whole).
size_t skip_value(std::string_view s, size_t i) {
  if (i >= s.size()) return i;
  if (s[i] == '"') return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      if (s[i] == '"') {
        i = skip_string(s, i) - 1;
      } else if (s[i] == '{' || s[i] == '[') {
        ++depth;
      } else if (s[i] == '}' || s[i] == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return s.size();
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i;
}

// The numeric members of a flat args object (the profiler writes one number per metric);
// members of other types are not counters and are left out.
template <class F>
void for_each_number_member(std::string_view s, F&& f) {
  size_t i = skip_ws(s, 0);
  if (i >= s.size() || s[i] != '{') return;
  i = skip_ws(s, i + 1);
  while (i < s.size() && s[i] == '"') {
    size_t key_end = skip_string(s, i);
    std::string_view key = s.substr(i + 1, key_end - i - 2);
    i = skip_ws(s, key_end);
    if (i >= s.size() || s[i] != ':') return;
    i = skip_ws(s, i + 1);
    size_t value_end = skip_value(s, i);
    if (i < s.size() && (s[i] == '-' || (s[i] >= '0' && s[i] <= '9'))) {
      std::string number(s.substr(i, value_end - i));
      char* end = nullptr;
      double v = std::strtod(number.c_str(), &end);
      if (end != number.c_str()) f(key, v);
    }
    i = skip_ws(s, value_end);
    if (i < s.size() && s[i] == ',') i = skip_ws(s, i + 1);
  }
}

// (HTA) launches are `cuda_runtime` rows whose name matches ^cudaLaunchKernel (so ExC too).
// Sightline: every kernel launch API, driver and HIP included (memcpy/memset calls make no range).
bool is_range_launch(const EventTable& t, const Row& r) {
  std::string_view n = t.name(r);
  if (t.mode == Mode::Hta) return t.cat(r).starts_with("cuda_runtime") && n.starts_with("cudaLaunchKernel");
  return n.starts_with("cudaLaunchKernel") || n.starts_with("cuLaunchKernel") || n == "hipLaunchKernel" ||
         n == "hipExtModuleLaunchKernel" || n == "hipModuleLaunchKernel";
}

std::vector<uint32_t> sorted_by_start(const EventTable& t, std::vector<uint32_t> rows) {
  std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) { return t.rows[a].ts < t.rows[b].ts; });
  return rows;
}

// The cpu_ops enclosing a launch on its thread, outermost first (HTA: the call stack's cpu_op
// rows sorted by start; nesting already orders them, equal starts keep the outer one first).
std::vector<std::string> op_stack_of(const EventTable& t, const Row& launch) {
  const TraceStore& s = *t.store;
  std::vector<std::string> ops;
  for (SliceRef p = s.parent(launch.ref); p.valid(); p = s.parent(p)) {
    const SliceColumns& c = s.tracks[p.track].slices;
    if (s.strings.view(c.cat[p.index]) == "cpu_op") ops.emplace_back(s.strings.view(c.name[p.index]));
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

void derive(const std::vector<std::string>& metrics, CuptiKernelCounters& k) {
  double flops = 0, read = 0, write = 0, total = 0;
  bool any_flops = false, any_rw = false, any_total = false;
  for (size_t m = 0; m < metrics.size(); ++m) {
    if (!k.values[m]) continue;
    const std::string& name = metrics[m];
    double v = *k.values[m];
    if (double per = sass_flops_per_instruction(name); per > 0) flops += per * v, any_flops = true;
    if (name == "dram__bytes_read.sum") read = v, any_rw = true;
    if (name == "dram__bytes_write.sum") write = v, any_rw = true;
    if (name == "dram__bytes.sum") total = v, any_total = true;
    if (name == kKernelTimeMetric && v > 0) k.seconds = v * 1e-9;
  }
  if (any_flops) k.flops = flops;
  if (any_rw) k.dram_bytes = read + write;
  else if (any_total) k.dram_bytes = total;
}

void add_opt(std::optional<double>& sum, std::optional<double> v) {
  if (v) sum = sum.value_or(0) + *v;
}

std::vector<CuptiOperatorCounters> by_operator(const CuptiCounters& c) {
  std::map<std::string, CuptiOperatorCounters> groups;
  for (const CuptiKernelCounters& k : c.kernels) {
    CuptiOperatorCounters& g = groups[k.bottom_op];
    g.op = k.bottom_op;
    g.sums.resize(c.metrics.size(), 0.0);
    ++g.kernels;
    for (size_t m = 0; m < c.metrics.size(); ++m)
      if (k.values[m]) g.sums[m] += *k.values[m];
    add_opt(g.flops, k.flops);
    add_opt(g.dram_bytes, k.dram_bytes);
    add_opt(g.seconds, k.seconds);
  }
  std::vector<CuptiOperatorCounters> out;
  for (auto& [name, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.flops.value_or(-1) > b.flops.value_or(-1);
  });
  return out;
}

}  // namespace

double sass_flops_per_instruction(std::string_view name) {
  if (!name.starts_with(kSassPrefix) || !name.ends_with("_pred_on.sum")) return 0;
  std::string_view op = name.substr(kSassPrefix.size(), name.size() - kSassPrefix.size() - 12);
  static constexpr std::string_view fp_ops[] = {"ffma", "fmul", "fadd", "hfma", "hmul", "hadd", "dfma", "dmul", "dadd"};
  if (std::find(std::begin(fp_ops), std::end(fp_ops), op) == std::end(fp_ops)) return 0;
  return op.ends_with("fma") ? 2 : 1;
}

std::optional<double> per_second(std::optional<double> amount, std::optional<double> seconds) {
  if (!amount || !seconds || *seconds <= 0) return std::nullopt;
  return *amount / *seconds;
}

std::optional<double> intensity(std::optional<double> flops, std::optional<double> bytes) {
  if (!flops || !bytes || *bytes <= 0) return std::nullopt;
  return *flops / *bytes;
}

CuptiCounters cupti_counters(const EventTable& t) {
  CuptiCounters out;
  out.rank = t.rank;
  const TraceStore& s = *t.store;
  std::vector<uint32_t> ranges, launches;
  // Every row: Sightline puts pid 0's ranges on a GPU track, HTA (no stream arg) on the CPU side.
  for (uint32_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    if (t.cat(r) == kRangeCat) ranges.push_back(i);
    else if (is_range_launch(t, r)) launches.push_back(i);
  }
  out.ranges = ranges.size();
  if (ranges.empty()) {
    out.note = "cupti_counters: no cuda_profiler_range events (the trace was not collected with the CUPTI range profiler)";
    return out;
  }
  if (ranges.size() != launches.size()) {
    out.note = "cupti_counters: " + std::to_string(ranges.size()) + " profiler ranges but " +
               std::to_string(launches.size()) + " kernel launches; ranges cannot be tied to their launches";
    return out;
  }
  ranges = sorted_by_start(t, std::move(ranges));
  launches = sorted_by_start(t, std::move(launches));

  // Metric columns: every numeric arg of any range (HTA: the union of the ranges' arg names).
  std::vector<std::vector<std::pair<std::string, double>>> members(ranges.size());
  std::map<std::string, size_t> metric_index;
  for (size_t k = 0; k < ranges.size(); ++k) {
    std::string_view json = s.slice_args_json(t.rows[ranges[k]].ref);
    for_each_number_member(json, [&](std::string_view key, double v) {
      members[k].emplace_back(std::string(key), v);
      metric_index.emplace(std::string(key), 0);
    });
  }
  for (auto& [name, index] : metric_index) {
    index = out.metrics.size();
    out.metrics.push_back(name);
  }

  for (size_t k = 0; k < ranges.size(); ++k) {
    const Row& range = t.rows[ranges[k]];
    CuptiKernelCounters c;
    c.row = ranges[k];
    c.launch = int32_t(launches[k]);
    c.kernel = std::string(t.name(range));
    c.ts = range.ts;
    c.dur = range.dur;
    c.op_stack = op_stack_of(t, t.rows[launches[k]]);
    if (!c.op_stack.empty()) c.top_op = c.op_stack.front(), c.bottom_op = c.op_stack.back();
    c.values.assign(out.metrics.size(), std::nullopt);
    for (auto& [key, v] : members[k]) c.values[metric_index[key]] = v;
    derive(out.metrics, c);
    out.kernels.push_back(std::move(c));
  }
  if (t.mode == Mode::Sightline) out.operators = by_operator(out);
  return out;
}

}  // namespace sl::analysis
