#include "core/store/cores.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace sl {

unsigned usable_cores_given(const char* forced) {
  if (forced) {
    char* end = nullptr;
    long n = std::strtol(forced, &end, 10);
    if (end != forced && *end == '\0' && n > 0) return unsigned(std::min(n, 1024L));
  }
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = std::min(cores, unsigned(std::max(1, CPU_COUNT(&set))));
  return cores;
}

unsigned usable_cores() {
  static const unsigned cores = usable_cores_given(std::getenv("SIGHTLINE_THREADS"));
  return cores;
}

}  // namespace sl
