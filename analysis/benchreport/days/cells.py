"""Cells of a run store: `estimate_cells` over its day cache (benchreport.days.entries).

The estimation is benchreport.stats.cells' (`estimate_rows`, `within_intervals`), the rows come
from the day cache one date at a time, and the history's dated cells keep a few columns, with
the chosen ones read back whole (`DatedRows`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchreport.columns import CELLS, DATED
from benchreport.stats.cells import (
    CELL_COLUMNS,
    CELL_EXTRA_COLUMNS,
    DATED_COLUMNS,
    CellConfig,
    CellSet,
    cell_inputs,
    chunk_cells,
    empty_cellset,
    estimate_rows,
    joined_cells,
    sorted_cells,
    within_intervals,
)
from benchreport.thresholds import Thresholds

from .entries import DayCache, cells_from_arrow
from .scan import scan_days

__all__ = ["estimate_cells_by_day", "estimate_from_days", "DatedRows"]


def estimate_cells_by_day(
    measurements,
    source,
    runs,
    *,
    cache: DayCache,
    thresholds: Thresholds,
    method: str,
    n_resamples: int,
    seed: int,
    level: float | None = None,
) -> CellSet:
    """`benchreport.stats.cells.estimate_cells` of a run store (each seat described by its latest
    date): each date's pass rows and 3+-pass cells come from `cache`, computed and kept there for
    the dates it does not hold. The tables are the same as `estimate_cells` gives."""
    source, cfg = cell_inputs(
        measurements,
        source,
        runs,
        thresholds=thresholds,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
    )
    return estimate_from_days(measurements, source, runs, cfg, cfg.level, cache)


def estimate_from_days(measurements, source, runs, cfg: CellConfig, level: float, cache: DayCache) -> CellSet:
    """`estimate_cells` over a day cache (benchreport.days.scan.scan_days): each date's pass rows
    and 3+-pass cells are computed once and kept; an analysis reads them back one date at a time
    and keeps the described dates' cells whole, every date's `DATED_COLUMNS`, and the rows the flags
    and the report need. The cells with 1-2 passes borrow a variance from their other dates, so
    they are estimated here every time, as a full analysis estimates them. The same tables as
    without a cache (tests/test_day_cache.py)."""
    scan = scan_days(
        measurements, source, runs, cfg.thresholds, level, cache, cells_of=lambda chunk: chunk_cells(chunk, cfg, level)
    )
    if not len(scan.days):
        return empty_cellset(level)
    latest, dated, small_cells = [], [], None
    small = scan.small
    if small is not None and len(small):
        described = scan.described
        on = [
            described.get((s, h, p, lid)) == d
            for s, h, p, lid, d in zip(small["seat"], small["_h"], small["_p"], small["_l"], small["date"])
        ]
        latest_rows, frames = estimate_rows(
            small, small, cfg, level, set(small.index[np.array(on, dtype=bool)]), variances=scan.variances
        )
        within_intervals(latest_rows, source, cfg)
        small_cells = joined_cells(latest_rows, frames)
        latest.append(small_cells.iloc[: len(latest_rows)])
        dated.append(small_cells[DATED_COLUMNS])
    for part, into in ((scan.latest_cells, latest), (scan.dated, dated)):
        if part is not None and len(part):
            into.append(part)
    cells_df = sorted_cells(pd.concat(latest, ignore_index=True)) if latest else CELLS.empty()
    dated_df = (pd.concat(dated, ignore_index=True) if len(dated) > 1 else dated[0]) if dated else DATED.empty()
    return CellSet(
        cells_df,
        scan.days,
        level,
        dated_df,
        scan.tokens,
        notable=scan.notable,
        request_counts=scan.request_counts,
        dated_rows=DatedRows(scan, cache, small_cells),
    )


class DatedRows:
    """Chosen rows of a run store's dated cells with every column: the 3+-pass ones from their date's
    day entry, the others from the cells estimated now."""

    def __init__(self, scan, cache, small_cells: pd.DataFrame | None):
        self.scan, self.cache, self.small = scan, cache, small_cells

    def __call__(self, wanted: pd.DataFrame) -> pd.DataFrame:
        columns = CELL_COLUMNS + CELL_EXTRA_COLUMNS
        keys = ["seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic", "date"]
        want = _keys_of(wanted)[keys].drop_duplicates()
        parts = []
        if self.small is not None and len(self.small):
            parts.append(_keys_of(self.small).merge(want, on=keys, how="inner"))
        for d in sorted(set(want["date"].astype(str))):
            t = self.scan.cells_on(d)
            if not t.num_rows:
                continue
            parts.append(_keys_of(cells_from_arrow(t, columns)).merge(want[want["date"] == d], on=keys, how="inner"))
        parts = [p for p in parts if len(p)]
        if not parts:
            return CELLS.empty()
        return pd.concat(parts, ignore_index=True)[columns]


def _keys_of(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with the cell key as plain objects (harness, probe and load "" when none, concurrency -1)."""
    return df.assign(
        seat=df["seat"].astype(object),
        _h=df["harness"].astype(object).fillna(""),
        _p=df["probe"].astype(object).fillna(""),
        _l=df["load_id"].astype(object).fillna(""),
        workload=df["workload"].astype(object),
        _c=pd.array(df["concurrency"], dtype="Int64").fillna(-1).astype("int64"),
        metric=df["metric"].astype(object),
        statistic=df["statistic"].astype(object),
        date=df["date"].astype(object).astype(str),
    )
