"""Report tables as pandas DataFrames: the extension hands over each table as its column
names and one JSON array per column, every cell written by the CLI's own cell writer, so a
DataFrame holds exactly the values of ``sightline report --format json``."""

import json

import numpy as np
import pandas as pd

from .errors import NoSuchTable

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _column(values):
    """A column's values as the tightest exact pandas column: int64 (nullable Int64 with
    nulls), float64 (NaN for nulls), else object (strings, lists, a mix)."""
    kinds = {type(v) for v in values}
    has_null = type(None) in kinds
    kinds.discard(type(None))
    if kinds == {int} and all(_INT64_MIN <= v <= _INT64_MAX for v in values if v is not None):
        return pd.array(values, dtype="Int64") if has_null else np.array(values, dtype=np.int64)
    if kinds and kinds <= {int, float}:
        return np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    return pd.Series(values, dtype=object).to_numpy()


def frame(columns, data):
    """One DataFrame from a table's column names and its column-major JSON text."""
    if not columns:
        return pd.DataFrame()
    return frame_of_columns(dict(zip(columns, (_column(v) for v in json.loads(data)))))


def frame_of_columns(columns):
    """A DataFrame over these arrays (numpy arrays, Categoricals, pandas arrays; one length)
    without copying them: one block per column, where pd.DataFrame would stack the columns of
    one dtype into a new 2-D block (for the store's columns, a copy of the store; for report
    tables, twice the time). Through pandas' block API (pandas.core.internals.api, which pyarrow
    uses too); a pandas without it gets the plain constructor, which copies."""
    try:
        from pandas.core.internals import BlockManager
        from pandas.core.internals.api import make_block
    except ImportError:
        return pd.DataFrame(columns)
    rows = len(next(iter(columns.values())))
    blocks = [make_block(v.reshape(1, -1) if isinstance(v, np.ndarray) else v, placement=[i])
              for i, v in enumerate(columns.values())]
    return pd.DataFrame(BlockManager(blocks, [pd.Index(list(columns)), pd.RangeIndex(rows)]))


def frames(tables, wanted=None):
    """{name: DataFrame} for the extension's tables, in report order; `wanted` keeps those names,
    raising NoSuchTable (with the names there are) for one the report lacks."""
    out = {name: (columns, data) for name, columns, data in tables}
    if wanted is not None:
        for name in wanted:
            if name not in out:
                raise NoSuchTable(no_table_message(name, out))
        out = {name: out[name] for name in wanted}
    return {name: frame(columns, data) for name, (columns, data) in out.items()}


def no_table_message(name, tables):
    """The CLI's words: "no table 'NAME' (tables: a b c)"."""
    return "no table '%s' (tables:%s)" % (name, "".join(" " + t for t in tables))
