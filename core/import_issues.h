// What the loader could not place exactly as written: counted by kind, with the byte offsets of
// the first few examples, so that nothing is dropped silently.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sl {

enum class IssueKind : uint8_t {
  FlowEndWithoutStart,
  FlowStartWithoutEnd,
  FlowPointUnbound,     // a flow point with no slice to attach to on its thread
  OverlappingSlice,     // partial overlap on a track: placed on an extra lane
  EndWithoutBegin,      // `E` with no open `B` on its thread
  BeginWithoutEnd,      // `B` never closed: ends at the trace end
  AsyncEndWithoutBegin,
  AsyncBeginWithoutEnd,
  MissingField,         // e.g. an `X` without `ts`; the event is skipped
  IllTypedField,        // e.g. `ts` given as an object; the event is skipped
  NegativeDuration,     // `dur` < 0: kept with duration 0
  TimestampOutOfRange,  // beyond ±9.2e15 µs: the event is skipped
  UnknownPhase,         // `ph` not in the Trace Event Format: skipped
  SkippedPhase,         // `P` samples, `O`/`N`/`D` objects, `(`/`)` contexts: counted, not stored
  NotAnObject,          // an element of traceEvents that is not an object
  InvalidUtf8,          // bytes replaced by '?' so the event can be kept
  ControlCharacter,     // raw control characters in a string, replaced by ' '
  DepthOverflow,        // nesting deeper than 65535 levels, clamped
  kCount
};

std::string_view issue_name(IssueKind kind);  // snake_case, as in `info` output

class ImportIssues {
public:
  static constexpr size_t kExamples = 5;

  void add(IssueKind kind, uint64_t byte_offset);
  void add_count(IssueKind kind, uint64_t count);  // when no single offset applies
  void merge(const ImportIssues& other);

  uint64_t count(IssueKind kind) const { return counts_[index(kind)]; }
  const std::vector<uint64_t>& examples(IssueKind kind) const { return examples_[index(kind)]; }
  uint64_t total() const;

private:
  static size_t index(IssueKind kind) { return static_cast<size_t>(kind); }
  std::array<uint64_t, size_t(IssueKind::kCount)> counts_{};
  std::array<std::vector<uint64_t>, size_t(IssueKind::kCount)> examples_;
};

}  // namespace sl
