"""The pass rows the flags read (`notable_passes`) and the request counts the pass rows give
(`request_counts`): decided on a pass table, or on one date's Arrow rows where a run store reads
it date by date (benchreport.days), with one definition for both routes.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa

from .within import dependent_passes

__all__ = ["DEPENDENT", "dependent_mask", "notable_passes", "REQUEST_COUNT_COLUMNS", "request_counts", "plain_column"]


def plain_column(col):
    """An Arrow column with its dictionary decoded (the values as their own type)."""
    return col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col


#: the column of the kept pass rows (`DayScan.notable`) that says which are correlated in send order
DEPENDENT = "lag1_dependent"


def dependent_mask(passes: pd.DataFrame | pa.Table, thresholds) -> np.ndarray:
    """`benchreport.stats.within.dependent_passes` over a pass table (or a date's Arrow rows): the
    rows sample.correlated_requests is raised on. Decided where a family's rows are all at hand
    (a seat's passes of one date), so a run store decides each date when it reads it."""
    cols = ("seat", "date", "statistic", "lag1", "n_obs")
    if isinstance(passes, pa.Table):
        v = {c: plain_column(passes.column(c)).to_pylist() for c in cols}
    else:
        v = {c: passes[c].astype(object).tolist() for c in cols}
    v["lag1"] = [math.nan if x is None or x is pd.NA else x for x in v["lag1"]]
    v["n_obs"] = [math.nan if x is None or x is pd.NA else x for x in v["n_obs"]]
    return dependent_passes(
        v["seat"],
        v["date"],
        v["statistic"],
        v["lag1"],
        v["n_obs"],
        alpha=float(thresholds.alpha),
        lag1_limit=float(thresholds.lag1_limit),
    )


def notable_passes(passes: pd.DataFrame | pa.Table, thresholds):
    """The pass rows a flag may be raised on: a mean whose requests are correlated in send order
    (`dependent_mask`, sample.correlated_requests), and a reported figure beside a recomputed one
    that is not the same number (import.figure_mismatch: the flag then applies its own rounding
    rule). A mask over `passes` (a pass table, or a date's Arrow rows)."""
    if isinstance(passes, pa.Table):
        rep, rec = passes.column("reported").to_numpy(), passes.column("recomputed").to_numpy()
    else:
        rep = pd.to_numeric(passes["reported"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        rec = pd.to_numeric(passes["recomputed"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    rep, rec = np.asarray(rep, dtype=float), np.asarray(rec, dtype=float)
    return dependent_mask(passes, thresholds) | (np.isfinite(rep) & np.isfinite(rec) & (rep != rec))


REQUEST_COUNT_COLUMNS = ["run_id", "workload", "concurrency", "n_requests"]


def request_counts(passes: pd.DataFrame) -> pd.DataFrame:
    """Request records per (run, workload, concurrency), as each pass row computed from them says
    (the run store holds only the described runs' records in memory; the report's runs table
    counts every run's)."""
    if passes is None or not len(passes) or "n_requests" not in passes:
        return pd.DataFrame(
            {
                "run_id": pd.Series(dtype="string"),
                "workload": pd.Series(dtype="string"),
                "concurrency": pd.Series(dtype="Int64"),
                "n_requests": pd.Series(dtype="Int64"),
            }
        )
    q = passes[(passes["source"].astype(object) == "requests").to_numpy(dtype=bool) & passes["n_requests"].notna()]
    return q.drop_duplicates(["run_id", "workload", "concurrency"])[REQUEST_COUNT_COLUMNS].reset_index(drop=True)
