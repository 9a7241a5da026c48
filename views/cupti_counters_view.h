// Counters: the CUPTI range profiler's per-kernel counters (core/analysis/cupti_counters.h), per
// kernel and per operator, with derived FLOPs, DRAM bytes and throughput, and a roofline scatter
// (core/analysis/roofline.h: the same numbers as `render --view roofline`). Clicking a row or a
// point selects that kernel's range on the timeline and frames it; an operator row highlights
// all its kernels. A trace without counters shows why, not an empty table.
#pragma once

#include <optional>

#include "core/analysis/roofline.h"
#include "core/text/json_writer.h"
#include "views/data_table.h"
#include "views/view_context.h"

namespace sl::views {

class CuptiCountersView {
public:
  void draw(ViewContext& ctx);
  // Script `counters kernel|point|operator N`, as a click on that row or point; false when
  // there is no such one.
  bool select_kernel(ViewContext& ctx, size_t kernel);  // index into CuptiCounters::kernels
  bool select_point(ViewContext& ctx, size_t point);    // index into Roofline::points
  bool select_operator(ViewContext& ctx, size_t row);   // index into CuptiCounters::operators
  // Script `counters click X Y` (window pixels): what a click there on the last drawn scatter
  // does (the same hit test as the mouse); false when no point is there.
  bool click_at(ViewContext& ctx, float x, float y);
  void write_state(JsonWriter& w) const;

private:
  void build(const ViewContext& ctx);
  void draw_tables(ViewContext& ctx);
  void draw_roofline(ViewContext& ctx);
  void draw_point_tooltip(const ViewContext& ctx, const analysis::RooflinePoint& p) const;

  bool built_ = false;
  const analysis::CuptiCounters* counters_ = nullptr;  // the model's; null when not computed
  analysis::Roofline roof_;
  DataTable kernel_table_, op_table_;
  std::vector<int> point_of_kernel_;  // per kernel: its point, or -1
  int selected_kernel_ = -1, selected_op_ = -1, hovered_point_ = -1;
  int switch_tab_ = 0;  // frames left to force the Kernels or Operators tab open
  bool operators_tab_ = false;
  std::vector<std::pair<float, float>> drawn_;  // each point's screen position, last frame
};

}  // namespace sl::views
