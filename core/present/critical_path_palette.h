// Colours and names of the critical path's edge kinds (sl::analysis::BoundBy), shared by the
// GUI's timeline overlay and view and by `render --view critical-path`. No ImGui here.
#pragma once

#include "core/present/palette.h"

namespace sl::present {

Rgb bound_by_rgb(int bound_by);          // Okabe–Ito, readable on white and on the dark theme
const char* bound_by_label(int bound_by);  // "CPU", "GPU compute", ... for legends and tables
Rgb critical_path_outline_rgb();         // the outline of path slices (apart from the selection's black)

}  // namespace sl::present
