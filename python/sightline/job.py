"""sightline.Job: the ranks of one distributed run, and its report across ranks."""

import json
import warnings

import pandas as pd

from . import _sightline
from ._tables import frames
from .errors import LoadWarning
from .trace import Trace, _check_mode


class Job:
    """The rank traces of one run (from :func:`sightline.open_job`), each with its own store
    and clock, as ``sightline report DIR`` and the GUI's job tab read them.

    ``ranks`` lists the rank numbers (failed ranks included; ``rank_status()`` says which);
    ``job[rank]`` is that rank's :class:`Trace`, made when first asked for; ``report()`` gives
    every analysis per rank (each table with a ``rank`` column) and the job tables
    (``collectives``, ``stragglers``, ``clock_offsets``).
    """

    def __init__(self, core, align="auto", mode="sightline"):
        _check_mode(mode)
        self._core = core
        self.align = align
        self.mode = mode
        self._status = core.ranks()
        self._traces = {}
        self._reports = {}

    def __repr__(self):
        return "<sightline.Job %r: %d ranks>" % (self._core.source, len(self._status))

    @property
    def ranks(self):
        """The rank numbers, in order."""
        return [r["rank"] for r in self._status]

    @property
    def load_seconds(self):
        """Wall time of the parallel load of every rank."""
        return self._core.load_seconds

    def rank_status(self):
        """One row per rank: rank, path, ok, error (the CLI's line for a failed rank), load_seconds."""
        return pd.DataFrame(self._status)

    def skipped(self):
        """The files of the folder that are not ranks, with the reason: [(path, reason)]."""
        return self._core.skipped()

    def trace(self, rank):
        """The :class:`Trace` of `rank` (KeyError for a rank the job lacks, ValueError for one
        that failed to load). It keeps the job's stores alive."""
        if rank not in self._traces:
            self._traces[rank] = Trace(self._core.trace(rank), self.mode)
        return self._traces[rank]

    __getitem__ = trace

    def info(self):
        """The ``sightline info DIR --format json`` object as a dict."""
        return json.loads(self._core.info_json())

    def report(self, tables=None, mode=None):
        """The job report as ``{table name: DataFrame}``, as ``sightline report DIR --format json``:
        each single-rank table over all ranks with its ``rank`` column, then the job tables.
        `tables` and `mode` as :meth:`Trace.report`; the clock alignment is the job's ``align``."""
        mode = _check_mode(mode or self.mode)
        if tables is not None:
            tables = [tables] if isinstance(tables, str) else list(tables)
        if mode not in self._reports:
            self._reports[mode] = self._core.report(mode, [], self.align)
        return frames(self._reports[mode][0], wanted=tables)

    def report_json(self, mode=None):
        """The ``sightline report DIR --format json`` object as a dict."""
        return json.loads(self._core.report_json(_check_mode(mode or self.mode), [], self.align))


def warn_failed_ranks(job):
    """A warning per rank that did not load, in the CLI's words ("rank N failed: ...")."""
    for r in job._status:
        if not r["ok"]:
            warnings.warn("rank %d failed: %s" % (r["rank"], r["error"]), LoadWarning, stacklevel=3)
