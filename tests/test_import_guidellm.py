"""GuideLLM benchmarks report: recognised by content, reproduces GuideLLM's own summary figures."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchreport.load import load
from benchreport.tables import build_tables

FIXTURES = Path(__file__).parent / "fixtures" / "harness" / "guidellm"
FILES = sorted(FIXTURES.rglob("*.json"))


@pytest.fixture(scope="module")
def loaded():
    result = load([FIXTURES])
    return result, build_tables(result)


def _benchmarks(src):
    doc = json.loads(src.read_text())
    for b in doc["benchmarks"]:
        yield b["config"]["strategy"]["streams"], b


def test_fixtures_present():
    assert FILES, "the captured GuideLLM fixtures are missing"


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.parent.name)
def test_loads_by_content_under_a_neutral_name(tmp_path, src):
    shutil.copy(src, tmp_path / "x.json")
    result = load([tmp_path])
    assert not result.refused and len(result.runs) == 1
    assert result.runs[0].run.harness.name == "guidellm"
    assert result.runs[0].source_format == "guidellm benchmarks report"


def test_yaml_csv_html_twins_are_skipped_not_refused(loaded):
    result, _ = loaded
    assert not result.refused
    twins = {Path(s.path).suffix for s in result.skipped}
    assert {".yaml", ".csv"} <= twins
    assert len(result.runs) == len(FILES)


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.parent.name)
def test_requests_reproduce_guidellm_summary(loaded, src):
    """numpy over the imported requests reproduces GuideLLM's figures per benchmark.

    Means are plain means of the same per-request values (1e-9 relative). GuideLLM's median is
    an order statistic (Percentiles.from_pdf: inverted CDF), so it must be one of the two middle
    values of ours, and numpy's median lies between them. Output throughput is total output
    tokens / measured window (its time-weighted rate's mean), 1e-9 relative.
    """
    result, tables = loaded
    run = next(r for r in result.runs if r.source_file == str(src))
    req = tables.requests[tables.requests.run_id == run.run.run_id]
    for streams, b in _benchmarks(src):
        ok = req[(req.concurrency == streams) & req.error.isna()]
        metrics = b["metrics"]
        assert len(ok) == metrics["request_totals"]["successful"]
        ttft = metrics["time_to_first_token_ms"]["successful"]
        assert np.mean(ok.ttft_ms) == pytest.approx(ttft["mean"], rel=1e-9)
        s = np.sort(ok.ttft_ms.to_numpy())
        mid = [s[(len(s) - 1) // 2], s[len(s) // 2]]
        assert ttft["median"] in mid or ttft["median"] == pytest.approx(np.median(s), rel=1e-9)
        lat = metrics["request_latency"]["successful"]
        assert np.mean(ok.e2e_latency_ms) == pytest.approx(lat["mean"] * 1000, rel=1e-9)
        otps = metrics["output_tokens_per_second"]["successful"]["mean"]
        assert ok.output_tokens.sum() / b["duration"] == pytest.approx(otps, rel=1e-9)
        assert np.mean(ok.prompt_tokens) == pytest.approx(metrics["prompt_token_count"]["successful"]["mean"])


@pytest.mark.parametrize("src", FILES, ids=lambda p: p.parent.name)
def test_measurements_are_the_files_figures(loaded, src):
    result, tables = loaded
    run = next(r for r in result.runs if r.source_file == str(src))
    m = tables.measurements[tables.measurements.run_id == run.run.run_id]
    for streams, b in _benchmarks(src):
        cell = m[m.concurrency == streams]
        got = {(r.metric, r.statistic): r for r in cell.itertuples()}
        ttft = b["metrics"]["time_to_first_token_ms"]["successful"]
        assert got[("ttft_ms", "mean")].value == ttft["mean"]
        assert got[("ttft_ms", "p50")].value == ttft["median"]
        assert got[("ttft_ms", "p99")].value == ttft["percentiles"]["p99"]
        if ttft.get("mean_ci"):
            assert got[("ttft_ms", "mean")].ci_low == ttft["mean_ci"]["lower"]
            assert got[("ttft_ms", "mean")].ci_level == b["config"]["confidence"]
        lat = b["metrics"]["request_latency"]["successful"]
        assert got[("e2e_latency_ms", "mean")].value == pytest.approx(lat["mean"] * 1000)
        assert got[("output_tok_s", "mean")].value == b["metrics"]["output_tokens_per_second"]["successful"]["mean"]
        assert got[("request_rate", "mean")].value == b["metrics"]["requests_per_second"]["successful"]["mean"]
        itl = b["metrics"]["inter_token_latency_ms"]["successful"]["mean"]
        assert got[("decode_tok_s_per_stream", "mean")].value == pytest.approx(1000 / itl)


def test_cached_tokens_reach_the_requests_table(loaded):
    result, tables = loaded
    doc = json.loads(FILES[0].read_text())
    recorded = [r.get("cached_tokens") for b in doc["benchmarks"] for r in b["requests"]["successful"]]
    if not any(v is not None for v in recorded):
        pytest.skip("this GuideLLM capture has no cached tokens")
    run = next(r for r in result.runs if r.source_file == str(FILES[0]))
    req = tables.requests[tables.requests.run_id == run.run.run_id]
    assert req.cached_prompt_tokens.notna().sum() == sum(v is not None for v in recorded)
    assert int(req.cached_prompt_tokens.sum()) == sum(v for v in recorded if v is not None)


def test_passes_seat_and_harness(loaded):
    result, _ = loaded
    assert sorted(r.run.pass_ for r in result.runs) == list(range(1, len(FILES) + 1))
    for lr in result.runs:
        doc = json.loads(Path(lr.source_file).read_text())
        assert lr.run.harness.version == doc["metadata"]["guidellm_version"]
        assert lr.run.seat.model == doc["benchmarks"][0]["config"]["backend"]["model"]
        assert lr.run.warmup_excluded is False  # the captures configure no warm-up


def test_requests_outside_the_measured_window_are_left_out(tmp_path):
    """From v0.4 the request lists include warm-up requests; the metrics (and we) do not."""
    doc = json.loads(FILES[0].read_text())
    b = doc["benchmarks"][0]
    reqs = sorted(b["requests"]["successful"], key=lambda r: r["request_start_time"])
    b["scheduler_metrics"]["measure_start_time"] = reqs[1]["request_end_time"] + 1e-6
    b["config"]["warmup"] = {"percent": None, "value": 1, "mode": "requests"}
    (tmp_path / "x.json").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.refused
    run = result.runs[0].run
    conc = b["config"]["strategy"]["streams"]
    kept = [r for r in run.requests if r.concurrency == conc]
    assert len(kept) == len(reqs) - 2
    assert run.warmup_excluded is True
    assert "outside the measured window" in run.notes


def test_older_report_layout_from_the_source(tmp_path):
    """GuideLLM 0.3 (src/guidellm/benchmark/benchmark.py at v0.3.0): args, worker and run_stats, no config."""
    dist = lambda v: {
        "mean": v,
        "median": v,
        "mode": v,
        "variance": 0,
        "std_dev": 0,
        "min": v,
        "max": v,  # noqa: E731
        "count": 2,
        "total_sum": 2 * v,
        "percentiles": {k: v for k in ("p50", "p90", "p95", "p99")},
    }
    req = {
        "type_": "generative_text_response",
        "request_id": "a",
        "request_type": "chat_completions",
        "prompt_tokens": 10,
        "output_tokens": 5,
        "start_time": 1.7e9,
        "end_time": 1.7e9 + 0.5,
        "first_token_time": 1.7e9 + 0.1,
        "last_token_time": 1.7e9 + 0.5,
        "output": "hello",
        "request_latency": 0.5,
        "time_to_first_token_ms": 100.0,
        "inter_token_latency_ms": 100.0,
    }
    doc = {
        "benchmarks": [
            {
                "type_": "generative_benchmark",
                "id_": "x",
                "run_id": "y",
                "args": {
                    "strategy": {"type_": "concurrent", "streams": 2},
                    "warmup_number": None,
                    "warmup_duration": None,
                    "max_number": 2,
                },
                "run_stats": {"start_time": 1.7e9, "end_time": 1.7e9 + 1},
                "worker": {"type_": "generative_requests_worker", "backend_model": "org/model-7b"},
                "start_time": 1.7e9,
                "end_time": 1.7e9 + 1,
                "metrics": {
                    "time_to_first_token_ms": {"successful": dist(100.0)},
                    "inter_token_latency_ms": {"successful": dist(100.0)},
                    "request_latency": {"successful": dist(0.5)},
                    "output_tokens_per_second": {"successful": dist(10.0)},
                    "requests_per_second": {"successful": dist(2.0)},
                },
                "requests": {"successful": [req, dict(req, request_id="b")], "errored": [], "incomplete": []},
            }
        ]
    }
    (tmp_path / "old.json").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.refused, result.refused
    run = result.runs[0].run
    assert run.seat.model == "org/model-7b" and run.seat.id == "org_model-7b"
    assert {m.concurrency for m in run.measurements} == {2}
    assert run.requests[0].e2e_latency_ms == 500.0 and run.warmup_excluded is False
    assert run.date.startswith("2023-11-14")


def test_rate_strategies_are_separate_workloads(tmp_path):
    doc = json.loads(FILES[0].read_text())
    b1 = doc["benchmarks"][0]
    b2 = copy.deepcopy(b1)
    b1["config"]["strategy"] = {"type_": "constant", "rate": 2.0}
    b2["config"]["strategy"] = {"type_": "poisson", "rate": 5.0}
    doc["benchmarks"] = [b1, b2]
    (tmp_path / "x.json").write_text(json.dumps(doc))
    run = load([tmp_path]).runs[0].run
    assert {m.workload for m in run.measurements} == {"decode-constant-2rps", "decode-poisson-5rps"}
    assert {m.concurrency for m in run.measurements} == {None}


def test_a_sampled_report_keeps_guidellm_failure_share(tmp_path):
    """A report that keeps only some of its requests (sample_size): the missing ones are request
    rows without timings, so the failed share is GuideLLM's counts', not the sample's."""
    doc = json.loads(FILES[0].read_text())
    b = doc["benchmarks"][0]
    ok = b["requests"]["successful"]
    err = dict(ok[0], info=dict(ok[0].get("info") or {}, error="HTTP 500: overloaded"))
    b["requests"]["errored"] = [err]
    b["requests"]["successful"] = ok[:4]
    b["metrics"]["request_totals"] = {"successful": len(ok), "errored": 3, "incomplete": 0, "total": len(ok) + 3}
    (tmp_path / "x.json").write_text(json.dumps(doc))
    run = load([tmp_path]).runs[0].run
    reqs = [r for r in run.requests if r.concurrency == run.measurements[0].concurrency]
    assert sum(r.finish_reason == "error" for r in reqs) == 3
    assert sum(r.finish_reason is None for r in reqs) == len(ok)
    assert sum(r.ttft_ms is not None for r in reqs) == 4 + 1
    assert "keeps a sample of its requests" in run.notes


def test_a_broken_benchmark_is_refused_with_its_path(tmp_path):
    doc = json.loads(FILES[0].read_text())
    doc["benchmarks"].append({"type_": "generative_benchmark", "oops": 1})
    (tmp_path / "x.json").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.runs and len(result.refused) == 1
    r = result.refused[0]
    assert r.json_path == f"$.benchmarks[{len(doc['benchmarks']) - 1}]"
    assert 'found an object with keys "type_", "oops"' in r.message


def test_a_report_with_no_benchmarks_is_skipped(tmp_path):
    doc = json.loads(FILES[0].read_text())
    doc["benchmarks"] = []
    (tmp_path / "x.json").write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.refused and "no benchmarks" in result.skipped[0].reason


def _mismatched_cells(folder) -> set[tuple]:
    """(metric, statistic, concurrency) of every cell import.figure_mismatch names."""
    from benchreport.pipeline import Options, analyse

    flags = analyse(load([folder]), Options(n_boot=200)).flags
    out = set()
    for ev in flags.loc[flags["code"] == "import.figure_mismatch", "evidence"]:
        ev = json.loads(ev) if isinstance(ev, str) else ev
        for c in ev.get("cells", []):
            out.add((c.get("metric"), c.get("statistic"), c.get("concurrency")))
    return out


def test_a_sampled_report_is_not_checked_against_its_sample_but_an_edited_figure_is(tmp_path):
    """`--metrics sample_size=8`: 8 request records of each benchmark's requests. The sample's mean
    differs from GuideLLM's figure over all of them by sampling error alone, which is no mismatch
    (it was 422 false ones on a real capture, issue 26); a figure edited in a full report is one."""
    doc = json.loads(FILES[0].read_text())
    full = tmp_path / "full"
    full.mkdir()
    (full / "x.json").write_text(json.dumps(doc))
    before = _mismatched_cells(full)
    sampled = copy.deepcopy(doc)
    for b in sampled["benchmarks"]:
        ok = b["requests"]["successful"]
        if len(ok) <= 10:
            continue
        b["metrics"]["request_totals"] = {"successful": len(ok), "errored": 0, "incomplete": 0, "total": len(ok)}
        # the slowest 8: a biased sample on purpose, so its TTFT mean is far from GuideLLM's
        b["requests"]["successful"] = sorted(ok, key=lambda r: -(r.get("time_to_first_token_ms") or 0))[:8]
    (tmp_path / "sampled").mkdir()
    (tmp_path / "sampled" / "x.json").write_text(json.dumps(sampled))
    result = load([tmp_path / "sampled"])
    assert any("not checked against the sample" in (lr.run.notes or "") for lr in result.runs)
    after = _mismatched_cells(tmp_path / "sampled")
    assert not any(m == "ttft_ms" for m, _, _ in after), after
    assert after <= before  # nothing new from the sample; what the full file shows is conventions
    edited = copy.deepcopy(doc)
    ttft = edited["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"]
    ttft["mean"] = ttft["mean"] * 1.3
    (tmp_path / "edited").mkdir()
    (tmp_path / "edited" / "x.json").write_text(json.dumps(edited))
    assert any(m == "ttft_ms" and st == "mean" for m, st, _ in _mismatched_cells(tmp_path / "edited") - before)
