"""Cell estimates and confidence intervals: tables/cells.csv.

A cell is one (seat, workload, concurrency, metric, statistic). Passes are the
unit of replication: requests of different passes are never pooled as if
independent. Which interval a cell gets (its `ci_method`) follows from how it
was measured:

============================================  ==========================================
measured as                                   ci_method
============================================  ==========================================
1 pass, request records, n >= min_obs         ``bootstrap BCa over requests`` (or
(quantile q > .5 also n(1-q) >= min_tail_obs)  ``bootstrap percentile over requests``)
1 pass, requests, mean, 2 <= n < min_obs      ``t (n<min_obs)``
1 pass, requests, quantile, n < min_obs       ``none: n < {min_obs}``
1 pass, requests, tail q, n(1-q) too small    ``none: n*(1-q) < {min_tail_obs}``
1 pass, requests, n < 2                       ``none: n < 2``
1 pass, aggregate figure with a CI            ``published`` (its own ci_level)
1 pass, aggregate figure                      ``none: single pass``
2 passes                                      ``none: two passes, both values reported``
3 <= passes < min_passes_bootstrap            ``t over passes (df={passes - 1})``
passes >= min_passes_bootstrap                ``bootstrap BCa over passes``
all values equal (where a CI was due)         ``none: all values equal``
BCa undefined                                 ``none: BCa undefined ...``
============================================  ==========================================

With several passes each pass contributes one value (the statistic of its
requests where records exist, else its aggregate figure) and the estimate is
the mean of the pass values.

Conditions: a measurement with a `condition` (engine_init_s cold/warm) is its
own cell; its workload is written ``"<workload>:<condition>"`` (e.g.
``init:cold``) so that CELL_KEY stays unique, and the `condition` column
repeats the condition.

Dates: by default each seat is described by its latest date with
measurements or requests (``latest="seat"``); ``latest="cell"`` takes each
cell's latest date instead. Earlier dates feed history comparisons.

Randomness: each request group (seat, date, workload, concurrency, pass,
run) draws its resamples from ``SeedSequence([seed, crc32(group key)])`` and
each pass-level bootstrap from the cell key, so the same data and seed give
byte-identical tables and adding a seat never changes another seat's CIs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtri

from ..columns import METRICS, QUANTILES, REQUEST_METRICS, REQUEST_STATISTICS, STATISTICS
from ..thresholds import DEFAULT, Thresholds
from ._common import check_level, format_values, key_rng, lerp, quantile_positions
from .bootstrap import BootstrapDistribution, _method_iv, _n_resamples_iv, bootstrap_group
from .intervals import t_interval

__all__ = ["CELL_COLUMNS", "CELL_EXTRA_COLUMNS", "cells", "request_metrics", "ci_method_family"]

#: columns of tables/cells.csv (spec/cli.md), in order
CELL_COLUMNS = ["seat", "workload", "concurrency", "metric", "statistic", "unit", "n_passes",
                "n_obs", "estimate", "ci_low", "ci_high", "ci_level", "ci_method", "values"]
#: extra columns cells() adds after the spec's
CELL_EXTRA_COLUMNS = ["date", "condition", "se", "source"]

PUBLISHED = "published"
NONE_SINGLE = "none: single pass"
NONE_TWO = "none: two passes, both values reported"
NONE_EQUAL = "none: all values equal"
NONE_N1 = "none: n < 2"
T_SMALL = "t (n<min_obs)"

_REQ_GROUP = ["seat", "date", "workload", "concurrency", "pass", "run_id"]


def ci_method_family(ci_method: str) -> str:
    """Coarse family of a ci_method string: 'requests', 'passes', 't_small', 'published' or 'none'."""
    if not isinstance(ci_method, str) or ci_method.startswith("none"):
        return "none"
    if ci_method == PUBLISHED:
        return "published"
    if " over requests" in ci_method:
        return "requests"
    if " over passes" in ci_method:
        return "passes"
    if ci_method == T_SMALL:
        return "t_small"
    return "none"


# --------------------------------------------------------------------------- inputs
def _frame_iv(df, name: str, required: list[str]) -> pd.DataFrame:
    if df is None:
        return None
    if not isinstance(df, pd.DataFrame):
        raise ValueError(f"`{name}` must be a pandas DataFrame or None")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise ValueError(f"`{name}` lacks column(s) {missing}")
    return df


def request_metrics(requests: pd.DataFrame) -> pd.DataFrame:
    """Per-request metric values of the successful requests.

    ttft_ms, itl_ms and e2e_latency_ms are read directly;
    decode_tok_s_per_stream = (output_tokens - 1) / ((e2e_latency_ms - ttft_ms)/1000)
    when output_tokens > 1 and e2e > ttft (1000/TPOT, TPOT as vLLM's
    benchmark_serving defines it). Failed requests (error present or
    finish_reason == "error") are left out.

    Returns
    -------
    DataFrame: run_id, seat, date, pass, workload, concurrency and one column per
    metric of analysis.columns.REQUEST_METRICS (NaN where undefined).
    """
    _frame_iv(requests, "requests", ["run_id", "seat", "date", "pass", "workload", "concurrency"])
    r = requests
    failed = pd.Series(False, index=r.index)
    if "error" in r:
        failed |= r["error"].notna().to_numpy()
    if "finish_reason" in r:
        failed |= (r["finish_reason"].astype("object") == "error").to_numpy()
    r = r.loc[~failed.to_numpy()]
    out = r[["run_id", "seat", "date", "pass", "workload", "concurrency"]].copy()

    def num(col):
        if col not in r:
            return np.full(len(r), np.nan)
        return pd.to_numeric(r[col], errors="coerce").astype("Float64").to_numpy(dtype=float, na_value=np.nan)

    ttft, e2e, itl, out_tok = num("ttft_ms"), num("e2e_latency_ms"), num("itl_ms"), num("output_tokens")
    with np.errstate(invalid="ignore", divide="ignore"):
        ok = (out_tok > 1) & (e2e > ttft) & np.isfinite(out_tok) & np.isfinite(e2e) & np.isfinite(ttft)
        dec = np.where(ok, (out_tok - 1) / ((e2e - ttft) / 1000.0), np.nan)
    vals = {"ttft_ms": ttft, "itl_ms": itl, "e2e_latency_ms": e2e, "decode_tok_s_per_stream": dec}
    for m in REQUEST_METRICS:
        v = vals[m]
        out[m] = np.where(np.isfinite(v), v, np.nan)
    return out.reset_index(drop=True)


def _workload_key(workload: pd.Series, condition: pd.Series) -> pd.Series:
    w = workload.astype("object")
    c = condition.astype("object")
    has = c.notna().to_numpy()
    out = w.copy()
    out[has] = [f"{a}:{b}" for a, b in zip(w[has], c[has])]
    return out


def _measurement_rows(measurements: pd.DataFrame) -> pd.DataFrame:
    m = measurements
    cond = m["condition"] if "condition" in m else pd.Series([None] * len(m), index=m.index)
    stat = m["statistic"].astype("object") if "statistic" in m else pd.Series(["mean"] * len(m), index=m.index)
    stat = stat.where(stat.notna(), "mean")

    def col(c, default=np.nan):
        return m[c] if c in m else pd.Series([default] * len(m), index=m.index)

    out = pd.DataFrame({
        "seat": m["seat"].astype("object"), "date": m["date"].astype(str),
        "workload": _workload_key(m["workload"], cond), "condition": cond.astype("object"),
        "concurrency": pd.array(col("concurrency", pd.NA), dtype="Int64"),
        "metric": m["metric"].astype("object"), "statistic": stat,
        "pass": pd.to_numeric(col("pass", 1)).fillna(1).astype(int),
        "run_id": col("run_id", "").astype("object").fillna("").astype(str),
        "value": pd.to_numeric(m["value"], errors="coerce").astype(float),
        "n": pd.array(pd.to_numeric(col("n", pd.NA), errors="coerce"), dtype="Int64"),
        "ci_low": pd.to_numeric(col("ci_low"), errors="coerce").astype(float),
        "ci_high": pd.to_numeric(col("ci_high"), errors="coerce").astype(float),
        "ci_level": pd.to_numeric(col("ci_level"), errors="coerce").astype(float),
        "source": "measurements", "group": -1,
        "unit": col("unit", None).astype("object"),
    })
    out = out[np.isfinite(out["value"].to_numpy())]
    return out.reset_index(drop=True)


@dataclass
class _Group:
    """Request values of one (seat, date, workload, concurrency, pass, run), canonical order."""

    key: tuple
    values: np.ndarray   # (n_requests, n_metrics), NaN where a metric is undefined
    metrics: tuple


def _request_rows(requests: pd.DataFrame) -> tuple[pd.DataFrame, list[_Group]]:
    """Per-pass statistics from request records, and the groups for bootstrapping."""
    rm = request_metrics(requests)
    if not len(rm):
        return pd.DataFrame(), []
    rm = rm.assign(date=rm["date"].astype(str), run_id=rm["run_id"].astype(str),
                   workload=rm["workload"].astype("object"), seat=rm["seat"].astype("object"),
                   concurrency=pd.array(rm["concurrency"], dtype="Int64"),
                   **{"pass": pd.to_numeric(rm["pass"]).fillna(1).astype(int)})
    rows = []
    groups: list[_Group] = []
    metrics = tuple(REQUEST_METRICS)
    for key, g in rm.groupby(_REQ_GROUP, sort=True, dropna=False):
        x = g[list(metrics)].to_numpy(dtype=float)
        # canonical order (independent of the input's row order): lexsort on the values
        order = np.lexsort(x.T[::-1])
        x = x[order]
        gid = len(groups)
        groups.append(_Group(key=tuple(key), values=x, metrics=metrics))
        seat, date, workload, conc, pss, run = key
        for j, metric in enumerate(metrics):
            v = x[:, j]
            v = np.sort(v[np.isfinite(v)])
            n = v.shape[0]
            if n == 0:
                continue
            for stat in REQUEST_STATISTICS:
                if stat == "mean":
                    val = float(v.mean())
                else:
                    lo, hi, gm = quantile_positions(n, QUANTILES[stat])
                    val = float(lerp(v[lo], v[hi], gm))
                rows.append((seat, date, workload, None, conc, metric, stat, pss, run, val, n,
                             np.nan, np.nan, np.nan, "requests", gid, METRICS[metric][0]))
    cols = ["seat", "date", "workload", "condition", "concurrency", "metric", "statistic", "pass",
            "run_id", "value", "n", "ci_low", "ci_high", "ci_level", "source", "group", "unit"]
    out = pd.DataFrame(rows, columns=cols)
    out["concurrency"] = pd.array(out["concurrency"], dtype="Int64")
    out["n"] = pd.array(out["n"], dtype="Int64")
    return out, groups


def _replicates(measurements, requests) -> tuple[pd.DataFrame, list[_Group]]:
    """All replicate-level values (one row per cell, date and pass/run); requests win over aggregates."""
    parts = []
    groups: list[_Group] = []
    if requests is not None and len(requests):
        rrows, groups = _request_rows(requests)
        if len(rrows):
            parts.append(rrows.assign(_prio=0))
    if measurements is not None and len(measurements):
        parts.append(_measurement_rows(measurements).assign(_prio=1))
    if not parts:
        return pd.DataFrame(), groups
    reps = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    reps["concurrency"] = pd.array(reps["concurrency"], dtype="Int64")
    reps["_conc"] = reps["concurrency"].fillna(-1).astype(int)
    reps = reps.sort_values(["seat", "date", "workload", "_conc", "metric", "statistic", "pass",
                             "run_id", "_prio"], kind="stable")
    reps = reps.drop_duplicates(["seat", "date", "workload", "_conc", "metric", "statistic", "pass",
                                 "run_id"], keep="first")
    return reps.reset_index(drop=True), groups


# --------------------------------------------------------------------------- per-seat cells
@dataclass
class _Config:
    thresholds: Thresholds
    method: str
    n_resamples: int
    level: float
    seed: int
    keep: bool


def _stat_order(stat: str) -> int:
    return STATISTICS.index(stat) if stat in STATISTICS else len(STATISTICS)


def _implied_se(lo, hi, level) -> float:
    if not (np.isfinite(lo) and np.isfinite(hi) and np.isfinite(level) and 0 < level < 1):
        return math.nan
    return float((hi - lo) / (2.0 * ndtri(0.5 + level / 2.0)))


def _seat_cells(reps: pd.DataFrame, groups: list[_Group], cfg: _Config):
    """Cells of one seat (all dates present in `reps`).

    Returns (list of row dicts, {cell key: BootstrapDistribution} for cells
    bootstrapped over requests, when cfg.keep).
    """
    th = cfg.thresholds
    rows = []
    pending: dict[int, list[int]] = {}   # group id -> row indices awaiting a request bootstrap
    dists: dict[tuple, BootstrapDistribution] = {}
    a = {c: reps[c].to_numpy(dtype=object) for c in ("source", "condition", "unit", "concurrency")}
    value = reps["value"].to_numpy(dtype=float)
    nn = reps["n"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    lo_a = reps["ci_low"].to_numpy(dtype=float)
    hi_a = reps["ci_high"].to_numpy(dtype=float)
    lv_a = reps["ci_level"].to_numpy(dtype=float)
    gid_a = reps["group"].to_numpy(dtype=np.int64)
    # rows of `reps` are sorted by cell key, then pass and run: positions ascending = pass order
    index = reps.groupby(["seat", "date", "workload", "_conc", "metric", "statistic"], sort=True).indices
    for key, pos in index.items():
        pos = np.sort(pos)
        seat, date, workload, _c, metric, stat = key
        conc = a["concurrency"][pos[0]]
        vals = value[pos]
        k = vals.shape[0]
        n_obs = int(nn[pos].sum()) if np.all(np.isfinite(nn[pos])) else pd.NA
        sources = set(a["source"][pos])
        source = sources.pop() if len(sources) == 1 else "requests+measurements"
        cond = a["condition"][pos[0]]
        row = dict(seat=seat, workload=workload, concurrency=conc, metric=metric, statistic=stat,
                   unit=METRICS[metric][0] if metric in METRICS else a["unit"][pos[0]],
                   n_passes=k, n_obs=n_obs,
                   estimate=float(np.mean(vals)) if k > 1 else float(vals[0]),
                   ci_low=math.nan, ci_high=math.nan, ci_level=math.nan, ci_method="",
                   values=format_values(vals), date=date,
                   condition=cond if isinstance(cond, str) else None, se=math.nan, source=source,
                   _values=vals)
        if k == 1:
            p0 = pos[0]
            if a["source"][p0] == "requests":
                n = int(nn[p0])
                q = QUANTILES.get(stat)
                if n < 2:
                    row["ci_method"] = NONE_N1
                elif stat == "mean":
                    if n >= th.min_obs:
                        row["ci_method"] = "pending"
                    else:
                        v = _group_metric_values(groups[int(gid_a[p0])], metric)
                        if np.all(v == v[0]):
                            row["ci_method"] = NONE_EQUAL
                        else:
                            t = t_interval(v, level=cfg.level)
                            row.update(ci_low=t.low, ci_high=t.high, ci_level=cfg.level,
                                       se=t.standard_error, ci_method=T_SMALL)
                elif q is None:
                    row["ci_method"] = NONE_SINGLE
                elif n < th.min_obs:
                    row["ci_method"] = f"none: n < {th.min_obs}"
                elif q > 0.5 and n * (1.0 - q) < th.min_tail_obs:
                    row["ci_method"] = f"none: n*(1-q) < {th.min_tail_obs}"
                else:
                    row["ci_method"] = "pending"
                if row["ci_method"] == "pending":
                    pending.setdefault(int(gid_a[p0]), []).append(len(rows))
            elif np.isfinite(lo_a[p0]) and np.isfinite(hi_a[p0]):
                lvl = float(lv_a[p0])
                row.update(ci_low=float(lo_a[p0]), ci_high=float(hi_a[p0]), ci_level=lvl,
                           se=_implied_se(lo_a[p0], hi_a[p0], lvl), ci_method=PUBLISHED,
                           source="published")
            else:
                row["ci_method"] = NONE_SINGLE
        elif k == 2:
            row["ci_method"] = NONE_TWO
        elif np.all(vals == vals[0]):
            row["ci_method"] = NONE_EQUAL
        elif k < th.min_passes_bootstrap:
            t = t_interval(vals, level=cfg.level)
            row.update(ci_low=t.low, ci_high=t.high, ci_level=cfg.level, se=t.standard_error,
                       ci_method=f"t over passes (df={k - 1})")
        else:
            rng = key_rng(cfg.seed, ("passes", seat, date, workload, conc, metric, stat))
            gb = bootstrap_group(vals, ("mean",), method=cfg.method, n_resamples=cfg.n_resamples,
                                 level=cfg.level, rng=rng, warn=False)
            _fill_boot(row, gb, 0, 0, cfg, f"bootstrap {cfg.method} over passes")
        rows.append(row)

    for gid, idxs in pending.items():
        _bootstrap_group_rows(groups[gid], [rows[i] for i in idxs], cfg, dists)
    for r in rows:
        if r["ci_method"] == "pending":  # cannot happen with n >= 2; never leak the marker
            r["ci_method"] = NONE_N1
    return rows, dists


def _group_metric_values(group: _Group, metric: str) -> np.ndarray:
    v = group.values[:, group.metrics.index(metric)]
    return v[np.isfinite(v)]


def _fill_boot(row, gb, j, k, cfg, label):
    lo, hi = float(gb.low[j, k]), float(gb.high[j, k])
    if math.isnan(lo) or math.isnan(hi):
        note = str(gb.note[j, k])
        row["ci_method"] = NONE_EQUAL if note.startswith("degenerate") else (
            "none: BCa undefined (estimate outside the bootstrap distribution)")
        return
    extra = " (acceleration 0: tied data)" if str(gb.note[j, k]).startswith("acceleration") else ""
    row.update(ci_low=lo, ci_high=hi, ci_level=cfg.level, se=float(gb.standard_error[j, k]),
               ci_method=label + extra)


def _bootstrap_group_rows(group: _Group, rows: list[dict], cfg: _Config, dists: dict) -> None:
    """Bootstrap the pending cells of one request group, metrics with equal masks sharing resamples."""
    finite = np.isfinite(group.values)
    buckets: dict[bytes, list[int]] = {}
    for j in range(len(group.metrics)):
        if finite[:, j].any():
            buckets.setdefault(np.packbits(finite[:, j]).tobytes(), []).append(j)
    by_metric = {}
    for r in rows:
        by_metric.setdefault(r["metric"], []).append(r)
    for js in buckets.values():
        names = [group.metrics[j] for j in js if group.metrics[j] in by_metric]
        if not names:
            continue
        mask = finite[:, js[0]]
        x = group.values[mask][:, [group.metrics.index(m) for m in names]].T
        if x.shape[1] < 2:
            continue
        stats_needed = sorted({r["statistic"] for m in names for r in by_metric[m]}, key=_stat_order)
        # bucket key: the group key plus every metric sharing this mask (data-determined)
        bucket_names = tuple(group.metrics[j] for j in js)
        rng = key_rng(cfg.seed, ("requests",) + group.key + bucket_names)
        gb = bootstrap_group(x, stats_needed, method=cfg.method, n_resamples=cfg.n_resamples,
                             level=cfg.level, rng=rng, keep_distribution=cfg.keep, warn=False)
        for jm, m in enumerate(names):
            for r in by_metric[m]:
                ks = stats_needed.index(r["statistic"])
                xm = x[jm]
                if np.all(xm == xm[0]):
                    r["ci_method"] = NONE_EQUAL
                    continue
                _fill_boot(r, gb, jm, ks, cfg, f"bootstrap {cfg.method} over requests")
                if cfg.keep and r["ci_method"].startswith("bootstrap"):
                    dists[(r["seat"], r["date"], r["workload"], _conc_key(r["concurrency"]), m,
                           r["statistic"])] = gb.sample(jm, ks)


def _conc_key(c) -> int:
    return -1 if c is None or c is pd.NA or (isinstance(c, float) and math.isnan(c)) else int(c)


def _empty_cells() -> pd.DataFrame:
    return _typed(pd.DataFrame(columns=CELL_COLUMNS + CELL_EXTRA_COLUMNS))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in ("seat", "workload", "metric", "statistic", "unit", "ci_method", "values", "date",
              "condition", "source"):
        out[c] = out[c].astype("object").where(out[c].notna(), None).astype("string")
    for c in ("concurrency", "n_passes", "n_obs"):
        out[c] = pd.array(pd.to_numeric(out[c].astype("object"), errors="coerce"), dtype="Int64")
    for c in ("estimate", "ci_low", "ci_high", "ci_level", "se"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    return out[CELL_COLUMNS + CELL_EXTRA_COLUMNS].reset_index(drop=True)


def _sorted_cells(df: pd.DataFrame) -> pd.DataFrame:
    if not len(df):
        return df
    keys = df.assign(_c=df["concurrency"].fillna(np.iinfo(np.int64).max).astype("int64"),
                     _s=[_stat_order(s) for s in df["statistic"]])
    keys = keys.sort_values(["seat", "date", "workload", "_c", "metric", "_s"], kind="stable")
    return keys.drop(columns=["_c", "_s"]).reset_index(drop=True)


def _options_iv(thresholds, method, n_resamples, seed, level, latest=None):
    if not isinstance(thresholds, Thresholds):
        raise ValueError("`thresholds` must be an analysis.thresholds.Thresholds")
    method = _method_iv(method)
    n_resamples = _n_resamples_iv(n_resamples)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer; got {seed!r}")
    level = check_level(1.0 - thresholds.alpha if level is None else level)
    if latest is not None and latest not in ("seat", "cell"):
        raise ValueError(f"`latest` must be 'seat' or 'cell'; got {latest!r}")
    return method, n_resamples, int(seed), level


def _select_latest(reps: pd.DataFrame, latest: str) -> pd.DataFrame:
    if latest == "seat":
        last = reps.groupby("seat")["date"].transform("max")
    else:
        last = reps.groupby(["seat", "workload", "_conc", "metric", "statistic"])["date"].transform("max")
    return reps[reps["date"] == last]


def cells(measurements: pd.DataFrame | None, requests: pd.DataFrame | None = None, *,
          thresholds: Thresholds = DEFAULT, method: str = "BCa", n_resamples: int = 10000,
          seed: int = 0, level: float | None = None, latest: str = "seat") -> pd.DataFrame:
    """Estimate and confidence interval of every cell, as tables/cells.csv.

    Parameters
    ----------
    measurements : DataFrame or None
        The `measurements` tidy table (analysis.columns.TABLE_COLUMNS).
    requests : DataFrame or None
        The `requests` tidy table.
    thresholds : Thresholds, keyword-only
        min_obs, min_tail_obs, min_passes_bootstrap and alpha are used.
    method : {"BCa", "percentile"}
        Bootstrap interval (over requests of one pass, or over passes).
    n_resamples : int
    seed : int
        Same data and seed give byte-identical tables.
    level : float, optional
        Confidence level; default 1 - thresholds.alpha.
    latest : {"seat", "cell"}
        Which date describes a seat: its latest date overall ("seat", default)
        or each cell's latest date ("cell").

    Returns
    -------
    DataFrame
        CELL_COLUMNS (tables/cells.csv) then CELL_EXTRA_COLUMNS (`date`,
        `condition`, `se`, `source`), sorted by seat, workload, concurrency,
        metric, statistic. See the module docstring for `ci_method`.

    References
    ----------
    Davison, A. C. & Hinkley, D. V. (1997), Bootstrap Methods and their
    Application, §3.8 (resample the top level of hierarchical data); Ren, S.
    et al. (2010), Nonparametric bootstrapping for hierarchical data, J. Appl.
    Stat. 37(9), 1487-1498; Cameron, A. C. & Miller, D. L. (2015), A
    practitioner's guide to cluster-robust inference, J. Human Resources
    50(2) (few clusters: t with G - 1 df); Efron (1987) (BCa).
    """
    _frame_iv(measurements, "measurements", ["seat", "date", "workload", "metric", "value"])
    _frame_iv(requests, "requests", ["seat", "date", "pass", "workload", "concurrency"])
    method, n_resamples, seed, level = _options_iv(thresholds, method, n_resamples, seed, level, latest)
    cfg = _Config(thresholds, method, n_resamples, level, seed, keep=False)
    reps, groups = _replicates(measurements, requests)
    if not len(reps):
        return _empty_cells()
    reps = _select_latest(reps, latest)
    rows = []
    for _seat, rs in reps.groupby("seat", sort=True):
        r, _ = _seat_cells(rs, groups, cfg)
        rows.extend(r)
    return _sorted_cells(_typed(pd.DataFrame(rows)))

