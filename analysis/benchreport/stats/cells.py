"""Cell estimates and confidence intervals: tables/cells.csv and the per-pass table.

A cell is one (seat, harness, probe, load, workload, concurrency, metric,
statistic) on the date that describes the seat. The pass is the unit of
replication: each pass contributes one value, the figure the harness reported
where the run gives one (shown as printed), else our statistic of its request
records. Requests of different passes are never pooled, and runs of different
harnesses, probes or recorded loads (``load_id``, the fingerprint of what was sent:
benchreport.conditions) are different cells (a manifest's ``harness_group`` says
when two harnesses measured the same thing).

Two intervals, never confused:

``ci_low``/``ci_high`` (between passes, what a claim about the seat needs)
    =============================================  ===========================
    measured as                                    ci_route
    =============================================  ===========================
    3+ passes, positive values                     ``t_log`` (geometric mean,
                                                   log-scale t, df = passes - 1)
    1-2 passes, a pass variance of the same        ``t_log_pooled`` (two-level:
    seat and cell on other dates                   the variance borrowed, stated)
    1 pass, an aggregate figure with its own CI    ``published`` (as printed)
    otherwise                                      none; ``ci_reason`` says why
    =============================================  ===========================

``within_low``/``within_high`` (one run only, for a single pass with request records)
    over the requests in send order, the same method whatever their correlation (no pre-test,
    issue 30): for the mean a t-interval with the equal-weighted cosine (EWC) long-run variance
    and t with B = max(2, n // 50) degrees of freedom; for a quantile Woodruff's interval with
    the long-run variance of the share below it (benchreport.stats.within.series_interval). A
    mean from fewer than `min_obs` requests keeps its interval (flagged sample.small_n); a
    quantile needs `min_obs` requests and the tail rule; above `max_bootstrap_obs` requests,
    sectioning (30 contiguous sections). No verdict rests on it: it leaves out run-to-run
    variation.

Statistics: every statistic a run reported, plus those its requests support:
the mean and median, and a tail quantile q only where n(1 - q) >= min_tail_obs.

Randomness: none since issue 30 (the within-run interval is computed, not
resampled), so the same data give byte-identical tables and adding a seat never
changes another seat's intervals; `seed`, `method` and `n_resamples` are still
checked and accepted.

References
----------
Kalibera, T. & Jones, R. (2013), Rigorous benchmarking in reasonable time (the
run as the unit of replication); Davison, A. C. & Hinkley, D. V. (1997),
Bootstrap Methods and their Application, §3.8 (resample the top level) and
§8.2 (block resampling); Miller, E. (2024), Adding error bars to evals, §5
(clustered data); Efron (1987) (BCa); benchreport.stats.passes and
benchreport.stats.within for the methods' own references.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
from scipy.special import ndtri

from ..columns import (
    CELL_COLUMNS,
    CELL_EXTRA_COLUMNS,
    CELLS,
    DATED_COLUMNS,
    METRICS,
    PASS_COLUMNS,
    PASSES,
    QUANTILES,
    REQUEST_METRICS,
    STATISTICS,
)
from ..thresholds import DEFAULT, Thresholds
from .common import check_level, format_values, tail_supported
from .bootstrap import check_ci_method, check_n_resamples, hierarchical_bootstrap
from .passes import (
    LogVariance,
    PassSummary,
    t_ppf,
    log_variance,
    pooled_log_variance,
    range_level,
    summarise_passes,
)
from .notable import request_counts
from .pass_rows import load_labels, pass_rows, run_labels
from .requests import FrameSource, RequestSource, column_metric, failed_mask, request_metrics
from .sessions import plain_key
from .within import sectioning_interval, series_interval

__all__ = [
    "CELL_COLUMNS",
    "CELL_EXTRA_COLUMNS",
    "PASS_COLUMNS",
    "DATED_COLUMNS",
    "CellSet",
    "estimate_cells",
    "cells",
    "described_runs",
    "request_metrics",
    "failed_mask",
    "ci_method_text",
    "CellConfig",
    "cell_inputs",
    "chunk_cells",
    "empty_cellset",
    "estimate_rows",
    "joined_cells",
    "sorted_cells",
    "within_intervals",
    "date_variances",
    "bootstrap_cells",
]

#: why a cell has no between-pass interval -> how ci_method says it (spec/cli.md: "none: ...")
NO_CI_WORDS = {
    "single_pass": "none: single pass",
    "two_passes": "none: two passes, both values reported",
    "equal_values": "none: all values equal",
    "non_positive": "none: non-positive pass values",
}
ROUTE_WORDS = {
    "t_log": "t on log pass values (df={df})",
    "t_log_pooled": "t on log pass values, pass variance pooled from {dates} other date(s) (df={df})",
    "published": "published",
}


def ci_method_text(route: str, reason: str, df=None, dates=None) -> str:
    """The `ci_method` text of spec/cli.md from a typed route and reason."""
    if route:
        return ROUTE_WORDS[route].format(df=_int_text(df), dates=_int_text(dates))
    return NO_CI_WORDS.get(reason, f"none: {reason}")


def _int_text(v) -> str:
    return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else str(int(v))


# --------------------------------------------------------------------------- request records
def _frame_iv(df, name: str, required: list[str]) -> pd.DataFrame | None:
    if df is None:
        return None
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"`{name}` must be a pandas DataFrame or None")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"`{name}` lacks column(s) {missing}")
    return df


# --------------------------------------------------------------------------- the pass table
def described_runs(runs: pd.DataFrame | None) -> set[str]:
    """The run ids of the date that describes each seat as each harness and probe measured it
    (its latest): what cells, comparisons and the request-record checks are about."""
    if runs is None or not len(runs):
        return set()
    labels = run_labels(runs)
    keys = pd.DataFrame(
        {"run_id": runs["run_id"].astype(str), "seat": runs["seat"].astype(str), "date": runs["date"].astype(str)}
    )
    keys["_m"] = [str(labels[r]) for r in keys["run_id"].tolist()]
    last = keys.groupby(["seat", "_m"])["date"].transform("max")
    return set(keys.loc[keys["date"] == last, "run_id"].tolist())


# --------------------------------------------------------------------------- cells
@dataclass
class CellConfig:
    """How cells are estimated (`cell_inputs`): thresholds, the resampling settings kept for
    compatibility, the confidence level, the seed and the loads' words."""

    thresholds: Thresholds
    method: str
    n_resamples: int
    level: float
    seed: int
    #: {load_id: the load in words} (benchreport.stats.pass_rows.load_labels)
    load_labels: dict = field(default_factory=dict)


class DatedPasses(Protocol):
    """A pass table kept date by date (a run store's: benchreport.days.entries.PassDays)."""

    def frame(self) -> pd.DataFrame: ...


@dataclass
class CellSet:
    """Cells with their between-pass and within-run intervals, and the pass values behind them.

    ``cells``: one row per cell (CELL_COLUMNS then CELL_EXTRA_COLUMNS), on the
    date that describes each seat; ``dated``: the cells of every date measured (within-run
    intervals on the described date only), for the history and the dated comparisons (from a
    run store, only their `DATED_COLUMNS`: `dated_rows` gives chosen ones whole);
    ``passes``: one row per cell, date and pass (PASS_COLUMNS; from a run store a `PassDays`,
    read one date at a time); ``level``: the confidence level of all of them.
    """

    cells: pd.DataFrame
    passes: "pd.DataFrame | DatedPasses"
    level: float
    dated: pd.DataFrame = field(default=None, repr=False)
    #: {date: token of what its pass rows were computed from}, when a day cache was used
    day_tokens: dict = field(default_factory=dict, repr=False)
    #: the pass rows a flag may be raised on (benchreport.stats.notable.notable_passes); None: `passes`
    notable: pd.DataFrame | None = field(default=None, repr=False)
    #: request records per run and cell, as the pass rows count them (benchreport.stats.notable.request_counts)
    request_counts: pd.DataFrame | None = field(default=None, repr=False)
    #: (rows of `dated`: cell key and date) -> those rows with every column; None: `dated` has them
    dated_rows: object = field(default=None, repr=False)

    def pass_frame(self) -> pd.DataFrame:
        """The pass table whole (read date by date from a run store's cache)."""
        return self.passes if isinstance(self.passes, pd.DataFrame) else self.passes.frame()


def _select_latest(df: pd.DataFrame, latest: str) -> pd.DataFrame:
    if latest == "seat":  # each way a seat was measured (harness, probe, load) by its latest date
        last = df.groupby(["seat", "_h", "_p", "_l"])["date"].transform("max")
    else:
        last = df.groupby(["seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic"])["date"].transform("max")
    return df[df["date"] == last]


def date_variances(passes: pd.DataFrame) -> dict[tuple, dict[str, LogVariance]]:
    """{cell key: {date: log-variance of that date's passes}} for dates with 2+ positive passes."""
    out: dict[tuple, dict[str, LogVariance]] = {}
    keys = ["seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic", "date"]
    values = passes["value"].to_numpy(float)
    for key, pos in passes.groupby(keys, sort=False).indices.items():
        if len(pos) < 2:
            continue
        lv = log_variance(values[pos])
        if lv is not None:
            out.setdefault(key[:-1], {})[key[-1]] = lv
    return out


def _implied_log_se(value, lo, hi, level) -> float:
    if not all(math.isfinite(x) for x in (value, lo, hi, level)) or not (0 < level < 1) or lo <= 0 or hi <= 0:
        return math.nan
    return float((math.log(hi) - math.log(lo)) / (2.0 * ndtri(0.5 + level / 2.0)))


class _Rows:
    """The rows of one cell and date, as column arrays (a DataFrame slice per cell costs more than
    the cell's statistics at a year of nightly dates)."""

    __slots__ = ("cols", "pos")

    def __init__(self, cols: dict, pos: np.ndarray):
        self.cols, self.pos = cols, pos

    def __len__(self) -> int:
        return len(self.pos)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name][self.pos]


#: the pass table's columns a cell row is built from (the others are not copied: each would be
#: one Python object per pass row, two million rows at a year of dates)
_CELL_INPUTS = (
    "seat",
    "harness",
    "probe",
    "load_id",
    "workload",
    "concurrency",
    "metric",
    "statistic",
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


def _columns(passes: pd.DataFrame) -> dict:
    """The pass table's columns of `_CELL_INPUTS` as numpy arrays: floats as float (NA as NaN),
    others as objects."""
    out = {}
    for c in _CELL_INPUTS:
        col = passes[c]
        if c in (
            "value",
            "recomputed",
            "reported",
            "n_obs",
            "n_requests",
            "n_failed",
            "ci_low",
            "ci_high",
            "ci_level",
            "lag1",
        ):
            out[c] = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        else:
            out[c] = col.astype(object).to_numpy()
    return out


def _first_present(values: np.ndarray):
    for v in values:
        if not pd.isna(v):
            return v
    return None


def _int_sum(v: np.ndarray):
    """The sum of whole counts held as floats (exact in any order below 2^53), NA when one is missing."""
    counts = v.tolist()
    return pd.NA if any(c != c for c in counts) else int(sum(counts))


def _row_of(key, date, s: PassSummary, cfg: CellConfig, *, n_passes, values, group, **pass_figures) -> dict:
    """A cell's row (without its `ci_method`): its key, its summary `s`, and what its passes give
    (`values` as text, the counts, reported figures, condition, source and lag 1)."""
    seat, h, p, lid, workload, conc, metric, stat = key
    route = s.route
    return dict(
        seat=seat,
        workload=workload,
        concurrency=conc,
        metric=metric,
        statistic=stat,
        unit=METRICS[metric][0] if metric in METRICS else None,
        n_passes=n_passes,
        n_obs=pass_figures["n_obs"],
        estimate=s.estimate,
        ci_low=s.low,
        ci_high=s.high,
        ci_level=s.level if route else math.nan,
        ci_method="",
        values=values,
        harness=h,
        probe=p,
        load_id=lid,
        load=cfg.load_labels.get(lid) if lid else None,
        date=date,
        condition=pass_figures["condition"],
        ci_route=route,
        ci_reason=s.reason,
        log_se=s.log_se,
        df=s.df,
        median=s.median,
        min=s.min,
        max=s.max,
        range_level=s.range_level,
        within_low=math.nan,
        within_high=math.nan,
        within_level=math.nan,
        within_method="",
        within_log_se=math.nan,
        reported=pass_figures["reported"],
        recomputed=pass_figures["recomputed"],
        n_requests=pass_figures["n_requests"],
        n_failed=pass_figures["n_failed"],
        lag1=pass_figures["lag1"],
        block=pd.NA,
        source=pass_figures["source"],
        _group=group,
    )


def _cell_row(key, date, sub: _Rows, s: PassSummary, borrowed: LogVariance | None, cfg: CellConfig) -> dict:
    vals = sub["value"]
    one = len(vals) == 1
    row = _row_of(
        key,
        date,
        s,
        cfg,
        n_passes=len(vals),
        values=format_values(vals),
        n_obs=_int_sum(sub["n_obs"]),
        n_requests=_int_sum(sub["n_requests"]),
        n_failed=_int_sum(sub["n_failed"]),
        reported=_geometric_mean(sub["reported"]),
        recomputed=_geometric_mean(sub["recomputed"]),
        condition=_first_present(sub["condition"]),
        source="+".join(sorted(set(sub["source"]))),
        lag1=float(sub["lag1"][0]) if one else math.nan,
        group=sub["group"][0] if one else None,
    )
    route = s.route
    if one:
        plo, phi, plv = (float(sub[c][0]) for c in ("ci_low", "ci_high", "ci_level"))
        if not route and math.isfinite(plo) and math.isfinite(phi):
            row.update(
                ci_low=plo,
                ci_high=phi,
                ci_level=plv,
                ci_route="published",
                ci_reason="",
                within_log_se=_implied_log_se(vals[0], plo, phi, plv),
            )
    row["ci_method"] = ci_method_text(
        row["ci_route"], row["ci_reason"], df=s.df, dates=borrowed.n_dates if borrowed is not None else None
    )
    return row


def _geometric_mean(v: np.ndarray) -> float:
    """Geometric mean of positive finite values; the value itself for one; NaN otherwise."""
    if len(v) == 1:
        return float(v[0])
    if len(v) and all(0.0 < x < math.inf for x in v.tolist()):  # NaN fails both comparisons
        return float(np.exp(np.mean(np.log(v))))
    return math.nan


def _sum_int(s: pd.Series):
    s = pd.to_numeric(s, errors="coerce")
    return int(s.sum()) if s.notna().all() else pd.NA


def _within_plan(row: dict, cfg: CellConfig) -> str:
    """How the within-run interval of a single-pass cell is computed: 'series' (EWC / Woodruff),
    'sectioning' (above `max_bootstrap_obs` requests) or 'none: ...' (why not); '' for a
    statistic that has none."""
    th = cfg.thresholds
    n = int(row["_n_within"])
    stat = row["statistic"]
    q = QUANTILES.get(stat)
    if stat != "mean" and q is None:
        return ""
    if n < 3:
        return "none: n < 3"
    if n > th.max_bootstrap_obs and n >= 60:
        return "sectioning"
    if stat == "mean":
        return "series"
    if n < th.min_obs:
        return f"none: n < {th.min_obs}"
    if not tail_supported(n, q, th.min_tail_obs):
        return f"none: n*(1-q) < {th.min_tail_obs}"
    return "series"


#: how within_method names each method of `series_interval` ({b}: its cosine terms, the t df)
_SERIES_WORDS = {
    "ewc": "t with EWC long-run variance over requests in send order (B={b}, df={b})",
    "woodruff-ewc": "Woodruff with EWC long-run variance over requests in send order (B={b}, df={b})",
}


def within_intervals(rows: list[dict], source: RequestSource, cfg: CellConfig) -> None:
    """Fill the within-run intervals of single-pass cells with request records."""
    for row in rows:
        gid = row["_group"]
        if row["n_passes"] != 1 or gid is None or row["metric"] not in REQUEST_METRICS:
            continue
        v = column_metric(source.group(gid), row["metric"])
        row["_n_within"] = v.shape[0]
        plan = _within_plan(row, cfg)
        if plan.startswith("none"):
            row["within_method"] = plan
        elif np.all(v == v[0]):
            row["within_method"] = "none: all values equal"
        elif plan == "sectioning":
            s = sectioning_interval(v, QUANTILES.get(row["statistic"]), level=cfg.level)
            _set_within(row, s.low, s.high, cfg.level, f"sectioning ({s.n_sections} sections), within one run")
        elif plan == "series":
            s = series_interval(v, QUANTILES.get(row["statistic"]), level=cfg.level)
            _set_within(row, s.low, s.high, cfg.level, _SERIES_WORDS[s.method].format(b=s.df) + ", within one run")


def _set_within(row, lo, hi, level, method, log_se=math.nan):
    row.update(within_low=float(lo), within_high=float(hi), within_level=level, within_method=method)
    if not math.isfinite(log_se) and lo > 0 and hi > 0:
        log_se = float((math.log(hi) - math.log(lo)) / (2.0 * ndtri(0.5 + level / 2.0)))
    row["within_log_se"] = log_se


_STAT_ORDER = {st: i for i, st in enumerate(STATISTICS)}


def sorted_cells(df: pd.DataFrame) -> pd.DataFrame:
    if not len(df):
        return df
    stat = df["statistic"].astype(object).map(_STAT_ORDER).fillna(len(STATISTICS)).astype("int64")
    keys = df.assign(
        _c=df["concurrency"].fillna(np.iinfo(np.int64).max).astype("int64"),
        _s=stat.to_numpy(),
        _h=df["harness"].fillna(""),
        _p=df["probe"].fillna(""),
        _l=df["load_id"].fillna(""),
    )
    keys = keys.sort_values(["seat", "date", "_h", "_p", "_l", "workload", "_c", "metric", "_s"], kind="stable")
    return keys.drop(columns=["_c", "_s", "_h", "_p", "_l"]).reset_index(drop=True)


def _options_iv(thresholds, method, n_resamples, seed, level, latest=None):
    if not isinstance(thresholds, Thresholds):
        raise ValueError("`thresholds` must be an benchreport.thresholds.Thresholds")
    method = check_ci_method(method)
    n_resamples = check_n_resamples(n_resamples)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer; got {seed!r}")
    level = check_level(1.0 - thresholds.alpha if level is None else level)
    if latest is not None and latest not in ("seat", "cell"):
        raise ValueError(f"`latest` must be 'seat' or 'cell'; got {latest!r}")
    return method, n_resamples, int(seed), level


#: cell rows turned into a frame at a time while a cold archive is estimated
_BATCH = 20_000


def cell_inputs(
    measurements,
    requests,
    runs,
    *,
    thresholds: Thresholds,
    method: str,
    n_resamples: int,
    seed: int,
    level: float | None,
    latest: str = "seat",
) -> tuple[RequestSource, CellConfig]:
    """The checked inputs of `estimate_cells` (and of a run store's route, benchreport.days.cells):
    the request source and the estimation's settings; a ValueError names what is wrong."""
    _frame_iv(measurements, "measurements", ["seat", "date", "workload", "metric", "value"])
    if isinstance(requests, pd.DataFrame) or requests is None:
        _frame_iv(requests, "requests", ["seat", "date", "pass", "workload", "concurrency"])
        source = FrameSource(requests)
    else:
        source = requests
    method, n_resamples, seed, level = _options_iv(thresholds, method, n_resamples, seed, level, latest)
    return source, CellConfig(thresholds, method, n_resamples, level, seed, load_labels(runs))


def estimate_cells(
    measurements: pd.DataFrame | None,
    requests: pd.DataFrame | RequestSource | None = None,
    runs: pd.DataFrame | None = None,
    *,
    thresholds: Thresholds = DEFAULT,
    method: str = "t",
    n_resamples: int = 2000,
    seed: int = 0,
    level: float | None = None,
    latest: str = "seat",
) -> CellSet:
    """Every cell's estimate, between-pass interval and within-run interval.

    Parameters
    ----------
    measurements : DataFrame or None
        The `measurements` tidy table (benchreport.columns.TABLE_COLUMNS).
    requests : DataFrame, RequestSource or None
        The `requests` tidy table (in send order, or with `start_ms`), or a source of
        request groups (benchreport.stats.requests; the run store gives one).
    runs : DataFrame, optional
        The `runs` table: harness (or `harness_group`) and probe per run, part of
        each cell's key. Without it every run counts as one harness and probe.
    thresholds : Thresholds, keyword-only
        min_obs, min_tail_obs, max_bootstrap_obs and alpha are used.
    method : {"t", "bootstrap", "percentile", "BCa"}
        Checked here; a bootstrap is applied to the described cells by `bootstrap_cells` (the
        pipeline calls it after benchreport.stats.sessions.session_level_cells).
    n_resamples, seed, level, latest
        Resamples; seed (same data and seed give byte-identical tables); the
        confidence level (default 1 - alpha); which date describes a seat: the
        latest of each harness and probe that measured it ("seat", `described_runs`)
        or each cell's latest ("cell").

    Returns
    -------
    CellSet (see the module docstring for the routes).
    """
    source, cfg = cell_inputs(
        measurements,
        requests,
        runs,
        thresholds=thresholds,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
        level=level,
        latest=latest,
    )
    level = cfg.level
    passes = pass_rows(measurements, source, runs, thresholds)
    if not len(passes):
        return empty_cellset(level)
    latest_index = set(_select_latest(passes, latest).index)
    latest_rows, frames = estimate_rows(passes, passes, cfg, level, latest_index)
    within_intervals(latest_rows, source, cfg)
    every = joined_cells(latest_rows, frames)
    latest_flags = np.zeros(len(every), dtype=bool)
    latest_flags[: len(latest_rows)] = True
    typed = PASSES.typed(passes)
    return CellSet(
        sorted_cells(every[latest_flags].reset_index(drop=True)),
        typed,
        level,
        sorted_cells(every),
        {},
        notable=typed,
        request_counts=request_counts(typed),
    )


def empty_cellset(level: float) -> CellSet:
    empty = CELLS.empty()
    typed = PASSES.empty()
    return CellSet(empty, typed, level, empty, notable=typed, request_counts=request_counts(None))


def joined_cells(latest_rows: list[dict], frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The estimated cells, the described ones (still dicts: their within-run intervals were just
    added) first, then the typed batches."""
    parts = ([CELLS.typed(pd.DataFrame(latest_rows, columns=CELLS.names))] if latest_rows else []) + frames
    frames.clear()
    if not parts:
        return CELLS.empty()
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


_GROUP_KEYS = ["seat", "_h", "_p", "_l", "workload", "_c", "metric", "statistic", "date"]


def estimate_rows(
    todo: pd.DataFrame,
    passes: pd.DataFrame,
    cfg: CellConfig,
    level: float,
    latest_index: set,
    variances: dict | None = None,
) -> tuple[list[dict], list[pd.DataFrame]]:
    """The cells of the pass rows `todo` (one per cell key and date): those whose first row is in
    `latest_index` as dicts (their within-run intervals come next), the others as typed frames
    of `_BATCH` rows. 1-2-pass cells borrow a variance from the other dates of `passes` (or from
    `variances`, {cell key: {date: LogVariance}}, when given)."""
    columns = CELLS.names
    groups = todo.groupby(_GROUP_KEYS, sort=False).indices if len(todo) else {}
    if variances is None:
        variances = date_variances(passes) if any(len(pos) < 3 for pos in groups.values()) else {}
    latest_rows, batch, frames = [], [], []
    cols = _columns(todo)
    index = todo.index.to_numpy()
    plain = _plain_rows(groups, cols, level, cfg)  # most cells: a block of them at once
    for gkey, pos in groups.items():
        row = plain.get(gkey)
        if row is not None:
            i = pos.min()
        else:
            sub = _Rows(cols, np.sort(pos))
            ckey, date = gkey[:-1], gkey[-1]
            others = [v for d, v in variances.get(ckey, {}).items() if d != date]
            borrowed = pooled_log_variance(others) if len(sub) < 3 else None
            s = summarise_passes(sub["value"], level=level, borrowed=borrowed)
            i = sub.pos[0]
            key = tuple(
                cols[c][i]
                for c in ("seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic")
            )
            row = _cell_row(key, date, sub, s, borrowed if s.route == "t_log_pooled" else None, cfg)
        (latest_rows if index[i] in latest_index else batch).append(row)
        if len(batch) >= _BATCH:  # a cold year is 250,000 cells: as dicts they were most of its peak
            frames.append(CELLS.typed(pd.DataFrame(batch, columns=columns)))
            batch = []
    if batch:
        frames.append(CELLS.typed(pd.DataFrame(batch, columns=columns)))
    return latest_rows, frames


def _plain_rows(groups: dict, cols: dict, level: float, cfg: CellConfig) -> dict:
    """{group key: cell row} of the groups of 3 or more passes whose values are all positive,
    finite and not all equal (a fleet's nearly every cell): `summarise_passes` and `_cell_row`
    for a whole block of same-size groups at once, the same numbers.

    Each group's values form a row of a matrix, and every number is made by the operations the
    one-group route uses, in the same order: numpy's mean and variance of a row of a C-ordered
    matrix (its reduction over the last axis, as over a 1-D array), the exponential by
    `math.exp` where the scalar route calls it, the median as `_median` takes it. A group that is
    not plain is left to that route. Tested bit for bit against it (tests/test_cells_plain.py)."""
    by_size: dict[int, list] = {}
    for gkey, pos in groups.items():
        if len(pos) >= 3:
            by_size.setdefault(len(pos), []).append(gkey)
    out: dict = {}
    for k, gkeys in by_size.items():
        pos = np.sort(np.stack([groups[g] for g in gkeys]), axis=1)
        values = cols["value"][pos]
        plain = (np.isfinite(values) & (values > 0)).all(axis=1) & (values != values[:, :1]).any(axis=1)
        if not plain.any():
            continue
        pos, values = pos[plain], values[plain]
        gkeys = [g for g, p in zip(gkeys, plain.tolist()) if p]
        out.update(_plain_block(gkeys, pos, values, k, cols, level, cfg))
    return out


def _plain_block(gkeys, pos, values, k, cols, level, cfg) -> dict:
    """`_plain_rows` of same-size plain groups: `pos` their rows' positions, `values` theirs."""
    level = check_level(level)
    logs = np.log(values)
    log_mean = logs.mean(axis=1)
    se = np.sqrt(logs.var(axis=1, ddof=1) / k)  # math.sqrt and np.sqrt: both correctly rounded
    t = t_ppf(0.5 + level / 2.0, k - 1)
    lows = [math.exp(x) for x in (log_mean - t * se).tolist()]
    highs = [math.exp(x) for x in (log_mean + t * se).tolist()]
    estimates = np.exp(log_mean).tolist()
    ordered = np.sort(values, axis=1)
    m = k // 2
    medians = (ordered[:, m] if k % 2 else (ordered[:, m - 1] + ordered[:, m]) / 2).tolist()
    mins, maxes = ordered[:, 0].tolist(), ordered[:, -1].tolist()
    log_means, ses = log_mean.tolist(), se.tolist()
    counts = {c: _int_sums(cols[c][pos]) for c in ("n_obs", "n_requests", "n_failed")}
    means = {c: _geometric_means(cols[c][pos]) for c in ("reported", "recomputed")}
    first = pos[:, 0]
    keys = zip(
        *(
            cols[c][first].tolist()
            for c in ("seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic")
        )
    )
    sources, conditions = cols["source"][pos].tolist(), cols["condition"][pos]
    method = ci_method_text("t_log", "", df=float(k - 1))
    rl, df = range_level(k), float(k - 1)
    out = {}
    for j, (gkey, key, vals) in enumerate(zip(gkeys, keys, values.tolist())):
        summary = PassSummary(
            estimate=estimates[j],
            low=lows[j],
            high=highs[j],
            level=level,
            n_passes=k,
            log_mean=log_means[j],
            log_se=ses[j],
            df=df,
            route="t_log",
            reason="",
            median=medians[j],
            min=mins[j],
            max=maxes[j],
            range_level=rl,
        )
        row = out[gkey] = _row_of(
            key,
            gkey[-1],
            summary,
            cfg,
            n_passes=k,
            values=";".join(map(repr, vals)),
            n_obs=counts["n_obs"][j],
            n_requests=counts["n_requests"][j],
            n_failed=counts["n_failed"][j],
            reported=means["reported"][j],
            recomputed=means["recomputed"][j],
            condition=_first_present(conditions[j]),
            source="+".join(sorted(set(sources[j]))),
            lag1=math.nan,
            group=None,
        )
        row["ci_method"] = method
    return out


def _int_sums(counts: np.ndarray) -> list:
    """`_int_sum` of each row: the sum of its whole counts, NA where one is missing."""
    missing = np.isnan(counts).any(axis=1).tolist()
    sums = np.where(np.isnan(counts), 0.0, counts).sum(axis=1).tolist()  # exact below 2^53
    return [pd.NA if gone else int(s) for gone, s in zip(missing, sums)]


def _geometric_means(v: np.ndarray) -> list:
    """`_geometric_mean` of each row of 2 or more values: NaN unless every one is positive and finite."""
    ok = ((v > 0.0) & (v < math.inf)).all(axis=1)
    out = [math.nan] * v.shape[0]
    if ok.any():
        means = np.exp(np.log(v[ok]).mean(axis=1)).tolist()
        for j, mean in zip(np.flatnonzero(ok).tolist(), means):
            out[j] = mean
    return out


def chunk_cells(chunk: pd.DataFrame, cfg: CellConfig, level: float) -> pd.DataFrame:
    """The 3+-pass cells of some dates' pass rows (with ``_small``): they depend on their own date
    only, so a cold analysis computes them while the dates' rows are at hand (as a day cache
    entry keeps them) instead of holding a year of rows for one loop."""
    big = chunk[~chunk["_small"].to_numpy(dtype=bool)]
    _, frames = estimate_rows(big, big, cfg, level, set())
    if not frames:
        return CELLS.empty()
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def cells(
    measurements: pd.DataFrame | None,
    requests: pd.DataFrame | RequestSource | None = None,
    runs: pd.DataFrame | None = None,
    **options,
) -> pd.DataFrame:
    """The cells table of `estimate_cells` (tables/cells.csv)."""
    return estimate_cells(measurements, requests, runs, **options).cells


# --------------------------------------------------------------------------- the bootstrap (issue 43)
#: the routes a bootstrap replaces: t over one date's passes, t over the date means
_BOOTSTRAPPED = ("t_log", "t_log_sessions")


def _pass_logs(passes: pd.DataFrame) -> dict[tuple, dict[str, np.ndarray]]:
    """{cell key as benchreport.stats.sessions.session_groups has it: {date: log pass values}}."""
    if passes is None or not len(passes):
        return {}
    keys = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic", "date"]
    v = pd.to_numeric(passes["value"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(v) & (v > 0)
    p = passes.loc[ok, keys].astype(object)
    logs = np.log(v[ok])
    out = {}
    for k, pos in p.groupby(keys, dropna=False, sort=False).indices.items():
        out.setdefault(tuple(plain_key(x) for x in k[:-1]), {})[str(k[-1])] = logs[np.sort(pos)]
    return out


def bootstrap_cells(
    cells: pd.DataFrame,
    passes: pd.DataFrame,
    *,
    method: str,
    n_resamples: int,
    seed: int,
    level: float,
    since: dict | None = None,
) -> pd.DataFrame:
    """The described cells with a bootstrap interval in place of t (``--ci-method bootstrap``).

    A ``t_log`` cell: its date's passes resampled; a ``t_log_sessions`` cell (3+ dates of its
    steady level, `since`): its dates resampled, then the passes within each
    (benchreport.stats.bootstrap.hierarchical_bootstrap; Davison & Hinkley 1997, §3.8). Each cell
    draws from its own generator, seeded by `seed` and the cell's key, so the same data and seed
    give byte-identical intervals and adding a seat changes no other seat's. The estimate,
    ``log_se`` and ``df`` stay those of t (the comparisons are t's); other routes are left as
    they were.
    """
    method = check_ci_method(method)
    if method == "t" or cells is None or not len(cells):
        return cells
    logs = _pass_logs(passes)
    since = since or {}
    out = cells.copy()
    lo, hi = out["ci_low"].to_numpy(dtype=float).copy(), out["ci_high"].to_numpy(dtype=float).copy()
    route, text = out["ci_route"].to_numpy(dtype=object).copy(), out["ci_method"].to_numpy(dtype=object).copy()
    keys = ["seat", "harness", "probe", "load_id", "workload", "concurrency", "metric", "statistic", "date"]
    for i, row in enumerate(out[keys + ["ci_route"]].astype(object).itertuples(index=False, name=None)):
        if row[-1] not in _BOOTSTRAPPED:
            continue
        key, date = tuple(plain_key(x) for x in row[:-2]), str(row[-2])
        dates = logs.get(key, {})
        if row[-1] == "t_log":
            groups = [dates.get(date)]
        else:
            start = since.get(key)
            groups = [dates[d] for d in sorted(dates) if d <= date and (start is None or d >= start)]
        groups = [g for g in groups if g is not None and len(g)]
        if not groups:
            continue
        rng = np.random.default_rng([seed, zlib.crc32(repr(key).encode())])
        b = hierarchical_bootstrap(groups, method=method, n_resamples=n_resamples, level=level, rng=rng)
        if not (math.isfinite(b.low) and math.isfinite(b.high)):
            continue
        lo[i], hi[i] = math.exp(b.low), math.exp(b.high)
        two = len(groups) > 1
        route[i] = "bootstrap_sessions" if two else "bootstrap"
        over = f"{len(groups)} dates, then their passes" if two else f"{len(groups[0])} passes"
        text[i] = f"{'two-stage ' if two else ''}bootstrap {method} over {over} (B={n_resamples}, seed {seed})"
    out["ci_low"], out["ci_high"] = lo, hi
    out["ci_route"] = pd.array(route, dtype=out["ci_route"].dtype)
    out["ci_method"] = pd.array(text, dtype=out["ci_method"].dtype)
    return out
