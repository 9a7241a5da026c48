#include "core/present/rank_heatmap.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace sl::present {
namespace {

HeatmapMatrix empty_matrix(HeatmapKind kind, const analysis::JobOverview& ov, const std::map<int64_t, int64_t>& node_of_rank,
                           size_t columns) {
  HeatmapMatrix m;
  m.kind = kind;
  m.columns = columns;
  for (const analysis::RankActivity& r : ov.ranks) {
    m.ranks.push_back(r.rank);
    auto it = node_of_rank.find(r.rank);
    m.nodes.push_back(it == node_of_rank.end() ? -1 : it->second);
  }
  m.cells.assign(m.ranks.size() * columns, kNoCell);
  return m;
}

void set_range(HeatmapMatrix& m) {
  bool any = false;
  for (TimeNs v : m.cells) {
    if (v == kNoCell) continue;
    m.min_value = any ? std::min(m.min_value, v) : v;
    m.max_value = any ? std::max(m.max_value, v) : v;
    any = true;
  }
}

}  // namespace

HeatmapMatrix step_time_heatmap(const analysis::JobOverview& ov, const std::map<int64_t, int64_t>& node_of_rank) {
  size_t steps = 0;
  for (const analysis::RankActivity& r : ov.ranks) steps = std::max(steps, r.summary->iteration_durations.size());
  HeatmapMatrix m = empty_matrix(HeatmapKind::StepTime, ov, node_of_rank, steps);
  for (size_t row = 0; row < ov.ranks.size(); ++row) {
    const std::vector<TimeNs>& d = ov.ranks[row].summary->iteration_durations;
    std::copy(d.begin(), d.end(), m.cells.begin() + std::ptrdiff_t(row * steps));
  }
  set_range(m);
  return m;
}

HeatmapMatrix collective_wait_heatmap(const analysis::JobOverview& ov, const std::map<int64_t, int64_t>& node_of_rank) {
  const auto& instances = ov.collectives.instances;
  HeatmapMatrix m = empty_matrix(HeatmapKind::CollectiveWait, ov, node_of_rank, instances.size());
  std::unordered_map<int64_t, size_t> row_of_rank;
  for (size_t row = 0; row < m.ranks.size(); ++row) row_of_rank.emplace(m.ranks[row], row);
  for (size_t c = 0; c < instances.size(); ++c)
    for (const analysis::CollectiveArrival& a : instances[c].arrivals)
      if (auto it = row_of_rank.find(a.rank); it != row_of_rank.end()) m.cells[it->second * m.columns + c] = a.wait;
  set_range(m);
  return m;
}

HeatmapMatrix step_wait_heatmap(const analysis::JobOverview& ov, const std::map<int64_t, int64_t>& node_of_rank) {
  size_t steps = 0;
  for (const analysis::RankActivity& r : ov.ranks) steps = std::max(steps, r.summary->iteration_starts.size());
  HeatmapMatrix m = empty_matrix(HeatmapKind::StepWaits, ov, node_of_rank, steps);
  std::unordered_map<int64_t, size_t> row_of_rank;
  for (size_t row = 0; row < m.ranks.size(); ++row) {
    row_of_rank.emplace(m.ranks[row], row);
    std::fill_n(m.cells.begin() + std::ptrdiff_t(row * steps), ov.ranks[row].summary->iteration_starts.size(), TimeNs(0));
  }
  for (const analysis::CollectiveInstance& in : ov.collectives.instances)
    for (const analysis::CollectiveArrival& a : in.arrivals) {
      auto it = row_of_rank.find(a.rank);
      if (it == row_of_rank.end()) continue;
      const analysis::RankActivity& r = ov.ranks[it->second];
      const std::vector<TimeNs>& starts = r.summary->iteration_starts;
      const std::vector<TimeNs>& lengths = r.summary->iteration_durations;
      TimeNs t = a.cpu_arrival.value_or(a.arrival) - r.shift;  // job clock back to the rank's store time
      auto after = std::upper_bound(starts.begin(), starts.end(), t);
      if (after == starts.begin()) continue;
      auto k = size_t(after - starts.begin() - 1);
      if (k < lengths.size() && t >= starts[k] + lengths[k]) continue;  // between steps, or after the last
      m.cells[it->second * steps + k] += a.wait;
    }
  set_range(m);
  return m;
}

HeatmapMatrix heatmap_of(HeatmapKind kind, const analysis::JobOverview& ov, const std::map<int64_t, int64_t>& node_of_rank) {
  switch (kind) {
    case HeatmapKind::StepTime: return step_time_heatmap(ov, node_of_rank);
    case HeatmapKind::CollectiveWait: return collective_wait_heatmap(ov, node_of_rank);
    case HeatmapKind::StepWaits: return step_wait_heatmap(ov, node_of_rank);
  }
  return step_time_heatmap(ov, node_of_rank);
}

const char* heatmap_kind_name(HeatmapKind k) {
  switch (k) {
    case HeatmapKind::StepTime: return "steps";
    case HeatmapKind::CollectiveWait: return "waits";
    case HeatmapKind::StepWaits: return "step-waits";
  }
  return "steps";
}

bool heatmap_kind_named(std::string_view name, HeatmapKind& kind) {
  for (HeatmapKind k : {HeatmapKind::StepTime, HeatmapKind::CollectiveWait, HeatmapKind::StepWaits})
    if (name == heatmap_kind_name(k)) return kind = k, true;
  return false;
}

std::string heatmap_column_label(const HeatmapMatrix& m, const analysis::JobOverview& ov, size_t column) {
  if (m.kind != HeatmapKind::CollectiveWait) return "step " + std::to_string(column);
  const analysis::CollectiveInstance& in = ov.collectives.instances.at(column);
  return in.name + " #" + std::to_string(in.instance);
}

const char* row_order_name(RowOrder o) {
  switch (o) {
    case RowOrder::Rank: return "rank";
    case RowOrder::Node: return "node";
    case RowOrder::Slowness: return "slowness";
  }
  return "rank";
}

bool row_order_named(std::string_view name, RowOrder& order) {
  for (RowOrder o : {RowOrder::Rank, RowOrder::Node, RowOrder::Slowness})
    if (name == row_order_name(o)) return order = o, true;
  return false;
}

std::vector<size_t> order_rows(const HeatmapMatrix& m, RowOrder order) {
  std::vector<size_t> rows(m.rows());
  std::iota(rows.begin(), rows.end(), size_t(0));
  // Rows are by rank already (the overview's order); stable sorts keep rank as the tie-break.
  if (order == RowOrder::Node) {
    auto key = [&](size_t r) { return m.nodes[r] < 0 ? INT64_MAX : m.nodes[r]; };
    std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  } else if (order == RowOrder::Slowness) {
    std::vector<TimeNs> total(m.rows(), 0);
    for (size_t r = 0; r < m.rows(); ++r)
      for (size_t c = 0; c < m.columns; ++c)
        if (m.at(r, c) != kNoCell) total[r] += m.at(r, c);
    std::stable_sort(rows.begin(), rows.end(), [&](size_t a, size_t b) { return total[a] > total[b]; });
  }
  return rows;
}

std::vector<Band> fold_bands(size_t count, size_t max_bands) {
  size_t bands = std::min(count, std::max<size_t>(max_bands, 1));
  std::vector<Band> out(bands);
  for (size_t b = 0; b < bands; ++b) out[b] = {b * count / bands, (b + 1) * count / bands};
  return out;
}

HeatmapBands bin_heatmap(const HeatmapMatrix& m, std::vector<size_t> order, size_t max_rows, size_t max_columns) {
  HeatmapBands h;
  h.order = std::move(order);
  h.rows = fold_bands(h.order.size(), max_rows);
  h.columns = fold_bands(m.columns, max_columns);
  size_t n = h.rows.size() * h.columns.size();
  h.cells.assign(n, kNoCell);
  h.source_row.assign(n, 0), h.source_column.assign(n, 0);
  for (size_t br = 0; br < h.rows.size(); ++br)
    for (size_t i = h.rows[br].first; i < h.rows[br].last; ++i) {
      size_t row = h.order[i];
      for (size_t bc = 0; bc < h.columns.size(); ++bc) {
        size_t cell = br * h.columns.size() + bc;
        for (size_t c = h.columns[bc].first; c < h.columns[bc].last; ++c) {
          TimeNs v = m.at(row, c);
          if (v == kNoCell || v <= h.cells[cell]) continue;
          h.cells[cell] = v, h.source_row[cell] = uint32_t(row), h.source_column[cell] = uint32_t(c);
        }
      }
    }
  return h;
}

float heatmap_fraction(const HeatmapMatrix& m, TimeNs value) {
  if (m.max_value <= m.min_value) return 0;
  return std::clamp(float(double(value - m.min_value) / double(m.max_value - m.min_value)), 0.f, 1.f);
}

Rgb heatmap_rgb(float f) {
  // ColorBrewer YlOrRd (sequential, colour-blind safe): pale for short, dark red for long.
  static constexpr Rgb stops[] = {{255, 255, 204}, {254, 217, 118}, {253, 141, 60}, {227, 26, 28}, {128, 0, 38}};
  constexpr size_t last = std::size(stops) - 1;
  float x = std::clamp(f, 0.f, 1.f) * float(last);
  size_t i = std::min(size_t(x), last - 1);
  float t = x - float(i);
  auto mix = [&](uint8_t a, uint8_t b) { return uint8_t(std::lround(float(a) + (float(b) - float(a)) * t)); };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

int heatmap_level(const HeatmapMatrix& m, TimeNs value) {
  return value == kNoCell ? -1 : int(std::lround(heatmap_fraction(m, value) * (kHeatLevels - 1)));
}

Rgb heatmap_level_rgb(int level) {
  return level < 0 ? Rgb{200, 200, 200} : heatmap_rgb(float(level) / float(kHeatLevels - 1));
}

}  // namespace sl::present
