// Outlier ranks: a rank whose mean iteration time, or whose wait in collectives, lies more than
// k·MAD above the median of the job's ranks. The `outliers` table of `report DIR` and of a fleet,
// and the ranks the job overview keeps on rows of their own when the others fold into bands.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/collectives.h"
#include "core/analysis/report_tables.h"

namespace sl::analysis {

// k of k·MAD. Three MADs is the usual robust cut (about 2σ for normal data, since σ ≈ 1.48·MAD):
// wide enough that the jitter of equal ranks stays in, narrow enough that a 20 % slower rank in
// an otherwise tight job stands out.
constexpr double kOutlierMads = 3;

struct OutlierRank {
  int64_t rank = 0;
  std::string metric;            // "iteration_time" or "wait"
  double value = 0, median = 0, mad = 0;  // ns
  std::optional<double> mads;    // (value − median) / MAD, to 2 decimals; none when the MAD is 0
};

// Per metric (iteration time, then wait), by rank. Only ranks above the median: a fast rank is
// not what a user hunts. A MAD of 0 flags any rank above a group that is otherwise equal; fewer
// than three ranks have no typical rank, so none is an outlier.
std::vector<OutlierRank> outlier_ranks(const std::vector<StragglerRow>& stragglers, double k = kOutlierMads);

Table outliers_table(const std::vector<OutlierRank>& outliers);

// Each outlier rank once, the most MADs beyond the median first (a MAD of 0 counts as 0), ties
// by rank: the order the overview gives them rows in when only some fit.
std::vector<int64_t> outliers_worst_first(const std::vector<OutlierRank>& outliers);

}  // namespace sl::analysis
