#include "core/diff/ops_diff.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "core/names/hta_short_name.h"

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
  // Group by name id first (cheap), then by the printed name (short names merge ids).
  std::unordered_map<StringId, OpsSummaryRow> by_id;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const Row& r = t.rows[i];
    if (out.iteration && iter[i] != *out.iteration) continue;
    if (sel.device == Device::Cpu && r.stream != -1) continue;
    if (sel.device == Device::Gpu && r.stream == -1) continue;
    OpsSummaryRow& row = by_id[r.name];
    ++row.count;
    row.total += r.dur;
  }
  std::unordered_map<std::string, OpsSummaryRow> by_name;
  for (auto& [id, row] : by_id) {
    std::string_view raw = t.store->strings.view(id);
    // Sightline: the compared steps may carry different numbers; they are one operator.
    if (t.mode == Mode::Sightline && step_number(raw)) raw = "ProfilerStep#*";
    std::string name = sel.short_names ? hta_short_name(raw) : std::string(raw);
    OpsSummaryRow& dst = by_name[name];
    dst.name = name;
    dst.count += row.count;
    dst.total += row.total;
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
      row.name = control.rows[i].name;
      row.control_count = control.rows[i].count;
      row.control_total = control.rows[i].total;
      ++i;
    }
    if (take_t) {
      row.name = test.rows[j].name;
      row.test_count = test.rows[j].count;
      row.test_total = test.rows[j].total;
      ++j;
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
