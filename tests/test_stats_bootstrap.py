"""The bootstrap engine against scipy.stats.bootstrap and brute force.

Agreement with scipy is judged against Monte-Carlo error: both engines are run
R = 8 times with different seeds and the mean endpoints compared with a
two-sample t statistic (pooled spread of the 2R runs, 2R - 2 = 14 df). The
critical value is t_14 at two-sided 1e-4 (about 5.4), so that a correct engine
fails none of the ~200 endpoint comparisons by chance (family-wise < 2%),
while a systematic shift of about three Monte-Carlo SDs of a single run (a few
percent of the CI width) is still caught. Seeds are fixed, so the outcome is
deterministic.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

from benchreport.stats import bootstrap_ci, bootstrap_group, jackknife_values
from benchreport.stats.common import key_rng, quantile_sorted
from benchreport.stats.bootstrap import DegenerateDataWarning

R = 8
B = 4000
CRIT = float(stats.t.ppf(1 - 1e-4 / 2, 2 * R - 2))


def _scipy_stat(statistic):
    if statistic == "mean":
        return np.mean
    q = {"p50": 0.5, "p90": 0.9, "p95": 0.95, "p99": 0.99}[statistic]
    return lambda x, axis=-1: np.quantile(x, q, axis=axis)


def _data(kind, n, seed):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.normal(100.0, 15.0, n)
    if kind == "lognormal":
        return rng.lognormal(3.5, 0.6, n)
    # skewed latencies: a lognormal body and a 10% slow tail (queueing), in ms
    body = rng.lognormal(np.log(40.0), 0.25, n)
    slow = rng.random(n) < 0.1
    return np.where(slow, body * rng.uniform(2.0, 6.0, n), body)


def _agree(ours: np.ndarray, theirs: np.ndarray, what: str):
    """ours, theirs: (R, 2) endpoints from R seeds each."""
    pooled_sd = np.sqrt((ours.var(axis=0, ddof=1) + theirs.var(axis=0, ddof=1)) / 2.0)
    se_diff = pooled_sd * np.sqrt(2.0 / R)
    diff = np.abs(ours.mean(axis=0) - theirs.mean(axis=0))
    # tiny absolute floor for cases where both engines hit the same order statistic every time
    tol = CRIT * se_diff + 1e-9 * np.abs(theirs.mean(axis=0))
    assert np.all(diff <= tol), f"{what}: ours {ours.mean(0)}, scipy {theirs.mean(0)}, tol {tol}"


CASES = [
    (kind, n, stat)
    for kind in ("normal", "lognormal", "skewed")
    for n, stat in (
        (20, "mean"),
        (20, "p50"),
        (50, "mean"),
        (50, "p50"),
        (50, "p90"),
        (200, "mean"),
        (200, "p90"),
        (200, "p95"),
    )
]


@pytest.mark.parametrize("method", ["BCa", "percentile"])
@pytest.mark.parametrize("kind,n,stat", CASES)
def test_agrees_with_scipy_within_monte_carlo_error(kind, n, stat, method):
    x = _data(kind, n, seed=n + 1000 * ("normal", "lognormal", "skewed").index(kind))
    ours = np.array(
        [[r.low, r.high] for r in (bootstrap_ci(x, stat, method=method, n_resamples=B, rng=100 + i) for i in range(R))]
    )
    theirs = []
    for i in range(R):
        res = stats.bootstrap((x,), _scipy_stat(stat), method=method, n_resamples=B, rng=i)
        theirs.append([res.confidence_interval.low, res.confidence_interval.high])
    _agree(ours, np.array(theirs), f"{kind} n={n} {stat} {method}")


def test_standard_error_agrees_with_scipy():
    x = _data("lognormal", 100, 3)
    ours = np.mean([bootstrap_ci(x, "p50", n_resamples=B, rng=i).standard_error for i in range(R)])
    theirs = np.mean([stats.bootstrap((x,), _scipy_stat("p50"), n_resamples=B, rng=i).standard_error for i in range(R)])
    assert abs(ours - theirs) / theirs < 0.05


@pytest.mark.parametrize("n", [2, 3, 7, 20, 101])
@pytest.mark.parametrize("q", [None, 0.5, 0.9, 0.95, 0.99, 0.37])
def test_jackknife_closed_form_equals_brute_force(n, q):
    x = np.sort(np.random.default_rng(n).gamma(2.0, 3.0, n))
    brute = np.array([np.mean(np.delete(x, i)) if q is None else np.quantile(np.delete(x, i), q) for i in range(n)])
    np.testing.assert_allclose(jackknife_values(x, q), brute, rtol=1e-13, atol=0)


def test_jackknife_with_ties_equals_brute_force():
    x = np.sort(np.round(np.random.default_rng(5).normal(35, 2, 60)))
    for q in (0.5, 0.9, 0.99):
        brute = np.array([np.quantile(np.delete(x, i), q) for i in range(x.size)])
        np.testing.assert_array_equal(jackknife_values(x, q), brute)


@pytest.mark.parametrize("n", [1, 2, 5, 20, 199, 1000])
def test_quantiles_are_numpys_linear_definition_bit_for_bit(n):
    x = np.random.default_rng(n).lognormal(0, 1, n)
    xs = np.sort(x)
    for q in (0.5, 0.9, 0.95, 0.99, 0.123):
        assert quantile_sorted(xs, q) == np.quantile(x, q)
    if n >= 2:
        g = bootstrap_group(x, ("mean", "p50", "p90", "p95", "p99"), n_resamples=10, rng=0, warn=False)
        assert g.estimate[0, 1] == np.quantile(x, 0.5)
        assert g.estimate[0, 4] == np.quantile(x, 0.99)
        assert g.estimate[0, 0] == pytest.approx(np.mean(x), rel=1e-15)


def _implied_indices(first_row, n_resamples, seed):
    """The observations each resample holds: the engine draws ranks in the first row's sort
    order (a uniform draw of ranks is a uniform draw of observations)."""
    order = np.argsort(first_row, kind="stable")
    r = np.random.default_rng(seed).integers(0, first_row.size, size=(n_resamples, first_row.size), dtype=np.int16)
    return order[r]


def test_every_row_and_statistic_equals_numpy_on_the_shared_resamples():
    """All metrics (rows) of a group see the same resampled observations, and each resampled
    statistic is exactly numpy's on those observations."""
    x = np.random.default_rng(0).lognormal(0, 0.5, (3, 57))
    names = ("mean", "p50", "p90", "p95")
    g = bootstrap_group(x, names, n_resamples=300, rng=11, keep_distribution=True)
    idx = _implied_indices(x[0], 300, 11)
    for j in range(3):
        xr = x[j][idx]
        np.testing.assert_allclose(g.distributions[j, 0], xr.mean(axis=1), rtol=1e-13)
        for k, q in ((1, 0.5), (2, 0.9), (3, 0.95)):
            np.testing.assert_array_equal(g.distributions[j, k], np.quantile(xr, q, axis=1))


def test_chunking_does_not_change_the_answer_beyond_monte_carlo_error():
    x = _data("skewed", 300, 1)
    big = [bootstrap_ci(x, "p90", n_resamples=B, rng=i) for i in range(R)]
    small = [bootstrap_group(x, ("p90",), n_resamples=B, rng=50 + i, chunk_elements=4096).result() for i in range(R)]
    _agree(np.array([[r.low, r.high] for r in small]), np.array([[r.low, r.high] for r in big]), "chunked")


def test_same_seed_same_answer_and_seed_changes_it():
    x = _data("lognormal", 80, 2)
    a = bootstrap_ci(x, "mean", rng=3)
    b = bootstrap_ci(x, "mean", rng=3)
    c = bootstrap_ci(x, "mean", rng=4)
    assert (a.low, a.high) == (b.low, b.high)
    assert (a.low, a.high) != (c.low, c.high)
    assert key_rng(0, ("s", 1)).integers(1 << 30) == key_rng(0, ("s", 1)).integers(1 << 30)


def test_all_values_equal_bca_is_nan_with_warning_like_scipy():
    x = np.full(30, 12.5)
    with pytest.warns(DegenerateDataWarning):
        res = bootstrap_ci(x, "mean", rng=0)
    assert np.isnan(res.low) and np.isnan(res.high)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = stats.bootstrap((x,), np.mean, method="BCa", n_resamples=1000, rng=0)
    assert np.isnan(ref.confidence_interval.low)


def test_all_values_equal_percentile_is_zero_width_like_scipy():
    x = np.full(30, 12.5)
    res = bootstrap_ci(x, "p50", method="percentile", rng=0)
    ref = stats.bootstrap((x,), np.median, method="percentile", n_resamples=1000, rng=0)
    assert (res.low, res.high) == (12.5, 12.5) == (ref.confidence_interval.low, ref.confidence_interval.high)


def test_tied_data_fall_back_to_zero_acceleration_instead_of_nan():
    # latencies in whole ms around a median with many ties: the jackknife of the median is flat
    x = np.repeat([34.0, 35.0, 36.0, 37.0], [20, 50, 30, 20])
    assert np.ptp(jackknife_values(x, 0.5)) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = stats.bootstrap((x,), np.median, method="BCa", n_resamples=1000, rng=0)
    assert np.isnan(ref.confidence_interval.low)  # scipy gives up here
    res = bootstrap_ci(x, "p50", rng=0)
    assert res.acceleration == 0.0 and "acceleration set to 0" in res.note
    assert res.low <= 35.0 <= res.high and res.low < res.high


def test_invalid_arguments_raise_value_error_naming_them():
    x = np.arange(10.0)
    with pytest.raises(ValueError, match="method"):
        bootstrap_ci(x, "mean", method="basic-ish")
    with pytest.raises(ValueError, match="statistic"):
        bootstrap_ci(x, "max")
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(x, "mean", n_resamples=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(x, "mean", level=1.5)
    with pytest.raises(ValueError, match="samples"):
        bootstrap_ci([1.0, np.nan, 2.0], "mean")
    with pytest.raises(ValueError, match="samples"):
        bootstrap_ci([1.0], "mean")
    with pytest.raises(ValueError, match="values"):
        bootstrap_group(np.ones((2, 3, 4)), "mean")
    with pytest.raises(ValueError, match="rng"):
        bootstrap_ci(x, "mean", rng="seed")


# --------------------------------------------------------------------------- hierarchical (issue 43)
def test_hierarchical_one_session_is_scipy_bootstrap_on_the_same_draws():
    from benchreport.stats.bootstrap import hierarchical_bootstrap

    x = np.log(np.random.default_rng(5).lognormal(4.0, 0.03, 7))
    for method in ("percentile", "BCa"):
        ours = hierarchical_bootstrap([x], method=method, n_resamples=4000, rng=np.random.default_rng(9))
        ref = stats.bootstrap((x,), np.mean, method=method, n_resamples=4000, rng=np.random.default_rng(9))
        ci = ref.confidence_interval
        assert (ours.low, ours.high) == pytest.approx((ci.low, ci.high), rel=1e-12, abs=1e-12), method
        assert ours.standard_error == pytest.approx(ref.standard_error, rel=1e-12)


def test_hierarchical_two_stage_against_brute_force_and_reproducible():
    from benchreport.stats.bootstrap import hierarchical_bootstrap

    rng = np.random.default_rng(6)
    days = [np.log(rng.lognormal(4.0 + 0.05 * rng.standard_normal(), 0.02, k)) for k in (3, 4, 3, 5)]
    res = hierarchical_bootstrap(days, n_resamples=20000, rng=1)
    again = hierarchical_bootstrap(days, n_resamples=20000, rng=1)
    assert (res.low, res.high) == (again.low, again.high)
    assert res.estimate == pytest.approx(np.mean([d.mean() for d in days]), rel=1e-15)
    # brute force, one resample at a time: dates with replacement, then passes within each
    brute = np.random.default_rng(2)
    dist = []
    for _ in range(20000):
        pick = brute.integers(0, len(days), len(days))
        dist.append(np.mean([days[i][brute.integers(0, len(days[i]), len(days[i]))].mean() for i in pick]))
    lo, hi = np.quantile(dist, [0.025, 0.975])
    half = (hi - lo) / 2
    assert abs(res.low - lo) < 0.05 * half and abs(res.high - hi) < 0.05 * half
    assert res.n == (3, 4, 3, 5) and res.method == "percentile"
