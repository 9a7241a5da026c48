#include "core/diff/ops_diff.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "core/names/hta_short_name.h"
#include "core/names/matching_key.h"

namespace sl::diff {

using analysis::EventTable;
using analysis::Mode;
using analysis::Row;

std::string_view device_name(Device d) {
  switch (d) {
    case Device::Cpu: return "cpu";
    case Device::Gpu: return "gpu";
    case Device::All: return "all";
  }
  return "all";
}

namespace {

// "ProfilerStep#N" → N; HTA's int(name.replace("ProfilerStep#", "")) for well-formed names.
std::optional<int64_t> step_number(std::string_view name) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  int64_t v = 0;
  for (char c : name.substr(prefix.size())) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

struct Step {
  TimeNs start, end;
  int64_t number;
};

std::vector<Step> steps_of(const EventTable& t) {
  std::vector<Step> steps;
  if (t.mode == Mode::Hta) {
    // HTA scans its step rows in row order; the last one containing a timestamp wins.
    for (const Row& r : t.rows)
      if (auto n = step_number(t.name(r))) steps.push_back({r.ts, r.ts + r.dur, *n});
  } else {
    for (const Iteration& it : t.store->iterations) steps.push_back({it.start, it.end, it.number});
  }
  return steps;
}

int64_t step_at(const std::vector<Step>& steps, TimeNs ts) {
  int64_t found = -1;
  for (const Step& s : steps)
    if (s.start <= ts && ts < s.end) found = s.number;
  return found;
}

bool hta_cpu_op(const EventTable& t, const Row& r) { return t.cat(r) == "cpu_op"; }

// The time a slice spends in its children (the store's parent column), summed per track on first
// use: a row's self time is its duration minus this.
class ChildTime {
public:
  explicit ChildTime(const TraceStore& store) : store_(store) {}
  TimeNs operator()(SliceRef r) {
    auto [it, fresh] = sums_.try_emplace(r.track);
    if (fresh) {
      const SliceColumns& c = store_.tracks[r.track].slices;
      it->second.assign(c.dur.size(), 0);
      for (size_t i = 0; i < c.dur.size(); ++i)
        if (c.parent[i] != kNone) it->second[c.parent[i]] += c.dur[i];
    }
    return it->second[r.index];
  }

private:
  const TraceStore& store_;
  std::unordered_map<uint32_t, std::vector<TimeNs>> sums_;
};

// What the printed name of a row is: HTA compares names as they are; Sightline compares their
// matching keys, so the same call in two runs (another address, another line) is one row.
std::string compared_name(std::string_view raw, Mode mode, bool short_names) {
  std::string name = mode == Mode::Sightline ? matching_key(raw) : std::string(raw);
  return short_names ? hta_short_name(name) : name;
}

}  // namespace

std::vector<int64_t> table_iterations(const EventTable& t) {
  std::vector<int64_t> out;
  for (const Step& s : steps_of(t)) out.push_back(s.number);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> row_iterations(const EventTable& t) {
  std::vector<Step> steps = steps_of(t);
  std::vector<int64_t> iter(t.rows.size(), -1);
  if (steps.empty()) return iter;
  // Few steps, many rows: a per-row scan over the steps stays cheap and keeps "last wins".
  const bool hta = t.mode == Mode::Hta;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    bool by_time = hta ? (r.stream < 0 || (r.stream == 0 && hta_cpu_op(t, r))) : r.stream == -1;
    if (by_time) iter[i] = step_at(steps, r.ts);
  }
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    bool by_launch = hta ? r.stream > 0 : r.stream != -1;
    if (!by_launch || r.launch < 0) continue;
    if (hta && (r.launch_is_event0 || r.launch == t.event0)) continue;  // HTA: index 0 means "none"
    iter[i] = iter[size_t(r.launch)];
  }
  if (hta) {
    // HTA leaves stream-0 rows that are not cpu_op without an iteration (NaN): never selected.
    for (size_t i = 0; i < t.rows.size(); ++i)
      if (t.rows[i].stream == 0 && !hta_cpu_op(t, t.rows[i])) iter[i] = INT64_MIN;
  }
  return iter;
}

OpsSummary ops_summary(const EventTable& t, const OpsSelection& sel) {
  OpsSummary out;
  std::vector<int64_t> iterations = table_iterations(t);
  if (sel.iteration) {
    if (std::find(iterations.begin(), iterations.end(), *sel.iteration) == iterations.end())
      throw std::invalid_argument("iteration " + std::to_string(*sel.iteration) + " is not in trace");
    out.iteration = sel.iteration;
  } else if (!iterations.empty()) {
    out.iteration = iterations.front();
  }
  std::vector<int64_t> iter;
  if (out.iteration) iter = row_iterations(t);
  // Group by name id first (cheap), then by the printed name (keys and short names merge ids).
  const bool sightline = t.mode == Mode::Sightline;
  ChildTime child_time(*t.store);
  std::unordered_map<StringId, OpsSummaryRow> by_id;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    if (out.iteration && iter[i] != *out.iteration) continue;
    if (sel.device == Device::Cpu && r.stream != -1) continue;
    if (sel.device == Device::Gpu && r.stream == -1) continue;
    OpsSummaryRow& row = by_id[r.name];
    ++row.count;
    row.total += r.dur;
    if (sightline) row.self += r.dur - child_time(r.ref);
  }
  std::unordered_map<std::string, OpsSummaryRow> by_name;
  std::unordered_map<std::string, TimeNs> original_total;  // of the original name kept so far
  for (auto& [id, row] : by_id) {
    std::string_view raw = t.store->strings.view(id);
    std::string name = compared_name(raw, t.mode, sel.short_names);
    OpsSummaryRow& dst = by_name[name];
    dst.name = name;
    dst.count += row.count;
    dst.total += row.total;
    dst.self += row.self;
    TimeNs& kept = original_total[name];
    if (sightline && (dst.original.empty() || row.total > kept || (row.total == kept && raw < dst.original)))
      dst.original = std::string(raw), kept = row.total;
  }
  for (auto& [name, row] : by_name) out.rows.push_back(std::move(row));
  std::sort(out.rows.begin(), out.rows.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

std::string_view change_name(Change c) {
  switch (c) {
    case Change::Added: return "added";
    case Change::Deleted: return "deleted";
    case Change::Increased: return "increased";
    case Change::Decreased: return "decreased";
    case Change::Unchanged: return "unchanged";
  }
  return "unchanged";
}

Change OpsDiffRow::change() const {
  if (control_count == 0) return Change::Added;
  if (test_count == 0) return Change::Deleted;
  if (diff_count() > 0) return Change::Increased;
  if (diff_count() < 0) return Change::Decreased;
  return Change::Unchanged;
}

OpsDiff ops_diff(const OpsSummary& control, const OpsSummary& test, bool hta_order) {
  OpsDiff out;
  out.control_iteration = control.iteration;
  out.test_iteration = test.iteration;
  size_t i = 0, j = 0;
  while (i < control.rows.size() || j < test.rows.size()) {
    OpsDiffRow row;
    bool take_c = j == test.rows.size() || (i < control.rows.size() && control.rows[i].name <= test.rows[j].name);
    bool take_t = i == control.rows.size() || (j < test.rows.size() && test.rows[j].name <= control.rows[i].name);
    if (take_c) {
      const OpsSummaryRow& c = control.rows[i++];
      row.name = c.name, row.control_name = c.original;
      row.control_count = c.count, row.control_total = c.total, row.control_self = c.self;
    }
    if (take_t) {
      const OpsSummaryRow& x = test.rows[j++];
      row.name = x.name, row.test_name = x.original;
      row.test_count = x.count, row.test_total = x.total, row.test_self = x.self;
    }
    out.rows.push_back(std::move(row));
  }
  if (hta_order)
    std::stable_partition(out.rows.begin(), out.rows.end(), [](const OpsDiffRow& r) { return r.control_count > 0; });
  for (const OpsDiffRow& r : out.rows) {
    switch (r.change()) {
      case Change::Added: out.added.push_back(r.name); break;
      case Change::Deleted: out.deleted.push_back(r.name); break;
      case Change::Increased: out.increased.push_back(r.name); break;
      case Change::Decreased: out.decreased.push_back(r.name); break;
      case Change::Unchanged: out.unchanged.push_back(r.name); break;
    }
  }
  return out;
}

}  // namespace sl::diff
