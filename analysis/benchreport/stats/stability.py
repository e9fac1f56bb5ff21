"""Stability across passes: each pass's own sampling error, and whether passes differ beyond it.

A p95 from 200 requests per pass moves by 10-20% between passes from sampling alone. The
drift flags (`benchreport.flags.rules.stability`) therefore call a warm-up or a swing a finding
only where it exceeds what each pass's sampling error explains: `within_pass_se` gives that
error per pass, `change_test` tests the first pass against the last, `cochrans_q` tests the
passes for homogeneity, and `adjust_bh` adjusts across the many cells of a fleet.

References
----------
Cochran, W. G. (1954). The combination of estimates from different experiments.
Biometrics 10(1), 101-129.
Conover, W. J. (1999). Practical Nonparametric Statistics, 3rd ed., section 3.2. Wiley.
Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B 57(1), 289-300.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import chdtrc, ndtr
from scipy.stats import norm

from ..columns import QUANTILES, REQUEST_METRICS
from .common import tail_supported
from .cells import request_metrics
from .multiplicity import adjust

__all__ = [
    "HeterogeneityResult",
    "cochrans_q",
    "change_test",
    "quantile_se",
    "mean_se",
    "ci_se",
    "within_pass_se",
    "adjust_bh",
]


@dataclass(frozen=True)
class HeterogeneityResult:
    """Cochran's Q test: statistic, p-value, degrees of freedom and the inverse-variance mean."""

    statistic: float
    pvalue: float
    df: int
    pooled: float


def cochrans_q(values, se) -> HeterogeneityResult:
    """Cochran's Q test that k estimates with known standard errors share one true value.

    Q = sum w_i (x_i - x_w)^2 with w_i = 1/se_i^2 and x_w the inverse-variance weighted mean;
    under homogeneity Q ~ chi^2 with k - 1 degrees of freedom (Cochran 1954). This is the
    heterogeneity Q of meta-analysis (statsmodels `combine_effects(...).test_homogeneity()`),
    not the Q test for matched binary data of `statsmodels.stats.contingency_tables.cochrans_q`.
    """
    x, s = _values_se_iv(values, se)
    w = np.array([1 / v**2 for v in s])
    pooled = float(np.sum(w * x) / np.sum(w))
    q = float(np.sum(w * (x - pooled) ** 2))
    # `chi2.sf(q, df)` is `chdtrc(df, q)` behind scipy's argument checks, which cost a hundred
    # times the function on one value, and a fleet's drift flags test thousands of cells
    return HeterogeneityResult(q, float(chdtrc(len(x) - 1, q)), len(x) - 1, pooled)


def _values_se_iv(values, se) -> tuple[np.ndarray, list[float]]:
    x = np.array([float(v) for v in values])
    s = [float(v) for v in se]
    if x.ndim != 1 or len(x) < 2 or len(s) != len(x):
        raise ValueError("`values` and `se` must be 1-D of the same length, at least 2")
    if not all(v > 0 and math.isfinite(v) for v in s):
        raise ValueError("`se` must be positive and finite")
    return x, s


def change_test(first: float, last: float, se_first: float, se_last: float) -> float:
    """Two-sided p-value of the normal test that two independent estimates are equal.

    z = |last - first| / sqrt(se_first^2 + se_last^2): the difference of two independent,
    approximately normal estimates (a two-sample z-test on summary statistics).
    """
    # `norm.sf(z)` is `ndtr(-z)` behind scipy's argument checks (see `cochrans_q`)
    return float(2 * ndtr(-(abs(last - first) / math.sqrt(se_first**2 + se_last**2))))


def quantile_se(sorted_values: np.ndarray, q: float, z: float) -> float:
    """Distribution-free standard error of the sample quantile q of sorted data.

    The order statistics bracketing the quantile's binomial rank interval at normal
    quantile `z` (Conover 1999, section 3.2), half their distance divided by `z`.
    """
    n = sorted_values.shape[0]
    half = z * math.sqrt(n * q * (1 - q))
    lo = int(max(0, math.floor(n * q - half) - 1))
    hi = int(min(n - 1, math.ceil(n * q + half) - 1))
    return float((sorted_values[hi] - sorted_values[lo]) / (2 * z))


def mean_se(values: np.ndarray) -> float:
    """Standard error of the mean, SD / sqrt(n) with the n - 1 SD (as `scipy.stats.sem`)."""
    return float(np.std(values, ddof=1) / math.sqrt(values.shape[0]))


def ci_se(low: float, high: float, level: float) -> float:
    """Standard error implied by a normal confidence interval: half-width / z_{(1+level)/2}."""
    return (float(high) - float(low)) / (2 * float(norm.ppf((1 + level) / 2)))


def adjust_bh(p_values) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (`benchreport.stats.multiplicity.adjust(p, "bh")`)."""
    if len(p_values) == 0:
        return []
    return adjust(p_values, "bh").tolist()


#: (seat, date, workload, concurrency, metric, statistic): the key of a cell's passes on one day
PassKey = tuple


def within_pass_se(
    requests: pd.DataFrame | None, measurements: pd.DataFrame | None, *, z: float, min_tail_obs: int
) -> dict[PassKey, dict[int, float]]:
    """Sampling error of each pass's value, where the data give it: key -> {pass: standard error}.

    From request records (mean: `mean_se`; quantiles: `quantile_se`) and from measurements
    that carry their own CI (`ci_se`, 0.95 when the level is not stated). A tail quantile with
    fewer than `min_tail_obs` requests beyond it in a pass gets an infinite error: its value is
    a handful of the slowest requests and cannot be compared between passes.
    """
    out: dict[PassKey, dict[int, float]] = {}
    if requests is not None and len(requests):
        _from_requests(requests, out, z, min_tail_obs)
    if measurements is not None and len(measurements):
        _from_measurements(measurements, out)
    return out


def _from_requests(requests: pd.DataFrame, out: dict, z: float, min_tail_obs: int) -> None:
    rm = request_metrics(requests)
    for (seat, date, w, c, p), g in rm.groupby(
        ["seat", "date", "workload", "concurrency", "pass"], dropna=False, sort=False
    ):
        for metric in REQUEST_METRICS:
            v = g[metric].to_numpy(dtype=float)
            v = np.sort(v[np.isfinite(v)])
            n = v.shape[0]
            if n < 2:
                continue
            base = (str(seat), str(date), _none(w), _int_or_none(c), metric)
            out.setdefault(base + ("mean",), {})[int(p)] = mean_se(v)
            for stat, q in QUANTILES.items():
                thin = not tail_supported(n, q, min_tail_obs)
                out.setdefault(base + (stat,), {})[int(p)] = math.inf if thin else quantile_se(v, q, z)


def _from_measurements(m: pd.DataFrame, out: dict) -> None:
    sub = m[(m["ci_low"].notna() & m["ci_high"].notna()).to_numpy()]
    cols = [
        "seat",
        "date",
        "pass",
        "workload",
        "condition",
        "concurrency",
        "metric",
        "statistic",
        "ci_low",
        "ci_high",
        "ci_level",
    ]
    for seat, date, p, w, cond, c, metric, stat, lo, hi, level in zip(*[sub[k].tolist() for k in cols]):
        level = 0.95 if _missing(level) else float(level)
        w = w if _missing(cond) else f"{w}:{cond}"
        key = (str(seat), str(date), _none(w), _int_or_none(c), str(metric), str(stat))
        out.setdefault(key, {})[int(p)] = ci_se(lo, hi, level)


def _missing(v) -> bool:
    """None, NA, NaT or NaN (as `benchreport.format.missing`)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    try:
        return bool(isinstance(v, float) and math.isnan(v)) or bool(pd.isna(v) is True)
    except (TypeError, ValueError):
        return False


def _none(v):
    return None if _missing(v) else v


def _int_or_none(v):
    return None if _missing(v) else int(v)
