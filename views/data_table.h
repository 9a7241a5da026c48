// A table of precomputed cells shared by every analysis view: sortable by any column, filterable
// by a substring, clipped (ImGuiListClipper) and copyable as CSV. Views build it once per
// analysis result, never per frame; sorting reorders an index only when the sort spec changes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sl::views {

struct Cell {
  std::string text;
  double key = 0;      // numeric sort key; text columns sort by `text`
  bool numeric = false;
};

class DataTable {
public:
  std::vector<std::string> headers;
  std::vector<std::vector<Cell>> rows;

  void clear() { rows.clear(), order_.clear(), filter_.clear(); }
  void add_row(std::vector<Cell> cells) { rows.push_back(std::move(cells)); order_.clear(); }
  static Cell text(std::string s) { return {std::move(s), 0, false}; }
  static Cell number(std::string s, double key) { return {std::move(s), key, true}; }

  // Headless view-model: the visible row order after sorting by `column` and filtering by a
  // case-insensitive substring of any cell.
  void sort(int column, bool ascending);
  void set_filter(const std::string& text);
  const std::vector<uint32_t>& order();  // indices into rows
  std::string csv();                     // visible rows in visible order, RFC 4180 quoting

  // Draws the table filling `height` (0 = rest of the window). Returns the row index clicked
  // this frame or -1. `selected` is highlighted (row index or -1).
  int draw(const char* id, float height, int selected);
  // Scrolls so that the row is visible on the next draw.
  void reveal(int row) { reveal_ = row; }

private:
  std::vector<uint32_t> order_;
  std::string filter_;
  int sort_column_ = -1;
  bool ascending_ = true;
  int reveal_ = -1;
  char filter_buf_[128] = "";
};

std::string csv_escape(const std::string& s);

}  // namespace sl::views
