// Breakdowns: temporal (idle / compute / non-compute), kernel types with overlap, per-kernel
// statistics, per-iteration bars and CPU–GPU coupling per iteration.
#pragma once

#include "core/json_writer.h"
#include "views/data_table.h"
#include "views/view_context.h"

namespace sl::views {

class BreakdownView {
public:
  void draw(ViewContext& ctx);
  void write_state(JsonWriter& w) const;

private:
  void build(ViewContext& ctx);
  void draw_overview(ViewContext& ctx);
  void draw_iterations(ViewContext& ctx, ImVec2 size);
  void go_to_iteration(ViewContext& ctx, int64_t number);

  bool built_ = false;
  DataTable kernels_, types_, coupling_;
  std::vector<int64_t> coupling_iteration_;  // per coupling_ row; -1 = whole trace
  int kernel_selected_ = -1, coupling_selected_ = -1;
  int64_t iteration_selected_ = -1;
};

}  // namespace sl::views
