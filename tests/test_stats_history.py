"""history(): dated verdicts by change detection, the CUSUM column recomputed independently with
numpy and scipy, the one-night interval against statsmodels' prediction interval, and planted
steps, drifts and far nights found and named."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from benchreport.stats.history import HISTORY_COLUMNS, HistoryRule, history

DATES = pd.date_range("2026-01-01", periods=400).strftime("%Y-%m-%d")


def _series(values, *, metric="output_tok_s", seat="A", concurrency=16, statistic="mean"):
    return [
        dict(
            seat=seat,
            harness="h",
            probe="p",
            workload="decode",
            concurrency=concurrency,
            metric=metric,
            statistic=statistic,
            date=d,
            estimate=float(v),
            n_passes=5,
        )
        for d, v in zip(DATES, values)
    ]


def _winsorised(ref, clip=2.5):
    med = np.median(ref)
    mad = 1.4826 * np.median(np.abs(ref - med))
    w = np.clip(ref, med - clip * mad, med + clip * mad)
    return w.mean(), w.std(ddof=1)


def test_the_cusum_column_is_recomputed_independently():
    """A stable cell: self-starting (each night against all the earlier ones) until the reference
    has `window` nights, then frozen; z mapped through t to the normal, clipped at 2.5, k = 1/2."""
    rng = np.random.default_rng(0)
    vals = 100 * np.exp(rng.normal(0, 0.01, 40))
    rule = HistoryRule(window=12, min_level=5)
    h = history(pd.DataFrame(_series(vals)), rule=rule)
    logs = np.log(vals)
    up = down = 0.0
    for i in range(5, 40):
        ref = logs[: min(i, 12)]
        m, s = _winsorised(ref)
        t = (logs[i] - m) / (s * np.sqrt(1 + 1 / len(ref)))
        z = np.sign(t) * stats.norm.isf(stats.t.sf(abs(t), len(ref) - 1))
        zc = np.clip(z, -2.5, 2.5)
        up, down = max(0.0, up + zc - 0.5), max(0.0, down - zc - 0.5)
        assert h.loc[i, "cusum"] == pytest.approx(up if up >= down else -down, abs=1e-9), i
        assert h.loc[i, "verdict"] == "within_noise" and h.loc[i, "level_nights"] == len(ref)
    assert (h["verdict"].iloc[:5] == "insufficient_data").all() and list(h.columns) == HISTORY_COLUMNS


def test_a_nights_interval_is_the_prediction_interval_of_the_level():
    """statsmodels' prediction interval for one new value of an intercept-only model, from the
    winsorised reference (here no value is winsorised, so it is the plain one)."""
    rng = np.random.default_rng(0)
    vals = 100 * np.exp(rng.normal(0, 0.01, 11))
    h = history(pd.DataFrame(_series(vals)), rule=HistoryRule(min_level=5, window=64))
    last = h.iloc[-1]
    assert last["level_nights"] == 10
    logs = np.log(vals[:10])
    m, s = _winsorised(logs)
    assert m == pytest.approx(logs.mean()) and s == pytest.approx(logs.std(ddof=1))
    pred = sm.OLS(logs, np.ones((10, 1))).fit().get_prediction(np.ones((1, 1))).summary_frame(alpha=0.05)
    lo, hi = float(pred["obs_ci_lower"].iloc[0]), float(pred["obs_ci_upper"].iloc[0])
    x = math.log(vals[10])
    assert last["change"] == pytest.approx(math.exp(x - logs.mean()))
    assert last["ci_low"] == pytest.approx(math.exp(x - hi)) and last["ci_high"] == pytest.approx(math.exp(x - lo))


def test_a_step_too_small_for_one_night_is_found_over_the_nights_after_it():
    """A 4% step in 1.5% night noise (under 3 SDs: a one-night test at p < 0.001 misses it): the
    CUSUM finds it within a couple of weeks, a step since about its night, and the level restarts."""
    rng = np.random.default_rng(1)
    vals = 100 * np.exp(rng.normal(0, 0.015, 200))
    vals[120:] *= 0.96
    h = history(pd.DataFrame(_series(vals)))
    decided = h[h["verdict"].isin(["regression", "improvement"])]
    assert len(decided) == 1 and decided.iloc[0]["verdict"] == "regression"
    r = decided.iloc[0]
    assert DATES[120] <= r["date"] <= DATES[135] and r["change_kind"] == "step"
    assert DATES[112] <= r["change_since"] <= DATES[122] and 0.93 < r["change"] < 0.99
    after = h[h["date"] > r["date"]]
    assert (after["level_since"] == r["change_since"]).all() and (after["verdict"] == "within_noise").all()


def test_a_slow_drift_is_found_against_the_frozen_level_and_called_a_drift():
    """0.03% a night worse: no night is far from the one before, but the reference level of the
    first 64 nights does not follow it."""
    rng = np.random.default_rng(2)
    vals = 100 * np.exp(rng.normal(0, 0.005, 365) - 0.0003 * np.arange(365))
    h = history(pd.DataFrame(_series(vals)))
    decided = h[h["verdict"].isin(["regression", "improvement"])]
    assert len(decided) >= 1 and set(decided["verdict"]) == {"regression"}
    assert decided.iloc[0]["change_kind"] == "drift" and decided.iloc[0]["change"] < 0.98


def test_one_far_night_is_told_on_its_night_and_left_out_of_the_level():
    vals = np.full(60, 50.0) * np.exp(np.random.default_rng(3).normal(0, 0.003, 60))
    vals[40] *= 0.8  # one fast night of a latency: an improvement, not repeated by the next
    h = history(pd.DataFrame(_series(vals, metric="ttft_ms")))
    far = h.iloc[40]
    assert far["verdict"] == "improvement" and far["change_kind"] == "night" and far["change_since"] == DATES[40]
    assert (h.iloc[41:]["verdict"] == "within_noise").all() and (h.iloc[41:]["level_since"] == DATES[0]).all()
    # taken out of the CUSUM too: the next nights' statistic is what it would be without it
    alone = history(pd.DataFrame(_series(np.delete(vals, 40), metric="ttft_ms")))
    np.testing.assert_allclose(h["cusum"].iloc[41:].to_numpy(), alone["cusum"].iloc[40:].to_numpy(), atol=1e-12)


def test_a_far_night_the_next_repeats_restarts_the_level_there():
    vals = 100 * np.exp(np.random.default_rng(4).normal(0, 0.003, 60))
    vals[40:] *= 1 / 1.5  # every night from 40 on 1.5x slower
    h = history(pd.DataFrame(_series(vals)))
    assert h.iloc[40]["verdict"] == "regression" and h.iloc[40]["change_kind"] == "night"
    assert h.iloc[41]["verdict"] == "within_noise" and h.iloc[41]["level_since"] == DATES[40]
    assert (h.iloc[41:]["verdict"] == "within_noise").all()


def test_the_decision_interval_is_bonferroni_over_the_seats_cells():
    """h gives each one-sided statistic an in-control ARL of arl_factor x 2 m / alpha (Siegmund)."""
    from benchreport.stats.history_cusum import siegmund_arl

    rule = HistoryRule()
    for m in (1, 4, 20):
        assert siegmund_arl(rule.decision_interval(m), rule.k) == pytest.approx(
            rule.arl_factor * 2 * m / rule.alpha, rel=1e-6
        )
    assert rule.decision_interval(20) > rule.decision_interval(4)
    rng = np.random.default_rng(3)
    rows = []
    for c in (1, 4, 8, 16):
        rows += _series(100 * np.exp(rng.normal(0, 0.01, 20)), concurrency=c)
    night = history(pd.DataFrame(rows))
    night = night[night["date"] == DATES[10]]
    np.testing.assert_allclose(night["p_adj"], np.minimum(1, night["p_value"] * 4))


def test_a_stable_cell_is_within_noise_once_it_has_a_level():
    rng = np.random.default_rng(5)
    vals = 100 * np.exp(rng.normal(0, 0.01, 365) + 0.005 * rng.standard_t(3, 365))
    h = history(pd.DataFrame(_series(vals)))
    assert (h["verdict"].iloc[:5] == "insufficient_data").all()
    assert (h["verdict"].iloc[5:] == "within_noise").mean() > 0.99


def test_cells_measured_once_have_no_history():
    h = history(pd.DataFrame(_series([100.0])))
    assert len(h) == 0


def _first_told(h: pd.DataFrame, start: int):
    """The first row from night `start` on that tells a slowdown of an output_tok_s cell: a regression,
    or a sustained change inside the band (within_noise with a change_kind and a change below 1)."""
    after = h.iloc[start:]
    kinds = after["change_kind"].fillna("").astype(str)
    told = (after["verdict"] == "regression") | (
        (after["verdict"] == "within_noise") & (kinds != "") & (after["change"] < 1)
    )
    return after[told].iloc[0] if told.any() else None


def test_a_step_inside_the_band_is_told_when_found_at_its_size():
    """Issue 43: a sustained 1.5% slowdown (3 night SDs; the band is 2%) is told on the night the CUSUM
    finds it, as within_noise with its size, interval and kind, and the level restarts there; it is
    not re-estimated until chance carries it past the band (the earlier code called such steps a
    regression of 2-3.5% tens of nights later). Tolerance: the median size over 16 seats within 0.4
    points of the truth, each within 1 point, the intervals covering it in at least 13 of 16; at most
    2 of 16 called a regression later (a chance second change inside the band that the anchor adds
    to the first, docs/statistics.md)."""
    truth, step, sizes, covered, later_regressions = 0.985, 100, [], 0, 0
    for seed in range(16):
        logs = np.random.default_rng(100 + seed).normal(0, 0.005, 180)
        logs[step:] += math.log(truth)
        h = history(pd.DataFrame(_series(100 * np.exp(logs))))
        r = _first_told(h, step)
        assert r is not None and r["date"] <= DATES[step + 30], seed
        assert not h.iloc[:step]["verdict"].isin(["regression", "improvement"]).any()
        sizes.append(float(r["change"]))
        if r["verdict"] == "regression":  # the estimate at detection past the band by chance
            continue
        assert r["change_kind"] in ("step", "drift") and r["change_since"] >= DATES[step - 5], r.to_dict()
        assert "within the ±2% noise band; the level restarts there" in r["verdict_reason"]
        assert h[h["date"] > r["date"]].iloc[0]["level_since"] == r["change_since"]
        later_regressions += h[h["date"] > r["date"]]["verdict"].eq("regression").any()
        covered += r["ci_low"] <= truth <= r["ci_high"]
    assert abs(np.median(sizes) - truth) < 0.004 and max(abs(np.array(sizes) - truth)) < 0.01, sizes
    assert covered >= 13 and later_regressions <= 2, (covered, later_regressions)


def test_changes_inside_the_band_that_add_up_past_it_are_a_regression_against_their_anchor():
    """Two 1.5% slowdowns 100 nights apart: the first is told inside the band, the second takes the
    level 3% from where it was before the first: a regression against that level, since the first."""
    logs = np.random.default_rng(7).normal(0, 0.004, 300)
    logs[100:] += math.log(0.985)
    logs[200:] += math.log(0.985)
    h = history(pd.DataFrame(_series(100 * np.exp(logs))))
    first = _first_told(h, 100)
    assert first["verdict"] == "within_noise" and first["date"] < DATES[200]
    r = h[h["verdict"] == "regression"].iloc[0]
    assert r["date"] >= DATES[200] and r["change_since"] == first["change_since"] and r["level_since"] == DATES[0]
    assert (
        0.96 < r["change"] < 0.98
        and r["ci_low"] < 0.985**2 < r["ci_high"]
        and "2 sustained changes" in r["verdict_reason"]
    )
    assert not h["verdict"].eq("improvement").any()
