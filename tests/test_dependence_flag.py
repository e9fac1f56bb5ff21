"""sample.correlated_requests as one family-wise rule (issue 30): a one-sided Ljung-Box test at
lag 1 per pass and metric, Holm's step-down over a seat's passes of one date, r_1 above
lag1_limit. Checked against statsmodels, and through the CLI on request-level native runs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.diagnostic import acorr_ljungbox
from statsmodels.stats.multitest import multipletests
from statsmodels.tsa.stattools import acf

from benchreport.cli import main
from benchreport.flags import rules as R
from benchreport.stats.within import dependent_passes, lag1_autocorrelation, lag1_pvalue
from benchreport.thresholds import DEFAULT

from request_runs import ar1, request_records, request_run, write_request_runs


@pytest.mark.parametrize("seed,rho,n", [(0, 0.0, 30), (1, 0.4, 30), (2, -0.3, 200), (3, 0.1, 500), (4, 0.6, 15)])
def test_lag1_pvalue_is_one_sided_ljung_box(seed, rho, n):
    x = ar1(np.random.default_rng(seed), rho, n)
    r1 = lag1_autocorrelation(x)
    assert r1 == pytest.approx(acf(x, nlags=1)[1])
    lb = float(acorr_ljungbox(x, lags=[1])["lb_pvalue"].iloc[0])
    expected = lb / 2 if r1 > 0 else 1 - lb / 2
    assert lag1_pvalue(r1, n) == pytest.approx(expected, rel=1e-9)


def test_lag1_pvalue_degenerate():
    assert np.isnan(lag1_pvalue(0.5, 2)) and np.isnan(lag1_pvalue(float("nan"), 100))


def _family(rng, m):
    r1 = rng.uniform(-0.1, 0.7, m)
    n = rng.integers(10, 300, m)
    return r1, n


def test_dependent_passes_is_holm_within_seat_and_date():
    rng = np.random.default_rng(5)
    seat = ["a"] * 8 + ["b"] * 8 + ["a"] * 4
    date = ["d1"] * 16 + ["d2"] * 4
    r1, n = _family(rng, 20)
    stat = ["mean"] * 20
    got = dependent_passes(seat, date, stat, r1, n, alpha=0.05, lag1_limit=0.3)
    p = np.array([lag1_pvalue(a, b) for a, b in zip(r1, n)])
    want = np.zeros(20, dtype=bool)
    for idx in (np.arange(8), np.arange(8, 16), np.arange(16, 20)):
        want[idx] = multipletests(p[idx], alpha=0.05, method="holm")[0] & (r1[idx] > 0.3)
    assert (got == want).all() and got.any() and not got.all()


def test_dependent_passes_needs_the_size_that_matters_and_tests_means_only():
    # r_1 = 0.2 over 10,000 requests is certain but leaves most of the observations: not flagged
    assert not dependent_passes(["a"], ["d"], ["mean"], [0.2], [10_000], alpha=0.05, lag1_limit=0.3).any()
    assert dependent_passes(["a"], ["d"], ["mean"], [0.5], [200], alpha=0.05, lag1_limit=0.3).all()
    assert not dependent_passes(["a"], ["d"], ["p90"], [0.5], [200], alpha=0.05, lag1_limit=0.3).any()
    # 0.35 from 30 requests: p = 0.022 alone is significant, not among 12 tests (Holm: 0.05/12)
    one = dependent_passes(["a"], ["d"], ["mean"], [0.35], [30], alpha=0.05, lag1_limit=0.3)
    twelve = dependent_passes(
        ["a"] * 12, ["d"] * 12, ["mean"] * 12, [0.35] + [0.0] * 11, [30] * 12, alpha=0.05, lag1_limit=0.3
    )
    assert one.all() and not twelve.any()


def test_rule_reads_a_stores_decision_column():
    passes = pd.DataFrame(
        {
            "seat": ["a", "a"],
            "date": ["d", "d"],
            "statistic": ["mean", "mean"],
            "lag1": [0.9, 0.9],
            "n_obs": [200, 200],
            "workload": ["decode"] * 2,
            "concurrency": [1, 1],
            "metric": ["ttft_ms", "e2e_latency_ms"],
            "pass": [1, 1],
        }
    )
    assert len(R.correlated_requests(passes, thresholds=DEFAULT)[0].cells) == 2
    passes["lag1_dependent"] = [True, False]
    assert len(R.correlated_requests(passes, thresholds=DEFAULT)[0].cells) == 1


def _fleet(tmp_path, *, seats, n, rho, seed, date="2026-12-01", passes=3):
    rng = np.random.default_rng(seed)
    runs = [
        request_run(
            f"s{s:02d}", p, request_records(rng, n, rho=rho), date=date, role="incumbent" if s == 0 else "candidate"
        )
        for s in range(seats)
        for p in range(1, passes + 1)
    ]
    return write_request_runs(tmp_path / "runs", runs)


def _analyse(folder, out, *extra):
    assert main(["analyse", str(folder), "--out", str(out), "--quiet", *extra]) == 0
    flags = json.loads((out / "flags.json").read_text())
    return [f for f in flags if f["code"] == "sample.correlated_requests"], pd.read_csv(out / "tables" / "passes.csv")


def test_cli_independent_short_passes_no_longer_flag_most_seats(tmp_path):
    # 10 seats x 3 passes x 30 independent requests: r_1 > 0.3 by chance on several seats
    flagged, passes = _analyse(_fleet(tmp_path, seats=10, n=30, rho=0.0, seed=11), tmp_path / "out")
    before = set(passes[(passes["statistic"] == "mean") & (passes["lag1"] > 0.3)]["seat"])
    assert len(before) >= 3  # what the rule before issue 30 flagged
    assert len(flagged) <= 1


def test_cli_correlated_requests_still_flagged(tmp_path):
    flagged, _ = _analyse(_fleet(tmp_path, seats=4, n=200, rho=0.5, seed=12), tmp_path / "out")
    assert sorted(s for f in flagged for s in f["seats"]) == ["s00", "s01", "s02", "s03"]
    ev = flagged[0]["evidence"]
    assert ev["thresholds"] == {"lag1_limit": 0.3, "alpha": 0.05}
    assert all(c["lag1"] > 0.3 and c["p_value"] < 0.05 / 12 for c in ev["cells"])


def test_cli_alpha_governs_the_family_rule(tmp_path):
    folder = _fleet(tmp_path, seats=6, n=40, rho=0.35, seed=13)
    strict, _ = _analyse(folder, tmp_path / "a", "--alpha", "1e-6")
    loose, _ = _analyse(folder, tmp_path / "b", "--alpha", "0.2")
    assert len(strict) < len(loose)


def test_store_decides_as_a_folder_does(tmp_path):
    from benchreport.pipeline import Options, analyse_store
    from benchreport.store import Store, ingest

    rng = np.random.default_rng(14)
    runs = [
        request_run(f"s{s}", p, request_records(rng, 60, rho=rho), date=d)
        for d in ("2026-11-01", "2026-11-02")
        for s, rho in ((0, 0.0), (1, 0.6), (2, 0.3))
        for p in (1, 2, 3)
    ]
    folder = write_request_runs(tmp_path / "runs", runs)
    ingest([folder], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    opts = Options(n_boot=200)

    def corr(a):
        return [f for f in a.flags_records() if f["code"] == "sample.correlated_requests"]

    full = corr(analyse_store(store, opts, cache=False))
    assert corr(analyse_store(store, opts)) == full  # cold: each date decided as it is read
    assert corr(analyse_store(store, opts)) == full  # warm: read back from the index
    assert "s1" in {s for f in full for s in f["seats"]}


def test_lag1_pvalues_are_the_scalar_tests_bit_for_bit():
    """The test of a fleet's passes is made on arrays (millions a year); each p-value must be the
    bits of the one-value formula through scipy's normal tail, edge cases included."""
    import math

    from scipy.stats import norm

    from benchreport.stats.within import lag1_pvalues

    def scalar(r1, n):  # the formula as written before it was made an array's
        if not (n >= 3) or math.isnan(r1):
            return math.nan
        q = n * (n + 2.0) * r1 * r1 / (n - 1.0)
        return float(norm.sf(math.copysign(math.sqrt(q), r1)))

    rng = np.random.default_rng(11)
    r1 = np.concatenate([rng.uniform(-1, 1, 5000), [0.0, -0.0, 1.0, -1.0, np.nan, 0.3, 0.9999]])
    n = np.concatenate([rng.integers(3, 100_000, 5000).astype(float), [3.0, 50.0, 7.0, 7.0, 100.0, 2.0, 1e9]])
    got = lag1_pvalues(r1, n)
    want = np.array([scalar(a, b) for a, b in zip(r1.tolist(), n.tolist())])
    assert np.array_equal(got, want, equal_nan=True)
    assert all(g.hex() == w.hex() for g, w in zip(got.tolist(), want.tolist()) if not math.isnan(w))
