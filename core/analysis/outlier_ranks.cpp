#include "core/analysis/common.h"
#include "core/analysis/outlier_ranks.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <utility>

namespace sl::analysis {

namespace {

void add_outliers(std::vector<OutlierRank>& out, const char* metric, std::vector<std::pair<int64_t, double>> values,
                  double k) {
  if (values.size() < 3) return;
  std::sort(values.begin(), values.end());
  std::vector<double> v, dev;
  for (auto& [rank, x] : values) v.push_back(x);
  double m = median(v);
  for (double x : v) dev.push_back(std::fabs(x - m));
  double mad = median(dev);
  for (auto& [rank, x] : values)
    if (x - m > k * mad && x > m)
      out.push_back({rank, metric, x, m, mad,
                     mad > 0 ? std::optional<double>(std::round((x - m) / mad * 100) / 100) : std::nullopt});
}

}  // namespace

std::vector<OutlierRank> outlier_ranks(const std::vector<StragglerRow>& stragglers, double k) {
  std::vector<std::pair<int64_t, double>> iteration, wait;
  for (const StragglerRow& s : stragglers) {
    if (s.iteration_mean) iteration.push_back({s.rank, *s.iteration_mean});
    if (s.collectives) wait.push_back({s.rank, double(s.wait)});
  }
  std::vector<OutlierRank> out;
  add_outliers(out, "iteration_time", std::move(iteration), k);
  add_outliers(out, "wait", std::move(wait), k);
  return out;
}

Table outliers_table(const std::vector<OutlierRank>& outliers) {
  Table t("outliers", {"rank", "metric", "value_us", "median_us", "mad_us", "mads"});
  for (const OutlierRank& o : outliers)
    t.rows.push_back({Cell::integer(o.rank), Cell::str(o.metric), Cell::ns(o.value), Cell::ns(o.median), Cell::ns(o.mad),
                      o.mads ? Cell::num(*o.mads) : Cell::null()});
  return t;
}

std::vector<int64_t> outliers_worst_first(const std::vector<OutlierRank>& outliers) {
  std::vector<std::pair<double, int64_t>> by_mads;
  for (const OutlierRank& o : outliers) by_mads.push_back({-o.mads.value_or(0), o.rank});
  std::sort(by_mads.begin(), by_mads.end());
  std::vector<int64_t> out;
  std::unordered_set<int64_t> seen;
  for (const auto& [m, r] : by_mads)
    if (seen.insert(r).second) out.push_back(r);
  return out;
}

}  // namespace sl::analysis
