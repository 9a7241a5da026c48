// Import issues: the half launch flows every Kineto trace has are normal; others need a look.
#include "core/report/issue_classes.h"
#include "core/report/trace_info.h"
#include "tests/unit/test_support.h"

using namespace sl;

TEST_CASE("import issues: half launch flows are normal, skipped events are not") {
  // A launch whose kernel fell outside the window (flow start, no end) and a runtime call that
  // launched nothing recorded (flow end, no start), as Kineto writes them.
  auto s = test::load_ok(R"([
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{"correlation":1}},
    {"ph":"s","id":1,"pid":1,"tid":1,"ts":10,"cat":"ac2g","name":"ac2g"},
    {"ph":"X","cat":"cuda_runtime","name":"cudaStreamWaitEvent","pid":1,"tid":1,"ts":20,"dur":1,"args":{"correlation":2}},
    {"ph":"f","id":2,"pid":1,"tid":1,"ts":20,"cat":"ac2g","name":"ac2g","bp":"e"}])");
  CHECK(s->issues.count(IssueKind::FlowStartWithoutEnd) == 1);
  CHECK(s->issues.count(IssueKind::FlowEndWithoutStart) == 1);
  CHECK(attention_issues(s->issues) == 0);
  CHECK(issue_class(IssueKind::FlowEndWithoutStart) == IssueClass::Normal);
  std::string text = info_text(*s, -1);
  CHECK(text.find("issues:         0 to look at, 2 normal in profiler traces") != std::string::npos);
  CHECK(text.find("normal: the launched GPU work fell outside the profiling window") != std::string::npos);
  std::string json = info_json(*s, -1);
  CHECK(json.find(R"("issues_attention":0)") != std::string::npos);
  CHECK(json.find(R"("flow_end_without_start":"normal")") != std::string::npos);

  auto bad = test::load_ok(R"([
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":10,"dur":-5},
    {"ph":"E","pid":1,"tid":1,"ts":30}])");
  CHECK(attention_issues(bad->issues) == 2);
  CHECK(issue_class(IssueKind::NegativeDuration) == IssueClass::Attention);
  CHECK(issue_reason(IssueKind::NegativeDuration) == "a negative duration: kept with duration 0");
}
