"""Comparisons: candidate/baseline ratios with CIs and verdicts, as tables/comparisons.csv.

For every cell shared by the baseline seat and another seat (kind
"baseline"), and for every cell of a seat measured on several dates (kind
"history": each earlier date against the latest), the ratio
candidate / baseline with a confidence interval chosen by how both sides were
measured:

=====================================================  ===============================================
both sides                                             ci_method
=====================================================  ===============================================
1 pass with requests, bootstrapped (n >= min_obs)      ``bootstrap BCa ratio over requests`` (each side
                                                       resampled independently, same engine and
                                                       streams as cells(); ratio of resampled statistics)
>= min_passes_bootstrap passes                         ``bootstrap BCa ratio over passes``
>= 3 passes (otherwise)                                ``Welch t on log pass values`` (ratio of
                                                       geometric means)
one side published CI, the other any CI with an SE     ``Fieller (normal, SE from published CI)``
anything else                                          ``none: ...`` (why), verdict insufficient_data
=====================================================  ===============================================

Verdict, direction aware (analysis.columns.higher_is_better): a CI inside
[1 - noise, 1 + noise] is ``within_noise``; otherwise a CI entirely on the
good side of 1 is ``better``, entirely on the bad side ``worse``; a CI that
straddles 1 (and is wider than the noise band), or no CI, is
``insufficient_data``. The noise band is checked first, as criterion.rs does:
a difference the CI pins inside +/- noise is too small to call, however
significant.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..columns import METRICS, STATISTICS, higher_is_better
from ..thresholds import DEFAULT, Thresholds
from ._common import key_rng, resolve_baseline
from .bootstrap import bootstrap_group, bootstrap_ratio
from .cells import _Config, _conc_key, _frame_iv, _options_iv, _replicates, _seat_cells, ci_method_family
from .intervals import fieller_ratio, welch_log_ratio

__all__ = ["COMPARISON_COLUMNS", "COMPARISON_EXTRA_COLUMNS", "VERDICTS", "comparisons", "verdict"]

#: columns of tables/comparisons.csv (spec/cli.md), in order
COMPARISON_COLUMNS = ["workload", "concurrency", "metric", "statistic", "baseline", "candidate",
                      "baseline_estimate", "candidate_estimate", "ratio", "ci_low", "ci_high",
                      "ci_method", "verdict"]
#: extra columns comparisons() adds after the spec's
COMPARISON_EXTRA_COLUMNS = ["kind", "baseline_date", "candidate_date", "ci_level",
                            "baseline_n_passes", "candidate_n_passes", "n_baseline", "n_candidate"]
VERDICTS = ("better", "worse", "within_noise", "insufficient_data")


def verdict(low: float, high: float, *, higher_is_better: bool, noise: float) -> str:
    """Verdict of a candidate/baseline ratio CI.

    ``within_noise`` if the CI lies inside [1 - noise, 1 + noise]; else
    ``better`` / ``worse`` if the CI excludes 1 (direction from
    `higher_is_better`); else (or without a CI) ``insufficient_data``.

    References
    ----------
    criterion.rs `compare` (noise_threshold, "change within noise threshold").
    """
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return "insufficient_data"
    if not (noise >= 0):
        raise ValueError(f"`noise` must be >= 0; got {noise!r}")
    if 1.0 - noise <= low and high <= 1.0 + noise:
        return "within_noise"
    if low > 1.0:
        return "better" if higher_is_better else "worse"
    if high < 1.0:
        return "worse" if higher_is_better else "better"
    return "insufficient_data"


def _why_none(b: dict, c: dict) -> str:
    parts = []
    for side, r in (("baseline", b), ("candidate", c)):
        m = r["ci_method"]
        if m.startswith("none: "):
            parts.append(f"{side} {m[6:]}")
    if parts:
        return "none: " + "; ".join(parts)
    return (f"none: not comparable (baseline {b['ci_method']}, candidate {c['ci_method']})")


def _bootstrapped(out: dict, r, cfg: _Config, unit: str) -> dict:
    """`out` with a bootstrap ratio CI (resampling `unit`), or the reason there is none."""
    if np.isfinite(r.low) and np.isfinite(r.high):
        out.update(ratio=r.estimate, ci_low=r.low, ci_high=r.high, ci_level=cfg.level,
                   ci_method=f"bootstrap {cfg.method} ratio over {unit}")
    else:
        out["ci_method"] = f"none: ratio bootstrap undefined ({r.note})"
    return out


def _ratio(b: dict, c: dict, b_dist, c_dist, cfg: _Config, keys) -> dict:
    """Ratio candidate/baseline and its CI for one pair of cells."""
    th = cfg.thresholds
    fb, fc = ci_method_family(b["ci_method"]), ci_method_family(c["ci_method"])
    kb, kc = int(b["n_passes"]), int(c["n_passes"])
    be, ce = float(b["estimate"]), float(c["estimate"])
    est = ce / be if be != 0 else math.nan
    out = dict(ratio=est, ci_low=math.nan, ci_high=math.nan, ci_level=math.nan)
    if fb == "requests" and fc == "requests" and b_dist is not None and c_dist is not None:
        r = bootstrap_ratio(c_dist, b_dist, method=cfg.method, level=cfg.level, warn=False)
        return _bootstrapped(out, r, cfg, "requests")
    if kb >= 3 and kc >= 3:
        vb, vc = np.asarray(b["_values"], float), np.asarray(c["_values"], float)
        if np.any(vb <= 0) or np.any(vc <= 0):
            out["ci_method"] = "none: non-positive pass values"
            return out
        if kb >= th.min_passes_bootstrap and kc >= th.min_passes_bootstrap:
            sides = []
            for r, v, key in ((b, vb, keys[0]), (c, vc, keys[1])):
                rng = key_rng(cfg.seed, ("passes",) + key)
                g = bootstrap_group(v, ("mean",), method=cfg.method, n_resamples=cfg.n_resamples,
                                    level=cfg.level, rng=rng, keep_distribution=True, warn=False)
                sides.append(g.sample(0, 0))
            r = bootstrap_ratio(sides[1], sides[0], method=cfg.method, level=cfg.level, warn=False)
            return _bootstrapped(out, r, cfg, "passes")
        r = welch_log_ratio(vb, vc, level=cfg.level)
        out.update(ratio=r.estimate, ci_low=r.low, ci_high=r.high, ci_level=cfg.level,
                   ci_method="Welch t on log pass values")
        if r.note.startswith("no spread"):
            out["ci_method"] = "Welch t on log pass values (no spread: zero-width)"
        return out
    if "published" in (fb, fc) and "none" not in (fb, fc):
        sb, sc = float(b["se"]), float(c["se"])
        if np.isfinite(sb) and np.isfinite(sc):
            r = fieller_ratio(ce, sc, be, sb, level=cfg.level)
            if np.isfinite(r.low) and np.isfinite(r.high):
                out.update(ci_low=r.low, ci_high=r.high, ci_level=cfg.level,
                           ci_method="Fieller (normal, SE from published CI)")
            else:
                out["ci_method"] = "none: " + r.note
            return out
        out["ci_method"] = "none: published CI without a stated level"
        return out
    out["ci_method"] = _why_none(b, c)
    return out


def _row(kind, b, c, res, th) -> dict:
    if b["metric"] in METRICS:
        v = verdict(res["ci_low"], res["ci_high"], higher_is_better=higher_is_better(b["metric"]),
                    noise=th.noise)
    else:  # direction unknown: no better/worse
        v = verdict(res["ci_low"], res["ci_high"], higher_is_better=True, noise=th.noise)
        v = v if v == "within_noise" else "insufficient_data"
    return dict(
        workload=c["workload"], concurrency=c["concurrency"], metric=c["metric"],
        statistic=c["statistic"], baseline=b["seat"], candidate=c["seat"],
        baseline_estimate=float(b["estimate"]), candidate_estimate=float(c["estimate"]),
        ratio=res["ratio"], ci_low=res["ci_low"], ci_high=res["ci_high"],
        ci_method=res["ci_method"],
        verdict=v,
        kind=kind, baseline_date=b["date"], candidate_date=c["date"], ci_level=res["ci_level"],
        baseline_n_passes=b["n_passes"], candidate_n_passes=c["n_passes"],
        n_baseline=b["n_obs"], n_candidate=c["n_obs"])


def _cell_key(r) -> tuple:
    return (r["workload"], _conc_key(r["concurrency"]), r["metric"], r["statistic"])


def _dist_key(r) -> tuple:
    return (r["seat"], r["date"]) + _cell_key(r)


def _pass_key(r) -> tuple:
    return (r["seat"], r["date"], r["workload"], r["concurrency"], r["metric"], r["statistic"])


def _latest_rows(rows: list[dict], latest: str) -> dict:
    """{cell key: row} of the date that describes the seat."""
    if not rows:
        return {}
    if latest == "seat":
        last = max(r["date"] for r in rows)
        return {_cell_key(r): r for r in rows if r["date"] == last}
    out = {}
    for r in rows:
        k = _cell_key(r)
        if k not in out or r["date"] > out[k]["date"]:
            out[k] = r
    return out


def comparisons(measurements: pd.DataFrame | None, requests: pd.DataFrame | None = None,
                seats: pd.DataFrame | None = None, *, baseline: str | None = None,
                thresholds: Thresholds = DEFAULT, method: str = "BCa", n_resamples: int = 10000,
                seed: int = 0, level: float | None = None, history: bool = True,
                latest: str = "seat") -> pd.DataFrame:
    """Candidate/baseline ratios with CIs and verdicts, as tables/comparisons.csv.

    Parameters
    ----------
    measurements, requests : DataFrame or None
        The tidy tables (as for `cells`).
    seats : DataFrame, optional
        The `seats` table: the baseline is the seat with role "incumbent".
    baseline : str, keyword-only
        Seat id of the baseline (overrides the incumbent). Without a baseline
        there are no "baseline" rows (history rows are still given).
    thresholds : Thresholds
        noise, min_obs, min_tail_obs, min_passes_bootstrap, alpha.
    method, n_resamples, seed, level, latest
        As for `cells`; the ratio bootstrap reuses the cells' random streams.
    history : bool
        Add kind="history" rows (each earlier date of a seat vs its latest).

    Returns
    -------
    DataFrame
        COMPARISON_COLUMNS then COMPARISON_EXTRA_COLUMNS; see the module
        docstring for `ci_method` and `verdict`.

    References
    ----------
    Efron & Tibshirani (1993), ch. 14 (BCa) and §16 (two samples); Welch
    (1947), Biometrika 34, 28-35; Fieller (1954), JRSS B 16, 175-185;
    Davison & Hinkley (1997), §3.8 (resample passes, the top level).
    """
    _frame_iv(measurements, "measurements", ["seat", "date", "workload", "metric", "value"])
    _frame_iv(requests, "requests", ["seat", "date", "pass", "workload", "concurrency"])
    if history not in (True, False):
        raise ValueError(f"`history` must be True or False; got {history!r}")
    method, n_resamples, seed, level = _options_iv(thresholds, method, n_resamples, seed, level, latest)
    cfg = _Config(thresholds, method, n_resamples, level, seed, keep=True)
    reps, groups = _replicates(measurements, requests)
    present = sorted(set(reps["seat"])) if len(reps) else []
    base = resolve_baseline(baseline, seats, present)
    out: list[dict] = []
    if not len(reps):
        return _typed_comparisons(pd.DataFrame(out))
    by_seat = {s: rs for s, rs in reps.groupby("seat", sort=True)}

    def seat_cells(seat):
        rows, dists = _seat_cells(by_seat[seat], groups, cfg)
        return rows, dists

    base_rows, base_dists, base_latest = [], {}, {}
    if base is not None and base in by_seat:
        base_rows, base_dists = seat_cells(base)
        base_latest = _latest_rows(base_rows, latest)
    for seat in by_seat:
        if seat == base:
            rows, dists = base_rows, base_dists
        else:
            rows, dists = seat_cells(seat)
        cur = _latest_rows(rows, latest)
        if seat != base and base_latest:
            for k in sorted(set(cur) & set(base_latest), key=_sort_key):
                b, c = base_latest[k], cur[k]
                res = _ratio(b, c, base_dists.get(_dist_key(b)), dists.get(_dist_key(c)), cfg,
                             (_pass_key(b), _pass_key(c)))
                out.append(_row("baseline", b, c, res, thresholds))
        if history:
            for r in sorted(rows, key=lambda r: (_sort_key(_cell_key(r)), r["date"])):
                k = _cell_key(r)
                if k in cur and r["date"] < cur[k]["date"]:
                    c = cur[k]
                    res = _ratio(r, c, dists.get(_dist_key(r)), dists.get(_dist_key(c)), cfg,
                                 (_pass_key(r), _pass_key(c)))
                    out.append(_row("history", r, c, res, thresholds))
        del rows, dists
    df = pd.DataFrame(out)
    if len(df):
        df["_kind"] = (df["kind"] == "history").astype(int)
        df["_c"] = [_conc_key(c) for c in df["concurrency"]]
        df["_s"] = [_stat_pos(s) for s in df["statistic"]]
        df = df.sort_values(["_kind", "candidate", "workload", "_c", "metric", "_s", "baseline_date"],
                            kind="stable").drop(columns=["_kind", "_c", "_s"])
    return _typed_comparisons(df)


def _stat_pos(s):
    return STATISTICS.index(s) if s in STATISTICS else len(STATISTICS)


def _sort_key(k):
    w, c, m, s = k
    return (str(w), c if c >= 0 else 1 << 62, str(m), _stat_pos(s))


def _typed_comparisons(df: pd.DataFrame) -> pd.DataFrame:
    cols = COMPARISON_COLUMNS + COMPARISON_EXTRA_COLUMNS
    out = df.reindex(columns=cols).copy()
    for c in ("workload", "metric", "statistic", "baseline", "candidate", "ci_method", "verdict",
              "kind", "baseline_date", "candidate_date"):
        out[c] = out[c].astype("object").where(out[c].notna(), None).astype("string")
    for c in ("concurrency", "baseline_n_passes", "candidate_n_passes", "n_baseline", "n_candidate"):
        out[c] = pd.array(pd.to_numeric(out[c].astype("object"), errors="coerce"), dtype="Int64")
    for c in ("baseline_estimate", "candidate_estimate", "ratio", "ci_low", "ci_high", "ci_level"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    return out.reset_index(drop=True)
