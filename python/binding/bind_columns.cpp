// The store as columns (Trace.slices, kernels, launches, flows, counters, tracks, iterations,
// args): numpy views on the store's own arrays where it holds the column (read-only, their base
// the Trace, so a view outlives every other reference to it), fresh arrays for derived ones.
#include "python/binding/binding.h"

#include <numeric>

namespace sl::python {
namespace {

const char* track_kind_name(TrackKind kind) {
  switch (kind) {
    case TrackKind::CpuThread: return "cpu";
    case TrackKind::GpuStream: return "gpu";
    case TrackKind::Async: return "async";
  }
  return "cpu";
}

void check_track(const TraceHandle& t, uint32_t track) {
  if (track >= t.store->tracks.size())
    throw py::index_error("track " + std::to_string(track) + " out of range (the trace has " +
                          std::to_string(t.store->tracks.size()) + " tracks)");
}

// Slice columns as views on the store's arrays (one track's, or the whole packed trace's);
// `correlation` is the row in the correlation table (kNone: none), which Python shows as the id.
py::dict slice_view_columns(py::object self, std::span<const TimeNs> start, std::span<const TimeNs> dur,
                            std::span<const StringId> name, std::span<const StringId> cat,
                            std::span<const uint16_t> depth, std::span<const uint16_t> lane,
                            std::span<const uint32_t> corr) {
  py::dict d;
  d["start_ns"] = read_only_view(start, self);
  d["dur_ns"] = read_only_view(dur, self);
  d["name"] = read_only_view(name, self);
  d["category"] = read_only_view(cat, self);
  d["depth"] = read_only_view(depth, self);
  d["lane"] = read_only_view(lane, self);
  d["correlation"] = read_only_view(corr, self);
  return d;
}

py::dict slice_columns(py::object self, uint32_t track) {
  const TraceHandle& t = self.cast<const TraceHandle&>();
  check_track(t, track);
  const SliceColumns& c = t.store->slices(track);
  py::dict d = slice_view_columns(self, c.start, c.dur, c.name, c.cat, c.depth, c.lane, c.corr);
  d["parent"] = read_only_view(std::span<const uint32_t>(c.parent), self);
  d["args"] = read_only_view(std::span<const uint32_t>(c.args), self);
  return d;
}

// Every track's slices at once when the store is packed (TraceStore::packed_slices): the
// columns as views, plus `track` (uint16 while the tracks fit, as slices() types it) and `row`
// (derived); None when it is not packed.
template <typename TrackNumber>
py::array_t<TrackNumber> track_column(const TraceStore& store, size_t rows) {
  py::array_t<TrackNumber> track{py::ssize_t(rows)};
  TrackNumber* out = track.mutable_data();
  for (uint32_t i = 0; i < store.tracks.size(); ++i) out = std::fill_n(out, store.slices(i).size(), TrackNumber(i));
  return track;
}

py::object packed_slice_columns(py::object self) {
  const TraceHandle& t = self.cast<const TraceHandle&>();
  std::optional<TraceStore::PackedSlices> p = t.store->packed_slices();
  if (!p) return py::none();
  py::dict d = slice_view_columns(self, p->start, p->dur, p->name, p->cat, p->depth, p->lane, p->corr);
  size_t rows = p->start.size();
  if (t.store->tracks.size() <= 65536) d["track"] = track_column<uint16_t>(*t.store, rows);
  else d["track"] = track_column<uint32_t>(*t.store, rows);
  py::array_t<uint32_t> row{py::ssize_t(rows)};
  uint32_t* out = row.mutable_data();
  for (uint32_t i = 0; i < t.store->tracks.size(); ++i) {
    size_t n = t.store->slices(i).size();
    std::iota(out, out + n, 0u);
    out += n;
  }
  d["row"] = row;
  return d;
}

// Every string of the pool, by id: the categories of the name and category columns.
py::list strings(const TraceHandle& t) {
  py::list out;
  for (size_t i = 0; i < t.store->strings.size(); ++i) out.append(text(t.store->strings.view(StringId(i))));
  return out;
}

py::dict tracks(const TraceHandle& t) {
  const TraceStore& s = *t.store;
  std::vector<int64_t> pid, tid, device, stream, slices, instants;
  py::list kind, name, process_name;
  for (const Track& tr : s.tracks) {
    const Process* p = tr.process == kNone ? nullptr : &s.processes[tr.process];
    kind.append(track_kind_name(tr.kind));
    name.append(text(s.strings.view(tr.name)));
    process_name.append(p ? text(s.strings.view(p->name)) : text(""));
    pid.push_back(p ? p->pid : -1);
    tid.push_back(tr.tid);
    device.push_back(tr.device);
    stream.push_back(tr.stream);
    slices.push_back(int64_t(tr.slices.size()));
    instants.push_back(int64_t(tr.instants.size()));
  }
  py::dict d;
  d["kind"] = kind, d["name"] = name, d["pid"] = new_array(pid), d["process"] = process_name;
  d["tid"] = new_array(tid), d["device"] = new_array(device), d["stream"] = new_array(stream);
  d["slices"] = new_array(slices), d["instants"] = new_array(instants);
  return d;
}

// Each GPU activity with the CPU call that launched it (same correlation id).
py::dict launches(const TraceHandle& t) {
  const TraceStore& s = *t.store;
  std::vector<int64_t> correlation, launch_start, kernel_start, kernel_dur;
  std::vector<uint32_t> launch_track, launch_row, kernel_track, kernel_row, launch_name, kernel_name;
  for (const Correlation& c : s.correlations) {
    if (!c.launch.valid()) continue;
    for (SliceRef a : s.activities_of(c.launch)) {
      correlation.push_back(c.id);
      launch_track.push_back(c.launch.track), launch_row.push_back(c.launch.index);
      launch_start.push_back(s.start(c.launch)), launch_name.push_back(s.name_id(c.launch));
      kernel_track.push_back(a.track), kernel_row.push_back(a.index);
      kernel_start.push_back(s.start(a)), kernel_dur.push_back(s.dur(a)), kernel_name.push_back(s.name_id(a));
    }
  }
  py::dict d;
  d["correlation"] = new_array(correlation);
  d["launch_track"] = new_array(launch_track), d["launch_row"] = new_array(launch_row);
  d["launch_start_ns"] = new_array(launch_start), d["launch_name"] = new_array(launch_name);
  d["kernel_track"] = new_array(kernel_track), d["kernel_row"] = new_array(kernel_row);
  d["kernel_start_ns"] = new_array(kernel_start), d["kernel_dur_ns"] = new_array(kernel_dur);
  d["kernel_name"] = new_array(kernel_name);
  return d;
}

py::dict flows(const TraceHandle& t) {
  const TraceStore& s = *t.store;
  std::vector<uint32_t> category, from_track, from_row, to_track, to_row;
  for (const Flow& f : s.flows) {
    category.push_back(f.cat);
    from_track.push_back(f.from.track), from_row.push_back(f.from.index);
    to_track.push_back(f.to.track), to_row.push_back(f.to.index);
  }
  py::dict d;
  d["category"] = new_array(category);
  d["from_track"] = new_array(from_track), d["from_row"] = new_array(from_row);
  d["to_track"] = new_array(to_track), d["to_row"] = new_array(to_row);
  return d;
}

// Counter series in long form: one row per sample.
py::dict counters(const TraceHandle& t) {
  const TraceStore& s = *t.store;
  std::vector<uint32_t> series_name;
  std::vector<int64_t> ts, pid;
  std::vector<double> value;
  for (const CounterSeries& c : s.counters)
    for (size_t i = 0; i < c.ts.size(); ++i) {
      series_name.push_back(c.name);
      pid.push_back(c.process == kNone ? -1 : s.processes[c.process].pid);
      ts.push_back(c.ts[i]), value.push_back(c.value[i]);
    }
  py::dict d;
  d["name"] = new_array(series_name), d["pid"] = new_array(pid), d["ts_ns"] = new_array(ts), d["value"] = new_array(value);
  return d;
}

py::dict iterations(const TraceHandle& t) {
  std::vector<int64_t> number, start, end;
  std::vector<uint32_t> track, row;
  for (const Iteration& it : t.store->iterations) {
    number.push_back(it.number), start.push_back(it.start), end.push_back(it.end);
    track.push_back(it.slice.track), row.push_back(it.slice.index);
  }
  py::dict d;
  d["number"] = new_array(number), d["start_ns"] = new_array(start), d["end_ns"] = new_array(end);
  d["track"] = new_array(track), d["row"] = new_array(row);
  return d;
}

}  // namespace

void bind_columns(py::module_& m) {
  auto trace = py::reinterpret_borrow<py::class_<TraceHandle, std::shared_ptr<TraceHandle>>>(m.attr("Trace"));
  trace.def("slice_columns", &slice_columns, py::arg("track"), "One track's slice columns (read-only views).")
      .def("packed_slice_columns", &packed_slice_columns, "Every track's slice columns as views, or None.")
      .def("correlation_ids", [](const TraceHandle& t) {
        std::vector<int64_t> ids;
        ids.reserve(t.store->correlations.size());
        for (const Correlation& c : t.store->correlations) ids.push_back(c.id);
        return new_array(ids);
      }, "The correlation table's ids, by row (the categories of the slices' correlation column).")
      .def("track_count", [](const TraceHandle& t) { return t.store->tracks.size(); })
      .def("rows_overlapping", [](const TraceHandle& t, uint32_t track, TimeNs t0, TimeNs t1) {
        check_track(t, track);
        return t.store->rows_overlapping(track, t0, t1);
      }, "Rows [first, last) of `track` to filter for slices meeting [t0, t1).")
      .def("strings", &strings)
      .def("tracks", &tracks)
      .def("launches", &launches)
      .def("flows", &flows)
      .def("counters", &counters)
      .def("iterations", &iterations)
      .def("args_json", [](const TraceHandle& t, uint32_t track, uint32_t row) {
        check_track(t, track);
        if (row >= t.store->slices(track).size()) throw py::index_error("row " + std::to_string(row) + " out of range");
        return text(t.store->slice_args_json({track, row}));
      }, "The args object of one slice as written (JSON text; \"\" when it has none).")
      .def("kernel_category_ids", [](const TraceHandle& t) {
        // The ids of "kernel" and "Kernel": what info counts as kernels (absent: not found).
        std::vector<StringId> ids;
        for (const char* n : {"kernel", "Kernel"})
          if (StringId id = t.store->strings.find(n); id != StringPool::kNotFound) ids.push_back(id);
        return ids;
      });
}

}  // namespace sl::python
