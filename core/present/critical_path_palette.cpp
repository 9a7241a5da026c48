#include "core/present/critical_path_palette.h"

#include <algorithm>

namespace sl::present {

// Index = BoundBy: Dependency, CpuBound, GpuCompute, GpuCommunication, KernelLaunchOverhead,
// KernelKernelOverhead.
Rgb bound_by_rgb(int bound_by) {
  static const Rgb colors[] = {
      {110, 110, 110},  // dependency (zero time: a wait)
      {0, 114, 178},    // CPU
      {0, 158, 115},    // GPU compute
      {213, 94, 0},     // GPU communication
      {204, 121, 167},  // launch overhead
      {153, 153, 51},   // kernel-kernel overhead (olive: apart from every idle-cause colour)
  };
  return colors[std::clamp(bound_by, 0, 5)];
}

const char* bound_by_label(int bound_by) {
  static const char* labels[] = {"dependency", "CPU", "GPU compute", "GPU communication", "launch overhead",
                                 "kernel-kernel overhead"};
  return labels[std::clamp(bound_by, 0, 5)];
}

Rgb critical_path_outline_rgb() { return {200, 0, 90}; }

}  // namespace sl::present
