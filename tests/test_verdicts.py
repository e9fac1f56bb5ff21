"""Issue 11's acceptance checks on whole data sets: identical seats are never called better, a clean
fleet raises no warning, no positive quantity gets a CI below zero, failed requests are named.

The simulation study behind the rates is benchmarks/verdict_study.py (docs/statistics.md); these
tests check single, deterministic data sets end to end through the library and the command line.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from benchreport.load import load
from benchreport.pipeline import Options, analyse
from benchreport.report.model import sections
from benchreport.stats import estimate_cells

try:
    from tests.stats_fixtures import measurement, measurements_frame
except ImportError:
    from stats_fixtures import measurement, measurements_frame

ROOT = Path(__file__).resolve().parents[1]


def write_fleet(
    folder: Path,
    *,
    seats: int,
    passes: int,
    requests: int,
    pass_cv: float = 0.0,
    seed: int = 0,
    failed: dict | None = None,
    model: str = "Same-Model",
) -> Path:
    """Native runs of `seats` seats with identical true performance (seat 0 the incumbent)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    sd = np.sqrt(np.log1p(pass_cv**2))
    for s in range(seats):
        for p in range(1, passes + 1):
            factor = float(np.exp(rng.normal(0, sd))) if pass_cv else 1.0
            reqs = []
            for c in (1, 8):
                ttft = rng.lognormal(np.log(40 * (1 + 0.1 * c)), 0.3, requests)
                speed = 80 * factor * rng.lognormal(0, 0.15, requests) / (1 + 0.05 * c)
                out = rng.integers(200, 400, requests)
                e2e = ttft + (out - 1) / speed * 1000
                for i in range(requests):
                    r = {
                        "workload": "decode",
                        "concurrency": c,
                        "prompt_tokens": 512,
                        "output_tokens": int(out[i]),
                        "ttft_ms": round(float(ttft[i]), 3),
                        "e2e_latency_ms": round(float(e2e[i]), 3),
                        "finish_reason": "stop",
                        "start_ms": float(i * 50),
                    }
                    if failed and s in failed and c == 8 and i < failed[s]:
                        r = {
                            "workload": "decode",
                            "concurrency": c,
                            "prompt_tokens": 9000,
                            "finish_reason": "error",
                            "error": "HTTP 400: prompt longer than the context",
                            "start_ms": float(i * 50),
                        }
                    reqs.append(r)
            run = {
                "format": "benchreport.run/1",
                "run_id": f"s{s}-p{p}",
                "date": "2026-11-20",
                "seat": {
                    "id": f"seat-{s}",
                    "model": model,
                    "role": "incumbent" if s == 0 else "candidate",
                    "engine": "vllm 0.33.0",
                    "checkpoint_bytes": 16e9,
                    "placement": {"nodes": 1, "gpus_per_node": 1, "gpu_memory_bytes": 85899345920},
                    "components": [{"name": "ckpt", "role": "checkpoint", "license": "Apache-2.0"}],
                },
                "harness": {"name": "in-house", "version": "1", "probe": "p-512", "max_tokens": 512},
                "pass": p,
                "warmup_excluded": True,
                "requests": reqs,
            }
            (folder / f"s{s}-p{p}.json").write_text(json.dumps(run), encoding="utf-8")
    return folder


def test_ten_identical_single_pass_seats_give_no_verdict_and_no_winner(tmp_path):
    a = analyse(
        load([str(write_fleet(tmp_path / "f", seats=10, passes=1, requests=200))], progress=False), Options(n_boot=300)
    )
    base = a.comparisons[a.comparisons["kind"] == "baseline"]
    assert len(base) > 100
    assert not base["verdict"].isin(["better", "worse"]).any()
    assert base["within_low"].notna().all()  # the within-run ratios are kept, labelled
    text = re.sub(r"<[^>]+>", "", str(sections.abstract(a)))
    assert "none of the 9 candidates is shown to be better or worse" in text
    assert "best candidate" not in text and " favour the candidate" in text


def test_a_clean_well_sampled_fleet_passes_fail_on_warn(tmp_path):
    folder = write_fleet(tmp_path / "clean", seats=3, passes=5, requests=300, pass_cv=0.01, seed=3)
    out = subprocess.run(
        [sys.executable, "-m", "benchreport", "flags", str(folder), "--fail-on", "warn", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    flags = json.loads(out.stdout)
    assert out.returncode == 0, [(f["code"], f["message"]) for f in flags if f["severity"] != "info"]
    assert not any(f["code"] == "sample.small_n" for f in flags)


def test_failed_requests_are_flagged_and_named_in_the_faults_section(tmp_path):
    folder = write_fleet(tmp_path / "f", seats=2, passes=1, requests=24, failed={1: 14})
    a = analyse(load([str(folder)], progress=False), Options(n_boot=200))
    f = a.flags[a.flags["code"] == "requests.failed"]
    assert len(f) == 1 and f.iloc[0]["severity"] == "critical" and f.iloc[0]["seats"] == ("seat-1",)
    assert "14 of 48 requests in 1 run failed" in f.iloc[0]["message"] and "HTTP 400" in f.iloc[0]["message"]
    text, _table = sections.faults(a)
    assert "14 of 48 requests in 1 run failed" in str(text) and "no request failed" not in str(text)
    cell = a.cells[
        (a.cells["seat"] == "seat-1")
        & (a.cells["concurrency"] == 8)
        & (a.cells["metric"] == "ttft_ms")
        & (a.cells["statistic"] == "mean")
    ].iloc[0]
    assert cell["n_obs"] == 10 and cell["n_failed"] == 14


def test_failures_in_some_runs_are_said_as_theirs_not_the_seats(tmp_path):
    """Issue 26: 25 of 208 requests failed in each of 2 of a seat's 5 runs (1,040 requests): the
    sentence names the 2 runs and their share of the seat's requests, and tells not to quote those
    runs' figures, not "these figures" of the whole seat."""
    folder = write_fleet(tmp_path / "f", seats=1, passes=5, requests=104)
    for p in (1, 2):
        path = folder / f"s0-p{p}.json"
        run = json.loads(path.read_text())
        bad = [r for r in run["requests"] if r["concurrency"] == 8][:25]
        for r in bad:
            r.update(finish_reason="error", error="HTTP 400: prompt longer than the context")
            r.pop("ttft_ms"), r.pop("e2e_latency_ms")
        path.write_text(json.dumps(run))
    a = analyse(load([str(folder)], progress=False), Options(n_boot=100))
    f = a.flags[a.flags["code"] == "requests.failed"].iloc[0]
    assert f["severity"] == "critical"  # 12% of each run: above failed_critical
    msg = f["message"]
    assert msg.startswith("seat-0: 50 of 416 requests in 2 runs failed (4.8% of the seat's 1,040 requests in 5 runs)")
    assert "do not quote their figures" in msg and "The seat's other 3 runs had no failed request." in msg
    assert "do not quote these figures" not in msg
    assert f["evidence"]["seat_requests"] == 1040 and f["evidence"]["seat_runs"] == 5


def test_failures_in_every_run_of_a_seat_are_the_seats(tmp_path):
    folder = write_fleet(tmp_path / "f", seats=1, passes=2, requests=24, failed={0: 14})
    a = analyse(load([str(folder)], progress=False), Options(n_boot=100))
    msg = a.flags[a.flags["code"] == "requests.failed"].iloc[0]["message"]
    assert msg.startswith("seat-0: 28 of 96 requests in 2 runs failed:") and "of the seat's" not in msg
    assert msg.endswith("do not quote these figures.")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1.0, max_value=1e5), min_size=3, max_size=6))
def test_no_interval_of_a_positive_quantity_goes_below_zero(values):
    ms = measurements_frame(
        [
            measurement("A", "2026-09-10", p + 1, "decode", "output_tok_s", v, concurrency=16)
            for p, v in enumerate(values)
        ]
    )
    c = estimate_cells(ms).cells.iloc[0]
    assert pd.isna(c["ci_low"]) or c["ci_low"] > 0
    assert c["min"] == min(values) and c["max"] == max(values)


def test_the_fleet_papers_three_swinging_passes_show_median_and_range():
    a = analyse(load([str(ROOT / "data" / "example")], progress=False), Options(n_boot=300))
    exl3 = a.cells[(a.cells["seat"] == "glm-5.3-flash-exl3-4.0bpw-1node") & (a.cells["metric"] == "output_tok_s")]
    assert (exl3["ci_low"] > 0).all() and (exl3["n_passes"] == 3).all()
    table = sections.all_cells_table(a).data  # Table 1 has the headline figure, Table A1 every pass
    row = table[table["Per pass, in order"].str.contains("79.4, 91.5, 104", na=False)]
    assert len(row) == 1 and "median 91.5, range 79.4–104" in row["Per pass, in order"].iloc[0]
