// Insights: ranked findings, each with the time it costs and a link to where it happens.
#pragma once

#include "core/text/json_writer.h"
#include "views/insights_model.h"
#include "views/view_context.h"

namespace sl::views {

// The findings as cards (rank, title, detail, a cost bar relative to the first, the cost), each a
// selectable; `opened` is drawn selected. Returns the index clicked this frame, or -1. Shared by
// the trace tab's Insights view and the job tab's (the Stragglers entry).
int draw_insight_cards(const std::vector<Insight>& insights, int opened);

class InsightsView {
public:
  void draw(ViewContext& ctx);
  bool open(ViewContext& ctx, size_t index);  // script `insight N`: move the timeline there
  void write_state(JsonWriter& w) const;

private:
  void compute(ViewContext& ctx);

  bool computed_ = false;
  InsightOptions options_;
  float starvation_us_ = 500;
  std::vector<Insight> insights_;
  int opened_ = -1;
};

}  // namespace sl::views
