// The rank overview's rows (issue 38, "The fleet in the GUI"): which ranks each display row shows
// when ranks are more than the rows that fit (below ~3 px a row). GUI-free and tested headless;
// the job tab feeds the result to the band pyramid (rank_bands.h) as each band's members.
//
// Every rank gets its own row when they all fit. Otherwise the outlier ranks (the fleet's
// `outliers` table: iteration time or wait beyond k·MAD) keep their own rows, and the ranks
// between them aggregate into bands of consecutive ranks that never split a node when nodes are
// known: one band per node when that fits, a node cut into rank ranges when one node alone is more
// than a band's share, several whole nodes in one band when even one band per node is too many.
// The row budget always holds: outliers that do not fit (as many rows as there are) are dropped
// from the end of the list (the caller orders it worst first) and aggregate like the others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sl::present {

struct RankRow {
  size_t first = 0, last = 0;  // [first, last): positions in the display order
  bool outlier = false;        // a single rank kept on its own row because it is an outlier
  int64_t node_first = -1, node_last = -1;  // the nodes of its ranks when known (-1: unknown)
  size_t size() const { return last - first; }
};

// `ranks`: rank numbers in display order. `max_rows` ≥ 1. `outliers`: worst first (duplicates and
// ranks not in `ranks` ignored). `node_of_rank`: each rank's node when known (empty: none known).
std::vector<RankRow> partition_rank_rows(const std::vector<int64_t>& ranks, size_t max_rows, const std::vector<int64_t>& outliers,
                                         const std::map<int64_t, int64_t>& node_of_rank);

// A row's label: "rank 5", "node 3 · ranks 24–31", "nodes 3–4 · ranks 24–39" or "ranks 24–31".
std::string rank_row_label(const RankRow& row, const std::vector<int64_t>& ranks);

}  // namespace sl::present
