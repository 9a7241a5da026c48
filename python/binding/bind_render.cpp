// Trace.render: the figures of `sightline render TRACE --view V` (figures/trace_figure.h),
// written as SVG, PDF or PNG by the file name, without the GIL.
#include "figures/cairo_output.h"
#include "figures/trace_figure.h"
#include "python/binding/binding.h"

namespace sl::python {
namespace {

// Returns what the CLI reports after "wrote PATH: N elements"; raises ValueError (bad options)
// or RuntimeError (a figure that cannot be drawn or written) with the CLI's message.
std::string render(const TraceHandle& t, const std::string& path, const fig::TraceFigureRequest& request,
                   const std::string& theme_name, float width, double scale) {
  fig::Format format;
  if (!fig::format_from_path(path, format)) throw py::value_error("the figure file wants .svg, .pdf or .png, got '" + path + "'");
  fig::FigureTheme theme;
  if (!fig::parse_theme(theme_name, theme)) throw py::value_error("theme wants light, dark or paper, got '" + theme_name + "'");
  if (!fig::is_trace_view(request.view))
    throw py::value_error("view wants timeline, histogram, breakdown, idle, roofline, memory or critical-path; got '" + request.view + "'");
  if (width != 0 && (width < 200 || width > 20000)) throw py::value_error("width wants 200 to 20000 px");
  if (!(scale >= 0.25 && scale <= 8)) throw py::value_error("scale wants 0.25 to 8");
  if (request.top < 1 || request.top > 50) throw py::value_error("top wants 1 to 50");
  std::string error, details;
  bool built = false, written = false;
  fig::Scene scene;
  run_without_gil([&](const std::atomic<bool>&) {
    fig::Style style = fig::make_style(theme, width);
    built = fig::trace_figure(*t.store, request, style, scene, details, error);
    if (built) written = fig::write_scene(scene, path, format, scale, error);
  });
  if (!built) throw std::runtime_error(error);
  if (!written) throw std::runtime_error("cannot write " + error);
  return std::to_string(scene.items.size()) + " elements" + details;
}

}  // namespace

void bind_render(py::module_& m) {
  auto trace = py::reinterpret_borrow<py::class_<TraceHandle, std::shared_ptr<TraceHandle>>>(m.attr("Trace"));
  trace.def("render", [](const TraceHandle& t, const std::string& path, const std::string& view, TimeNs start, TimeNs end,
                         const std::string& tracks, const std::string& title, int max_depth, size_t top,
                         std::optional<int64_t> instance, std::optional<std::string> annotation, const std::string& theme,
                         float width, double scale) {
    if (max_depth < -1) throw py::value_error("max_depth wants 0 (top level only) or more");
    fig::TraceFigureRequest r;
    r.view = view, r.start = start, r.end = end, r.tracks = tracks, r.title = title.empty() ? fig::trace_title(t.path) : title;
    r.max_depth = max_depth, r.top = top, r.instance = instance, r.annotation = annotation;
    return render(t, path, r, theme, width, scale);
  }, py::arg("path"), py::arg("view") = "timeline", py::arg("start_ns") = 0, py::arg("end_ns") = 0, py::arg("tracks") = "",
     py::arg("title") = "", py::arg("max_depth") = -1, py::arg("top") = 8, py::arg("instance") = py::none(),
     py::arg("annotation") = py::none(), py::arg("theme") = "paper", py::arg("width") = 0.0f, py::arg("scale") = 1.0,
     "Writes one figure of the trace, as `sightline render`.");
}

}  // namespace sl::python
