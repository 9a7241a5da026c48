// CUPTI range-profiler counters per kernel, attributed to the operators that launched them.
//
// A trace collected with the CUPTI range profiler has no `kernel` events: each kernel is one
// `cuda_profiler_range` slice whose args are the metric values (SASS instruction counts, DRAM
// bytes, ...). Its timestamps are synthetic (ranges tile the profiling window back to back), so
// a range is tied to its launch by order, not by time: the i-th range (by start) belongs to the
// i-th kernel launch call (by start), as HTA's get_cupti_counter_data_with_operators does.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/common.h"

namespace sl::analysis {

struct CuptiKernelCounters {
  uint32_t row = 0;                   // the cuda_profiler_range row in the table
  int32_t launch = -1;                // its launch row
  std::string kernel;                 // range name (HTA keeps `__missing__` as written)
  TimeNs ts = 0, dur = 0;             // the range's (synthetic) times
  std::vector<std::string> op_stack;  // enclosing cpu_ops of the launch, outermost first
  std::string top_op, bottom_op;      // op_stack's ends ("" when the launch has no cpu_op)
  std::vector<std::optional<double>> values;  // per CuptiCounters::metrics; nullopt = absent
  // Derived (both modes report them; HTA has no such columns):
  std::optional<double> flops;       // Σ SASS FP instructions, FMA counted twice
  std::optional<double> dram_bytes;  // dram__bytes_read.sum + dram__bytes_write.sum (or dram__bytes.sum)
  std::optional<double> seconds;     // kernel time from gpu__time_duration.sum (ns) when collected
};

struct CuptiOperatorCounters {
  std::string op;  // the kernels' innermost cpu_op
  uint64_t kernels = 0;
  std::vector<double> sums;  // per metric, over kernels where present
  std::optional<double> flops, dram_bytes, seconds;
};

struct CuptiCounters {
  int64_t rank = 0;
  std::vector<std::string> metrics;  // metric columns, sorted by name
  std::vector<CuptiKernelCounters> kernels;
  std::vector<CuptiOperatorCounters> operators;  // Sightline mode only, by Σ flops then name
  uint64_t ranges = 0;                           // cuda_profiler_range rows seen
  std::string note;                              // why the list is empty, when it is
};

// FLOP per instruction of the SASS counter `name` (2 for FMA, 1 for add/mul); 0 if not a FLOP counter.
double sass_flops_per_instruction(std::string_view name);

CuptiCounters cupti_counters(const EventTable& table);

// Throughput helpers: nullopt unless both operands exist and the divisor is positive.
std::optional<double> per_second(std::optional<double> amount, std::optional<double> seconds);
std::optional<double> intensity(std::optional<double> flops, std::optional<double> bytes);

}  // namespace sl::analysis
