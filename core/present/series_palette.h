// Colours for a handful of named series in one chart (the roofline's operators): Okabe–Ito,
// colour-blind safe, in an order where neighbours differ most; the last series may be "the rest"
// in grey. Shared by the GUI and the figures so a point has the same colour in both.
#pragma once

#include <cstddef>

#include "core/present/palette.h"

namespace sl::present {

constexpr size_t kSeriesColors = 7;  // distinct colours before they repeat
Rgb series_rgb(size_t index, bool dark = false);  // index modulo kSeriesColors; black turns white on dark
Rgb rest_rgb();                       // the "other" series

}  // namespace sl::present
