"""A fleet file (``sightline fleet ... -o RUN.slfleet``) opened in Python: the job and fleet
tables as DataFrames, each rank's status and source path, and a rank's full Trace on demand."""

import os

from . import _sightline
from .errors import LoadError
from .trace import _check_mode
from ._tables import frames


class Fleet:
    """The summaries of a run's ranks reduced into one file (from :func:`sightline.open_fleet`).

    ``report()`` gives the tables ``sightline report RUN.slfleet`` prints — ``collectives``,
    ``stragglers``, ``clock_offsets`` (equal to ``report DIR``'s), ``ranks``, ``outliers`` and
    ``nodes`` — as DataFrames; ``ranks`` lists the rank numbers; ``rank_status()`` each rank's
    status, source path and error; ``open_rank(r)`` loads that rank's trace from its source path.
    No trace is read until a rank is opened.
    """

    def __init__(self, path, mode="sightline"):
        _check_mode(mode)
        tables, notes, ranks, source, error = _sightline.read_fleet(os.fspath(path), mode)
        if error is not None:
            raise LoadError(error, file=os.fspath(path), message=error)
        self.path = os.fspath(path)
        self.mode = mode
        self.source = source
        self.notes = list(notes)
        self._tables = tables
        self._ranks = [{"rank": r, "status": s, "path": p, "error": e} for r, s, p, e in ranks]

    def __repr__(self):
        return "<sightline.Fleet %r: %d ranks>" % (self.path, len(self._ranks))

    @property
    def ranks(self):
        """The rank numbers, in order (failed ranks included)."""
        return [r["rank"] for r in self._ranks]

    def rank_status(self):
        """Per rank: ``{"rank", "status" ("ok" or "failed"), "path", "error"}``."""
        return [dict(r) for r in self._ranks]

    def report(self, tables=None):
        """``{table name: DataFrame}`` with the columns and values of ``sightline report
        RUN.slfleet --format json``; ``tables`` keeps only those names."""
        return frames(self._tables, wanted=tables)

    def table(self, name):
        """One table of :meth:`report` as a DataFrame."""
        return self.report(tables=[name])[name]

    def open_rank(self, rank, *, cache=True):
        """The full :class:`Trace` of one rank, loaded from the source path the fleet recorded."""
        from . import open as open_trace
        for r in self._ranks:
            if r["rank"] == rank:
                return open_trace(r["path"], cache=cache, mode=self.mode)
        raise KeyError("no rank %r in the fleet (ranks %s)" % (rank, self.ranks))
