"""AIPerf / GenAI-Perf exports: one run per artifact folder or trial, twins and warm-up skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchreport.load import load
from benchreport.tables import build_tables

FIXTURES = Path(__file__).parent / "fixtures" / "harness" / "aiperf"
#: every artifact folder with a root summary (not a phases/ copy)
SUMMARIES = sorted(p for p in FIXTURES.rglob("profile_export_aiperf.json") if p.parent.parent.name != "phases")


@pytest.fixture(scope="module")
def loaded():
    result = load([FIXTURES])
    return result, build_tables(result)


def _run_of(result, summary):
    return next(r for r in result.runs if r.source_file == str(summary))


def test_fixtures_present():
    assert SUMMARIES, "the captured AIPerf fixtures are missing"


def test_one_run_per_artifact_folder_or_trial(loaded):
    result, _ = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert len(result.runs) == len(SUMMARIES)
    assert {r.source_file for r in result.runs} == {str(p) for p in SUMMARIES}
    reasons = {Path(s.path).relative_to(FIXTURES).as_posix(): s.reason for s in result.skipped}
    for path, reason in reasons.items():
        if path.endswith("profile_export_aiperf_aggregate.json"):
            assert "duplicates its trials" in reason
        elif "phases/warmup/" in path and path.endswith(".json"):
            assert reason.startswith("AIPerf warm-up phase export")
        elif "phases/profiling/" in path and path.endswith(".json"):
            assert "read once" in reason
    assert any(p.endswith("inputs.json") for p in reasons)


@pytest.mark.parametrize("summary", SUMMARIES, ids=lambda p: p.parent.relative_to(FIXTURES).as_posix())
def test_requests_reproduce_aiperf_summary(loaded, summary):
    """numpy over the imported (profiling) requests reproduces AIPerf's own figures.

    AIPerf computes avg and percentiles with numpy (linear interpolation) over the same
    per-request values in the same unit: 1e-9 relative.
    """
    doc = json.loads(summary.read_text())
    result, tables = loaded
    run = _run_of(result, summary)
    req = tables.requests[tables.requests.run_id == run.run.run_id]
    ok = req[req.error.isna()]
    assert len(ok) == doc["request_count"]["avg"]  # warm-up records left out, nothing twice
    for col, tag in (
        ("ttft_ms", "time_to_first_token"),
        ("e2e_latency_ms", "request_latency"),
        ("itl_ms", "inter_token_latency"),
    ):
        assert np.mean(ok[col]) == pytest.approx(doc[tag]["avg"], rel=1e-9)
        assert np.median(ok[col]) == pytest.approx(doc[tag]["p50"], rel=1e-9)
        assert np.percentile(ok[col], 90) == pytest.approx(doc[tag]["p90"], rel=1e-9)
    assert ok.output_tokens.sum() == doc["total_osl"]["avg"]  # delivered tokens include reasoning
    # prompt tokens: the server's usage counts when present (they go with its cached counts)
    total_prompt = doc.get("total_usage_prompt_tokens", doc["total_isl"])["avg"]
    assert ok.prompt_tokens.sum() == total_prompt


@pytest.mark.parametrize("summary", SUMMARIES, ids=lambda p: p.parent.relative_to(FIXTURES).as_posix())
def test_measurements_are_the_files_figures(loaded, summary):
    doc = json.loads(summary.read_text())
    result, tables = loaded
    run = _run_of(result, summary)
    m = tables.measurements[tables.measurements.run_id == run.run.run_id]
    got = {(r.metric, r.statistic): r.value for r in m.itertuples()}
    assert got[("ttft_ms", "mean")] == doc["time_to_first_token"]["avg"]
    assert got[("ttft_ms", "p50")] == doc["time_to_first_token"]["p50"]
    assert got[("itl_ms", "p99")] == doc["inter_token_latency"]["p99"]
    assert got[("output_tok_s", "mean")] == doc["output_token_throughput"]["avg"]
    assert got[("request_rate", "mean")] == doc["request_throughput"]["avg"]
    assert got[("decode_tok_s_per_stream", "mean")] == doc["output_token_throughput_per_user"]["avg"]
    phase = next(p for p in doc["input_config"]["phases"] if p["kind"] == "profiling")
    assert set(m.concurrency) == {phase["concurrency"]}


def test_reasoning_and_cached_tokens_reach_the_requests_table(loaded):
    result, tables = loaded
    for summary in SUMMARIES:
        doc = json.loads(summary.read_text())
        req = tables.requests[tables.requests.run_id == _run_of(result, summary).run.run_id]
        if "total_reasoning_tokens" in doc:
            assert req.reasoning_tokens.sum() == doc["total_reasoning_tokens"]["avg"]
        if "usage_prompt_cache_read_tokens" in doc:
            block = doc["usage_prompt_cache_read_tokens"]
            assert req.cached_prompt_tokens.notna().sum() == block["count"]
            assert req.cached_prompt_tokens.sum() == block["sum"]
        assert (req.reasoning_tokens <= req.output_tokens).all()


def test_trials_are_passes_and_warmup_is_excluded(loaded):
    result, tables = loaded
    trials = sorted((lr for lr in result.runs if "profile_runs" in lr.source_file), key=lambda r: r.source_file)
    if not trials:
        pytest.skip("no multi-run capture")
    assert [t.run.pass_ for t in trials] == list(range(1, len(trials) + 1))
    assert all(t.run.warmup_excluded for t in trials)
    assert "warm-up record(s)" in (trials[0].run.notes or "")


def test_summary_and_records_pair_under_neutral_names(tmp_path):
    summary = next(s for s in SUMMARIES if (s.parent / "profile_export.jsonl").exists())
    shutil.copy(summary, tmp_path / "a.json")
    shutil.copy(summary.parent / "profile_export.jsonl", tmp_path / "b.jsonl")
    result = load([tmp_path])
    assert not result.refused and len(result.runs) == 1
    run = result.runs[0].run
    assert run.measurements and run.requests
    doc = json.loads(summary.read_text())
    assert len(run.requests) == doc["request_count"]["avg"]


def test_records_alone_load_with_a_manifest(tmp_path):
    summary = next(s for s in SUMMARIES if (s.parent / "profile_export.jsonl").exists())
    shutil.copy(summary.parent / "profile_export.jsonl", tmp_path / "records.jsonl")
    bare = load([tmp_path])  # no model in the records: a seat named after the folder, never a refusal
    assert not bare.refused and bare.runs[0].run.seat.id == tmp_path.name
    (tmp_path / "benchreport.yaml").write_text("runs:\n  - files: '*.jsonl'\n    seat: {id: s1, model: tiny}\n")
    result = load([tmp_path])
    assert not result.refused and result.runs[0].run.seat.id == "s1"
    assert result.runs[0].run.requests


def test_genai_perf_summary_from_the_source(tmp_path):
    """GenAI-Perf's profile_export_genai_perf.json (genai_perf/export_data/json_exporter.py: the
    Statistics dict with units, plus input_config)."""
    blk = lambda unit, v: {
        "unit": unit,
        "avg": v,
        "p50": v,
        "p90": v,
        "p95": v,
        "p99": v,
        "min": v,  # noqa: E731
        "max": v,
        "std": 0.0,
    }
    doc = {
        "request_throughput": {"unit": "requests/sec", "avg": 3.5},
        "request_latency": blk("ms", 900.0),
        "time_to_first_token": blk("ms", 40.0),
        "inter_token_latency": blk("ms", 8.0),
        "output_token_throughput": {"unit": "tokens/sec", "avg": 420.0},
        "output_token_throughput_per_user": blk("tokens/sec/user", 125.0),
        "output_sequence_length": blk("tokens", 120.0),
        "input_sequence_length": blk("tokens", 550.0),
        "input_config": {
            "model_names": ["meta/llama-3.1-8b"],
            "endpoint": {"type": "chat", "streaming": True},
            "perf_analyzer": {"stimulus": {"concurrency": 8}, "warmup_request_count": 10},
        },
    }
    (tmp_path / "profile_export_genai_perf.json").write_text(json.dumps(doc))
    (tmp_path / "profile_export.json").write_text(
        json.dumps(
            {
                "service_kind": "openai",
                "endpoint": "v1/chat/completions",
                "experiments": [{"experiment": {"mode": "concurrency", "value": 8}, "requests": []}],
            }
        )
    )
    result = load([tmp_path])
    assert not result.refused
    lr = result.runs[0]
    assert lr.run.harness.name == "genai-perf" and lr.run.seat.model == "meta/llama-3.1-8b"
    assert {m.concurrency for m in lr.run.measurements} == {8}
    assert lr.run.warmup_excluded is True
    assert any("modification time" in a for a in lr.assumptions)
    assert "perf_analyzer raw export" in next(s.reason for s in result.skipped)


def test_older_aiperf_layout_from_the_source(tmp_path):
    """AIPerf 0.1-0.3 (aiperf/common/models/export_models.py): no schema_version, loadgen config."""
    doc = {
        "request_throughput": {"unit": "requests/sec", "avg": 2.0},
        "time_to_first_token": {"unit": "ms", "avg": 30.0, "p50": 30.0, "p99": 31.0},
        "request_count": {"unit": "requests", "avg": 1.0},
        "input_config": {
            "endpoint": {"model_names": ["m-1"], "streaming": True},
            "loadgen": {"concurrency": 2, "warmup_request_count": 0},
        },
        "start_time": "2025-10-01T10:00:00",
        "end_time": "2025-10-01T10:01:00",
    }
    rec = {
        "metadata": {
            "session_num": 0,
            "request_start_ns": 1759312800000000000,
            "request_end_ns": 1759312800500000000,
            "benchmark_phase": "profiling",
        },
        "metrics": {
            "time_to_first_token": {"value": 30.0, "unit": "ms"},
            "request_latency": {"value": 500.0, "unit": "ms"},
            "output_sequence_length": {"value": 12, "unit": "tokens"},
            "input_sequence_length": {"value": 100, "unit": "tokens"},
        },
        "error": None,
    }
    err = {
        "metadata": dict(rec["metadata"], session_num=1),
        "metrics": {"error_isl": {"value": 100, "unit": "tokens"}},
        "error": {"code": 500, "type": "ServerError", "message": "overloaded"},
    }
    (tmp_path / "profile_export_aiperf.json").write_text(json.dumps(doc))
    (tmp_path / "profile_export.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(err) + "\n")
    result = load([tmp_path])
    assert not result.refused
    run = result.runs[0].run
    assert run.harness.name == "aiperf" and run.date == "2025-10-01T10:00:00"
    assert run.warmup_excluded is False and {m.concurrency for m in run.measurements} == {2}
    assert run.requests[1].error == "ServerError (code 500): overloaded"
    assert run.requests[1].prompt_tokens == 100


def test_multi_phase_workflow_is_read_phase_by_phase(tmp_path):
    """Several profiling phases (docs/tutorials/multi-phase-workflows.md): the root export blends
    them, so each phases/<name>/ export is a run, with its own concurrency and records."""
    src = next(
        s
        for s in SUMMARIES
        if (s.parent / "phase_manifest.json").exists() and (s.parent / "profile_export.jsonl").exists()
    )
    run = tmp_path / "run"
    shutil.copytree(src.parent, run)
    root = json.loads((run / src.name).read_text())
    prof = next(p for p in root["input_config"]["phases"] if p["kind"] == "profiling")
    storm = dict(prof, name="storm", concurrency=prof["concurrency"] * 2)
    root["input_config"]["phases"].append(storm)
    (run / src.name).write_text(json.dumps(root))
    (run / "phases" / "storm").mkdir()
    shutil.copy(
        run / "phases" / "profiling" / "profile_export_aiperf.json",
        run / "phases" / "storm" / "profile_export_aiperf.json",
    )
    recs = [json.loads(line) for line in (run / "profile_export.jsonl").read_text().splitlines()]
    prof_recs = [r for r in recs if r["metadata"]["benchmark_phase"] == "profiling"]
    for r in prof_recs[: len(prof_recs) // 2]:
        r["metadata"]["phase_name"] = "storm"
    (run / "profile_export.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    result = load([tmp_path])
    assert not result.refused, [str(r) for r in result.refused]
    assert len(result.runs) == 2
    by_conc = {r.run.measurements[0].concurrency: r.run for r in result.runs}
    assert set(by_conc) == {prof["concurrency"], storm["concurrency"]}
    assert by_conc[storm["concurrency"]].measurements[0].workload == "decode-storm"
    assert sum(len(r.requests) for r in by_conc.values()) == len(prof_recs)
    assert any("blending 2 profiling phases" in s.reason for s in result.skipped)


HARNESS = FIXTURES.parent


def _flags(paths):
    from benchreport.pipeline import Options, analyse

    return analyse(load(paths), Options(n_boot=200)).flags


def test_summary_only_export_keeps_its_failed_requests(tmp_path):
    """`--export-level summary` (no records file) with 14 of 24 failed: the failures the export
    only counts (error_summary) become request rows without timings, beside the 10 successful
    ones, so requests.failed sees 14 of 24; no latency figure changes."""
    run_dir = tmp_path / "run"
    shutil.copytree(HARNESS / "aiperf-errors", run_dir)
    (run_dir / "profile_export.jsonl").unlink()
    result = load([run_dir])
    assert not result.refused, [str(r) for r in result.refused]
    run = result.runs[0].run
    failed = [r for r in run.requests if r.finish_reason == "error"]
    assert len(failed) == 14 and len(run.requests) == 24
    assert all(r.ttft_ms is None and r.e2e_latency_ms is None for r in run.requests)
    assert failed[0].error.startswith("Bad Request (code 400): This model's maximum context length")
    assert "request rows without timings" in run.notes
    flags = _flags([run_dir])
    row = flags[flags["code"] == "requests.failed"].iloc[0]
    assert row["severity"] == "critical" and "14 of 24" in row["message"]


def test_a_warmup_phase_whose_requests_all_failed_is_skipped(tmp_path):
    result = load([HARNESS / "aiperf-warmup-failed"])
    assert not result.refused
    reason = next(s.reason for s in result.skipped if s.path.endswith("phases/warmup/profile_export_aiperf.json"))
    assert reason == "AIPerf warm-up phase export (phase 'warmup', 3 request(s) failed, no metrics): not a measurement"
    run = result.runs[0].run
    assert run.warmup_excluded is True and "3 of the 3 warm-up request(s) failed" in run.notes
    assert len(run.requests) == 10 and not any(r.error for r in run.requests)


def test_an_export_with_no_metrics_no_errors_and_no_records_is_refused(tmp_path):
    """A root export that claims to be AIPerf's (markers) but holds nothing: refused, naming its keys."""
    doc = json.loads(
        (HARNESS / "aiperf-warmup-failed" / "phases" / "warmup" / "profile_export_aiperf.json").read_text()
    )
    for k in ("error_request_count", "error_summary", "error_isl", "total_error_isl"):
        doc.pop(k, None)
    doc["error_summary"] = []
    (tmp_path / "profile_export_aiperf.json").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert len(result.refused) == 1 and not result.runs
    msg = result.refused[0].message
    assert msg.startswith("expected an AIPerf profile export with metric blocks")
    assert '"schema_version", "aiperf_version", "benchmark_id"' in msg


def test_sweep_and_trial_aggregates_are_checked_against_the_trials(tmp_path):
    """A trial missing from the folder: AIPerf's aggregates over 3 trials no longer match the 2
    read, and import.figure_mismatch says so (trial count first)."""
    sweep = tmp_path / "sweep"
    shutil.copytree(HARNESS / "aiperf-sweep", sweep)
    shutil.rmtree(sweep / "profile_runs" / "trial_0003" / "concurrency_1")
    result = load([sweep])
    assert not result.refused
    checked = [lr for lr in result.runs if lr.checks]
    assert len(checked) == 1 and {c["metric"] for c in checked[0].checks} >= {"trials", "ttft_ms"}
    trials = next(c for c in checked[0].checks if c["metric"] == "trials")
    assert (trials["reported"], trials["recomputed"]) == (3.0, 2.0)
    flags = _flags([sweep])
    row = flags[flags["code"] == "import.figure_mismatch"].iloc[0]
    assert row["severity"] == "warn"
    assert "trial count at 1 stream: AIPerf's aggregate over trials" in row["message"]
    assert "says 3, ours gives 2" in row["message"]


def test_aiperf_0_1_records_layout(tmp_path):
    """AIPerf 0.1.x: metrics under `records.<tag>`, TTFT tagged `ttft`, loadgen config, no records file."""
    result = load([HARNESS / "aiperf-versions" / "0.1.1"])
    assert not result.refused
    run = result.runs[0].run
    got = {(m.metric, m.statistic): m.value for m in run.measurements}
    doc = json.loads((HARNESS / "aiperf-versions" / "0.1.1" / "profile_export_aiperf.json").read_text())
    assert got[("ttft_ms", "p50")] == doc["records"]["ttft"]["p50"]
    assert {m.concurrency for m in run.measurements} == {2} and run.warmup_excluded is True
    assert not run.requests


def test_trials_note_the_aggregate_check(loaded):
    result, _ = loaded
    trials = [lr for lr in result.runs if "profile_runs" in lr.source_file]
    assert trials and all("checked against AIPerf's aggregate over trials" in lr.run.notes for lr in trials)
    assert not any(lr.checks for lr in result.runs)
