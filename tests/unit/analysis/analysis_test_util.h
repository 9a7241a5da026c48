// Helpers for the analysis tests: tiny Kineto-like traces written inline.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/analysis/critical_path.h"
#include "core/analysis/report.h"
#include "core/import/kineto/kineto_loader.h"

namespace sl::analysis::test {

// A complete event; `ts`/`dur` are written as given (so "100.5" tests fractional µs).
inline std::string X(const std::string& cat, const std::string& name, int pid, int tid, const std::string& ts,
                     const std::string& dur, const std::string& args = "{}") {
  return R"({"ph":"X","cat":")" + cat + R"(","name":")" + name + R"(","pid":)" + std::to_string(pid) +
         R"(,"tid":)" + std::to_string(tid) + R"(,"ts":)" + ts + R"(,"dur":)" + dur + R"(,"args":)" + args + "}";
}
// A launch call on CPU thread (pid 1, tid 1) with a correlation id.
inline std::string launch(const std::string& name, const std::string& ts, const std::string& dur, int corr,
                          int tid = 1) {
  return X("cuda_runtime", name, 1, tid, ts, dur, R"({"correlation":)" + std::to_string(corr) + "}");
}
// A GPU activity on device 0, `stream`.
inline std::string gpu(const std::string& cat, const std::string& name, int stream, const std::string& ts,
                       const std::string& dur, int corr, const std::string& extra = "") {
  return X(cat, name, 0, stream, ts, dur,
           R"({"device":0,"stream":)" + std::to_string(stream) + R"(,"correlation":)" + std::to_string(corr) + extra +
               "}");
}
inline std::string kernel(const std::string& name, int stream, const std::string& ts, const std::string& dur, int corr) {
  return gpu("kernel", name, stream, ts, dur, corr);
}

inline std::string trace(const std::vector<std::string>& events, const std::string& top = "") {
  std::string s = "{" + top + (top.empty() ? "" : ",") + "\"traceEvents\":[";
  for (size_t i = 0; i < events.size(); ++i) s += (i ? ",\n" : "\n") + events[i];
  return s + "\n]}";
}

inline std::unique_ptr<TraceStore> load(const std::string& json) {
  LoadResult r = load_trace_text(json, "<test>");
  REQUIRE_MESSAGE(r.ok(), r.error.to_string());
  return std::move(r.store);
}

inline EventTable table(const TraceStore& s, Mode mode) {
  TableOptions o;
  o.mode = mode;
  return build_table(s, o);
}

constexpr TimeNs usec(int64_t v) { return v * 1000; }

// A trace with its table and its critical path in Sightline mode (the table points into the store).
struct LoadedPath {
  std::unique_ptr<TraceStore> store;
  EventTable table;
  CriticalPath path;
};

inline LoadedPath load_path(const std::string& json) {
  LoadedPath l;
  l.store = load(json);
  l.table = table(*l.store, Mode::Sightline);
  l.path = critical_path(l.table);
  return l;
}

}  // namespace sl::analysis::test
