"""sightline.Trace: one loaded trace, its report as DataFrames and its store as columns."""

import json

import numpy as np
import pandas as pd

from . import _sightline
from ._tables import frame_of_columns, frames

_KINDS = ("cpu", "gpu", "async")
_NO_END = np.iinfo(np.int64).max


class Trace:
    """One loaded trace (from :func:`sightline.open`, or a rank of a :class:`sightline.Job`).

    Everything is read from the store Sightline's CLI and GUI use: ``info()`` and ``report()``
    give what ``sightline info`` / ``sightline report`` print as JSON, as a dict and as pandas
    DataFrames; ``slices()``, ``kernels()``, ``launches()``, ``flows()``, ``counters()``,
    ``tracks()`` and ``iterations()`` give the events themselves. Times are integer nanoseconds
    since the trace start (``info()["origin_ns"]`` style absolute times are in ``info()``).

    Columns taken straight from the store are read-only numpy views on its arrays, not copies;
    they keep the store alive, so a DataFrame stays valid after the Trace is gone.
    """

    def __init__(self, core, mode="sightline"):
        _check_mode(mode)
        self._core = core
        self.mode = mode
        self._categories = None
        self._correlations = None
        self._reports = {}
        self.cache_notices = []

    def __repr__(self):
        return "<sightline.Trace %r: %d tracks, %s>" % (self.path, self._core.track_count(), self.origin)

    @property
    def path(self):
        """The file the trace was opened from."""
        return self._core.path

    @property
    def load_seconds(self):
        """How long loading took (from the file, or from the snapshot cache)."""
        return self._core.load_seconds

    @property
    def origin(self):
        """Where the store came from: "trace file", "snapshot file" or "cache"."""
        return self._core.origin

    # --- what `info` and `report` print -------------------------------------------------------

    def info(self):
        """The ``sightline info --format json`` object as a dict: counts of events, tracks,
        devices, iterations, import issues (with this load's ``load_seconds``)."""
        return json.loads(self._core.info_json())

    def report(self, tables=None, mode=None):
        """Every analysis of ``sightline report``, as ``{table name: DataFrame}``.

        The DataFrames have the columns, names and values of ``report --format json`` (docs
        schema), cell for cell: times are µs as there, lists stay lists, nulls are NaN/NA/None.

        tables  names of the tables wanted (default: all). When every name is an analysis
                (``sightline.analysis_names()``), only those analyses run, as ``--only``.
        mode    "sightline" (exact, default: the Trace's mode) or "hta" (reproduce HTA 0.6.1).
        Raises NoSuchTable (a KeyError) naming the tables there are for a name not in the report.
        """
        mode = mode or self.mode
        if tables is not None:
            tables = [tables] if isinstance(tables, str) else list(tables)
            names = _sightline.analysis_names()
            if mode not in self._reports and all(t in names for t in tables):
                return frames(self._core.report(mode, tables)[0], wanted=tables)
        return frames(self._full_report(mode)[0], wanted=tables)

    def table(self, name, mode=None):
        """One table of :meth:`report` as a DataFrame."""
        return self.report([name], mode)[name]

    def notes(self, mode=None):
        """The report's notes (analyses skipped and why, adjustments), as ``report`` lists them."""
        return list(self._full_report(mode or self.mode)[1])

    def report_json(self, mode=None):
        """The ``sightline report --format json`` object itself, as a dict (``mode``, ``rank``,
        ``trace``, one list of row objects per table, ``notes``)."""
        return json.loads(self._core.report_json(_check_mode(mode or self.mode)))

    def _full_report(self, mode):
        _check_mode(mode)
        if mode not in self._reports:
            self._reports[mode] = self._core.report(mode)
        return self._reports[mode]

    # --- the store as columns -------------------------------------------------------------------

    def tracks(self):
        """One row per track (index: the track number the other tables use): kind ("cpu",
        "gpu", "async"), name, pid, process, tid, device, stream, slices, instants."""
        return pd.DataFrame(self._core.tracks())

    def slices(self, track=None, kind=None, t0=None, t1=None):
        """Slices as a DataFrame: start_ns, dur_ns, name and category (categoricals over the
        trace's string pool), track (uint16 up to 65,536 tracks), depth, lane, correlation (a
        categorical over the trace's correlation ids; NaN: none), row (in its track).

        track   a track number or a list of them (default: every track)
        kind    "cpu", "gpu" or "async": only tracks of that kind
        t0, t1  only slices meeting [t0, t1) (ns since the trace start)

        The whole trace (or one whole track): start_ns, dur_ns, depth, lane and the codes of
        name, category and correlation are zero-copy, read-only views on the store, which lays
        every track's columns out end to end in one block; only track and row are made. Some
        tracks, or a time window, copy the rows asked for.
        """
        return self._slice_frame(self._pick_tracks(track, kind), t0, t1)

    def kernels(self, t0=None, t1=None):
        """The GPU kernels (category "kernel", or "Kernel" in older traces) as :meth:`slices`
        gives them: as many rows as ``info()`` counts kernels."""
        ids = np.array(self._core.kernel_category_ids(), dtype=np.uint32)
        return self._slice_frame(range(self._core.track_count()), t0, t1, lambda c: np.isin(c["category"], ids))

    def launches(self):
        """Each GPU activity with the CPU call that launched it (same correlation id):
        correlation, launch_track, launch_row, launch_start_ns, launch_name, kernel_track,
        kernel_row, kernel_start_ns, kernel_dur_ns, kernel_name, latency_ns (launch start to
        GPU start)."""
        d = self._core.launches()
        for name in ("launch_name", "kernel_name"):
            d[name] = self._categorical(d[name])
        df = pd.DataFrame(d)
        df["latency_ns"] = df["kernel_start_ns"] - df["launch_start_ns"]
        return df

    def flows(self):
        """Flow arrows bound to slices: category, from_track, from_row, to_track, to_row."""
        d = self._core.flows()
        d["category"] = self._categorical(d["category"])
        return pd.DataFrame(d)

    def counters(self):
        """Counter samples in long form: name (the series), pid, ts_ns, value."""
        d = self._core.counters()
        d["name"] = self._categorical(d["name"])
        return pd.DataFrame(d)

    def iterations(self):
        """The ProfilerStep#N iterations: number, start_ns, end_ns, and the slice (track, row)."""
        return pd.DataFrame(self._core.iterations())

    def args(self, row):
        """One slice's args as a dict (``{}`` when it has none). `row` is a row of a
        :meth:`slices` DataFrame (anything with ``track`` and ``row``), or a (track, row) pair."""
        if isinstance(row, tuple):
            track, index = row
        else:
            track, index = row["track"], row["row"]
        text = self._core.args_json(int(track), int(index))
        return json.loads(text) if text else {}

    # --- figures --------------------------------------------------------------------------------

    def render(self, path, view="timeline", **options):
        """Writes the figure ``sightline render TRACE --view VIEW -o PATH`` writes (SVG, PDF or
        PNG by the file name) and returns what it drew ("N elements (...)").

        view      timeline (default), histogram, breakdown, idle, roofline, memory, critical-path
        options   start_ns, end_ns (timeline range), tracks (row filter), title, max_depth, top,
                  instance, annotation (critical-path), theme ("paper", "light", "dark"),
                  width (px), scale (PNG pixels per px)
        """
        return self._core.render(str(path), view, **options)

    # --- helpers --------------------------------------------------------------------------------

    def _pick_tracks(self, track, kind):
        count = self._core.track_count()
        if track is None:
            picked = range(count)
        elif isinstance(track, (int, np.integer)):
            picked = [int(track)]
        else:
            picked = [int(t) for t in track]
        if kind is None:
            return picked
        if kind not in _KINDS:
            raise ValueError("kind wants one of %s, got %r" % (", ".join(_KINDS), kind))
        kinds = self._core.tracks()["kind"]
        return [t for t in picked if kinds[t] == kind]

    def _slice_frame(self, tracks, t0, t1, keep=None):
        columns = ("start_ns", "dur_ns", "name", "category", "track", "depth", "lane", "correlation", "row")
        merged = self._packed_slices(tracks, t0, t1, keep)
        if merged is None:
            parts = [self._track_slices(t, t0, t1, keep) for t in tracks]
            if len(parts) == 1:
                merged = parts[0]  # one track: the store's own arrays
            else:
                merged = {k: np.concatenate([p[k] for p in parts]) if parts else np.empty(0, np.int64) for k in columns}
        data = {k: merged[k] for k in columns}
        data["name"] = self._categorical(merged["name"])
        data["category"] = self._categorical(merged["category"])
        data["correlation"] = self._correlation_categorical(merged["correlation"])
        return frame_of_columns(data)

    def _packed_slices(self, tracks, t0, t1, keep):
        """Every track's slices from the store's packed columns (views; a filter copies only the
        rows it keeps), or None for some tracks only, or a store whose columns are not packed."""
        if len(tracks) != self._core.track_count() or list(tracks) != list(range(len(tracks))):
            return None
        c = self._core.packed_slice_columns()
        if c is None:
            return None
        mask = None
        if t0 is not None or t1 is not None:
            mask = _meets(c["start_ns"], c["dur_ns"], t0, t1)
        if keep is not None:
            kept = keep(c)
            mask = kept if mask is None else mask & kept
        return c if mask is None else {k: v[mask] for k, v in c.items()}

    def _track_slices(self, t, t0, t1, keep):
        c = self._core.slice_columns(t)
        c["track"] = np.full(len(c["start_ns"]), t, dtype=self._track_dtype())
        c["row"] = np.arange(len(c["start_ns"]), dtype=np.uint32)
        mask = self._window(t, c, t0, t1)
        if keep is not None:
            kept = keep(c)
            mask = kept if mask is None else mask & kept
        return c if mask is None else {k: v[mask] for k, v in c.items()}

    def _window(self, track, c, t0, t1):
        if t0 is None and t1 is None:
            return None
        first, last = self._core.rows_overlapping(track, 0 if t0 is None else int(t0), _NO_END if t1 is None else int(t1))
        mask = np.zeros(len(c["start_ns"]), dtype=bool)
        mask[first:last] = _meets(c["start_ns"][first:last], c["dur_ns"][first:last], t0, t1)
        return mask

    def _track_dtype(self):
        return np.uint16 if self._core.track_count() <= 65536 else np.uint32

    def _correlation_categorical(self, rows):
        """The correlation ids of slices from their rows in the correlation table (kNone: no
        correlation, NaN): a Categorical over the table's ids, whose codes are the rows as the
        store holds them (no copy while the table has 32,768 ids or more)."""
        if self._correlations is None:
            ids = self._core.correlation_ids()
            index = pd.Index(ids)
            self._correlations = (index, None) if index.is_unique else _factorized(ids)
        categories, remap = self._correlations
        codes = np.asarray(rows)
        if codes.dtype == np.uint32:
            codes = codes.view(np.int32)  # table rows are below 2**31; kNone reads as -1: missing
        if remap is not None:
            codes = np.where(codes < 0, -1, remap[np.maximum(codes, 0)])
        return pd.Categorical.from_codes(codes, categories=categories)

    def _categorical(self, ids):
        categories, remap = self._string_categories()
        codes = np.asarray(ids)
        if remap is not None:
            codes = remap[codes]
        if codes.dtype == np.uint32:
            codes = codes.view(np.int32)  # string ids are below 2**31: the same numbers, no copy
        return pd.Categorical.from_codes(codes, categories=categories)

    def _string_categories(self):
        # The pool's strings are distinct; decoding bytes that are not UTF-8 can make two equal.
        if self._categories is None:
            strings = self._core.strings()
            index = pd.Index(strings, dtype=object)
            if index.is_unique:
                self._categories = (index, None)
            else:
                codes, uniques = pd.factorize(np.array(strings, dtype=object))
                self._categories = (pd.Index(uniques, dtype=object), codes)
        return self._categories


def _check_mode(mode):
    if mode not in ("sightline", "hta"):
        raise ValueError("mode wants 'sightline' or 'hta', got %r" % (mode,))
    return mode


def _meets(start, dur, t0, t1):
    """Slices meeting [t0, t1): starting before t1 and ending after t0 (a zero-length one at or
    after t0 counts)."""
    lo, hi = (0 if t0 is None else int(t0)), (_NO_END if t1 is None else int(t1))
    return (start < hi) & ((start + dur > lo) | (start >= lo))


def _factorized(ids):
    """(distinct ids, row → code) for a correlation table holding one id on several rows."""
    codes, uniques = pd.factorize(ids)
    return pd.Index(uniques), codes
