// `render DIR|RUN.slfleet --view heatmap`: the rank heatmaps of a job or fleet for papers
// (core/present/rank_heatmap): ranks × steps of iteration time, then ranks × collective
// instances of wait (or the panels `kinds` names, e.g. ranks × steps of wait in collectives), each with its rank labels, column labels and colour scale. More ranks (or
// columns) than pixel rows fold into bands showing their worst cell, so the element count is
// bounded by the figure's size.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/analysis/job_overview.h"
#include "core/present/rank_heatmap.h"
#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

struct HeatmapFigureOptions {
  std::string title;
  present::RowOrder order = present::RowOrder::Rank;
  std::map<int64_t, int64_t> node_of_rank;  // a fleet's nodes, for RowOrder::Node
  std::vector<present::HeatmapKind> kinds = {present::HeatmapKind::StepTime, present::HeatmapKind::CollectiveWait};  // the panels, in order
};

struct HeatmapFigureStats {
  size_t ranks = 0, steps = 0, collectives = 0, cells = 0;
  size_t row_bands = 0;  // the most of either heatmap (fewer than ranks when they fold)
};

// False with `error` when no rank loaded.
bool heatmap_figure(const analysis::JobOverview& overview, const Style& style, const HeatmapFigureOptions& options,
                    Scene& scene, HeatmapFigureStats& stats, std::string& error);

}  // namespace sl::fig
