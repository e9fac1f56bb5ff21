"""Harness files as real tools write them, damaged: partial damage stays partial (a bad JSON Lines
line keeps the good ones and is named by number), a NaN the importer never reads does not refuse
the file, ambiguity (a key twice) and impossible integers are refused with the path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchreport.load import load
from benchreport.tables import build_tables, write_parquet

FIXTURES = Path(__file__).parent / "fixtures" / "harness"
VLLM = FIXTURES / "vllm" / "pass1" / "vllm-infqps-concurrency1-tiny-gpt2-s1-20261129-235724.json"
AIPERF = FIXTURES / "aiperf" / "c4"


def refused(result) -> list[str]:
    return [f"{Path(r.path).name}: {r.json_path}: {r.message}" for r in result.refused]


def test_nan_in_a_field_the_importer_never_reads_does_not_refuse_the_file(tmp_path):
    """Item 19: Python's json.dump writes NaN by default; vLLM's `std_*` and `burstiness` are not read."""
    doc = json.loads(VLLM.read_text())
    doc["burstiness"] = doc["std_ttft_ms"] = float("nan")
    (tmp_path / "r.json").write_text(json.dumps(doc))  # NaN, as json.dump writes it
    result = load([tmp_path])
    assert result.ok, refused(result)
    assert len(result.runs) == 1 and result.runs[0].run.measurements


def test_nan_in_a_figure_leaves_that_figure_out(tmp_path):
    doc = json.loads(VLLM.read_text())
    text = json.dumps(doc).replace(f'"p99_ttft_ms": {json.dumps(doc["p99_ttft_ms"])}', '"p99_ttft_ms": NaN')
    (tmp_path / "r.json").write_text(text)
    result = load([tmp_path])
    assert result.ok, refused(result)
    stats = {(m.metric, m.statistic) for m in result.runs[0].run.measurements}
    assert ("ttft_ms", "p50") in stats and ("ttft_ms", "p99") not in stats


def test_a_native_file_still_refuses_nan(tmp_path):
    run = json.loads((Path(__file__).parent / "bad_inputs" / "good" / "good-1.json").read_text())
    text = json.dumps({"notes": "x", **run}).replace("896.9", "NaN")
    (tmp_path / "n.json").write_text(text)
    assert refused(load([tmp_path])) == [
        "n.json: $.measurements[0].value: expected a finite number, got NaN (not valid JSON)"
    ]


def test_one_truncated_line_of_an_aiperf_jsonl_keeps_the_others(tmp_path):
    """Item 19: one truncated line lost the 14 good records and named the wrong line."""
    folder = tmp_path / "c4"
    shutil.copytree(AIPERF, folder)
    path = folder / "profile_export.jsonl"
    lines = path.read_text().splitlines()
    good = load([AIPERF])
    n_good = len(good.runs[0].run.requests)
    victim = next(i for i, ln in enumerate(lines) if '"benchmark_phase":"profiling"' in ln)
    lines[victim] = lines[victim][: len(lines[victim]) // 2]
    path.write_text("\n".join(lines) + "\n")
    result = load([folder])
    assert refused(result) == [
        f"profile_export.jsonl: $[{victim}]: line {victim + 1}: expected complete JSON, found a document that "
        f"ends early (truncated?) at column {len(lines[victim]) + 1}; the file's other {len(lines) - 1} line(s) were read"
    ]
    assert len(result.runs) == 1 and len(result.runs[0].run.requests) == n_good - 1


def test_one_bad_line_of_a_vllm_append_result_file_keeps_the_other_results(tmp_path):
    doc = json.loads(VLLM.read_text())
    second = {**doc, "max_concurrency": 4}
    text = json.dumps(doc) + "\n" + json.dumps(second) + "\n" + json.dumps(doc)[:200] + "\n"
    (tmp_path / "appended.json").write_text(text)
    result = load([tmp_path])
    assert len(result.runs) == 2
    assert [r.json_path for r in result.refused] == ["$[2]"]
    assert result.refused[0].message.startswith("line 3: expected complete JSON, found a document that ends early")


def test_a_key_twice_in_a_harness_file_is_refused_with_its_path(tmp_path):
    text = VLLM.read_text().replace('"max_concurrency": 1,', '"max_concurrency": 1, "max_concurrency": 4,')
    (tmp_path / "r.json").write_text(text)
    assert refused(load([tmp_path])) == [
        'r.json: $.max_concurrency: expected each key once in an object, got "max_concurrency" twice (1, then 4; '
        "JSON readers disagree on which counts)"
    ]


def test_a_key_twice_in_a_jsonl_line_names_the_line(tmp_path):
    folder = tmp_path / "c4"
    shutil.copytree(AIPERF, folder)
    path = folder / "profile_export.jsonl"
    lines = path.read_text().splitlines()
    lines[3] = lines[3].replace('"worker_id":', '"worker_id":"w0","worker_id":', 1)
    path.write_text("\n".join(lines) + "\n")
    msgs = [r for r in refused(load([folder])) if r.startswith("profile_export.jsonl")]
    assert msgs == [
        "profile_export.jsonl: $[3].metadata.worker_id: expected each key once in an object, got "
        '"worker_id" twice ("w0", then "worker_057dc826"; JSON readers disagree on which counts)'
    ]


def test_integers_beyond_int64_in_a_harness_file_are_refused_not_a_pyarrow_crash(tmp_path):
    """Item 10: input_lens of 2^64 passed validate, then analyse crashed in pyarrow."""
    doc = json.loads(VLLM.read_text())
    doc["input_lens"][0] = 2**64
    (tmp_path / "r.json").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert refused(result) == [
        "r.json: $.requests[0].prompt_tokens: expected an integer below 2^63, got "
        "18446744073709551616 (after import as vllm)"
    ]
    write_parquet(build_tables(result), tmp_path / "pq")
