"""kubernetes-sigs inference-perf report folders: one run per folder, a workload per stage."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from benchreport.flags import decide_exclusions
from benchreport.flags.rules import prefix_cache, reasoning_field
from benchreport.thresholds import DEFAULT
from benchreport.load import load
from harness_oracle import HARNESS, load_tables, oracle, pass_row, requests_of, value

FOLDER = HARNESS / "inference-perf"
ORACLE = oracle("inference-perf")["results"]
STAGE_CONCURRENCY = {
    "reports-chat-reasoning": [2],
    "reports-completion-cached-two-stages": [1, 4],
    "reports-completion-failed": [2],
}  # config.yaml load.stages[N].concurrency_level


@pytest.fixture(scope="module")
def loaded():
    return load_tables(FOLDER)


def _run(result, report_folder):
    return next(r for r in result.runs if r.source_file.startswith(str(FOLDER / report_folder) + "/"))


def _stage(entry):
    name = entry["file"].split("/")[1]
    return None if name.startswith("summary") else int(name.split("_")[1])


def test_one_run_per_report_folder_and_nothing_refused(loaded):
    result, tables, _ = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert len(result.runs) == 3
    reasons = {s.path.rsplit("/", 1)[1]: s.reason for s in result.skipped if "/reports-" in s.path}
    assert reasons["config.yaml"].startswith("inference-perf config")
    assert "llm-d benchmark-report" in reasons["inference-perf.partial.stage_1.yaml"]
    assert reasons["validation.json"].startswith("inference-perf self-checks")
    summary_reasons = [s.reason for s in result.skipped if s.path.endswith("summary_lifecycle_metrics.json")]
    assert any("pooling all 2 stages" in r for r in summary_reasons)
    assert all(
        s.path.endswith(".log") and "not a JSON file" in s.reason
        for s in result.skipped
        if "/console/" in s.path and s.path.endswith(".log")
    )


def test_stages_are_loads_not_passes(loaded):
    result, tables, _ = loaded
    for folder, concs in STAGE_CONCURRENCY.items():
        run = _run(result, folder).run
        assert sorted({m.concurrency for m in run.measurements}) == concs
        assert sorted({r.concurrency for r in run.requests}) == concs
        assert run.pass_ == 1
    assert set(tables.runs.date.astype(str).str[:10]) == {"2026-12-01"}


@pytest.mark.parametrize("entry", ORACLE, ids=lambda e: e["file"])
def test_our_figures_are_inference_perfs(loaded, entry):
    """Per stage: TTFT p50 and mean recomputed from the imported requests (output_token_times[0]
    - start_time) equal inference-perf's; its ITL median pools every gap, so ITL p50 is its figure
    as reported; throughput and counts too. The summary of a two-stage run is no cell of ours:
    our requests of both stages pooled reproduce its TTFT and token totals."""
    result, tables, passes = loaded
    folder = entry["file"].split("/")[0]
    run = _run(result, folder).run
    req = requests_of(tables, run.run_id)
    stage = _stage(entry)
    concs = STAGE_CONCURRENCY[folder]
    if stage is None and len(concs) > 1:
        ok = req[req.error.isna()]
        assert np.median(ok.ttft_ms) == pytest.approx(value(entry["ttft_p50_s"]) * 1000, rel=1e-9)
        assert np.mean(ok.ttft_ms) == pytest.approx(value(entry["ttft_mean_s"]) * 1000, rel=1e-9)
        assert len(req) == value(entry["request_count"]) and len(ok) == value(entry["completed"])
        assert ok.output_tokens.sum() == value(entry["output_tokens_total"])
        assert ok.cached_prompt_tokens.sum() == value(entry["prompt_tokens_cached"])
        return
    conc = concs[stage or 0]
    row = lambda m, s: pass_row(passes[passes.concurrency == conc], run.run_id, m, s)  # noqa: E731
    assert row("ttft_ms", "p50").value == pytest.approx(value(entry["ttft_p50_s"]) * 1000, rel=1e-12)
    assert row("ttft_ms", "p50").recomputed == pytest.approx(value(entry["ttft_p50_s"]) * 1000, rel=1e-9)
    assert row("ttft_ms", "mean").recomputed == pytest.approx(value(entry["ttft_mean_s"]) * 1000, rel=1e-9)
    assert row("itl_ms", "p50").value == pytest.approx(value(entry["itl_p50_s"]) * 1000, rel=1e-12)
    assert row("output_tok_s", "mean").value == value(entry["output_tok_s"])
    mine = req[req.concurrency == conc]
    assert len(mine) == value(entry["request_count"])
    assert int(mine.error.notna().sum()) == value(entry["failed"])
    ok = mine[mine.error.isna()]
    assert len(ok) == value(entry["completed"])
    assert ok.output_tokens.sum() == value(entry["output_tokens_total"])
    assert ok.prompt_tokens.sum() == value(entry["prompt_tokens_total"])
    assert ok.cached_prompt_tokens.sum() == value(entry["prompt_tokens_cached"])


def test_failed_requests_carry_their_errors(loaded):
    result, _, _ = loaded
    run = _run(result, "reports-completion-failed").run
    bad = [r for r in run.requests if r.finish_reason == "error"]
    assert len(bad) == 7
    assert all(r.error.startswith("HTTP Error 400: This model's maximum context length is 64") for r in bad)


def test_reasoning_and_cached_tokens_arrive_and_raise_their_traps(loaded):
    result, tables, _ = loaded
    run = _run(result, "reports-chat-reasoning").run
    recs = json.loads((FOLDER / "reports-chat-reasoning" / "per_request_lifecycle_metrics.json").read_text())
    usage = [r["info"]["response_metrics"]["server_usage"] for r in recs]
    assert [r.reasoning_tokens for r in run.requests] == [
        u.get("completion_tokens_details", {}).get("reasoning_tokens") for u in usage
    ]
    assert [r.output_tokens for r in run.requests] == [u["completion_tokens"] for u in usage]
    assert sum(1 for r in run.requests if r.reasoning_chars) == 5
    assert {r.finish_reason for r in run.requests} == {"length"}
    assert {f.code for f in prefix_cache(decide_exclusions(tables, thresholds=DEFAULT))} == {"trap.prefix_cache"}
    assert reasoning_field(tables.requests, thresholds=DEFAULT) == []  # every answer has content besides its reasoning


def test_start_times_keep_the_send_order(loaded):
    result, _, _ = loaded
    run = _run(result, "reports-completion-cached-two-stages").run
    starts = [r.start_ms for r in run.requests]
    assert starts[0] == 0 and starts == sorted(starts)
    assert [r.concurrency for r in run.requests] == [1] * 8 + [4] * 12


def test_without_config_each_stage_is_its_own_workload(tmp_path):
    src = FOLDER / "reports-completion-cached-two-stages"
    for name in (
        "stage_0_lifecycle_metrics.json",
        "stage_1_lifecycle_metrics.json",
        "per_request_lifecycle_metrics.json",
    ):
        shutil.copy(src / name, tmp_path / name)
    result = load([tmp_path])
    assert not result.refused
    run = result.runs[0].run
    assert run.seat.model == "tiny-gpt2-s1"  # from the requests' bodies
    assert {m.workload for m in run.measurements} == {"decode-stage0", "decode-stage1"}
    assert "no config.yaml" in run.notes


def test_a_broken_stage_report_is_refused_with_its_path(tmp_path):
    shutil.copytree(FOLDER / "reports-completion-failed", tmp_path / "r")
    path = tmp_path / "r" / "stage_0_lifecycle_metrics.json"
    doc = json.loads(path.read_text())
    doc["successes"]["latency"]["time_to_first_token"]["median"] = "fast"
    path.write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.runs
    ref = [r for r in result.refused if r.path == str(path)][0]
    assert ref.json_path == "$.successes.latency.time_to_first_token.median"


def test_an_unreadable_config_is_skipped_not_refused(tmp_path):
    shutil.copytree(FOLDER / "reports-completion-failed", tmp_path / "r")
    (tmp_path / "r" / "config.yaml").write_text("api:\ndata:\nload:\nreport:\n  : [\n")
    result = load([tmp_path])
    assert not result.refused and len(result.runs) == 1
    assert any("could not be read" in s.reason for s in result.skipped if s.path.endswith("config.yaml"))


# --- reports beside the lifecycle ones (issue 40): each read or skipped with its reason ----------------


def _side_reports(dest):
    """The real two-stage folder with the reports inference-perf's reportgen also writes when asked
    (per-adapter, Prometheus, session), in the shapes its source gives them."""
    shutil.copytree(FOLDER / "reports-completion-cached-two-stages", dest)
    stage0 = json.loads((dest / "stage_0_lifecycle_metrics.json").read_text())
    (dest / "adapter_lora-a_stage_0_lifecycle_metrics.json").write_text(json.dumps(stage0))
    (dest / "adapter_lora-a_lifecycle_metrics.json").write_text(json.dumps(stage0))
    prom = {
        "benchmark_time_seconds": 0.0,
        "load_summary": {},
        "failures": {},
        "successes": {
            "count": 12,
            "rate": 1.5,
            "queue_len": {"mean": 0.2},
            "time_to_first_token": {"mean": 0.05},
            "kv_cache_usage_percentage": {"mean": 3.0},
        },
    }
    (dest / "summary_prometheus_metrics.json").write_text(json.dumps(prom))
    (dest / "stage_1_prometheus_metrics.json").write_text(json.dumps(prom))
    sessions = {"num_sessions": 4, "num_sessions_succeeded": 4, "num_sessions_failed": 0, "total_events": 12}
    (dest / "summary_session_lifecycle_metrics.json").write_text(json.dumps(sessions))
    (dest / "stage_0_session_lifecycle_metrics.json").write_text(
        json.dumps({"stage_metadata": {"stage_id": 0}, **sessions})
    )
    (dest / "per_session_lifecycle_metrics.json").write_text(
        json.dumps(
            [
                {
                    "session_id": "s0",
                    "stage_id": 0,
                    "file_path": "x",
                    "start_time": 1.0,
                    "end_time": 2.0,
                    "duration_sec": 1.0,
                    "num_events": 3,
                    "num_events_completed": 3,
                }
            ]
        )
    )
    return dest


def test_adapter_prometheus_and_session_reports_are_skipped_with_their_reasons(tmp_path):
    plain = load([FOLDER / "reports-completion-cached-two-stages"])
    folder = _side_reports(tmp_path / "reports-completion-cached-two-stages")
    result = load([folder])
    assert not result.refused, [str(r) for r in result.refused]
    [run] = result.runs
    [before] = plain.runs
    assert run.source_file.endswith("/stage_0_lifecycle_metrics.json")  # not the adapter's stage 0
    assert len(run.run.measurements) == len(before.run.measurements)
    assert [m.value for m in run.run.measurements] == [m.value for m in before.run.measurements]
    reasons = {s.path.rsplit("/", 1)[1]: s.reason for s in result.skipped}
    adapter = "per-adapter report (LoRA adapter 'lora-a', stage 0)"
    assert adapter in reasons["adapter_lora-a_stage_0_lifecycle_metrics.json"]
    assert "(LoRA adapter 'lora-a', the whole run)" in reasons["adapter_lora-a_lifecycle_metrics.json"]
    prometheus = "Prometheus report: the model server's own metrics over the run"
    assert prometheus in reasons["summary_prometheus_metrics.json"]
    assert "over stage 1" in reasons["stage_1_prometheus_metrics.json"]
    for name in (
        "summary_session_lifecycle_metrics.json",
        "stage_0_session_lifecycle_metrics.json",
        "per_session_lifecycle_metrics.json",
    ):
        assert reasons[name].startswith("inference-perf session report"), name
    # every file of the folder is read or skipped, none vanishes
    seen = {s.path.rsplit("/", 1)[1] for s in result.skipped} | {run.source_file.rsplit("/", 1)[1]}
    assert {p.name for p in folder.iterdir() if p.suffix == ".json"} - {
        "per_request_lifecycle_metrics.json",
        "stage_1_lifecycle_metrics.json",
    } <= seen


def test_a_server_type_other_than_the_default_is_the_engine(tmp_path):
    dest = tmp_path / "reports-chat-reasoning"
    shutil.copytree(FOLDER / "reports-chat-reasoning", dest)
    text = (dest / "config.yaml").read_text()
    assert "  type: vllm\n" in text
    [default] = load([dest]).runs
    assert default.run.seat.id == "tiny-gpt2-r1" and default.run.seat.engine is None
    (dest / "config.yaml").write_text(text.replace("  type: vllm\n", "  type: sglang\n", 1))
    [run] = load([dest]).runs
    assert run.run.seat.id == "tiny-gpt2-r1--sglang" and run.run.seat.engine == "sglang"
