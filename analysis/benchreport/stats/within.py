"""Within one run: the requests of one pass in the order they were sent.

Requests served side by side share batches, so neighbours in send order are
correlated; a bootstrap that resamples them one by one then treats a few
effective observations as many and under-covers (75% instead of 95% at a lag-1
correlation of 0.5: benchmarks/verdict_study.py). This module gives what the
within-run interval needs:

* `lag1_autocorrelation`: the first-order sample autocorrelation, for the flag;
* `lag1_pvalue` and `dependent_passes`: the flag's decision, a one-sided Ljung-Box test of
  each pass at lag 1 with Holm's step-down over the passes of one seat and date (issue 30);
* `series_interval`: the within-run interval of a single pass (issue 30): for the mean, a
  t-interval whose standard error comes from the equal-weighted cosine (EWC) estimate of the
  long-run variance with B = `cosine_terms(n)` terms and t with B degrees of freedom (Müller
  2007; Sun 2013; Lazarus, Lewis, Stock & Watson 2018); for a quantile, Woodruff's (1952)
  interval, the sample quantiles at q -/+ t_B times the standard error of the share of requests
  at or below the estimate, that share's long-run variance estimated the same way (the
  Bahadur representation of a quantile of a dependent series, Wu 2005). No pre-test: the same
  interval whatever the correlation, exact for independent Gaussian requests;
* `dependence_seen`, `block_length`, `circular_block_indices`: the Politis-White check and
  block length, and the circular block bootstrap's indices (Politis & Romano 1992), which the
  within-run interval used before issue 30 (kept for `bootstrap.bootstrap_group`'s ``block``);
* `sectioning_interval`: a t-interval over the statistic of contiguous sections (Nakayama
  2014; for the mean the method of batch means, Schmeiser 1982).

Why EWC and not the block bootstrap: measured through the command line
(benchmarks/within_study.py, docs/statistics.md), the pre-tested block bootstrap covered 50-80%
at lag-1 correlation 0.8; the EWC interval's only bias is that of its lowest B frequencies of
the spectrum, kept small by B/n = 1/50 (a fixed-b choice, Kiefer & Vogelsang 2005), and its
t_B reference distribution pays for the few effective observations a correlated pass has.

A within-run interval describes one run only: it leaves out run-to-run
variation and no verdict rests on it (benchreport.stats.compare).

References
----------
Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary
observations. Annals of Statistics 17(3), 1217-1241.
Politis, D. N. & Romano, J. P. (1992). A circular block-resampling procedure for
stationary data. In Exploring the Limits of Bootstrap, Wiley, 263-270.
Politis, D. N. & Romano, J. P. (1994). The stationary bootstrap. JASA 89, 1303-1313.
Politis, D. N. & White, H. (2004). Automatic block-length selection for the
dependent bootstrap. Econometric Reviews 23(1), 53-70; correction: Patton, A.,
Politis, D. N. & White, H. (2009), Econometric Reviews 28(4), 372-375.
Ljung, G. M. & Box, G. E. P. (1978). On a measure of lack of fit in time series models.
Biometrika 65(2), 297-303.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
Journal of Statistics 6, 65-70.
Schmeiser, B. (1982). Batch size effects in the analysis of simulation output.
Operations Research 30(3), 556-568.
Nakayama, M. K. (2014). Confidence intervals for quantiles using sectioning when
applying variance-reduction techniques. ACM TOMACS 24(4), 19.
Woodruff, R. S. (1952). Confidence intervals for medians and other position measures. JASA
47(260), 635-646.
Kiefer, N. M. & Vogelsang, T. J. (2005). A new asymptotic theory for heteroskedasticity-
autocorrelation robust tests. Econometric Theory 21(6), 1130-1164.
Wu, W. B. (2005). On the Bahadur representation of sample quantiles for dependent sequences.
Annals of Statistics 33(4), 1934-1963.
Müller, U. K. (2007). A theory of robust long-run variance estimation. Journal of
Econometrics 141(2), 1331-1352.
Sun, Y. (2013). A heteroskedasticity and autocorrelation robust F test using an orthonormal
series variance estimator. Econometrics Journal 16(1), 1-26.
Lazarus, E., Lewis, D. J., Stock, J. H. & Watson, M. W. (2018). HAR inference:
recommendations for practice. Journal of Business & Economic Statistics 36(4), 541-559.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.fft import dct
from scipy.special import ndtr

from .common import check_level, quantile_sorted, sequential_sum, sorted_mean
from .multiplicity import adjust

__all__ = [
    "lag1_autocorrelation",
    "lag1_pvalue",
    "lag1_pvalues",
    "dependent_passes",
    "block_length",
    "block_size",
    "dependence_seen",
    "circular_block_indices",
    "SectioningInterval",
    "sectioning_interval",
    "REQUESTS_PER_TERM",
    "cosine_terms",
    "ewc_long_run_variance",
    "SeriesInterval",
    "series_interval",
]


def lag1_autocorrelation(x) -> float:
    """Sample autocorrelation at lag 1 (Box & Jenkins' r_1: lag-1 autocovariance over
    the variance, both with divisor n); NaN for fewer than 3 values or no spread.

    Same as ``statsmodels.tsa.stattools.acf(x, nlags=1)[1]`` (to rounding). Computed so that SQL
    gives the same bits (benchreport.store.figures): the mean m is the left-to-right sum of the
    sorted values over n (`sorted_mean`, the pass mean), d = x - m in the given order, and
    r_1 = sum d[i] d[i+1] / sum d[i]^2, both sums left to right (`sequential_sum`).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    if n < 3:
        return math.nan
    d = x - sorted_mean(np.sort(x))
    den = sequential_sum(d * d)
    if den == 0.0:
        return math.nan
    return sequential_sum(d[:-1] * d[1:]) / den


def lag1_pvalue(r1, n) -> float:
    """One-sided p-value of "no positive lag-1 autocorrelation" from r_1 of n values.

    The Ljung-Box statistic at lag 1, Q = n (n + 2) r_1^2 / (n - 1), is chi-square with one
    degree of freedom under independence (Ljung & Box 1978); its signed root is a standard
    normal, so the one-sided p-value is 1 - Phi(sign(r_1) sqrt(Q)). Only positive correlation
    is looked for: requests sharing batches make neighbours alike, and a negative r_1 makes an
    interval over independent draws conservative, not optimistic. NaN for n < 3 or r_1 NaN.

    Same as half of ``statsmodels.stats.diagnostic.acorr_ljungbox(x, lags=[1])`` p-value when
    r_1 > 0 (one minus half when r_1 < 0).
    """
    return float(lag1_pvalues(np.array([float(r1)]), np.array([float(n)]))[0])


def lag1_pvalues(r1: np.ndarray, n: np.ndarray) -> np.ndarray:
    """`lag1_pvalue` of each (r_1, n) pair of two float arrays, elementwise: the same operations in
    the same order, so the same bits (a fleet's year has millions of passes to test)."""
    r1, n = np.asarray(r1, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = n * (n + 2.0) * r1 * r1 / (n - 1.0)
        p = ndtr(-np.copysign(np.sqrt(q), r1))  # scipy's `norm.sf(z)` is `ndtr(-z)`
    p[~(n >= 3) | np.isnan(r1)] = np.nan
    return p


#: the columns of a pass table that make one family of the dependence test: a seat's passes of one date
DEPENDENCE_FAMILY = ("seat", "date")


def dependent_passes(seat, date, statistic, lag1, n_obs, *, alpha: float, lag1_limit: float) -> np.ndarray:
    """Which pass rows show requests correlated in send order: the flag's one decision rule.

    A row (one pass, cell and metric; statistic ``mean``, so each pass and metric is tested
    once) is dependent when its one-sided lag-1 test (`lag1_pvalue`) rejects at `alpha` under
    Holm's step-down over its family, every tested row of the same seat and date (Holm 1979),
    and its r_1 exceeds `lag1_limit`, the size that matters (about half the effective
    observations). The chance that a seat's passes of one date are flagged when its requests
    are independent is at most `alpha`, however many passes, cells and metrics it has. Holm's
    rejections depend only on the family's p-values at or below alpha and its size, so a
    family is decided where all its rows are at hand (a date's pass rows).

    Arguments are equal-length sequences (columns of a pass table); returns a boolean array.
    """
    seat, date, statistic = list(seat), list(date), list(statistic)
    lag = np.asarray(pd.to_numeric(pd.Series(lag1, dtype=object), errors="coerce"), dtype=float)
    n = np.asarray(pd.to_numeric(pd.Series(n_obs, dtype=object), errors="coerce"), dtype=float)
    stat = np.asarray([str(v) == "mean" for v in statistic], dtype=bool)
    out = np.zeros(lag.shape[0], dtype=bool)
    tested = stat & np.isfinite(lag) & (n >= 3)
    if not tested.any():
        return out
    p = np.full(lag.shape[0], np.nan)
    p[tested] = lag1_pvalues(lag[tested], n[tested])
    fam: dict[tuple, list[int]] = {}
    for i in np.flatnonzero(tested):
        fam.setdefault((str(seat[i]), str(date[i])), []).append(int(i))
    for rows in fam.values():
        idx = np.asarray(rows)
        out[idx] = (adjust(p[idx], "holm") <= alpha) & (lag[idx] > lag1_limit)
    return out


def _autocovariances(d: np.ndarray, max_lag: int) -> np.ndarray:
    n = d.shape[0]
    return np.array([float(d[k:] @ d[: n - k]) / n for k in range(max_lag + 1)])


def block_length(x) -> float:
    """Politis-White (2004, corrected 2009) optimal block length of the circular block bootstrap.

    b = (2 G^2 / D)^(1/3) n^(1/3), G = sum_{|k|<=M} h(k/M) |k| gamma_k,
    D = 4/3 (sum_{|k|<=M} h(k/M) gamma_k)^2, h the flat-top kernel min(1, 2(1 - |x|)),
    M = 2 m where m is the smallest positive lag after which k_n = max(5, log10 n)
    consecutive sample autocorrelations lie inside +/- 2 sqrt(log10(n) / n) (capped
    at ceil(sqrt n) + k_n); b is capped at min(3 sqrt n, n / 3).

    At least 1.0, and 1.0 for n < 8: a block of one is the ordinary bootstrap.
    The result is a real number; the bootstrap uses its ceiling (`block_size`).

    Takes m as the paper does (the kn lags after m inside the band); arch's
    ``optimal_block_length(x)["circular"]`` takes m one lag later and normalises its
    autocorrelations differently, so its lengths come out up to a third longer on AR(1) series
    (not used by the within-run interval since issue 30).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    if n < 8:
        return 1.0
    d = x - x.mean()
    kn = max(5, int(math.log10(n)))
    m_max = int(math.ceil(math.sqrt(n))) + kn
    m_max = min(m_max, n - 2)
    band = 2.0 * math.sqrt(math.log10(n) / n)
    acv = _autocovariances(d, m_max)
    if acv[0] == 0.0:
        return 1.0
    # autocorrelation at each lag, each from its own overlapping stretch (as Patton's code)
    rho = np.empty(m_max + 1)
    for k in range(m_max + 1):
        a, b = d[k:], d[: n - k]
        den = math.sqrt(float(a @ a) * float(b @ b))
        rho[k] = abs(float(a @ b)) / den if den > 0 else 0.0
    # m: the smallest positive lag after which kn autocorrelations lie inside the band
    m = next((i for i in range(1, m_max - kn + 1) if np.all(rho[i + 1 : i + kn + 1] < band)), m_max)
    big_m = min(2 * m, m_max)
    k = np.arange(1, big_m + 1)
    h = np.minimum(1.0, 2.0 * (1.0 - k / big_m))
    g = 2.0 * float(np.sum(h * k * acv[1 : big_m + 1]))
    lr = acv[0] + 2.0 * float(np.sum(h * acv[1 : big_m + 1]))
    if lr <= 0.0 or g == 0.0:
        return 1.0
    b = (2.0 * g * g / (4.0 / 3.0 * lr * lr)) ** (1.0 / 3.0) * n ** (1.0 / 3.0)
    b_max = math.ceil(min(3.0 * math.sqrt(n), n / 3.0))
    return float(min(max(b, 1.0), b_max))


def dependence_seen(x) -> bool:
    """Whether any of the first k_n = max(5, log10 n) sample autocorrelations lies outside
    +/- 2 sqrt(log10(n) / n), the band Politis & White (2004) use to choose their m.

    When none does, the series shows no dependence worth a block: the within-run interval
    then uses the ordinary bootstrap (block 1) and BCa, instead of a block length the
    estimator would still return from noise (often 2-3 for independent data at n < 200).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    if n < 8:
        return False
    d = x - x.mean()
    den = float(d @ d)
    if den == 0.0:
        return False
    kn = min(max(5, int(math.log10(n))), n - 2)
    band = 2.0 * math.sqrt(math.log10(n) / n)
    rho = np.array([float(d[k:] @ d[: n - k]) for k in range(1, kn + 1)]) / den
    return bool(np.any(np.abs(rho) >= band))


def block_size(length: float) -> int:
    """The integer block size used for a Politis-White block length (its ceiling, at least 1)."""
    return max(1, int(math.ceil(length - 1e-9)))


def circular_block_indices(n: int, block: int, size: int, rng: np.random.Generator, dtype=np.intp) -> np.ndarray:
    """`size` resamples of n indices, each made of blocks of `block` consecutive indices
    (wrapping around the end) starting at uniform random positions, cut to length n.

    Politis & Romano (1992), the circular block bootstrap: every observation is
    equally likely to be drawn, unlike the moving-block bootstrap's edges.
    """
    n_blocks = -(-n // block)
    starts = rng.integers(0, n, size=(size, n_blocks))
    idx = (starts[:, :, None] + np.arange(block)[None, None, :]) % n
    return idx.reshape(size, n_blocks * block)[:, :n].astype(dtype, copy=False)


@dataclass(frozen=True)
class SectioningInterval:
    """A t-interval over the statistic of contiguous sections of one run."""

    estimate: float
    low: float
    high: float
    standard_error: float
    level: float
    n_sections: int
    method: str = "sectioning"


def sectioning_interval(x, q: float | None, *, level: float = 0.95, n_sections: int = 30) -> SectioningInterval:
    """Sectioning CI of the mean (q None) or the q-quantile of a long, ordered series.

    The series (in send order) is cut into `n_sections` contiguous sections of equal
    size; the interval is theta +/- t_{k-1} s / sqrt(k), theta the statistic of the
    whole series and s the standard deviation of the sections' statistics
    (Nakayama 2014; for the mean the method of batch means, Schmeiser 1982). Sections
    far longer than the correlation make their statistics nearly independent.
    """
    x = np.asarray(x, dtype=float)
    level = check_level(level)
    n = x.shape[0]
    k = int(n_sections)
    if k < 2 or n < 2 * k:
        raise ValueError(f"`x` needs at least {2 * k} values for {k} sections; got {n}")
    size = n // k
    parts = x[: size * k].reshape(k, size)
    if q is None:
        est = float(x.mean())
        sec = parts.mean(axis=1)
    else:
        est = quantile_sorted(np.sort(x), q)
        sp = np.sort(parts, axis=1)
        sec = np.array([quantile_sorted(row, q) for row in sp])
    se = float(np.std(sec, ddof=1) / math.sqrt(k))
    t = float(stats.t.ppf(0.5 + level / 2.0, k - 1))
    return SectioningInterval(
        estimate=est, low=est - t * se, high=est + t * se, standard_error=se, level=level, n_sections=k
    )


#: requests per cosine term of the within-run interval: B = n // 50 (at least 2). B/n = 1/50 keeps the
#: EWC estimate's bias at lag-1 correlation 0.8 near 3% (its leading term is pi^2 (B/n)^2 / 6 times
#: sum k^2 gamma_k / sum gamma_k, Lazarus et al. 2018, eq. 9), measured in benchmarks/within_study.py
REQUESTS_PER_TERM = 50
#: the fewest cosine terms (t with 2 degrees of freedom: the shortest passes get wide intervals)
MIN_TERMS = 2


def cosine_terms(n: int) -> int:
    """Cosine terms B of the within-run interval of n requests: max(2, n // 50), at most n - 1."""
    n = int(n)
    return max(1, min(n - 1, max(MIN_TERMS, n // REQUESTS_PER_TERM)))


def ewc_long_run_variance(x, terms: int) -> float:
    """Equal-weighted cosine (EWC) estimate of the long-run variance of a series in time order.

    Omega = (1/B) sum_{j=1..B} L_j^2, L_j = sqrt(2/n) sum_t cos(pi j (t - 1/2) / n) (x_t - mean),
    the series' first B type-II cosine-transform coefficients (``scipy.fft.dct(type=2,
    norm="ortho")``). For independent Gaussian values the L_j are independent N(0, sigma^2), so
    B Omega / sigma^2 is chi-square with B degrees of freedom and the t-ratio of the mean with
    this Omega is exactly t_B (Müller 2007; Sun 2013; Lazarus, Lewis, Stock & Watson 2018).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    terms = int(terms)
    if not 1 <= terms <= n - 1:
        raise ValueError(f"`terms` must lie in 1..{n - 1} for {n} values; got {terms}")
    coef = dct(x - x.mean(), type=2, norm="ortho")[1 : terms + 1]
    return float(np.mean(coef * coef))


@dataclass(frozen=True)
class SeriesInterval:
    """A within-run interval of a statistic of one series in time order (`series_interval`)."""

    estimate: float
    low: float
    high: float
    standard_error: float
    level: float
    df: int
    method: str


def series_interval(x, q: float | None, *, level: float = 0.95, terms: int | None = None) -> SeriesInterval:
    """Within-run CI of the mean (q None) or the q-quantile of a series in send order.

    Mean: mean +/- t_{B, (1+level)/2} sqrt(Omega / n), Omega the EWC long-run variance
    (`ewc_long_run_variance`) with B = `cosine_terms(n)` terms unless `terms` is given.
    Quantile: Woodruff's (1952) interval, [Q(q - t s_p), Q(q + t s_p)], Q the sample quantile
    (numpy 'linear', as the estimate) and s_p = sqrt(Omega_I / n) the standard error of the share
    of values at or below the estimate, Omega_I the EWC long-run variance of those indicators in
    send order (the Bahadur representation of a dependent series' quantile, Wu 2005). Both are
    valid whatever the correlation in send order (no pre-test) as long as it dies out within a few
    per cent of the pass; the t_B reference distribution (Sun 2013) pays for the estimate's noise.
    """
    x = np.asarray(x, dtype=float)
    level = check_level(level)
    n = x.shape[0]
    if n < 3 or not np.all(np.isfinite(x)):
        raise ValueError(f"`x` needs at least 3 finite values; got {n}")
    b = cosine_terms(n) if terms is None else int(terms)
    t = float(stats.t.ppf(0.5 + level / 2.0, b))
    if q is None:
        est = float(x.mean())
        se = math.sqrt(ewc_long_run_variance(x, b) / n)
        return SeriesInterval(est, est - t * se, est + t * se, se, level, b, "ewc")
    xs = np.sort(x)
    est = quantile_sorted(xs, q)
    below = (x <= est).astype(float)
    sp = math.sqrt(ewc_long_run_variance(below, b) / n)
    lo = quantile_sorted(xs, min(1.0, max(0.0, q - t * sp)))
    hi = quantile_sorted(xs, min(1.0, max(0.0, q + t * sp)))
    return SeriesInterval(est, lo, hi, (hi - lo) / (2.0 * t), level, b, "woodruff-ewc")
