"""Stability: warm-up drift and unstable passes (beyond each pass's own sampling error), and
runs that do not say whether warm-up was excluded (spec/flags.md, "Stability")."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from benchreport import format as F
from benchreport.stats.common import parse_values
from benchreport.stats.stability import adjust_bh, change_test, cochrans_q, within_pass_se
from benchreport.thresholds import Thresholds

from .._common import cell_dict, cell_order, norm_cells, used
from ..findings import ABSENT, CellKey, Finding, one_cell

__all__ = ["DriftCell", "Drift", "Warmup", "drift", "warmup_unknown"]


@dataclass(frozen=True, kw_only=True)
class DriftCell(CellKey):
    """One cell's pass values on one day, their spread and, where the data give them, the tests."""

    values: list[float]
    n_passes: int
    harness: str = ABSENT  # the harness that measured the cell, where the cells table says
    cv: float | None
    spread: float | None
    total_change: float | None
    within_pass_se: list[float] = ABSENT
    change_p: float = ABSENT
    cochran_q: float = ABSENT
    cochran_p: float = ABSENT
    change_p_adj: float = ABSENT
    cochran_p_adj: float = ABSENT


@dataclass(frozen=True, kw_only=True)
class Drift(Finding):
    """Cells of one seat and day whose passes climb or fall (warm-up) or disagree (unstable)."""

    CODES = ("drift.warmup", "drift.unstable")
    date: str
    n_cells: int
    cells: list[DriftCell]
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class Warmup(Finding):
    """Runs of one seat that do not say whether warm-up was excluded, or say it was measured."""

    CODES = ("warmup.unknown", "warmup.included")
    runs: list[str]
    dates: list[str]
    total_runs: int


def _pass_series(cells: pd.DataFrame | None, tables) -> list[dict]:
    """Per-day series of per-pass values: (seat, date, cell, values in pass order).

    From `cells` when it has a `date` column (one row per seat and day); otherwise from
    `cells` for seats measured on one day only and from the measurements table for
    seats measured on several days (so passes of different days are never mixed).
    """
    cells = norm_cells(cells)
    out = []
    runs = tables.runs if tables is not None else None
    days = {}
    if runs is not None and not runs.empty:
        days = runs.groupby("seat")["date"].apply(lambda s: sorted(set(s.dropna().astype(str)))).to_dict()
    multi_day = {s for s, d in days.items() if len(d) > 1}
    if cells is not None and not cells.empty:
        has_date = cells["date"].notna().any()
        for row in cells.itertuples(index=False):
            if not has_date and row.seat in multi_day:
                continue
            date = str(row.date) if not F.missing(row.date) else (days.get(row.seat, [None]) or [None])[0]
            harness = getattr(row, "harness", None)
            out.append(
                {
                    "seat": row.seat,
                    "date": date,
                    "values": parse_values(row.values),
                    "harness": None if F.missing(harness) else str(harness),
                    **cell_dict(row.workload, row.concurrency, row.metric, row.statistic),
                }
            )
        if has_date:
            return out
    if tables is not None and multi_day and not tables.measurements.empty:
        m = tables.measurements
        m = m[m["seat"].isin(multi_day)]
        for key, g in m.groupby(["seat", "date", "workload", "concurrency", "metric", "statistic"], dropna=False):
            per_pass = g.groupby("pass")["value"].median().sort_index()
            out.append(
                {
                    "seat": key[0],
                    "date": str(key[1]),
                    "values": per_pass.tolist(),
                    **cell_dict(key[2], key[3], key[4], key[5]),
                }
            )
    return out


def _describe(s: dict, se_by_pass: dict) -> tuple[dict, bool] | None:
    """A series' spread, monotonicity and, with each pass's standard error, its tests (None: not judged)."""
    vals = s["values"]
    mean = float(np.mean(vals))
    diffs = np.diff(vals)
    cell = {k: s[k] for k in ("workload", "concurrency", "metric", "statistic")}
    if s.get("harness"):
        cell["harness"] = s["harness"]
    cell.update(
        {
            "values": vals,
            "n_passes": len(vals),
            "cv": float(np.std(vals, ddof=1) / abs(mean)) if mean != 0 else math.inf,
            "spread": max(vals) / min(vals) if min(vals) > 0 else None,
            "total_change": (vals[-1] - vals[0]) / abs(vals[0]) if vals[0] != 0 else math.inf,
        }
    )
    monotone = len(vals) >= 3 and (bool(np.all(diffs > 0)) or bool(np.all(diffs < 0)))
    se = [se_by_pass[p] for p in sorted(se_by_pass)] if len(se_by_pass) == len(vals) else None
    if se is not None and any(math.isinf(x) for x in se):
        return None  # per-pass tail figures too thin to compare (sample.small_n speaks for them)
    if se is not None and all(x > 0 for x in se):
        q = cochrans_q(vals, se)
        cell.update(
            {
                "within_pass_se": se,
                "change_p": change_test(vals[0], vals[-1], se[0], se[-1]),
                "cochran_q": q.statistic,
                "cochran_p": q.pvalue,
            }
        )
    return cell, monotone


def drift(cells: pd.DataFrame | None, tables=None, *, thresholds: Thresholds) -> list[Drift]:
    """`drift.warmup` and `drift.unstable`, one finding per seat, day and code.

    Warm-up: values strictly monotone across >= 3 passes of one day with a total change
    |last - first| / |first| above `drift_limit`. Judged by effect size, not a trend test:
    Mann-Kendall's smallest two-sided p at n = 3 is 1/3, so three passes can never be
    "significant" (Hamed & Rao 1998). Unstable: passes of one cell with max/min above
    `spread_limit` or a coefficient of variation above `cv_limit` (pyperf's checks). A
    series flagged as warm-up is not flagged again as unstable.

    Where each pass's own sampling error is known (request records, or a CI given with the
    figure: `benchreport.stats.stability.within_pass_se`), a movement that error explains is
    not a finding: a warm-up also needs the first-to-last change to be significant
    (`change_test`), instability also needs Cochran's Q to reject homogeneity (`cochrans_q`),
    both at `alpha` after Benjamini-Hochberg adjustment across all cells tested. Tail
    quantiles with fewer than `min_tail_obs` requests beyond them in a pass are not judged.
    """
    alpha = float(thresholds.alpha)
    z = float(norm.ppf(1 - alpha / 2))
    noise = (
        {}
        if tables is None
        else within_pass_se(tables.requests, tables.measurements, z=z, min_tail_obs=int(thresholds.min_tail_obs))
    )
    series = []
    for s in _pass_series(cells, tables):
        if len(s["values"]) < 2:
            continue
        key = (
            str(s["seat"]),
            str(s["date"]),
            s["workload"],
            s["concurrency"],
            str(s["metric"]),
            str(s["statistic"] or "mean"),
        )
        described = _describe(s, noise.get(key, {}))
        if described is not None:
            series.append((s, *described))
    # many cells are tested at once: adjust across them (Benjamini & Hochberg 1995)
    for name in ("change_p", "cochran_p"):
        tested = [c for _, c, _ in series if name in c]
        for c, adj in zip(tested, adjust_bh([c[name] for c in tested])):
            c[name + "_adj"] = adj
    return _drift_findings(series, thresholds)


def _drift_findings(series: list, thresholds: Thresholds) -> list[Drift]:
    alpha = float(thresholds.alpha)
    groups: dict[tuple, list] = {}
    for s, cell, monotone in series:
        change, cv, spread = cell["total_change"], cell["cv"], cell["spread"]
        if monotone and abs(change) > float(thresholds.drift_limit) and cell.get("change_p_adj", 0.0) < alpha:
            groups.setdefault((s["seat"], s["date"], "drift.warmup"), []).append(cell)
        elif (
            (spread is not None and spread > float(thresholds.spread_limit)) or cv > float(thresholds.cv_limit)
        ) and cell.get("cochran_p_adj", 0.0) < alpha:
            groups.setdefault((s["seat"], s["date"], "drift.unstable"), []).append(cell)
    out = []
    for (seat, date, code), cl in sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))):
        cl = [DriftCell(**c) for c in sorted(cl, key=cell_order)]
        out.append(
            Drift(
                code=code,
                severity="warn",
                seats=(seat,),
                **one_cell(cl),
                date=date,
                n_cells=len(cl),
                cells=cl,
                thresholds=used(thresholds, "drift_limit", "spread_limit", "cv_limit", "alpha", "min_tail_obs"),
            )
        )
    return out


def warmup_unknown(runs: pd.DataFrame) -> list[Warmup]:
    """`warmup.unknown` (warm-up exclusion not stated) and `warmup.included` (stated as measured),
    one finding per seat listing its runs."""
    out = []
    if runs is None or runs.empty:
        return out
    w = runs["warmup_excluded"].astype("boolean")
    for code, mask in (("warmup.unknown", w.isna()), ("warmup.included", w.fillna(True).eq(False))):
        sub = runs[mask.to_numpy()]
        for seat, g in sub.groupby("seat"):
            out.append(
                Warmup(
                    code=code,
                    severity="info",
                    seats=(str(seat),),
                    runs=sorted(g["run_id"].astype(str)),
                    dates=sorted(set(g["date"].astype(str))),
                    total_runs=int((runs["seat"] == seat).sum()),
                )
            )
    return out
