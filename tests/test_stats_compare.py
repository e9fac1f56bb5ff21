"""comparisons(): ratio CIs against scipy and the verdict rules, direction aware."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.stats import (COMPARISON_COLUMNS, COMPARISON_EXTRA_COLUMNS, comparisons, request_metrics,
                            verdict)
from analysis.thresholds import DEFAULT

try:
    from tests.stats_fixtures import (measurement, measurements_frame, requests_frame, seats_frame,
                                      simulated_requests)
except ImportError:
    from stats_fixtures import (measurement, measurements_frame, requests_frame, seats_frame,
                                simulated_requests)

DAY = "2026-09-10"
NB = 2000
SEATS = seats_frame({"inc": "incumbent", "new": "candidate", "ref": "reference"})


def _req(seat, passes, n, seed=0, date=DAY, **kw):
    rng = np.random.default_rng(seed)
    out = []
    for p in passes:
        out += simulated_requests(rng, seat, date, p, n=n, **kw)
    return out


def _row(df, **key):
    sel = np.ones(len(df), dtype=bool)
    for k, v in key.items():
        sel &= (df[k] == v).fillna(False).to_numpy()
    assert sel.sum() == 1, f"{key}: {sel.sum()} rows"
    return df[sel].iloc[0]


@pytest.mark.parametrize("low,high,hib,expected", [
    (1.05, 1.20, True, "better"), (1.05, 1.20, False, "worse"),
    (0.80, 0.95, True, "worse"), (0.80, 0.95, False, "better"),
    (0.99, 1.015, True, "within_noise"), (0.985, 1.01, False, "within_noise"),
    (1.005, 1.015, True, "within_noise"),       # significant but inside the noise band
    (0.95, 1.10, True, "insufficient_data"), (0.97, 1.03, False, "insufficient_data"),
    (np.nan, np.nan, True, "insufficient_data"),
])
def test_verdict(low, high, hib, expected):
    assert verdict(low, high, higher_is_better=hib, noise=0.02) == expected


def test_columns_and_baseline_from_the_incumbent_role():
    req = requests_frame(_req("inc", [1], 60, seed=1) + _req("new", [1], 60, seed=2, ttft_median=30))
    out = comparisons(None, req, SEATS, n_resamples=NB)
    assert list(out.columns) == COMPARISON_COLUMNS + COMPARISON_EXTRA_COLUMNS
    assert set(out["baseline"]) == {"inc"} and set(out["candidate"]) == {"new"}
    assert set(out["kind"]) == {"baseline"}


def test_request_ratio_ci_agrees_with_scipy_two_sample_bootstrap_and_direction():
    req = requests_frame(_req("inc", [1], 150, seed=1) + _req("new", [1], 120, seed=2, ttft_median=30.0))
    out = comparisons(None, req, SEATS)
    row = _row(out, metric="ttft_ms", statistic="mean")
    assert row["ci_method"] == "bootstrap BCa ratio over requests"
    rm = request_metrics(req)
    b = rm.loc[rm["seat"] == "inc", "ttft_ms"].to_numpy()
    c = rm.loc[rm["seat"] == "new", "ttft_ms"].to_numpy()
    assert row["ratio"] == pytest.approx(c.mean() / b.mean(), rel=1e-12)
    refs = np.array([[r.confidence_interval.low, r.confidence_interval.high] for r in
                     (stats.bootstrap((b, c), lambda x, y, axis=-1: np.mean(y, axis=axis) / np.mean(x, axis=axis),
                                      method="BCa", n_resamples=10000, rng=i) for i in range(3))])
    width = refs[:, 1].mean() - refs[:, 0].mean()
    assert abs(row["ci_low"] - refs[:, 0].mean()) < 0.05 * width
    assert abs(row["ci_high"] - refs[:, 1].mean()) < 0.05 * width
    assert row["verdict"] == "better"  # 25% lower TTFT is better
    assert row["ci_level"] == 0.95 and row["n_baseline"] == 150 and row["n_candidate"] == 120


def test_pass_level_ratio_is_welch_on_log_pass_values():
    vb, vc = [880.0, 905.0, 897.0], [950.0, 990.0, 941.0, 968.0]
    ms = measurements_frame([measurement("inc", DAY, p + 1, "decode", "output_tok_s", v, concurrency=16)
                             for p, v in enumerate(vb)] +
                            [measurement("new", DAY, p + 1, "decode", "output_tok_s", v, concurrency=16)
                             for p, v in enumerate(vc)])
    row = _row(comparisons(ms, None, SEATS), metric="output_tok_s")
    ref = stats.ttest_ind(np.log(vc), np.log(vb), equal_var=False).confidence_interval(0.95)
    assert row["ci_method"] == "Welch t on log pass values"
    assert row["ratio"] == pytest.approx(stats.gmean(vc) / stats.gmean(vb), rel=1e-12)
    assert row["ci_low"] == pytest.approx(np.exp(ref.low)) and row["ci_high"] == pytest.approx(np.exp(ref.high))
    assert row["verdict"] == "better"
    assert row["baseline_estimate"] == pytest.approx(np.mean(vb))


def test_within_noise_for_a_tight_ci_near_one():
    vb = 1000.0 + np.array([-1.0, 0.0, 1.0, 0.5, -0.5])
    ms = measurements_frame([measurement(s, DAY, p + 1, "decode", "output_tok_s", v * f, concurrency=1)
                             for s, f in (("inc", 1.0), ("new", 1.005)) for p, v in enumerate(vb)])
    assert _row(comparisons(ms, None, SEATS), metric="output_tok_s")["verdict"] == "within_noise"


def test_insufficient_data_says_why():
    ms = measurements_frame([
        measurement("inc", DAY, 1, "decode", "output_tok_s", 900.0, concurrency=16),
        measurement("new", DAY, 1, "decode", "output_tok_s", 990.0, concurrency=16),
        measurement("inc", DAY, 1, "prefill", "prefill_tok_s", 7000.0),
        measurement("inc", DAY, 2, "prefill", "prefill_tok_s", 7100.0),
        measurement("new", DAY, 1, "prefill", "prefill_tok_s", 7400.0),
    ])
    out = comparisons(ms, None, SEATS)
    one = _row(out, metric="output_tok_s")
    assert one["verdict"] == "insufficient_data" and pd.isna(one["ci_low"])
    assert one["ci_method"] == "none: baseline single pass; candidate single pass"
    assert one["ratio"] == pytest.approx(1.1)
    two = _row(out, metric="prefill_tok_s")
    assert "two passes" in two["ci_method"] and two["verdict"] == "insufficient_data"


def test_published_cis_use_fieller():
    ms = measurements_frame([
        measurement("inc", DAY, 1, "prefill", "prefill_tok_s", 7412.0, ci_low=7000.0, ci_high=7824.0, ci_level=0.95),
        measurement("new", DAY, 1, "prefill", "prefill_tok_s", 8000.0, ci_low=7900.0, ci_high=8100.0, ci_level=0.95),
    ])
    row = _row(comparisons(ms, None, SEATS), metric="prefill_tok_s")
    assert row["ci_method"] == "Fieller (normal, SE from published CI)"
    z = stats.norm.ppf(0.975)
    sb, sc = 412.0 / z, 100.0 / z
    grid = np.linspace(0.9, 1.3, 200001)
    ok = np.abs(8000.0 - grid * 7412.0) / np.sqrt(sc ** 2 + grid ** 2 * sb ** 2) <= z
    assert row["ci_low"] == pytest.approx(grid[ok].min(), abs=5e-6)
    assert row["ci_high"] == pytest.approx(grid[ok].max(), abs=5e-6)


def test_history_rows_compare_each_earlier_date_with_the_latest():
    req = requests_frame(_req("inc", [1], 80, seed=1, date="2026-08-01", ttft_median=50.0)
                         + _req("inc", [1], 80, seed=2, date="2026-08-20")
                         + _req("inc", [1], 80, seed=3, date=DAY, ttft_median=40.0))
    out = comparisons(None, req, SEATS, n_resamples=NB)
    hist = out[(out["kind"] == "history") & (out["metric"] == "ttft_ms") & (out["statistic"] == "mean")]
    assert list(hist["baseline_date"]) == ["2026-08-01", "2026-08-20"]
    assert set(hist["candidate_date"]) == {DAY} and set(hist["candidate"]) == {"inc"}
    assert hist.iloc[0]["verdict"] == "better"
    assert not (out["kind"] == "baseline").any()  # only one seat


def test_no_incumbent_no_baseline_rows_and_explicit_baseline():
    req = requests_frame(_req("a", [1], 40, seed=1) + _req("b", [1], 40, seed=2))
    seats = seats_frame({"a": "candidate", "b": "candidate"})
    assert len(comparisons(None, req, seats, n_resamples=NB)) == 0
    out = comparisons(None, req, seats, baseline="b", n_resamples=NB)
    assert set(out["baseline"]) == {"b"} and set(out["candidate"]) == {"a"}
    with pytest.raises(ValueError, match="baseline"):
        comparisons(None, req, seats, baseline="zzz")


def test_a_third_seat_does_not_change_a_comparison():
    two = _req("inc", [1], 60, seed=1) + _req("new", [1], 60, seed=2)
    a = comparisons(None, requests_frame(two), SEATS, n_resamples=NB)
    b = comparisons(None, requests_frame(two + _req("ref", [1], 60, seed=3)), SEATS, n_resamples=NB)
    b = b[b["candidate"] == "new"].reset_index(drop=True)
    assert a.to_csv(index=False) == b.to_csv(index=False)


def test_mixed_designs_are_not_compared():
    req = requests_frame(_req("inc", [1], 60, seed=1) + _req("new", [1, 2, 3], 60, seed=2))
    row = _row(comparisons(None, req, SEATS, n_resamples=NB), metric="ttft_ms", statistic="mean")
    assert row["verdict"] == "insufficient_data" and row["ci_method"].startswith("none: not comparable")


def test_min_obs_threshold_is_respected():
    req = requests_frame(_req("inc", [1], 30, seed=1) + _req("new", [1], 30, seed=2))
    out = comparisons(None, req, SEATS, thresholds=DEFAULT.replace(min_obs=40), n_resamples=NB)
    p50 = _row(out, metric="ttft_ms", statistic="p50")
    assert p50["ci_method"] == "none: baseline n < 40; candidate n < 40"
