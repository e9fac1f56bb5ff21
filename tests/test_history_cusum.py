"""The CUSUM pieces of the history (benchreport.stats.history_cusum) against published run lengths
(Montgomery, Introduction to Statistical Quality Control, Table 9.3), Page's identity computed
another way, a Monte Carlo run length, scipy's t and normal distributions, and the long-run factor
against statsmodels' `acf` and a known AR(1)'s long-run variance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from benchreport.stats.history_cusum import (
    Reference,
    change_kind,
    cusum_update,
    lag1_autocorrelation,
    long_run_factor,
    reference,
    siegmund_arl,
    standardise,
    threshold_for,
)

# Montgomery (2019), Table 9.3: two-sided tabular CUSUM, k = 1/2, in-control and shifted ARLs
MONTGOMERY = {4: {0.0: 168.0, 0.5: 26.6, 1.0: 8.38, 2.0: 3.34}, 5: {0.0: 465.0, 0.5: 38.0, 1.0: 10.4, 2.0: 4.01}}


def _two_sided(h, k, shift):
    up, down = siegmund_arl(h, k, shift), siegmund_arl(h, k, -shift)
    return 1.0 / (1.0 / up + 1.0 / down)


@pytest.mark.parametrize("h", [4, 5])
def test_siegmund_run_lengths_are_montgomerys_table(h):
    """Within 1% of the table's in-control and small-shift values, 4% at 2 SDs (Siegmund's
    approximation is known to be rougher for large shifts; the table is exact, Brook & Evans 1972)."""
    for shift, arl in MONTGOMERY[h].items():
        assert _two_sided(h, 0.5, shift) == pytest.approx(arl, rel=0.01 if shift <= 1 else 0.04), (h, shift)


def test_the_threshold_inverts_the_run_length():
    for arl in (100.0, 930.0, 20_000.0):
        h = threshold_for(arl, 0.5)
        assert siegmund_arl(h, 0.5) == pytest.approx(arl, rel=1e-6)
    assert threshold_for(2 * 465.0, 0.5) == pytest.approx(5.0, abs=0.02)  # one side of Montgomery's h = 5


def test_the_recursion_is_pages_cumulative_sum_less_its_running_minimum():
    """C+_t = S_t - min(0, S_1..S_t), S_t the sum of (z - k): the CUSUM without its recursion."""
    z = np.random.default_rng(0).standard_t(3, 500)
    zc = np.clip(z, -2.5, 2.5)
    up = down = 0.0
    ups, downs = [], []
    for v in z:
        up, down = cusum_update(up, down, float(v), k=0.5, clip=2.5)
        ups.append(up)
        downs.append(down)
    s_up, s_down = np.cumsum(zc - 0.5), np.cumsum(-zc - 0.5)
    np.testing.assert_allclose(ups, s_up - np.minimum(0, np.minimum.accumulate(s_up)), atol=1e-9)
    np.testing.assert_allclose(downs, s_down - np.minimum(0, np.minimum.accumulate(s_down)), atol=1e-9)


def test_a_monte_carlo_in_control_run_length_matches_the_table():
    """h = 4, k = 1/2 on N(0, 1): the two-sided ARL is 168 (Montgomery); 3,000 runs."""
    rng = np.random.default_rng(1)
    n = 3000
    up, down = np.zeros(n), np.zeros(n)
    alive, length = np.ones(n, dtype=bool), np.zeros(n)
    while alive.any():
        z = rng.standard_normal(n)
        up = np.where(alive, np.maximum(0, up + z - 0.5), up)
        down = np.where(alive, np.maximum(0, down - z - 0.5), down)
        length += alive
        alive &= (up <= 4) & (down <= 4)
    # and the scalar update agrees with the vectorised one on a sample path
    a = b = 0.0
    z = rng.standard_normal(50)
    va = vb = 0.0
    for v in z:
        a, b = cusum_update(a, b, float(v), k=0.5, clip=math.inf)
        va, vb = max(0.0, va + v - 0.5), max(0.0, vb - v - 0.5)
    assert (a, b) == pytest.approx((va, vb))
    se = length.std() / math.sqrt(n)
    assert abs(length.mean() - 168.0) < 4 * se + 5, (length.mean(), se)


def test_the_reference_is_the_winsorised_mean_and_sd():
    x = [0.01, -0.02, 0.005, 0.0, 0.3, -0.01, 0.015, -0.005]  # one far night
    r = reference(x, clip=2.5)
    med = np.median(x)
    mad = 1.4826 * stats.median_abs_deviation(x)  # the published constant (1 / Phi^-1(3/4), 4 digits)
    w = np.clip(x, med - 2.5 * mad, med + 2.5 * mad)
    assert r.mean == pytest.approx(w.mean()) and r.spread == pytest.approx(w.std(ddof=1)) and r.n == 8
    assert reference([0.1]) is None and reference([0.1], borrowed=0.02) == Reference(0.1, 0.02, 1)


def test_standardise_maps_the_t_tail_to_the_normal_tail():
    ref = Reference(0.0, 0.02, 9)
    x = 0.05
    t = x / (0.02 * math.sqrt(1 + 1 / 9))
    assert standardise(x, ref, 8) == pytest.approx(stats.norm.isf(stats.t.sf(t, 8)))
    assert standardise(-x, ref, 8) == pytest.approx(-stats.norm.isf(stats.t.sf(t, 8)))
    assert standardise(x, ref, math.inf) == pytest.approx(t)


def test_a_step_and_a_line_are_told_apart():
    rng = np.random.default_rng(2)
    before = list(rng.normal(0, 0.01, 60))
    step = list(rng.normal(-0.05, 0.01, 8))
    assert change_kind(before, step, direction=-1) == "step"
    line = -0.0006 * np.arange(120) + rng.normal(0, 0.004, 120)
    assert change_kind(list(line[:90]), list(line[90:]), direction=-1) == "drift"
    assert change_kind(before, step[:2], direction=-1) == "step"  # too few nights to say


def test_the_change_start_is_the_maximum_likelihood_split():
    """Pignatiello & Samuel (2001): argmax over j of (n - j) (mean(x[j:]) - level)^2, by brute force."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = np.r_[rng.normal(0, 1, rng.integers(0, 6)), rng.normal(1.5, 1, rng.integers(1, 8))]
        scores = [(len(x) - j) * (x[j:].mean() - 0.0) ** 2 for j in range(len(x))]
        from benchreport.stats.history_cusum import change_start

        assert change_start(list(x), 0.0) == int(np.argmax(scores))


def _ar1(phi: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.normal(0.0, 1.0, n)
    x = np.empty(n)
    x[0] = e[0] / math.sqrt(1 - phi * phi)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return x


@pytest.mark.parametrize("phi, n", [(0.5, 64), (0.0, 40), (-0.4, 30), (0.7, 500)])
def test_the_lag1_autocorrelation_is_statsmodels_acf(phi, n):
    from statsmodels.tsa.stattools import acf

    x = _ar1(phi, n, seed=int(100 * phi) + n + 100)
    r = float(acf(x, nlags=1, fft=False)[1])
    assert lag1_autocorrelation(list(x)) == pytest.approx(r, abs=1e-12)
    clipped = min(0.8, max(0.0, r))
    assert long_run_factor(list(x)) == pytest.approx(math.sqrt((1 + clipped) / (1 - clipped)), abs=1e-12)


def test_the_long_run_factor_is_an_ar1s_long_run_sd():
    """phi 0.5: the long-run variance (the variance of a mean of m nights, times m, as m grows) is
    sigma^2 (1 + phi) / (1 - phi) = 3 sigma^2; measured here by batch means of a long series
    (Kim et al. 2007), independent of the factor's formula."""
    x = _ar1(0.5, 200_000, seed=5)
    batch = 400  # batches of 400 nights: the correlation's reach (a few nights) is negligible
    means = x.reshape(-1, batch).mean(axis=1)
    long_run_var = batch * means.var(ddof=1)
    assert long_run_var / x.var(ddof=1) == pytest.approx(3.0, rel=0.08)
    assert long_run_factor(list(x)) ** 2 == pytest.approx(long_run_var / x.var(ddof=1), rel=0.08)


def test_the_long_run_factor_is_one_for_short_or_alternating_nights_and_at_most_three():
    x = list(_ar1(0.9, 15, seed=1))
    assert long_run_factor(x) == 1.0  # fewer than 16 nights
    assert long_run_factor(x + x[:1]) > 1.0  # 16 nights
    alternating = [(-1.0) ** i for i in range(40)]  # r near -1: not taken to cancel
    assert long_run_factor(alternating) == 1.0
    assert long_run_factor(list(_ar1(0.98, 400, seed=2))) == pytest.approx(3.0)  # r clipped at 0.8
    assert lag1_autocorrelation([1.0, 1.0, 1.0]) == 0.0


def test_the_reference_carries_the_long_run_factor_and_the_cusum_uses_it():
    x = list(_ar1(0.5, 64, seed=3) * 0.01)
    r = reference(x, clip=10.0)  # nothing winsorised
    assert r.long_run == pytest.approx(long_run_factor(x)) and r.long_run > 1.2
    plain = Reference(r.mean, r.spread, r.n)
    night = r.mean + 3 * r.spread
    assert standardise(night, r, math.inf) == pytest.approx(standardise(night, plain, math.inf) / r.long_run)
    assert reference(x[:3], borrowed=0.01, borrowed_long_run=1.7).long_run == 1.7
