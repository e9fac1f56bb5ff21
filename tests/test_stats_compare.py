"""comparisons(): ratio CIs and p-values against scipy, the verdict rules, multiplicity, primary cells."""

from __future__ import annotations

import math

import numpy as np
from statsmodels.stats.multitest import multipletests
import pandas as pd
import pytest
from scipy import stats

from benchreport.stats import (
    COMPARISON_COLUMNS,
    COMPARISON_EXTRA_COLUMNS,
    PrimaryCell,
    comparisons,
    estimate_cells,
    verdict,
    verdict_reason,
)
from benchreport.stats.multiplicity import adjust
from benchreport.thresholds import DEFAULT

try:
    from tests.stats_fixtures import measurement, measurements_frame, requests_frame, seats_frame, simulated_requests
except ImportError:
    from stats_fixtures import measurement, measurements_frame, requests_frame, seats_frame, simulated_requests

DAY = "2026-09-10"
NB = 2000
SEATS = seats_frame({"inc": "incumbent", "new": "candidate", "ref": "reference"})


def _req(seat, passes, n, seed=0, date=DAY, **kw):
    rng = np.random.default_rng(seed)
    out = []
    for p in passes:
        out += simulated_requests(rng, seat, date, p, n=n, **kw)
    return out


def _passes(seat, values, *, metric="output_tok_s", concurrency=16, date=DAY):
    return [measurement(seat, date, p + 1, "decode", metric, v, concurrency=concurrency) for p, v in enumerate(values)]


def _compare(ms=None, req=None, seats=SEATS, **kw):
    cs = estimate_cells(
        None if ms is None else measurements_frame(ms), None if req is None else requests_frame(req), n_resamples=NB
    )
    return comparisons(cs, seats, **kw)


def _row(df, **key):
    sel = np.ones(len(df), dtype=bool)
    for k, v in key.items():
        sel &= (df[k] == v).fillna(False).to_numpy()
    assert sel.sum() == 1, f"{key}: {sel.sum()} rows"
    return df[sel].iloc[0]


@pytest.mark.parametrize(
    "low,high,hib,expected",
    [
        (1.05, 1.20, True, "better"),
        (1.05, 1.20, False, "worse"),
        (0.80, 0.95, True, "worse"),
        (0.80, 0.95, False, "better"),
        (0.99, 1.015, True, "within_noise"),
        (0.985, 1.01, False, "within_noise"),
        (1.005, 1.015, True, "within_noise"),  # significant but inside the noise band
        (1.005, 1.03, True, "insufficient_data"),  # clears 1, not the noise band (issue 11)
        (1.021, 1.03, True, "better"),
        (0.95, 1.10, True, "insufficient_data"),
        (0.97, 1.03, False, "insufficient_data"),
        (np.nan, np.nan, True, "insufficient_data"),
    ],
)
def test_verdict_needs_the_ci_clear_of_the_noise_band(low, high, hib, expected):
    assert verdict(low, high, higher_is_better=hib, noise=0.02) == expected


def test_verdict_needs_the_adjusted_p_value():
    assert verdict(1.05, 1.2, higher_is_better=True, noise=0.02, p_adj=0.01) == "better"
    v, why = verdict_reason(1.05, 1.2, higher_is_better=True, noise=0.02, p_adj=0.2)
    assert v == "insufficient_data" and "multiple comparisons" in why


def test_columns_and_baseline_from_the_incumbent_role():
    out = _compare(_passes("inc", [900, 910, 905]) + _passes("new", [800, 810, 805]))
    assert list(out.columns) == COMPARISON_COLUMNS + COMPARISON_EXTRA_COLUMNS
    assert set(out["baseline"]) == {"inc"} and set(out["candidate"]) == {"new"}
    assert set(out["kind"]) == {"baseline"}


def test_pass_level_ratio_is_welch_on_log_pass_values_and_matches_scipy():
    b, c = [900.0, 930.0, 915.0, 890.0], [1000.0, 1040.0, 1010.0]
    out = _compare(_passes("inc", b) + _passes("new", c))
    row = _row(out, candidate="new")
    ref = stats.ttest_ind(np.log(c), np.log(b), equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert row["ratio"] == pytest.approx(math.exp(np.mean(np.log(c)) - np.mean(np.log(b))))
    assert row["ratio"] == pytest.approx(row["candidate_estimate"] / row["baseline_estimate"])
    assert row["ci_low"] == pytest.approx(math.exp(ci.low)) and row["ci_high"] == pytest.approx(math.exp(ci.high))
    assert row["p_value"] == pytest.approx(ref.pvalue)
    assert row["ci_method"].startswith("Welch t on log pass values (df=")
    assert row["verdict"] == "better" and row["p_adj"] == pytest.approx(ref.pvalue)  # one test: no adjustment


def test_lower_is_better_for_latencies():
    out = _compare(_passes("inc", [50, 52, 51], metric="ttft_ms") + _passes("new", [40, 41, 40.5], metric="ttft_ms"))
    assert _row(out, candidate="new")["verdict"] == "better"


def test_single_pass_comparisons_are_insufficient_and_keep_a_within_run_ratio():
    req = _req("inc", [1], 200, seed=1) + _req("new", [1], 200, seed=2, tok_s=120.0)
    out = _compare(req=req)
    row = _row(out, metric="decode_tok_s_per_stream", statistic="mean")
    assert row["verdict"] == "insufficient_data"
    assert row["ci_method"] == "none: baseline single pass; candidate single pass"
    assert pd.isna(row["ci_low"]) and pd.isna(row["p_value"])
    assert row["within_low"] < row["ratio"] < row["within_high"] and row["within_low"] > 1.2
    assert "within one run" in row["within_method"]
    assert (out["verdict"] == "insufficient_data").all()


def test_two_passes_and_published_cis_are_insufficient():
    ms = (
        _passes("inc", [896.9, 982.5])
        + _passes("new", [763.9])
        + [
            measurement("inc", DAY, 1, "prefill", "prefill_tok_s", 98.9, ci_low=95.7, ci_high=102.1, ci_level=0.95),
            measurement("new", DAY, 1, "prefill", "prefill_tok_s", 73.1, ci_low=69.4, ci_high=76.8, ci_level=0.95),
        ]
    )
    out = _compare(ms)
    two = _row(out, metric="output_tok_s")
    assert two["ci_method"] == "none: baseline two passes; candidate single pass"
    assert two["verdict"] == "insufficient_data"
    pub = _row(out, metric="prefill_tok_s")
    assert pub["verdict"] == "insufficient_data" and "published interval" in pub["ci_method"]
    assert pub["within_low"] < pub["ratio"] < pub["within_high"]


def test_holm_across_the_report_and_the_primary_cell():
    rng = np.random.default_rng(3)
    ms = []
    for seat in ("inc", "new"):
        for conc in (1, 4, 8, 16):
            ms += _passes(seat, list(900 * conc * rng.lognormal(0, 0.03, 3)), concurrency=conc)
    out = _compare(ms)
    prim = out[out["primary"]]
    assert len(prim) == 1 and prim.iloc[0]["concurrency"] == 16 and prim.iloc[0]["metric"] == "output_tok_s"
    # gatekeeping (issue 30): the primary at the full alpha, the rest Holm (statsmodels) behind it
    p_first = float(prim.iloc[0]["p_value"])
    rest = out[~out["primary"]]
    holm_rest = multipletests(rest["p_value"].to_numpy(), method="holm")[1]
    assert prim.iloc[0]["p_adj"] == pytest.approx(p_first)
    np.testing.assert_allclose(rest["p_adj"], np.maximum(holm_rest, p_first))
    # one family tested (throughput only): it has the full alpha (issue 43)
    assert prim.iloc[0]["multiplicity"] == (
        "throughput family, at the full alpha (the only family tested); "
        "gatekeeping, primary: tested first in its family, at the family's alpha"
    )
    assert all("; gatekeeping, secondary" in m for m in rest["multiplicity"])
    assert set(out["family"]) == {"throughput"} and set(out["family_alpha"]) == {0.05}
    at4 = _compare(ms, primary=PrimaryCell(concurrency=4))
    assert at4[at4["primary"]].iloc[0]["concurrency"] == 4
    bh = _compare(ms, multiplicity="bh")
    np.testing.assert_allclose(bh["p_adj"], adjust(bh["p_value"].to_numpy(), "bh"))


def test_history_rows_of_two_dates_give_no_verdict_only_the_two_nights_pass_interval():
    """Two nights of one seat: their passes say nothing of how much nights differ (issue 14)."""
    ms = _passes("new", [800, 805, 810], date="2026-09-01") + _passes("new", [900, 905, 910], date="2026-09-10")
    out = _compare(ms)
    hist = _row(out, kind="history")
    assert hist["baseline_date"] == "2026-09-01" and hist["candidate_date"] == "2026-09-10"
    assert hist["verdict"] == "insufficient_data"  # a 12% change is within an assumed 5% night spread's reach
    assert (
        "assumed night-to-night spread of 5% (history_prior_cv; not measured: 1 earlier date; needs 5)"
        in hist["ci_method"]
    )
    # the pass-level interval of these two nights, as scipy's Welch test on the logs gives it
    lb, lc = np.log([800, 805, 810]), np.log([900, 905, 910])
    res = stats.ttest_ind(lc, lb, equal_var=False)
    lo, hi = res.confidence_interval(0.95)
    # the row's interval: normal, the passes' standard error and sqrt(2) x 5% added in quadrature
    se = math.hypot(math.sqrt(2) * 0.05, (hi - lo) / (2 * stats.t.ppf(0.975, res.df)))
    d = float(np.mean(lc) - np.mean(lb))
    assert hist["ci_low"] == pytest.approx(math.exp(d - stats.norm.ppf(0.975) * se), rel=1e-9)
    assert hist["p_value"] == pytest.approx(2 * stats.norm.sf(abs(d) / se), rel=1e-9)
    assert hist["within_low"] == pytest.approx(math.exp(lo)) and hist["within_high"] == pytest.approx(math.exp(hi))
    assert "leaves out night-to-night variation" in hist["within_method"]


def _nights(seat, n, rng, *, night_cv, pass_cv=0.01, base=900.0, last_factor=1.0, start=1):
    ms = []
    for d in range(n):
        f = rng.lognormal(0, night_cv) * (last_factor if d == n - 1 else 1.0)
        ms += _passes(seat, list(base * f * rng.lognormal(0, pass_cv, 3)), date=f"2026-08-{start + d:02d}")
    return ms


def test_history_rows_use_the_night_to_night_spread_of_earlier_dates():
    """Interval and p-value against an independent computation: numpy's sample sd of the log
    night values before the latest, scipy.stats' t."""
    rng = np.random.default_rng(11)
    ms = _nights("new", 12, rng, night_cv=0.02, last_factor=1.25)
    hist = _row(_compare(ms), kind="history")
    est = {}
    for m in ms:
        est.setdefault(m["date"], []).append(m["value"])
    dates = sorted(est)
    logs = {d: np.mean(np.log(v)) for d, v in est.items()}
    sd = np.std([logs[d] for d in dates[:-1]], ddof=1)
    diff = logs[dates[-1]] - logs[dates[-2]]
    df = len(dates) - 2
    se = sd * math.sqrt(2)
    t = stats.t.ppf(0.975, df)
    assert hist["ratio"] == pytest.approx(math.exp(diff))
    assert hist["ci_low"] == pytest.approx(math.exp(diff - t * se))
    assert hist["ci_high"] == pytest.approx(math.exp(diff + t * se))
    assert hist["p_value"] == pytest.approx(2 * stats.t.sf(abs(diff) / se, df))
    assert hist["df"] == df and "11 earlier dates" in hist["ci_method"]
    assert hist["verdict"] == "better"


def test_a_stable_seat_with_night_to_night_variation_is_not_called_better_or_worse():
    """The defect of benchmarks/history_rows_study.py: nights differ by 3%, passes by 0.5%; the
    two nights' passes alone make the change 'significant', the nights do not."""
    calls = 0
    for seed in range(40):
        rng = np.random.default_rng(100 + seed)
        ms = _nights("new", 10, rng, night_cv=0.03, pass_cv=0.005)
        hist = _row(_compare(ms), kind="history")
        calls += hist["verdict"] in ("better", "worse")
    assert calls <= 5  # about 5% at alpha 0.05; Welch on the passes called ~45%


def test_history_rows_compare_the_latest_with_the_previous_date_unless_all_are_asked_for():
    ms = sum((_passes("new", [800 + d, 805 + d, 810 + d], date=f"2026-09-{d:02d}") for d in (1, 5, 9, 12)), [])
    prev = _compare(ms)
    prev = prev[prev["kind"] == "history"]
    assert list(zip(prev["baseline_date"], prev["candidate_date"])) == [("2026-09-09", "2026-09-12")]
    every = _compare(ms, history="all")
    every = every[every["kind"] == "history"]
    assert list(every["baseline_date"]) == ["2026-09-01", "2026-09-05", "2026-09-09"]
    assert set(every["candidate_date"]) == {"2026-09-12"}
    assert _compare(ms, history=False)["kind"].eq("history").sum() == 0
    with pytest.raises(ValueError, match="history"):
        _compare(ms, history="some")


def test_history_rows_are_their_own_multiplicity_family():
    """A long history must not dilute the report's verdicts: Holm runs within each kind."""
    rng = np.random.default_rng(5)
    ms = _passes("inc", list(900 * rng.lognormal(0, 0.01, 3))) + _passes("new", list(990 * rng.lognormal(0, 0.01, 3)))
    alone = _compare(ms)
    for day in range(1, 28):
        ms += _passes("new", list(990 * rng.lognormal(0, 0.01, 3)), date=f"2026-08-{day:02d}")
    out = _compare(ms, history="all")
    base, hist = out[out["kind"] == "baseline"], out[out["kind"] == "history"]
    assert len(hist) >= 27
    np.testing.assert_allclose(base["p_adj"], adjust(base["p_value"].to_numpy(), "holm"))
    np.testing.assert_allclose(hist["p_adj"], adjust(hist["p_value"].to_numpy(), "holm"))
    a, b = _row(alone, kind="baseline"), _row(out, kind="baseline")
    assert b["p_adj"] == pytest.approx(a["p_adj"]) and b["verdict"] == a["verdict"] == "better"


def test_no_incumbent_no_baseline_rows_and_explicit_baseline():
    ms = _passes("a", [1, 1.1, 1.2]) + _passes("b", [2, 2.1, 2.2])
    none = _compare(ms, seats=None)
    assert len(none) == 0
    out = _compare(ms, seats=None, baseline="a")
    assert set(out["baseline"]) == {"a"}


def test_harness_and_probe_must_match():
    ms = _passes("inc", [900, 905, 910]) + _passes("new", [800, 805, 810])
    cs = estimate_cells(
        measurements_frame(ms),
        None,
        pd.DataFrame(
            {"run_id": [m["run_id"] for m in ms], "harness": ["aiperf"] * 3 + ["guidellm"] * 3, "probe": [None] * 6}
        ),
    )
    assert len(comparisons(cs, SEATS)) == 0


def test_holm_matches_statsmodels_with_ties_and_missing_values():
    # adjust's own step-down Holm (statsmodels' runs gc.collect on every call) against multipletests
    rng = np.random.default_rng(4)
    for m in (1, 2, 7, 40):
        p = np.round(rng.uniform(0, 0.2, m) ** 2, 3)  # rounded: ties
        p[rng.uniform(size=m) < 0.2] = np.nan
        ok = ~np.isnan(p)
        got = adjust(p, "holm")
        assert np.isnan(got[~ok]).all()
        if ok.any():
            np.testing.assert_allclose(got[ok], multipletests(p[ok], method="holm")[1], rtol=1e-12)


def test_multiplicity_adjust_matches_published_examples():
    # Benjamini & Hochberg (1995), section 4: 15 p-values, 4 rejected at q = 0.05 (BH), 3 by Holm
    p = np.array(
        [
            0.0001,
            0.0004,
            0.0019,
            0.0095,
            0.0201,
            0.0278,
            0.0298,
            0.0344,
            0.0459,
            0.3240,
            0.4262,
            0.5719,
            0.6528,
            0.7590,
            1.0000,
        ]
    )
    assert int((adjust(p, "bh") <= 0.05).sum()) == 4
    assert int((adjust(p, "holm") <= 0.05).sum()) == 3
    # Holm (1979) step-down by hand: sorted p times (m - i + 1), made monotone
    q = np.array([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adjust(q, "holm"), [0.03, 0.06, 0.06, 0.02])
    assert np.isnan(adjust(np.array([np.nan, 0.01]), "holm")[0])


def test_history_rows_take_the_spread_from_the_current_level_when_it_has_enough_nights():
    """A 10% step on night 6 of 20: from the whole window the step widens the spread past any
    verdict; from the level history.csv gives (since the step) the last two nights are
    within noise, the spread numpy's over those nights."""
    from benchreport.stats.history import HistoryRule, history

    rng = np.random.default_rng(3)
    ms = []
    for d in range(20):
        f = rng.lognormal(0, 0.002) * (0.9 if d >= 5 else 1.0)
        ms += _passes("new", list(900 * f * rng.lognormal(0, 0.002, 3)), date=f"2026-08-{1 + d:02d}")
    cs = estimate_cells(measurements_frame(ms), None, n_resamples=NB)
    levels = history(cs.dated, rule=HistoryRule.from_thresholds(DEFAULT))
    since = levels[levels["date"] == "2026-08-20"]["level_since"].iloc[0]
    assert "2026-08-06" <= since <= "2026-08-07"
    wide = _row(comparisons(cs, SEATS), kind="history")
    assert wide["verdict"] == "insufficient_data" and "since" not in wide["ci_method"]
    row = _row(comparisons(cs, SEATS, levels=levels), kind="history")
    assert f"of the level since {since}" in row["ci_method"] and row["verdict"] == "within_noise"
    est = {}
    for m in ms:
        est.setdefault(m["date"], []).append(m["value"])
    logs = [np.mean(np.log(v)) for d, v in sorted(est.items()) if since <= d < "2026-08-20"]
    sd, df = np.std(logs, ddof=1), len(logs) - 1
    d = np.mean(np.log(est["2026-08-20"])) - np.mean(np.log(est["2026-08-19"]))
    t = stats.t.ppf(0.975, df)
    assert row["ci_low"] == pytest.approx(math.exp(d - t * sd * math.sqrt(2)))
    assert row["ci_high"] == pytest.approx(math.exp(d + t * sd * math.sqrt(2)))


def test_history_prior_cv_governs_the_first_nights():
    """A wider assumed night spread widens a first-nights row; every pass 1.5x slower is worse at
    the default, and not when nights are assumed to differ by 50%."""
    from benchreport.thresholds import DEFAULT

    ms = _passes("new", [800, 805, 810], date="2026-09-01") + _passes("new", [1200, 1205, 1210], date="2026-09-10")
    d = _row(_compare(ms), kind="history")
    c = _row(_compare(ms, thresholds=DEFAULT.replace(history_prior_cv=0.5)), kind="history")
    assert d["verdict"] == "better" and c["verdict"] == "insufficient_data"  # throughput: higher is better
    assert c["ci_high"] / c["ci_low"] > d["ci_high"] / d["ci_low"]


def test_a_change_inside_the_band_is_said():
    """Issue 43: a within_noise interval that excludes 1 says the change is there, smaller than the band."""
    from benchreport.stats.compare import verdict_reason

    assert verdict_reason(1.004, 1.015, higher_is_better=True, noise=0.02) == (
        "within_noise",
        "a change smaller than the noise band: the interval excludes 1",
    )
    assert verdict_reason(0.99, 1.01, higher_is_better=True, noise=0.02) == ("within_noise", "")
