// sightline.open_fleet: a fleet file (core/fleet) read as `sightline report RUN.slfleet` reads it,
// its job and fleet tables as report's, and each rank's status and source path.
#include "core/fleet/fleet.h"
#include "core/fleet/fleet_report.h"
#include "python/binding/binding.h"

namespace sl::python {
namespace {

// (tables, notes, ranks, source, error): ranks is a list of (rank, status, path, error); on a
// file that cannot be read everything is empty and `error` says why (what, where), as the CLI.
py::tuple read_fleet(const std::string& path, const std::string& mode) {
  fleet::Fleet f;
  std::string error;
  bool ok = false;
  fleet::FleetReportOptions o;
  o.mode = mode_named(mode);
  std::vector<analysis::Table> tables;
  std::vector<std::string> notes;
  run_without_gil([&](const std::atomic<bool>&) {
    ok = fleet::read_fleet_file(path, f, error);
    if (!ok) return;
    tables = fleet::fleet_report_tables(f, o);
    notes = fleet::fleet_report_notes(f, o);
  });
  if (!ok) return py::make_tuple(py::list(), py::list(), py::list(), text(""), text(error));
  py::list ranks;
  for (const fleet::RankSummary& r : f.ranks) ranks.append(py::make_tuple(r.rank, r.ok() ? "ok" : "failed", text(r.path), text(r.error)));
  py::list note_list;
  for (const std::string& n : notes) note_list.append(text(n));
  return py::make_tuple(tables_to_python(tables), note_list, ranks, text(f.source), py::none());
}

}  // namespace

void bind_fleet(py::module_& m) {
  m.def("read_fleet", &read_fleet, py::arg("path"), py::arg("mode") = "sightline",
        "Reads a fleet file: (tables, notes, ranks, source, error).");
}

}  // namespace sl::python
