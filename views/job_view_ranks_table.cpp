// A job tab's analyses below the timeline: the sortable Ranks table (straggler numbers per
// rank) and the Insights tab.
#include "views/job_view.h"

#include <algorithm>

#include "views/insights_view.h"
#include "views/job_view_text.h"

namespace sl::views {

void JobView::draw_insights() {
  ImGui::TextDisabled("Findings across the ranks, ranked by the time each costs. Click one to see where it happens.");
  if (insights_.empty()) {
    ImGui::TextDisabled("No stragglers: no rank arrived last at a collective with a skew.");
    return;
  }
  if (int clicked = draw_insight_cards(insights_, insight_opened_); clicked >= 0) open_insight(size_t(clicked));
}

void JobView::draw_ranks_table() {
  const auto& a = overview_.collectives;
  ImGui::TextUnformatted("Ranks");
  std::string insight = analysis::straggler_insight(a);
  if (!insight.empty()) {
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.84f, 0.37f, 0.0f, 1), "Stragglers: %s", insight.c_str());
  }
  for (const SkippedFile& s : job_->skipped) ImGui::TextDisabled("skipped %s: %s", s.path.c_str(), s.reason.c_str());
  static const char* kColumns[] = {"rank", "status", "collectives", "last in", "made others wait", "waited", "iteration mean",
                                   "compute", "communication", "idle", "top cause"};
  constexpr int kCount = int(sizeof kColumns / sizeof *kColumns);
  ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders | ImGuiTableFlags_ScrollY |
                          ImGuiTableFlags_Resizable;
  if (!ImGui::BeginTable("ranks", kCount, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (int c = 0; c < kCount; ++c)
    ImGui::TableSetupColumn(kColumns[c], c == 4 ? ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending : 0);
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
    if (specs->SpecsCount > 0) {
      sort_column_ = specs->Specs[0].ColumnIndex;
      sort_descending_ = specs->Specs[0].SortDirection == ImGuiSortDirection_Descending;
    }
    specs->SpecsDirty = false;
  }
  // Sort keys per column (time columns in ns; a failed rank sorts as 0 / empty).
  auto key = [&](const JobRank& r) -> double {
    const analysis::StragglerRow* s = straggler_row(r.rank);
    switch (sort_column_) {
      case 0: return double(r.rank);
      case 1: return present(r) ? 0 : 1;
      case 2: return s ? double(s->collectives) : 0;
      case 3: return s ? double(s->late_count) : 0;
      case 4: return s ? double(s->delay_caused) : 0;
      case 5: return s ? double(s->wait) : 0;
      case 6: return s && s->iteration_mean ? *s->iteration_mean : 0;
      case 7: return s ? double(s->compute) : 0;
      case 8: return s ? double(s->communication) : 0;
      case 9: return s ? double(s->idle) : 0;
      default: return 0;
    }
  };
  // The order only when the sort, the overview or a rank's load changed; the rows through a
  // clipper: a frame formats the rows on screen, not every rank.
  TableKey table_key{sort_column_, sort_descending_, overview_version_, ranks_version_};
  if (!(table_key == table_key_) || table_order_.size() != job_->ranks.size()) {
    std::vector<const JobRank*> rows;
    for (const JobRank& r : job_->ranks) rows.push_back(&r);
    std::stable_sort(rows.begin(), rows.end(), [&](const JobRank* x, const JobRank* y) {
      if (sort_column_ == 10) {
        const auto *sx = straggler_row(x->rank), *sy = straggler_row(y->rank);
        std::string cx = sx ? sx->top_cause : "", cy = sy ? sy->top_cause : "";
        return sort_descending_ ? cx > cy : cx < cy;
      }
      return sort_descending_ ? key(*x) > key(*y) : key(*x) < key(*y);
    });
    table_order_.clear();
    table_rows_.clear();
    for (const JobRank* r : rows) table_order_.push_back(r->rank), table_rows_.push_back(size_t(r - job_->ranks.data()));
    table_key_ = table_key;
  }
  ImGuiListClipper clipper;
  clipper.Begin(int(table_rows_.size()));
  while (clipper.Step()) {
    for (int row = clipper.DisplayStart; row < clipper.DisplayEnd; ++row) {
      const JobRank* r = &job_->ranks[table_rows_[size_t(row)]];
    const analysis::StragglerRow* s = straggler_row(r->rank);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    std::string label = std::to_string(r->rank);
    if (ImGui::Selectable(label.c_str(), r->rank == focused_, ImGuiSelectableFlags_SpanAllColumns)) focus_rank(r->rank);
    ImGui::TableNextColumn();
    if (std::string cut = cut_off_text(*r); !cut.empty()) {
      ImGui::TextColored(kCutText, "loaded, cut off");
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cut.c_str());
    } else if (r->ok()) ImGui::TextUnformatted("loaded");
    else if (present(*r)) ImGui::TextUnformatted("summarised");
    else ImGui::TextColored(ImVec4(0.8f, 0.1f, 0.1f, 1), "failed: %s", r->error.message.c_str());
    if (!s) continue;
    ImGui::TableNextColumn();
    ImGui::Text("%llu", (unsigned long long)s->collectives);
    ImGui::TableNextColumn();
    ImGui::Text("%llu", (unsigned long long)s->late_count);
    for (TimeNs v : {s->delay_caused, s->wait}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ms(v).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(s->iteration_mean ? ms(TimeNs(*s->iteration_mean)).c_str() : "-");
    for (TimeNs v : {s->compute, s->communication, s->idle}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(ms(v).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(analysis::cause_phrase(s->top_cause).c_str());  // in words, as the Stragglers sentence
    }
  }
  ImGui::EndTable();
}

}  // namespace sl::views
