// What the idle-cause rules (§2b) take in and give out besides the gaps: their options and a host
// window's events. Apart from idle_time.h so the host index (idle_host.h) and idle_time share them
// without including each other.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/common.h"

namespace sl::analysis {

// A CPU event of a host-side window, by its self time inside the window.
struct HostEvent {
  StringId name = 0;
  TimeNs self = 0;
};

struct IdleCauseOptions {
  TimeNs launch_latency = 30'000;
  std::vector<std::string> data_loader_patterns = {"enumerate(DataLoader)", "DataLoader",
                                                   "_MultiProcessingDataLoaderIter",
                                                   "_SingleProcessDataLoaderIter"};
  // Only the gaps and their causes: no per-stream rows, no top events, no device-wide pieces (a
  // fleet map's rank summary keeps nothing else). The gaps are those of the full analysis.
  bool gaps_only = false;
};

}  // namespace sl::analysis
