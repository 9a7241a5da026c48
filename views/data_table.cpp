#include "views/data_table.h"

#include <imgui.h>

#include <algorithm>
#include <cctype>

namespace sl::views {

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

static bool contains_ci(const std::string& text, const std::string& lower_needle) {
  if (lower_needle.empty()) return true;
  return std::search(text.begin(), text.end(), lower_needle.begin(), lower_needle.end(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         }) != text.end();
}

void DataTable::sort(int column, bool ascending) {
  sort_column_ = column;
  ascending_ = ascending;
  order_.clear();
}

void DataTable::set_filter(const std::string& text) {
  std::string lower;
  for (char c : text) lower += char(std::tolower(static_cast<unsigned char>(c)));
  if (lower != filter_) filter_ = lower, order_.clear();
}

const std::vector<uint32_t>& DataTable::order() {
  if (!order_.empty() || rows.empty()) return order_;
  for (uint32_t i = 0; i < rows.size(); ++i) {
    bool keep = filter_.empty();
    for (const Cell& c : rows[i]) keep = keep || contains_ci(c.text, filter_);
    if (keep) order_.push_back(i);
  }
  int col = sort_column_;
  std::stable_sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    if (col < 0) return ascending_ ? a < b : b < a;  // the analysis' own order (the # column)
    const Cell& x = rows[a][size_t(col)];
    const Cell& y = rows[b][size_t(col)];
    bool less = x.numeric ? x.key < y.key : x.text < y.text;
    bool greater = x.numeric ? y.key < x.key : y.text < x.text;
    return ascending_ ? less : greater;
  });
  if (order_.empty()) order_.push_back(UINT32_MAX);  // sentinel: "computed, nothing visible"
  return order_;
}

std::string DataTable::csv() {
  std::string out;
  out += "rank";
  for (const std::string& h : headers) out.append(1, ',').append(csv_escape(h));
  out += "\n";
  for (uint32_t r : order()) {
    if (r == UINT32_MAX) break;
    out += std::to_string(r + 1);
    for (const Cell& c : rows[r]) out.append(1, ',').append(csv_escape(c.text));
    out += "\n";
  }
  return out;
}

int DataTable::draw(const char* id, float height, int selected) {
  ImGui::PushID(id);
  int clicked = -1;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
  if (ImGui::InputTextWithHint("##filter", "filter rows", filter_buf_, sizeof filter_buf_)) set_filter(filter_buf_);
  ImGui::SameLine();
  if (ImGui::SmallButton("Copy as CSV")) ImGui::SetClipboardText(csv().c_str());
  ImGui::SameLine();
  size_t visible = order().size() == 1 && order()[0] == UINT32_MAX ? 0 : order().size();
  ImGui::TextDisabled("%zu of %zu rows", visible, rows.size());
  ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                          ImGuiTableFlags_BordersOuter | ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollX;
  if (height <= 0) height = ImGui::GetContentRegionAvail().y;
  if (!headers.empty() && ImGui::BeginTable("t", int(headers.size()) + 1, flags, ImVec2(0, height))) {
    ImGui::TableSetupScrollFreeze(1, 1);
    // Column 0 is the row's rank in the analysis' order: the default sort.
    ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_DefaultSort | ImGuiTableColumnFlags_WidthFixed);
    for (const std::string& h : headers) ImGui::TableSetupColumn(h.c_str());
    ImGui::TableHeadersRow();
    if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs(); specs && specs->SpecsDirty) {
      if (specs->SpecsCount > 0)
        sort(specs->Specs[0].ColumnIndex - 1, specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
      specs->SpecsDirty = false;
    }
    const std::vector<uint32_t>& ord = order();
    int count = visible ? int(ord.size()) : 0;
    float row_h = ImGui::GetTextLineHeightWithSpacing();
    if (reveal_ >= 0) {
      auto it = std::find(ord.begin(), ord.end(), uint32_t(reveal_));
      if (it != ord.end()) ImGui::SetScrollY(float(it - ord.begin()) * row_h);
      reveal_ = -1;
    }
    ImGuiListClipper clipper;
    clipper.Begin(count, row_h);
    while (clipper.Step()) {
      for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
        uint32_t r = ord[size_t(i)];
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::PushID(int(r));
        std::string rank = std::to_string(r + 1);
        if (ImGui::Selectable(rank.c_str(), int(r) == selected, ImGuiSelectableFlags_SpanAllColumns)) clicked = int(r);
        ImGui::PopID();
        for (size_t c = 0; c < rows[r].size() && c < headers.size(); ++c) {
          ImGui::TableSetColumnIndex(int(c) + 1);
          ImGui::TextUnformatted(rows[r][c].text.c_str());
          if (rows[r][c].text.size() > 60 && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", rows[r][c].text.c_str());
        }
      }
    }
    ImGui::EndTable();
  }
  ImGui::PopID();
  return clicked;
}

}  // namespace sl::views
