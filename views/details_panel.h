// Details of the selected slice: timing, args (decoded on demand), parent chain, links.
#pragma once

#include "views/timeline_view.h"

namespace sl::views {

// Draws into the current window; clicking a link selects and frames it on the timeline.
void draw_details_panel(const TraceStore& store, TimelineView& timeline);

}  // namespace sl::views
