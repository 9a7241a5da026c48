// The report as tables: one model rendered three ways (aligned text, JSON, CSV), so the three
// formats can never disagree. Column names and order follow cli.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/report.h"

namespace sl::analysis {

struct Cell {
  enum Kind : uint8_t { Null, Int, Ns, Num, Str, StrList, NumList, Bytes } kind = Null;
  int64_t i = 0;          // Int; Ns = integer nanoseconds printed as µs
  double d = 0;           // Num; also Ns when `ns_fractional` (means of ns values)
  bool ns_fractional = false;
  std::string s;
  std::vector<std::string> list;
  std::vector<double> nums;

  static Cell null() { return {}; }
  static Cell integer(int64_t v) { Cell c; c.kind = Int; c.i = v; return c; }
  static Cell ns(int64_t v) { Cell c; c.kind = Ns; c.i = v; return c; }
  static Cell bytes(int64_t v) { Cell c; c.kind = Bytes; c.i = v; return c; }  // exact in JSON/CSV, with units in text
  static Cell ns(double v) { Cell c; c.kind = Ns; c.d = v; c.ns_fractional = true; return c; }
  static Cell num(double v) { Cell c; c.kind = Num; c.d = v; return c; }
  static Cell str(std::string v) { Cell c; c.kind = Str; c.s = std::move(v); return c; }
  static Cell strs(std::vector<std::string> v) { Cell c; c.kind = StrList; c.list = std::move(v); return c; }
  static Cell nums_of(std::vector<double> v) { Cell c; c.kind = NumList; c.nums = std::move(v); return c; }
};

struct Table {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  Table(std::string n, std::vector<std::string> cols) : name(std::move(n)), columns(std::move(cols)) {}
};

std::vector<Table> report_tables(const Report& report);

// Number formatting shared by every output: µs with up to 3 decimals, doubles shortest-exact.
std::string format_us(const Cell& c);
std::string format_number(double v);
std::string json_escape(std::string_view s);

std::string cell_json(const Cell& c);
std::string cell_text(const Cell& c);  // CSV/text: lists joined with '|'

std::string render_json(const Report& report, const std::vector<Table>& tables, const std::string& trace_info_json);
// The tables, then the notes, as the members of a report object that `o` has opened; closes it.
void append_tables_json(std::string& o, const std::vector<Table>& tables, const std::vector<std::string>& notes);
// How wide text tables may be: the terminal's columns ($COLUMNS, else 160), or names whole (--wide).
struct TextLayout {
  size_t width = 160;
  bool wide = false;
};
std::string render_text(const Report& report, const std::vector<Table>& tables, const TextLayout& layout = {});
// Whether text prints the table `name` of `report`: histograms, the memory timeline and the
// insights table (text opens with the headline instead) are JSON/CSV only, the ledger's tables
// text only with --explain or --only ledger.
bool is_text_table(std::string_view name, const Report& report);
// One table as aligned text, at most `max_rows` rows. Name columns (name, operator, chain, ...)
// show short names that stay distinct within the table; where the table is wider than
// `layout.width`, they are cut in the middle with "…" to the width the other columns leave
// (core/names/name_elision.h), still distinct. Numbers are never cut. Other cells longer than
// `clip_width` are cut with "...". Each is said under the table.
void append_text_table(std::string& out, const Table& table, size_t max_rows = SIZE_MAX, size_t clip_width = 60,
                       const TextLayout& layout = {});
std::string render_csv(const Table& table);

}  // namespace sl::analysis
