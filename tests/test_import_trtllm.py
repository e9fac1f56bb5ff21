"""TensorRT-LLM trtllm-bench: records (both field-name generations), statistics, text and JSON reports."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchreport.load import load
from harness_oracle import HARNESS, copy_with_manifest, load_tables, oracle, pass_row, requests_of, value

FOLDER = "trtllm"
ORACLE = oracle(FOLDER)["results"]
MANIFEST = "version: 1\nruns:\n  - files: 'bench-77d7fe1/**'\n    seat: {id: tiny-gpt2-s1, model: tiny-gpt2-s1}\n"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    folder = copy_with_manifest(FOLDER, tmp_path_factory.mktemp("trt") / FOLDER, MANIFEST)
    return (folder,) + load_tables(folder)


def _run(result, folder, sub):
    return next(r for r in result.runs if r.source_file.startswith(str(folder / sub) + "/"))


def test_one_run_per_output_folder(loaded):
    folder, result, tables, _ = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert sorted(r.source_file for r in result.runs) == [
        str(folder / "bench-3856265" / "statistics.json"),
        str(folder / "bench-77d7fe1" / "requests.json"),
    ]
    assert {r.run.harness.name for r in result.runs} == {"trtllm-bench"}


@pytest.mark.parametrize("entry", ORACLE, ids=lambda e: e["file"])
def test_our_figures_are_trtllm_benchs(loaded, entry):
    """TTFT and ITL p50 and throughput as trtllm-bench computed them (ns and per-ns, converted once);
    the means recomputed from the imported records reproduce its averages; its p50 is
    sorted[int(n/2)], the upper median, which our interpolated median of 12 records is not."""
    folder, result, tables, passes = loaded
    run = _run(result, folder, entry["file"].split("/")[0]).run
    ttft = pass_row(passes, run.run_id, "ttft_ms", "p50")
    assert ttft.value == pytest.approx(value(entry["ttft_p50_ns"]) / 1e6, rel=1e-12)
    assert pass_row(passes, run.run_id, "ttft_ms", "mean").recomputed == pytest.approx(
        value(entry["ttft_mean_ns"]) / 1e6, rel=1e-9
    )
    assert pass_row(passes, run.run_id, "itl_ms", "p50").value == pytest.approx(value(entry["itl_p50_ns"]) / 1e6)
    assert pass_row(passes, run.run_id, "itl_ms", "mean").recomputed == pytest.approx(
        value(entry["itl_mean_ns"]) / 1e6, rel=1e-9
    )
    out = pass_row(passes, run.run_id, "output_tok_s", "mean").value
    assert out == pytest.approx(value(entry["output_tok_per_ns"]) * 1e9, rel=1e-12)
    assert f"{out:.4f}" == entry["report_lines"]["output_tok_s"]["value"]
    req = requests_of(tables, run.run_id)
    assert len(req) == value(entry["request_count"]) and req.error.isna().all()
    assert req.output_tokens.sum() == value(entry["total_output_tokens"])
    upper_median = np.sort(req.ttft_ms.to_numpy(float))[len(req) // 2]
    assert upper_median == pytest.approx(ttft.value, rel=1e-12)


def test_renamed_fields_of_the_later_records(loaded):
    """At 77d7fe1 `num_output_tokens` is `num_total_output_tokens` and the text is kept: same figures."""
    folder, result, tables, passes = loaded
    run = _run(result, folder, "bench-77d7fe1").run
    recs = json.loads((HARNESS / FOLDER / "bench-77d7fe1" / "requests.json").read_text())
    assert [r.output_tokens for r in run.requests] == [r["num_total_output_tokens"] for r in recs]
    assert [r.content_chars for r in run.requests] == [len(r["output"]) for r in recs]
    assert run.requests[0].ttft_ms == pytest.approx(recs[0]["time_to_first_token"] / 1e6)
    assert run.requests[0].itl_ms == pytest.approx(recs[0]["intertoken_latency"] / 1e6)
    assert run.requests[0].e2e_latency_ms == pytest.approx(recs[0]["end_to_end_latency"] / 1e6)
    starts = [r.start_ms for r in run.requests]
    assert min(starts) == 0 and starts == pytest.approx(
        [(r["start_timestamp"] - recs[0]["start_timestamp"]) / 1e6 for r in recs]
    )
    assert not run.measurements
    assert pass_row(passes, run.run_id, "ttft_ms", "p50").recomputed == pytest.approx(
        np.median([r["time_to_first_token"] for r in recs]) / 1e6
    )


def test_model_and_engine_from_the_text_report(loaded):
    folder, result, _, _ = loaded
    lr = _run(result, folder, "bench-3856265")
    assert lr.run.seat.model == "tiny-gpt2-s1"
    assert "seat id inferred from trtllm-bench report's model" in "; ".join(lr.assumptions)
    assert "TP Size 1" in lr.run.notes
    skipped = {s.path for s in result.skipped}
    assert str(folder / "bench-3856265" / "report.txt") not in skipped  # read into the run


def test_text_report_alone_is_a_run(tmp_path):
    """At 3856265 trtllm-bench only logs the text report: its printed figures are the run."""
    (tmp_path / "report.txt").write_bytes((HARNESS / FOLDER / "bench-3856265" / "report.txt").read_bytes())
    result = load([tmp_path])
    assert not result.refused, [str(r) for r in result.refused]
    got = {(m.metric, m.statistic): m.value for m in result.runs[0].run.measurements}
    assert got == {
        ("ttft_ms", "mean"): 148.2097,
        ("itl_ms", "mean"): 24.7051,
        ("e2e_latency_ms", "mean"): 716.4278,
        ("output_tok_s", "mean"): 132.6355,
        ("request_rate", "mean"): 5.5265,
    }
    assert {m.n for m in result.runs[0].run.measurements} == {12}


def test_records_without_a_model_are_a_seat_named_after_their_folder(tmp_path):
    (tmp_path / "requests.json").write_bytes((HARNESS / FOLDER / "bench-77d7fe1" / "requests.json").read_bytes())
    result = load([tmp_path])
    assert not result.refused and [lr.run.seat.id for lr in result.runs] == [tmp_path.name]
    assert "recorded no model name" in "; ".join(result.runs[0].assumptions)


def test_report_json_of_later_releases(tmp_path):
    """`--report_json` (get_statistics_dict: ms and tok/s, from the source; no real capture exists)."""
    pct = {"minimum": 40.0, "maximum": 90.0, "average": 60.0, "p50": 55.0, "p90": 80.0, "p95": 85.0, "p99": 90.0}
    doc = {
        "engine": {
            "model": "meta-llama/Llama-3.1-8B",
            "version": "0.21.0",
            "backend": "Pytorch",
            "dtype": "bfloat16",
            "quantization": "FP8",
        },
        "world_info": {"tp_size": 2, "pp_size": 1, "max_batch_size": 256},
        "request_info": {"num_requests": 100, "avg_num_concurrent_requests": 31.5},
        "performance": {
            "request_throughput_req_s": 12.5,
            "system_output_throughput_tok_s": 3200.0,
            "request_latency_percentiles_ms": {**pct, "average": 2500.0},
        },
        "streaming_metrics": {
            "ttft_percentiles": pct,
            "tpot_percentiles": {**pct, "p50": 9.5},
            "gen_tps_percentiles": {**pct, "average": 110.0},
        },
        "dataset": {},
    }
    (tmp_path / "report.json").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.refused
    run = result.runs[0].run
    got = {(m.metric, m.statistic): m.value for m in run.measurements}
    assert got[("ttft_ms", "p50")] == 55.0 and got[("itl_ms", "p50")] == 9.5
    assert got[("output_tok_s", "mean")] == 3200.0 and got[("decode_tok_s_per_stream", "mean")] == 110.0
    assert got[("e2e_latency_ms", "mean")] == 2500.0 and {m.n for m in run.measurements} == {100}
    assert run.seat.model == "meta-llama/Llama-3.1-8B" and "quantization FP8" in run.notes


def test_error_responses_make_a_failed_request(tmp_path):
    recs = json.loads((HARNESS / FOLDER / "bench-77d7fe1" / "requests.json").read_text())
    recs[3]["error_tokens"] = 1
    (tmp_path / "requests.json").write_text(json.dumps(recs))
    (tmp_path / "benchreport.yaml").write_text("runs:\n  - files: '*'\n    seat: {id: s, model: m}\n")
    run = load([tmp_path]).runs[0].run
    bad = [r for r in run.requests if r.finish_reason == "error"]
    assert len(bad) == 1 and "error_tokens" in bad[0].error and bad[0].ttft_ms is None


def test_a_broken_record_is_refused_with_its_path(tmp_path):
    recs = json.loads((HARNESS / FOLDER / "bench-77d7fe1" / "requests.json").read_text())
    recs[2]["start_timestamp"] = "soon"
    (tmp_path / "requests.json").write_text(json.dumps(recs))
    (tmp_path / "benchreport.yaml").write_text("runs:\n  - files: '*'\n    seat: {id: s, model: m}\n")
    result = load([tmp_path])
    assert not result.runs
    assert (result.refused[0].json_path, result.refused[0].message.split(" (")[0]) == (
        "$[2].start_timestamp",
        "expected a start time in ns",
    )
