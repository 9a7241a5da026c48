"""Sightline for Python: GPU traces as pandas DataFrames, over the same native core as the
``sightline`` command (its loader, store, analyses, jobs, diff and figures).

    import sightline
    t = sightline.open("trace.json.gz")       # Kineto JSON/.gz, Nsight .sqlite/.nsys-rep, .slsnap
    t.info()                                  # dict: what `sightline info --format json` prints
    tables = t.report()                       # {name: DataFrame}: `sightline report --format json`
    tables["kernel_breakdown"].head()
    t.slices(kind="gpu")                      # the events: zero-copy columns where the store allows
    job = sightline.open_job("run/")          # the ranks of one run; job.report() with `rank`
    sightline.diff("control.json.gz", "test.json.gz")["regressions"]
    t.render("timeline.svg")                  # the figures of `sightline render`

Built for Debian's /usr/bin/python3 with python3-pandas and python3-numpy. Loading and the
analyses run without the GIL (other threads go on; Ctrl-C stops a load). A file that cannot be
read raises :class:`LoadError` with the file, byte offset, line and column and the message the
CLI prints; a cut-off file loads the events before the cut with a :class:`LoadWarning`.
"""

import json
import os
import threading
import warnings

from . import _sightline
from .errors import LoadError, LoadWarning, NoSuchTable
from .fleet_file import Fleet
from .job import Job, warn_failed_ranks
from .trace import Trace, _check_mode
from ._tables import frames

__version__ = _sightline.version
__all__ = ["open", "open_job", "open_fleet", "diff", "diff_json", "analysis_names", "Trace", "Job", "Fleet", "LoadError", "LoadWarning",
           "NoSuchTable", "__version__"]


def open(path, *, cache=True, mode="sightline"):
    """Opens a trace file and returns its :class:`Trace`.

    path   a Kineto/Chrome JSON trace (.json, .json.gz), an Nsight Systems report (.sqlite,
           .sqlite.gz, .nsys-rep), a Sightline snapshot (.slsnap) or a PyTorch memory snapshot
    cache  read and write the snapshot cache (~/.cache/sightline, as the CLI; SIGHTLINE_NO_CACHE
           turns it off everywhere)
    mode   the Trace's default report mode: "sightline" (exact) or "hta" (reproduce HTA 0.6.1)

    Raises LoadError (what the CLI prints after "sightline: ") when the file cannot be read;
    warns with LoadWarning (a cut-off file, no GPU activity) when it loads with a caveat.
    """
    _check_mode(mode)
    core, error, warned, notices = _sightline.load(os.fspath(path), cache)
    if error is not None:
        raise LoadError(error.pop("text"), **error)
    for line in warned:
        warnings.warn(line, LoadWarning, stacklevel=2)
    trace = Trace(core, mode)
    trace.cache_notices = list(notices)  # cached entries discarded (stale, damaged), and why
    return trace


def open_fleet(path, *, mode="sightline"):
    """Opens a fleet file (``sightline fleet ... -o RUN.slfleet``) and returns its :class:`Fleet`:
    the job tables (``collectives``, ``stragglers``, ``clock_offsets``, as ``report DIR``) and the
    fleet's (``ranks``, ``outliers``, ``nodes``) as DataFrames, without reading any trace.
    Raises LoadError (what and at which byte) for a cut or damaged file."""
    return Fleet(path, mode)


def open_job(where, align="auto", *, cache=True, mode="sightline"):
    """Opens the ranks of one run, loaded in parallel, and returns its :class:`Job`.

    where  a folder of rank traces (every .json, .json.gz, .slsnap in it), or a list of files
    align  the job clock, as ``report --align``: "auto" (offsets above 50 µs), "collectives", "none"

    Raises LoadError when there is nothing to load (no folder, no traces, two files of one
    rank); a rank that fails to load stays in the job, with a LoadWarning.
    """
    if align not in ("auto", "collectives", "none"):
        raise ValueError("align wants 'auto', 'collectives' or 'none', got %r" % (align,))
    target = os.fspath(where) if isinstance(where, (str, os.PathLike)) else [os.fspath(p) for p in where]
    core, error = _sightline.load_job(target, cache)
    if error is not None:
        raise LoadError(error, file=target if isinstance(target, str) else "", message=error)
    job = Job(core, align, mode)
    warn_failed_ranks(job)
    return job


def _as_trace(t):
    return t if isinstance(t, Trace) else open(t)


def _both(a, b):
    """Both traces, two paths loading at once (each load is mostly one thread)."""
    if isinstance(a, Trace) or isinstance(b, Trace):
        return _as_trace(a), _as_trace(b)
    out = {}
    errors = {}

    def load(key, path):
        try:
            out[key] = open(path)
        except BaseException as e:  # re-raised below, in the caller's thread
            errors[key] = e

    other = threading.Thread(target=load, args=("b", b))
    other.start()
    load("a", a)
    other.join()
    for key in ("a", "b"):
        if key in errors:
            raise errors[key]
    return out["a"], out["b"]


def diff(a, b, *, mode="sightline", iteration_a=None, iteration_b=None, device="all", short_names=False, tables=None):
    """Compares two runs as ``sightline diff A B`` does: ``{table name: DataFrame}`` with the
    columns and values of ``diff --format json`` (ops, ops_diff, and in Sightline mode summary,
    iterations, aligned, added_ops, removed_ops, regressions, improvements, ...).

    a, b   Traces, or paths to open (both at once)
    iteration_a, iteration_b  the ProfilerStep numbers to compare (default: as the CLI)
    device "all", "cpu" or "gpu" (ops diff);  short_names: compare names without templates
    Raises ValueError (the CLI's message) for an iteration a trace lacks; warns with
    LoadWarning when the runs used different GPUs.
    """
    ta, tb = _both(a, b)
    tabs, notes, gpu_warning = _sightline.diff(ta._core, tb._core, _check_mode(mode), iteration_a, iteration_b, device,
                                               short_names)
    if gpu_warning:
        warnings.warn(gpu_warning, LoadWarning, stacklevel=2)
    return frames(tabs, wanted=tables)


def diff_json(a, b, *, mode="sightline", iteration_a=None, iteration_b=None, device="all", short_names=False):
    """The ``sightline diff A B --format json`` object itself, as a dict."""
    ta, tb = _both(a, b)
    return json.loads(_sightline.diff(ta._core, tb._core, _check_mode(mode), iteration_a, iteration_b, device, short_names,
                                      True))


def analysis_names():
    """The analyses ``Trace.report(tables=[...])`` can run alone (as ``report --only``)."""
    return list(_sightline.analysis_names())
