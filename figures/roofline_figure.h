// `render --view roofline`: the CUPTI counters' roofline for papers. Log-log axes (arithmetic
// intensity in FLOP per DRAM byte, achieved FLOP/s) with decade ticks, the device's DRAM and
// compute roofs (one per precision the kernels use) labelled with their values, one point per
// kernel coloured by its operator, a legend and the roofs' derivation underneath. Numbers come
// from core/analysis/roofline.h, the same ones the GUI's Counters view shows.
#pragma once

#include <string>

#include "core/analysis/roofline.h"
#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

struct RooflineFigureStats {
  size_t points = 0, roofs = 0;  // roofs: compute lines drawn, plus the DRAM slope when known
};

// False with `error` when the trace has no counters, or no kernel can be placed (the reason:
// missing DRAM bytes or kernel times).
bool roofline_figure(const analysis::CuptiCounters& counters, const analysis::Roofline& roofline, const Style& style,
                     const std::string& title, Scene& scene, RooflineFigureStats& stats, std::string& error);

}  // namespace sl::fig
