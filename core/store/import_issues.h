// What the loader could not place exactly as written: counted by kind, with the byte offsets of
// the first few examples, so that nothing is dropped silently.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
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
  Truncated,            // the file stops inside traceEvents: complete events kept, the partial one dropped
  TrailingComma,        // `,` right before `]` or `}`: accepted, as chrome://tracing and Perfetto do
  kCount
};

std::string_view issue_name(IssueKind kind);  // snake_case, as in `info` output

// Where a cut-off trace stops (a run killed mid-write): set together with a `Truncated` issue.
struct Truncation {
  uint64_t byte_offset = 0;        // where the (uncompressed) JSON text stops
  uint64_t events = 0;             // elements of traceEvents read before the cut
  bool gzip = false;               // the gzip stream itself is cut off
  uint64_t compressed_offset = 0;  // with `gzip`: where the compressed bytes stop
};

// "this trace ends at byte N: the run was probably cut off; K events loaded" (the GUI banner and
// the CLI warning say the same).
std::string describe(const Truncation& truncation);

class ImportIssues {
public:
  static constexpr size_t kExamples = 5;

  void add(IssueKind kind, uint64_t byte_offset);
  void add_count(IssueKind kind, uint64_t count);  // when no single offset applies
  void merge(const ImportIssues& other);

  uint64_t count(IssueKind kind) const { return counts_[index(kind)]; }
  const std::vector<uint64_t>& examples(IssueKind kind) const { return examples_[index(kind)]; }
  uint64_t total() const;

  std::optional<Truncation> truncation;  // set when the trace is cut off

private:
  static size_t index(IssueKind kind) { return static_cast<size_t>(kind); }
  std::array<uint64_t, size_t(IssueKind::kCount)> counts_{};
  std::array<std::vector<uint64_t>, size_t(IssueKind::kCount)> examples_;
};

}  // namespace sl
