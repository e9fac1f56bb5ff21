"""Closed-form and score confidence intervals: means over passes, ratios, proportions.

One function per method, each returning a typed result; options after the data
are keyword-only; `level` is the confidence level (1 - alpha).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats
from scipy.special import ndtri
from statsmodels.stats.proportion import proportion_confint

from .common import ConfidenceInterval, check_level

__all__ = [
    "TInterval",
    "RatioCI",
    "DifferenceCI",
    "t_interval",
    "welch_log_ratio",
    "fieller_ratio",
    "wilson",
    "clopper_pearson",
    "newcombe_difference",
    "tango_paired_difference",
    "newcombe_paired_difference",
    "tango_score",
]


@dataclass(frozen=True)
class TInterval:
    """Student-t interval for a mean: estimate +/- t_{df} * standard_error."""

    estimate: float
    low: float
    high: float
    standard_error: float
    df: int
    level: float
    method: str = "t"

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.low, self.high)


@dataclass(frozen=True)
class RatioCI:
    """A ratio (candidate / baseline) with its interval; NaN bounds with a `note` when none exists."""

    estimate: float
    low: float
    high: float
    level: float
    method: str
    df: float = math.nan
    note: str = ""

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.low, self.high)


@dataclass(frozen=True)
class DifferenceCI:
    """A difference of proportions (second minus first) with its interval."""

    estimate: float
    low: float
    high: float
    level: float
    method: str

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        return ConfidenceInterval(self.low, self.high)


# --------------------------------------------------------------------------- validation
def _finite_1d_iv(values, name: str, min_n: int) -> np.ndarray:
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be numeric") from None
    if x.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D; got shape {x.shape}")
    if x.shape[0] < min_n:
        raise ValueError(f"`{name}` needs at least {min_n} values; got {x.shape[0]}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"`{name}` must be finite")
    return x


def _count_iv(x, name: str, *, minimum: int = 0) -> int:
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        if isinstance(x, (float, np.floating)) and float(x).is_integer():
            x = int(x)
        else:
            raise ValueError(f"`{name}` must be an integer count; got {x!r}")
    if x < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}; got {x}")
    return int(x)


def _proportion_iv(x, n, xname="x", nname="n") -> tuple[int, int]:
    n = _count_iv(n, nname, minimum=1)
    x = _count_iv(x, xname)
    if x > n:
        raise ValueError(f"`{xname}` ({x}) must not exceed `{nname}` ({n})")
    return x, n


# --------------------------------------------------------------------------- means, ratios
def t_interval(values, *, level: float = 0.95) -> TInterval:
    """Student-t interval for the mean of independent replicates (df = n - 1).

    Used over passes (each pass one value: passes are the unit of
    replication) and over the requests of a single pass with fewer than
    `min_obs` requests.

    Parameters
    ----------
    values : array_like, 1-D, at least 2 finite values
    level : float

    Returns
    -------
    TInterval

    References
    ----------
    Student (1908), The probable error of a mean, Biometrika 6, 1-25.
    Cameron, A. C. & Miller, D. L. (2015), A practitioner's guide to
    cluster-robust inference, J. Human Resources 50(2), 317-372, §VI (few
    clusters: t with G - 1 degrees of freedom). Same as
    ``scipy.stats.ttest_1samp(x, 0).confidence_interval(level)``.
    """
    x = _finite_1d_iv(values, "values", 2)
    level = check_level(level)
    n = x.shape[0]
    est = float(np.mean(x))
    se = float(np.std(x, ddof=1) / math.sqrt(n))
    t = float(stats.t.ppf(0.5 + level / 2.0, n - 1))
    return TInterval(estimate=est, low=est - t * se, high=est + t * se, standard_error=se, df=n - 1, level=level)


def welch_log_ratio(baseline, candidate, *, level: float = 0.95) -> RatioCI:
    """Ratio of geometric means candidate/baseline with a Welch t-interval on the log scale.

    exp of the Welch interval for mean(log candidate) - mean(log baseline);
    each side's values are replicates (passes).

    Parameters
    ----------
    baseline, candidate : array_like, 1-D, positive, at least 2 values each
    level : float

    Returns
    -------
    RatioCI (``df``: Welch-Satterthwaite degrees of freedom)

    References
    ----------
    Welch, B. L. (1947), The generalization of 'Student's' problem when several
    different population variances are involved, Biometrika 34, 28-35.
    Same as exponentiating ``scipy.stats.ttest_ind(log c, log b,
    equal_var=False).confidence_interval(level)``.
    """
    a = _finite_1d_iv(baseline, "baseline", 2)
    b = _finite_1d_iv(candidate, "candidate", 2)
    level = check_level(level)
    if np.any(a <= 0) or np.any(b <= 0):
        return RatioCI(
            estimate=math.nan,
            low=math.nan,
            high=math.nan,
            level=level,
            method="Welch t on log values",
            note="non-positive values: no log scale",
        )
    la, lb = np.log(a), np.log(b)
    va = float(np.var(la, ddof=1)) / la.size
    vb = float(np.var(lb, ddof=1)) / lb.size
    d = float(lb.mean() - la.mean())
    se = math.sqrt(va + vb)
    if se == 0.0:
        return RatioCI(
            estimate=math.exp(d),
            low=math.exp(d),
            high=math.exp(d),
            level=level,
            method="Welch t on log values",
            df=math.inf,
            note="no spread on either side: zero-width interval",
        )
    df = (va + vb) ** 2 / (va**2 / (la.size - 1) + vb**2 / (lb.size - 1))
    t = float(stats.t.ppf(0.5 + level / 2.0, df))
    return RatioCI(
        estimate=math.exp(d),
        low=math.exp(d - t * se),
        high=math.exp(d + t * se),
        level=level,
        method="Welch t on log values",
        df=df,
    )


def fieller_ratio(
    numerator: float,
    se_numerator: float,
    denominator: float,
    se_denominator: float,
    *,
    level: float = 0.95,
    df: float = math.inf,
) -> RatioCI:
    """Fieller's interval for the ratio of two independent, approximately normal estimates.

    The set of theta with (N - theta D)^2 <= q^2 (s_N^2 + theta^2 s_D^2),
    q the normal (df = inf) or t quantile. Bounded only when the denominator is
    significantly non-zero (D^2 > q^2 s_D^2); otherwise the bounds are NaN and
    `note` says so.

    Used when one side of a comparison only has a published CI: its standard
    error is taken as half-width / z_{(1+level)/2} (a normal-theory CI).

    References
    ----------
    Fieller, E. C. (1954), Some problems in interval estimation, JRSS B 16,
    175-185. Franz, V. H. (2007), Ratios: a short guide to confidence limits
    and proper use, arXiv:0710.2024 (the quadratic and its cases).
    """
    vals = {
        "numerator": numerator,
        "se_numerator": se_numerator,
        "denominator": denominator,
        "se_denominator": se_denominator,
    }
    for k, v in vals.items():
        if v is None or not np.isfinite(v):
            raise ValueError(f"`{k}` must be finite; got {v!r}")
    if se_numerator < 0 or se_denominator < 0:
        raise ValueError("`se_numerator` and `se_denominator` must be >= 0")
    level = check_level(level)
    if not (df > 0):
        raise ValueError(f"`df` must be positive; got {df!r}")
    q = float(ndtri(0.5 + level / 2.0)) if math.isinf(df) else float(stats.t.ppf(0.5 + level / 2.0, df))
    a, b = float(numerator), float(denominator)
    sa2, sb2 = float(se_numerator) ** 2, float(se_denominator) ** 2
    est = a / b if b != 0 else math.nan
    qa = b * b - q * q * sb2
    if qa <= 0:
        return RatioCI(
            estimate=est,
            low=math.nan,
            high=math.nan,
            level=level,
            method="Fieller",
            df=df,
            note="Fieller interval unbounded: denominator not significantly non-zero",
        )
    disc = q * q * (a * a * sb2 + b * b * sa2 - q * q * sa2 * sb2)
    root = math.sqrt(max(disc, 0.0))
    lo, hi = (a * b - root) / qa, (a * b + root) / qa
    return RatioCI(estimate=est, low=lo, high=hi, level=level, method="Fieller", df=df)


# --------------------------------------------------------------------------- proportions
def wilson(x, n, *, level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a binomial proportion x/n
    (statsmodels ``proportion_confint(method="wilson")``).

    References
    ----------
    Wilson, E. B. (1927), Probable inference, the law of succession, and
    statistical inference, JASA 22, 209-212. Newcombe, R. G. (1998), Two-sided
    confidence intervals for the single proportion, Stat Med 17, 857-872
    (method 3; Table I: 81/263 gives 0.2553 to 0.3662).
    """
    return _proportion_ci(x, n, level, "wilson")


def clopper_pearson(x, n, *, level: float = 0.95) -> ConfidenceInterval:
    """Clopper-Pearson 'exact' interval for a binomial proportion (beta quantiles;
    statsmodels ``proportion_confint(method="beta")``).

    References
    ----------
    Clopper, C. J. & Pearson, E. S. (1934), The use of confidence or fiducial
    limits illustrated in the case of the binomial, Biometrika 26, 404-413.
    Newcombe (1998), method 5 (Table I: 81/263 gives 0.2527 to 0.3676).
    """
    return _proportion_ci(x, n, level, "beta")


def _proportion_ci(x, n, level, method: str) -> ConfidenceInterval:
    """statsmodels' interval, checked arguments in; exactly 0 at x = 0 and 1 at x = n."""
    x, n = _proportion_iv(x, n)
    level = check_level(level)
    lo, hi = proportion_confint(x, n, alpha=1.0 - level, method=method)
    lo = 0.0 if x == 0 else float(lo)
    hi = 1.0 if x == n else float(hi)
    return ConfidenceInterval(max(lo, 0.0), min(hi, 1.0))


def newcombe_difference(x1, n1, x2, n2, *, level: float = 0.95) -> DifferenceCI:
    """Newcombe's hybrid score interval for p2 - p1, two independent proportions.

    L = d - sqrt((p2 - l2)^2 + (u1 - p1)^2), U = d + sqrt((u2 - p2)^2 + (p1 - l1)^2),
    d = p2 - p1, (l_i, u_i) the Wilson intervals.

    References
    ----------
    Newcombe, R. G. (1998), Interval estimation for the difference between
    independent proportions: comparison of eleven methods, Stat Med 17,
    873-890, method 10 (worked example: 56/70 vs 48/80 gives 0.0524 to 0.3339
    for p1 - p2).
    """
    x1, n1 = _proportion_iv(x1, n1, "x1", "n1")
    x2, n2 = _proportion_iv(x2, n2, "x2", "n2")
    level = check_level(level)
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = wilson(x1, n1, level=level)
    l2, u2 = wilson(x2, n2, level=level)
    d = p2 - p1
    lo = d - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    hi = d + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return DifferenceCI(estimate=d, low=lo, high=hi, level=level, method="Newcombe hybrid score")


def _tango_q(b: int, c: int, n: int, delta: float) -> float:
    """Constrained ML estimate of P(first only) under P(second only) - P(first only) = delta.

    Root of 2n q^2 + B q + C = 0 with B = -b - c + (2n - c + b) delta,
    C = -b delta (1 - delta) (Tango 1998, eq. 3, in our labels).
    """
    bb = -b - c + (2 * n - c + b) * delta
    cc = -b * delta * (1 - delta)
    disc = max(bb * bb - 8.0 * n * cc, 0.0)
    return (math.sqrt(disc) - bb) / (4.0 * n)


def tango_score(b, c, n, delta) -> float:
    """Tango's score statistic for H0: (c - b)/n = delta in a paired 2x2 table.

    b: items only the first (baseline) got right; c: only the second (candidate);
    n: all paired items. Z = (c - b - n delta) / sqrt(n (2 q + delta (1 - delta))),
    q the constrained ML estimate of P(first only).

    References
    ----------
    Tango, T. (1998), Equivalence test and confidence interval for the
    difference in proportions for the paired-sample design, Stat Med 17, 891-908.
    """
    q = _tango_q(b, c, n, delta)
    num = c - b - n * delta
    var = n * (2.0 * q + delta * (1.0 - delta))
    if num == 0:
        return 0.0
    if var <= 0:
        return math.copysign(math.inf, num)
    return num / math.sqrt(var)


def _paired_iv(b, c, n):
    n = _count_iv(n, "n", minimum=1)
    b = _count_iv(b, "b")
    c = _count_iv(c, "c")
    if b + c > n:
        raise ValueError(f"`b` + `c` ({b + c}) must not exceed `n` ({n})")
    return b, c, n


def tango_paired_difference(b, c, n, *, level: float = 0.95) -> DifferenceCI:
    """Tango's asymptotic score interval for a difference of paired proportions.

    The difference is second minus first, (c - b)/n, with b the items only the
    first got right and c those only the second got right. The interval is
    {delta : |tango_score(b, c, n, delta)| <= z_{(1+level)/2}}, found by
    root-finding (brentq to 1e-12).

    References
    ----------
    Tango, T. (1998), Equivalence test and confidence interval for the
    difference in proportions for the paired-sample design, Stat Med 17,
    891-908; correction Stat Med 18 (1999) 3511. Fagerland, M. W., Lydersen,
    S. & Laake, P. (2017), Statistical Analysis of Contingency Tables, CRC,
    §8.5 (worked example, Cavo et al. 2012: -0.0621, 95% CI -0.1240 to -0.0054).
    """
    b, c, n = _paired_iv(b, c, n)
    level = check_level(level)
    z = float(ndtri(0.5 + level / 2.0))
    d = (c - b) / n

    def f(delta, target):
        return tango_score(b, c, n, delta) - target

    eps = 1e-12
    lo_end, hi_end = -1.0 + eps, 1.0 - eps
    if d <= -1.0 + eps or f(lo_end, z) <= 0:
        lo = -1.0
    else:
        lo = optimize.brentq(f, lo_end, d, args=(z,), xtol=1e-14, rtol=1e-13, maxiter=500)
    if d >= 1.0 - eps or f(hi_end, -z) >= 0:
        hi = 1.0
    else:
        hi = optimize.brentq(f, d, hi_end, args=(-z,), xtol=1e-14, rtol=1e-13, maxiter=500)
    return DifferenceCI(estimate=d, low=lo, high=hi, level=level, method="Tango score")


def newcombe_paired_difference(a, b, c, d, *, level: float = 0.95) -> DifferenceCI:
    """Newcombe's square-and-add (MOVER) interval for a difference of paired proportions.

    Table: a both right, b first only, c second only, d neither; difference
    second minus first, (c - b)/n. Wilson intervals for both marginal
    proportions combined with the phi correlation coefficient: Newcombe's
    corrected phi* = max(ad - bc - n/2, 0)/sqrt(margins) when ad > bc, the plain
    phi otherwise, 0 when a margin is empty.

    References
    ----------
    Newcombe, R. G. (1998), Improved confidence intervals for the difference
    between binomial proportions based on paired data, Stat Med 17, 2635-2650,
    method 10. Fagerland, Lydersen & Laake (2017), Statistical Analysis of
    Contingency Tables, §8.5 (Cavo et al. 2012 example: -0.0621, 95% CI
    -0.1186 to -0.0046).
    """
    a = _count_iv(a, "a")
    b = _count_iv(b, "b")
    c = _count_iv(c, "c")
    d = _count_iv(d, "d")
    n = a + b + c + d
    if n == 0:
        raise ValueError("the table is empty (a + b + c + d == 0)")
    level = check_level(level)
    # first = baseline (a + b right), second = candidate (a + c right)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson(a + b, n, level=level)
    l2, u2 = wilson(a + c, n, level=level)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        phi = 0.0
    elif a * d > b * c:  # Newcombe's corrected phi
        phi = max(a * d - b * c - n / 2.0, 0.0) / math.sqrt(margins)
    else:
        phi = (a * d - b * c) / math.sqrt(margins)
    est = p2 - p1
    dl2, du2 = p2 - l2, u2 - p2
    dl1, du1 = p1 - l1, u1 - p1
    lo = est - math.sqrt(max(dl2**2 - 2 * phi * dl2 * du1 + du1**2, 0.0))
    hi = est + math.sqrt(max(du2**2 - 2 * phi * du2 * dl1 + dl1**2, 0.0))
    return DifferenceCI(
        estimate=est, low=max(lo, -1.0), high=min(hi, 1.0), level=level, method="Newcombe square-and-add (paired)"
    )
