// Kernel patterns: HTA's frequent kernel sequences per operator, fusion candidates and the most
// repeated kernels. Selecting a row highlights every occurrence; next/previous walks them.
#pragma once

#include "core/text/json_writer.h"
#include "views/data_table.h"
#include "views/pattern_model.h"
#include "views/view_context.h"

namespace sl::views {

enum class PatternKind { Sequences, Fusion, Repeated };

class PatternsView {
public:
  void draw(ViewContext& ctx);
  // Script: select row `index` (in analysis order) of a table; false when there is no such row.
  bool select_row(ViewContext& ctx, PatternKind kind, size_t index);
  bool set_operator(ViewContext& ctx, const std::string& op);
  void step(ViewContext& ctx, int direction);
  void write_state(JsonWriter& w) const;

private:
  void build_tables(ViewContext& ctx);
  void draw_sequences(ViewContext& ctx);
  void draw_occurrence_bar(ViewContext& ctx);
  void go_to(ViewContext& ctx, size_t occurrence);

  bool built_ = false;
  PatternKind kind_ = PatternKind::Fusion;
  int switch_tab_ = 0;  // frames left to force the tab of kind_ (ImGui applies it a frame late)
  std::string op_;
  char op_search_[128] = "";
  std::vector<analysis::KernelSequence> sequences_;
  DataTable seq_table_, fusion_table_, repeated_table_;
  int selected_ = -1;                   // row in the table of kind_
  PatternKind selected_kind_ = PatternKind::Fusion;
  std::vector<Occurrence> occurrences_;
  size_t cursor_ = 0;
  size_t highlighted_ = 0;
};

}  // namespace sl::views
