"""What the flags say must be what the data show (issue 26): drift in its direction and with its
harness, a statistic the source did not state, and exam counts never invented from a score
that is no whole number of items. Everything through the CLI (`benchreport flags --json`,
`benchreport analyse`) on native run files."""

from __future__ import annotations

import csv
import json

import pytest
from scipy.stats import fisher_exact

from benchreport.cli import main
from runs import make_run, write_run


def _flags(capsys, folder) -> list[dict]:
    capsys.readouterr()
    main(["flags", str(folder), "--json", "--quiet"])
    return json.loads(capsys.readouterr().out)


def _three_passes(folder, metric: str, unit: str, values, harness: str = "vllm bench serve"):
    for p, v in enumerate(values, start=1):
        run = make_run(run_id=f"r{p}", **{"pass": p})
        run["harness"] = {**run["harness"], "name": harness}
        run["measurements"] = [{"workload": "decode", "concurrency": 16, "metric": metric, "value": v, "unit": unit}]
        write_run(folder, f"r{p}.json", run)


@pytest.mark.parametrize(
    "metric, unit, values, better",
    [
        ("output_tok_s", "tok/s", [700.0, 800.0, 900.0], True),  # throughput rising: a warm-up
        ("output_tok_s", "tok/s", [900.0, 800.0, 700.0], False),  # throughput falling: no warm-up does that
        ("ttft_ms", "ms", [300.0, 250.0, 200.0], True),  # latency falling: a warm-up
        ("ttft_ms", "ms", [200.0, 250.0, 300.0], False),  # latency rising
    ],
)
def test_drift_says_its_direction_and_its_harness(tmp_path, capsys, metric, unit, values, better):
    _three_passes(tmp_path, metric, unit, values)
    (flag,) = [f for f in _flags(capsys, tmp_path) if f["code"] == "drift.warmup"]
    msg = flag["message"]
    assert "(vllm bench serve)" in msg
    change = (values[-1] - values[0]) / values[0]
    assert f"{change:+.0%}".replace("-", "−") in msg or f"{change:+.0%}" in msg
    if better:
        assert "better each pass" in msg and "as a warm-up does" in msg and "worse" not in msg
    else:
        assert "worse each pass" in msg and "which a warm-up does not do" in msg and "as a warm-up does" not in msg


def test_a_statistic_the_source_does_not_state_is_not_called_a_mean(tmp_path, capsys):
    runs = tmp_path / "runs"
    base = make_run(run_id="base")
    write_run(runs, "base.json", base)  # TTFT p50 35 ms at 1 stream
    cand = make_run(run_id="cand")
    cand["seat"] = {**cand["seat"], "id": "cand-x", "role": "candidate"}
    cand["measurements"] = [
        {
            "workload": "decode",
            "concurrency": 1,
            "metric": "ttft_ms",
            "statistic": "not_stated",
            "value": 226,
            "unit": "ms",
        }
    ]
    write_run(runs, "cand.json", cand)
    out = tmp_path / "out"
    assert main(["analyse", str(runs), "--out", str(out), "--quiet"]) == 0
    cells = list(csv.DictReader((out / "tables" / "cells.csv").open(encoding="utf-8")))
    (row,) = [r for r in cells if r["seat"] == "cand-x" and r["metric"] == "ttft_ms"]
    assert row["statistic"] == "not_stated"
    comps = list(csv.DictReader((out / "tables" / "comparisons.csv").open(encoding="utf-8")))
    assert not [r for r in comps if r["metric"] == "ttft_ms"]  # never compared with the p50
    msgs = [f["message"] for f in _flags(capsys, runs) if "cand-x" in f["message"]]
    assert any("time to first token (statistic not stated) at 1 stream" in m for m in msgs), msgs
    assert not any("mean" in m for m in msgs)


def _exam_seats(folder, base_score: float, cand_score: float, total: int = 94):
    for rid, seat, role, score in (("b", "base", "incumbent", base_score), ("c", "cand", "candidate", cand_score)):
        run = make_run(run_id=rid)
        run["seat"] = {**run["seat"], "id": seat, "role": role}
        run["exams"] = [{"benchmark": "frontier", "dimension": "agentic", "score": score, "total": total}]
        write_run(folder, f"{rid}.json", run)


def test_a_score_that_is_no_whole_number_of_items_is_not_tested(tmp_path, capsys):
    """88.2% of 94 items is 82.9 items: no count, no Fisher test of invented counts, and a flag says why."""
    runs = tmp_path / "runs"
    _exam_seats(runs, 96.8, 88.2)  # 96.8% of 94 = 91.0 items (a count); 88.2% is not
    out = tmp_path / "out"
    assert main(["analyse", str(runs), "--out", str(out), "--quiet"]) == 0
    (row,) = csv.DictReader((out / "tables" / "exam_deltas.csv").open(encoding="utf-8"))
    assert row["test"].startswith("none") and row["p_value"] == "" and row["diff_ci_low"] == ""
    flags = [f for f in _flags(capsys, runs) if f["code"] == "exam.score_not_a_count"]
    assert [f["seats"] for f in flags] == [["cand"]]
    assert "score 88.2 on a 0-100 scale of 94 items is 82.9 items" in flags[0]["message"]
    assert "not tested" in flags[0]["message"]


def test_a_score_that_is_a_share_of_its_items_is_tested_as_counts(tmp_path, capsys):
    """96.8% and 88.3% of 94 are 91 and 83 items (to the printed decimal): Fisher's test, as scipy gives it."""
    runs = tmp_path / "runs"
    _exam_seats(runs, 96.8, 88.3)
    out = tmp_path / "out"
    assert main(["analyse", str(runs), "--out", str(out), "--quiet"]) == 0
    (row,) = csv.DictReader((out / "tables" / "exam_deltas.csv").open(encoding="utf-8"))
    assert (int(row["baseline_correct"]), int(row["candidate_correct"])) == (91, 83)
    want = fisher_exact([[91, 3], [83, 11]]).pvalue
    assert float(row["p_value"]) == pytest.approx(want, rel=1e-9)
    assert not [f for f in _flags(capsys, runs) if f["code"] == "exam.score_not_a_count"]


def test_the_example_ttft_without_a_statistic_is_said_so(capsys):
    """The fleet paper gives the cross-node TTFT (226 / 466 / 626 / 796 ms) without a statistic."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "data" / "example"
    flags = _flags(capsys, example)
    assert any(
        "is a p50 for qwen3.8-flash-next-tp2 but a figure of no stated statistic for "
        "glm-5.3-flash-nvfp4-tp4-2node" in f["message"]
        for f in flags
    )
    assert {tuple(f["seats"]) for f in flags if f["code"] == "exam.score_not_a_count"} == {
        ("glm-5.3-flash-exl3-4.0bpw-1node",),
        ("qwen3.8-flash-next-tp2",),
    }
