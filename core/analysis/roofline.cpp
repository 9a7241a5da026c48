#include "core/analysis/roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/analysis/args_util.h"

namespace sl::analysis {

namespace {

constexpr std::string_view kSassPrefix = "smsp__sass_thread_inst_executed_op_";

// FMA results per clock per SM, from the CUDA C++ Programming Guide's "Throughput of Native
// Arithmetic Instructions" table (16-bit: half and half2 add/multiply/multiply-add; 0 = no such
// unit). Capabilities not listed (7.2, Blackwell and later, ...) give no compute roof rather
// than a guessed one.
struct FmaRates {
  int major, minor;
  double fp64, fp32, fp16;
};
constexpr FmaRates kFmaTable[] = {
    {5, 0, 4, 128, 0},  {5, 2, 4, 128, 0},  {5, 3, 4, 128, 256}, {6, 0, 32, 64, 128}, {6, 1, 4, 128, 2},
    {6, 2, 4, 128, 256}, {7, 0, 32, 64, 128}, {7, 5, 2, 64, 128}, {8, 0, 32, 64, 256}, {8, 6, 2, 128, 256},
    {8, 7, 2, 128, 256}, {8, 9, 2, 128, 128}, {9, 0, 64, 128, 256},
};

// cudaDeviceProp::clockRate is kHz, Nsight Systems' clockRate Hz (see the header).
double clock_to_hz(double clock_rate) { return clock_rate < 1e7 ? clock_rate * 1e3 : clock_rate; }

std::optional<int64_t> positive_int(std::string_view json, std::string_view key) {
  std::optional<int64_t> v = find_int_arg(json, key);
  return v && *v > 0 ? v : std::nullopt;
}

std::optional<double> positive_number(std::string_view json, std::string_view key) {
  std::optional<double> v = find_number_arg(json, key);
  return v && *v > 0 ? v : std::nullopt;
}

std::string quoted_name(std::string_view json) {
  size_t k = json.find("\"name\"");
  if (k == std::string_view::npos) return "";
  size_t a = json.find('"', json.find(':', k));
  size_t b = a == std::string_view::npos ? a : json.find('"', a + 1);
  return b == std::string_view::npos ? "" : std::string(json.substr(a + 1, b - a - 1));
}

// The FMA table is NVIDIA's: AMD GPUs report their gfx version as a compute capability (MI250:
// 9.0, the same as Hopper) and a 64-wide warp.
bool is_amd(const DevicePeak& p, std::string_view json) {
  return p.name.find("AMD") != std::string::npos || find_int_arg(json, "warpSize") == 64;
}

void derive_compute(DevicePeak& p, std::string_view json) {
  if (is_amd(p, json)) return void(p.compute_note = "not an NVIDIA GPU: no FMA-rate table for it");
  if (!p.sms) return void(p.compute_note = "deviceProperties has no numSms");
  if (!p.cc_major || !p.cc_minor) return void(p.compute_note = "deviceProperties has no computeMajor/computeMinor");
  bool known = false;
  for (int i = 0; i < kPrecisionCount; ++i)
    if (std::optional<double> fma = fma_per_clock_per_sm(int(*p.cc_major), int(*p.cc_minor), Precision(i))) {
      p.flop_per_clock[i] = double(*p.sms) * *fma * 2;
      known = true;
      if (p.clock_hz) p.flops[i] = *p.flop_per_clock[i] * *p.clock_hz;
    }
  if (!known) {
    p.compute_note = "compute capability " + std::to_string(*p.cc_major) + "." + std::to_string(*p.cc_minor) +
                     " is not in the FMA-rate table";
  } else if (!p.clock_hz) {
    p.compute_note = "deviceProperties has no clockRate (Kineto does not record the SM clock)";
  }
}

void derive_memory(DevicePeak& p, std::string_view json) {
  if (std::optional<double> bw = positive_number(json, "memoryBandwidth")) {
    p.bytes_per_s = *bw;
    p.memory_source = "memoryBandwidth";
    return;
  }
  std::optional<double> clock_khz = positive_number(json, "memoryClockRate");
  std::optional<double> bus_bits = positive_number(json, "memoryBusWidth");
  if (clock_khz && bus_bits) {
    p.bytes_per_s = 2 * *clock_khz * 1e3 * *bus_bits / 8;
    p.memory_source = "memoryClockRate × memoryBusWidth";
    return;
  }
  p.memory_note = "deviceProperties has neither memoryBandwidth nor memoryClockRate and memoryBusWidth";
}

// FLOPs of one kernel split by precision (FMA counted twice, as cupti_counters does).
std::array<double, kPrecisionCount> flops_by_precision(const CuptiCounters& c, const CuptiKernelCounters& k) {
  std::array<double, kPrecisionCount> out{};
  for (size_t m = 0; m < c.metrics.size(); ++m)
    if (std::optional<Precision> p = sass_precision(c.metrics[m]); p && k.values[m])
      out[int(*p)] += sass_flops_per_instruction(c.metrics[m]) * *k.values[m];
  return out;
}

const Device* kernels_device(const CuptiCounters& c, const EventTable& t) {
  const std::vector<Device>& devices = t.store->meta.devices;
  if (devices.empty()) return nullptr;
  if (!c.kernels.empty()) {
    const Track& track = t.store->tracks[t.rows[c.kernels.front().row].ref.track];
    for (const Device& d : devices)
      if (track.kind == TrackKind::GpuStream && d.id == track.device) return &d;
  }
  return &devices.front();
}

std::string left_out_note(const Roofline& r, size_t kernels) {
  if (kernels == 0) return "no profiled kernels";
  if (r.points.size() == kernels) return "";
  std::string why;
  auto add = [&](size_t n, const char* what) {
    if (n) why += std::string(why.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(r.without_flops, "without FP instructions (no SASS FP counts, or 0 FLOPs)");
  add(r.without_bytes, "without DRAM bytes (no dram__bytes_* counter, or 0)");
  add(r.without_time, "without gpu__time_duration.sum (no throughput)");
  return std::to_string(kernels - r.points.size()) + " of " + std::to_string(kernels) + " kernels have no point: " + why;
}

// Points grouped by operator, most FLOPs first; past kMaxRooflineGroups - 1 operators the rest
// share one group, so every colour in a legend stays distinguishable.
void group_by_operator(const CuptiCounters& c, Roofline& r) {
  std::map<std::string, RooflineGroup> by_op;
  for (const RooflinePoint& p : r.points) {
    const std::string& op = c.kernels[p.kernel].bottom_op;
    RooflineGroup& g = by_op[op.empty() ? "(no operator)" : op];
    g.op = op.empty() ? "(no operator)" : op;
    ++g.points, g.flops += p.flops;
  }
  for (auto& [op, g] : by_op) r.groups.push_back(g);
  std::stable_sort(r.groups.begin(), r.groups.end(), [](const auto& a, const auto& b) { return a.flops > b.flops; });
  if (r.groups.size() > kMaxRooflineGroups) {
    RooflineGroup other{std::string(kOtherOperators), 0, 0};
    for (size_t i = kMaxRooflineGroups - 1; i < r.groups.size(); ++i) other.points += r.groups[i].points, other.flops += r.groups[i].flops;
    r.groups.resize(kMaxRooflineGroups - 1);
    r.groups.push_back(other);
  }
  for (RooflinePoint& p : r.points) {
    const std::string& op = c.kernels[p.kernel].bottom_op;
    std::string name = op.empty() ? "(no operator)" : op;
    p.group = r.groups.size() - 1;  // "other operators" unless named
    for (size_t g = 0; g < r.groups.size(); ++g)
      if (r.groups[g].op == name) p.group = g;
  }
}

// Decades holding every point, each drawn roof's ridge (with a decade of slope before it) and
// its compute peak; at least two decades on each axis.
RooflineAxes axes_for(const Roofline& r) {
  double x_min = 1e300, x_max = -1e300, y_min = 1e300, y_max = -1e300;
  auto take = [&](double x, double y) {
    x_min = std::min(x_min, x), x_max = std::max(x_max, x), y_min = std::min(y_min, y), y_max = std::max(y_max, y);
  };
  for (const RooflinePoint& p : r.points) take(p.intensity, p.throughput);
  for (Precision p : drawn_roofs(r))
    if (std::optional<double> ridge = r.peak.ridge(p)) {
      take(*ridge, *r.peak.flops[int(p)]);
      take(*ridge / 10, *r.peak.flops[int(p)] / 10);
    } else if (x_min <= x_max) {  // a compute roof without a memory roof: only its height counts
      take(x_min, *r.peak.flops[int(p)]);
    }
  RooflineAxes a;
  if (x_min > x_max) return a;
  a.x_lo = int(std::floor(std::log10(x_min))), a.x_hi = int(std::ceil(std::log10(x_max)));
  a.y_lo = int(std::floor(std::log10(y_min))), a.y_hi = int(std::ceil(std::log10(y_max)));
  if (a.x_hi - a.x_lo < 2) a.x_lo = a.x_hi - 2;
  if (a.y_hi - a.y_lo < 2) a.y_lo = a.y_hi - 2;
  return a;
}

}  // namespace

std::vector<Precision> drawn_roofs(const Roofline& r) {
  std::vector<Precision> out;
  for (int p = 0; p < kPrecisionCount; ++p)
    if (r.precision_used[p] && r.peak.flops[p]) out.push_back(Precision(p));
  if (out.empty() && r.peak.flops[int(Precision::Fp32)]) out.push_back(Precision::Fp32);
  return out;
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp64: return "FP64";
    case Precision::Fp32: return "FP32";
    case Precision::Fp16: return "FP16";
  }
  return "?";
}

std::optional<Precision> sass_precision(std::string_view metric) {
  if (sass_flops_per_instruction(metric) <= 0) return std::nullopt;
  switch (metric[kSassPrefix.size()]) {
    case 'd': return Precision::Fp64;
    case 'f': return Precision::Fp32;
    case 'h': return Precision::Fp16;
  }
  return std::nullopt;
}

std::optional<double> fma_per_clock_per_sm(int major, int minor, Precision p) {
  for (const FmaRates& r : kFmaTable)
    if (r.major == major && r.minor == minor) {
      double v = p == Precision::Fp64 ? r.fp64 : p == Precision::Fp32 ? r.fp32 : r.fp16;
      return v > 0 ? std::optional<double>(v) : std::nullopt;
    }
  return std::nullopt;
}

std::optional<double> DevicePeak::ridge(Precision p) const {
  if (!flops[int(p)] || !bytes_per_s) return std::nullopt;
  return *flops[int(p)] / *bytes_per_s;
}

std::optional<double> attainable(const DevicePeak& peak, Precision p, double intensity) {
  if (!peak.flops[int(p)] || !peak.bytes_per_s) return std::nullopt;
  return std::min(*peak.flops[int(p)], intensity * *peak.bytes_per_s);
}

DevicePeak device_peak(std::string_view json) {
  DevicePeak p;
  p.device = find_int_arg(json, "id").value_or(-1);
  p.name = quoted_name(json);
  p.sms = positive_int(json, "numSms");
  p.cc_major = find_int_arg(json, "computeMajor");
  p.cc_minor = find_int_arg(json, "computeMinor");
  if (std::optional<double> clock = positive_number(json, "clockRate")) p.clock_hz = clock_to_hz(*clock);
  derive_compute(p, json);
  derive_memory(p, json);
  return p;
}

Roofline roofline(const CuptiCounters& c, const EventTable& t) {
  Roofline r;
  if (const Device* d = kernels_device(c, t)) {
    r.peak = device_peak(d->properties_json);
    r.has_device = true;
  } else {
    r.peak.compute_note = r.peak.memory_note = "the trace has no deviceProperties";
  }
  for (size_t i = 0; i < c.kernels.size(); ++i) {
    const CuptiKernelCounters& k = c.kernels[i];
    // Each kernel left out is counted once, under its first missing quantity. Zero FLOPs or
    // bytes have no place on log axes either.
    bool flops = k.flops && *k.flops > 0, bytes = k.dram_bytes && *k.dram_bytes > 0, time = k.seconds.has_value();
    if (!flops) ++r.without_flops;
    else if (!bytes) ++r.without_bytes;
    else if (!time) ++r.without_time;
    if (!flops || !bytes || !time) continue;
    RooflinePoint p;
    p.kernel = i;
    p.flops = *k.flops, p.bytes = *k.dram_bytes, p.seconds = *k.seconds;
    p.intensity = p.flops / p.bytes;
    p.throughput = p.flops / p.seconds;
    std::array<double, kPrecisionCount> split = flops_by_precision(c, k);
    p.precision = Precision(std::max_element(split.begin(), split.end()) - split.begin());
    for (int q = 0; q < kPrecisionCount; ++q) r.precision_used[q] = r.precision_used[q] || split[q] > 0;
    r.points.push_back(p);
  }
  r.note = left_out_note(r, c.kernels.size());
  group_by_operator(c, r);
  r.axes = axes_for(r);
  return r;
}

std::string si(double value, std::string_view unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  size_t i = 0;
  double v = value;
  while (std::fabs(v) >= 999.5 && i + 1 < std::size(kPrefixes)) v /= 1000, ++i;
  char buf[48];
  int digits = std::fabs(v) >= 99.95 || (i == 0 && v == std::floor(v)) ? 0 : std::fabs(v) >= 9.995 ? 1 : 2;
  std::snprintf(buf, sizeof buf, "%.*f %s", digits, v, kPrefixes[i]);
  return buf + std::string(unit);
}

std::string decade_label(int e, bool prefixed) {
  char buf[32];
  if (!prefixed || e < 3) {
    std::snprintf(buf, sizeof buf, "%g", std::pow(10.0, e));
    return buf;
  }
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int group = std::min(e / 3, 6);
  std::snprintf(buf, sizeof buf, "%g %s", std::pow(10.0, e - group * 3), kPrefixes[group]);
  return buf;
}

int point_at(const std::vector<std::pair<float, float>>& drawn, float x, float y, float max_distance) {
  int best = -1;
  float best_d2 = max_distance * max_distance;
  for (size_t i = 0; i < drawn.size(); ++i) {
    float dx = drawn[i].first - x, dy = drawn[i].second - y, d2 = dx * dx + dy * dy;
    if (d2 <= best_d2) best_d2 = d2, best = int(i);
  }
  return best;
}

std::vector<std::string> roof_derivation(const DevicePeak& p, const std::vector<Precision>& roofs) {
  std::vector<std::string> lines;
  char buf[256];
  for (Precision q : roofs) {
    if (!p.flops[int(q)] || !p.sms || !p.clock_hz) continue;
    std::snprintf(buf, sizeof buf, "%s roof: %lld SMs × %.0f FMA/clock × 2 FLOP × %s (clockRate) = %s", precision_name(q),
                  (long long)*p.sms, *p.flop_per_clock[int(q)] / double(*p.sms) / 2, si(*p.clock_hz, "Hz").c_str(),
                  si(*p.flops[int(q)], "FLOP/s").c_str());
    lines.push_back(buf);
    if (std::optional<double> ridge = p.ridge(q)) lines.back() += ", ridge " + si(*ridge, "FLOP/B");
  }
  if (!p.compute_note.empty()) lines.push_back("no compute roof: " + p.compute_note);
  if (p.bytes_per_s) lines.push_back("DRAM roof: " + si(*p.bytes_per_s, "B/s") + " (" + p.memory_source + ")");
  else lines.push_back("no memory roof: " + p.memory_note);
  return lines;
}

}  // namespace sl::analysis
