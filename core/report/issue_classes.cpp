#include "core/report/issue_classes.h"

namespace sl {

IssueClass issue_class(IssueKind kind) {
  switch (kind) {
    // Kineto's half launch flows (see the header); launches link by correlation id.
    case IssueKind::FlowEndWithoutStart:
    case IssueKind::FlowStartWithoutEnd:
    case IssueKind::FlowPointUnbound:
    // Sample (`P`), object (`O`/`N`/`D`) and context events: valid trace format, not drawn.
    case IssueKind::SkippedPhase: return IssueClass::Normal;
    default: return IssueClass::Attention;
  }
}

std::string_view issue_class_name(IssueClass c) { return c == IssueClass::Normal ? "normal" : "attention"; }

std::string_view issue_reason(IssueKind kind) {
  switch (kind) {
    case IssueKind::FlowEndWithoutStart:
      return "normal: Kineto writes flow ends for runtime calls that launch nothing it records; links use correlation ids";
    case IssueKind::FlowStartWithoutEnd:
      return "normal: the launched GPU work fell outside the profiling window; links use correlation ids";
    case IssueKind::FlowPointUnbound: return "normal: a flow point with no slice on its thread; links use correlation ids";
    case IssueKind::SkippedPhase: return "normal: samples, objects and contexts are valid events Sightline does not draw";
    case IssueKind::OverlappingSlice: return "slices that partly overlap on one thread: drawn on an extra lane (marked)";
    case IssueKind::EndWithoutBegin: return "an E event with no open B on its thread: skipped";
    case IssueKind::BeginWithoutEnd: return "a B event never closed: it ends at the trace end";
    case IssueKind::AsyncEndWithoutBegin: return "an async end with no begin: skipped";
    case IssueKind::AsyncBeginWithoutEnd: return "an async begin never ended: it ends at the trace end";
    case IssueKind::MissingField: return "a required field is missing: the event is skipped";
    case IssueKind::IllTypedField: return "a field has the wrong type: the event is skipped";
    case IssueKind::NegativeDuration: return "a negative duration: kept with duration 0";
    case IssueKind::TimestampOutOfRange: return "a timestamp out of range: the event is skipped";
    case IssueKind::UnknownPhase: return "an unknown ph: the event is skipped";
    case IssueKind::NotAnObject: return "an element of traceEvents that is not an object: skipped";
    case IssueKind::InvalidUtf8: return "invalid UTF-8 replaced by '?'";
    case IssueKind::ControlCharacter: return "raw control characters replaced by spaces";
    case IssueKind::DepthOverflow: return "nesting deeper than 65535 levels: clamped";
    case IssueKind::Truncated: return "the file stops mid-trace (a run cut off): complete events kept, the partial one dropped";
    case IssueKind::TrailingComma: return "a trailing comma before ] or }: accepted, as chrome://tracing and Perfetto do";
    default: break;
  }
  return "";
}

std::string import_badge_label(const ImportIssues& issues) {
  if (uint64_t attention = attention_issues(issues)) return std::to_string(attention) + " import issues";
  return issues.total() ? "import: normal" : "";
}

uint64_t attention_issues(const ImportIssues& issues) {
  uint64_t n = 0;
  for (size_t k = 0; k < size_t(IssueKind::kCount); ++k)
    if (issue_class(IssueKind(k)) == IssueClass::Attention) n += issues.count(IssueKind(k));
  return n;
}

}  // namespace sl
