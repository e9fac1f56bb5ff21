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
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from benchreport import __version__

from ._common import _missing

__all__ = ["CACHE_VERSION", "DayCache", "DayEntry", "DayScan", "PassDays", "day_of", "day_tokens", "scan_days",
           "notable_passes", "request_counts", "passes_to_arrow", "passes_from_arrow", "cells_to_arrow",
           "cells_from_arrow", "typed_passes"]

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

    def has(self, day: str, token: str) -> bool:
        """Whether an entry of `day` computed from inputs with this token is kept."""

    def load_passes(self, day: str, token: str, columns: list | None = None) -> pa.Table | None:
        """The pass rows of that entry (some columns of them), or None when missing or damaged."""

    def load_cells(self, day: str, token: str) -> pa.Table | None:
        """The 3+-pass cells of that entry, or None when missing or damaged."""

    def save(self, day: str, token: str, entry: DayEntry) -> bool:
        """Keep an entry; True when kept (a failure to write is not an error of the analysis:
        the entry is then held in memory)."""


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


# --------------------------------------------------------------------------- the year, one date at a time
_CELL_GROUP = ["seat", "_h", "_p", "workload", "_c", "metric", "statistic", "date"]
#: the columns of a pass row's cell key (with the sort keys: "" for no harness or probe, -1 for no concurrency)
_CELL_KEY = _CELL_GROUP[:-1]


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

    def __init__(self, cache, tokens: dict, held: dict, counts: dict):
        self.cache, self.tokens, self.held, self.counts = cache, dict(tokens), held, dict(counts)
        self.days = sorted(self.counts)

    def __len__(self) -> int:
        return int(sum(self.counts.values()))

    def arrow(self, day: str) -> pa.Table:
        """One date's rows as kept (pass-row columns and ``_small``)."""
        if day in self.held:
            return self.held[day]
        t = self.cache.load_passes(day, self.tokens[day])
        if t is None:
            raise RuntimeError(f"the day cache lost the pass rows of {day} while this analysis was open; "
                               "analyse again")
        return t

    def typed(self, day: str) -> pd.DataFrame:
        """One date's rows as the pass table has them (benchreport.stats.cells.PASS_COLUMNS, typed)."""
        return typed_passes(self.arrow(day))

    def frame(self) -> pd.DataFrame:
        """Every date's rows, as one pass table (typed, in its order)."""
        from .cells import PASS_COLUMNS

        if not self.days:
            return typed_passes(None)
        return typed_passes(pa.concat_tables([self.arrow(d).select(PASS_COLUMNS) for d in self.days],
                                             promote_options="permissive"))


@dataclass
class DayScan:
    """What an analysis keeps of a year of day entries (`scan_days`): never the year's pass rows.

    ``described``: {(seat, harness, probe): date}, the date that describes each seat as each
    harness and probe measured it (its latest, as benchreport.stats.cells.described_runs);
    ``small``: pass rows (as pass_rows gives them, with sort keys) of every cell with 1-2 passes,
    which borrow a variance from their other dates and so are estimated on every analysis;
    ``variances``: {cell key: {date: LogVariance}} of those cells' dates; ``latest_cells``: the
    3+-pass cells of the described dates (all columns); ``dated``: the 3+-pass cells of every
    date (benchreport.stats.cells.DATED_COLUMNS); ``notable``: the pass rows the flags read
    (`notable_passes`); ``request_counts``: `request_counts` of the whole pass table."""

    tokens: dict
    days: PassDays
    described: dict
    small: pd.DataFrame
    variances: dict
    latest_cells: pd.DataFrame
    dated: pd.DataFrame
    notable: pd.DataFrame
    request_counts: pd.DataFrame
    #: where each date's cells are (the cache, or `held`), for rows of `dated` wanted whole
    held_cells: dict = field(default_factory=dict)


def notable_passes(passes: pd.DataFrame | pa.Table, lag1_limit: float):
    """The pass rows a flag may be raised on: a mean whose requests' lag-1 autocorrelation exceeds
    `lag1_limit` (sample.correlated_requests), and a reported figure beside a recomputed one that
    is not the same number (import.figure_mismatch: the flag then applies its own rounding rule).
    A mask over `passes` (a pass table, or a date's Arrow rows)."""
    if isinstance(passes, pa.Table):
        import pyarrow.compute as pc

        lag = passes.column("lag1").to_numpy()
        stat = pc.equal(_plain(passes.column("statistic")), "mean").to_numpy(zero_copy_only=False)
        rep, rec = passes.column("reported").to_numpy(), passes.column("recomputed").to_numpy()
    else:
        lag = pd.to_numeric(passes["lag1"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        stat = (passes["statistic"].astype(object) == "mean").to_numpy(dtype=bool)
        rep = pd.to_numeric(passes["reported"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        rec = pd.to_numeric(passes["recomputed"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    stat = np.asarray(stat, dtype=bool) & ~np.isnan(lag)
    with np.errstate(invalid="ignore"):
        correlated = stat & (lag > lag1_limit)
    return correlated | (np.isfinite(rep) & np.isfinite(rec) & (rep != rec))


REQUEST_COUNT_COLUMNS = ["run_id", "workload", "concurrency", "n_requests"]


def request_counts(passes: pd.DataFrame) -> pd.DataFrame:
    """Request records per (run, workload, concurrency), as each pass row computed from them says
    (the run store holds only the described runs' records in memory; the report's runs table
    counts every run's)."""
    if passes is None or not len(passes) or "n_requests" not in passes:
        return pd.DataFrame({"run_id": pd.Series(dtype="string"), "workload": pd.Series(dtype="string"),
                             "concurrency": pd.Series(dtype="Int64"), "n_requests": pd.Series(dtype="Int64")})
    q = passes[(passes["source"].astype(object) == "requests").to_numpy(dtype=bool) & passes["n_requests"].notna()]
    return q.drop_duplicates(["run_id", "workload", "concurrency"])[REQUEST_COUNT_COLUMNS].reset_index(drop=True)


def _store(cache: DayCache, day: str, token: str | None, entry: DayEntry, held: dict, held_cells: dict) -> None:
    """Keep a date's entry in the cache, or in memory when the cache cannot keep it."""
    if not (token and cache.save(day, token, entry) is True):
        held[day], held_cells[day] = entry.passes, entry.cells


def scan_days(measurements, source, runs, thresholds, level: float, cache: DayCache, cells_of) -> DayScan:
    """Every date's pass rows and 3+-pass cells, from `cache` where it has them and computed
    (`benchreport.stats.pass_rows`, then `cells_of`) a few dates at a time where not, then read
    back one date at a time for what the analysis keeps (`DayScan`). The dates are read twice:
    first which seat each harness and probe describes on which date and which cells have 1-2
    passes, then everything else; a year of pass rows is never held at once."""
    from .cells import DATED_COLUMNS
    from .pass_rows import pass_rows, run_labels

    labels = run_labels(runs)
    tokens = day_tokens(measurements, runs, labels, source.day_token, thresholds=thresholds, level=level)
    held: dict[str, pa.Table] = {}
    held_cells: dict[str, pa.Table] = {}
    fresh = [d for d, token in tokens.items() if not (token and cache.has(d, token))]
    m_days = day_of(measurements["date"]) if measurements is not None and len(measurements) else None
    for i in range(0, len(fresh), DAYS_PER_CHUNK):
        chunk = fresh[i:i + DAYS_PER_CHUNK]
        m = measurements if m_days is None else measurements[np.isin(m_days, chunk)].reset_index(drop=True)
        new = pass_rows(m, source.only(chunk), runs, thresholds)
        if len(new):
            new["_small"] = new.groupby(_CELL_GROUP, sort=False)["value"].transform("size").to_numpy() < 3
            done = cells_of(new)
            p_days, c_days = new["date"].to_numpy(dtype=object), done["date"].astype(object).to_numpy()
            row_cols = [c for c in new.columns if c not in ("_c", "_h", "_p")]
        for d in chunk:
            if not len(new) or not (p_days == d).any():
                continue  # a date without pass rows (its runs hold nothing to estimate)
            entry = DayEntry(passes_to_arrow(new[p_days == d][row_cols].reset_index(drop=True)),
                             cells_to_arrow(done[c_days == d].reset_index(drop=True)))
            _store(cache, d, tokens.get(d), entry, held, held_cells)
        del new
    days = [d for d in sorted(tokens) if d in held or (tokens[d] and cache.has(d, tokens[d]))]

    def passes_of(d, columns=None):
        t = held.get(d)
        if t is None:
            t = cache.load_passes(d, tokens[d], columns)
            if t is not None:
                return t
            t = _recompute(d)  # damaged since it was written
        return t if columns is None else t.select(columns)

    def _recompute(d):
        """A date whose kept entry cannot be read: computed again, kept again, and held for this analysis."""
        m = measurements if m_days is None else measurements[m_days == d].reset_index(drop=True)
        new = pass_rows(m, source.only([d]), runs, thresholds)
        new["_small"] = new.groupby(_CELL_GROUP, sort=False)["value"].transform("size").to_numpy() < 3
        row_cols = [c for c in new.columns if c not in ("_c", "_h", "_p")]
        entry = DayEntry(passes_to_arrow(new[row_cols].reset_index(drop=True)),
                         cells_to_arrow(cells_of(new).reset_index(drop=True)))
        if tokens.get(d):
            cache.save(d, tokens[d], entry)
        held[d], held_cells[d] = entry.passes, entry.cells
        return entry.passes

    # one reading of every date: what the analysis keeps of it
    described: dict[tuple, str] = {}
    small_keys: set = set()
    counts: dict[str, int] = {}
    small_parts, dated, notable, counted = [], [], [], []
    last_cells: dict[str, pa.Table] = {}  # the cells of dates still the latest of some seat, harness and probe
    key_columns = ("seat", "harness", "probe", "workload", "concurrency", "metric", "statistic")
    for d in days:
        t = passes_of(d)
        counts[d] = t.num_rows
        for k in _distinct_rows(t, ("seat", "harness", "probe")):
            described[k] = d  # dates ascend: the last one seen is the latest
        is_small = t.column("_small").to_numpy(zero_copy_only=False).astype(bool)
        if is_small.any():
            small = t.filter(pa.array(is_small))
            small_parts.append(small)
            small_keys.update(_distinct_rows(small, key_columns))
        keep = notable_passes(t, thresholds.lag1_limit)
        if keep.any():
            notable.append(t.filter(pa.array(keep)))
        counted.append(_counted(t))
        c = held_cells[d] if d in held_cells else cache.load_cells(d, tokens[d])
        if c is None:
            _recompute(d)
            c = held_cells[d]
        if c.num_rows:
            dated.append(c.select(DATED_COLUMNS))
            last_cells[d] = c
        live = set(described.values())
        for x in [x for x in last_cells if x not in live]:
            del last_cells[x]
    latest = []
    for d, c in sorted(last_cells.items()):
        mask = _key_mask(c, ("seat", "harness", "probe"), {k for k, v in described.items() if v == d})
        if mask.any():
            latest.append(c.filter(pa.array(mask)))
    # the cells with 1-2 passes borrow the pass variance of their other dates: a second reading,
    # of their cells' rows only, where there are any
    from .cells import _variances  # the same per-date variances a full analysis pools

    variances: dict = {}
    for d in days if small_keys else ():
        t = passes_of(d)
        mine = _key_mask(t, key_columns, small_keys)
        if mine.any():
            for k, per_date in _variances(add_sort_keys_of(passes_from_arrow(t.filter(pa.array(mine))))).items():
                variances.setdefault(k, {}).update(per_date)
    return DayScan(tokens=tokens, days=PassDays(cache, tokens, held, counts), described=described,
                   small=(add_sort_keys_of(passes_from_arrow(pa.concat_tables(small_parts, promote_options="permissive")))
                          if small_parts else None),
                   variances=variances, latest_cells=_cells_frame(latest), dated=_cells_frame(dated, DATED_COLUMNS),
                   notable=typed_passes(pa.concat_tables(notable, promote_options="permissive") if notable else None),
                   request_counts=_counts_frame(counted), held_cells=held_cells)


def add_sort_keys_of(df: pd.DataFrame) -> pd.DataFrame:
    from .pass_rows import add_sort_keys

    return add_sort_keys(df)


def _key_values(t: pa.Table, columns) -> list[list]:
    out = []
    for c in columns:
        col = _plain(t.column(c))
        vals = col.to_pylist()
        if c in ("harness", "probe"):
            vals = ["" if v is None else v for v in vals]
        elif c == "concurrency":
            vals = [-1 if v is None else int(v) for v in vals]
        out.append(vals)
    return out


def _distinct_rows(t: pa.Table, columns) -> set:
    """The distinct keys of some columns of Arrow rows (harness and probe "" when none, concurrency -1)."""
    if not t.num_rows:
        return set()
    grouped = t.select(list(columns)).group_by(list(columns)).aggregate([])
    return set(zip(*_key_values(grouped, columns)))


def _key_mask(t: pa.Table, columns, keys: set) -> np.ndarray:
    """Which Arrow rows have their key (`_distinct_rows`' form) in `keys`."""
    if not t.num_rows or not keys:
        return np.zeros(t.num_rows, dtype=bool)
    return np.fromiter((k in keys for k in zip(*_key_values(t, columns))), dtype=bool, count=t.num_rows)


def _counted(t: pa.Table) -> pa.Table:
    """`request_counts` of one date's Arrow rows (each group's first row)."""
    import pyarrow.compute as pc

    mask = pc.and_(pc.equal(_plain(t.column("source")), "requests"), pc.is_valid(t.column("n_requests")))
    rows = t.filter(pc.fill_null(mask, False)).select(["run_id", "workload", "concurrency", "n_requests"])
    if not rows.num_rows:
        return rows
    keys = rows.select(["run_id", "workload", "concurrency"]).append_column("_i", pa.array(np.arange(rows.num_rows)))
    first = keys.group_by(["run_id", "workload", "concurrency"], use_threads=False).aggregate([("_i", "min")])
    return rows.take(pa.array(np.sort(first.column("_i_min").to_numpy())))


def _counts_frame(parts: list) -> pd.DataFrame:
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return request_counts(None)
    t = pa.concat_tables(parts, promote_options="permissive")
    return pa.table({c: _plain(t.column(c)) for c in REQUEST_COUNT_COLUMNS}).to_pandas(types_mapper=_PANDAS.get)


def _cells_frame(parts: list, columns: list | None = None) -> pd.DataFrame:
    from .cells import CELL_COLUMNS, CELL_EXTRA_COLUMNS

    columns = columns or CELL_COLUMNS + CELL_EXTRA_COLUMNS
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return None
    return cells_from_arrow(pa.concat_tables(parts, promote_options="permissive"), columns)


def _plain(col):
    """A column with its dictionary decoded (the values as their own type)."""
    return col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col


def typed_passes(t: pa.Table | None) -> pd.DataFrame:
    """The pass table (benchreport.stats.cells.PASS_COLUMNS, its dtypes: string, Int64, float)
    straight from Arrow, without a Python object per cell."""
    from .cells import PASS_COLUMNS, _typed, _empty_frame

    if t is None:
        return _typed(_empty_frame(PASS_COLUMNS), PASS_COLUMNS)
    return pa.table({c: _plain(t.column(c)) for c in PASS_COLUMNS}).to_pandas(types_mapper=_PANDAS.get)
