// What every analysis view works with: the trace, its analyses and the timeline. The timeline's
// selection and highlights are the one selection model all views share: a view that selects
// writes there, and every view reads it back to mark its own rows.
#pragma once

#include "views/analysis_model.h"
#include "views/timeline_view.h"

namespace sl::views {

struct ViewContext {
  const TraceStore& store;
  const AnalysisModel& model;
  TimelineView& timeline;
};

// Moves the timeline to [t0, t1] (with a margin), scrolled to `ref`'s row and selecting it.
void show_on_timeline(TimelineView& timeline, SliceRef ref, TimeNs t0, TimeNs t1);

// Small drawing helpers shared by the views.
void section_title(const char* text);
void help_marker(const char* text);

}  // namespace sl::views
