// Launch latency: log-binned histograms of launch delay, launch-to-start, runtime call and GPU
// duration with quantile and cutoff markers; brushing bins highlights their kernels.
#pragma once

#include "core/text/json_writer.h"
#include "views/data_table.h"
#include "views/latency_model.h"
#include "views/view_context.h"

namespace sl::views {

class LatencyView {
public:
  void draw(ViewContext& ctx);
  // Script: brush the bins overlapping [lo_ns, hi_ns] of the current (or given) quantity.
  void brush_range(ViewContext& ctx, double lo_ns, double hi_ns);
  void set_quantity(LatencyQuantity q) { quantity_ = q, dirty_ = true; }
  void write_state(JsonWriter& w) const;

private:
  void recompute(ViewContext& ctx);
  void brush(ViewContext& ctx, size_t first, size_t last);
  void draw_controls(ViewContext& ctx);
  void draw_histogram(ViewContext& ctx, ImVec2 size);

  LatencyQuantity quantity_ = LatencyQuantity::LaunchDelay;
  bool log_counts_ = false, dirty_ = true;
  float runtime_cutoff_us_ = 50, delay_cutoff_us_ = 100;
  LatencyFilter filter_;
  char name_filter_[128] = "";
  LatencyBins bins_;
  size_t brush_first_ = 1, brush_last_ = 0;  // empty when first > last
  std::vector<uint32_t> brushed_;            // pair indices
  DataTable table_;                          // the brushed kernels; row i = brushed_[i]
  bool dragging_ = false;
  size_t drag_anchor_ = 0;
  std::vector<int64_t> streams_, iterations_;
};

}  // namespace sl::views
