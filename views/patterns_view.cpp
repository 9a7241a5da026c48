#include "views/patterns_view.h"

#include <imgui.h>

#include <cstdio>

#include "core/names/short_names.h"
#include "core/present/time_axis.h"
#include "core/text/format.h"

namespace sl::views {

using namespace sl::analysis;

namespace {

std::string chain_text(const ShortNames& shorten, const std::vector<std::string>& names, size_t from = 0) {
  std::string s;
  for (size_t i = from; i < names.size(); ++i) s += (i > from ? " → " : "") + shorten(names[i]);
  return s;
}

std::string fixed(double v, int digits) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

}  // namespace

void PatternsView::build_tables(ViewContext& ctx) {
  built_ = true;
  auto names = store_short_names(ctx.store);
  fusion_table_.headers = {"kernels", "count", "proximity", "saving (launches + gaps)", "stream", "chain (launch order)"};
  if (ctx.model.report.fusion)
    for (const FusionCandidate& c : *ctx.model.report.fusion)
      fusion_table_.add_row({DataTable::number(std::to_string(c.chain.size()), double(c.chain.size())),
                             DataTable::number(human::count(int64_t(c.count)), double(c.count)), DataTable::number(fixed(c.proximity, 2), c.proximity),
                             DataTable::number(present::format_duration(double(c.saving)), double(c.saving)),
                             DataTable::number(std::to_string(c.stream), double(c.stream)), DataTable::text(chain_text(*names, c.chain))});
  repeated_table_.headers = {"count", "total", "mean", "kernel"};
  if (ctx.model.report.repeated)
    for (const RepeatedKernel& k : *ctx.model.report.repeated)
      repeated_table_.add_row({DataTable::number(human::count(int64_t(k.count)), double(k.count)),
                               DataTable::number(present::format_duration(double(k.sum)), double(k.sum)),
                               DataTable::number(present::format_duration(k.mean), k.mean), DataTable::text((*names)(k.name))});
  if (op_.empty() && !ctx.model.launching_ops.empty()) {
    // Start with the most common aten operator that launches kernels, if any.
    for (const LaunchingOp& op : ctx.model.launching_ops)
      if (op.name.starts_with("aten::")) { set_operator(ctx, op.name); break; }
  }
}

bool PatternsView::set_operator(ViewContext& ctx, const std::string& op) {
  op_ = op;
  KernelSequenceOptions o;
  o.operator_name = op;
  sequences_ = kernel_sequences(ctx.model.table(), o);
  seq_table_.clear();
  auto names = store_short_names(ctx.store);
  seq_table_.headers = {"length", "count", "GPU kernel time", "CPU operator time", "kernels (by GPU start)"};
  for (const KernelSequence& s : sequences_)
    seq_table_.add_row({DataTable::number(std::to_string(s.pattern.size() - 1), double(s.pattern.size() - 1)),
                        DataTable::number(human::count(int64_t(s.count)), double(s.count)),
                        DataTable::number(present::format_duration(double(s.gpu_kernel_time)), double(s.gpu_kernel_time)),
                        DataTable::number(present::format_duration(double(s.cpu_op_time)), double(s.cpu_op_time)),
                        DataTable::text(chain_text(*names, s.pattern, 1))});
  if (selected_kind_ == PatternKind::Sequences) selected_ = -1, occurrences_.clear();
  return !sequences_.empty();
}

bool PatternsView::select_row(ViewContext& ctx, PatternKind kind, size_t index) {
  if (!built_) build_tables(ctx);
  const EventTable& t = ctx.model.table();
  std::vector<Occurrence> occ;
  if (kind == PatternKind::Fusion) {
    if (!ctx.model.report.fusion || index >= ctx.model.report.fusion->size()) return false;
    occ = fusion_occurrences(t, (*ctx.model.report.fusion)[index]);
  } else if (kind == PatternKind::Repeated) {
    if (!ctx.model.report.repeated || index >= ctx.model.report.repeated->size()) return false;
    occ = kernel_occurrences(t, (*ctx.model.report.repeated)[index].name);
  } else {
    if (index >= sequences_.size()) return false;
    occ = sequence_occurrences(t, op_, sequences_[index]);
  }
  if (kind != kind_) switch_tab_ = 3;
  kind_ = selected_kind_ = kind;
  selected_ = int(index);
  occurrences_ = std::move(occ);
  std::vector<SliceRef> all = occurrence_kernels(occurrences_);
  highlighted_ = all.size();
  ctx.timeline.set_highlights(std::move(all));
  if (!occurrences_.empty()) go_to(ctx, 0);
  return true;
}

void PatternsView::go_to(ViewContext& ctx, size_t i) {
  if (i >= occurrences_.size()) return;
  cursor_ = i;
  const Occurrence& o = occurrences_[i];
  show_on_timeline(ctx.timeline, o.anchor, o.start, o.end);
}

void PatternsView::step(ViewContext& ctx, int direction) {
  if (occurrences_.empty()) return;
  size_t n = occurrences_.size();
  go_to(ctx, (cursor_ + n + size_t(direction < 0 ? -1 : 1) + n) % n);
}

void PatternsView::draw_occurrence_bar(ViewContext& ctx) {
  if (selected_ < 0) {
    ImGui::TextDisabled("Select a row: every occurrence is highlighted on the timeline; step through them here.");
    return;
  }
  if (occurrences_.empty()) {
    ImGui::TextDisabled("No occurrence found on the timeline.");
    return;
  }
  if (ImGui::ArrowButton("prev", ImGuiDir_Left)) step(ctx, -1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("next", ImGuiDir_Right)) step(ctx, 1);
  ImGui::SameLine();
  const Occurrence& o = occurrences_[cursor_];
  ImGui::Text("occurrence %zu of %zu  ·  at %s  ·  spans %s  ·  %zu kernels highlighted", cursor_ + 1, occurrences_.size(),
              present::format_duration(double(o.start)).c_str(), present::format_duration(double(o.end - o.start)).c_str(), highlighted_);
}

void PatternsView::draw_sequences(ViewContext& ctx) {
  float list_w = ImGui::GetFontSize() * 20;
  ImGui::BeginChild("ops", ImVec2(list_w, 0), true);
  ImGui::SetNextItemWidth(-1);
  ImGui::InputTextWithHint("##opsearch", "search operators", op_search_, sizeof op_search_);
  ImGui::TextDisabled("operators that launch kernels");
  ImGui::BeginChild("oplist");
  std::string needle = op_search_;
  std::vector<const LaunchingOp*> shown;
  for (const LaunchingOp& op : ctx.model.launching_ops)
    if (needle.empty() || op.name.find(needle) != std::string::npos) shown.push_back(&op);
  ImGuiListClipper clipper;
  clipper.Begin(int(shown.size()));
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const LaunchingOp& op = *shown[size_t(i)];
      ImGui::PushID(i);
      std::string label = (*store_short_names(ctx.store))(op.name);
      if (ImGui::Selectable(label.c_str(), op.name == op_)) set_operator(ctx, op.name);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s\n%llu kernels launched under it", op.name.c_str(), (unsigned long long)op.kernels);
      ImGui::PopID();
    }
  ImGui::EndChild();
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginGroup();
  if (op_.empty()) {
    ImGui::TextDisabled("Pick an operator on the left.");
  } else {
    ImGui::Text("Kernel sequences launched by '%s' (operators whose name contains it, shallowest only; at least 3 kernels)",
                (*store_short_names(ctx.store))(op_).c_str());
    draw_occurrence_bar(ctx);
    int clicked = seq_table_.draw("seq", 0, selected_kind_ == PatternKind::Sequences ? selected_ : -1);
    if (clicked >= 0) select_row(ctx, PatternKind::Sequences, size_t(clicked));
  }
  ImGui::EndGroup();
}

void PatternsView::draw(ViewContext& ctx) {
  if (!built_) build_tables(ctx);
  if (!ImGui::BeginTabBar("patterns")) return;
  auto tab = [&](const char* label, PatternKind k) {
    ImGuiTabItemFlags f = switch_tab_ && kind_ == k ? ImGuiTabItemFlags_SetSelected : 0;
    bool open = ImGui::BeginTabItem(label, nullptr, f);
    if (open && !switch_tab_) kind_ = k;
    return open;
  };
  if (tab("Fusion candidates", PatternKind::Fusion)) {
    ImGui::TextDisabled("Chains of kernels that follow each other on one stream (proximity = chain count / first kernel's count).");
    draw_occurrence_bar(ctx);
    int clicked = fusion_table_.draw("fusion", 0, selected_kind_ == PatternKind::Fusion ? selected_ : -1);
    if (clicked >= 0) select_row(ctx, PatternKind::Fusion, size_t(clicked));
    ImGui::EndTabItem();
  }
  if (tab("Frequent sequences per operator", PatternKind::Sequences)) {
    draw_sequences(ctx);
    ImGui::EndTabItem();
  }
  if (tab("Top repeated kernels", PatternKind::Repeated)) {
    draw_occurrence_bar(ctx);
    int clicked = repeated_table_.draw("repeated", 0, selected_kind_ == PatternKind::Repeated ? selected_ : -1);
    if (clicked >= 0) select_row(ctx, PatternKind::Repeated, size_t(clicked));
    ImGui::EndTabItem();
  }
  if (switch_tab_ > 0) --switch_tab_;
  ImGui::EndTabBar();
}

void PatternsView::write_state(JsonWriter& w) const {
  static const char* kinds[] = {"sequence", "fusion", "repeated"};
  w.begin_object();
  w.field("tab", kinds[int(kind_)]).field("operator", op_);
  w.field("sequences", uint64_t(sequences_.size()));
  w.field("fusion_rows", uint64_t(fusion_table_.rows.size())).field("repeated_rows", uint64_t(repeated_table_.rows.size()));
  w.key("selected");
  if (selected_ >= 0) w.begin_object().field("kind", kinds[int(selected_kind_)]).field("row", selected_).end_object();
  else w.null();
  w.field("occurrences", uint64_t(occurrences_.size())).field("occurrence", uint64_t(cursor_));
  w.field("highlighted_kernels", uint64_t(highlighted_));
  w.key("occurrence_span_ns");
  if (cursor_ < occurrences_.size()) w.begin_array().value(occurrences_[cursor_].start).value(occurrences_[cursor_].end).end_array();
  else w.null();
  w.end_object();
}

}  // namespace sl::views
