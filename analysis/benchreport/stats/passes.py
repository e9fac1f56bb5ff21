"""Between passes: a cell's centre and interval from its pass values.

The pass is the unit of replication (Kalibera & Jones 2013): each pass of a
cell contributes one value, and run-to-run variation is what an interval for
the seat must include. Throughputs and latencies are positive and vary by a
factor from run to run, so the analysis works on the log scale:

* centre: the geometric mean of the pass values (the ratio of two cells'
  centres is then the ratio a comparison reports);
* interval: the t-interval of the mean log value, exponentiated (a log-scale
  t never crosses zero; a raw t on 3 lognormal passes gives a negative lower
  bound 14-48% of the time, issue 11);
* with fewer than 3 passes, a between-pass variance pooled from the same seat
  and cell on other dates, when there is one (a two-level model: passes within
  dates, the pass variance taken as common to the dates, stated as such);
* with 3 or 4 passes, also the median and the min-max range, whose coverage of
  the median is exactly 1 - 2^(1-k) for k continuous passes (75% at 3, 87.5% at 4;
  the sign-test argument, David & Nagaraja 2003, §7.1).

References
----------
Kalibera, T. & Jones, R. (2013). Rigorous benchmarking in reasonable time.
ISMM '13, 63-74 (the run, not the iteration, as the unit; a two-level design).
Limpert, E., Stahel, W. A. & Abbt, M. (2001). Log-normal distributions across
the sciences. BioScience 51(5), 341-352 (geometric mean and multiplicative CI).
David, H. A. & Nagaraja, H. N. (2003). Order Statistics, 3rd ed., Wiley, §7.1.
Student (1908); Cameron, A. C. & Miller, D. L. (2015), J. Human Resources 50(2)
(few clusters: t with G - 1 degrees of freedom).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import stdtr, stdtrit

from .common import check_level

__all__ = [
    "PassSummary",
    "LogVariance",
    "LogRatioTest",
    "summarise_passes",
    "log_variance",
    "pooled_log_variance",
    "range_level",
    "welch_log_ratio_test",
]


def t_ppf(q: float, df: float) -> float:
    """`scipy.stats.t.ppf(q, df)`, the same float, without the distribution wrapper's argument
    handling (its cost was most of a cell's at a year of dates): `t._ppf` is `stdtrit(df, q)`."""
    if 0.0 < q < 1.0 and 0.0 < df < math.inf:
        return float(stdtrit(df, q))
    return float(stats.t.ppf(q, df))


def t_sf(x: float, df: float) -> float:
    """`scipy.stats.t.sf(x, df)`, the same float (`t._sf` is `stdtr(df, -x)`)."""
    if math.isfinite(x) and 0.0 < df < math.inf:
        return float(stdtr(df, -x))
    return float(stats.t.sf(x, df))


@dataclass(frozen=True)
class LogVariance:
    """A between-pass variance of log values with its degrees of freedom and where it came from."""

    variance: float
    df: int
    pooled: bool = False
    n_dates: int = 1


@dataclass(frozen=True)
class PassSummary:
    """Centre and between-pass interval of one cell's pass values.

    ``low``/``high`` are NaN when no interval can be given (``reason`` says why).
    ``log_se`` and ``df`` describe the log of the centre (what a Welch comparison
    needs); ``median``, ``min``, ``max`` and ``range_level`` are given from 3 passes.
    """

    estimate: float
    low: float
    high: float
    level: float
    n_passes: int
    log_mean: float
    log_se: float
    df: float
    route: str  # "t_log" (own passes), "t_log_pooled" (variance from other dates), "" (none)
    reason: str  # "" or why there is no interval: single_pass, two_passes, equal_values, non_positive
    median: float = math.nan
    min: float = math.nan
    max: float = math.nan
    range_level: float = math.nan


def range_level(k: int) -> float:
    """Coverage of the median of a continuous distribution by the min-max of k values: 1 - 2^(1-k)."""
    return 1.0 - 2.0 ** (1 - k) if k >= 2 else math.nan


def log_variance(values) -> LogVariance | None:
    """The sample variance of the log pass values (ddof=1), or None below 2 positive values."""
    v = np.asarray(values, dtype=float)
    if v.shape[0] < 2 or np.any(v <= 0) or not np.all(np.isfinite(v)):
        return None
    return LogVariance(float(np.var(np.log(v), ddof=1)), v.shape[0] - 1)


def pooled_log_variance(parts: list[LogVariance]) -> LogVariance | None:
    """Pooled variance sum(df_i s_i^2) / sum(df_i) of several dates' log pass values (None if none)."""
    parts = [p for p in parts if p is not None and p.df > 0]
    if not parts:
        return None
    df = sum(p.df for p in parts)
    var = sum(p.df * p.variance for p in parts) / df
    return LogVariance(var, df, pooled=True, n_dates=len(parts))


def _centre(values: np.ndarray) -> float:
    """Geometric mean (the value itself for one pass, exactly); the mean when a value is not positive."""
    if values.shape[0] == 1:
        return float(values[0])
    if np.all(values > 0):
        return float(np.exp(np.mean(np.log(values))))
    return float(np.mean(values))


def _no_ci(values: np.ndarray, level: float, reason: str) -> PassSummary:
    k = values.shape[0]
    positive = bool(np.all(values > 0))
    est = _centre(values)
    lm = float(np.mean(np.log(values))) if positive else math.nan
    return PassSummary(
        estimate=est,
        low=math.nan,
        high=math.nan,
        level=level,
        n_passes=k,
        log_mean=lm,
        log_se=math.nan,
        df=math.nan,
        route="",
        reason=reason,
        **_order_stats(values),
    )


def _order_stats(values: np.ndarray) -> dict:
    k = values.shape[0]
    if k < 3:
        return {}
    return dict(median=_median(values), min=float(values.min()), max=float(values.max()), range_level=range_level(k))


def _median(values: np.ndarray) -> float:
    """`np.median` of a few values, the same float: the middle of the sorted values, or the mean
    (a + b) / 2 of the middle two, as numpy's mean of them divides their sum. Positive values
    only (no signed zeros to order); any other goes to `np.median` itself. A fleet's date has
    thousands of cells of five passes, and `np.median`'s general route was most of their cost."""
    if not bool((values > 0).all()):
        return float(np.median(values))
    s = sorted(values.tolist())
    m = len(s) // 2
    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2


def summarise_passes(values, *, level: float = 0.95, borrowed: LogVariance | None = None) -> PassSummary:
    """Geometric mean and log-scale t-interval of one cell's pass values.

    Parameters
    ----------
    values : array_like
        One value per pass, in pass order.
    level : float
    borrowed : LogVariance, optional
        A between-pass variance of the same seat and cell from other dates
        (`pooled_log_variance`), used when there are fewer than 3 passes here.

    Returns
    -------
    PassSummary
        3+ positive passes: ``exp(mean log v +/- t_{k-1} s / sqrt(k))`` (route
        ``t_log``). 1-2 passes with `borrowed`: the same with the borrowed s and df
        (route ``t_log_pooled``). Otherwise no interval, and ``reason``.
    """
    v = np.asarray(values, dtype=float)
    level = check_level(level)
    k = v.shape[0]
    if k == 0 or not np.all(np.isfinite(v)):
        raise ValueError("`values` must be one or more finite pass values")
    if np.any(v <= 0):
        return _no_ci(v, level, "non_positive")
    lv = np.log(v)
    lm = float(lv.mean())
    if k >= 3:
        if np.all(v == v[0]):
            return _no_ci(v, level, "equal_values")
        var, df, route = float(np.var(lv, ddof=1)), k - 1, "t_log"
    elif borrowed is not None and borrowed.df >= 2 and borrowed.variance > 0:
        var, df, route = borrowed.variance, borrowed.df, "t_log_pooled"
    else:
        return _no_ci(v, level, "single_pass" if k == 1 else "two_passes")
    se = math.sqrt(var / k)
    t = t_ppf(0.5 + level / 2.0, df)
    return PassSummary(
        estimate=_centre(v),
        low=float(math.exp(lm - t * se)),
        high=float(math.exp(lm + t * se)),
        level=level,
        n_passes=k,
        log_mean=lm,
        log_se=se,
        df=float(df),
        route=route,
        reason="",
        **_order_stats(v),
    )


@dataclass(frozen=True)
class LogRatioTest:
    """Welch's t on the log centres of two cells: the ratio, its CI and the two-sided p-value."""

    ratio: float
    low: float
    high: float
    p_value: float
    df: float
    level: float


def welch_log_ratio_test(baseline: PassSummary, candidate: PassSummary, *, level: float = 0.95) -> LogRatioTest | None:
    """Ratio candidate/baseline of two centres with Welch's interval and test on the log scale.

    Each side's log centre has standard error ``log_se`` on ``df`` degrees of
    freedom (its own passes, or a pooled variance); the difference has the
    Welch-Satterthwaite df (Welch 1947). None when a side has no interval.
    The same as exponentiating ``scipy.stats.ttest_ind(log c, log b,
    equal_var=False)`` when both sides use their own passes.
    """
    level = check_level(level)
    sides = (baseline, candidate)
    if any(not (math.isfinite(s.log_se) and math.isfinite(s.df)) for s in sides):
        return None
    vb, vc = baseline.log_se**2, candidate.log_se**2
    d = candidate.log_mean - baseline.log_mean
    se = math.sqrt(vb + vc)
    if se == 0.0:
        return None
    df = (vb + vc) ** 2 / ((vb**2 / baseline.df if vb else 0.0) + (vc**2 / candidate.df if vc else 0.0))
    t = t_ppf(0.5 + level / 2.0, df)
    p = 2.0 * t_sf(abs(d) / se, df)
    return LogRatioTest(
        ratio=math.exp(d), low=math.exp(d - t * se), high=math.exp(d + t * se), p_value=min(p, 1.0), df=df, level=level
    )
