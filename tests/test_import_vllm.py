"""vLLM `bench serve` result JSON: recognised by content, reproduces vLLM's own summary figures."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchreport.load import load
from benchreport.tables import build_tables

FIXTURES = Path(__file__).parent / "fixtures" / "harness" / "vllm"
FILES = sorted(FIXTURES.rglob("*.json"))


def _one(tmp_path, doc, name="x.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return load([tmp_path])


@pytest.fixture(scope="module")
def loaded():
    result = load([FIXTURES])
    return result, build_tables(result)


def test_fixtures_present():
    assert FILES, "the captured vLLM fixtures are missing"


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.name)
def test_loads_by_content_under_a_neutral_name(tmp_path, src):
    shutil.copy(src, tmp_path / "x.json")
    result = load([tmp_path])
    assert not result.refused and len(result.runs) == 1
    run = result.runs[0]
    assert run.source_format == "vllm bench serve result"
    assert run.run.harness.name == "vllm bench serve"
    assert run.run.run_id.startswith("vllm-x-")


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.name)
def test_requests_reproduce_vllm_summary(loaded, src):
    """Our numpy mean/median of the imported requests equal vLLM's own figures.

    vLLM computes them with numpy from the same per-request seconds (x1000), so only the
    summation order differs: 1e-9 relative. e2e latency is TTFT + ITL gaps here (this release
    saves no latencies), which end at the last token, while vLLM stamps latency when the stream
    ends: a few microseconds apart, so 0.01 ms.
    """
    doc = json.loads(src.read_text())
    result, tables = loaded
    run = next(r for r in result.runs if r.source_file == str(src))
    req = tables.requests[tables.requests.run_id == run.run.run_id]
    ok = req[req.error.isna()]
    assert len(ok) == doc["completed"]
    assert np.mean(ok.ttft_ms) == pytest.approx(doc["mean_ttft_ms"], rel=1e-9)
    assert np.median(ok.ttft_ms) == pytest.approx(doc["median_ttft_ms"], rel=1e-9)
    assert np.percentile(ok.ttft_ms, 99) == pytest.approx(doc["p99_ttft_ms"], rel=1e-9)
    assert np.mean(ok.e2e_latency_ms) == pytest.approx(doc["mean_e2el_ms"], abs=1e-2)
    assert np.median(ok.e2e_latency_ms) == pytest.approx(doc["median_e2el_ms"], abs=1e-2)
    # output throughput: vLLM divides the delivered tokens by the benchmark duration
    assert ok.output_tokens.sum() / doc["duration"] == pytest.approx(doc["output_throughput"], rel=1e-9)
    assert ok.prompt_tokens.sum() == doc["total_input_tokens"]
    # TPOT per request from the imported records reproduces vLLM's mean TPOT
    tpot = (ok.e2e_latency_ms - ok.ttft_ms) / (ok.output_tokens - 1)
    assert np.mean(tpot) == pytest.approx(doc["mean_tpot_ms"], abs=1e-3)


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.name)
def test_measurements_are_the_files_figures(loaded, src):
    doc = json.loads(src.read_text())
    result, tables = loaded
    run = next(r for r in result.runs if r.source_file == str(src))
    m = tables.measurements[tables.measurements.run_id == run.run.run_id]
    got = {(row.metric, row.statistic): row.value for row in m.itertuples()}
    assert got[("ttft_ms", "mean")] == doc["mean_ttft_ms"]
    assert got[("ttft_ms", "p50")] == doc["median_ttft_ms"]
    assert got[("ttft_ms", "p99")] == doc["p99_ttft_ms"]
    assert got[("itl_ms", "mean")] == doc["mean_itl_ms"]
    assert got[("e2e_latency_ms", "mean")] == doc["mean_e2el_ms"]
    assert got[("output_tok_s", "mean")] == doc["output_throughput"]
    assert got[("request_rate", "mean")] == doc["request_throughput"]
    assert got[("decode_tok_s_per_stream", "mean")] == pytest.approx(1000 / doc["mean_tpot_ms"])
    assert set(m.concurrency) == {doc["max_concurrency"]}
    assert set(m.workload) == {"decode"}
    assert (m.n == doc["completed"]).all()


def test_seat_date_and_passes_inferred_and_stated(loaded):
    result, tables = loaded
    runs = tables.runs.set_index("run_id")
    for lr in result.runs:
        doc = json.loads(Path(lr.source_file).read_text())
        assert lr.run.seat.model == doc["model_id"]
        assert lr.run.date.replace("-", "").replace("T", "-").replace(":", "")[:15] == doc["date"]
        text = runs.loc[lr.run.run_id, "assumptions"]
        assert f"seat id inferred from model id '{doc['model_id']}'" in text
        assert "inferred from the runs' start time order" in text
    # two passes of each concurrency, in timestamp order
    by_conc = {}
    for lr in result.runs:
        conc = lr.run.measurements[0].concurrency
        by_conc.setdefault(conc, []).append((lr.run.date, lr.run.pass_))
    for pairs in by_conc.values():
        assert [p for _, p in sorted(pairs)] == list(range(1, len(pairs) + 1))


def test_append_result_lines_are_runs_and_pytorch_twin_is_skipped(tmp_path):
    docs = [json.loads(p.read_text()) for p in FILES[:2]]
    (tmp_path / "appended.json").write_text("\n".join(json.dumps(d) for d in docs))
    twin = [
        {
            "benchmark": {"name": "vLLM benchmark", "extra_info": {}},
            "model": {"name": "m"},
            "metric": {"name": "median_ttft_ms", "benchmark_values": [1.0]},
        }
    ]
    (tmp_path / "appended.pytorch.json").write_text(json.dumps(twin))
    result = load([tmp_path])
    assert not result.refused
    assert len(result.runs) == 2
    assert {r.run.run_id.rsplit("-", 1)[1] for r in result.runs} == {"r1", "r2"}
    assert [s.reason for s in result.skipped if s.path.endswith("pytorch.json")][0].startswith("vLLM PyTorch")


def test_failed_requests_and_newer_release_fields(tmp_path):
    """Newer releases save `failed` and per-request `latencies`; a failed request keeps its error."""
    doc = json.loads(FILES[0].read_text())
    doc["latencies"] = [t + sum(g) for t, g in zip(doc["ttfts"], doc["itls"])]
    doc["errors"][0] = "Traceback (most recent call last):\n  ...\naiohttp.ClientError: boom"
    doc["ttfts"][0], doc["itls"][0], doc["output_lens"][0], doc["latencies"][0] = 0.0, [], 0, 0.0
    doc["completed"], doc["failed"] = doc["completed"] - 1, 1
    result = _one(tmp_path, doc)
    assert not result.refused
    req = build_tables(result).requests
    bad = req[req.error.notna()]
    assert len(bad) == 1 and bad.error.iloc[0] == "aiohttp.ClientError: boom"
    assert bad.finish_reason.iloc[0] == "error" and bad.ttft_ms.isna().all()
    assert "TTFT + the sum" not in "; ".join(result.runs[0].assumptions)


def test_unknown_json_is_refused_by_name(tmp_path):
    """With strict (or named directly); in a folder without it, skipped as not a run file (issue 31)."""
    _one(tmp_path, {"hello": "world"}, name="mystery.json")
    for result in (load([tmp_path], strict=True), load([tmp_path / "mystery.json"])):
        assert not result.runs
        assert str(result.refused[0]).startswith(f"{tmp_path / 'mystery.json'}: $: expected a native run file")
    assert load([tmp_path]).skipped[0].not_a_run


def test_failed_requests_known_only_as_counts(tmp_path):
    """A result saved without --save-detailed (no per-request lists) with failures: the failed
    and completed counts become request rows without timings."""
    src = next((FIXTURES.parent / "vllm-0.6" / "failed").glob("*.json"))
    doc = json.loads(src.read_text())
    for k in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"):
        doc.pop(k)
    doc["failed"] = 6
    run = _one(tmp_path, doc).runs[0].run
    assert len(run.requests) == 12 and sum(r.finish_reason == "error" for r in run.requests) == 6
    assert all(r.ttft_ms is None for r in run.requests)
    assert "request rows without timings" in run.notes


def test_request_counts_checked_against_the_file(tmp_path):
    src = next((FIXTURES.parent / "vllm-0.6" / "failed").glob("*.json"))
    lr = _one(tmp_path, json.loads(src.read_text())).runs[0]
    assert "checked against vLLM's completed/failed counts" in lr.run.notes and not lr.checks


def test_failed_requests_told_by_their_zero_latency_without_an_errors_list(tmp_path):
    """`vllm bench serve` without --save-detailed keeps only `latencies` (0.0 for a failed
    request, vLLM's placeholder): with as many zeros as `failed`, those are the failures."""
    src = next((FIXTURES.parent / "vllm-0.6" / "failed").glob("*.json"))
    doc = json.loads(src.read_text())
    ok = [not e for e in doc["errors"]]
    lat = [t + sum(g) if good else 0.0 for t, g, good in zip(doc["ttfts"], doc["itls"], ok)]
    for k in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"):
        doc.pop(k)
    doc.update(latencies=lat, failed=ok.count(False))
    lr = _one(tmp_path, doc).runs[0]
    reqs = lr.run.requests
    assert [r.finish_reason != "error" for r in reqs] == ok
    assert all(r.e2e_latency_ms > 0 for r, good in zip(reqs, ok) if good)
    assert "placeholder latency 0" in lr.run.notes and not lr.checks


def test_the_failed_run_of_the_real_0_6_capture_is_said_as_one_of_three():
    """vllm-0.6: 6 of 12 requests failed (HTTP 400) at 2 streams, the seat's other 2 runs (1 and 4
    streams) none: the sentence scopes the failures to that run (17% of the seat's 36 requests)."""
    from benchreport.pipeline import analyse_paths

    f = analyse_paths([str(FIXTURES.parent / "vllm-0.6")]).flags
    msg = f[f.code == "requests.failed"].iloc[0].message
    assert msg.startswith(
        "tiny-gpt2-s1: 6 of 12 requests in 1 run failed (17% of the seat's 36 requests in 3 runs): "
        "6 of 12 (50%) at 2 streams on "
    )
    assert "do not quote its figures" in msg and "The seat's other 2 runs had no failed request." in msg
    assert "do not quote these figures" not in msg
