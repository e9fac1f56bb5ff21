"""genai-bench experiment folders: a run per run file, time unit from the experiment, reproduces its figures."""

from __future__ import annotations

import json
import os
import re
import shutil

import numpy as np
import pytest

from benchreport.load import load
from benchreport.stats.cells import request_metrics
from harness_oracle import HARNESS, has_metric, load_tables, oracle, pass_row, requests_of, value

FOLDER = HARNESS / "genai-bench"
ORACLE = oracle("genai-bench")["results"]
MS = {"s": 1000.0, "ms": 1.0}


@pytest.fixture(scope="module")
def loaded():
    return load_tables(FOLDER)


def _run(result, file):
    return next(r for r in result.runs if r.source_file == str(FOLDER / file))


def test_a_run_per_run_file_and_the_rest_skipped(loaded):
    result, _, _ = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert sorted(r.source_file for r in result.runs) == sorted(str(FOLDER / e["file"]) for e in ORACLE)
    reasons = {s.path.rsplit("/", 1)[1]: s.reason for s in result.skipped}
    assert reasons["experiment_metadata.json"].startswith("genai-bench experiment settings")
    not_json = "not a JSON file (no results read from it)"
    assert reasons["genai_bench.log"] == reasons["failed-ms_summary.xlsx"] == not_json


@pytest.mark.parametrize("entry", ORACLE, ids=lambda e: e["file"].split("/")[0] + ":" + e["file"].split("_text")[0])
def test_our_figures_are_genai_benchs(loaded, entry):
    """TTFT p50 and mean, recomputed from the imported requests, equal genai-bench's (numpy over
    the same values, converted from the file's unit once); no ITL (genai-bench has none); its TPOT
    is the per-request decode speed 1/TPOT; throughput and counts are its own."""
    result, tables, passes = loaded
    run = _run(result, entry["file"]).run
    ms = MS[value(entry["time_unit"])]
    ttft = pass_row(passes, run.run_id, "ttft_ms", "p50")
    assert ttft.value == pytest.approx(value(entry["ttft_p50"]) * ms, rel=1e-12)
    assert ttft.recomputed == pytest.approx(value(entry["ttft_p50"]) * ms, rel=1e-9)
    assert pass_row(passes, run.run_id, "ttft_ms", "mean").recomputed == pytest.approx(value(entry["ttft_mean"]) * ms)
    assert value(entry["itl_p50"]) is None and not has_metric(passes, run.run_id, "itl_ms")
    per_request = request_metrics(requests_of(tables, run.run_id))
    assert np.median(1000.0 / per_request.decode_tok_s_per_stream) == pytest.approx(value(entry["tpot_p50"]) * ms)
    assert pass_row(passes, run.run_id, "output_tok_s", "mean").value == value(entry["output_tok_s"])
    req = requests_of(tables, run.run_id)
    assert len(req) == value(entry["request_count"])
    assert int(req.error.notna().sum()) == value(entry["failed"])
    ok = req[req.error.isna()]
    assert len(ok) == value(entry["completed"])
    assert ok.output_tokens.sum() == value(entry["output_tokens_total"])
    assert ok.reasoning_tokens.sum() == value(entry["reasoning_tokens_total"])
    assert {m.concurrency for m in run.measurements} == {value(entry["num_concurrency"])}
    # the scenario is the load (issue 25): its lengths in the load description, no invented probe
    assert run.harness.probe is None and run.load.endpoint == "chat"
    kind, nums = value(entry["scenario"])[0], [float(x) for x in re.findall(r"[\d.]+", value(entry["scenario"]))]
    p, o = run.load.prompt_tokens, run.load.output_tokens
    got = [p.mean, o.mean] if kind == "D" else [p.min, p.max, o.min, o.max]
    assert got == nums


def test_failed_requests_carry_their_errors_and_the_error_rate_quirk(loaded):
    result, _, _ = loaded
    run = _run(result, "failed-ms/U16_48_24_24_text-to-text_num_concurrency_2_time_3s.json").run
    bad = [r for r in run.requests if r.finish_reason == "error"]
    assert len(bad) == 10
    assert all(r.error.startswith("HTTP 400: This model's maximum context length is 64 tokens") for r in bad)
    assert "error_rate says 0, but 10 of 19 requests failed" in run.notes


def test_reasoning_tokens_arrive(loaded):
    result, _, _ = loaded
    run = _run(result, "reasoning-2scenarios/D32_24_text-to-text_num_concurrency_1_time_4s.json").run
    assert sorted({r.reasoning_tokens for r in run.requests}) == [0, 9]
    assert all(r.output_tokens >= r.reasoning_tokens for r in run.requests)


def test_model_version_and_scenarios_as_probes(loaded):
    result, tables, _ = loaded
    assert set(tables.runs.harness_version) == {"0.0.5"}
    assert {lr.run.seat.model for lr in result.runs} == {"tiny-gpt2-r1", "tiny-gpt2-s1"}
    assert set(tables.runs["pass"]) == {1}  # two scenarios at one concurrency are two cells, not two passes


def test_time_unit_of_the_run_file_wins_and_a_bad_unit_is_refused(tmp_path):
    shutil.copytree(FOLDER / "failed-ms", tmp_path / "x")
    path = tmp_path / "x" / "U16_48_24_24_text-to-text_num_concurrency_2_time_3s.json"
    doc = json.loads(path.read_text())
    doc["_time_unit"] = "fortnights"
    path.write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.runs and result.refused[0].json_path == "$._time_unit"


def test_the_date_is_the_experiment_folders_not_the_files(tmp_path):
    """A copied experiment (file times of the copy) keeps the date its default folder name records."""
    exp = tmp_path / "vllm_vLLM_text-to-text_tiny_20261128_093015"
    shutil.copytree(FOLDER / "failed-ms", exp)
    os.utime(exp / "experiment_metadata.json", (2e9, 2e9))
    result = load([tmp_path])
    assert {lr.run.date for lr in result.runs} == {"2026-11-28T09:30:15"}
    assert not any("modification time" in a for lr in result.runs for a in lr.assumptions)


def test_without_metadata_the_seat_is_its_folder_and_a_manifest_is_asked_for(tmp_path):
    shutil.copy(FOLDER / "failed-ms" / "U16_48_24_24_text-to-text_num_concurrency_2_time_3s.json", tmp_path / "r.json")
    result = load([tmp_path])
    assert not result.refused and [lr.run.seat.id for lr in result.runs] == [tmp_path.name]
    assert "benchreport.yaml manifest" in "; ".join(result.runs[0].assumptions)


def test_a_broken_request_record_is_refused_with_its_path(tmp_path):
    shutil.copytree(FOLDER / "failed-ms", tmp_path / "x")
    path = tmp_path / "x" / "U16_48_24_24_text-to-text_num_concurrency_2_time_3s.json"
    doc = json.loads(path.read_text())
    doc["individual_request_metrics"][1]["ttft"] = "slow"
    path.write_text(json.dumps(doc))
    result = load([tmp_path])
    assert result.refused[0].json_path == "$.individual_request_metrics[1].ttft"


# --- its summary against its own records (issue 26) ----------------------------------------------


def _flags(folder):
    from benchreport.pipeline import analyse_paths

    return analyse_paths([str(folder)]).flags


def test_the_error_rate_its_records_contradict_is_named():
    """failed-ms: `error_rate` 0 while 10 of its 19 records failed (`num_error_requests` 10 is right):
    import.figure_mismatch, warn, names genai-bench's key and the records' count; the counts that
    agree (num_requests 19, num_completed_requests 9, num_error_requests 10) are not in it."""
    f = _flags(FOLDER / "failed-ms")
    mm = f[f.code == "import.figure_mismatch"]
    assert len(mm) == 1 and mm.iloc[0].severity == "warn"
    msg = mm.iloc[0].message
    assert "genai-bench's `error_rate` at 2 streams says 0, its records show 10 of 19 failed (53%)" in msg
    assert "contradicts its own records" in msg and "percentile definition" not in msg
    cells = mm.iloc[0].evidence["cells"]
    assert [(c["field"], c["of"], c["reported"]) for c in cells] == [("error_rate", 19, 0.0)]
    assert cells[0]["recomputed"] == pytest.approx(10 / 19)
    assert not (f.code == "requests.missing").any()  # 19 records of 12 asked: genai-bench overshoots


def test_a_right_error_rate_and_right_counts_raise_nothing():
    f = _flags(FOLDER / "reasoning-2scenarios")
    assert not f.code.isin(["import.figure_mismatch", "requests.missing"]).any(), list(f.message)


def test_an_edited_count_is_named_and_a_rounded_rate_agrees(tmp_path):
    shutil.copytree(FOLDER / "failed-ms", tmp_path / "x")
    path = tmp_path / "x" / "U16_48_24_24_text-to-text_num_concurrency_2_time_3s.json"
    doc = json.loads(path.read_text())
    doc["aggregated_metrics"]["error_rate"] = 0.53  # 10 of 19 = 0.526, rounded: agrees
    doc["aggregated_metrics"]["num_completed_requests"] = 12  # 9 records without an error
    path.write_text(json.dumps(doc))
    mm = _flags(tmp_path / "x").query("code == 'import.figure_mismatch'")
    msg = mm.iloc[0].message
    assert "genai-bench's `num_completed_requests` at 2 streams says 12, its records show 9" in msg
    assert "error_rate" not in msg and mm.iloc[0].severity == "warn"


def test_a_run_that_ended_before_its_time_limit_with_fewer_records_than_asked(tmp_path):
    """A run of 3.7 s of its 60 s limit stopped at its request limit (max_requests_per_run 12): with
    records dropped to 8, 4 asked requests are missing (requests.missing, warn, the key named)."""
    shutil.copytree(FOLDER / "failed-ms", tmp_path / "x")
    path = tmp_path / "x" / "U16_48_24_24_text-to-text_num_concurrency_2_time_3s.json"
    doc = json.loads(path.read_text())
    doc["individual_request_metrics"] = [r for r in doc["individual_request_metrics"] if r["error_code"] is None][:8]
    path.write_text(json.dumps(doc))
    f = _flags(tmp_path / "x")
    miss = f[f.code == "requests.missing"]
    assert len(miss) == 1 and miss.iloc[0].severity == "warn"
    assert miss.iloc[0].message.startswith("tiny-gpt2-s1--vLLM: 4 requests genai-bench sent are missing from its files")
    assert "12 sent (" in miss.iloc[0].message and "`max_requests_per_run` 12" in miss.iloc[0].message
    assert "8 in the files" in miss.iloc[0].message
