// The timeline's arrows: the selection's launch, activity and flow links (found once per
// selection) and the path overlay's links, both bounded by pixels.
#include "views/timeline_view.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <unordered_set>

namespace sl::views {
namespace {

// The arrows a frame drew, by the 2-px cells of their ends: zoomed out, hundreds of arrows land
// on one spot, and drawing one of them shows them all.
class ArrowCells {
public:
  // True for the first arrow with ends in these cells.
  bool first(ImVec2 a, ImVec2 b) { return drawn_.insert(cell(a.x) << 48 | cell(a.y) << 32 | cell(b.x) << 16 | cell(b.y)).second; }

private:
  static uint64_t cell(float v) { return uint64_t(uint16_t(int(v) / 2)); }
  std::unordered_set<uint64_t> drawn_;
};
}  // namespace

// What is found once per selection (SliceLinks, SliceChildren), brought up to date.
template <class Facts>
const Facts& TimelineView::of_selection(Facts& facts) {
  if (selected_.valid() && selected_.source < sources_.size())
    facts.update(sources_[selected_.source].store(), selected_.ref, sources_version_);
  else
    facts = {};
  return facts;
}
const present::SliceLinks& TimelineView::selection_links() { return of_selection(selection_links_); }
const present::SliceChildren& TimelineView::selection_children() { return of_selection(selection_children_); }

// Arrows for the selection only: its launch → GPU activities, or the launch of a GPU activity,
// plus trace flows into and out of it. Flows stay within the selection's source. An end off
// screen is drawn to the edge. Bounded by pixels: a CUDA graph's launch has an arrow per kernel
// (thousands), so past the budget only the arrows whose far end is in view are drawn, with the
// nearest one out of view on each side, a sample of them when even those are too many, and an
// arrow whose ends fall on the 2-px cells of one already drawn is skipped.
void TimelineView::draw_flows(ImDrawList* dl, float x0, float x1) {
  const present::SliceLinks& links = selection_links();
  if (links.all().empty()) return;
  const Source& src = sources_[selected_.source];
  const TraceStore& store = src.store();
  constexpr size_t kBudget = 256, kLooked = 4 * kBudget;
  std::span<const present::SliceLinks::Link> shown = links.all();
  if (shown.size() > kBudget) {
    const double shift = double(src.def.shift);
    auto [begin, end] = links.around(TimeNs(std::floor(t0_ - shift)), TimeNs(std::ceil(t1_ - shift)));
    shown = shown.subspan(begin, end - begin);
  }
  ImU32 ink = IM_COL32(213, 94, 0, 230);
  ArrowCells cells;
  const size_t looked = std::min(shown.size(), kLooked);
  for (size_t k = 0, budget = kBudget; k < looked && budget > 0; ++k) {
    // Evenly through the range when it is longer than kLooked, its first and last included.
    const auto& l = shown[looked < shown.size() ? k * (shown.size() - 1) / (looked - 1) : k];
    float ya = row_y_of(selected_.source, l.from), yb = row_y_of(selected_.source, l.to);
    if (std::isnan(ya) || std::isnan(yb)) continue;
    ImVec2 a(std::clamp(x_of(src.view(store.start(l.from))), x0, x1), ya + lane_height_ * 0.5f);
    ImVec2 b(std::clamp(x_of(src.view(store.start(l.to))), x0, x1), yb + lane_height_ * 0.5f);
    if (!cells.first(a, b)) continue;
    --budget;
    ++stats_.flow_links_drawn;
    float bend = std::max(20.f, std::fabs(b.x - a.x) * 0.3f);
    dl->AddBezierCubic(a, ImVec2(a.x + bend, a.y), ImVec2(b.x - bend, b.y), b, ink, 1.8f);
    dl->AddTriangleFilled(ImVec2(b.x, b.y), ImVec2(b.x - 7, b.y - 4), ImVec2(b.x - 7, b.y + 4), ink);
  }
}

// The path's links between slices whose span meets the view, as arrows in their kind's colour;
// an end off screen is drawn to the edge. Bounded by pixels: links under a pixel are skipped, and
// so is a link whose ends fall on the same 2-px cells as one already drawn (zoomed out, hundreds
// of launches stack on one spot), then a budget.
void TimelineView::draw_path_links(ImDrawList* dl, uint32_t source, float x0, float x1) {
  const Source& src = sources_[source];
  const double shift = double(src.def.shift), lo = t0_ - shift, hi = t1_ - shift;
  auto min_ts = [](const PathOverlay::Link& l) { return std::min(l.from_ts, l.to_ts); };
  TimeNs from = TimeNs(lo) - src.path_max_span;
  auto it = std::partition_point(src.path.links.begin(), src.path.links.end(), [&](const auto& l) { return min_ts(l) < from; });
  ArrowCells cells;
  int budget = 600;
  for (; it != src.path.links.end() && double(min_ts(*it)) <= hi && budget > 0; ++it) {
    const PathOverlay::Link& l = *it;
    if (double(std::max(l.from_ts, l.to_ts)) < lo) continue;
    float ya = row_y_of(source, l.from), yb = row_y_of(source, l.to);
    if (std::isnan(ya) || std::isnan(yb)) continue;
    ImVec2 a(std::clamp(x_of(src.view(l.from_ts)), x0, x1), ya + lane_height_ * 0.5f);
    ImVec2 b(std::clamp(x_of(src.view(l.to_ts)), x0, x1), yb + lane_height_ * 0.5f);
    if (std::fabs(b.x - a.x) < 1 && std::fabs(b.y - a.y) < 1) continue;
    if (!cells.first(a, b)) continue;
    --budget;
    ++stats_.path_links_drawn;
    if (a.y == b.y || std::fabs(b.x - a.x) < 4) {
      dl->AddLine(a, b, l.color, 2.f);
    } else {
      float bend = std::clamp(std::fabs(b.x - a.x) * 0.3f, 6.f, 40.f);
      dl->AddBezierCubic(a, ImVec2(a.x + bend, a.y), ImVec2(b.x - bend, b.y), b, l.color, 2.f, 12);
    }
    float dir = b.x >= a.x ? 1.f : -1.f;
    dl->AddTriangleFilled(b, ImVec2(b.x - 7 * dir, b.y - 4), ImVec2(b.x - 7 * dir, b.y + 4), l.color);
  }
}

}  // namespace sl::views
