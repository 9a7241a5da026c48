// Critical path: for one iteration (a ProfilerStep instance the user picks), where its time goes
// by category, the slices that contribute most (a click goes there on the timeline), and what
// would shorten it: the ops on the path by time and the GPU gaps on it with their idle causes.
// It also owns the timeline's path overlay (View > Critical path, script `critical_path on`).
#pragma once

#include "core/analysis/critical_path_contributors.h"
#include "core/text/json_writer.h"
#include "views/data_table.h"
#include "views/view_context.h"

namespace sl::views {

class CriticalPathView {
public:
  void draw(ViewContext& ctx);
  // The overlay on the timeline: the path's slices outlined, its links as arrows, the rest dimmed.
  void set_overlay(ViewContext& ctx, bool on);
  bool overlay() const { return overlay_; }
  // Script `critical_path instance N`: the Nth annotation instance (from 0); false if none.
  bool pick_instance(ViewContext& ctx, int64_t instance);
  // Script `critical_path contributor N`: select and frame the Nth longest contributor.
  bool open_contributor(ViewContext& ctx, size_t index);
  void write_state(JsonWriter& w, const ViewContext& ctx) const;
  // The path shown (for Export...); null before the view has computed one.
  const analysis::CriticalPath* path() const { return computed_ ? &path_ : nullptr; }

private:
  void compute(ViewContext& ctx);
  void fill_tables(ViewContext& ctx);
  void update_overlay(ViewContext& ctx);
  void draw_header(ViewContext& ctx);
  void draw_shares();
  void draw_tables(ViewContext& ctx);
  // What the path is of: its ProfilerStep instance, or the whole trace where the trace has none.
  bool whole_trace() const;
  std::string instance_name(const TraceStore& store) const;
  TimeNs instance_length(const TraceStore& store) const;

  bool computed_ = false, overlay_ = false;
  int64_t instance_ = -1;  // -1: the default (first complete instance)
  std::vector<SliceRef> instances_;
  analysis::CriticalPath path_;
  std::vector<analysis::PathContributor> contributors_;
  std::vector<analysis::PathOp> ops_;
  std::vector<analysis::PathGpuGap> gaps_;
  DataTable contributor_table_, op_table_, gap_table_;
  int opened_ = -1;  // contributor row shown last
  size_t slice_count_ = 0;  // distinct slices on the path (computed once, shown each frame)
};

}  // namespace sl::views
