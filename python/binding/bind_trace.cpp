// Opening a trace from Python (sightline.open), and what every binding shares: the GIL-free
// runner, text conversion, tables as columns.
#include <chrono>
#include <future>
#include <thread>

#include "core/open_trace.h"
#include "core/report/trace_info.h"
#include "python/binding/binding.h"

namespace sl::python {

py::str text(std::string_view s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), py::ssize_t(s.size()), "replace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

void run_without_gil(const std::function<void(const std::atomic<bool>& cancel)>& work) {
  std::atomic<bool> cancel{false};
  std::packaged_task<void()> task([&] { work(cancel); });
  std::future<void> done = task.get_future();
  std::thread worker(std::move(task));
  bool interrupted = false;
  for (;;) {
    bool finished;
    {
      py::gil_scoped_release release;
      finished = done.wait_for(std::chrono::milliseconds(50)) == std::future_status::ready;
    }
    if (finished) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;  // the KeyboardInterrupt stays set until we return
      cancel = true;
    }
  }
  worker.join();
  if (interrupted) throw py::error_already_set();
  done.get();  // rethrows what `work` threw
}

py::list tables_to_python(const std::vector<analysis::Table>& tables) {
  py::list out;
  for (const analysis::Table& t : tables) {
    std::string data = "[";
    for (size_t k = 0; k < t.columns.size(); ++k) {
      data += k ? "],[" : "[";
      for (size_t i = 0; i < t.rows.size(); ++i) {
        if (i) data += ',';
        data += analysis::cell_json(t.rows[i][k]);
      }
    }
    data += t.columns.empty() ? "]" : "]]";
    out.append(py::make_tuple(t.name, t.columns, text(data)));
  }
  return out;
}

namespace {

// {file, message, offset, line, column, cancelled, text}: sightline.LoadError's fields, `text`
// the line the CLI prints after "sightline: ".
py::dict error_fields(const LoadError& e) {
  py::dict d;
  d["file"] = e.file;
  d["message"] = text(e.message);
  d["offset"] = e.byte_offset;
  d["line"] = e.line;
  d["column"] = e.column;
  d["cancelled"] = e.cancelled;
  d["text"] = text(e.to_string());
  return d;
}

// (Trace or None, error fields or None, warnings, cache notices). The warnings are the lines
// the CLI prints after "sightline: warning: ".
py::tuple load(const std::string& path, bool cache) {
  auto opened = std::make_shared<OpenedTrace>();
  run_without_gil([&](const std::atomic<bool>& cancel) {
    LoadOptions options;
    options.cancel = &cancel;
    options.pack_slices = true;  // slices() of every track: views, not a concatenation
    *opened = open_trace(path, options, cache ? process_cache_settings() : CacheSettings{});
  });
  const LoadResult& r = opened->loaded;
  py::list notices;
  for (const std::string& n : opened->notices) notices.append(text(n));
  if (!r.ok()) return py::make_tuple(py::none(), error_fields(r.error), py::list(), notices);
  py::list warnings;
  if (!r.warning.empty()) warnings.append(text(r.warning));
  if (std::string gpu = missing_gpu_activity_warning(*r.store); !gpu.empty())
    warnings.append(text(r.store->meta.file + ": " + gpu));
  auto handle = std::make_shared<TraceHandle>();
  handle->store = r.store.get();
  handle->path = path;
  handle->load_seconds = r.seconds;
  handle->origin = std::string(trace_origin_name(opened->origin));
  handle->owner = std::move(opened);
  return py::make_tuple(handle, py::none(), warnings, notices);
}

}  // namespace

void bind_trace(py::module_& m) {
  py::class_<TraceHandle, std::shared_ptr<TraceHandle>>(m, "Trace", "A loaded trace's store (use sightline.Trace).")
      .def_readonly("path", &TraceHandle::path)
      .def_readonly("load_seconds", &TraceHandle::load_seconds)
      .def_readonly("origin", &TraceHandle::origin)
      .def("info_json", [](const TraceHandle& t, bool with_seconds) {
        return text(info_json(*t.store, with_seconds ? t.load_seconds : -1));
      }, py::arg("with_seconds") = true, "The `sightline info --format json` object, as text.");
  m.def("load", &load, py::arg("path"), py::arg("cache") = true,
        "Loads a trace without the GIL: (Trace | None, error fields | None, warnings, cache notices).");
}

}  // namespace sl::python
