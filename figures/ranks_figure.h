// `render DIR --view ranks`: the rank overview of a job for papers. One row per rank on the job
// clock, drawn per column as GPU busy (bar height) over the dominant idle cause (background
// colour), with the straggler bars (time each rank made the others wait) on the right and the
// worst-skew collective marked on every rank (the last rank in red).
#pragma once

#include <string>

#include "core/analysis/job_overview.h"
#include "core/job/job.h"
#include "figures/scene.h"
#include "figures/style.h"

namespace sl::fig {

struct RanksFigureOptions {
  TimeNs start = 0, end = 0;  // job clock; end 0 = the whole job
  std::string title;
};

struct RanksFigureStats {
  size_t ranks = 0, failed = 0, columns = 0, runs = 0;
};

// The start of a job's figure (ranks, heatmap): the page and "TITLE · WHAT" as its title line;
// returns the title's baseline.
float begin_job_figure(const Style& style, const std::string& title, const std::string& what, Scene& scene);

// False with `error` when no rank loaded or the range holds no time.
bool ranks_figure(const Job& job, const analysis::JobOverview& overview, const Style& style, const RanksFigureOptions& options,
                  Scene& scene, RanksFigureStats& stats, std::string& error);

}  // namespace sl::fig
