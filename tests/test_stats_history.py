"""history(): dated verdicts against the steady level, checked against statsmodels' prediction interval."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from benchreport.stats.history import HISTORY_COLUMNS, HistoryRule, history

DATES = pd.date_range("2026-01-01", periods=60).strftime("%Y-%m-%d")


def _series(values, *, metric="output_tok_s", seat="A", concurrency=16, statistic="mean"):
    return [dict(seat=seat, harness="h", probe="p", workload="decode", concurrency=concurrency, metric=metric,
                 statistic=statistic, date=d, estimate=float(v), n_passes=5) for d, v in zip(DATES, values)]


def test_change_interval_is_the_prediction_interval_of_the_level():
    rng = np.random.default_rng(0)
    vals = 100 * np.exp(rng.normal(0, 0.01, 11))
    h = history(pd.DataFrame(_series(vals)), rule=HistoryRule(min_level=5, window=64))
    last = h.iloc[-1]
    logs = np.log(vals[:10])
    fit = sm.OLS(logs, np.ones((10, 1))).fit()
    pred = fit.get_prediction(np.ones((1, 1))).summary_frame(alpha=0.05)
    lo, hi = float(pred["obs_ci_lower"].iloc[0]), float(pred["obs_ci_upper"].iloc[0])
    x = math.log(vals[10])
    assert last["change"] == pytest.approx(math.exp(x - logs.mean()))
    # the interval of the change is the prediction interval shifted to the new value
    # the change x - m is inside its interval exactly when x lies in the prediction interval
    assert last["ci_low"] == pytest.approx(math.exp(x - hi))
    assert last["ci_high"] == pytest.approx(math.exp(x - lo))
    assert last["level_nights"] == 10 and list(h.columns) == HISTORY_COLUMNS


def test_a_stable_seat_is_within_noise_and_a_step_is_found_on_its_night():
    rng = np.random.default_rng(1)
    vals = 100 * np.exp(rng.normal(0, 0.004, 60))
    vals[40:] *= 0.95
    h = history(pd.DataFrame(_series(vals)))
    decided = h[h["verdict"].isin(["regression", "improvement"])]
    assert list(decided["date"]) == [DATES[40]] and decided.iloc[0]["verdict"] == "regression"
    assert (h["verdict"].iloc[5:40] == "within_noise").all()
    after = h.iloc[41:]
    assert (after["verdict"] == "within_noise").all() and (after["level_since"] == DATES[40]).all()


def test_direction_follows_the_metric_and_outliers_do_not_move_the_level():
    vals = np.full(30, 50.0) * np.exp(np.random.default_rng(2).normal(0, 0.003, 30))
    vals[20] *= 0.9  # one fast night of a latency: improvement, not confirmed by the next
    h = history(pd.DataFrame(_series(vals, metric="ttft_ms")))
    assert h.iloc[20]["verdict"] == "improvement"
    assert (h.iloc[21:]["verdict"] == "within_noise").all()
    assert (h.iloc[21:]["level_since"] == DATES[0]).all()


def test_bonferroni_over_the_cells_of_a_seat_night():
    rng = np.random.default_rng(3)
    rows = []
    for c in (1, 4, 8, 16):
        rows += _series(100 * np.exp(rng.normal(0, 0.01, 20)), concurrency=c)
    h = history(pd.DataFrame(rows))
    night = h[(h["date"] == DATES[10])]
    np.testing.assert_allclose(night["p_adj"], np.minimum(1, night["p_value"] * 4))


def test_cells_measured_once_have_no_history():
    h = history(pd.DataFrame(_series([100.0])))
    assert len(h) == 0
