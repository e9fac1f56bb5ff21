"""A measured figure in a sentence, from one place: a table row named by its id (issue 42).

A row id is a table's name and the values of the columns that tell its rows apart (`ROW_KEYS`),
as the table `tables/<name>.csv` writes them. `figure` finds that one row of the analysis's table
and formats one of its columns with the report's rounding (`benchreport.format`, the tables'
own), `interval` two of them, `pass_values` a cell's values per pass. A sentence that gives a
measured figure (the abstract, the headline) takes it from here, so it cannot state a figure the
tables do not hold: a row id that names no row, or more than one, is an error, not a guess.
`tests/report_text.unsourced_figures` checks the rendered text the other way round: each figure
of the prose is found in tables/*.csv or flags.json.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from benchreport import format as fmt
from benchreport.stats.common import parse_values

#: the columns that tell a table's rows apart, as the analysis and tables/<name>.csv hold them
ROW_KEYS = {
    "cells": (
        "seat",
        "workload",
        "concurrency",
        "metric",
        "statistic",
        "harness",
        "probe",
        "load_id",
        "date",
        "condition",
    ),
    "comparisons": (
        "kind",
        "baseline",
        "candidate",
        "workload",
        "concurrency",
        "metric",
        "statistic",
        "harness",
        "probe",
        "load_id",
        "baseline_date",
        "candidate_date",
    ),
}


@dataclass(frozen=True)
class RowId:
    """One row of one of the report's tables: the table's name and its key columns' values as text."""

    table: str
    key: tuple[str, ...]

    def __str__(self) -> str:
        named = ", ".join(f"{k}={v}" for k, v in zip(ROW_KEYS[self.table], self.key) if v)
        return f"{self.table}[{named}]"


def _key_text(value) -> str:
    """A key column's value as the row id holds it ('' when missing; 16, not 16.0)."""
    return fmt.text(value)


def row_id(table: str, row) -> RowId:
    """The id of `row` (a row of the analysis's `table`, or any mapping with its key columns)."""
    if table not in ROW_KEYS:
        raise ValueError(f"no table named {table!r}; the quotable tables: {', '.join(ROW_KEYS)}")
    get = row.get if hasattr(row, "get") else (lambda k, default=None: getattr(row, k, default))
    return RowId(table, tuple(_key_text(get(k)) for k in ROW_KEYS[table]))


def _index(a, table: str) -> tuple[pd.DataFrame, dict[tuple, list[int]]]:
    """The analysis's table and its rows by id, built once per analysis and table."""
    cache = a.__dict__.setdefault("_quote_index", {})
    frame = getattr(a, table, None)  # the analysis holds each table under its name
    if frame is None:
        frame = pd.DataFrame(columns=list(ROW_KEYS[table]))
    held = cache.get(table)
    if held is not None and held[0] is frame:
        return held
    positions: dict[tuple, list[int]] = {}
    for i, r in enumerate(frame.itertuples(index=False)):
        positions.setdefault(row_id(table, r._asdict()).key, []).append(i)
    cache[table] = (frame, positions)
    return frame, positions


def row(a, rid: RowId) -> pd.Series:
    """The one row `rid` names; LookupError when it names none or several."""
    frame, positions = _index(a, rid.table)
    found = positions.get(rid.key, [])
    if len(found) != 1:
        raise LookupError(f"{rid} names {len(found)} rows of the analysis's {rid.table} table, not one")
    return frame.iloc[found[0]]


def find(a, table: str, **fields) -> RowId | None:
    """The id of the one row of `table` whose columns equal `fields` (as text); None for none or several."""
    frame, positions = _index(a, table)
    keys = ROW_KEYS[table]
    want = {keys.index(k): _key_text(v) for k, v in fields.items()}
    hits = [k for k in positions if all(k[i] == v for i, v in want.items())]
    return RowId(table, hits[0]) if len(hits) == 1 and len(positions[hits[0]]) == 1 else None


def figure(a, rid: RowId, column: str, style: Callable = fmt.num) -> str:
    """`column` of the row `rid` names, formatted by `style` ('–' when the row holds none)."""
    return style(row(a, rid).get(column))


def interval(a, rid: RowId, low: str = "ci_low", high: str = "ci_high", style: Callable = fmt.num) -> str:
    """'[low, high]' from two columns of the row `rid` names ('' when either is missing)."""
    r = row(a, rid)
    return fmt.ci(r.get(low), r.get(high), style)


def pass_values(a, rid: RowId, style: Callable = fmt.num) -> list[str]:
    """A cell's value in each pass, formatted (a row of the cells table; [] when it records none)."""
    r = row(a, rid)
    return [style(v) for v in parse_values(r.get("values"))] if "values" in r.index else []
