// §9 Trace diff, the HTA-compatible part: per-name counts and total durations of one iteration of
// one rank (CPU, GPU or both), outer-joined between a control and a test run, and the five
// change categories of HTA's `TraceDiff.ops_diff`.
//
// Both modes read an EventTable. HTA mode (`build_table` with Mode::Hta and the last-step filter
// off, as TraceDiff loads traces) follows HTA's iteration column: CPU rows by the ProfilerStep
// containing their start, GPU rows on stream > 0 by their launch's iteration (none when the
// launch is file event 0), stream-0 rows only when they are cpu_op.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/common.h"

namespace sl::diff {

enum class Device : uint8_t { Cpu, Gpu, All };
std::string_view device_name(Device d);

// Iteration numbers of a table: ProfilerStep#N names (HTA: symbol table order, sorted);
// Sightline: the store's iterations. Sorted ascending, unique.
std::vector<int64_t> table_iterations(const analysis::EventTable& table);

// The iteration each row belongs to, -1 for none (see the header comment for HTA's rules).
std::vector<int64_t> row_iterations(const analysis::EventTable& table);

struct OpsSummaryRow {
  std::string name;      // Sightline: the matching key (core/names/matching_key.h); HTA: the name
  std::string original;  // Sightline: the run's own name with the largest total under that key
  uint64_t count = 0;
  TimeNs total = 0;
  TimeNs self = 0;       // Sightline: total minus the time of the slices' children (exclusive)
};

struct OpsSelection {
  std::optional<int64_t> iteration;  // nullopt: the first one (all rows when there is none)
  Device device = Device::All;
  bool short_names = false;
};

struct OpsSummary {
  std::optional<int64_t> iteration;  // the one used; nullopt = all rows
  std::vector<OpsSummaryRow> rows;   // sorted by name (byte order, like pandas)
};

// Throws std::invalid_argument when the iteration is not in the table.
OpsSummary ops_summary(const analysis::EventTable& table, const OpsSelection& selection);

enum class Change : uint8_t { Added, Deleted, Increased, Decreased, Unchanged };
std::string_view change_name(Change c);  // added, deleted, ...

struct OpsDiffRow {
  std::string name;
  std::string control_name, test_name;  // Sightline: each run's own name behind the key
  uint64_t control_count = 0, test_count = 0;
  TimeNs control_total = 0, test_total = 0;
  TimeNs control_self = 0, test_self = 0;  // Sightline: exclusive time
  TimeNs diff_self() const { return test_self - control_self; }
  int64_t diff_count() const { return int64_t(test_count) - int64_t(control_count); }
  TimeNs diff_total() const { return test_total - control_total; }
  char sign() const { return diff_count() > 0 ? '+' : diff_count() < 0 ? '-' : '='; }
  Change change() const;
};

struct OpsDiff {
  std::optional<int64_t> control_iteration, test_iteration;
  std::vector<OpsDiffRow> rows;  // outer join, sorted by name (HTA: control's names, then test-only)
  // Names per category, in row order (HTA's ops_diff lists).
  std::vector<std::string> added, deleted, increased, decreased, unchanged;
};

// `hta_order`: rows in pandas' outer-concat order, the control's names first and the names only
// the test has after them (each part sorted); otherwise one sorted list.
OpsDiff ops_diff(const OpsSummary& control, const OpsSummary& test, bool hta_order = false);

}  // namespace sl::diff
