"""The within-run study's harness (benchmarks/within_study.py): truths, generator, counting.

These check the harness, not the library's intervals (their coverage is the study's output,
docs/statistics.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import within_study as ws  # noqa: E402
from benchreport.load import load  # noqa: E402
from benchreport.stats.cells import request_metrics  # noqa: E402
from benchreport.tables import build_tables  # noqa: E402


def test_ar1_has_unit_variance_and_the_asked_lag1_correlation():
    x = ws.ar1(np.random.default_rng(0), 0.8, 20000, 4)
    assert x.var() == pytest.approx(1.0, abs=0.05)
    r1 = np.mean([np.corrcoef(row[1:], row[:-1])[0, 1] for row in x])
    assert r1 == pytest.approx(0.8, abs=0.02)


def test_closed_form_truths_match_the_written_requests(tmp_path):
    ws.write_seats(tmp_path, np.random.default_rng(1), seats=2, n=20000, rho=0.0)
    loaded = load([tmp_path], progress=False)
    assert not loaded.refused and len(loaded.runs) == 2
    m = request_metrics(build_tables(loaded).requests)
    for metric in ws.MODELS:
        x = m[metric].to_numpy()
        assert x.mean() == pytest.approx(ws.true_value(metric, "mean"), rel=0.01)
        assert np.quantile(x, 0.9) == pytest.approx(ws.true_value(metric, "p90"), rel=0.02)
    doc = json.loads(next(tmp_path.iterdir()).read_text())
    starts = [r["start_ms"] for r in doc["requests"]]
    assert all(a < b for a, b in zip(starts, starts[1:]))


def test_coverage_counts_intervals_holding_the_truth():
    truth = ws.true_value("ttft_ms", "mean")
    cells = pd.DataFrame(
        {
            "metric": ["ttft_ms"] * 3,
            "statistic": ["mean"] * 3,
            "n_passes": [1, 1, 1],
            "within_low": [truth - 1, truth + 1, np.nan],
            "within_high": [truth + 1, truth + 2, np.nan],
            "within_method": ["t with EWC long-run variance over requests (B=2, df=2)"] * 3,
        }
    )
    got = ws.coverage(cells, 3)["ttft_ms/mean"]
    assert (got["coverage"]["k"], got["coverage"]["of"], got["given"]["k"]) == (1, 2, 2)
