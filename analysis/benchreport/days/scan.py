"""Reading a run store's day cache for an analysis (benchreport.days.entries), one date at a time.

`scan_days` computes the dates the cache does not hold (pass rows, then 3+-pass cells, a few
dates at a time, kept as they are done) and gathers what the analysis keeps of every date
(`DayScan`); a year of pass rows is never held at once. What it keeps of a date is itself
kept (`DayFacts`, by the date's token) in one index beside the entries, so an analysis of a
year reads one index and the entries of the dates that changed, not two files a date.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from benchreport.columns import arrow_to_pandas_types
from benchreport.stats.cells import CELL_COLUMNS, CELL_EXTRA_COLUMNS, DATED_COLUMNS, date_variances
from benchreport.stats.notable import (
    DEPENDENT,
    REQUEST_COUNT_COLUMNS,
    dependent_mask,
    notable_passes,
    plain_column,
    request_counts,
)
from benchreport.stats.pass_rows import add_sort_keys, pass_rows, run_labels

from .entries import (
    CELL_GROUP,
    DAYS_PER_CHUNK,
    DayCache,
    DayEntry,
    PassDays,
    cells_from_arrow,
    cells_to_arrow,
    day_of,
    day_tokens,
    passes_from_arrow,
    passes_to_arrow,
    typed_passes,
)

#: the columns naming each way a seat was measured (the date that describes it is its latest)
_DESCRIBED = ("seat", "harness", "probe", "load_id")
#: the pass rows' sort keys (benchreport.stats.pass_rows.add_sort_keys), not kept in the cache
_SORT_KEYS = ("_c", "_h", "_p", "_l")

__all__ = ["DayScan", "DayFacts", "scan_days"]


@dataclass
@dataclass
class DayScan:
    """What an analysis keeps of a year of day entries (`scan_days`): never the year's pass rows.

    ``described``: {(seat, harness, probe, load_id): date}, the date that describes each seat as
    each harness, probe and load measured it (its latest, as benchreport.stats.cells.described_runs);
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
    #: a date's cells (from the cache, computed again where its entry cannot be read)
    cells_on: object = None


@dataclass
class DayFacts:
    """What an analysis keeps of one date's entry, kept beside the entries by the date's token:
    its pass rows' count, the (seat, harness, probe, load_id) they describe, whether any cell has 1-2
    passes, the rows the flags read (`notable_passes`), the request counts (`request_counts`)
    and the dated columns of its 3+-pass cells (benchreport.stats.cells.DATED_COLUMNS)."""

    token: str
    n: int
    triples: list
    small: bool
    notable: pa.Table
    counted: pa.Table
    dated: pa.Table
    #: the entry's files when these facts were read from them (benchreport.days.store_files: size, mtime)
    stamp: list | None = None


def _store(cache: DayCache, day: str, token: str | None, entry: DayEntry, held: dict, held_cells: dict) -> None:
    """Keep a date's entry in the cache, or in memory when the cache cannot keep it."""
    if not (token and cache.save(day, token, entry) is True):
        held[day], held_cells[day] = entry.passes, entry.cells


def _facts(token: str, t: pa.Table, c: pa.Table, thresholds) -> DayFacts:

    small = t.column("_small").to_numpy(zero_copy_only=False).astype(bool)
    dep = dependent_mask(t, thresholds)
    keep = notable_passes(t, thresholds)
    notable = t.filter(pa.array(keep)).append_column(DEPENDENT, pa.array(dep[keep], type=pa.bool_()))
    return DayFacts(
        token,
        t.num_rows,
        sorted(_distinct_rows(t, _DESCRIBED)),
        bool(small.any()),
        notable,
        _counted(t),
        c.select(DATED_COLUMNS),
    )


def scan_days(measurements, source, runs, thresholds, level: float, cache: DayCache, cells_of) -> DayScan:
    """Every date's pass rows and 3+-pass cells, from `cache` where it has them and computed
    (`benchreport.stats.pass_rows`, then `cells_of`) a few dates at a time where not; then what
    the analysis keeps of each date (`DayFacts`: from the cache's index where its token is the
    date's, else from the date's entry), the cells of the described dates, and, where cells
    have 1-2 passes, their rows and the pass variances of their other dates."""
    tokens = day_tokens(measurements, runs, run_labels(runs), source.day_token, thresholds=thresholds, level=level)
    reader = _DayReader(measurements, source, runs, thresholds, cache, cells_of, tokens)
    reader.compute([d for d, token in tokens.items() if not (token and cache.has(d, token))])
    days = [d for d in sorted(tokens) if d in reader.held or (tokens[d] and cache.has(d, tokens[d]))]
    facts = reader.facts(days)
    described: dict[tuple, str] = {}
    for d in days:
        for k in facts[d].triples:
            described[tuple(k)] = d  # dates ascend: the last one seen is the latest
    small, variances = reader.small_cells(days, facts)
    return DayScan(
        tokens=tokens,
        days=PassDays(cache, tokens, reader.held, {d: facts[d].n for d in days}, reader.passes_of),
        described=described,
        small=small,
        variances=variances,
        latest_cells=_cells_frame(reader.latest_cells(described)),
        dated=_cells_frame([facts[d].dated for d in days], DATED_COLUMNS),
        notable=_notable_frame([facts[d].notable for d in days if facts[d].notable.num_rows]),
        request_counts=_counts_frame([facts[d].counted for d in days]),
        held_cells=reader.held_cells,
        cells_on=reader.cells_on,
    )


#: a pass row's cell without its date, as the day entries' columns name it
_KEY_COLUMNS = ("seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic")


class _DayReader:
    """The dates of one analysis: computed where the cache lacks them (`compute`), read from it
    or from what this analysis computed (`held`) where not, and recomputed where a kept entry
    can no longer be read."""

    def __init__(self, measurements, source, runs, thresholds, cache: DayCache, cells_of, tokens: dict):
        self.measurements, self.source, self.runs, self.thresholds = measurements, source, runs, thresholds
        self.cache, self.cells_of, self.tokens = cache, cells_of, tokens
        self.held: dict[str, pa.Table] = {}
        self.held_cells: dict[str, pa.Table] = {}
        has_rows = measurements is not None and len(measurements)
        self.m_days = day_of(measurements["date"]) if has_rows else None

    def _pass_rows(self, days: list) -> pd.DataFrame:
        m = self.measurements
        if self.m_days is not None:
            m = m[np.isin(self.m_days, days)].reset_index(drop=True)
        new = pass_rows(m, self.source.only(days), self.runs, self.thresholds)
        if len(new):
            new["_small"] = new.groupby(CELL_GROUP, sort=False)["value"].transform("size").to_numpy() < 3
        return new

    def compute(self, fresh: list) -> None:
        """The dates the cache does not hold, a few at a time: pass rows, cells, kept."""
        for i in range(0, len(fresh), DAYS_PER_CHUNK):
            chunk = fresh[i : i + DAYS_PER_CHUNK]
            new = self._pass_rows(chunk)
            if not len(new):
                continue  # dates without pass rows (their runs hold nothing to estimate)
            done = self.cells_of(new)
            p_days, c_days = new["date"].to_numpy(dtype=object), done["date"].astype(object).to_numpy()
            row_cols = [c for c in new.columns if c not in _SORT_KEYS]
            for d in chunk:
                if (p_days == d).any():
                    entry = DayEntry(
                        passes_to_arrow(new[p_days == d][row_cols].reset_index(drop=True)),
                        cells_to_arrow(done[c_days == d].reset_index(drop=True)),
                    )
                    _store(self.cache, d, self.tokens.get(d), entry, self.held, self.held_cells)
            del new

    def passes_of(self, d: str) -> pa.Table:
        t = self.held.get(d)
        if t is None:
            t = self.cache.load_passes(d, self.tokens[d])
            if t is None:
                t = self._recompute(d)  # damaged since it was written
        return t

    def cells_on(self, d: str) -> pa.Table:
        c = self.held_cells.get(d)
        if c is None:
            c = self.cache.load_cells(d, self.tokens[d])
            if c is None:
                self._recompute(d)
                c = self.held_cells[d]
        return c

    def _recompute(self, d: str) -> pa.Table:
        """A date whose kept entry cannot be read: computed again, kept again, and held for this analysis."""
        new = self._pass_rows([d])
        row_cols = [c for c in new.columns if c not in _SORT_KEYS]
        entry = DayEntry(
            passes_to_arrow(new[row_cols].reset_index(drop=True)),
            cells_to_arrow(self.cells_of(new).reset_index(drop=True)),
        )
        if self.tokens.get(d):
            self.cache.save(d, self.tokens[d], entry)
        self.held[d], self.held_cells[d] = entry.passes, entry.cells
        return entry.passes

    def facts(self, days: list) -> dict:
        """{date: DayFacts}: from the cache's index where it is the date's, else read; the index kept."""
        index, tokens, cache = self.cache.load_index() or {}, self.tokens, self.cache
        facts: dict[str, DayFacts] = {}
        for d in days:
            f = index.get(d)
            if (
                f is None
                or f.token != tokens[d]
                or d in self.held
                or f.stamp is None
                or f.stamp != cache.stamp(d, f.token)
            ):
                f = _facts(tokens[d] or "", self.passes_of(d), self.cells_on(d), self.thresholds)
            facts[d] = f
        if tokens and any(index.get(d) is not facts[d] for d in days) or set(index) - set(days):
            cache.save_index({d: f for d, f in facts.items() if d not in self.held and tokens.get(d)})
        return facts

    def latest_cells(self, described: dict) -> list:
        """The 3+-pass cells of the dates that describe each seat."""
        latest = []
        for d in sorted(set(described.values())):
            c = self.cells_on(d)
            mask = _key_mask(c, _DESCRIBED, {k for k, v in described.items() if v == d})
            if mask.any():
                latest.append(c.filter(pa.array(mask)))
        return latest

    def small_cells(self, days: list, facts: dict) -> tuple:
        """(the rows of cells with 1-2 passes, {cell key: {date: LogVariance}} of their other
        dates): such cells borrow the pass variance of their other dates."""
        small_parts, small_keys = [], set()
        for d in days:
            if facts[d].small:
                t = self.passes_of(d)
                small = t.filter(pa.array(t.column("_small").to_numpy(zero_copy_only=False).astype(bool)))
                small_parts.append(small)
                small_keys.update(_distinct_rows(small, _KEY_COLUMNS))
        variances: dict = {}
        for d in days if small_keys else ():
            t = self.passes_of(d)
            mine = _key_mask(t, _KEY_COLUMNS, small_keys)
            if mine.any():
                for k, per_date in date_variances(
                    add_sort_keys_of(passes_from_arrow(t.filter(pa.array(mine))))
                ).items():
                    variances.setdefault(k, {}).update(per_date)
        rows = (
            add_sort_keys_of(passes_from_arrow(pa.concat_tables(small_parts, promote_options="permissive")))
            if small_parts
            else None
        )
        return rows, variances


def _notable_frame(notable: list) -> pd.DataFrame:
    """The kept pass rows the flags read, with whether each is correlated in send order."""
    notable_t = pa.concat_tables(notable, promote_options="permissive") if notable else None
    notable_df = typed_passes(notable_t)
    notable_df[DEPENDENT] = (
        notable_t.column(DEPENDENT).to_numpy(zero_copy_only=False).astype(bool)
        if notable_t is not None
        else np.zeros(0, dtype=bool)
    )
    return notable_df


def add_sort_keys_of(df: pd.DataFrame) -> pd.DataFrame:

    return add_sort_keys(df)


def _key_values(t: pa.Table, columns) -> list[list]:
    out = []
    for c in columns:
        col = plain_column(t.column(c))
        vals = col.to_pylist()
        if c in ("harness", "probe", "load_id"):
            vals = ["" if v is None else v for v in vals]
        elif c == "concurrency":
            vals = [-1 if v is None else int(v) for v in vals]
        out.append(vals)
    return out


def _distinct_rows(t: pa.Table, columns) -> set:
    """The distinct keys of some columns of Arrow rows (harness, probe and load "" when none, concurrency -1)."""
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

    mask = pc.and_(pc.equal(plain_column(t.column("source")), "requests"), pc.is_valid(t.column("n_requests")))
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
    return pa.table({c: plain_column(t.column(c)) for c in REQUEST_COUNT_COLUMNS}).to_pandas(
        types_mapper=arrow_to_pandas_types().get
    )


def _cells_frame(parts: list, columns: list | None = None) -> pd.DataFrame:

    columns = columns or CELL_COLUMNS + CELL_EXTRA_COLUMNS
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return None
    return cells_from_arrow(pa.concat_tables(parts, promote_options="permissive"), columns)
