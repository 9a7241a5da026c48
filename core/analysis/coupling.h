// §5 CPU–GPU coupling (SODA / SKIP): TKLQT, AKD, latency, GPU busy, utilisation, exposed host
// time, HDBI and the verdict, per iteration and overall. The verdict (Sightline mode) reads the
// idle ledger (§2b), so it never contradicts the idle split: device-bound, host-bound naming the
// host cause, waiting (on other streams or peers), or mixed. (HTA) mode, which has no ledger,
// keeps SODA's HDBI thresholds: host / balanced / device.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/analysis/common.h"
#include "core/analysis/idle_ledger.h"

namespace sl::analysis {

// Unmeasured: no latency window to weigh the idle against (no top-level aten:: op, as in an
// Nsight report): no verdict rather than a guess. Warmup: graph capture, compilation or warm-up
// holds most of the window's idle: not steady state, so no verdict either.
enum class Boundness : uint8_t { Host, Balanced, Device, Waiting, Mixed, Unmeasured, Warmup };
std::string_view boundness_name(Boundness b);  // host, balanced, device, waiting, mixed, unmeasured, warmup

struct CouplingRow {
  int64_t rank = 0;
  std::optional<int64_t> iteration;  // null = whole trace
  uint64_t kernels = 0;
  TimeNs tklqt = 0;        // Σ launch-to-start over launched kernels (SKIP; queue time included)
  uint64_t launched = 0;   // the kernels TKLQT sums over (text shows TKLQT per kernel, §5)
  // Queue-free host orchestration (the HDBI's host term): per launch call T_sys, plus the part of
  // the launch-to-start the device waited for (its stream was idle when the call started).
  TimeNs host_orchestration = 0;
  double akd = 0;          // mean kernel duration, ns
  TimeNs latency = 0;      // end of last kernel - start of first top-level aten:: op
  TimeNs gpu_busy = 0;     // merged kernels + memcpy + memset
  double utilization = 0;  // busy / latency
  TimeNs exposed_host = 0; // latency - busy
  double hdbi = 0;          // kernel time / (kernel time + host orchestration)
  TimeNs start = 0, end = 0;  // the latency's window: first top-level aten:: op .. last kernel end
  Boundness bound = Boundness::Balanced;
  // Host-bound: the largest host cause of the ledger in the window, and its device-wide idle.
  std::optional<IdleCause> bound_cause;
  TimeNs bound_cause_idle = 0;
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

// §5's verdict from the ledger (Sightline mode), over each row's window: device-bound when the
// GPU is busy >= 80 % of it; else warm-up when capture/warm-up holds at least half of the
// device-wide idle in it; else host-bound when the host causes (is_host_cause) hold at least
// half, naming the largest; else waiting when cross-stream and collective waits do; else mixed.
void ledger_verdicts(Coupling& coupling, const IdleLedger& ledger);
// The verdict for people: "device-bound", "host-bound: host_compute 3.03 ms", "waiting",
// "mixed" (HTA mode: "host-bound", "balanced", "device-bound").
std::string verdict_text(const CouplingRow& row);

// T_sys: the fixed floor, or (auto) the 5th percentile of launch-to-start over launched kernels.
TimeNs null_launch_floor(const EventTable& table, const CouplingOptions& o);

// Iteration of a row (CPU: the ProfilerStep containing its start; GPU: its launch's), or -1.
std::vector<int64_t> iteration_of_rows(const EventTable& table);

}  // namespace sl::analysis
