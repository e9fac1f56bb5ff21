"""The regimes of issue 43's third pass in the studies (benchmarks/, not part of the measurement):
the night processes the history study adds (AR(1) nights, a weekly cycle, a noisy week) checked
against independent facts, and both studies run end to end on 2 replicates (smoke tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from statsmodels.tsa.stattools import acf

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from history_cli_study import Nights, group_of, seats_from_layout  # noqa: E402


def test_ar1_nights_have_the_asked_lag_correlation_and_the_same_marginal_scale():
    rng = np.random.default_rng(5)
    draws = rng.standard_normal(40_000)
    process, state = Nights(ar_rho=0.5), {}
    series = np.array([process.level("ar1-0", k, float(d), state) for k, d in enumerate(draws)])
    r = acf(series, nlags=2, fft=True)
    assert abs(r[1] - 0.5) < 0.02 and abs(r[2] - 0.25) < 0.02  # AR(1): rho^k (Box & Jenkins)
    assert abs(series.std() / draws.std() - 1) < 0.02
    plain = np.array([Nights().level("stable-0", k, float(d), {}) for k, d in enumerate(draws)])
    assert abs(acf(plain, nlags=1, fft=True)[1]) < 0.02


def test_weekly_nights_cycle_with_period_seven_and_the_asked_amplitude():
    process = Nights(weekly_amplitude=0.02)
    cycle = np.array([process.level("weekly-3", k, 0.0, {}) for k in range(70)])
    spectrum = np.abs(np.fft.rfft(cycle))
    assert np.argmax(spectrum) == 10  # 70 nights / 7: ten cycles
    assert abs(2 * spectrum[10] / 70 - np.log(1.02)) < 1e-9  # a sinusoid's amplitude from its DFT


def test_the_noisy_week_is_seven_nights_around_the_step():
    nights = [k for k in range(100) if Nights(noisy_week=True).noise_factor(k, 50) == 2.0]
    assert nights == list(range(47, 54)) and Nights().noise_factor(50, 50) == 1.0


def test_layout_names_groups_and_rejects_unknown_ones():
    seats = seats_from_layout("ar1:2,weekly:1,step5:2")
    assert list(seats) == ["ar1-0", "ar1-1", "weekly-0", "step5-0", "step5-1"]
    assert seats["step5-1"] == ("step", 0.05) and seats["ar1-0"] is None and group_of("step5-1") == "step5"
    with pytest.raises(SystemExit, match="--layout"):
        seats_from_layout("ar2:1")


def _run(args: list[str]) -> None:
    r = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_history_study_runs_the_new_regimes(tmp_path):
    out = tmp_path / "h.json"
    layout = "ar1:1,weekly:1,step5:1"
    _run(
        [str(BENCH / "history_cli_study.py"), "--layout", layout, "--noisy-week", "--nights", "12"]
        + ["--passes", "3", "--requests", "4", "--replicates", "2", "--json", str(out)]
    )
    got = json.loads(out.read_text())["3_passes"]
    # issue 43: the step seats' nights before their step count as stable nights too (their own key)
    assert set(got) == {"ar1", "weekly", "step5", "step_seats_before_their_step"} and got["step5"]["of"] == 2
    assert got["ar1"]["seat_years"] == pytest.approx(2 * 12 / 365)
    assert got["step_seats_before_their_step"]["seat_years"] == pytest.approx(2 * 6 / 365)
    assert {"reported", "report_delays", "report_changes"} <= set(got["step5"])


def test_day_effect_study_runs_a_null_regime(tmp_path):
    out = tmp_path / "d.json"
    _run([str(BENCH / "day_effect_study.py"), "--null-sigma-b", "0.05=2", "--power-replicates", "0", "--out", str(out)])
    got = json.loads(out.read_text())
    assert list(got) == ["sigma_b=0.05 effect=1"] and got["sigma_b=0.05 effect=1"]["after"]["replicates"] == 2
