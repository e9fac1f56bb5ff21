"""AIPerf's multi-run layouts beyond the 0.13 capture (issue 40): each file read or skipped with its
reason, passes from AIPerf's own run numbering, aggregates and collated exports never passes.

Built in a temporary folder from the real AIPerf 0.13.0 capture `aiperf/c1/` (`--num-profile-runs
3`), in the shapes AIPerf's source writes: `profile_export_aiperf_collated.json` (its
AggregateDetailedJsonExporter: schema_version, description, metadata.aggregation_type, metrics),
`profile_export_raw.jsonl` (its RawRecordInfo: metadata, start_perf_ns, payload, status,
responses, error), an aggregate written beside `run_NNNN` folders rather than in `aggregate/`,
exports without `run_info`, and metric blocks nested under `metrics` beside `warmup_metrics`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchreport.load import load

C1 = Path(__file__).parent / "fixtures" / "harness" / "aiperf" / "c1"
RUNS = ("run_0001", "run_0002", "run_0003")


@pytest.fixture
def c1(tmp_path) -> Path:
    dest = tmp_path / "c1"
    shutil.copytree(C1, dest)
    return dest


def _export(folder: Path) -> dict:
    return json.loads((folder / "profile_export_aiperf.json").read_text())


def _skips(result) -> dict[str, str]:
    return {Path(s.path).name: s.reason for s in result.skipped}


def test_collated_export_is_skipped_never_a_pass_nor_checked_as_an_aggregate(c1):
    collated = {
        "schema_version": "1.0.0",
        "aiperf_version": "0.14.0",
        "description": "Collated per-request metrics across all runs. Pools individual request-level "
        "values from every run into a single population.",
        "metadata": {
            "aggregation_type": "detailed",
            "num_profile_runs": 3,
            "num_successful_runs": 3,
            "failed_runs": [],
        },
        "metrics": {"time_to_first_token": {"unit": "ms", "avg": 1.0e6, "p50": 1.0e6, "count": 36}},
    }
    (c1 / "aggregate" / "profile_export_aiperf_collated.json").write_text(json.dumps(collated))
    result = load([c1])
    assert not result.refused
    assert "AIPerf collated export" in _skips(result)["profile_export_aiperf_collated.json"]
    assert sorted(lr.run.pass_ for lr in result.runs) == [1, 2, 3]
    assert not any(lr.checks for lr in result.runs)  # its pooled 1e6 ms is no figure any trial is checked by


def test_raw_export_is_skipped_with_its_reason(c1):
    recs = [
        json.loads(line)
        for line in (c1 / "profile_runs" / "run_0001" / "profile_export.jsonl").read_text().splitlines()[:3]
    ]
    raw = [
        {
            "metadata": r["metadata"],
            "start_perf_ns": 1000 + i,
            "payload": {"messages": []},
            "status": 200,
            "responses": [{"perf_ns": 2000 + i, "text": "data: {}"}],
        }
        for i, r in enumerate(recs)
    ]
    (c1 / "profile_runs" / "run_0001" / "profile_export_raw.jsonl").write_text(
        "\n".join(json.dumps(r) for r in raw) + "\n"
    )
    result = load([c1])
    assert not result.refused, [str(r) for r in result.refused]
    assert "raw request/response export" in _skips(result)["profile_export_raw.jsonl"]
    assert len(result.runs) == 3


def test_passes_from_run_info_trial_and_else_from_the_run_folder(c1):
    result = load([c1])
    for lr in result.runs:
        trial = _export(Path(lr.source_file).parent)["run_info"]["trial"]
        assert lr.run.pass_ == trial + 1
        assert any("from AIPerf's trial number" in a for a in lr.assumptions)
    for run in RUNS:  # an export without run_info: the folder's number
        doc = _export(c1 / "profile_runs" / run)
        doc.pop("run_info")
        (c1 / "profile_runs" / run / "profile_export_aiperf.json").write_text(json.dumps(doc))
    result = load([c1])
    got = {Path(lr.source_file).parent.name: lr for lr in result.runs}
    assert {k: v.run.pass_ for k, v in got.items()} == {"run_0001": 1, "run_0002": 2, "run_0003": 3}
    assert all(any("from AIPerf's run folder" in a for a in v.assumptions) for v in got.values())


def test_an_aggregate_beside_its_run_folders_is_a_check_not_a_pass(c1, tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    for run in RUNS:
        shutil.copytree(c1 / "profile_runs" / run, flat / run)
    shutil.copy(c1 / "aggregate" / "profile_export_aiperf_aggregate.json", flat)
    proc = subprocess.run([sys.executable, "-m", "benchreport", "validate", str(flat)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "profile_export_aiperf_aggregate.json: skipped: AIPerf aggregate over trials" in proc.stdout + proc.stderr
    result = load([flat])
    assert sorted(lr.run.pass_ for lr in result.runs) == [1, 2, 3]
    assert all("checked against AIPerf's aggregate over trials" in lr.run.notes for lr in result.runs)
    # a trial missing from beside the aggregate is seen
    shutil.rmtree(flat / "run_0003")
    result = load([flat])
    assert any(c["metric"] == "trials" for lr in result.runs for c in lr.checks)


def test_metric_blocks_nested_under_metrics_beside_warmup_metrics(c1):
    folder = c1 / "profile_runs" / "run_0002"
    doc = _export(folder)
    blocks = {k: v for k, v in doc.items() if isinstance(v, dict) and "unit" in v and "avg" in v}
    nested = {k: v for k, v in doc.items() if k not in blocks}
    nested.update(
        schema_version="2.0", metrics=blocks, warmup_metrics={"request_count": {"unit": "requests", "avg": 2}}
    )
    (folder / "profile_export_aiperf.json").write_text(json.dumps(nested))
    result = load([c1])
    assert not result.refused
    lr = next(lr for lr in result.runs if Path(lr.source_file).parent.name == "run_0002")
    ttft = next(m for m in lr.run.measurements if m.metric == "ttft_ms" and m.statistic == "mean")
    assert ttft.value == pytest.approx(blocks["time_to_first_token"]["avg"])
    assert lr.run.warmup_excluded is True
    assert not [m for m in lr.run.measurements if m.n == 2]  # the warm-up figures are never read
