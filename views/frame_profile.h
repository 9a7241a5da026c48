// A per-frame breakdown of where a frame's time goes (issue 38's frame target): named sections
// timed in this thread's CPU time (as the bench times frames) and summed per frame; `sightline bench frame` prints the slowest
// frames' sections when SIGHTLINE_FRAME_PROFILE is set (off by default: a section then costs one
// branch on a cached flag).
#pragma once

#include <cstddef>

namespace sl::views::frame_profile {

enum Section : int { Layout, Arrivals, BandColumns, Runs, DrawRuns, Texels, Upload, Labels, Selected, Table, Heatmap, Render, kSections };
inline constexpr const char* kSectionNames[kSections] = {"layout", "arrivals", "band cols", "runs", "draw runs",
                                                        "texels", "upload", "labels", "selected", "table", "heatmap", "render"};

bool enabled();              // SIGHTLINE_FRAME_PROFILE set (read once)
double thread_ms();          // this thread's CPU time
double* sections();          // this frame's ms per section
void reset();                // before a frame

// Adds its lifetime to `section` when profiling is on.
class Scope {
public:
  explicit Scope(Section s) : s_(enabled() ? int(s) : -1) {
    if (s_ >= 0) t0_ = thread_ms();
  }
  ~Scope() {
    if (s_ >= 0) sections()[s_] += thread_ms() - t0_;
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

private:
  int s_;
  double t0_ = 0;
};

}  // namespace sl::views::frame_profile
