// What the binding files of the extension `_sightline` share: how a trace is held for Python,
// how a table crosses over, and how long work runs without the GIL. The pure-Python layer
// (python/sightline/) turns what these return into DataFrames and exceptions.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/report_tables.h"
#include "core/store/trace_store.h"

namespace sl::python {

namespace py = pybind11;

// One trace as Python holds it: the store and what owns it (its own load, or the job it is a
// rank of), so a rank's Trace keeps its job alive and a numpy view keeps its Trace alive.
struct TraceHandle {
  std::shared_ptr<const void> owner;
  const TraceStore* store = nullptr;
  std::string path;
  double load_seconds = 0;
  std::string origin;  // "trace file", "snapshot file", "cache"
};

void bind_trace(py::module_& m);
void bind_report(py::module_& m);
void bind_columns(py::module_& m);
void bind_job(py::module_& m);
void bind_diff(py::module_& m);
void bind_render(py::module_& m);
void bind_fleet(py::module_& m);

// The tables as a list of (name, columns, data): `data` is the JSON text of one array per
// column, each cell written by the CLI's own cell_json, so the values Python reads back are
// those of `--format json` cell for cell.
py::list tables_to_python(const std::vector<analysis::Table>& tables);

// Text from a trace (names, args) as str: a trace can hold bytes that are not UTF-8, shown
// with U+FFFD as the CLI's JSON escaping does, where pybind11 would throw.
py::str text(std::string_view s);

// "sightline" or "hta" as the analyses take it; ValueError for another name.
analysis::Mode mode_named(const std::string& name);

// Runs `work` on a thread of its own with the GIL released, so other Python threads and
// Jupyter go on meanwhile; checks for Ctrl-C every 50 ms and, on one, sets the flag `work`
// watches, waits for it to stop and raises KeyboardInterrupt. Exceptions of `work` propagate.
void run_without_gil(const std::function<void(const std::atomic<bool>& cancel)>& work);

// The Trace object behind `self` as the owner of numpy views over its store's arrays.
template <typename T>
py::array_t<T> read_only_view(std::span<const T> column, py::handle owner) {
  py::array_t<T> view({py::ssize_t(column.size())}, {py::ssize_t(sizeof(T))}, column.data(), owner);
  py::detail::array_proxy(view.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return view;
}

// A fresh numpy array of `values` (for derived columns that the store does not hold).
template <typename T>
py::array_t<T> new_array(const std::vector<T>& values) {
  py::array_t<T> out(py::ssize_t(values.size()));
  if (!values.empty()) std::memcpy(out.mutable_data(), values.data(), values.size() * sizeof(T));
  return out;
}

}  // namespace sl::python
