// sightline.diff: two runs compared as `sightline diff` does (core/diff/trace_diff.h), its
// tables as report's; a rank or iteration the traces lack raises ValueError with the CLI's message.
#include <optional>

#include "core/diff/trace_diff.h"
#include "python/binding/binding.h"

namespace sl::python {
namespace {

diff::DiffOptions diff_options(const std::string& mode, std::optional<int64_t> iteration_a, std::optional<int64_t> iteration_b,
                               const std::string& device, bool short_names) {
  if (device != "all" && device != "cpu" && device != "gpu") throw py::value_error("device wants 'all', 'cpu' or 'gpu', got '" + device + "'");
  diff::DiffOptions o;
  o.mode = mode_named(mode);
  o.iteration_a = iteration_a, o.iteration_b = iteration_b;
  o.device = device == "cpu" ? diff::Device::Cpu : device == "gpu" ? diff::Device::Gpu : diff::Device::All;
  o.short_names = short_names;
  return o;
}

// (tables, notes, gpu warning) or, with `as_json`, the text of `sightline diff --format json`.
py::object compare(const TraceHandle& a, const TraceHandle& b, const std::string& mode, std::optional<int64_t> iteration_a,
                   std::optional<int64_t> iteration_b, const std::string& device, bool short_names, bool as_json) {
  diff::DiffOptions o = diff_options(mode, iteration_a, iteration_b, device, short_names);
  diff::TraceDiff d;
  std::vector<analysis::Table> tables;
  run_without_gil([&](const std::atomic<bool>&) {
    d = diff::trace_diff(*a.store, *b.store, o);
    tables = diff::diff_tables(d);
  });
  if (as_json) return text(diff::render_diff_json(d, tables));
  return py::make_tuple(tables_to_python(tables), d.notes, text(d.gpu_warning));
}

}  // namespace

void bind_diff(py::module_& m) {
  m.def("diff", &compare, py::arg("a"), py::arg("b"), py::arg("mode") = "sightline", py::arg("iteration_a") = py::none(),
        py::arg("iteration_b") = py::none(), py::arg("device") = "all", py::arg("short_names") = false,
        py::arg("as_json") = false, "Compares two traces: (tables, notes, gpu warning), or the diff's JSON text.");
}

}  // namespace sl::python
