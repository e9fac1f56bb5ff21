"""A latency-only regression is called and gated (issue 43), through the command line.

Request-level native runs from benchmarks/verdict_study.py's generator (two seats, 5 passes per
seat, CV 2% between passes, 200 requests per cell at concurrency 1 and 4); the candidate's TTFT
is 1.2 times the baseline's, its decode rate unchanged. benchmarks/latency_family_study.py runs
the same with 30 and more replicates (docs/statistics.md); here 5, each of which must be called.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import verdict_study as vs  # noqa: E402


def _runs(folder: Path, rep: int, ttft: float = 1.2) -> Path:
    folder.mkdir(parents=True)
    vs.write_replicate(
        folder, vs.Config("latency-ttft", 2, 5, 0.02, 0.0), rep, vs.Model(), seed=0, start_ms=True, ttft_effect=ttft
    )
    return folder


@pytest.mark.parametrize("rep", range(5))
def test_a_ttft_only_regression_is_called_worse(cli, tmp_path, rep):
    runs = _runs(tmp_path / "runs", rep)
    r = cli("analyse", runs, "--out", tmp_path / "out", "--n-boot", "200", "--quiet")
    assert r.returncode == 0, r.stderr
    c = pd.read_csv(tmp_path / "out" / "tables" / "comparisons.csv")
    c = c[c["kind"] == "baseline"]
    ttft = c[(c["metric"] == "ttft_ms") & (c["statistic"] == "mean")]
    assert len(ttft) == 2 and (ttft["verdict"] == "worse").all(), ttft[["concurrency", "ratio", "verdict_reason"]]
    assert set(ttft["family"]) == {"latency"}
    # the per-stream decode rate did not change: no false verdict on it
    decode = c[c["metric"] == "decode_tok_s_per_stream"]
    assert not decode["verdict"].isin(["better", "worse"]).any()


@pytest.fixture(scope="module")
def before_after(tmp_path_factory):
    """A (the baseline seat's passes) and B (the candidate's, TTFT x1.2) as two folders."""
    root = tmp_path_factory.mktemp("latency_gate")
    runs = _runs(root / "runs", 0)
    a, b = root / "A", root / "B"
    a.mkdir()
    b.mkdir()
    for f in runs.iterdir():
        shutil.copy(f, a if f.name.startswith("seat-00") else b)
    return a, b


def test_the_gate_fails_on_a_ttft_only_regression_naming_the_ttft_row(cli, before_after):
    a, b = before_after
    r = cli("compare", a, b, "--fail-on", "regression", "--n-boot", "200")
    assert r.returncode == 3, r.stderr
    assert "--fail-on regression" in r.stderr
    named = [line for line in r.stderr.splitlines() if "ttft_ms mean" in line]
    assert named and all("ttft_ms mean: ratio 1.1" in n or "ttft_ms mean: ratio 1.2" in n for n in named)


def test_the_text_output_says_why_a_row_has_no_verdict(cli, before_after):
    a, b = before_after
    js = cli("compare", a, b, "--json", "--n-boot", "200")
    rows = pd.DataFrame(json.loads(js.stdout))
    none = rows[rows["verdict"] == "insufficient_data"]
    assert len(none), "the fixture should leave some rows without a verdict"
    text = cli("compare", a, b, "--n-boot", "200").stdout
    for why in set(none["verdict_reason"]):
        assert f"insufficient data, {why}:" in text
