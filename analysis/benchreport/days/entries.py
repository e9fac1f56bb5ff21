"""Each date's pass rows and cells kept between analyses, keyed by what they were computed from.

A nightly archive grows by one date at a time, and a date's pass rows depend on that date
alone: its reported figures (after exclusions), its runs' harness and probe, and its
request records. So do its cells with 3 or more passes (their interval uses their own
passes only). Cells with 1-2 passes borrow a pass variance from the cell's other dates
(benchreport.stats.cells, ``t_log_pooled``), so they are never kept: they are recomputed on
every analysis from the kept pass rows, with the other dates' variances in date order, as
a full analysis computes them.

A date's *token* is the SHA-256 of everything its rows are computed from: the
benchreport version and this module's `CACHE_VERSION`, the thresholds and the confidence
level, the date's measurement rows (their pandas row hashes), its runs' labels, and the
request source's own token for the date (the run store's file versions). A changed input
is a new token, so a stale entry is never read; `DayCache` implementations decide where
entries live (benchreport.days.store_files keeps them in the store).

Entries go through Arrow both ways: a date computed now and a date read back are the same
frame by construction (the tests check that a cold, a warm and a one-new-date analysis
give byte-identical tables).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from benchreport.format import plain_values
from benchreport.version import __version__

from benchreport.columns import PASS_COLUMNS, PASSES, arrow_to_pandas_types

__all__ = [
    "CACHE_VERSION",
    "INDEX_VERSION",
    "DayCache",
    "DayEntry",
    "PassDays",
    "day_of",
    "day_tokens",
    "passes_to_arrow",
    "passes_from_arrow",
    "cells_to_arrow",
    "cells_from_arrow",
    "typed_passes",
]

#: bump when what an entry holds, or how its rows are computed, changes
CACHE_VERSION = 2  # 2: pass rows and cells keyed by load_id too (benchreport.conditions)
#: the version of the store's index of what an analysis keeps of each date (benchreport.days.scan.DayFacts)
INDEX_VERSION = 3  # 3: the kept pass rows say which are correlated in send order (issue 30)


@dataclass
class DayEntry:
    """One date's pass rows (`passes_to_arrow`: pass_rows' columns plus ``_small``, the row's cell
    has < 3 passes) and its cells with 3+ passes (`cells_to_arrow`), as Arrow tables: a year of
    entries is concatenated once and converted once."""

    passes: pa.Table
    cells: pa.Table


class DayCache(Protocol):
    """Where day entries are kept (the run store keeps them in STORE/.cache/cells/)."""

    def has(self, day: str, token: str) -> bool:
        """Whether an entry of `day` computed from inputs with this token is kept."""

    def load_passes(self, day: str, token: str, columns: list | None = None) -> pa.Table | None:
        """The pass rows of that entry (some columns of them), or None when missing or damaged."""

    def load_cells(self, day: str, token: str) -> pa.Table | None:
        """The 3+-pass cells of that entry, or None when missing or damaged."""

    def save(self, day: str, token: str, entry: DayEntry) -> bool:
        """Keep an entry; True when kept (a failure to write is not an error of the analysis:
        the entry is then held in memory)."""

    def load_index(self) -> dict | None:
        """{date: benchreport.days.scan.DayFacts} as last kept, or None."""

    def save_index(self, facts: dict) -> bool:
        """Keep what the analysis keeps of each date (one index for all of them)."""


def day_of(dates) -> np.ndarray:
    """The date (YYYY-MM-DD) a pass row takes from a run's date (as benchreport.stats.pass_rows)."""
    # the text's own slicing (a year of dates one Python str at a time was a second of an analysis)
    return pd.Series(dates, dtype=object).astype(str).str.slice(0, 10).to_numpy(dtype=object)


def _row_hashes(df: pd.DataFrame | None) -> np.ndarray:
    if df is None or not len(df):
        return np.zeros(0, dtype=np.uint64)
    # a row's hash depends on that row alone (index=False): hashed a block of rows at a time, the
    # same numbers without a whole year's table as Python objects at once (300 MB at 50 seats)
    step = _HASH_ROWS
    return np.concatenate(
        [
            pd.util.hash_pandas_object(df.iloc[i : i + step].astype(object), index=False).to_numpy()
            for i in range(0, len(df), step)
        ]
    )


#: rows hashed at once by `_row_hashes`
_HASH_ROWS = 32_768


def day_tokens(
    measurements: pd.DataFrame | None,
    runs: pd.DataFrame | None,
    labels: dict,
    source_token,
    *,
    thresholds,
    level: float,
) -> dict[str, str | None]:
    """{date: token} for every date of the runs (None where the source cannot key a date:
    that date is always computed)."""
    head = json.dumps(
        {
            "version": __version__,
            "cache": CACHE_VERSION,
            "level": repr(float(level)),
            "thresholds": {k: repr(v) for k, v in thresholds.as_dict().items()},
        },
        sort_keys=True,
    )
    run_days: dict[str, list[str]] = {}
    if runs is not None and len(runs):
        for rid, d in zip(runs["run_id"].astype(str), day_of(runs["date"])):
            run_days.setdefault(d, []).append(rid)
    m_hash, m_pos = _row_hashes(measurements), {}
    if measurements is not None and len(measurements):
        m_cols = ",".join(map(str, measurements.columns))
        for d, pos in (
            pd.Series(day_of(measurements["date"])).groupby(day_of(measurements["date"]), sort=False).indices.items()
        ):
            m_pos[d] = pos
    else:
        m_cols = ""
    out = {}
    for d in sorted(set(run_days) | set(m_pos)):
        src = source_token(d)
        if src is None:
            out[d] = None
            continue
        h = hashlib.sha256(head.encode())
        h.update(f"\x00{d}\x00{src}\x00{m_cols}\x00".encode())
        h.update(np.ascontiguousarray(m_hash[m_pos[d]]).tobytes() if d in m_pos else b"")
        h.update(
            json.dumps(sorted([r, *map(str, labels.get(r, (None, None, None)))] for r in run_days.get(d, []))).encode()
        )
        out[d] = h.hexdigest()
    return out


# --------------------------------------------------------------------------- Arrow round trips
#: pass-row columns kept as objects of str or None in memory
_TEXT = (
    "seat",
    "harness",
    "probe",
    "load_id",
    "workload",
    "metric",
    "statistic",
    "date",
    "run_id",
    "source",
    "condition",
)
_FLOAT = ("value", "reported", "recomputed", "ci_low", "ci_high", "ci_level", "lag1")
_INT_OR_NONE = ("concurrency", "n_obs", "n_requests", "n_failed")


def passes_to_arrow(df: pd.DataFrame) -> pa.Table:
    """A date's pass rows as Arrow (the request group key split into three columns)."""
    group = df["group"].tolist()
    arrays = {c: pa.array(plain_values(df[c], str), type=pa.string()) for c in _TEXT}
    arrays["pass"] = pa.array(df["pass"].to_numpy(dtype=np.int64))
    arrays.update(
        {c: pa.array(pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan)) for c in _FLOAT}
    )
    arrays.update({c: pa.array(plain_values(df[c], int), type=pa.int64()) for c in _INT_OR_NONE})
    arrays["group_run"] = pa.array([None if g is None else str(g[0]) for g in group], type=pa.string())
    arrays["group_workload"] = pa.array([None if g is None else str(g[1]) for g in group], type=pa.string())
    arrays["group_c"] = pa.array([None if g is None else int(g[2]) for g in group], type=pa.int64())
    arrays["_small"] = pa.array(df["_small"].to_numpy(dtype=bool))
    return pa.table(arrays)


def _objects(col) -> np.ndarray:
    """A column as Python objects, one object per distinct value (a year of pass rows repeats a few
    thousand strings a million times: one str each was most of an analysis' memory)."""
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    arr = arr.dictionary_encode()
    values = np.array(arr.dictionary.to_pylist() + [None], dtype=object)
    return values[arr.indices.fill_null(-1).to_numpy(zero_copy_only=False)]


def _codes(col) -> tuple[np.ndarray, list]:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    arr = arr.dictionary_encode()
    return arr.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64), arr.dictionary.to_pylist()


def _groups(t: pa.Table) -> np.ndarray:
    """The request group keys (run, workload, concurrency), one tuple per distinct group."""
    (ir, vr), (iw, vw), (ic, vc) = (_codes(t.column(c)) for c in ("group_run", "group_workload", "group_c"))
    code = ((ir + 1) * (len(vw) + 1) + (iw + 1)) * (len(vc) + 1) + (ic + 1)
    uniq, inverse = np.unique(code, return_inverse=True)
    keys = np.empty(len(uniq) + 1, dtype=object)
    for n, u in enumerate(uniq.tolist()):
        rest, k = divmod(u, len(vc) + 1)
        r, w = divmod(rest, len(vw) + 1)
        keys[n] = None if r == 0 else (vr[r - 1], vw[w - 1] if w else None, vc[k - 1] if k else None)
    return keys[inverse.reshape(-1)]


def passes_from_arrow(t: pa.Table) -> pd.DataFrame:
    """The pass rows as pass_rows gives them (objects of str/int/None; floats with NaN)."""
    cols = {}
    for c in (
        "seat",
        "harness",
        "probe",
        "load_id",
        "workload",
        "concurrency",
        "metric",
        "statistic",
        "date",
        "pass",
        "run_id",
        "value",
        "reported",
        "recomputed",
        "n_obs",
        "n_requests",
        "n_failed",
        "ci_low",
        "ci_high",
        "ci_level",
        "lag1",
        "source",
        "condition",
    ):
        if c in _FLOAT:
            cols[c] = t.column(c).to_numpy()
        elif c == "pass":
            cols[c] = t.column(c).to_numpy().astype(np.int64)
        else:
            cols[c] = _objects(t.column(c))
    cols["group"] = _groups(t) if t.num_rows else np.empty(0, dtype=object)
    cols = {
        k: cols[k]
        for k in (
            "seat",
            "harness",
            "probe",
            "load_id",
            "workload",
            "concurrency",
            "metric",
            "statistic",
            "date",
            "pass",
            "run_id",
            "value",
            "reported",
            "recomputed",
            "n_obs",
            "n_requests",
            "n_failed",
            "ci_low",
            "ci_high",
            "ci_level",
            "lag1",
            "source",
            "group",
            "condition",
        )
    }
    cols["_small"] = t.column("_small").to_numpy(zero_copy_only=False).astype(bool)
    return pd.DataFrame(cols)


def cells_to_arrow(df: pd.DataFrame) -> pa.Table:
    """Typed cell rows (string, Int64, float columns) as Arrow."""
    return pa.Table.from_pandas(df, preserve_index=False)


def cells_from_arrow(t: pa.Table, columns: list[str]) -> pd.DataFrame:
    """Typed cell rows back, with the dtypes benchreport.stats.cells gives them."""
    df = t.to_pandas(types_mapper=arrow_to_pandas_types().get)
    return df.reindex(columns=columns)


# --------------------------------------------------------------------------- the year, one date at a time
CELL_GROUP = ["seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic", "date"]
#: the columns of a pass row's cell key (with the sort keys: "" for no harness, probe or load, -1 for no
#: concurrency)
CELL_KEY = CELL_GROUP[:-1]


#: fresh dates computed together (bounds the Python rows held at once on a cold year)
DAYS_PER_CHUNK = 16


class PassDays:
    """Every date's pass rows, kept by date and read one date at a time: the pass table of a run
    store, which a year of nightly dates makes too large to hold (6 million rows at 50 seats).

    Each date's rows are in the pass table's order (benchreport.stats.pass_rows.PASS_ORDER: date
    first), so the table is the dates' rows one after another: `frame()` gives it whole (what
    `Analysis.passes` shows when asked), `typed(day)` one date of it (tables/passes.csv is
    written date by date). Rows live in the day cache (`cache`, keyed by `tokens`), or in
    `held` for a date the cache could not keep."""

    def __init__(self, cache, tokens: dict, held: dict, counts: dict, recompute=None):
        self.cache, self.tokens, self.held, self.counts = cache, dict(tokens), held, dict(counts)
        self.days = sorted(self.counts)
        #: a date's rows computed again when its entry cannot be read (in the analysing process only)
        self.recompute = recompute

    def __getstate__(self) -> dict:
        return {**self.__dict__, "recompute": None}  # the analysis' data are not carried to a kernel

    def __len__(self) -> int:
        return int(sum(self.counts.values()))

    def arrow(self, day: str) -> pa.Table:
        """One date's rows as kept (pass-row columns and ``_small``)."""
        if day in self.held:
            return self.held[day]
        t = self.cache.load_passes(day, self.tokens[day])
        if t is None and self.recompute is not None:
            t = self.recompute(day)
        if t is None:
            raise RuntimeError(f"the day cache lost the pass rows of {day} while this analysis was open; analyse again")
        return t

    def typed(self, day: str) -> pd.DataFrame:
        """One date's rows as the pass table has them (benchreport.stats.cells.PASS_COLUMNS, typed)."""
        return typed_passes(self.arrow(day))

    def derived(self, day: str, name: str, compute) -> pa.Table:
        """`compute(typed rows of the date)`, an Arrow table, kept beside the date's entry as `name`
        when the cache can keep it: a value of a date's pass rows alone (the session statistics of
        benchreport.stats.sessions) is then computed once per date, not once per build (what
        `compute` returns when computed is what is returned when kept)."""
        token = self.tokens.get(day)
        keeps = day not in self.held and token is not None and hasattr(self.cache, "load_derived")
        if keeps:
            kept = self.cache.load_derived(day, token, name)
            if kept is not None:
                return kept
        value = compute(self.typed(day))
        if keeps:
            self.cache.save_derived(day, token, name, value)
        return value

    def frame(self) -> pd.DataFrame:
        """Every date's rows, as one pass table (typed, in its order)."""
        if not self.days:
            return typed_passes(None)
        return typed_passes(
            pa.concat_tables([self.arrow(d).select(PASS_COLUMNS) for d in self.days], promote_options="permissive")
        )


def typed_passes(t: pa.Table | None) -> pd.DataFrame:
    """The pass table (benchreport.columns.PASSES) straight from Arrow, without a Python object
    per cell."""
    return PASSES.empty() if t is None else PASSES.from_arrow(t)
