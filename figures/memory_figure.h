// `render TRACE|SNAPSHOT --view memory`: where the GPU's memory went (analyses.md §11). Per device
// (up to four, largest peak first): allocated as a filled area and reserved as a line over the
// trace, the peak marked with its time and bytes; under it, the allocating contexts live at the
// peak as bars, largest first. Numbers come from core/memory/, the same ones `report` prints.
#pragma once

#include <string>

#include "core/memory/memory_analysis.h"
#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

struct MemoryFigureStats {
  size_t devices = 0, columns = 0, contexts = 0;
};

// False with `error` when the store has no memory events.
bool memory_figure(const TraceStore& store, const memory::MemoryAnalysis& analysis, const Style& style, const std::string& title,
                   Scene& scene, MemoryFigureStats& stats, std::string& error);

}  // namespace sl::fig
