"""Closed-form and score intervals against published values and independent implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats.proportion import confint_proportions_2indep

from benchreport.stats import (
    clopper_pearson,
    fieller_ratio,
    newcombe_difference,
    newcombe_paired_difference,
    t_interval,
    tango_paired_difference,
    welch_log_ratio,
    wilson,
)

GRID = [(0, 1), (0, 10), (1, 10), (5, 10), (10, 10), (153, 164), (154, 164), (3, 1319), (1300, 1319)]


def test_wilson_published_value_153_of_164():
    lo, hi = wilson(153, 164)
    assert lo == pytest.approx(0.883899, abs=1e-6)
    assert hi == pytest.approx(0.962138, abs=1e-6)


# Newcombe (1998) Stat Med 17:857, Table I: methods 3 (Wilson) and 5 (Clopper-Pearson), 95%
NEWCOMBE_TABLE_I = [
    (81, 263, (0.2553, 0.3662), (0.2527, 0.3676)),
    (15, 148, (0.0624, 0.1605), (0.0578, 0.1617)),
    (0, 20, (0.0, 0.1611), (0.0, 0.1684)),
    (1, 29, (0.0061, 0.1718), (0.0009, 0.1776)),
    (29, 29, (0.8830, 1.0), (0.8806, 1.0)),
]


@pytest.mark.parametrize("x,n,wilson_ci,exact_ci", NEWCOMBE_TABLE_I)
def test_single_proportion_intervals_published_values(x, n, wilson_ci, exact_ci):
    assert np.round(wilson(x, n), 4).tolist() == list(wilson_ci)
    assert np.round(clopper_pearson(x, n), 4).tolist() == list(exact_ci)


def _wilson_closed_form(x, n, level):
    """Wilson (1927): the roots of |p - x/n| = z sqrt(p (1 - p) / n), solved by hand."""
    z = stats.norm.ppf(0.5 + level / 2)
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (0.0 if x == 0 else centre - half), (1.0 if x == n else centre + half)


def _clopper_pearson_by_root(x, n, level):
    """Clopper & Pearson (1934) as defined: the p where a binomial tail equals (1 - level)/2."""
    a = (1 - level) / 2
    lo = 0.0 if x == 0 else optimize.brentq(lambda p: stats.binom.sf(x - 1, n, p) - a, 1e-15, 1, xtol=1e-15)
    hi = 1.0 if x == n else optimize.brentq(lambda p: stats.binom.cdf(x, n, p) - a, 0, 1 - 1e-15, xtol=1e-15)
    return lo, hi


@pytest.mark.parametrize("x,n", GRID)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_wilson_equals_the_closed_form(x, n, level):
    np.testing.assert_allclose(wilson(x, n, level=level), _wilson_closed_form(x, n, level), rtol=0, atol=1e-12)


@pytest.mark.parametrize("x,n", GRID)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_clopper_pearson_equals_the_binomial_tail_roots(x, n, level):
    np.testing.assert_allclose(
        clopper_pearson(x, n, level=level), _clopper_pearson_by_root(x, n, level), rtol=0, atol=1e-9
    )


def test_clopper_pearson_textbook_values():
    # Fagerland, Lydersen & Laake (2017) ch. 2 (contingencytables tests): 13/16 -> 0.5435 to 0.9595,
    # 10/10 -> 0.6915 to 1, 0/10 -> 0 to 0.3085
    assert np.round(clopper_pearson(13, 16), 4).tolist() == [0.5435, 0.9595]
    assert np.round(clopper_pearson(10, 10), 4).tolist() == [0.6915, 1.0]
    assert np.round(clopper_pearson(0, 10), 4).tolist() == [0.0, 0.3085]


def test_newcombe_hybrid_published_example():
    # Newcombe (1998) Stat Med 17:873, Table II, method 10: 56/70 - 48/80 -> 0.0524 to 0.3339
    r = newcombe_difference(48, 80, 56, 70)  # second minus first
    assert r.estimate == pytest.approx(0.2)
    assert round(r.low, 4) == 0.0524 and round(r.high, 4) == 0.3339


@pytest.mark.parametrize(
    "x1,n1,x2,n2",
    [
        (9, 10, 3, 10),
        (5, 56, 0, 29),
        (0, 10, 0, 20),
        (0, 10, 0, 10),
        (10, 10, 0, 20),
        (10, 10, 0, 10),
        (153, 164, 154, 164),
    ],
)
def test_newcombe_hybrid_equals_statsmodels_newcomb(x1, n1, x2, n2):
    # statsmodels' 'newcomb' (not its 'score', which is known to be wrong in 0.15)
    ref = confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff")
    r = newcombe_difference(x2, n2, x1, n1)
    np.testing.assert_allclose([r.low, r.high], ref, atol=1e-12)


def test_tango_published_example_cavo_2012():
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8
    # (Cavo et al. 2012: n11=59, n12=6, n21=16, n22=80): delta = -0.0621, 95% CI -0.1240 to -0.0054.
    # In our labels the first seat got 16 items the second missed, the second 6 the first missed.
    r = tango_paired_difference(16, 6, 161)
    assert round(r.estimate, 4) == -0.0621
    assert round(r.low, 4) == -0.1240 and round(r.high, 4) == -0.0054


def _brute_force_tango(b, c, n, level=0.95):
    """Independent inversion of Tango's score test: the nuisance parameter is found by
    numerically maximising the constrained multinomial likelihood (no closed form), and the
    interval by scanning a fine grid, then polishing the ends with brentq."""
    z = stats.norm.ppf(0.5 + level / 2)
    m = n - b - c

    def score(delta):
        # P(second only) = q + delta, P(first only) = q, concordant = 1 - 2q - delta
        lo_q, hi_q = max(0.0, -delta), (1.0 - delta) / 2.0
        if hi_q - lo_q < 1e-15:
            q = lo_q
        else:

            def nll(q):
                t = [(c, q + delta), (b, q), (m, 1 - 2 * q - delta)]
                return -sum(k * math.log(p) for k, p in t if k > 0 and p > 0) + (
                    1e300 if any(k > 0 and p <= 0 for k, p in t) else 0.0
                )

            res = optimize.minimize_scalar(
                nll, bounds=(lo_q + 1e-13, hi_q - 1e-13), method="bounded", options={"xatol": 1e-14}
            )
            q = res.x
        var = n * (2 * q + delta * (1 - delta))
        return (c - b - n * delta) / math.sqrt(var) if var > 0 else math.copysign(math.inf, c - b - n * delta)

    grid = np.linspace(-0.999999, 0.999999, 1001)
    inside = [d for d in grid if abs(score(d)) <= z]
    lo, hi = min(inside), max(inside)
    step = grid[1] - grid[0]
    lo = optimize.brentq(lambda d: score(d) - z, max(lo - step, -0.999999), lo)
    hi = optimize.brentq(lambda d: score(d) + z, hi, min(hi + step, 0.999999))
    return lo, hi


@pytest.mark.parametrize(
    "b,c,n", [(16, 6, 161), (0, 1, 164), (5, 6, 164), (3, 10, 40), (40, 20, 160), (1, 7, 50), (0, 5, 25), (12, 2, 26)]
)
def test_tango_equals_brute_force_inversion(b, c, n):
    r = tango_paired_difference(b, c, n)
    lo, hi = _brute_force_tango(b, c, n)
    assert r.low == pytest.approx(lo, abs=2e-6)
    assert r.high == pytest.approx(hi, abs=2e-6)


def test_tango_mirror_and_boundaries():
    r = tango_paired_difference(3, 10, 60)
    m = tango_paired_difference(10, 3, 60)
    assert m.low == pytest.approx(-r.high, abs=1e-12) and m.high == pytest.approx(-r.low, abs=1e-12)
    z = tango_paired_difference(0, 0, 100)
    assert z.low == pytest.approx(-z.high, abs=1e-12) and z.low < 0 < z.high
    assert tango_paired_difference(50, 0, 50).low == -1.0
    assert tango_paired_difference(0, 50, 50).high == 1.0


def test_newcombe_paired_published_example_cavo_2012():
    # Fagerland, Lydersen & Laake (2017) ch. 8: Newcombe square-and-add -0.1186 to -0.0046
    r = newcombe_paired_difference(59, 16, 6, 80)
    assert round(r.estimate, 4) == -0.0621
    assert round(r.low, 4) == -0.1186 and round(r.high, 4) == -0.0046


@pytest.mark.parametrize("n", [2, 3, 5, 20])
def test_t_interval_equals_scipy(n):
    x = np.random.default_rng(n).normal(50, 5, n)
    r = t_interval(x, level=0.9)
    ref = stats.ttest_1samp(x, 0.0).confidence_interval(0.9)
    np.testing.assert_allclose([r.low, r.high], [ref.low, ref.high], rtol=1e-12)
    assert r.df == n - 1


def test_welch_log_ratio_equals_scipy_on_logs():
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(4, 0.1, 4), rng.lognormal(4.2, 0.2, 6)
    r = welch_log_ratio(a, b, level=0.95)
    ref = stats.ttest_ind(np.log(b), np.log(a), equal_var=False).confidence_interval(0.95)
    np.testing.assert_allclose([r.low, r.high], np.exp([ref.low, ref.high]), rtol=1e-12)
    assert r.estimate == pytest.approx(stats.gmean(b) / stats.gmean(a), rel=1e-12)


def test_fieller_equals_brute_force_inversion():
    num, s_num, den, s_den = 8000.0, 51.0, 7412.0, 204.0
    r = fieller_ratio(num, s_num, den, s_den, level=0.95)
    z = stats.norm.ppf(0.975)
    grid = np.linspace(0.9, 1.3, 400001)
    ok = np.abs(num - grid * den) / np.sqrt(s_num**2 + grid**2 * s_den**2) <= z
    assert r.low == pytest.approx(grid[ok].min(), abs=2e-6)
    assert r.high == pytest.approx(grid[ok].max(), abs=2e-6)


def test_fieller_unbounded_when_denominator_not_significant():
    r = fieller_ratio(10.0, 1.0, 1.0, 1.0)
    assert math.isnan(r.low) and "unbounded" in r.note


def test_invalid_inputs_raise_value_error_naming_the_argument():
    with pytest.raises(ValueError, match="x"):
        wilson(11, 10)
    with pytest.raises(ValueError, match="n"):
        wilson(0, 0)
    with pytest.raises(ValueError, match="level"):
        clopper_pearson(1, 10, level=95)
    with pytest.raises(ValueError, match="values"):
        t_interval([1.0])
    with pytest.raises(ValueError, match="exceed"):
        tango_paired_difference(6, 6, 10)
