// Idle time: per GPU stream, a stacked bar of Sightline's idle causes and, beside it, HTA's three
// categories. Clicking a cause steps through its gaps on the timeline, longest first.
#pragma once

#include "core/text/json_writer.h"
#include "views/data_table.h"
#include "views/view_context.h"

namespace sl::views {

// Gaps (indices into IdleCauses::gaps) of one stream and cause, longest first; headless.
std::vector<uint32_t> gaps_longest_first(const analysis::IdleCauses& causes, int64_t stream, analysis::IdleCause cause);

class IdleView {
public:
  void draw(ViewContext& ctx);
  // Script: pick a stream's cause (its longest gap shown); false when it has no such gap.
  bool pick(ViewContext& ctx, int64_t stream, analysis::IdleCause cause);
  void step(ViewContext& ctx, int direction);
  void write_state(JsonWriter& w, const ViewContext* ctx) const;

private:
  void go_to(ViewContext& ctx, size_t i);
  void draw_stream(ViewContext& ctx, int64_t stream, float bar_w);

  bool picked_ = false;
  int64_t stream_ = 0;
  analysis::IdleCause cause_ = analysis::IdleCause::Other;
  std::vector<uint32_t> gaps_;
  size_t cursor_ = 0;
  DataTable table_;
};

}  // namespace sl::views
