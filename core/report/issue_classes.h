// Which import issues are normal in profiler traces, and which deserve a user's attention.
//
// Every Kineto trace has some: the profiler writes a launch flow (`ac2g`) for every runtime call
// with a correlation id, also for calls that launch nothing it records (cudaStreamWaitEvent,
// cudaEventRecord: a flow end with no start) and for launches whose GPU work falls outside the
// profiling window (a flow start with no end). Sightline links launches to GPU work through
// `args.correlation`, not through flows, so half flows lose nothing. An alarm on them teaches
// users to ignore the badge; so the badge (GUI) and `info` alarm only on the other kinds, and
// say which counts are normal and why.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/store/import_issues.h"

namespace sl {

enum class IssueClass : uint8_t {
  Normal,     // expected in traces written by the PyTorch profiler; nothing lost
  Attention,  // something was skipped, adjusted or placed apart: worth a look
};

IssueClass issue_class(IssueKind kind);
std::string_view issue_class_name(IssueClass c);  // "normal", "attention"
// One line: why a normal kind is normal, or what happened to the events of another kind.
std::string_view issue_reason(IssueKind kind);
// Issues of the Attention class (the number a badge shows).
uint64_t attention_issues(const ImportIssues& issues);
// The GUI's import-issues button: "N import issues" (N of the Attention class), "import: normal"
// when every issue is a normal one, "" when there are none.
std::string import_badge_label(const ImportIssues& issues);

}  // namespace sl
