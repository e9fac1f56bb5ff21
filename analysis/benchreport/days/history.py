"""The history of a run store, kept date by date: the walk resumes where it stopped, and a year of
dated verdicts is never held at once.

`history_days` walks the dates of `benchreport.stats.history` (the same verdicts, the same rows)
but keeps each date's walked rows in a cache keyed by the digest of every input up to that
date, and the series' level state after the last date: a new night walks one date. What the
report and the flags read of the table is gathered into a `HistorySummary` (the dated
regressions and improvements with what the next date said of them, each cell's latest row,
the counts); `HistoryDays` reads the table one date at a time (tables/history.csv, the figure's
panels) or whole when asked (`Analysis.history`). `summarise_history` gives the same summary of
a table held in memory, so every route reads one kind of thing.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pyarrow as pa

from benchreport.stats.history import (
    WALK_KEY,
    HistoryDayCache,
    HistoryRule,
    input_digests,
    multi_date_cells,
    rows_to_arrow,
    walk,
    walk_input,
    typed_from_arrow,
)
from benchreport.stats.history_summary import (
    DECIDED,
    KEY,
    PANEL,
    HistorySummary,
    change_status,
    concurrencies_of,
    panels_of,
    plain_key_value,
    summarise_history,
    values_of,
)

__all__ = ["HistoryDays", "history_days"]


class HistoryDays:
    """A run store's history table, one date at a time: each date's walked rows (from the cache or
    `held`), less the cells measured on one date only (`dropped`: {date: keys})."""

    def __init__(self, cache, digests: dict, held: dict, dropped: dict, counts: dict):
        self.cache, self.digests, self.held, self.dropped = cache, dict(digests), held, dropped
        self.counts = {d: n for d, n in counts.items() if n}
        self.days = sorted(self.counts)

    def __len__(self) -> int:
        return int(sum(self.counts.values()))

    def arrow(self, day: str) -> pa.Table:
        """One date's walked rows (every cell, ``_follows`` included)."""
        if day in self.held:
            return self.held[day]
        t = self.cache.load_rows(day, self.digests[day])
        if t is None:
            raise RuntimeError(f"the history cache lost the rows of {day} while this analysis was open; analyse again")
        return t

    def _kept(self, day: str, t: pa.Table) -> pa.Table:
        drop = self.dropped.get(day)
        return t.filter(pa.array(_keep_mask(t, drop), type=pa.bool_())) if drop else t

    def typed(self, day: str, *, follows: bool = False) -> pd.DataFrame:
        """One date's rows of the table (HISTORY_COLUMNS, typed; and ``_follows`` when asked)."""
        t = self._kept(day, self.arrow(day))
        out = typed_from_arrow(t)
        if follows:
            out["_follows"] = t.column("_follows").to_numpy(zero_copy_only=False).astype(bool)
        return out

    def frame(self) -> pd.DataFrame:
        """The whole table, by date then cell."""
        if not self.days:
            return summarise_history(None).latest
        return typed_from_arrow(pa.concat_tables([self._kept(d, self.arrow(d)) for d in self.days]))

    def panel_rows(self, panels) -> pd.DataFrame:
        """Every row of some (seat, metric, statistic) panels, by date then cell (a figure's data)."""
        import pyarrow.compute as pc

        wanted = {tuple(map(str, p)) for p in panels}
        parts = []
        for d in self.days:
            t = self._kept(d, self.arrow(d))
            seats = {p[0] for p in wanted}
            t = t.filter(pc.is_in(t.column("seat"), pa.array(sorted(seats), type=pa.string())))
            if not t.num_rows:
                continue
            mask = [k in wanted for k in zip(*[t.column(c).to_pylist() for c in PANEL])]
            t = t.filter(pa.array(mask, type=pa.bool_()))
            if t.num_rows:
                parts.append(t)
        if not parts:
            return summarise_history(None).latest
        return typed_from_arrow(pa.concat_tables(parts))


def _keep_mask(t: pa.Table, drop: set) -> list[bool]:
    """Which walked rows are not of the cells in `drop` (keys as `plain_key_value` gives them)."""
    keys = zip(*[[plain_key_value(v, c) for v in t.column(c).to_pylist()] for c in KEY])
    return [k not in drop for k in keys]


def history_days(
    dated: pd.DataFrame, *, rule: HistoryRule, cache: HistoryDayCache, day_tokens: dict | None = None
) -> tuple[HistoryDays, HistorySummary, dict]:
    """`benchreport.stats.history.history` for a run store: (the table, its summary, {date: token of
    the date's rows of the table}, by which tables/history.csv keeps each date's lines).

    The walk resumes after the last date the cache saw when every input up to it is unchanged
    (its digest: the rule and each date's rows, or their day tokens) and every earlier date's
    rows are still kept; otherwise it walks from the start. Same rows as `history`."""
    d = walk_input(dated) if dated is not None and len(dated) else None
    if d is None or not len(d):
        cache.resumed_after = None
        return HistoryDays(cache, {}, {}, {}, {}), summarise_history(None), {}
    digests = input_digests(d, rule, day_tokens)
    dates = sorted(digests)
    state = cache.load_state()
    resumed = (
        state is not None
        and digests.get(state["upto"]) == state["digest"]
        and all(cache.has_rows(x, digests[x]) for x in dates if x <= state["upto"])
    )
    series = state["series"] if resumed else {}
    pieces = dict(state["pieces"]) if resumed else {}
    marked = [state["marked"]] if resumed and state["marked"] is not None and state["marked"].num_rows else []
    cache.resumed_after = state["upto"] if resumed else None
    start = int(np.searchsorted(d["date"].to_numpy(dtype=object), state["upto"], side="right")) if resumed else 0
    held: dict[str, pa.Table] = {}
    walked = False
    for date, rows in walk(d, series, rule, start):
        t = rows_to_arrow(rows)
        if cache.save_rows(date, digests[date], t) is not True:
            held[date] = t
        pieces[date] = {"n": t.num_rows, "verdicts": _verdict_counts(t)}
        m = _marked(t)
        if m.num_rows:
            marked.append(m)
        walked = True
    marked = pa.concat_tables(marked) if marked else None
    if walked or not resumed:
        keep = max(rule.window, rule.min_level)  # all a level ever reads of its nights
        for per_seat in series.values():
            for s in per_seat.values():
                s.trim(keep)
        cache.save_state(
            {"upto": dates[-1], "digest": digests[dates[-1]], "series": series, "pieces": pieces, "marked": marked}
        )
    multi = multi_date_cells(d)
    single = d.loc[~multi, ["date", *KEY]]
    dropped: dict[str, set] = {}
    for r in single.itertuples(index=False):
        dropped.setdefault(r.date, set()).add(tuple(plain_key_value(getattr(r, c), c) for c in KEY))
    counts = d.assign(_m=multi).groupby("date", sort=True)["_m"].sum().astype(int).to_dict()
    days = HistoryDays(cache, {x: digests[x] for x in dates}, held, dropped, counts)
    tokens = {
        x: hashlib.sha256((digests[x] + "\x00" + repr(sorted(dropped.get(x, ())))).encode()).hexdigest() for x in dates
    }
    return days, _summary_of_days(days, d if multi.all() else d[multi], pieces, marked), tokens


def _verdict_counts(t: pa.Table) -> dict:
    import pyarrow.compute as pc

    return {v.as_py(): int(n.as_py()) for v, n in zip(*pc.value_counts(t.column("verdict")).flatten())}


def _marked(t: pa.Table) -> pa.Table:
    """The walked rows the summary's decided rows come from: a regression or an improvement, and
    the row after one (what the next date said of it)."""
    import pyarrow.compute as pc

    mask = pc.or_(pc.is_in(t.column("verdict"), pa.array(DECIDED)), t.column("_follows"))
    return t.filter(pc.fill_null(mask, False))


def _summary_of_days(days: HistoryDays, kept: pd.DataFrame, pieces: dict, marked: pa.Table | None) -> HistorySummary:
    """`summarise_history` of a HistoryDays from what the walk kept of each date (`pieces`: rows and
    verdicts walked; `marked`: `_marked` rows), less the cells of one date (read from their dates),
    and each cell's latest row (read from the latest dates)."""
    if not len(days):
        return summarise_history(None)
    verdicts: dict[str, int] = {}
    for day in days.digests:  # every date walked, those with only one-date cells too
        for v, n in pieces[day]["verdicts"].items():
            verdicts[v] = verdicts.get(v, 0) + n
    for day, keys in days.dropped.items():  # cells measured on one date only are not in the table
        t = days.arrow(day)
        gone = t.filter(pa.array([not x for x in _keep_mask(t, keys)], type=pa.bool_()))
        for v, n in _verdict_counts(gone).items():
            verdicts[v] -= n
    verdicts = {v: n for v, n in verdicts.items() if n}
    if marked is not None and marked.num_rows:
        dates = marked.column("date").to_pylist()
        keep = np.ones(marked.num_rows, dtype=bool)
        for day, keys in days.dropped.items():
            on = np.array([x == day for x in dates])
            if on.any():
                keep[on] = _keep_mask(marked.filter(pa.array(on)), keys)
        m = typed_from_arrow(marked.filter(pa.array(keep)))
        is_decided = m["verdict"].astype(str).isin(DECIDED).to_numpy()
        decided = m[is_decided].assign(status=change_status(m)[is_decided]).reset_index(drop=True)
    else:
        decided = summarise_history(None).decided
    last = kept.groupby(WALK_KEY, sort=False)["date"].transform("max")
    latest_keys = kept[kept["date"] == last]
    parts = []
    for day, g in latest_keys.groupby("date", sort=True):
        rows = days.typed(day)
        k = rows[KEY].astype(object)
        k["harness"], k["probe"], k["load_id"] = k["harness"].fillna(""), k["probe"].fillna(""), k["load_id"].fillna("")
        k["concurrency"] = pd.array(rows["concurrency"], dtype="Int64").fillna(-1).astype("int64")
        want = set(zip(*(g[c] for c in WALK_KEY)))
        parts.append(rows[[tuple(x) in want for x in k.itertuples(index=False)]])
    latest = pd.concat(parts, ignore_index=True)
    cells = kept.drop_duplicates(WALK_KEY)
    return HistorySummary(
        len(days),
        list(days.days),
        sorted(kept["seat"].astype(str).unique().tolist()),
        len(cells),
        verdicts,
        decided,
        latest,
        panels_of(cells, decided),
        concurrencies_of(cells["concurrency"]),
        values_of(kept),
    )
