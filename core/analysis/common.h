// Shared ground for every analysis: the mode, the event table each analysis reads, kernel
// classification, interval merging and descriptive statistics.
//
// Analyses never read the store directly for their inputs: they read an EventTable, built once
// per report. In Sightline mode the table is every slice of the store with exact nanoseconds; in
// HTA mode it is the row set Holistic Trace Analysis 0.6.1 would load (see analyses.md, "HTA mode
// loading rules"), with HTA's rounding, stream and pairing rules applied. One table, two
// constructions, so the analyses themselves stay mode-agnostic except where a quirk says otherwise.
#pragma once

#include <unordered_map>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/store/trace_store.h"

namespace sl::analysis {

enum class Mode : uint8_t { Sightline, Hta };

std::string_view mode_name(Mode mode);

// One event as the analyses see it. Times in ns relative to the store origin; in HTA mode they
// are whole microseconds (multiples of 1000) after HTA's rounding rule.
struct Row {
  TimeNs ts = 0, dur = 0;
  StringId name = 0, cat = 0;
  int64_t stream = -1;   // -1 = CPU side
  int64_t corr = -1;     // args.correlation, -1 when absent
  SliceRef ref;          // where the event lives in the store
  uint64_t order = 0;    // file order (byte offset of its args), for HTA's row order
  int32_t launch = -1;   // GPU row: row index of its launch; -1 none
  bool launch_is_event0 = false;  // (HTA) unpaired GPU row pointing at event 0
  uint8_t kernel_type = 0;        // KernelType in the table's mode, classified once per name
  TimeNs end() const { return ts + dur; }
};

struct EventTable {
  Mode mode = Mode::Sightline;
  const TraceStore* store = nullptr;
  std::vector<Row> rows;
  std::vector<uint32_t> gpu;     // rows with stream != -1, in row order
  std::vector<uint32_t> cpu;     // rows with stream == -1, in row order
  int32_t event0 = -1;           // (HTA) the row that is traceEvents[0], if any
  int64_t rank = 0;
  bool last_step_filtered = false;
  bool rounded = false;          // (HTA) fractional-timestamp rounding was applied
  std::vector<std::string> notes;

  std::string_view name(const Row& r) const { return store->strings.view(r.name); }
  std::string_view cat(const Row& r) const { return store->strings.view(r.cat); }
  // The launch row's start, if the row has a launch (HTA: event 0's start for the quirk).
  std::optional<TimeNs> launch_ts(const Row& r) const;
};

struct TableOptions {
  Mode mode = Mode::Sightline;
  std::optional<int64_t> rank;       // --rank, overrides what the file says
  bool hta_last_step_filter = true;  // (HTA) rule 4; TraceDiff reads traces without it
};

EventTable build_table(const TraceStore& store, const TableOptions& options);

// Whether a slice has no child; built per track on first use, since callers touch few tracks.
class LeafTest {
public:
  explicit LeafTest(const TraceStore& store) : store_(store) {}
  bool operator()(uint32_t track, uint32_t index);

private:
  const TraceStore& store_;
  std::unordered_map<uint32_t, std::vector<char>> has_child_;
};

// ---- classification ----
enum class KernelType : uint8_t { Computation, Communication, Memory, Sync, Other };
std::string_view kernel_type_name(KernelType type);  // "COMPUTATION", ...
KernelType kernel_type_hta(std::string_view name);
KernelType kernel_type_sightline(std::string_view name, std::string_view cat);
KernelType kernel_type(const EventTable& table, const Row& row);
// Whether `s` contains `p` ignoring ASCII case; `p` is lower case.
bool contains_icase(std::string_view s, std::string_view p);
// (HTA) loading rule 2's test: some slice or instant starts at a fractional µs.
bool any_fractional_ts(const TraceStore& store);
struct Interval;
// (HTA) loading rule 2's rounding of one event: [ceil(ts), floor(ts + dur)) in µs, in float64 as
// pandas computes them; times relative to the store's origin.
Interval hta_rounded(const TraceStore& store, TimeNs ts, TimeNs dur);
// §0: whether a kernel's name names a collective (whole tokens: `all_reduce`, `multimem`, ...).
bool names_a_collective(std::string_view name);

// Kernels, memcpy and memset categories (idle analysis, GPU busy).
bool is_kernel_memcpy_memset_cat(std::string_view cat);
bool is_kernel_cat(std::string_view cat);

// Launch APIs HTA's launch statistics know; Sightline accepts every correlated CPU event.
bool is_hta_launch_name(std::string_view name);

// ---- intervals ----
struct Interval {
  TimeNs start, end;
};
// Sort by start; a new group starts only when a start is strictly after the largest end so far.
std::vector<Interval> merge_intervals(std::vector<Interval> intervals);
TimeNs total_length(const std::vector<Interval>& merged);
TimeNs intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// ---- statistics (pandas describe(): std with n-1, linear-interpolated quantiles) ----
struct Describe {
  uint64_t count = 0;
  double mean = 0, std = 0, min = 0, p25 = 0, p50 = 0, p75 = 0, max = 0;
  bool std_valid = false;  // count >= 2
};
Describe describe(std::vector<double> values);
double quantile_sorted(const std::vector<double>& sorted, double q);
double median(std::vector<double> values);  // the middle one, or the mean of the middle two; 0 for none
double round_to(double value, int digits);  // round half to even at `digits`, like numpy

inline double us(TimeNs ns) { return double(ns) / 1000.0; }

}  // namespace sl::analysis
