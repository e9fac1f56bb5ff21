"""A folder of mixed harness outputs loads end to end: every format, twins skipped, nothing twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchreport.load import load
from harness_oracle import FOLDERS, HARNESS
from benchreport.tables import build_tables

#: harness name in the runs table -> the oracle `tool` of its folders
ORACLE_TOOLS = {"aiperf": "aiperf", "genai-perf": "genai-perf", "vllm bench serve": "vllm"}


def _oracle_runs(tool: str) -> int:
    """Result files (run entries) the `expected.json` oracles of `tool` list in FOLDERS."""
    n = 0
    for folder in FOLDERS:
        for oracle in folder.rglob("expected.json"):
            doc = json.loads(oracle.read_text())
            if doc["tool"] == tool:
                n += sum(1 for e in doc["results"] if e.get("phase") in (None, "profiling"))
    return n


def _invocations() -> Counter:
    """Harness invocations x passes/trials, counted from the captured files and the oracles."""
    n = Counter({name: _oracle_runs(tool) for name, tool in ORACLE_TOOLS.items()})
    n["vllm bench serve"] += len(list((HARNESS / "vllm").rglob("*.json")))
    n["guidellm"] = sum(len(list(d.rglob("benchmarks.json"))) for d in FOLDERS if d.name.startswith("guidellm"))
    n["aiperf"] += sum(
        1 for p in (HARNESS / "aiperf").rglob("profile_export_aiperf.json") if p.parent.parent.name != "phases"
    )
    n["lm-evaluation-harness"] = len(list((HARNESS / "lmeval").rglob("results_*.json")))
    return n


@pytest.fixture(scope="module")
def loaded():
    result = load(FOLDERS)
    return result, build_tables(result)


def test_every_format_loads_and_nothing_is_counted_twice(loaded):
    result, tables = loaded
    assert not result.refused, [str(r) for r in result.refused]
    expected = _invocations()
    assert all(expected.values()), expected
    assert Counter(lr.run.harness.name for lr in result.runs) == expected
    assert len(tables.runs) == sum(expected.values())
    assert tables.runs.run_id.is_unique


def test_twins_and_side_files_are_skipped_not_refused(loaded):
    result, _ = loaded
    skipped = {Path(s.path).relative_to(HARNESS).as_posix() for s in result.skipped}
    assert any(p.startswith("guidellm/") and p.endswith(".yaml") for p in skipped)
    assert any(p.endswith("profile_export_aiperf_aggregate.json") for p in skipped)
    assert any("phases/warmup/" in p and p.endswith(".json") for p in skipped)
    assert any(p.endswith("inputs.json") for p in skipped)
    loaded_files = {Path(lr.source_file).relative_to(HARNESS).as_posix() for lr in result.runs}
    assert not loaded_files & skipped


def test_request_counts_match_the_harnesses_own_counts(loaded):
    """No double counting of requests: per run with request records, the harness's own count of
    successful requests (failed ones are records too, with their error)."""
    result, tables = loaded
    per_run = tables.requests[tables.requests.error.isna()].groupby("run_id").size()
    for lr in result.runs:
        if not lr.run.requests:
            continue
        doc = _doc_of(lr)
        name = lr.run.harness.name
        if name == "vllm bench serve":
            expected = doc["completed"]
        elif name == "guidellm":
            expected = sum(
                (b["metrics"].get("request_totals") or b["request_totals"])["successful"] for b in doc["benchmarks"]
            )
        elif name == "aiperf":
            expected = doc["request_count"]["avg"]
        else:
            continue
        assert per_run.get(lr.run.run_id, 0) == expected, lr.source_file


def _doc_of(lr) -> dict:
    """The harness document a run was read from (its line, for an --append-result file)."""
    text = Path(lr.source_file).read_text()
    try:
        return json.loads(text)
    except ValueError:
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        return lines[int(lr.run.run_id.rsplit("-r", 1)[1]) - 1]


def test_failed_requests_are_request_records_with_their_error(loaded):
    """Every harness error reaches the request table: finish_reason error and the error text."""
    _, tables = loaded
    req = tables.requests
    failed = req[req.finish_reason == "error"]
    assert len(failed) and failed.error.notna().all()
    assert (failed.error.str.len() > 0).all()


def test_send_order_is_kept_where_the_harness_records_it(loaded):
    """start_ms on every request of the harnesses that record when a request was sent: AIPerf's
    records (request_start_ns), GuideLLM (request start time); vLLM only from the releases that
    save start_times (not 0.6/0.7, whose lists are in send order by construction)."""
    result, _ = loaded
    for lr in result.runs:
        timed = [r for r in lr.run.requests or [] if r.ttft_ms is not None or r.e2e_latency_ms is not None]
        if lr.run.harness.name in ("aiperf", "guidellm") and timed:
            assert all(r.start_ms is not None for r in timed), lr.source_file


def test_every_inference_is_stated(loaded):
    _, tables = loaded
    assert tables.runs.assumptions.notna().all()
    assert tables.runs.assumptions.str.contains("seat id inferred from").all()
    assert tables.runs.assumptions.str.contains("pass ").all()
