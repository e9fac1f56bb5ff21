"""Exact tests for exam deltas and the multiplicity adjustment across a report.

Known traps (checked, do not re-introduce): the continuity-corrected McNemar of
statsmodels/pingouin gives p < 1 when b == c; here the exact binomial test on
the discordant pairs is used, which gives p = 1 then.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy import stats

from .multiplicity import adjust

__all__ = ["McNemarResult", "CountsTestResult", "mcnemar_exact", "counts_exact", "holm"]


@dataclass(frozen=True)
class McNemarResult:
    """Exact McNemar test on the discordant pairs of a paired 2x2 table.

    b: pairs only the first (baseline) got right; c: only the second (candidate).
    """

    b: int
    c: int
    p_value: float
    p_mid: float
    method: str = "McNemar exact (binomial on discordant pairs)"


@dataclass(frozen=True)
class CountsTestResult:
    """Unpaired exact tests of two proportions x1/n1 and x2/n2."""

    p_fisher: float
    p_boschloo: float
    note: str = ""
    method: str = "Fisher exact"


def _count(x, name):
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
        if isinstance(x, (float, np.floating)) and float(x).is_integer():
            return int(x)
        raise ValueError(f"`{name}` must be an integer count; got {x!r}")
    if x < 0:
        raise ValueError(f"`{name}` must be >= 0; got {x}")
    return int(x)


def mcnemar_exact(b, c) -> McNemarResult:
    """Exact (conditional) McNemar test and its mid-p value.

    Under H0 the b of the b + c discordant pairs are Binomial(b + c, 1/2).
    Two-sided p = min(1, 2 P(X <= min(b, c))); mid-p = 2 [P(X <= min(b, c)) -
    P(X = min(b, c)) / 2] (at most 1). Computed in exact integer arithmetic.
    With no discordant pairs both are 1.

    Parameters
    ----------
    b, c : int
        Discordant pairs (first only right, second only right).

    Returns
    -------
    McNemarResult

    References
    ----------
    McNemar, Q. (1947), Note on the sampling error of the difference between
    correlated proportions or percentages, Psychometrika 12, 153-157.
    Fagerland, M. W., Lydersen, S. & Laake, P. (2013), The McNemar test for
    binary matched-pairs data: mid-p and asymptotic are better than exact
    conditional, BMC Med Res Methodol 13:91. Same p as
    ``scipy.stats.binomtest(min(b, c), b + c, 0.5).pvalue`` and statsmodels
    ``mcnemar(table, exact=True)``.

    Examples
    --------
    >>> mcnemar_exact(3, 10).p_value == 189 / 2048
    True
    """
    b = _count(b, "b")
    c = _count(c, "c")
    n = b + c
    if n == 0:
        return McNemarResult(b=b, c=c, p_value=1.0, p_mid=1.0)
    k = min(b, c)
    terms = [math.comb(n, i) for i in range(k + 1)]
    tail = sum(terms)
    denom = 2**n
    p = min(Fraction(1), Fraction(2 * tail, denom))
    mid = min(Fraction(1), Fraction(2 * tail - terms[-1], denom))
    return McNemarResult(b=b, c=c, p_value=float(p), p_mid=float(mid))


def counts_exact(x1, n1, x2, n2, *, boschloo_max_n: int = 500) -> CountsTestResult:
    """Fisher's exact and Boschloo's exact unconditional tests, two-sided.

    Parameters
    ----------
    x1, n1, x2, n2 : int
        Successes and totals of the two independent samples.
    boschloo_max_n : int, keyword-only
        Boschloo's test is computed only when both totals are at most this
        (its cost grows as n1 * n2: about 2.5 s at 500 each, 20 s at 1319);
        above it `p_boschloo` is NaN and `note` says so.

    Returns
    -------
    CountsTestResult

    References
    ----------
    Fisher, R. A. (1935), The logic of inductive inference, JRSS 98, 39-82;
    ``scipy.stats.fisher_exact``. Boschloo, R. D. (1970), Raised conditional
    level of significance for the 2x2-table when testing the equality of two
    probabilities, Statistica Neerlandica 24, 1-35; ``scipy.stats.boschloo_exact``.
    """
    x1, n1, x2, n2 = (_count(v, k) for v, k in ((x1, "x1"), (n1, "n1"), (x2, "x2"), (n2, "n2")))
    for x, n, xn, nn in ((x1, n1, "x1", "n1"), (x2, n2, "x2", "n2")):
        if n == 0:
            raise ValueError(f"`{nn}` must be positive")
        if x > n:
            raise ValueError(f"`{xn}` ({x}) must not exceed `{nn}` ({n})")
    # scipy's unconditional tests take the samples as COLUMNS: [[x1, x2], [n1 - x1, n2 - x2]]
    # (Fisher's test is symmetric under transposition; Boschloo's is not)
    table = np.array([[x1, x2], [n1 - x1, n2 - x2]])
    p_f = float(stats.fisher_exact(table, alternative="two-sided").pvalue)
    note = ""
    if max(n1, n2) <= boschloo_max_n:
        if (x1 + x2) in (0, n1 + n2):
            p_b = 1.0  # no successes or no failures at all: tables are all alike
        else:
            p_b = float(stats.boschloo_exact(table, alternative="two-sided").pvalue)
            p_b = min(p_b, 1.0)
    else:
        p_b = math.nan
        note = f"Boschloo not computed: a total exceeds boschloo_max_n={boschloo_max_n}"
    return CountsTestResult(p_fisher=min(p_f, 1.0), p_boschloo=p_b, note=note)


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values; NaN entries are left out and stay NaN
    (`benchreport.stats.multiplicity.adjust(p, "holm")`, statsmodels ``multipletests``).

    References
    ----------
    Holm, S. (1979), A simple sequentially rejective multiple test procedure,
    Scand J Statist 6, 65-70.
    """
    return adjust(p_values, "holm")
