// Roofline model of the CUPTI range-profiler counters (cupti_counters.h): the device's peak
// compute and memory bandwidth derived from its deviceProperties entry, and one point per kernel
// (arithmetic intensity, achieved FLOP/s). GUI-free, so the Counters view and `render --view
// roofline` draw the same numbers.
//
// Peaks (assumptions, stated once here and in the view):
// - Compute roof, per precision: numSms × FMA results per clock per SM (the CUDA C++
//   Programming Guide's arithmetic-instruction throughput table for the compute capability) × 2
//   FLOP per FMA × the SM clock. The clock is the deviceProperties `clockRate`: CUDA's
//   cudaDeviceProp writes kHz, Nsight Systems' TARGET_INFO_GPU (our nsys loader keeps its name)
//   writes Hz; a value below 1e7 is taken as kHz, since no GPU clocks below 10 MHz or above
//   10 GHz. It is the maximum (boost) clock, so the roof is an upper bound. Tensor cores are not
//   counted: the SASS FP counters the points come from do not count tensor instructions either.
// - Memory roof: `memoryBandwidth` (bytes/s, as Nsight Systems writes it) when present; else
//   2 (double data rate) × `memoryClockRate` (kHz) × `memoryBusWidth` (bits) / 8, as NVIDIA's
//   theoretical-bandwidth formula. DRAM only; caches are not modelled.
// - Kineto's deviceProperties carry neither the clock nor the memory fields, so on most PyTorch
//   traces no roof can be derived: the result says which field is missing and no roof is drawn.
// - FP16: the roof counts packed half2 results as two (the Guide's table does); the points count
//   each SASS thread instruction once (FMA = 2 FLOP), so FP16 kernels that use half2 read up to
//   2× low against their roof. Stated, not corrected: the counter does not say which was used.
// Points: FLOPs as cupti_counters derives them (FMA = 2), bytes = DRAM bytes, time =
// gpu__time_duration.sum (the range timestamps are synthetic). A kernel lacking any of the three
// has no point; the counts of kernels left out, by reason, are kept for the note.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/cupti_counters.h"

namespace sl::analysis {

enum class Precision { Fp64, Fp32, Fp16 };
constexpr int kPrecisionCount = 3;
const char* precision_name(Precision p);  // "FP64", "FP32", "FP16"
// The precision of an `smsp__sass_thread_inst_executed_op_*` FLOP counter; nullopt for others.
std::optional<Precision> sass_precision(std::string_view metric);

// FMA results per clock per SM for a compute capability (the Programming Guide's table);
// nullopt when the capability is not in the table or has no such unit.
std::optional<double> fma_per_clock_per_sm(int major, int minor, Precision p);

struct DevicePeak {
  int64_t device = -1;
  std::string name;
  std::optional<int64_t> sms, cc_major, cc_minor;
  std::optional<double> clock_hz;
  // Per precision: FLOP per clock for the whole GPU (numSms × FMA/clk/SM × 2), and FLOP/s.
  std::array<std::optional<double>, kPrecisionCount> flop_per_clock, flops;
  std::optional<double> bytes_per_s;
  std::string memory_source;  // "memoryBandwidth" or "memoryClockRate × memoryBusWidth"
  std::string compute_note, memory_note;  // why the roof is missing ("" when it is there)

  std::optional<double> ridge(Precision p) const;  // intensity where the two roofs meet
};

// `properties_json` is one deviceProperties entry (TraceMeta::devices[i].properties_json).
DevicePeak device_peak(std::string_view properties_json);

struct RooflinePoint {
  size_t kernel = 0;  // index into CuptiCounters::kernels
  double flops = 0, bytes = 0, seconds = 0;
  double intensity = 0;   // FLOP per DRAM byte
  double throughput = 0;  // FLOP/s
  Precision precision = Precision::Fp32;  // the precision with the most FLOPs
  size_t group = 0;                       // index into Roofline::groups
};

// The operators the points are coloured by: the innermost cpu_op of each kernel's launch.
struct RooflineGroup {
  std::string op;  // "(no operator)" for launches outside any cpu_op; kOtherOperators for the rest
  size_t points = 0;
  double flops = 0;
};
inline constexpr std::string_view kOtherOperators = "other operators";
constexpr size_t kMaxRooflineGroups = 8;  // the colours a figure can tell apart

// Decade-aligned axis bounds (powers of ten) holding every point and the roofs' ridges.
struct RooflineAxes {
  int x_lo = -1, x_hi = 2;   // log10 FLOP/byte
  int y_lo = 9, y_hi = 13;   // log10 FLOP/s
};

struct Roofline {
  DevicePeak peak;
  bool has_device = false;  // the trace has a deviceProperties entry for the kernels' GPU
  std::vector<RooflinePoint> points;
  std::array<bool, kPrecisionCount> precision_used{};  // some point has FLOPs of it
  std::vector<RooflineGroup> groups;  // by FLOPs, most first; "other operators" last when present
  RooflineAxes axes;
  size_t without_flops = 0, without_bytes = 0, without_time = 0;  // kernels with no point
  std::string note;  // why some or all kernels have no point ("" when every kernel has one)
};

// The kernels' GPU: the device of the first range's GPU row when known, else the first
// deviceProperties entry.
Roofline roofline(const CuptiCounters& counters, const EventTable& table);

// The precisions whose compute roof is drawn: those some point uses, FP32 when none is known.
std::vector<Precision> drawn_roofs(const Roofline& r);

// The roof at `intensity` for precision p: min(compute, intensity × bandwidth); nullopt unless
// both roofs are known.
std::optional<double> attainable(const DevicePeak& peak, Precision p, double intensity);

// Three significant digits with an SI prefix and `unit`: "19.5 TFLOP/s", "1.56 TB/s", "840 B".
std::string si(double value, std::string_view unit);

// 10^exponent as an axis label: with SI prefixes from 1000 up ("1 k", "100 G", "10 T") when
// `prefixed`, else plain decimals ("0.01", "1", "1000").
std::string decade_label(int exponent, bool prefixed);

// The point drawn nearest to (x, y) within `max_distance` (screen units), or -1: the hit test of
// a hover or click on the scatter.
int point_at(const std::vector<std::pair<float, float>>& drawn, float x, float y, float max_distance);

// One line each on how the roofs were derived (or why not), for the view and the figure.
std::vector<std::string> roof_derivation(const DevicePeak& peak, const std::vector<Precision>& roofs);

}  // namespace sl::analysis
