// Breakdowns: temporal (idle / compute / non-compute), kernel types with overlap, per-kernel
// statistics, per-iteration bars and CPU–GPU coupling per iteration.
#pragma once

#include "core/text/json_writer.h"
#include "views/data_table.h"
#include "views/view_context.h"

namespace sl::views {

// Durations of one kernel's occurrences in log-spaced bins (what "Per kernel" draws under the
// table for the selected kernel).
struct DurationDistribution {
  std::vector<double> edges;    // ns; bins = edges.size() - 1
  std::vector<uint32_t> counts;
  double median = 0;
};
DurationDistribution duration_distribution(const TraceStore& store, const std::vector<SliceRef>& slices, size_t bins = 24);

class BreakdownView {
public:
  void draw(ViewContext& ctx);
  void write_state(JsonWriter& w) const;

private:
  void build(ViewContext& ctx);
  void draw_overview(ViewContext& ctx);
  void draw_iterations(ViewContext& ctx, ImVec2 size);
  void go_to_iteration(ViewContext& ctx, int64_t number);
  void draw_distribution(ImVec2 size);

  bool built_ = false;
  DataTable kernels_, types_, coupling_;
  std::vector<int64_t> coupling_iteration_;  // per coupling_ row; -1 = whole trace
  int kernel_selected_ = -1, coupling_selected_ = -1;
  DurationDistribution distribution_;  // of the selected kernel
  std::string distribution_name_;
  int64_t iteration_selected_ = -1;
};

}  // namespace sl::views
