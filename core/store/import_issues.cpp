#include "core/store/import_issues.h"

namespace sl {

std::string_view issue_name(IssueKind kind) {
  switch (kind) {
    case IssueKind::FlowEndWithoutStart: return "flow_end_without_start";
    case IssueKind::FlowStartWithoutEnd: return "flow_start_without_end";
    case IssueKind::FlowPointUnbound: return "flow_point_unbound";
    case IssueKind::OverlappingSlice: return "overlapping_slices";
    case IssueKind::EndWithoutBegin: return "end_without_begin";
    case IssueKind::BeginWithoutEnd: return "begin_without_end";
    case IssueKind::AsyncEndWithoutBegin: return "async_end_without_begin";
    case IssueKind::AsyncBeginWithoutEnd: return "async_begin_without_end";
    case IssueKind::MissingField: return "missing_field";
    case IssueKind::IllTypedField: return "ill_typed_field";
    case IssueKind::NegativeDuration: return "negative_duration";
    case IssueKind::TimestampOutOfRange: return "timestamp_out_of_range";
    case IssueKind::UnknownPhase: return "unknown_phase";
    case IssueKind::SkippedPhase: return "skipped_phase";
    case IssueKind::NotAnObject: return "not_an_object";
    case IssueKind::InvalidUtf8: return "invalid_utf8";
    case IssueKind::ControlCharacter: return "control_character";
    case IssueKind::DepthOverflow: return "depth_overflow";
    case IssueKind::Truncated: return "truncated";
    case IssueKind::TrailingComma: return "trailing_comma";
    case IssueKind::kCount: break;
  }
  return "unknown";
}

std::string describe(const Truncation& t) {
  std::string out = "this trace ends at byte " + std::to_string(t.byte_offset);
  if (t.gzip) out += " (its gzip stream stops at compressed byte " + std::to_string(t.compressed_offset) + ")";
  return out + ": the run was probably cut off; " + std::to_string(t.events) + (t.events == 1 ? " event" : " events") +
         " loaded";
}

void ImportIssues::add(IssueKind kind, uint64_t byte_offset) {
  size_t i = index(kind);
  ++counts_[i];
  if (examples_[i].size() < kExamples) examples_[i].push_back(byte_offset);
}

void ImportIssues::add_count(IssueKind kind, uint64_t count) { counts_[index(kind)] += count; }

void ImportIssues::merge(const ImportIssues& other) {
  for (size_t i = 0; i < counts_.size(); ++i) {
    counts_[i] += other.counts_[i];
    for (uint64_t offset : other.examples_[i])
      if (examples_[i].size() < kExamples) examples_[i].push_back(offset);
  }
  if (!truncation) truncation = other.truncation;
}

uint64_t ImportIssues::total() const {
  uint64_t sum = 0;
  for (uint64_t c : counts_) sum += c;
  return sum;
}

}  // namespace sl
