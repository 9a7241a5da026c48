#include "views/analysis_model.h"

#include <algorithm>
#include <unordered_map>

namespace sl::views {

using namespace sl::analysis;

std::vector<LaunchingOp> launching_operators(const EventTable& t) {
  const TraceStore& s = *t.store;
  std::unordered_map<StringId, uint64_t> kernels;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    if (r.launch < 0) continue;
    // Every enclosing operator of the launch call, each name counted once per kernel.
    std::vector<StringId> seen;
    for (SliceRef p = s.parent(t.rows[size_t(r.launch)].ref); p.valid(); p = s.parent(p)) {
      StringId n = s.slices(p.track).name[p.index];
      if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
      seen.push_back(n);
      ++kernels[n];
    }
  }
  std::vector<LaunchingOp> out;
  for (auto& [id, n] : kernels) out.push_back({std::string(s.strings.view(id)), n});
  std::sort(out.begin(), out.end(), [](const LaunchingOp& a, const LaunchingOp& b) {
    return a.kernels != b.kernels ? a.kernels > b.kernels : a.name < b.name;
  });
  return out;
}

namespace {

// Length of `a` not covered by `b` (both merged, sorted).
std::vector<Interval> subtract(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (Interval x : a) {
    TimeNs cur = x.start;
    while (j < b.size() && b[j].end <= cur) ++j;
    for (size_t k = j; k < b.size() && b[k].start < x.end; ++k) {
      if (b[k].start > cur) out.push_back({cur, b[k].start});
      cur = std::max(cur, b[k].end);
    }
    if (cur < x.end) out.push_back({cur, x.end});
  }
  return out;
}

std::vector<Interval> clip(const std::vector<Interval>& v, TimeNs a, TimeNs b) {
  std::vector<Interval> out;
  for (Interval x : v)
    if (x.end > a && x.start < b) out.push_back({std::max(x.start, a), std::min(x.end, b)});
  return out;
}

}  // namespace

std::vector<IterationSplit> iteration_splits(const EventTable& t) {
  std::vector<Interval> by_type[3];  // compute, communication, memory
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    // Kernels, copies and sets only: GPU-side annotations (ProfilerStep on the stream) are not work.
    if (r.dur <= 0 || !is_kernel_memcpy_memset_cat(t.cat(r))) continue;
    auto type = KernelType(r.kernel_type);
    int k = type == KernelType::Communication ? 1 : type == KernelType::Memory ? 2 : type == KernelType::Computation ? 0 : -1;
    if (k >= 0) by_type[k].push_back({r.ts, r.end()});
  }
  for (auto& v : by_type) v = merge_intervals(std::move(v));
  std::vector<Interval> comm_only = subtract(by_type[1], by_type[0]);
  std::vector<Interval> compute_or_comm = merge_intervals([&] {
    auto v = by_type[0];
    v.insert(v.end(), by_type[1].begin(), by_type[1].end());
    return v;
  }());
  std::vector<Interval> mem_only = subtract(by_type[2], compute_or_comm);
  std::vector<IterationSplit> out;
  for (const auto& it : t.store->iterations) {
    IterationSplit s;
    s.iteration = it.number;
    s.start = it.start;
    s.end = it.end;
    s.compute = total_length(clip(by_type[0], it.start, it.end));
    s.communication = total_length(clip(comm_only, it.start, it.end));
    s.memory = total_length(clip(mem_only, it.start, it.end));
    s.idle = std::max<TimeNs>(0, (it.end - it.start) - s.compute - s.communication - s.memory);
    out.push_back(s);
  }
  return out;
}

std::unique_ptr<AnalysisModel> build_analysis_model(const TraceStore& store) {
  auto m = std::make_unique<AnalysisModel>();
  ReportOptions options;
  m->report = run_report(store, options);
  m->iteration_of_row = iteration_of_rows(m->report.table);
  m->launching_ops = launching_operators(m->report.table);
  m->iterations = iteration_splits(m->report.table);
  return m;
}

}  // namespace sl::views
