"""The pieces of the history's change detection: a robust reference level, the standardised
night, the two-sided tabular CUSUM, its threshold from an in-control run length, and the
kind of a change it finds (benchreport.stats.history walks the nights with them).

Every function is pure and works on plain floats (a seat's cell has a few hundred nights).

References
----------
Page, E. S. (1954). Continuous inspection schemes. Biometrika 41, 100-115 (the CUSUM).
Siegmund, D. (1985). Sequential Analysis, Springer, §X.2; the approximation to the average
run length as given by Montgomery, D. C. (2019). Introduction to Statistical Quality
Control, 8th ed., Wiley, §9.1.4-9.1.6 (its Table 9.3: two-sided k = 1/2, h = 4 gives an
in-control ARL of 168, h = 5 of 465).
Lucas, J. M. & Crosier, R. B. (1982). Robust CUSUM: a robustness study for CUSUM quality
control schemes. Comm. Statist. A 11, 2669-2687 (an observation's contribution clipped, so
one outlier cannot signal).
Lucas, J. M. (1982). Combined Shewhart-CUSUM quality control schemes. J. Quality Technology
14, 51-59 (a single far observation signals on its own).
Hawkins, D. M. (1987). Self-starting CUSUM charts for location and scale. The Statistician
36, 299-316; Quesenberry, C. P. (1991). SPC Q charts for start-up processes and short or
long runs. J. Quality Technology 23, 213-224 (a new observation against the mean and spread
of the earlier ones, made N(0, 1) through the t distribution).
Pignatiello, J. J. & Samuel, T. R. (2001). Estimation of the change point of a normal process
mean in SPC applications. J. Quality Technology 33, 82-95.
Hinkley, D. V. (1971). Inference in two-phase regression. JASA 66, 736-743 (a step and a
line compared by their residual sums of squares).
Huber, P. J. (1981). Robust Statistics, Wiley, §5.7 (winsorised scale).
Kim, S.-H., Alexopoulos, C., Tsui, K.-L. & Wilson, J. R. (2007). A distribution-free tabular
CUSUM chart for autocorrelated data. IIE Transactions 39, 317-330 (k and h in units of the
long-run SD of the observations, not their marginal SD).
Box, G. E. P., Jenkins, G. M., Reinsel, G. C. & Ljung, G. M. (2015). Time Series Analysis, 5th
ed., Wiley, §2.1 (the sample autocorrelation) and §3.2.4 (an AR(1)'s long-run variance
sigma^2 (1 + phi) / (1 - phi)).
Rousseeuw, P. J. & Croux, C. (1993). Alternatives to the median absolute deviation. JASA 88,
1273-1283 (the MAD, 1.4826 its normal consistency constant).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy.special import ndtri, stdtr

__all__ = [
    "Reference",
    "reference",
    "standardise",
    "cusum_update",
    "siegmund_arl",
    "threshold_for",
    "change_start",
    "change_kind",
    "MAD_TO_SD",
    "lag1_autocorrelation",
    "long_run_factor",
    "LONG_RUN_MIN_NIGHTS",
    "LONG_RUN_MAX_R",
]

MAD_TO_SD = 1.4826
#: fewer reference nights than this: no long-run factor (an r of a few nights is mostly noise)
LONG_RUN_MIN_NIGHTS = 16
#: the lag-1 autocorrelation is clipped to [0, this] (a factor of at most 3)
LONG_RUN_MAX_R = 0.8


@dataclass(frozen=True)
class Reference:
    """The level of a cell's reference nights (log scale): mean, robust spread, nights."""

    mean: float
    spread: float
    n: int
    #: the nights' long-run SD over their SD (`long_run_factor`): 1 for independent nights
    long_run: float = 1.0


def _median(v: list) -> float:
    s = sorted(v)
    k = len(s)
    return s[k // 2] if k % 2 else 0.5 * (s[k // 2 - 1] + s[k // 2])


def reference(
    logs: list, borrowed: float | None = None, *, clip: float = 2.5, borrowed_long_run: float = 1.0
) -> Reference | None:
    """The level of the reference nights (in date order), robust to a heavy-tailed night among
    them: the values winsorised at median +/- `clip` x 1.4826 MAD (Rousseeuw & Croux 1993), then
    their mean and sample SD (Huber 1981, §5.7: the winsorised SD is the scale a clipped statistic
    needs, so a clipped standardised night has about unit variance), and the long-run factor of the
    winsorised nights (`long_run_factor`). The sample SD where the MAD is 0; `borrowed` (the
    previous level's spread) and `borrowed_long_run` (its factor) instead when given."""
    n = len(logs)
    if n == 0 or (n < 2 and borrowed is None):
        return None
    med = _median(logs)
    s0 = MAD_TO_SD * _median([abs(v - med) for v in logs])
    w = [min(med + clip * s0, max(med - clip * s0, v)) for v in logs] if s0 > 0 else list(logs)
    m = math.fsum(w) / n
    if borrowed is not None:
        return Reference(m, float(borrowed), n, float(borrowed_long_run))
    return Reference(m, math.sqrt(math.fsum((v - m) ** 2 for v in w) / (n - 1)), n, long_run_factor(w))


def lag1_autocorrelation(values: list) -> float:
    """The sample lag-1 autocorrelation of values in order (Box et al. 2015, §2.1; statsmodels'
    `acf`): sum (x_t - m)(x_(t+1) - m) / sum (x_t - m)^2; 0 for fewer than 3 values or no spread."""
    n = len(values)
    if n < 3:
        return 0.0
    m = math.fsum(values) / n
    d = [v - m for v in values]
    ss = math.fsum(x * x for x in d)
    return math.fsum(a * b for a, b in zip(d[:-1], d[1:])) / ss if ss > 0 else 0.0


def long_run_factor(values: list, *, min_nights: int = LONG_RUN_MIN_NIGHTS, max_r: float = LONG_RUN_MAX_R) -> float:
    """The long-run SD of nights in order over their SD, under an AR(1) model: sqrt((1 + r) /
    (1 - r)), r their lag-1 autocorrelation clipped to [0, `max_r`] (Box et al. 2015, §3.2.4: an
    AR(1) with coefficient phi has long-run variance sigma^2 (1 + phi) / (1 - phi)). A CUSUM in
    units of the long-run SD keeps its in-control run length on autocorrelated nights (Kim,
    Alexopoulos, Tsui & Wilson 2007). 1 for fewer than `min_nights` nights; never below 1
    (nights that alternate are not taken to cancel)."""
    if len(values) < min_nights:
        return 1.0
    r = min(max_r, max(0.0, lag1_autocorrelation(values)))
    return math.sqrt((1.0 + r) / (1.0 - r))


def standardise(x: float, ref: Reference, df: float) -> float:
    """A new night against the reference in units of the nights' long-run SD, made N(0, 1) for
    independent nights: (x - mean) / (spread long_run sqrt(1 + 1/n)) is Student t on `df` degrees of
    freedom for a normal night (long_run 1); its probability is mapped to the normal quantile
    (Quesenberry 1991), so a reference of a few nights is not over-trusted. With autocorrelated
    nights (long_run > 1) the CUSUM's sum of them then grows as a sum of independent N(0, 1)
    nights would (Kim et al. 2007)."""
    if not ref.spread > 0:
        return 0.0 if x == ref.mean else math.copysign(math.inf, x - ref.mean)
    t = (x - ref.mean) / (ref.spread * ref.long_run * math.sqrt(1.0 + 1.0 / ref.n))
    if not math.isfinite(df) or df > 1e6:
        return t
    p = float(stdtr(df, -abs(t)))  # the tail beyond |t|
    z = -float(ndtri(p)) if p > 0 else 38.0
    return math.copysign(z, t)


def cusum_update(up: float, down: float, z: float, *, k: float, clip: float) -> tuple[float, float]:
    """One step of the two-sided tabular CUSUM (Page 1954; Montgomery §9.1.2) on a standardised
    value clipped to +/- `clip` (Lucas & Crosier 1982): C+ = max(0, C+ + z - k),
    C- = max(0, C- - z - k)."""
    zc = max(-clip, min(clip, z))
    return max(0.0, up + zc - k), max(0.0, down - zc - k)


def siegmund_arl(h: float, k: float, shift: float = 0.0) -> float:
    """Siegmund's approximation to the average run length of a one-sided CUSUM with reference
    value k and decision interval h, for a mean shift `shift` (in SDs):
    ARL = (exp(-2 D b) + 2 D b - 1) / (2 D^2), D = shift - k, b = h + 1.166 (D = 0: b^2).
    The two-sided ARL is 1 / (1/ARL+ + 1/ARL-) (Montgomery §9.1.4)."""
    d, b = shift - k, h + 1.166
    if abs(d) < 1e-12:
        return b * b
    return (math.exp(-2.0 * d * b) + 2.0 * d * b - 1.0) / (2.0 * d * d)


def threshold_for(arl: float, k: float) -> float:
    """The decision interval h whose one-sided in-control ARL (Siegmund) is `arl` (bisection)."""
    lo, hi = 0.0, 200.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if siegmund_arl(mid, k) < arl:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _line_rss(values: list) -> tuple[float, float]:
    """(residual sum of squares, slope) of the least-squares line through values at 0, 1, 2, ..."""
    n = len(values)
    xm, ym = (n - 1) / 2.0, math.fsum(values) / n
    sxx = math.fsum((i - xm) ** 2 for i in range(n))
    slope = math.fsum((i - xm) * (v - ym) for i, v in enumerate(values)) / sxx
    return math.fsum((v - ym - slope * (i - xm)) ** 2 for i, v in enumerate(values)), slope


def _ss(values: list) -> float:
    m = math.fsum(values) / len(values)
    return math.fsum((v - m) ** 2 for v in values)


def change_start(values: list, level: float) -> int:
    """Where in the nights since a CUSUM left zero the change most likely began: the maximum
    likelihood change point of a step in a normal mean from a known level, the j maximising
    (n - j) (mean(values[j:]) - level)^2 (Pignatiello & Samuel 2001)."""
    best, arg, tail = -1.0, 0, 0.0
    n = len(values)
    for j in range(n - 1, -1, -1):  # suffix sums from the end
        tail += values[j] - level
        score = tail * tail / (n - j)
        if score > best:
            best, arg = score, j
    return arg


def change_kind(before: list, after: list, *, direction: int) -> str:
    """ "drift" or "step": the nights of the level before the change (`before`) and since the
    CUSUM left zero (`after`), in order, fitted by two models of two parameters each, a step
    (one mean before, one after) and a line through them all; a drift when the line fits better
    (smaller residual sum of squares, the least-squares rule of two-phase regression, Hinkley
    1971) and slopes the change's way. Fewer than 3 nights on either side: a step."""
    if len(before) < 3 or len(after) < 3:
        return "step"
    rss_line, slope = _line_rss(list(before) + list(after))
    return "drift" if rss_line < _ss(before) + _ss(after) and slope * direction > 0 else "step"
