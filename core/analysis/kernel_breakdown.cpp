#include "core/analysis/kernel_breakdown.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/analysis/numpy_sort.h"

namespace sl::analysis {

namespace {

constexpr KernelType kTypes[] = {KernelType::Computation, KernelType::Communication, KernelType::Memory};

std::string type_set_label(int set) {
  std::string label;
  for (int b = 0; b < 3; ++b) {
    if (!(set & (1 << b))) continue;
    if (!label.empty()) label += " overlapping ";
    label += kernel_type_name(kTypes[b]);
  }
  return label;
}

// (HTA) the sweep as HTA runs it: per type in order, append the merged intervals' starts (+bit)
// then their ends (-bit) and re-sort everything with numpy's unstable quicksort; the running sum
// after each point is a state, credited with the time to the next point. Every state with a
// positive sum is a row, even at zero time: a zero-length interval, or a start and an end at the
// same time sorted start-first, gives rows such as `COMPUTATION overlapping MEMORY, 0`.
// Rows then go by time, descending; equal times keep the group-by's alphabetical order.
std::vector<KernelTypeShare> by_type_hta(std::vector<std::vector<Interval>> per) {
  std::vector<int64_t> time;
  std::vector<int> status;
  for (int b = 0; b < 3; ++b) {
    std::vector<Interval> merged = merge_intervals(std::move(per[size_t(b)]));
    for (const Interval& m : merged) time.push_back(m.start), status.push_back(1 << b);
    for (const Interval& m : merged) time.push_back(m.end), status.push_back(-(1 << b));
    std::vector<uint32_t> order = numpy_quicksort_argsort(time);
    std::vector<int64_t> sorted_time(time.size());
    std::vector<int> sorted_status(status.size());
    for (size_t i = 0; i < order.size(); ++i) sorted_time[i] = time[order[i]], sorted_status[i] = status[order[i]];
    time = std::move(sorted_time);
    status = std::move(sorted_status);
  }
  std::map<std::string, TimeNs> per_label;
  int running = 0;
  // The last point has no successor (HTA's NaN); it always closes the last interval.
  for (size_t i = 0; i + 1 < time.size(); ++i) {
    running += status[i];
    if (running > 0) per_label[type_set_label(running)] += time[i + 1] - time[i];
  }
  std::vector<KernelTypeShare> out;
  TimeNs total = 0;
  for (auto& [label, time_sum] : per_label) {
    KernelTypeShare share;
    share.label = label;
    share.time = time_sum;
    total += time_sum;
    out.push_back(std::move(share));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time > b.time; });
  for (auto& sh : out) sh.pct = total > 0 ? round_to(double(sh.time) / double(total) * 100.0, 1) : 0;
  return out;
}

// Merge each type separately, then sweep the boundaries and credit each stretch to the set of
// types running in it (bit i = kTypes[i]).
std::vector<KernelTypeShare> by_type(const EventTable& t) {
  std::vector<std::vector<Interval>> per(3);
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    KernelType k = kernel_type(t, r);
    for (int b = 0; b < 3; ++b)
      if (k == kTypes[b]) per[size_t(b)].push_back({r.ts, r.end()});
  }
  if (t.mode == Mode::Hta) return by_type_hta(std::move(per));
  struct Point {
    TimeNs time;
    int delta;
  };
  std::vector<Point> points;
  for (int b = 0; b < 3; ++b)
    for (const Interval& m : merge_intervals(std::move(per[size_t(b)]))) {
      points.push_back({m.start, 1 << b});
      points.push_back({m.end, -(1 << b)});
    }
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.time < b.time; });
  TimeNs per_set[8] = {};
  int running = 0;
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    running += points[i].delta;
    if (running > 0) per_set[running] += points[i + 1].time - points[i].time;
  }
  std::vector<KernelTypeShare> out;
  TimeNs total = 0;
  for (int s = 1; s < 8; ++s) {
    if (per_set[s] <= 0) continue;
    KernelTypeShare share;
    for (int b = 0; b < 3; ++b) {
      if (!(s & (1 << b))) continue;
      if (!share.label.empty()) share.label += " overlapping ";
      share.label += kernel_type_name(kTypes[b]);
    }
    share.time = per_set[s];
    total += per_set[s];
    out.push_back(std::move(share));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.time > b.time; });
  for (auto& s : out) {
    s.pct = total > 0 ? double(s.time) / double(total) * 100.0 : 0;
    if (t.mode == Mode::Hta) s.pct = round_to(s.pct, 1);
  }
  return out;
}

struct Group {
  std::vector<double> durs;
  double sum = 0;
};

KernelStats stats_of(const std::string& name, KernelType type, int64_t rank, Group& g) {
  KernelStats s;
  s.rank = rank;
  s.type = type;
  s.name = name;
  s.count = g.durs.size();
  Describe d = describe(g.durs);
  s.sum = g.sum;
  s.min = d.min;
  s.max = d.max;
  s.mean = d.mean;
  s.std = d.std_valid ? d.std : 0;  // HTA fills a single kernel's NaN std with 0
  std::sort(g.durs.begin(), g.durs.end());
  s.median = quantile_sorted(g.durs, 0.5);
  s.p95 = quantile_sorted(g.durs, 0.95);
  return s;
}

// (HTA) fold the tail of one type into "others": past the duration_ratio quantile of the
// cumulative total, or beyond num_kernels; then min/max/mean/std are over per-name totals.
std::vector<KernelStats> fold_others(std::vector<KernelStats> sorted_by_sum, const KernelBreakdownOptions& o) {
  if (sorted_by_sum.size() <= o.num_kernels) return sorted_by_sum;
  std::vector<double> cumsum;
  double c = 0;
  for (const auto& s : sorted_by_sum) cumsum.push_back(c += s.sum);
  std::vector<double> sorted_cum = cumsum;
  std::sort(sorted_cum.begin(), sorted_cum.end());
  double q = quantile_sorted(sorted_cum, o.duration_ratio);
  std::map<std::string, std::vector<const KernelStats*>> groups;
  for (size_t i = 0; i < sorted_by_sum.size(); ++i) {
    bool other = cumsum[i] > q || i >= o.num_kernels;
    groups[other ? "others" : sorted_by_sum[i].name].push_back(&sorted_by_sum[i]);
  }
  std::vector<KernelStats> out;
  for (auto& [name, members] : groups) {
    if (name != "others" && members.size() == 1) {
      // A name on its own: HTA's regroup turns its statistics into those of its total.
      KernelStats s = *members[0];
      s.min = s.max = s.mean = s.sum;
      s.std = 0;
      s.median.reset();  // per-kernel quantiles no longer describe the regrouped row
      s.p95.reset();
      out.push_back(std::move(s));
      continue;
    }
    std::vector<double> sums;
    KernelStats s = *members[0];
    s.name = name;
    s.count = 0;
    for (const KernelStats* m : members) {
      sums.push_back(m->sum);
      s.count += m->count;
    }
    Describe d = describe(sums);
    s.sum = 0;
    for (double x : sums) s.sum += x;
    s.min = d.min;
    s.max = d.max;
    s.mean = d.mean;
    s.std = d.std_valid ? d.std : 0;
    s.median.reset();
    s.p95.reset();
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

KernelBreakdown kernel_breakdown(const EventTable& t, const KernelBreakdownOptions& o) {
  KernelBreakdown out;
  out.by_type = by_type(t);
  // Group by (type, full name).
  std::map<std::pair<int, std::string_view>, Group> groups;
  for (uint32_t i : t.gpu) {
    const Row& r = t.rows[i];
    KernelType k = kernel_type(t, r);
    if (k != KernelType::Computation && k != KernelType::Communication && k != KernelType::Memory) continue;
    Group& g = groups[{int(k), t.name(r)}];
    g.durs.push_back(double(r.dur));
    g.sum += double(r.dur);
  }
  for (KernelType type : kTypes) {
    std::vector<KernelStats> list;
    for (auto& [key, g] : groups)
      if (key.first == int(type)) list.push_back(stats_of(std::string(key.second), type, t.rank, g));
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.sum > b.sum; });
    std::vector<KernelStats> shown = t.mode == Mode::Hta ? fold_others(list, o) : list;
    out.per_kernel_full.insert(out.per_kernel_full.end(), list.begin(), list.end());
    out.per_kernel.insert(out.per_kernel.end(), shown.begin(), shown.end());
  }
  // Sorted by type name, then kernel name (HTA's final order; stable for people too).
  auto by_name = [](const KernelStats& a, const KernelStats& b) {
    std::string_view ta = kernel_type_name(a.type), tb = kernel_type_name(b.type);
    if (ta != tb) return ta < tb;
    return a.name < b.name;
  };
  std::stable_sort(out.per_kernel.begin(), out.per_kernel.end(), by_name);
  std::stable_sort(out.per_kernel_full.begin(), out.per_kernel_full.end(), by_name);
  return out;
}

std::vector<double> log_bins(double lo, double hi, size_t bins) {
  lo = std::max(lo, 1.0);
  hi = std::max(hi, lo * 1.0001);
  std::vector<double> edges(bins + 1);
  double a = std::log10(lo), b = std::log10(hi);
  for (size_t i = 0; i <= bins; ++i) edges[i] = std::pow(10.0, a + (b - a) * double(i) / double(bins));
  edges.front() = std::min(edges.front(), lo);
  edges.back() = std::max(edges.back(), hi);
  return edges;
}

size_t bin_of(const std::vector<double>& edges, double v) {
  if (edges.size() < 2) return 0;
  auto it = std::upper_bound(edges.begin(), edges.end(), v);
  size_t i = it == edges.begin() ? 0 : size_t(it - edges.begin()) - 1;
  return std::min(i, edges.size() - 2);
}

std::vector<DurationHistogram> duration_distributions(const EventTable& t, size_t top_names, size_t bins) {
  std::unordered_map<StringId, std::vector<uint32_t>> by_name;
  for (uint32_t i : t.gpu)
    if (is_kernel_cat(t.cat(t.rows[i]))) by_name[t.rows[i].name].push_back(i);
  std::vector<std::pair<TimeNs, StringId>> order;
  for (auto& [name, rows] : by_name) {
    TimeNs sum = 0;
    for (uint32_t i : rows) sum += t.rows[i].dur;
    order.push_back({sum, name});
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  if (order.size() > top_names) order.resize(top_names);
  std::vector<DurationHistogram> out;
  for (auto& [sum, name] : order) {
    const auto& rows = by_name[name];
    double lo = 1e300, hi = 0;
    for (uint32_t i : rows) {
      lo = std::min(lo, double(t.rows[i].dur));
      hi = std::max(hi, double(t.rows[i].dur));
    }
    DurationHistogram h;
    h.name = std::string(t.store->strings.view(name));
    h.edges = log_bins(lo, hi, bins);
    h.rows.resize(bins);
    for (uint32_t i : rows) h.rows[bin_of(h.edges, double(t.rows[i].dur))].push_back(i);
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace sl::analysis
