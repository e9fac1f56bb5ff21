"""Small helpers the flag rules share: JSON-ready values, missing values, cell keys and order."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from benchreport import format as F
from benchreport.columns import STATISTICS

__all__ = [
    "plain",
    "na",
    "int_or_none",
    "key_sort",
    "true_mask",
    "settings",
    "cell_dict",
    "cell_order",
    "stat_rank",
    "norm_cells",
    "wl",
    "used",
]


def plain(v):
    """JSON-ready Python values (numpy scalars, NA, tuples, sets sorted, nested containers)."""
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        seq = sorted(v, key=str) if isinstance(v, set) else v
        return [plain(x) for x in seq]
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if F.missing(v):
        return None
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    return v


def na(v):
    """None for a missing value, else the value."""
    return None if F.missing(v) else v


def int_or_none(v):
    return None if F.missing(v) else int(v)


def key_sort(v):
    """Sort key tolerant of None/NA mixed with values."""
    if F.missing(v):
        return (1, "")
    if isinstance(v, (int, float, np.integer, np.floating)):
        return (0, f"{float(v):020.6f}")
    return (0, str(v))


def true_mask(s: pd.Series) -> pd.Series:
    """Boolean mask with NA as False."""
    return s.astype("boolean").fillna(False).astype(bool)


def settings(value) -> dict:
    """A seat's `settings` (a dict or its JSON text) as a dict; {} when absent or malformed."""
    if F.missing(value):
        return {}
    if isinstance(value, dict):
        return value
    try:
        out = json.loads(value)
    except (TypeError, ValueError):
        return {}
    return out if isinstance(out, dict) else {}


def cell_dict(workload, concurrency, metric, statistic) -> dict:
    """A cell as evidence names it: workload, concurrency, metric, statistic."""
    return {
        "workload": na(workload),
        "concurrency": int_or_none(concurrency),
        "metric": na(metric),
        "statistic": na(statistic),
    }


def cell_order(c: dict) -> tuple:
    """Sort key of a cell dict: workload, metric, statistic, concurrency, date."""
    return tuple(key_sort(c.get(k)) for k in ("workload", "metric", "statistic", "concurrency", "date"))


def stat_rank(stat) -> int:
    """Where a statistic sorts (mean, median, p90, ... as benchreport.columns.STATISTICS)."""
    s = "mean" if F.missing(stat) else str(stat)
    return STATISTICS.index(s) if s in STATISTICS else len(STATISTICS)


def norm_cells(cells: pd.DataFrame | None) -> pd.DataFrame | None:
    """The statistics layer's cells with every column a rule reads (NA where absent), statistic 'mean' when missing."""
    if cells is None:
        return None
    df = cells.copy()
    for col in (
        "seat",
        "workload",
        "concurrency",
        "metric",
        "statistic",
        "n_passes",
        "n_obs",
        "ci_low",
        "ci_high",
        "ci_method",
        "values",
        "date",
        "unit",
        "estimate",
    ):
        if col not in df.columns:
            df[col] = pd.NA
    df["statistic"] = df["statistic"].astype(object).where(df["statistic"].notna(), "mean")
    return df


def wl(workload):
    """A cells-table workload back to the measurements' one ('init:cold' -> 'init')."""
    if F.missing(workload):
        return None
    return str(workload).split(":", 1)[0]


def used(thresholds, *names) -> dict:
    """The thresholds a finding rests on, by name (its evidence["thresholds"])."""
    return {n: plain(getattr(thresholds, n)) for n in names}
