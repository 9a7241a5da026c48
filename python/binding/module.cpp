// The extension module `_sightline`: one bind_* file per area; the package `sightline`
// (python/sightline/__init__.py) is the documented way in.
#include "python/binding/binding.h"

PYBIND11_MODULE(_sightline, m) {
  m.doc() = "Sightline's core (loader, store, analyses, jobs, diff, figures) for the package `sightline`.";
  m.attr("version") = SIGHTLINE_VERSION;
  sl::python::bind_trace(m);
  sl::python::bind_columns(m);
  sl::python::bind_report(m);
  sl::python::bind_job(m);
  sl::python::bind_diff(m);
  sl::python::bind_render(m);
  sl::python::bind_fleet(m);
}
