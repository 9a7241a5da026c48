#include "views/range_stats.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "core/names/short_names.h"
#include "core/present/time_axis.h"
#include "core/text/format.h"
#include "views/timeline_view.h"

namespace sl::views {

std::vector<RangeRow> aggregate_range(const TraceStore& store, TimeNs t0, TimeNs t1, uint32_t track) {
  std::unordered_map<StringId, RangeRow> by_name;
  auto clip = [&](const SliceColumns& c, uint32_t r) { return std::min(c.end(r), t1) - std::max(c.start[r], t0); };
  for (uint32_t t = 0; t < store.tracks.size(); ++t) {
    if (track != kNone && t != track) continue;
    const SliceColumns& c = store.tracks[t].slices;
    auto [lo, hi] = store.rows_overlapping(t, t0, t1);
    for (uint32_t r = lo; r < hi; ++r) {
      if (c.end(r) <= t0 && c.dur[r] > 0) continue;
      TimeNs inside = std::max<TimeNs>(0, clip(c, r));
      RangeRow& row = by_name[c.name[r]];
      row.name = c.name[r];
      ++row.count;
      row.total += inside;
      row.self += inside;
      // A child's time is not its parent's self time; the parent overlaps the range too.
      if (c.parent[r] != kNone) by_name[c.name[c.parent[r]]].self -= inside;
    }
  }
  std::vector<RangeRow> rows;
  TimeNs sum = 0;
  for (auto& [name, row] : by_name) {
    row.name = name;
    sum += row.total;
    rows.push_back(row);
  }
  for (RangeRow& r : rows) r.share = sum ? double(r.total) / double(sum) : 0;
  std::sort(rows.begin(), rows.end(), [](const RangeRow& a, const RangeRow& b) { return a.total > b.total; });
  return rows;
}

std::vector<SliceRef> slices_in_range(const TraceStore& store, StringId name, TimeNs t0, TimeNs t1) {
  std::vector<SliceRef> out;
  for (SliceRef s : store.slices_named(name))
    if (store.start(s) < t1 && store.end(s) >= t0) out.push_back(s);
  std::sort(out.begin(), out.end(), [&](SliceRef a, SliceRef b) { return store.start(a) < store.start(b); });
  return out;
}

void draw_range_window(const TraceStore& store, TimelineView& timeline) {
  auto [t0, t1] = timeline.range_selection();
  static TimeNs cached0 = -1, cached1 = -1;
  static const TraceStore* cached_store = nullptr;
  static std::vector<RangeRow> rows;
  if (t1 <= t0) return;
  if (t0 != cached0 || t1 != cached1 || cached_store != &store) {  // recompute on change only
    rows = aggregate_range(store, t0, t1);
    cached0 = t0, cached1 = t1, cached_store = &store;
  }
  ImGui::SetNextWindowSize(ImVec2(620, 360), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x - 640, 90), ImGuiCond_FirstUseEver);
  bool open = true;
  std::string title = "Selected range: ";  // appends: GCC 12 warns falsely on chains of +
  title += present::format_duration(double(t1 - t0));
  title += "###range";
  if (ImGui::Begin(title.c_str(), &open)) {
    ImGui::TextDisabled("%zu names. Click a row to highlight its slices; Esc clears the range.", rows.size());
    ImGui::SameLine();
    if (ImGui::SmallButton("Copy as CSV")) {
      std::string csv = "name,count,total_us,self_us,average_us,share\n";
      for (const RangeRow& r : rows) {
        char numbers[128];
        std::snprintf(numbers, sizeof numbers, ",%llu,%.3f,%.3f,%.3f,%.4f\n", (unsigned long long)r.count,
                      double(r.total) / 1e3, double(r.self) / 1e3, double(r.total) / 1e3 / double(r.count), r.share);
        csv += '"';
        csv += store.strings.view(r.name);
        csv += '"';
        csv += numbers;
      }
      ImGui::SetClipboardText(csv.c_str());
    }
    ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                            ImGuiTableFlags_Resizable | ImGuiTableFlags_BordersInnerV;
    if (ImGui::BeginTable("range", 6, flags)) {
      ImGui::TableSetupScrollFreeze(0, 1);
      ImGui::TableSetupColumn("name", ImGuiTableColumnFlags_WidthStretch);
      ImGui::TableSetupColumn("count");
      ImGui::TableSetupColumn("total", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_PreferSortDescending);
      ImGui::TableSetupColumn("self");
      ImGui::TableSetupColumn("average");
      ImGui::TableSetupColumn("share");
      ImGui::TableHeadersRow();
      if (ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs(); sort && sort->SpecsDirty && sort->SpecsCount) {
        const ImGuiTableColumnSortSpecs& spec = sort->Specs[0];
        auto key = [&](const RangeRow& r) -> double {
          switch (spec.ColumnIndex) {
            case 1: return double(r.count);
            case 3: return double(r.self);
            case 4: return double(r.total) / double(r.count);
            default: return double(r.total);
          }
        };
        std::stable_sort(rows.begin(), rows.end(), [&](const RangeRow& a, const RangeRow& b) {
          if (spec.ColumnIndex == 0) {
            bool less = store.strings.view(a.name) < store.strings.view(b.name);
            return spec.SortDirection == ImGuiSortDirection_Ascending ? less : store.strings.view(b.name) < store.strings.view(a.name);
          }
          return spec.SortDirection == ImGuiSortDirection_Ascending ? key(a) < key(b) : key(a) > key(b);
        });
        sort->SpecsDirty = false;
      }
      auto names = store_short_names(store);
      ImGuiListClipper clipper;
      clipper.Begin(int(rows.size()));
      while (clipper.Step()) {
        for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
          const RangeRow& r = rows[size_t(i)];
          ImGui::TableNextRow();
          ImGui::TableNextColumn();
          std::string name = (*names)(store.strings.view(r.name));
          if (ImGui::Selectable((name + "##" + std::to_string(i)).c_str(), false, ImGuiSelectableFlags_SpanAllColumns))
            timeline.set_highlights(slices_in_range(store, r.name, t0, t1));
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", std::string(store.strings.view(r.name).substr(0, 400)).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(human::count(int64_t(r.count)).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(present::format_duration(double(r.total)).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(present::format_duration(double(r.self)).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(present::format_duration(double(r.total) / double(r.count)).c_str());
          ImGui::TableNextColumn();
          ImGui::TextUnformatted(human::percent(r.share * 100).c_str());
        }
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
  if (!open) timeline.clear_range();
}

}  // namespace sl::views
