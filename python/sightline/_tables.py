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
    values = json.loads(data)
    return pd.DataFrame({name: _column(v) for name, v in zip(columns, values)}, columns=list(columns))


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
