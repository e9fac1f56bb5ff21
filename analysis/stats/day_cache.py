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
entries live (benchreport.store.cache keeps them in the store).

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

from benchreport import __version__

from ._common import _missing

__all__ = ["CACHE_VERSION", "DayCache", "DayEntry", "day_of", "day_tokens", "passes_to_arrow",
           "passes_from_arrow", "cells_to_arrow", "cells_from_arrow"]

#: bump when what an entry holds, or how its rows are computed, changes
CACHE_VERSION = 1


@dataclass
class DayEntry:
    """One date's pass rows (`passes_to_arrow`: pass_rows' columns plus ``_small``, the row's cell
    has < 3 passes) and its cells with 3+ passes (`cells_to_arrow`), as Arrow tables: a year of
    entries is concatenated once and converted once."""

    passes: pa.Table
    cells: pa.Table


class DayCache(Protocol):
    """Where day entries are kept (the run store keeps them in STORE/.cache/cells/)."""

    def load(self, day: str, token: str) -> DayEntry | None:
        """The entry of `day` computed from inputs with this token, or None."""

    def save(self, day: str, token: str, entry: DayEntry) -> None:
        """Keep an entry (a failure to write is not an error of the analysis)."""


def day_of(dates) -> np.ndarray:
    """The date (YYYY-MM-DD) a pass row takes from a run's date (as benchreport.stats.pass_rows)."""
    return np.array([str(d)[:10] for d in dates], dtype=object)


def _row_hashes(df: pd.DataFrame | None) -> np.ndarray:
    if df is None or not len(df):
        return np.zeros(0, dtype=np.uint64)
    return pd.util.hash_pandas_object(df.astype(object), index=False).to_numpy()


def day_tokens(measurements: pd.DataFrame | None, runs: pd.DataFrame | None, labels: dict, source_token,
               *, thresholds, level: float) -> dict[str, str | None]:
    """{date: token} for every date of the runs (None where the source cannot key a date:
    that date is always computed)."""
    head = json.dumps({"version": __version__, "cache": CACHE_VERSION, "level": repr(float(level)),
                       "thresholds": {k: repr(v) for k, v in thresholds.as_dict().items()}}, sort_keys=True)
    run_days: dict[str, list[str]] = {}
    if runs is not None and len(runs):
        for rid, d in zip(runs["run_id"].astype(str), day_of(runs["date"])):
            run_days.setdefault(d, []).append(rid)
    m_hash, m_pos = _row_hashes(measurements), {}
    if measurements is not None and len(measurements):
        m_cols = ",".join(map(str, measurements.columns))
        for d, pos in pd.Series(day_of(measurements["date"])).groupby(day_of(measurements["date"]),
                                                                      sort=False).indices.items():
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
        h.update(json.dumps(sorted([r, *map(str, labels.get(r, (None, None)))] for r in run_days.get(d, [])))
                 .encode())
        out[d] = h.hexdigest()
    return out


# --------------------------------------------------------------------------- Arrow round trips
#: pass-row columns kept as objects of str or None in memory
_TEXT = ("seat", "harness", "probe", "workload", "metric", "statistic", "date", "run_id", "source", "condition")
_FLOAT = ("value", "reported", "recomputed", "ci_low", "ci_high", "ci_level", "lag1")
_INT_OR_NONE = ("concurrency", "n_obs", "n_requests", "n_failed")


def passes_to_arrow(df: pd.DataFrame) -> pa.Table:
    """A date's pass rows as Arrow (the request group key split into three columns)."""
    group = df["group"].tolist()
    arrays = {c: pa.array([None if _missing(v) else str(v) for v in df[c].tolist()], type=pa.string())
              for c in _TEXT}
    arrays["pass"] = pa.array(df["pass"].to_numpy(dtype=np.int64))
    arrays.update({c: pa.array(pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=float, na_value=np.nan))
                   for c in _FLOAT})
    arrays.update({c: pa.array([None if _missing(v) else int(v) for v in df[c].tolist()], type=pa.int64())
                   for c in _INT_OR_NONE})
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
    for c in ("seat", "harness", "probe", "workload", "concurrency", "metric", "statistic", "date", "pass",
              "run_id", "value", "reported", "recomputed", "n_obs", "n_requests", "n_failed", "ci_low",
              "ci_high", "ci_level", "lag1", "source", "condition"):
        if c in _FLOAT:
            cols[c] = t.column(c).to_numpy()
        elif c == "pass":
            cols[c] = t.column(c).to_numpy().astype(np.int64)
        else:
            cols[c] = _objects(t.column(c))
    cols["group"] = _groups(t) if t.num_rows else np.empty(0, dtype=object)
    cols = {k: cols[k] for k in ("seat", "harness", "probe", "workload", "concurrency", "metric", "statistic",
                                 "date", "pass", "run_id", "value", "reported", "recomputed", "n_obs",
                                 "n_requests", "n_failed", "ci_low", "ci_high", "ci_level", "lag1", "source",
                                 "group", "condition")}
    cols["_small"] = t.column("_small").to_numpy(zero_copy_only=False).astype(bool)
    return pd.DataFrame(cols)


_PANDAS = {pa.int64(): pd.Int64Dtype(), pa.string(): pd.StringDtype(), pa.bool_(): pd.BooleanDtype()}


def cells_to_arrow(df: pd.DataFrame) -> pa.Table:
    """Typed cell rows (string, Int64, float columns) as Arrow."""
    return pa.Table.from_pandas(df, preserve_index=False)


def cells_from_arrow(t: pa.Table, columns: list[str]) -> pd.DataFrame:
    """Typed cell rows back, with the dtypes benchreport.stats.cells gives them."""
    df = t.to_pandas(types_mapper=_PANDAS.get)
    return df.reindex(columns=columns)


# --------------------------------------------------------------------------- the cells' side
_CELL_GROUP = ["seat", "_h", "_p", "workload", "_c", "metric", "statistic", "date"]


#: fresh dates computed together (bounds the Python rows held at once on a cold year)
DAYS_PER_CHUNK = 16


def cached_pass_rows(measurements, source, runs, thresholds, level: float, cache: DayCache, columns: list[str],
                     cells_of=None):
    """(pass rows of every date, the cached cells as one frame, dates computed now, tokens): the
    dates in `cache` are read from it, the others computed (benchreport.stats.pass_rows) from
    their own measurements and request records only (`source.only(dates)`), a few dates at a time.

    With `cells_of` (a chunk's pass rows -> their 3+-pass cells, typed), each chunk's cells are
    computed at once and the chunk's dates kept in `cache` as they are done: a cold year then
    holds what a warm one does (a year of Arrow entries), never a year of rows for one loop,
    and the dates come back as cached (an empty set of dates computed now)."""
    from .pass_rows import add_sort_keys, pass_rows, run_labels

    labels = run_labels(runs)
    tokens = day_tokens(measurements, runs, labels, source.day_token, thresholds=thresholds, level=level)
    parts, cells, fresh = [], [], []
    for d, token in tokens.items():
        entry = cache.load(d, token) if token else None
        if entry is None:
            fresh.append(d)
        else:
            parts.append(_compact(entry.passes))
            cells.append(entry.cells)
    m_days = day_of(measurements["date"]) if measurements is not None and len(measurements) else None
    for i in range(0, len(fresh), DAYS_PER_CHUNK):
        chunk = fresh[i:i + DAYS_PER_CHUNK]
        m = measurements if m_days is None else measurements[np.isin(m_days, chunk)].reset_index(drop=True)
        new = pass_rows(m, source.only(chunk), runs, thresholds)
        if not len(new):
            continue
        new["_small"] = new.groupby(_CELL_GROUP, sort=False)["value"].transform("size").to_numpy() < 3
        if cells_of is None:
            parts.append(_compact(passes_to_arrow(new)))
            continue
        done = cells_of(new)
        p_days, c_days = new["date"].to_numpy(dtype=object), done["date"].astype(object).to_numpy()
        row_cols = [c for c in new.columns if c not in ("_c", "_h", "_p")]
        for d in chunk:
            entry = DayEntry(passes_to_arrow(new[p_days == d][row_cols].reset_index(drop=True)),
                             cells_to_arrow(done[c_days == d].reset_index(drop=True)))
            if tokens.get(d):
                cache.save(d, tokens[d], entry)
            parts.append(_compact(entry.passes))
            cells.append(entry.cells)
        del new, done
    if cells_of is not None:
        fresh = []
    cached = cells_from_arrow(pa.concat_tables(cells, promote_options="permissive"), columns) if cells else None
    cells.clear()
    if not parts:
        return pd.DataFrame(), cached, set(fresh), tokens, None
    table = pa.concat_tables(parts, promote_options="permissive")
    parts.clear()  # the entries as read: a year of them is hundreds of MB, not needed once sorted
    table = table.take(_order(table))  # sorted in Arrow: no second copy of a year of rows in pandas
    pa.default_memory_pool().release_unused()
    passes = add_sort_keys(passes_from_arrow(table))
    typed = typed_passes(table)
    del table
    pa.default_memory_pool().release_unused()  # hand the sorted copy's memory back (the pool keeps it)
    return passes, cached, set(fresh), tokens, typed


def _compact(t: pa.Table) -> pa.Table:
    """A day's pass rows with their text columns dictionary-encoded: a year of entries is held
    until it is sorted, and its text (seat, metric, run id, ...) repeats on every row (314 MB
    of a 10-seat year as plain strings)."""
    return pa.table({name: col.dictionary_encode() if pa.types.is_string(col.type) else col
                     for name, col in zip(t.column_names, t.columns)})


def _plain(col):
    """A column with its dictionary decoded (the values as their own type)."""
    return col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col


def _order(t: pa.Table) -> pa.Array:
    """The positions of the pass rows in the pass table's order (benchreport.stats.pass_rows.PASS_ORDER),
    a stable sort as pandas' (strings by code point, which is UTF-8 byte order)."""
    import pyarrow.compute as pc

    c = {name: _plain(t.column(name)) for name in ("seat", "harness", "probe", "workload", "concurrency", "metric",
                                                    "statistic", "date", "pass", "run_id")}
    keys = pa.table({"date": c["date"], "seat": c["seat"], "_h": pc.fill_null(c["harness"], ""),
                     "_p": pc.fill_null(c["probe"], ""), "workload": c["workload"],
                     "_c": pc.fill_null(c["concurrency"], -1), "metric": c["metric"], "statistic": c["statistic"],
                     "pass": c["pass"], "run_id": c["run_id"]})
    return pc.sort_indices(keys, sort_keys=[(k, "ascending") for k in keys.column_names])


def typed_passes(t: pa.Table) -> pd.DataFrame:
    """The pass table (benchreport.stats.cells.PASS_COLUMNS, its dtypes: string, Int64, float)
    straight from Arrow, without a Python object per cell."""
    from .cells import PASS_COLUMNS

    return pa.table({c: _plain(t.column(c)) for c in PASS_COLUMNS}).to_pandas(types_mapper=_PANDAS.get)


def save_fresh(cache: DayCache, passes: pd.DataFrame, cells: pd.DataFrame, fresh: set, tokens: dict) -> None:
    """Keep each date computed now: its pass rows and its cells with 3+ passes."""
    if not fresh:
        return
    p_days, c_days = passes["date"].to_numpy(dtype=object), cells["date"].astype(object).to_numpy()
    keep = pd.to_numeric(cells["n_passes"], errors="coerce").fillna(0).to_numpy() >= 3
    row_cols = [c for c in passes.columns if c not in ("_c", "_h", "_p")]
    for d in sorted(fresh):
        if not tokens.get(d):
            continue
        entry = DayEntry(passes_to_arrow(passes[p_days == d][row_cols].reset_index(drop=True)),
                         cells_to_arrow(cells[(c_days == d) & keep].reset_index(drop=True)))
        cache.save(d, tokens[d], entry)


def latest_of_cached(f: pd.DataFrame, passes: pd.DataFrame, latest: str) -> np.ndarray:
    """Which rows of the cached cells are on the date that describes their seat (`latest`
    "seat": the latest of its harness and probe; "cell": the cell's own latest)."""
    keys = ["seat", "_h", "_p"] if latest == "seat" else _CELL_GROUP[:-1]
    last = passes.groupby(keys, sort=False)["date"].max()
    k = pd.DataFrame({"seat": f["seat"].astype(object), "_h": f["harness"].astype(object).fillna(""),
                      "_p": f["probe"].astype(object).fillna(""), "workload": f["workload"].astype(object),
                      "_c": f["concurrency"].fillna(-1).astype("int64"), "metric": f["metric"].astype(object),
                      "statistic": f["statistic"].astype(object)})[keys]
    at = last.reindex(pd.MultiIndex.from_frame(k)).to_numpy(dtype=object)
    return at == f["date"].astype(object).to_numpy()
