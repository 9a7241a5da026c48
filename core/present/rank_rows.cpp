#include "core/present/rank_rows.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace sl::present {
namespace {

// Runs of ranks between outliers, each cut at node changes into atoms (a whole node's ranks, or
// the part of one an outlier leaves).
struct Atom {
  size_t first, last;
  int64_t node;
};

std::vector<std::vector<Atom>> runs_between(const std::vector<int64_t>& ranks, const std::vector<char>& is_outlier,
                                            const std::vector<int64_t>& node) {
  std::vector<std::vector<Atom>> runs;
  bool open = false;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (is_outlier[i]) {
      open = false;
      continue;
    }
    if (!open) runs.emplace_back(), open = true;
    std::vector<Atom>& run = runs.back();
    if (!run.empty() && run.back().node == node[i] && run.back().last == i) ++run.back().last;
    else run.push_back({i, i + 1, node[i]});
  }
  return runs;
}

// The bands of one run with at most `cap` ranks each: an atom larger than `cap` cut into even
// ranges of its own; with `merge`, smaller whole atoms (whole nodes) packed greedily into one band
// while they fit, else a band each. Appends to `out` when given; returns the count.
size_t pack(const std::vector<Atom>& run, size_t cap, bool merge, std::vector<RankRow>* out) {
  size_t rows = 0;
  for (size_t a = 0; a < run.size();) {
    size_t len = run[a].last - run[a].first;
    if (len > cap) {
      size_t k = (len + cap - 1) / cap;
      for (size_t j = 0; j < k; ++j)
        if (out) out->push_back({run[a].first + len * j / k, run[a].first + len * (j + 1) / k, false, run[a].node, run[a].node});
      rows += k, ++a;
      continue;
    }
    size_t b = a + 1, total = len;
    while (merge && b < run.size() && total + (run[b].last - run[b].first) <= cap) total += run[b].last - run[b].first, ++b;
    if (out) out->push_back({run[a].first, run[b - 1].last, false, run[a].node, run[b - 1].node});
    ++rows, a = b;
  }
  return rows;
}

size_t count_rows(const std::vector<std::vector<Atom>>& runs, size_t outliers, size_t cap, bool merge = true) {
  size_t rows = outliers;
  for (const auto& run : runs) rows += pack(run, cap, merge, nullptr);
  return rows;
}

}  // namespace

std::vector<RankRow> partition_rank_rows(const std::vector<int64_t>& ranks, size_t max_rows, const std::vector<int64_t>& outliers,
                                         const std::map<int64_t, int64_t>& node_of_rank) {
  size_t n = ranks.size();
  max_rows = std::max<size_t>(max_rows, 1);
  std::vector<int64_t> node(n, -1);
  for (size_t i = 0; i < n; ++i)
    if (auto it = node_of_rank.find(ranks[i]); it != node_of_rank.end()) node[i] = it->second;
  std::vector<RankRow> rows;
  if (n <= max_rows) {
    for (size_t i = 0; i < n; ++i) rows.push_back({i, i + 1, false, node[i], node[i]});
    return rows;
  }
  std::unordered_map<int64_t, size_t> position;
  for (size_t i = 0; i < n; ++i) position.emplace(ranks[i], i);
  std::vector<size_t> wanted;  // the outliers' positions, worst first
  std::unordered_set<size_t> seen;
  for (int64_t r : outliers)
    if (auto it = position.find(r); it != position.end() && seen.insert(it->second).second) wanted.push_back(it->second);
  // Keep the longest prefix of outliers whose rows, with everything else in as few bands as the
  // nodes allow (cap n), fit the budget: more outliers never need fewer rows.
  auto marks = [&](size_t kept) {
    std::vector<char> is(n, 0);
    for (size_t k = 0; k < kept; ++k) is[wanted[k]] = 1;
    return is;
  };
  size_t lo = 0, hi = wanted.size();
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (count_rows(runs_between(ranks, marks(mid), node), mid, n) <= max_rows) lo = mid;
    else hi = mid - 1;
  }
  std::vector<char> is_outlier = marks(lo);
  std::vector<std::vector<Atom>> runs = runs_between(ranks, is_outlier, node);
  // Bands never hold two nodes when one band per node (or per part of a node an outlier leaves)
  // fits. The band cap: the even share of the rows left, raised to a typical (median) node so that
  // uniform nodes get a band each, unless a node is more than 4 shares (one huge host: ranges
  // within it); then the smallest cap from there that fits.
  size_t rest = n - lo, budget = max_rows - lo;
  size_t share = std::max<size_t>(1, (rest + budget - 1) / std::max<size_t>(budget, 1));
  bool merge = count_rows(runs, lo, n, false) > max_rows;
  size_t cap = share;
  std::vector<size_t> node_sizes;
  for (const auto& run : runs)
    for (const Atom& a : run)
      if (a.node >= 0) node_sizes.push_back(a.last - a.first);
  if (!merge && !node_sizes.empty()) {
    std::nth_element(node_sizes.begin(), node_sizes.begin() + ptrdiff_t(node_sizes.size() / 2), node_sizes.end());
    if (size_t typical = node_sizes[node_sizes.size() / 2]; typical <= 4 * share) cap = std::max(cap, typical);
  }
  size_t top = std::max(cap, n);
  while (cap < top) {  // the smallest cap in [cap, n] that fits (the count never grows with the cap)
    size_t mid = cap + (top - cap) / 2;
    if (count_rows(runs, lo, mid, merge) <= max_rows) top = mid;
    else cap = mid + 1;
  }
  size_t r = 0;
  for (size_t i = 0; i < n;) {
    if (is_outlier[i]) {
      rows.push_back({i, i + 1, true, node[i], node[i]});
      ++i;
      continue;
    }
    pack(runs[r], cap, merge, &rows);
    i = runs[r++].back().last;
  }
  return rows;
}

std::string rank_row_label(const RankRow& row, const std::vector<int64_t>& ranks) {
  if (row.size() == 1) return "rank " + std::to_string(ranks[row.first]);
  std::string range = "ranks " + std::to_string(ranks[row.first]) + "\xE2\x80\x93" + std::to_string(ranks[row.last - 1]);
  if (row.node_first < 0 || row.node_last < 0) return range;
  std::string nodes = row.node_first == row.node_last
                          ? "node " + std::to_string(row.node_first)
                          : "nodes " + std::to_string(row.node_first) + "\xE2\x80\x93" + std::to_string(row.node_last);
  return nodes + " \xC2\xB7 " + range;
}

}  // namespace sl::present
