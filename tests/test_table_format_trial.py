"""benchmarks/table_format_trial.py (issue 44): it skips without its packages, and its SQL for the
pass-level figures gives benchreport's own pass values (the tails: Hyndman & Fan definition 8)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import table_format_trial as trial  # noqa: E402

from benchreport.columns import REQUEST_METRICS  # noqa: E402
from benchreport.stats.common import median_unbiased_sorted  # noqa: E402
from benchreport.stats.requests import FrameSource, estimate_key  # noqa: E402


def test_skips_with_a_clear_message_when_a_package_is_missing(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(trial, "REQUIRED", ("duckdb", "no_such_package_issue44"))
    assert trial.main([str(tmp_path), "--work", str(tmp_path / "work")]) == 0
    said = capsys.readouterr().out
    assert "skipped, not installed: no_such_package_issue44" in said
    assert not (tmp_path / "work").exists()  # nothing was tried


def _requests(seed: int = 7) -> pd.DataFrame:
    """Request records of groups of 1 to 250 requests, some failed, some without an ITL."""
    rng = np.random.default_rng(seed)
    rows = []
    for g, n in enumerate([1, 2, 3, 9, 10, 11, 57, 100, 199, 250]):
        for i in range(n):
            ttft = rng.lognormal(4.0, 0.6)
            out = int(rng.integers(1, 300))
            rows.append(
                {
                    "run_id": f"run-{g}",
                    "seat": "seat-a",
                    "date": "2026-01-01",
                    "day": pd.Timestamp("2026-01-01"),
                    "pass": 1 + g % 3,
                    "workload": "decode",
                    "concurrency": 4,
                    "output_tokens": out,
                    "ttft_ms": ttft,
                    "e2e_latency_ms": ttft + out * rng.lognormal(2.5, 0.2),
                    "itl_ms": np.nan if i % 5 == 0 else rng.lognormal(2.5, 0.3),
                    "finish_reason": "error" if (i % 13 == 4 and n > 3) else "stop",
                    "error": None,
                    "start_ms": float(i),
                }
            )
    return pd.DataFrame(rows)


def test_sql_pass_figures_equal_benchreport_pass_values():
    duckdb = pytest.importorskip("duckdb")
    requests = _requests()
    con = duckdb.connect()
    con.register("requests_frame", requests)
    got = trial.pass_figures(con, "requests_frame", "true").set_index(["run_id", "metric"])
    compared = 0
    for summary in FrameSource(requests).summaries():
        for metric in REQUEST_METRICS:
            if metric not in summary.stats:
                continue
            values, n, _ = summary.stats[metric]
            row = got.loc[(summary.key[0], metric)]
            assert row["n"] == n
            for stat in trial.STATS:
                want = values[estimate_key(stat)]
                if stat in trial.TAIL_Q:  # definition 8, the same arithmetic: bit-identical
                    assert row[stat] == want, (summary.key, metric, stat)
                else:  # avg and quantile_cont: another summation order / interpolation formula
                    assert row[stat] == pytest.approx(want, rel=1e-14, abs=0), (summary.key, metric, stat)
                compared += 1
    # 10 groups x 4 metrics, less the ITL of the one-request group (its request has none)
    assert compared == 39 * len(trial.STATS)
    assert len(got) == 39  # and the SQL has no group benchreport does not
    # the tail by definition 7 is another number on small groups: the check can fail
    small = got.loc[("run-3", "ttft_ms")]
    assert small["p90_cont"] != small["p90"]


def test_the_documented_hf8_macros_are_numpys_median_unbiased_quantile():
    """docs/store.md's `hf8` macros, run as printed, against numpy's method="median_unbiased"
    (Hyndman & Fan definition 8) on samples of 1 to 300 values, and bit-identical to
    benchreport's pass estimate of a tail."""
    import re

    duckdb = pytest.importorskip("duckdb")
    text = (ROOT / "docs" / "store.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```sql\n(.*?)```", text, re.S) if "MACRO hf8" in b)
    con = duckdb.connect()
    for statement in block.split(";"):
        if "CREATE" in statement:
            con.execute(statement).fetchall()
    rng = np.random.default_rng(43)
    for n in [1, 2, 3, 7, 10, 29, 100, 101, 200, 300]:
        x = rng.lognormal(3.0, 0.8, n)
        con.register("sample", pd.DataFrame({"x": x}))
        for q in (0.5, 0.9, 0.95, 0.99):
            got = con.execute(f"SELECT hf8(list_sort(list(x)), count(*), {q}) FROM sample").fetchall()[0][0]
            # numpy interpolates by another formula above the midpoint: equal within rounding
            assert got == pytest.approx(float(np.quantile(x, q, method="median_unbiased")), rel=1e-14, abs=0)
            assert got == median_unbiased_sorted(np.sort(x), q)  # benchreport's own: the same bits
