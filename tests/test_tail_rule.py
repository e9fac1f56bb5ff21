"""The tail-quantile rule n(1 - q) >= min_tail_obs, computed exactly (issue 30).

In binary floating point 100 * (1 - 0.9) is 9.999999999999998, which dropped a p90 at exactly
100 requests although the documented rule keeps it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from benchreport.cli import main
from benchreport.flags import rules as R
from benchreport.stats.common import parse_statistic, tail_count, tail_needed_n, tail_supported
from benchreport.stats.requests import supported
from benchreport.thresholds import DEFAULT, Thresholds

from flag_fixtures import cells_frame
from test_flags_rules import cell
from request_runs import request_records, request_run, write_request_runs


def test_float_arithmetic_is_what_went_wrong():
    assert 100 * (1 - 0.9) < 10  # the bug this file guards against


@pytest.mark.parametrize(
    "stat,n,kept",
    [
        ("p90", 100, True),
        ("p90", 99, False),
        ("p95", 200, True),
        ("p95", 199, False),
        ("p99", 1000, True),
        ("p99", 999, False),
        ("p50", 1, True),
        ("mean", 1, True),
        ("p90", 0, False),
    ],
)
def test_supported_at_the_boundary(stat, n, kept):
    assert supported(stat, n, DEFAULT) is kept


@pytest.mark.parametrize(
    "q,n,m",
    [
        (0.9, 100, 10),
        (0.95, 200, 10),
        (0.99, 1000, 10),
        (0.999, 10000, 10),
        (0.9, 30, 3),
        (0.99, 300, 3),
        (0.8, 50, 10),
    ],
)
def test_exact_rule_against_integer_arithmetic(q, n, m):
    # per mille integers: n (1000 - 1000 q) >= 1000 m, no floating point at all
    pm = round(q * 1000)
    assert tail_supported(n, q, m) is (n * (1000 - pm) >= 1000 * m)
    assert tail_supported(n - 1, q, m) is ((n - 1) * (1000 - pm) >= 1000 * m)
    assert tail_needed_n(q, m) == -(-1000 * m // (1000 - pm))
    assert tail_count(n, q) == Fraction(n * (1000 - pm), 1000)


def test_parsed_levels_are_exact_too():
    # p99.9 parses to 0.9990000000000001 in floating point; 10000 requests still carry it
    q = parse_statistic("p99.9")
    assert tail_supported(10000, q, 10) and not tail_supported(9999, q, 10)


def test_small_n_flag_at_the_boundary():
    assert R.small_n(cells_frame([cell(statistic="p90", n_obs=100)]), thresholds=DEFAULT) == []
    f = R.small_n(cells_frame([cell(statistic="p90", n_obs=99)]), thresholds=DEFAULT)
    ev = f[0].evidence()["cells"][0]
    assert ev["needed_n"] == 100 and ev["beyond_quantile"] == pytest.approx(9.9)
    assert R.small_n(cells_frame([cell(statistic="p99", n_obs=1000)]), thresholds=DEFAULT) == []
    assert R.small_n(cells_frame([cell(statistic="p90", n_obs=50)]), thresholds=Thresholds(min_tail_obs=5)) == []


def _analyse(tmp_path, n_requests: int) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    runs = write_request_runs(
        tmp_path / "runs", [request_run("s1", 1, request_records(rng, n_requests), role="incumbent")]
    )
    out = tmp_path / "out"
    assert main(["analyse", str(runs), "--out", str(out), "--quiet"]) == 0
    return pd.read_csv(out / "tables" / "cells.csv")


@pytest.mark.parametrize("n,kept", [(100, True), (99, False)])
def test_cli_keeps_p90_at_100_requests(tmp_path, n, kept):
    c = _analyse(tmp_path, n)
    ttft = c[c["metric"] == "ttft_ms"]
    assert ("p90" in set(ttft["statistic"])) is kept
    if kept:
        row = ttft[ttft["statistic"] == "p90"].iloc[0]
        v = np.sort([r["ttft_ms"] for r in request_records(np.random.default_rng(7), n)])
        assert row["estimate"] == pytest.approx(np.quantile(v, 0.9, method="median_unbiased"))  # issue 43
        assert row["n_obs"] == 100 and not str(row["within_method"]).startswith("none")
        assert np.isfinite(row["within_low"]) and np.isfinite(row["within_high"])


def test_cli_flags_a_reported_p90_of_99_not_of_100(tmp_path):
    def run(n, pass_):
        return {
            "format": "benchreport.run/1",
            "run_id": f"s{n}-p{pass_}",
            "date": "2026-12-01",
            "seat": {"id": f"s{n}", "model": "Model-A"},
            "harness": {"name": "in-house"},
            "pass": pass_,
            "warmup_excluded": True,
            "measurements": [
                {
                    "workload": "decode",
                    "concurrency": 1,
                    "metric": "ttft_ms",
                    "statistic": "p90",
                    "value": 50.0 + pass_,
                    "unit": "ms",
                    "n": n,
                    "ci_low": 45.0,
                    "ci_high": 60.0,
                }
            ],
        }

    folder = write_request_runs(tmp_path / "runs", [run(n, 1) for n in (99, 100)])
    out = subprocess.run(
        [sys.executable, "-m", "benchreport", "flags", str(folder), "--json", "--quiet"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    small = [f for f in json.loads(out) if f["code"] == "sample.small_n"]
    assert [f["seats"] for f in small] == [["s99"]]
