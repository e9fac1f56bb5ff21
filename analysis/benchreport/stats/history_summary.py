"""What the report and the flags read of a history table (`benchreport.stats.history`): its
dated regressions and improvements with what the next date said of them, each cell's latest row,
the counts, and every row's value for the figure. `summarise_history` gives it for a table held
in memory; `benchreport.days.history` gives the same summary of a run store's history kept date
by date, so every route reads one kind of thing. `change_status` is the one definition of "what
came next" after a dated verdict (a level shift, one date off its level, or the latest date).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .history import HISTORY_COLUMNS, typed_history

__all__ = ["HistorySummary", "summarise_history", "change_status", "DECIDED", "KEY", "PANEL", "STATUSES"]

DECIDED = ("regression", "improvement")
#: a history row's cell
KEY = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic"]
#: a figure panel of the history: one seat's metric and statistic
PANEL = ["seat", "metric", "statistic"]
#: what came after a dated verdict (`change_status`)
STATUSES = ("level_shift", "one_date", "latest")
#: the cell of a history row as `change_status` matches the next date's (the load is not part of it)
_STATUS_KEY = ["seat", "harness", "probe", "workload", "concurrency", "metric", "statistic"]


@dataclass
class HistorySummary:
    """What the report and the flags read of a history table (benchreport.stats.history).

    ``decided``: its regressions and improvements (HISTORY_COLUMNS and ``status``: what the next
    date of the cell said, `change_status`), in the table's order;
    ``latest``: each cell's latest row; ``panels``: one row per (seat, metric, statistic) with
    its number of decided rows; the counts of rows, verdicts, cells, seats and dates."""

    n_rows: int
    dates: list
    seats: list
    n_cells: int
    verdicts: dict
    decided: pd.DataFrame
    latest: pd.DataFrame
    panels: pd.DataFrame = field(repr=False)
    #: the concurrencies of its cells (a figure's colours)
    concurrencies: list = field(default_factory=list)
    #: every row's cell, date and value (categorical text: a year is a few bytes a row), for figures
    values: pd.DataFrame | None = field(default=None, repr=False)

    def rows_of(self, panels) -> pd.DataFrame:
        """Every row of some (seat, metric, statistic) panels with its value, and the verdict and
        status of the decided ones (a figure's data; the others are "" here)."""
        if self.values is None or not len(self.values):
            return self.decided.iloc[:0]
        v = self.values
        on = np.zeros(len(v), dtype=bool)
        for seat, metric, statistic in panels:  # category comparisons: no Python value per row
            on |= (
                (v["seat"] == str(seat)) & (v["metric"] == str(metric)) & (v["statistic"] == str(statistic))
            ).to_numpy()
        rows = pd.DataFrame({c: v[c].astype(object).to_numpy()[on] for c in v.columns})
        rows["estimate"] = rows["estimate"].astype(float)
        rows["concurrency"] = pd.array(v["concurrency"].to_numpy()[on], dtype="Int64")
        marks = {
            walk_key(r, date): (verdict, status)
            for r, date, verdict, status in zip(
                self.decided[KEY].itertuples(index=False, name=None),
                self.decided["date"].astype(str),
                self.decided["verdict"].astype(str),
                self.decided["status"].astype(str),
            )
        }
        found = [
            marks.get(walk_key(r, date), ("", ""))
            for r, date in zip(rows[KEY].itertuples(index=False, name=None), rows["date"].astype(str))
        ]
        rows["verdict"] = [m[0] for m in found]
        rows["status"] = [m[1] for m in found]
        return rows

    def __len__(self) -> int:
        return self.n_rows


def change_status(history: pd.DataFrame) -> np.ndarray:
    """Per row of a history table (in any order): whether the next date of the same cell is judged
    against a new level (its level_since differs: the change moved the level, "level_shift"),
    against the same one (a night off its level that returned, "one_date"), or there is no next
    date ("latest")."""
    n = len(history)
    if not n:
        return np.array([], dtype=object)
    keys = history[_STATUS_KEY].astype("object").reset_index(drop=True)
    keys["harness"], keys["probe"] = keys["harness"].fillna(""), keys["probe"].fillna("")
    keys["concurrency"] = pd.array(history["concurrency"], dtype="Int64").fillna(-1).astype("int64")
    keys["date"] = history["date"].astype(str).to_numpy()
    order = keys.sort_values([*_STATUS_KEY, "date"], kind="stable").index.to_numpy()  # by cell, then date
    same_next = np.zeros(n, dtype=bool)
    same_next[:-1] = True
    for col in _STATUS_KEY:
        v = keys[col].to_numpy()[order]
        same_next[:-1] &= v[1:] == v[:-1]
    since = history["level_since"].astype("object").to_numpy()[order]
    since_next = np.append(since[1:], None)
    moved = same_next & (since_next != since) & pd.notna(since_next)
    status = np.where(~same_next, "latest", np.where(moved, "level_shift", "one_date"))
    out = np.empty(n, dtype=object)
    out[order] = status
    return out


def panels_of(keys: pd.DataFrame, decided: pd.DataFrame) -> pd.DataFrame:
    """(seat, metric, statistic, n_decided) of every panel with a row, sorted."""
    p = keys[PANEL].astype(object).drop_duplicates()
    n = decided.groupby(PANEL, sort=False).size().rename("n_decided") if len(decided) else None
    p = p.merge(n.reset_index(), on=PANEL, how="left") if n is not None else p.assign(n_decided=0)
    p["n_decided"] = p["n_decided"].fillna(0).astype("int64")
    return p.sort_values(PANEL, kind="stable").reset_index(drop=True)


def summarise_history(h: pd.DataFrame | None) -> HistorySummary:
    """The summary of a whole history table (`benchreport.stats.history.history`)."""
    if h is None or not len(h):
        empty = typed_history(pd.DataFrame({c: [] for c in HISTORY_COLUMNS}))
        return HistorySummary(
            0,
            [],
            [],
            0,
            {},
            empty.assign(status=pd.Series(dtype=object)),
            empty,
            pd.DataFrame({"seat": [], "metric": [], "statistic": [], "n_decided": []}),
        )
    verdict = h["verdict"].astype(str)
    decided = h[verdict.isin(DECIDED).to_numpy()]
    decided = decided.assign(status=change_status(h)[verdict.isin(DECIDED).to_numpy()])
    keyed = h[KEY].astype(object).fillna({"harness": "", "probe": "", "load_id": ""})
    keyed["concurrency"] = pd.array(h["concurrency"], dtype="Int64").fillna(-1).astype("int64")
    latest = h[~keyed.duplicated(keep="last").to_numpy()]
    return HistorySummary(
        len(h),
        sorted(h["date"].astype(str).unique().tolist()),
        sorted(h["seat"].astype(str).unique().tolist()),
        int((~keyed.duplicated()).sum()),
        {k: int(v) for k, v in verdict.value_counts().items()},
        decided.reset_index(drop=True),
        latest.reset_index(drop=True),
        panels_of(h, decided),
        concurrencies_of(h["concurrency"]),
        values_of(h),
    )


def walk_key(row: tuple, date: str) -> tuple:
    """A history row's cell (KEY order) and date as the walk keys it."""
    return (*(plain_key_value(v, c) for v, c in zip(row, KEY)), str(date))


def plain_key_value(v, column: str):
    """A key value as the walk keys it (harness, probe and load "" when none, concurrency -1)."""
    missing = v is None or v is pd.NA or (isinstance(v, float) and v != v)
    if column in ("harness", "probe", "load_id"):
        return "" if missing else str(v)
    if column == "concurrency":
        return -1 if missing else int(v)
    return v


def values_of(rows: pd.DataFrame) -> pd.DataFrame:
    """Each row's cell, date and value, text as categories (`HistorySummary.values`)."""
    out = {c: pd.Categorical(rows[c].astype(object)) for c in (*KEY, "date") if c != "concurrency"}
    out["concurrency"] = pd.array(rows["concurrency"], dtype="Int64")
    out["estimate"] = pd.to_numeric(rows["estimate"], errors="coerce").to_numpy(dtype=float)
    return pd.DataFrame(out)[[*KEY, "date", "estimate"]].reset_index(drop=True)


def concurrencies_of(col) -> list:
    return sorted({int(c) for c in pd.to_numeric(col, errors="coerce").dropna()})
