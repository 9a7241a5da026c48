// sightline.open_job: the ranks of one run, loaded in parallel (core/job/job.h) without the GIL,
// and the job report (every analysis per rank with its `rank` column, then collectives,
// stragglers and clock offsets), as `sightline report DIR`.
#include "core/analysis/job_report.h"
#include "core/job/job.h"
#include "core/report/trace_info.h"
#include "core/snapshot/snapshot_cache.h"
#include "python/binding/binding.h"

namespace sl::python {
namespace {

analysis::Align align_named(const std::string& name) {
  if (name == "collectives") return analysis::Align::Collectives;
  if (name == "none") return analysis::Align::None;
  if (name == "auto") return analysis::Align::Auto;
  throw py::value_error("align wants 'auto', 'collectives' or 'none', got '" + name + "'");
}

// (Job or None, error): a directory, or a list of rank files.
py::tuple load(py::object where, bool cache) {
  JobPlan plan = py::isinstance<py::str>(where) ? plan_job_dir(where.cast<std::string>())
                                                : plan_job_files(where.cast<std::vector<std::string>>());
  if (!plan.ok()) return py::make_tuple(py::none(), text(plan.error));
  JobResult result;
  run_without_gil([&](const std::atomic<bool>& cancel) {
    JobOptions options;
    options.cancel = &cancel;
    if (cache) options.cache = &process_cache_settings();
    result = load_job(plan, options);
  });
  if (!result.ok()) return py::make_tuple(py::none(), text(result.error));
  return py::make_tuple(std::shared_ptr<Job>(std::move(result.job)), py::none());
}

// Rank numbers, and per rank its file, whether it loaded, and the CLI's error line.
py::list ranks(const Job& job) {
  py::list out;
  for (const JobRank& r : job.ranks) {
    py::dict d;
    d["rank"] = r.rank;
    d["path"] = r.path;
    d["ok"] = r.ok();
    d["error"] = r.ok() ? text("") : text(r.error.to_string());
    d["load_seconds"] = r.load_seconds;
    out.append(d);
  }
  return out;
}

// The Trace of one rank: it keeps the whole job alive.
std::shared_ptr<TraceHandle> rank_trace(const std::shared_ptr<Job>& job, int64_t rank) {
  const JobRank* r = job->find(rank);
  if (!r) throw py::key_error("the job has no rank " + std::to_string(rank));
  if (!r->ok()) throw py::value_error("rank " + std::to_string(rank) + " failed: " + r->error.to_string());
  auto handle = std::make_shared<TraceHandle>();
  handle->owner = job;
  handle->store = r->store.get();
  handle->path = r->path;
  handle->load_seconds = r->load_seconds;
  handle->origin = std::string(trace_origin_name(r->origin));
  return handle;
}

analysis::JobReportOptions job_options(const std::string& mode, const std::vector<std::string>& only, const std::string& align) {
  analysis::JobReportOptions o;
  o.report.table.mode = mode_named(mode);
  o.report.only = only;
  o.collectives.align = align_named(align);
  return o;
}

analysis::JobReport run(const Job& job, const analysis::JobReportOptions& o) {
  analysis::JobReport report;
  run_without_gil([&](const std::atomic<bool>&) { report = analysis::run_job_report(job, o); });
  return report;
}

}  // namespace

void bind_job(py::module_& m) {
  py::class_<Job, std::shared_ptr<Job>>(m, "Job", "The ranks of one run (use sightline.Job).")
      .def_readonly("source", &Job::source)
      .def_readonly("load_seconds", &Job::load_seconds)
      .def("ranks", &ranks)
      .def("skipped", [](const Job& job) {
        py::list out;
        for (const SkippedFile& s : job.skipped) out.append(py::make_tuple(s.path, text(s.reason)));
        return out;
      })
      .def("trace", &rank_trace, py::arg("rank"))
      .def("info_json", [](const Job& job) { return text(job_info_json(job, job.load_seconds)); })
      .def("report", [](const Job& job, const std::string& mode, const std::vector<std::string>& only, const std::string& align) {
          analysis::JobReport r = run(job, job_options(mode, only, align));
          return py::make_tuple(tables_to_python(r.tables), r.notes);
        }, py::arg("mode") = "sightline", py::arg("only") = std::vector<std::string>{}, py::arg("align") = "auto")
      .def("report_json", [](const Job& job, const std::string& mode, const std::vector<std::string>& only, const std::string& align) {
          analysis::JobReportOptions o = job_options(mode, only, align);
          analysis::JobReport r = run(job, o);
          return text(analysis::render_job_json(job, r, o));
        }, py::arg("mode") = "sightline", py::arg("only") = std::vector<std::string>{}, py::arg("align") = "auto");
  m.def("load_job", &load, py::arg("where"), py::arg("cache") = true,
        "Loads a job without the GIL: (Job | None, error).");
}

}  // namespace sl::python
