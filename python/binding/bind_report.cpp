// Trace.report: every analysis of `sightline report`, through the same producers (run_report,
// report_tables, cell_json, render_json), without the GIL.
#include <optional>

#include "core/analysis/report.h"
#include "core/analysis/report_tables.h"
#include "core/report/trace_info.h"
#include "python/binding/binding.h"

namespace sl::python {

analysis::Mode mode_named(const std::string& name) {
  if (name != "sightline" && name != "hta") throw py::value_error("mode wants 'sightline' or 'hta', got '" + name + "'");
  return name == "hta" ? analysis::Mode::Hta : analysis::Mode::Sightline;
}

namespace {

analysis::ReportOptions report_options(const std::string& mode, const std::vector<std::string>& only) {
  analysis::ReportOptions o;
  o.table.mode = mode_named(mode);
  o.only = only;
  return o;
}

struct ReportRun {
  analysis::Report report;
  std::vector<analysis::Table> tables;
};

ReportRun run(const TraceHandle& t, const std::string& mode, const std::vector<std::string>& only) {
  analysis::ReportOptions o = report_options(mode, only);
  ReportRun r;
  run_without_gil([&](const std::atomic<bool>&) {
    r.report = analysis::run_report(*t.store, o);
    r.tables = analysis::report_tables(r.report);
  });
  return r;
}

}  // namespace

void bind_report(py::module_& m) {
  auto trace = py::reinterpret_borrow<py::class_<TraceHandle, std::shared_ptr<TraceHandle>>>(m.attr("Trace"));
  trace.def("report", [](const TraceHandle& t, const std::string& mode, const std::vector<std::string>& only) {
          ReportRun r = run(t, mode, only);
          return py::make_tuple(tables_to_python(r.tables), r.report.notes);
        }, py::arg("mode") = "sightline", py::arg("only") = std::vector<std::string>{},
        "(tables, notes): every table of `sightline report` as (name, columns, column-major JSON).")
      .def("report_json", [](const TraceHandle& t, const std::string& mode, const std::vector<std::string>& only) {
          ReportRun r = run(t, mode, only);
          return text(analysis::render_json(r.report, r.tables, info_json(*t.store)));
        }, py::arg("mode") = "sightline", py::arg("only") = std::vector<std::string>{},
        "The text of `sightline report --format json`.");
  m.def("analysis_names", &analysis::analysis_names, "Names report(tables=...) runs alone (as --only).");
}

}  // namespace sl::python
