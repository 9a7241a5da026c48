// A job tab's Heatmap view: ranks × steps of iteration time, ranks × collective instances of
// wait, or ranks × steps of wait in collectives (core/present/rank_heatmap, as `render --view heatmap` draws them), rows by rank, node or
// slowness, folded into bands of at most one pixel row (and column) each. A click on a cell
// focuses that rank's row on the timeline and frames that step (a fleet rank's store loads
// first) or selects that collective instance on every rank.
#include "views/job_view.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/present/time_axis.h"
#include "core/text/json_writer.h"

namespace sl::views {

void JobView::build_heatmaps() {
  for (int k = 0; k < 3; ++k) heat_matrices_[k] = present::heatmap_of(present::HeatmapKind(k), overview_, node_of_rank_);
  heat_bands_ = {};
  heat_bands_key_ = {};
}

const present::HeatmapMatrix& JobView::shown_heatmap() const { return heat_matrices_[int(heat_kind_)]; }

void JobView::rebin_heatmap(size_t max_rows, size_t max_columns) {
  HeatBandsKey key{heat_kind_, heat_order_, max_rows, max_columns, overview_version_};
  if (key == heat_bands_key_ && !heat_bands_.order.empty()) return;
  const present::HeatmapMatrix& m = shown_heatmap();
  heat_bands_ = present::bin_heatmap(m, present::order_rows(m, heat_order_), max_rows, max_columns);
  heat_bands_key_ = key;
  // Neighbouring cells of one colour step draw as one rectangle: a frame draws runs, not cells.
  auto level = [&](TimeNs v) { return present::heatmap_level(m, v); };
  heat_runs_.clear();
  const present::HeatmapBands& h = heat_bands_;
  for (size_t br = 0; br < h.rows.size(); ++br)
    for (size_t bc = 0; bc < h.columns.size();) {
      int l = level(h.at(br, bc));
      size_t end = bc + 1;
      while (end < h.columns.size() && level(h.at(br, end)) == l) ++end;
      present::Rgb c = present::heatmap_level_rgb(l);
      heat_runs_.push_back({uint32_t(br), uint32_t(bc), uint32_t(end), IM_COL32(c.r, c.g, c.b, 255)});
      bc = end;
    }
}

bool JobView::open_heatmap_cell(int64_t rank, size_t column) {
  const present::HeatmapMatrix& m = shown_heatmap();
  if (!job_->find(rank) || column >= m.columns) return false;
  heat_clicked_ = {rank, int64_t(column)};
  if (heat_kind_ == present::HeatmapKind::CollectiveWait) {
    select_instance(int(column));
    focus_rank(rank);
    return true;
  }
  heat_pending_step_ = heat_clicked_;  // framed once the rank's store is there (a fleet rank loads)
  focus_rank(rank);
  frame_pending_step();
  return true;
}

// The pending clicked step, framed on the job clock as soon as its rank's store is loaded.
void JobView::frame_pending_step() {
  if (heat_pending_step_.rank < 0) return;
  const JobRank* r = job_->find(heat_pending_step_.rank);
  int k = ov_index(heat_pending_step_.rank);
  if (!r || k < 0) return void(heat_pending_step_ = {});
  if (!r->ok()) return;  // still loading
  const auto& its = r->store->iterations;
  auto step = size_t(heat_pending_step_.column);
  if (step < its.size()) {
    TimeNs shift = overview_.ranks[size_t(k)].shift;
    zoom_to(double(its[step].start + shift), double(its[step].end + shift));
  }
  heat_pending_step_ = {};
}

void JobView::draw_heatmap() {
  int kind = int(heat_kind_);
  ImGui::SetNextItemWidth(260);
  if (ImGui::Combo("##heatkind", &kind, "Iteration time per step\0Wait per collective\0Wait in collectives per step\0"))
    heat_kind_ = present::HeatmapKind(kind);
  bool waits = heat_kind_ == present::HeatmapKind::CollectiveWait;
  ImGui::SameLine();
  int order = int(heat_order_);
  ImGui::SetNextItemWidth(160);
  if (ImGui::Combo("row order##heatorder", &order, "rank\0node\0slowness\0")) heat_order_ = present::RowOrder(order);
  const present::HeatmapMatrix& m = shown_heatmap();
  ImGui::SameLine();
  if (m.columns == 0 || m.rows() == 0) {
    ImGui::TextDisabled(waits ? "no collective was matched across the ranks"
                        : heat_kind_ == present::HeatmapKind::StepWaits ? "no rank has ProfilerStep#N step starts"
                                                                        : "no rank has ProfilerStep#N steps");
    return;
  }
  ImGui::TextDisabled("%s (pale) to %s (dark red); grey: %s. Click a cell for that rank and %s.",
                      present::format_duration(double(m.min_value)).c_str(), present::format_duration(double(m.max_value)).c_str(),
                      waits ? "not in it" : "no such step", waits ? "collective" : "step");
  ImVec2 avail = ImGui::GetContentRegionAvail();
  float label_w = ImGui::CalcTextSize("ranks 00000-00000").x + 8;
  ImVec2 p0 = ImGui::GetCursorScreenPos();
  float x0 = std::round(p0.x + label_w), x1 = p0.x + avail.x, y0 = p0.y, y1 = p0.y + std::max(avail.y, 20.f);
  rebin_heatmap(size_t(std::max(1.f, y1 - y0)), size_t(std::max(1.f, x1 - x0)));
  const present::HeatmapBands& h = heat_bands_;
  float row_h = std::min((y1 - y0) / float(h.rows.size()), ImGui::GetTextLineHeight() + 4);
  float col_w = (x1 - x0) / float(h.columns.size());
  heat_rect_ = {x0, y0, x1, y0 + row_h * float(h.rows.size())};
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (const HeatRun& r : heat_runs_) {
    float top = std::round(y0 + float(r.row) * row_h), bottom = std::round(y0 + float(r.row + 1) * row_h);
    dl->AddRectFilled(ImVec2(std::round(x0 + float(r.c0) * col_w), top), ImVec2(std::round(x0 + float(r.c1) * col_w), bottom), r.color);
  }
  float next_label = -1e9f;
  for (size_t br = 0; br < h.rows.size(); ++br) {
    float top = std::round(y0 + float(br) * row_h);
    if (top >= next_label) {
      const present::Band& b = h.rows[br];
      std::string label = "rank " + std::to_string(h.band_rank(m, br));
      if (b.last - b.first > 1) label = std::to_string(b.last - b.first) + " ranks";
      dl->AddText(ImVec2(p0.x, top), ImGui::GetColorU32(ImGuiCol_Text), label.c_str());
      next_label = top + ImGui::GetTextLineHeight();
    }
  }
  ImGui::SetCursorScreenPos(ImVec2(x0, y0));
  ImGui::InvisibleButton("##heatcells", ImVec2(std::max(1.f, x1 - x0), std::max(1.f, heat_rect_.w - y0)));
  if (!ImGui::IsItemHovered()) return;
  ImVec2 mouse = ImGui::GetMousePos();
  auto br = size_t(std::clamp((mouse.y - y0) / row_h, 0.f, float(h.rows.size() - 1)));
  auto bc = size_t(std::clamp((mouse.x - x0) / col_w, 0.f, float(h.columns.size() - 1)));
  size_t cell = br * h.columns.size() + bc;
  TimeNs v = h.cells[cell];
  int64_t rank = v == present::kNoCell ? h.band_rank(m, br) : m.ranks[h.source_row[cell]];
  size_t column = v == present::kNoCell ? h.columns[bc].first : h.source_column[cell];
  ImGui::SetTooltip("rank %lld, %s: %s", (long long)rank, present::heatmap_column_label(m, overview_, column).c_str(),
                    v == present::kNoCell ? (waits ? "not in it" : "no such step") : present::format_duration(double(v)).c_str());
  if (ImGui::IsItemClicked()) open_heatmap_cell(rank, column);
}

// heatmap steps|waits|step-waits [rank|node|slowness]: what the Heatmap view shows (and shows it);
// heatmapcell R C: a click on rank R's cell of step (or collective instance) C.
std::string JobView::heatmap_command(const std::string& command, const std::string& args) {
  std::istringstream in(args);
  if (command == "heatmap") {
    std::string kind, order;
    in >> kind >> order;
    present::HeatmapKind k;
    if (!present::heatmap_kind_named(kind, k)) return "heatmap wants steps, waits or step-waits, then rank, node or slowness";
    present::RowOrder o = heat_order_;
    if (!order.empty() && !present::row_order_named(order, o)) return "heatmap rows by rank, node or slowness, not '" + order + "'";
    heat_kind_ = k, heat_order_ = o;
    show_view("heatmap");
    return "";
  }
  int64_t rank = -1;
  long long column = -1;
  if (!(in >> rank >> column) || column < 0) return "heatmapcell wants a rank and a column (step or collective index)";
  return open_heatmap_cell(rank, size_t(column)) ? "" : "no cell of rank " + std::to_string(rank) + ", column " + std::to_string(column);
}

void JobView::write_heatmap_state(JsonWriter& w) const {
  const present::HeatmapMatrix& m = shown_heatmap();
  w.key("heatmap").begin_object().field("kind", present::heatmap_kind_name(heat_kind_)).field("order", present::row_order_name(heat_order_));
  w.field("ranks", uint64_t(m.rows())).field("columns", uint64_t(m.columns)).field("min_ns", m.min_value).field("max_ns", m.max_value);
  w.key("row_order").begin_array();  // ranks in the order shown
  for (size_t r : present::order_rows(m, heat_order_)) w.value(m.ranks[r]);
  w.end_array().field("band_rows", uint64_t(heat_bands_.rows.size())).field("band_columns", uint64_t(heat_bands_.columns.size()));
  w.key("rect").begin_array().value(double(heat_rect_.x)).value(double(heat_rect_.y)).value(double(heat_rect_.z)).value(double(heat_rect_.w)).end_array();
  w.key("clicked");
  if (heat_clicked_.rank >= 0) w.begin_object().field("rank", heat_clicked_.rank).field("column", heat_clicked_.column).end_object();
  else w.null();
  w.end_object();
}

}  // namespace sl::views
