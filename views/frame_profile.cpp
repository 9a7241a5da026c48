#include "views/frame_profile.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>

namespace sl::views::frame_profile {
namespace {
double g_sections[kSections];
}

bool enabled() {
  static const bool on = std::getenv("SIGHTLINE_FRAME_PROFILE") != nullptr;
  return on;
}
double thread_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}
double* sections() { return g_sections; }
void reset() { std::fill(g_sections, g_sections + kSections, 0.0); }

}  // namespace sl::views::frame_profile
