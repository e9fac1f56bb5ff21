"""Small shared pieces of the statistics layer: statistic names, quantiles, rng, keys.

Nothing here is a statistical method of its own; the methods live in
`bootstrap`, `intervals`, `exact`, `cells`, `compare` and `exams`.
"""

from __future__ import annotations

import functools
import math
import re
import zlib
from collections import namedtuple
from fractions import Fraction
from typing import Iterable

import numpy as np
import pandas as pd
from scipy.special import betainc

from benchreport.load.errors import DataSetError

__all__ = [
    "ConfidenceInterval",
    "parse_statistic",
    "quantile_sorted",
    "harrell_davis_sorted",
    "median_unbiased_sorted",
    "lerp",
    "sequential_sum",
    "sorted_mean",
    "key_rng",
    "key_seed_sequence",
    "stable_key",
    "format_values",
    "check_level",
    "resolve_baseline",
    "tail_count",
    "tail_supported",
    "tail_needed_n",
]

#: (low, high) pair, as scipy.stats' ConfidenceInterval
ConfidenceInterval = namedtuple("ConfidenceInterval", ["low", "high"])

_PNN = re.compile(r"^p(\d{1,2}(?:\.\d+)?)$")


def parse_statistic(statistic) -> float | None:
    """Quantile level of a statistic name, or None for the mean.

    Accepted: ``"mean"``, ``"median"`` (= ``"p50"``), ``"pNN"`` / ``"pNN.N"``
    (e.g. ``"p99"``, ``"p99.9"``), or a float in (0, 1) meaning that quantile.
    Raises ValueError naming `statistic` otherwise (``min``/``max`` cannot be
    bootstrapped honestly: the bootstrap of an extreme order statistic is
    inconsistent, Bickel & Freedman 1981).
    """
    if isinstance(statistic, str):
        if statistic == "mean":
            return None
        if statistic == "median":
            return 0.5
        m = _PNN.match(statistic)
        if m:
            q = float(m.group(1)) / 100.0
            if 0.0 < q < 1.0:
                return q
        raise ValueError(
            f"`statistic` must be 'mean', 'median', 'pNN' (e.g. 'p99') or a quantile level in (0, 1); got {statistic!r}"
        )
    if isinstance(statistic, (float, int, np.floating, np.integer)) and not isinstance(statistic, bool):
        q = float(statistic)
        if 0.0 < q < 1.0:
            return q
    raise ValueError(
        f"`statistic` must be 'mean', 'median', 'pNN' (e.g. 'p99') or a quantile level in (0, 1); got {statistic!r}"
    )


@functools.lru_cache(maxsize=256)
def _exact_level(q) -> Fraction:
    """A quantile level as the fraction it was written as: 0.9 -> 9/10, 0.999 -> 999/1000.

    Binary floating point cannot hold 0.9, and 100 * (1 - 0.9) is 9.999999999999998; the
    nearest fraction with a denominator up to 10^6 is the decimal level every statistic name
    (pNN, pNN.N) stands for.
    """
    return Fraction(float(q)).limit_denominator(1_000_000)


def tail_count(n: int, q) -> Fraction:
    """n (1 - q), the expected number of observations beyond quantile q, exactly (a Fraction)."""
    return int(n) * (1 - _exact_level(q))


@functools.lru_cache(maxsize=4096)  # a fleet asks it of the same few (n, q) thousands of times
def tail_supported(n: int, q, min_tail_obs) -> bool:
    """Whether n observations support quantile q: always for q <= 0.5, else n (1 - q) >= min_tail_obs,
    computed exactly (`tail_count`), so that 100 requests carry a p90 and 1000 a p99."""
    if q is None or float(q) <= 0.5:
        return True
    return tail_count(n, q) >= Fraction(min_tail_obs)


def tail_needed_n(q, min_tail_obs) -> int:
    """The smallest n with n (1 - q) >= min_tail_obs (exactly: 100 for p90 at 10, 1000 for p99)."""
    return math.ceil(Fraction(min_tail_obs) / (1 - _exact_level(q)))


def lerp(a, b, t):
    """numpy's `_lerp` (numpy/lib/_function_base_impl.py): a + (b-a)t, from b when t >= .5.

    Reproducing it exactly makes our quantiles bit-identical to `np.quantile`.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    t = np.asarray(t, dtype=float)
    diff = b - a
    out = a + diff * t
    return np.where(t >= 0.5, b - diff * (1 - t), out)


def sequential_sum(x) -> float:
    """The left-to-right sum of x started from 0.0 ((((0.0 + x0) + x1) + x2) + ...; 0.0 when
    empty, never -0.0): a strict order of additions that a SQL engine reproduces bit for bit
    (DuckDB's `list_sum`), where numpy's `sum` adds pairwise (benchreport.store.figures computes
    a pass's figures by SQL). Adding 0.0 last is the same as first: it only turns -0.0 into 0.0."""
    x = np.asarray(x, dtype=float)
    return float(np.add.accumulate(x)[-1] + 0.0) if x.shape[0] else 0.0


def sorted_mean(sorted_v) -> float:
    """The mean of sorted values as both routes compute it: their left-to-right sum in ascending
    order (`sequential_sum`) over n."""
    sorted_v = np.asarray(sorted_v, dtype=float)
    return sequential_sum(sorted_v) / sorted_v.shape[0]


def quantile_positions(n: int, q: float) -> tuple[int, int, float]:
    """(previous index, next index, gamma) of numpy's 'linear' quantile on n sorted values.

    Hyndman & Fan (1996) definition 7, numpy's default: virtual index (n-1)q.
    """
    v = (n - 1) * q
    if v >= n - 1:
        return n - 1, n - 1, v - math.floor(v)
    lo = math.floor(v)
    return lo, lo + 1, v - lo


def quantile_sorted(xs: np.ndarray, q: float) -> float:
    """numpy-'linear' quantile of an already sorted 1-D array (bit-identical to np.quantile)."""
    n = xs.shape[0]
    lo, hi, g = quantile_positions(n, q)
    return float(lerp(xs[lo], xs[hi], g))


def harrell_davis_sorted(xs: np.ndarray, q: float) -> float:
    """Harrell-Davis estimate of quantile q of an already sorted 1-D array.

    The expected value of the order statistic of rank (n + 1) q, estimated as a weighted sum
    of all order statistics: x_(i) weighs I_{i/n}(a, b) - I_{(i-1)/n}(a, b), I the regularized
    incomplete beta function with a = (n + 1) q and b = (n + 1)(1 - q) (Harrell, F. E. &
    Davis, C. E. (1982), A new distribution-free quantile estimator, Biometrika 69(3),
    635-640). On uniform values its expected rank is n q + 1/2, against numpy-'linear''s
    (n - 1) q + 1 and the unbiased (n + 1) q: half the linear's bias towards the centre. It
    averages values, so on a right-skewed tail its log is biased upwards (docs/statistics.md,
    "Tail cells of several passes"); kept as a measured alternative
    (`benchreport.stats.requests.TAIL_ESTIMATORS`). The same number as
    `scipy.stats.mstats.hdquantiles` (tests/test_tail_estimator.py).
    """
    n = xs.shape[0]
    if n == 1:
        return float(xs[0])
    edges = betainc((n + 1) * q, (n + 1) * (1.0 - q), np.arange(n + 1) / n)
    return float(np.dot(np.diff(edges), xs))


def median_unbiased_sorted(xs: np.ndarray, q: float) -> float:
    """Hyndman & Fan's (1996) definition 8 quantile of an already sorted 1-D array: the order
    statistics interpolated at rank (n + 1/3) q + 1/3, numpy's ``method="median_unbiased"``.

    Its estimate is approximately median-unbiased whatever the distribution (the median of the
    order statistic of rank k has share about (k - 1/3) / (n + 1/3) below it), and a median is
    kept by any increasing transform: so also on the log scale on which passes are combined
    (Hyndman, R. J. & Fan, Y. (1996), Sample quantiles in statistical packages, The American
    Statistician 50(4), 361-365, section 3 and property P6-P7).
    """
    n = xs.shape[0]
    v = (n + 1.0 / 3.0) * q + 1.0 / 3.0 - 1.0  # 0-based virtual index
    v = min(max(v, 0.0), n - 1.0)
    lo = math.floor(v)
    hi = min(lo + 1, n - 1)
    return float(xs[lo] + (xs[hi] - xs[lo]) * (v - lo))


def check_level(level, name: str = "level") -> float:
    """Validate a confidence level in (0, 1); ValueError naming the argument."""
    try:
        lv = float(level)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be a number in (0, 1); got {level!r}") from None
    if not (0.0 < lv < 1.0) or math.isnan(lv):
        raise ValueError(f"`{name}` must be in (0, 1); got {level!r}")
    return lv


def missing(p) -> bool:
    return p is None or p is pd.NA or p is pd.NaT or (isinstance(p, float) and math.isnan(p))


def stable_key(parts: Iterable) -> str:
    """A text form of a key that does not depend on the Python process (no hash())."""
    out = []
    for p in parts:
        if missing(p):
            out.append("<NA>")
        elif isinstance(p, np.integer):
            out.append(str(int(p)))
        else:
            out.append(str(p))
    return "\x1f".join(out)


def key_seed_sequence(seed: int, key: Iterable) -> np.random.SeedSequence:
    """SeedSequence([seed, crc32(key)]): one independent random stream per key.

    Deriving each stream from the key (not from a shared generator) makes a
    cell's resamples independent of which other cells exist.
    """
    crc = zlib.crc32(stable_key(key).encode("utf-8")) & 0xFFFFFFFF
    return np.random.SeedSequence([int(seed), crc])


def key_rng(seed: int, key: Iterable) -> np.random.Generator:
    """np.random.Generator(PCG64) on `key_seed_sequence(seed, key)`."""
    return np.random.default_rng(key_seed_sequence(seed, key))


def format_values(values: Iterable[float]) -> str:
    """';'-joined shortest round-trip repr of each value (deterministic)."""
    return ";".join(repr(float(v)) for v in values)


def parse_values(v) -> list[float]:
    """Per-pass values of a cell: the ';'-joined `values` of cells.csv (inverse of
    format_values), or a sequence; missing entries and unparsable parts are left out."""
    if isinstance(v, (list, tuple, np.ndarray)):
        return [float(x) for x in v if not missing(x)]
    if missing(v):
        return []
    out = []
    for part in str(v).split(";"):
        try:
            out.append(float(part))
        except ValueError:
            continue
    return out


def resolve_baseline(baseline, seats, present) -> str | None:
    """The baseline seat: `baseline` if given, else the seat whose role is "incumbent".

    Raises ValueError when `baseline` names a seat found neither in the data
    (`present`) nor in the seats table, or when several seats are incumbents.
    Returns None when there is no baseline.
    """
    if baseline is not None:
        known = set(map(str, present))
        if isinstance(seats, pd.DataFrame) and "seat" in seats:
            known |= set(seats["seat"].astype(str))
        if str(baseline) not in known:
            raise DataSetError(
                f"the baseline seat {baseline!r} is not a seat in the data (seats: {', '.join(sorted(known)[:20])})"
            )
        return str(baseline)
    if not isinstance(seats, pd.DataFrame) or not len(seats) or "role" not in seats or "seat" not in seats:
        return None
    inc = sorted(set(seats.loc[seats["role"].astype("object") == "incumbent", "seat"].astype(str)))
    if len(inc) > 1:
        raise DataSetError(
            f"several seats are marked incumbent ({', '.join(inc)}): "
            "choose the baseline with --baseline (or `baseline=`)"
        )
    return inc[0] if inc else None
