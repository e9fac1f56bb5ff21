"""Bootstrap confidence intervals, vectorised over resamples, metrics and statistics.

Two entry points. `hierarchical_bootstrap` gives a cell's interval over its passes (and its
dates, where there are several) when ``--ci-method bootstrap`` (or ``BCa``) is asked for (issue
43; benchreport.stats.cells.bootstrap_cells): a two-stage resampling of dates, then passes.

`bootstrap_group` / `bootstrap_ci`, the engine over the requests of one pass (the within-run
interval before issue 30, kept for benchmarks/coverage.py, bench_ci.py and within_methods.py,
which compare it with the computed intervals), give the same answers as
``scipy.stats.bootstrap`` (BCa or percentile, numpy-'linear' quantiles) within Monte-Carlo
error, much faster, because

* one resample-index matrix is drawn per group of observations and shared by
  every metric (column) and every statistic of that group: a resample is a set
  of requests;
* each metric's values are sorted once; a resample is drawn directly as a
  matrix of ranks (int16 where n <= 32767; mapped to the other metrics' ranks
  by one int16 gather), sorted row-wise (numpy's sort of 16-bit integers is
  very fast), and every quantile of every resample is read off two
  neighbouring order statistics, with numpy's own linear interpolation;
* means are one gather and one row sum;
* the BCa acceleration comes from the jackknife in closed form: leaving out the
  i-th sorted value shifts the order statistics after it by one, and the
  leave-one-out mean is (sum - x_i)/(n - 1);
* resamples are drawn in chunks of at most `CHUNK_ELEMENTS` indices, so memory
  stays bounded whatever n and `n_resamples` are.

Degenerate data are handled as scipy does: when every value is equal the
bootstrap distribution is a point, BCa is undefined and the CI is NaN with a
`DegenerateDataWarning`; the percentile interval is then zero-width. One
deliberate difference: when the bootstrap distribution has spread but the
jackknife has none (heavily tied data, e.g. latencies rounded to whole
milliseconds, at a quantile), scipy returns NaN; we set the acceleration to 0
(the bias-corrected percentile interval, Efron 1981) and say so in the
result's `note` (cells() then writes "(acceleration 0: tied data)" into
ci_method).

References
----------
Efron, B. (1981). Nonparametric standard errors and confidence intervals.
Canadian Journal of Statistics 9(2), 139-158 (bias-corrected percentile).
Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185.
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap,
Chapman & Hall, ch. 13-14 (percentile, BCa) and eq. 14.15 (jackknife
acceleration).
Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their
Application, CUP, §5.3 (BCa) and §3.8 (hierarchical data: resample the top level).
scipy.stats.bootstrap and scipy/stats/_resampling.py `_bca_interval`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.special import ndtr, ndtri
from scipy.stats import DegenerateDataWarning

from .common import ConfidenceInterval, check_level, lerp, parse_statistic, quantile_positions
from .within import circular_block_indices

__all__ = [
    "BootstrapCI",
    "GroupBootstrap",
    "DegenerateDataWarning",
    "bootstrap_ci",
    "bootstrap_group",
    "hierarchical_bootstrap",
    "jackknife_values",
    "CHUNK_ELEMENTS",
    "METHODS",
    "check_method",
    "check_ci_method",
    "CI_METHODS",
    "check_n_resamples",
]

#: bootstrap CI methods the engine gives (names as in scipy.stats.bootstrap, case-insensitive)
METHODS = ("BCa", "percentile")

#: resamples x observations drawn at once (int16 indices: 4 MiB); bounds memory.
#: Part of the determinism contract: the chunk size depends on n only.
CHUNK_ELEMENTS = 1 << 21


@dataclass(frozen=True)
class BootstrapCI:
    """A bootstrap confidence interval (the shape of scipy's BootstrapResult, plus the inputs).

    Attributes
    ----------
    estimate : float
        The statistic on the original sample(s).
    low, high : float
        The interval; NaN when it cannot be computed (see `note`).
    standard_error : float
        Standard deviation (ddof=1) of the bootstrap distribution.
    level : float
        Confidence level.
    method : str
        ``"BCa"`` or ``"percentile"``.
    n : int or tuple of int
        Sample size(s).
    n_resamples : int
    bias_correction : float
        BCa z0 (NaN for percentile).
    acceleration : float
        BCa acceleration a (NaN for percentile).
    note : str
        Empty, or why the interval is NaN / what was done about a degenerate case.
    """

    estimate: float
    low: float
    high: float
    standard_error: float
    level: float
    method: str
    n: int | tuple
    n_resamples: int
    bias_correction: float = math.nan
    acceleration: float = math.nan
    note: str = ""

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        """(low, high), as ``scipy.stats.bootstrap(...).confidence_interval``."""
        return ConfidenceInterval(self.low, self.high)


@dataclass(frozen=True)
class GroupBootstrap:
    """Bootstrap results of one group: every metric (row) x statistic (column).

    All arrays have shape (n_metrics, n_statistics); `distributions`, when
    kept, has shape (n_metrics, n_statistics, n_resamples).
    """

    statistics: tuple
    n: int
    n_resamples: int
    level: float
    method: str
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    standard_error: np.ndarray
    bias_correction: np.ndarray
    acceleration: np.ndarray
    note: np.ndarray
    sorted_values: np.ndarray = field(repr=False)
    distributions: np.ndarray | None = field(default=None, repr=False)

    def result(self, metric: int = 0, statistic: int = 0) -> BootstrapCI:
        """The BootstrapCI of one (metric row, statistic column)."""
        j, k = metric, statistic
        return BootstrapCI(
            estimate=float(self.estimate[j, k]),
            low=float(self.low[j, k]),
            high=float(self.high[j, k]),
            standard_error=float(self.standard_error[j, k]),
            level=self.level,
            method=self.method,
            n=self.n,
            n_resamples=self.n_resamples,
            bias_correction=float(self.bias_correction[j, k]),
            acceleration=float(self.acceleration[j, k]),
            note=str(self.note[j, k]),
        )


# --------------------------------------------------------------------------- helpers
def _statistics_iv(statistics) -> tuple:
    statistics = (statistics,) if isinstance(statistics, (str, float, int)) else tuple(statistics)
    if not statistics:
        raise ValueError("`statistics` must name at least one statistic")
    return statistics


def _positive_int_iv(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {value!r}")
    return int(value)


def check_method(method) -> str:
    """The bootstrap interval's name as given ("BCa" or "percentile", any case), checked."""
    if not isinstance(method, str) or method.lower() not in {m.lower() for m in METHODS}:
        raise ValueError(f"`method` must be one of {METHODS}; got {method!r}")
    return "BCa" if method.lower() == "bca" else "percentile"


#: the cell interval's methods (`--ci-method`): t, or the bootstrap of `hierarchical_bootstrap`
CI_METHODS = ("t", "bootstrap", "percentile", "BCa")


def check_ci_method(method) -> str:
    """The cell interval's method as given (`CI_METHODS`, any case), checked: "t", "percentile"
    ("bootstrap" is the percentile bootstrap) or "BCa"."""
    if not isinstance(method, str) or method.lower() not in {m.lower() for m in CI_METHODS}:
        raise ValueError(f"`method` must be one of {CI_METHODS}; got {method!r}")
    m = method.lower()
    return "t" if m == "t" else "BCa" if m == "bca" else "percentile"


def check_n_resamples(n_resamples) -> int:
    """A positive number of resamples, checked."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"`n_resamples` must be a positive integer; got {n_resamples!r}")
    return int(n_resamples)


def _rng_iv(rng) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer, np.random.SeedSequence)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    raise ValueError(f"`rng` must be a numpy Generator, a SeedSequence, an int seed or None; got {rng!r}")


def _values_iv(values, name: str) -> np.ndarray:
    try:
        x = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be numeric") from None
    if x.ndim == 1:
        x = x[None, :]
    elif x.ndim != 2:
        raise ValueError(f"`{name}` must be 1-D (one metric) or 2-D (metrics x observations); got {x.ndim}-D")
    if x.shape[1] < 2:
        raise ValueError(f"`{name}` needs at least 2 observations; got {x.shape[1]}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"`{name}` must be finite (drop NaN before bootstrapping)")
    return x


def jackknife_values(sorted_values: np.ndarray, q: float | None) -> np.ndarray:
    """Leave-one-out values of the mean (q None) or the linear q-quantile, in closed form.

    Parameters
    ----------
    sorted_values : 1-D array, sorted ascending
    q : float or None

    Returns
    -------
    ndarray of length n: the statistic with the i-th sorted value left out.

    Notes
    -----
    Mean: (S - x_i)/(n - 1). Quantile: with y the sample without x_(i),
    y_k = x_(k) for k < i and x_(k+1) otherwise, and the linear quantile of
    n - 1 values reads y at two fixed positions (Efron & Tibshirani 1993, §11.2,
    the jackknife; closed form because the leave-one-out order statistics shift
    by one).
    """
    xs = np.asarray(sorted_values, dtype=float)
    n = xs.shape[0]
    if q is None:
        return (xs.sum() - xs) / (n - 1)
    lo, hi, g = quantile_positions(n - 1, q)
    i = np.arange(n)
    y_lo = np.where(lo < i, xs[lo], xs[min(lo + 1, n - 1)])
    y_hi = np.where(hi < i, xs[hi], xs[min(hi + 1, n - 1)])
    return lerp(y_lo, y_hi, g)


def _acceleration(jackknives: list[np.ndarray]) -> float:
    """BCa acceleration from the jackknife values of each sample (scipy `_bca_interval`).

    a = sum_j sum_i U_ji^3 / n_j^3 / (6 (sum_j sum_i U_ji^2 / n_j^2)^(3/2)),
    U_ji = (n_j - 1)(mean_i theta_ji - theta_ji) (Efron & Tibshirani 1993, eq. 14.15).
    Returns NaN when the jackknife has no spread.
    """
    num = 0.0
    den = 0.0
    for th in jackknives:
        nj = float(th.shape[-1])
        u = (nj - 1.0) * (th.mean() - th)
        num += float(np.sum(u**3)) / nj**3
        den += float(np.sum(u**2)) / nj**2
    if den == 0.0:
        return math.nan
    return num / (6.0 * den**1.5)


def _quantile_rows(sorted_rows: np.ndarray, p: np.ndarray) -> np.ndarray:
    """numpy-'linear' quantiles of each sorted row at per-row probabilities p (..., k)."""
    b = sorted_rows.shape[-1]
    p = np.asarray(p, dtype=float)
    bad = ~np.isfinite(p)
    v = np.where(bad, 0.0, np.clip(p, 0.0, 1.0)) * (b - 1)
    lo = np.floor(v).astype(np.intp)
    hi = np.minimum(lo + 1, b - 1)
    top = v >= b - 1
    lo = np.where(top, b - 1, lo)
    g = v - np.floor(v)
    a = np.take_along_axis(sorted_rows, lo, axis=-1)
    c = np.take_along_axis(sorted_rows, hi, axis=-1)
    out = lerp(a, c, g)
    return np.where(bad, np.nan, out)


def _intervals(estimate, distributions, accelerations, method, level):
    """CI endpoints, SE and z0 for K statistics at once.

    estimate (K,), distributions (K, B), accelerations (K,) -> dict of (K,) arrays.
    Follows scipy.stats.bootstrap: z0 = ndtri((#{<} + #{<=}) / 2B);
    alpha_1,2 = ndtr(z0 + (z0 +/- z)/(1 - a (z0 +/- z))); endpoints = linear
    quantiles of the bootstrap distribution.
    """
    k, b = distributions.shape
    alpha = (1.0 - level) / 2.0
    dist_sorted = np.sort(distributions, axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = distributions.std(axis=-1, ddof=1) if b > 1 else np.full(k, np.nan)
    degenerate = dist_sorted[:, 0] == dist_sorted[:, -1]
    notes = np.full(k, "", dtype=object)
    if method == "percentile":
        p = np.tile([alpha, 1.0 - alpha], (k, 1))
        z0 = np.full(k, np.nan)
        acc = np.full(k, np.nan)
    else:
        est = np.asarray(estimate, dtype=float)[:, None]
        pct = ((distributions < est).sum(axis=-1) + (distributions <= est).sum(axis=-1)) / (2.0 * b)
        z0 = ndtri(pct)
        acc = np.asarray(accelerations, dtype=float).copy()
        flat = np.isnan(acc) & ~degenerate
        acc[flat] = 0.0
        notes[flat] = "acceleration set to 0: the jackknife has no spread (tied data)"
        z_a = float(ndtri(alpha))
        with np.errstate(invalid="ignore", divide="ignore"):
            num1 = z0 + z_a
            a1 = ndtr(z0 + num1 / (1.0 - acc * num1))
            num2 = z0 - z_a
            a2 = ndtr(z0 + num2 / (1.0 - acc * num2))
        p = np.stack([a1, a2], axis=-1)
    ci = _quantile_rows(dist_sorted, p)
    nan_ci = np.isnan(ci).any(axis=-1)
    notes[nan_ci & degenerate] = "degenerate: all bootstrap statistics are equal"
    notes[nan_ci & ~degenerate] = "BCa undefined: the estimate lies outside the bootstrap distribution"
    return dict(low=ci[:, 0], high=ci[:, 1], se=se, z0=z0, acc=acc, notes=notes, nan=nan_ci)


def _warn_nan(n_nan: int, stacklevel: int = 3) -> None:
    if n_nan:
        warnings.warn(
            DegenerateDataWarning(
                f"{n_nan} bootstrap confidence interval(s) cannot be calculated (NaN): the "
                "distribution is degenerate (all values equal) or the estimate lies outside "
                "the bootstrap distribution"
            ),
            stacklevel=stacklevel,
        )


def _resample_statistics(
    x: np.ndarray, qs: list, n_resamples: int, rng: np.random.Generator, chunk_elements: int, block: int = 1
):
    """Bootstrap distributions of statistics `qs` for each row of x (rows share resamples).

    x : (m, n) finite values, one row per metric, columns = observations.
    Returns (estimate (m, s), distributions (m, s, B), sorted x (m, n)).

    The random matrix drawn is read as ranks in the first row's sort order: a
    uniform draw of ranks is a uniform draw of observations (the rank map is a
    bijection), and resample b is the set of observations idx = order_0[r_b].
    With ``block > 1`` the columns of x are in send order and each resample is
    made of circular blocks of consecutive columns (`within.circular_block_indices`),
    mapped to row-0 ranks; the rest is unchanged.
    Row j reads the same observations through the composed permutation
    rank_j[order_0] (one int16 gather); every row's ranks are then sorted and
    the quantiles read off two neighbouring order statistics.
    """
    m, n = x.shape
    s = len(qs)
    order = np.argsort(x, axis=1, kind="stable")
    xs = np.take_along_axis(x, order, axis=1)
    idt = np.int16 if n <= np.iinfo(np.int16).max else np.int32
    rank = np.empty((m, n), dtype=np.intp)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(n), (m, n)), axis=1)
    # ranks of row j of the observation whose rank in row 0 is r: rank_j[order_0[r]]
    to_row = rank[:, order[0]].astype(idt)

    quant = [(k, q, quantile_positions(n, q)) for k, q in enumerate(qs) if q is not None]
    mean_cols = [k for k, q in enumerate(qs) if q is None]
    kth = sorted({p for _, _, (lo, hi, _) in quant for p in (lo, hi)})
    kpos = {p: i for i, p in enumerate(kth)}
    kth_arr = np.asarray(kth, dtype=np.intp)

    est = np.empty((m, s))
    for k, _q, (lo, hi, g) in quant:
        est[:, k] = lerp(xs[:, lo], xs[:, hi], g)
    for k in mean_cols:
        est[:, k] = xs.mean(axis=1)

    dist = np.empty((m, s, n_resamples))
    chunk = max(1, min(n_resamples, chunk_elements // n))
    for start in range(0, n_resamples, chunk):
        b = min(chunk, n_resamples - start)
        if block == 1:
            r0 = rng.integers(0, n, size=(b, n), dtype=idt)
        else:  # circular blocks of positions in x's column order, read as row-0 ranks
            r0 = rank[0][circular_block_indices(n, block, b, rng)].astype(idt)
        reading = (quant, mean_cols, kth_arr, kpos)
        for j in range(m):
            _read_resamples(dist[j, :, start : start + b], xs[j], r0 if j == 0 else to_row[j][r0], reading)
    return est, dist, xs


def _read_resamples(out: np.ndarray, sorted_row: np.ndarray, ranks: np.ndarray, reading) -> None:
    """Fill `out` (statistics x resamples) from one row's resamples given as ranks into its sorted
    values: quantiles from two neighbouring order statistics of the sorted ranks, the mean as a
    sum (`ranks` is sorted in place when a quantile is asked for)."""
    quant, mean_cols, kth_arr, kpos = reading
    if quant:
        ranks.sort(axis=1)
        v = sorted_row[ranks[:, kth_arr]]
        for k, _q, (lo, hi, g) in quant:
            out[k] = lerp(v[:, kpos[lo]], v[:, kpos[hi]], g)
    if mean_cols:
        mu = sorted_row[ranks].sum(axis=1) / ranks.shape[1]
        for k in mean_cols:
            out[k] = mu


# --------------------------------------------------------------------------- public API
def bootstrap_group(
    values,
    statistics,
    *,
    method: str = "BCa",
    n_resamples: int = 10000,
    level: float = 0.95,
    rng=None,
    keep_distribution: bool = False,
    warn: bool = True,
    chunk_elements: int = CHUNK_ELEMENTS,
    block: int = 1,
) -> GroupBootstrap:
    """Bootstrap CIs of several statistics of several metrics sharing one set of resamples.

    The batched entry point: a group is one set of observations (e.g. the requests of one seat,
    workload, concurrency and pass); each row of `values` (shape (n,) or (n_metrics, n), finite,
    the same observation in the same column of every row) is one metric, and every resample is
    shared by all rows and all `statistics` (``"mean"``, ``"median"``, ``"pNN"`` or a quantile
    level in (0, 1); numpy's default 'linear' quantile).

    method ("BCa" or "percentile"), n_resamples, level (the confidence level) and rng (a numpy
    Generator, SeedSequence, int or None) as scipy.stats.bootstrap has them; keep_distribution
    keeps the distributions; warn: a DegenerateDataWarning when a
    CI is NaN; chunk_elements: resamples x observations drawn at once. block above 1 gives the
    circular block bootstrap (Politis & Romano 1992) of blocks of that many consecutive columns
    (observations in send order); BCa's jackknife acceleration assumes independence, so the
    percentile interval is used then.

    References: Efron & Tibshirani (1993), ch. 13-14; scipy.stats.bootstrap (same definitions of
    the percentile and BCa intervals).
    """
    x, statistics = _values_iv(values, "values"), _statistics_iv(statistics)
    qs = [parse_statistic(s) for s in statistics]
    method, n_resamples, level, rng = (
        check_method(method),
        check_n_resamples(n_resamples),
        check_level(level),
        _rng_iv(rng),
    )
    chunk_elements, block = _positive_int_iv(chunk_elements, "chunk_elements"), _positive_int_iv(block, "block")
    m, n = x.shape
    s = len(qs)
    block = min(block, n)
    if block > 1:
        method = "percentile"
    est, dist, xs = _resample_statistics(x, qs, n_resamples, rng, chunk_elements, block)
    if method == "BCa":
        acc = np.array([[_acceleration([jackknife_values(xs[j], q)]) for q in qs] for j in range(m)])
    else:
        acc = np.full((m, s), np.nan)
    out = _intervals(est.ravel(), dist.reshape(m * s, n_resamples), acc.ravel(), method, level)
    if warn:
        _warn_nan(int(out["nan"].sum()))
    shape = (m, s)
    return GroupBootstrap(
        statistics=statistics,
        n=n,
        n_resamples=n_resamples,
        level=level,
        method=method,
        estimate=est,
        low=out["low"].reshape(shape),
        high=out["high"].reshape(shape),
        standard_error=out["se"].reshape(shape),
        bias_correction=out["z0"].reshape(shape),
        acceleration=out["acc"].reshape(shape),
        note=out["notes"].reshape(shape),
        sorted_values=xs,
        distributions=dist if keep_distribution else None,
    )


def bootstrap_ci(
    samples, statistic="mean", *, method: str = "BCa", n_resamples: int = 10000, level: float = 0.95, rng=None
) -> BootstrapCI:
    """Bootstrap confidence interval of one statistic of one sample.

    Parameters
    ----------
    samples : array_like, 1-D, finite, at least 2 values
        The observations (one sample).
    statistic : str or float
        ``"mean"``, ``"median"``, ``"pNN"`` (e.g. ``"p99"``) or a quantile level in (0, 1);
        quantiles use numpy's default 'linear' definition.
    method : {"BCa", "percentile"}, keyword-only
        BCa: Efron (1987); percentile: Efron & Tibshirani (1993) §13.3.
    n_resamples : int
    level : float
    rng : numpy.random.Generator, SeedSequence, int or None

    Returns
    -------
    BootstrapCI
        ``low``, ``high``, ``standard_error``, ``method`` (and ``confidence_interval``).

    Notes
    -----
    Same definitions as ``scipy.stats.bootstrap(..., method=...)``; answers
    agree within Monte-Carlo error. All values equal: BCa gives NaN with a
    DegenerateDataWarning (as scipy), percentile a zero-width interval.

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82, 171-185.
    Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(1).lognormal(3.5, 0.4, size=200)
    >>> res = bootstrap_ci(x, "p90", rng=0)
    >>> res.low < res.estimate < res.high
    True
    """
    try:
        x = np.asarray(samples, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("`samples` must be numeric") from None
    if x.ndim != 1:
        raise ValueError(f"`samples` must be 1-D; got shape {x.shape}")
    if x.shape[0] < 2:
        raise ValueError(f"`samples` needs at least 2 observations; got {x.shape[0]}")
    if not np.all(np.isfinite(x)):
        raise ValueError("`samples` must be finite (drop NaN before bootstrapping)")
    g = bootstrap_group(x, (statistic,), method=method, n_resamples=n_resamples, level=level, rng=rng, warn=False)
    res = g.result(0, 0)
    if math.isnan(res.low) or math.isnan(res.high):
        _warn_nan(1)
    return res


def hierarchical_bootstrap(
    sessions,
    *,
    method: str = "percentile",
    n_resamples: int = 2000,
    level: float = 0.95,
    rng=None,
) -> BootstrapCI:
    """CI of a cell's log level by a two-stage (hierarchical) bootstrap of its pass values.

    `sessions`: one array of log pass values per session (date). One session: the passes are
    resampled with replacement, the statistic their mean (the log of the geometric mean; the
    draws are scipy.stats.bootstrap's, ``rng.integers(0, n, (B, n))``, so the same generator gives
    its interval). Several: the sessions are resampled with replacement, then the passes within
    each drawn session, the statistic the mean of the drawn sessions' means (the estimate of
    benchreport.stats.sessions.session_level). Percentile or BCa (the jackknife leaves out one
    pass, or one session). Returns the interval on the log scale; `estimate` the statistic on the
    data.

    Notes
    -----
    With few top-level units the bootstrap is known to be too narrow: its variance is that of a
    plug-in estimate, (D - 1) / D times the unbiased one, and its quantiles are normal-like where
    the t's are wider (docs/statistics.md measures the coverage; the default stays t).

    References
    ----------
    Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and their Application, §3.8
    (hierarchical data: resample the top level, then within it). Field, C. A. & Welsh, A. H.
    (2007). Bootstrapping clustered data. JRSS B 69(3), 369-390. Efron, B. (1987) (BCa);
    scipy.stats.bootstrap (the one-level case, checked against it in tests).
    """
    method = check_method(method)
    n_resamples = check_n_resamples(n_resamples)
    level = check_level(level)
    rng = _rng_iv(rng)
    groups = [np.asarray(g, dtype=float) for g in sessions]
    groups = [g for g in groups if g.size]
    if not groups or not all(np.isfinite(g).all() for g in groups):
        raise ValueError("`sessions` must hold finite values, at least one")
    if len(groups) == 1:
        x = groups[0]
        n = x.shape[0]
        estimate = float(x.mean())
        dist = x[rng.integers(0, n, (n_resamples, n))].mean(axis=-1)
        jack = (x.sum() - x) / (n - 1) if n > 1 else np.array([estimate])
        sizes: int | tuple = n
    else:
        a = len(groups)
        means = np.array([g.mean() for g in groups])
        estimate = float(means.mean())
        drawn = rng.integers(0, a, (n_resamples, a))
        inner = np.empty((n_resamples, a))
        for i, g in enumerate(groups):  # the passes of every draw of session i, in one call
            at = drawn == i
            k = int(at.sum())
            if k:
                inner[at] = g[rng.integers(0, g.shape[0], (k, g.shape[0]))].mean(axis=-1)
        dist = inner.mean(axis=-1)
        jack = (means.sum() - means) / (a - 1)
        sizes = tuple(int(g.shape[0]) for g in groups)
    acc = _acceleration([jack]) if method == "BCa" else math.nan
    r = _intervals(np.array([estimate]), dist[None, :], np.array([acc]), method, level)
    return BootstrapCI(
        estimate=estimate,
        low=float(r["low"][0]),
        high=float(r["high"][0]),
        standard_error=float(r["se"][0]),
        level=level,
        method=method,
        n=sizes,
        n_resamples=n_resamples,
        bias_correction=float(r["z0"][0]),
        acceleration=float(r["acc"][0]),
        note=str(r["notes"][0]),
    )
