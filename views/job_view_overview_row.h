// The rank overview's row object (JobView::OverviewRow), complete for the files that make and
// destroy it: the job view's life (job_view.cpp) and the overview (job_view_overview.cpp).
#pragma once

#include "views/job_view.h"

namespace sl::views {

// One overview row (a rank, or a band of ranks) as a row of the timeline: the timeline places it
// on its axis, pinned above the expanded ranks; the job view draws it and answers its input.
class JobView::OverviewRow : public CustomRow {
public:
  OverviewRow(JobView& job, size_t row) : job_(job), row_(row) {}
  float height() const override { return job_.row_height_; }
  void draw(ImDrawList* dl, const TimelineRect& header, const TimelineRect& canvas, const TimeMapping& map) override {
    job_.draw_overview_row(dl, row_, header, canvas, map);
  }
  void hover(ImVec2 mouse, const TimelineRect&, const TimeMapping& map) override { job_.overview_tooltip(row_, mouse, map); }
  void click(ImVec2 mouse, const TimelineRect&, const TimeMapping& map) override { job_.overview_click(row_, mouse, map); }

private:
  JobView& job_;
  size_t row_;
};

}  // namespace sl::views
