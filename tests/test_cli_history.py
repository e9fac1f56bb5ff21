"""History end to end through the CLI on a request-level nightly store (benchmarks/history_cli_study.py
writes it): a planted 10% step is found within a few nights and called a step, a stable seat with
heavy-tailed nights stays quiet, the flag says so, and the nightly gate still fails on the step."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from benchreport.cli import main

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from history_cli_study import _nights, write_store_runs  # noqa: E402

NIGHTS, STEP = 40, 20
SEATS = {"stable": None, "step10": ("step", 0.10)}


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history-cli")
    write_store_runs(
        tmp / "runs",
        seed=11,
        nights=NIGHTS,
        passes=3,
        requests=24,
        pass_cv=0.02,
        night_scale=0.01,
        step_night=STEP,
        seats=SEATS,
    )
    assert main(["ingest", str(tmp / "runs"), "--store", str(tmp / "store"), "--quiet"]) == 0
    code = main(["analyse", "--store", str(tmp / "store"), "--out", str(tmp / "out"), "--quiet"])
    assert code in (0, 3)
    return SimpleNamespace(
        root=tmp,
        history=pd.read_csv(tmp / "out" / "tables" / "history.csv"),
        flags=json.loads((tmp / "out" / "flags.json").read_text()),
    )


def test_the_planted_step_is_found_within_a_few_nights_and_called_a_step(analysed):
    dates = _nights(NIGHTS)
    h = analysed.history
    step = h[(h["seat"] == "step10") & (h["metric"] == "decode_tok_s_per_stream") & (h["statistic"] == "mean")]
    found = step[step["verdict"] == "regression"]
    assert len(found) == 1, step[["date", "verdict", "change", "cusum"]]
    r = found.iloc[0]
    assert dates[STEP] <= r["date"] <= dates[STEP + 6] and r["change_kind"] in ("step", "night")
    assert dates[STEP - 3] <= r["change_since"] <= dates[STEP] and 0.85 < r["change"] < 0.95
    later = step[step["date"] > r["date"]]
    assert (later["verdict"] == "within_noise").all() and (later["level_since"] == r["change_since"]).all()
    flag = [f for f in analysed.flags if f["code"] == "history.regression" and f["seats"] == ["step10"]]
    assert len(flag) == 1 and ("a step since" in flag[0]["message"] or "one far night" in flag[0]["message"])


def test_a_stable_seat_is_quiet_and_within_noise_once_it_has_a_level(analysed):
    h = analysed.history
    stable = h[h["seat"] == "stable"]
    assert not stable["verdict"].isin(["regression", "improvement"]).any()
    first = stable.groupby(["metric", "statistic"])["date"].transform("min")
    judged = stable[stable["verdict"] != "insufficient_data"]
    assert (judged["verdict"] == "within_noise").all() and len(judged) >= 0.8 * len(stable)
    assert (stable.loc[stable["date"] == first, "verdict"] == "insufficient_data").all()
    assert not [f for f in analysed.flags if f["code"].startswith("history.") and "stable" in f["seats"]]


def test_the_nightly_gate_fails_on_the_night_of_the_step(analysed, capsys):
    """`compare --store S previous latest --fail-on regression` on the store cut at the step night."""
    dates = _nights(NIGHTS)
    runs, store = analysed.root / "runs", analysed.root / "gate-store"
    for d in dates[: STEP + 1]:
        assert main(["ingest", str(runs / d), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()
    code = main(["compare", "--store", str(store), "previous", "latest", "--fail-on", "regression", "--quiet"])
    err = capsys.readouterr().err
    assert code == 3 and "worse in B than in A" in err and "step10" in err
