// Memory (analyses.md §11): per device, allocated and reserved over the timeline's visible range
// (same axis, same zoom as the timeline) with the peak marked, the live blocks as a stacked area
// by allocating context (PyTorch's "active memory timeline"), and beside it the tables — at the
// peak, leaks, churn, per iteration, and the blocks of the selected context. Hover a band for
// the largest block under the mouse (size, lifetime, stack); a click selects that block: its
// lifetime becomes the timeline's range and its allocating op the selection.
#pragma once

#include <memory>

#include "core/present/memory_columns.h"
#include "core/text/json_writer.h"
#include "views/data_table.h"
#include "views/view_context.h"

namespace sl::views {

class MemoryView {
public:
  void draw(ViewContext& ctx);
  // Scripts: choose the device (index into the analysis' devices), a context row of the at-peak
  // table, a block row of the selected context's table; false when there is none.
  bool pick_device(ViewContext& ctx, size_t device);
  bool pick_context(ViewContext& ctx, size_t row);
  bool pick_block(ViewContext& ctx, size_t row);
  void show_peak(ViewContext& ctx);
  void write_state(JsonWriter& w, const ViewContext& ctx) const;

private:
  const memory::MemoryAnalysis* analysis(const ViewContext& ctx) const;
  const memory::DeviceMemory* device(const ViewContext& ctx) const;
  void build_tables(ViewContext& ctx);
  void select_context(ViewContext& ctx, StringId context);
  void select_block(ViewContext& ctx, int64_t block);
  void draw_summary(ViewContext& ctx);
  void draw_plot(ViewContext& ctx, ImVec2 size);
  void draw_tables(ViewContext& ctx);
  void draw_legend(const ViewContext& ctx, ImVec2 at, float width) const;
  void refresh_columns(TimeNs t0, TimeNs t1, int columns);
  std::string block_text(const ViewContext& ctx, const memory::MemoryBlock& b) const;

  size_t device_ = 0;
  bool built_ = false, whole_stacks_ = false;
  std::unique_ptr<present::ContextBands> index_;  // of the device shown, built when it is chosen
  present::ContextColumns bands_;
  std::vector<present::MemoryColumn> lines_;
  StringId context_ = 0;
  bool context_selected_ = false;
  int64_t block_ = -1;                   // selected block (row of analysis.blocks)
  std::vector<uint32_t> context_blocks_;  // the selected context's blocks, largest first
  std::vector<StringId> peak_contexts_, leak_contexts_, churn_contexts_;  // per table row
  DataTable at_peak_, leaks_, churn_, iterations_, blocks_;
  int peak_row_ = -1, leak_row_ = -1, churn_row_ = -1, block_row_ = -1;
};

}  // namespace sl::views
