// §5 CPU–GPU coupling (SODA / SKIP): TKLQT, AKD, latency, GPU busy, utilisation, exposed host
// time, HDBI and the host-bound / balanced / device-bound verdict, per iteration and overall.
#pragma once

#include <optional>
#include <string_view>

#include "core/analysis/common.h"

namespace sl::analysis {

enum class Boundness : uint8_t { Host, Balanced, Device };
std::string_view boundness_name(Boundness b);  // host, balanced, device

struct CouplingRow {
  int64_t rank = 0;
  std::optional<int64_t> iteration;  // null = whole trace
  uint64_t kernels = 0;
  TimeNs tklqt = 0;        // Σ launch-to-start over launched kernels (SKIP; queue time included)
  // Queue-free host orchestration (the HDBI's host term): per launch call T_sys, plus the part of
  // the launch-to-start the device waited for (its stream was idle when the call started).
  TimeNs host_orchestration = 0;
  double akd = 0;          // mean kernel duration, ns
  TimeNs latency = 0;      // end of last kernel - start of first top-level aten:: op
  TimeNs gpu_busy = 0;     // merged kernels + memcpy + memset
  double utilization = 0;  // busy / latency
  TimeNs exposed_host = 0; // latency - busy
  double hdbi = 0;          // kernel time / (kernel time + host orchestration)
  Boundness bound = Boundness::Balanced;
};

struct CouplingOptions {
  std::optional<TimeNs> t_sys = 4'500;  // null = auto: 5th percentile of launch-to-start
  double host_bound_below = 0.35, device_bound_above = 0.65;
};

struct Coupling {
  std::vector<CouplingRow> rows;  // one per iteration, then the whole trace
  TimeNs t_sys = 0;
};

Coupling coupling(const EventTable& table, const CouplingOptions& o = {});

// T_sys: the fixed floor, or (auto) the 5th percentile of launch-to-start over launched kernels.
TimeNs null_launch_floor(const EventTable& table, const CouplingOptions& o);

// Iteration of a row (CPU: the ProfilerStep containing its start; GPU: its launch's), or -1.
std::vector<int64_t> iteration_of_rows(const EventTable& table);

}  // namespace sl::analysis
