// Text the job tab's files share: durations as the tab writes them, and a rank's cut-off
// warning (its words and their colour). Internal to views/job_view*.cpp.
#pragma once

#include <imgui.h>

#include <string>

#include "core/job/job.h"
#include "core/present/time_axis.h"
#include "core/store/import_issues.h"

namespace sl::views {

extern const ImVec4 kCutText;  // defined in job_view_overview.cpp, by the cut-off marker's colour

// The single-trace banner's words for a rank whose file was cut off; "" when it was not.
inline std::string cut_off_text(const JobRank& r) {
  return r.ok() && r.store->issues.truncation ? describe(*r.store->issues.truncation) : std::string();
}

inline std::string ms(TimeNs ns) { return present::format_duration(double(ns)); }

}  // namespace sl::views
