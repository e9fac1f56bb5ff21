"""Our figures against the harnesses' own, per result file: every `expected.json` oracle of the
harnesses benchreport reads (AIPerf, GenAI-Perf, vLLM, GuideLLM; tests/fixtures/harness/README.md).

For each result file the oracle lists: the run we import carries the harness's TTFT p50 and
mean, ITL p50 and mean and output throughput as measurements (converted once, by the unit the
harness wrote), our request records count the harness's successful and failed requests, and
where the records have the per-request values, our statistic of them reproduces the harness's
TTFT (and, for AIPerf, ITL) to rounding. Phase copies and warm-up phases the oracle lists are
skipped, with the reason; aggregates over trials are checked against the trials read.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from benchreport.load import load
from benchreport.load.harness._common import ms_factor

HARNESS = Path(__file__).parent / "fixtures" / "harness"
TOOLS = {"aiperf", "genai-perf", "vllm", "guidellm"}
ORACLES = sorted(p for p in HARNESS.rglob("expected.json") if json.loads(p.read_text())["tool"] in TOOLS)
#: (oracle figure, native metric, statistic)
FIGURES = (
    ("ttft_p50", "ttft_ms", "p50"),
    ("ttft_mean", "ttft_ms", "mean"),
    ("itl_p50", "itl_ms", "p50"),
    ("itl_mean", "itl_ms", "mean"),
    ("output_token_throughput", "output_tok_s", "mean"),
)


def _entries(kind: str) -> list:
    """(oracle, result entry) pairs: run files (`kind` "run") or phase copies ("phase")."""
    out = []
    for oracle in ORACLES:
        for entry in json.loads(oracle.read_text())["results"]:
            is_run = entry.get("phase") in (None, "profiling")
            if is_run == (kind == "run"):
                out.append(pytest.param(oracle, entry, id=f"{oracle.parent.relative_to(HARNESS)}/{entry['file']}"))
    return out


@lru_cache(maxsize=None)
def _loaded(folder: Path):
    return load([folder])


def _run(oracle: Path, entry: dict):
    """The run imported from the entry's file (the entry's line of an --append-result file)."""
    result = _loaded(oracle.parent)
    path = str(oracle.parent / entry["file"])
    runs = [lr for lr in result.runs if lr.source_file == path]
    if "line" in entry and len(runs) > 1:
        runs = [lr for lr in runs if lr.run.run_id.endswith(f"-r{entry['line']}")]
    assert len(runs) == 1, (path, [lr.source_file for lr in result.runs], [str(r) for r in result.refused])
    return runs[0]


def _cell(entry: dict):
    """(workload suffix, concurrency) of a GuideLLM benchmark entry, None for a whole-file entry."""
    strategy = (entry.get("strategy") or {}).get("value")
    if not isinstance(strategy, dict):
        return None
    from benchreport.load.harness.guidellm import strategy_cell

    return strategy_cell(strategy)


def _measurements(lr, entry: dict) -> list:
    cell = _cell(entry)
    if cell is None:
        return list(lr.run.measurements)
    return [m for m in lr.run.measurements if m.concurrency == cell[1] and m.workload.endswith(cell[0] or "decode")]


def _requests(lr, entry: dict) -> list:
    cell = _cell(entry)
    reqs = list(lr.run.requests or [])
    if cell is None:
        return reqs
    return [r for r in reqs if r.concurrency == cell[1] and r.workload.endswith(cell[0] or "decode")]


FAILED = ("error", "incomplete", "cancelled")


def _native(fig: dict, metric: str) -> float:
    """The oracle figure in the native unit (ms for latencies, by the unit the harness wrote)."""
    if metric.endswith("_ms"):
        return fig["value"] * ms_factor(str(fig["unit"]).split(" ")[0])
    return fig["value"]


def test_oracles_present():
    tools = {json.loads(p.read_text())["tool"] for p in ORACLES}
    assert {"aiperf", "genai-perf", "vllm"} <= tools


@pytest.mark.parametrize("oracle", ORACLES, ids=lambda p: str(p.parent.relative_to(HARNESS)))
def test_folder_loads_as_written(oracle):
    """Nothing refused: side files, phase copies, aggregates and the oracle itself are skipped."""
    result = _loaded(oracle.parent)
    assert not result.refused, [str(r) for r in result.refused]
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert "test oracle" in reasons["expected.json"]


@pytest.mark.parametrize("oracle,entry", _entries("run"))
def test_measurements_are_the_harness_figures(oracle, entry):
    lr = _run(oracle, entry)
    got = {(m.metric, m.statistic or "mean"): m.value for m in _measurements(lr, entry)}
    for name, metric, stat in FIGURES:
        fig = entry["figures"][name]
        if fig["value"] is None:
            assert (metric, stat) not in got, name
            continue
        assert got[(metric, stat)] == pytest.approx(_native(fig, metric), rel=1e-12), name


@pytest.mark.parametrize("oracle,entry", _entries("run"))
def test_request_counts_are_the_harness_counts(oracle, entry):
    """Successful and failed requests: records (timed or, for counts only, without timings)."""
    lr = _run(oracle, entry)
    figs = entry["figures"]
    reqs = _requests(lr, entry)
    failed = sum(1 for r in reqs if r.finish_reason == "error")
    ok = sum(1 for r in reqs if r.finish_reason not in FAILED)
    if reqs:
        assert ok == figs["request_count"]["value"]
    else:  # a summary with no per-request data at all: the count is the measurements' n
        assert {m.n for m in _measurements(lr, entry) if m.metric == "ttft_ms"} == {figs["request_count"]["value"]}
    want_failed = figs["failed_count"]["value"]
    if want_failed is None and "num_prompts" in figs:  # vLLM 0.6 writes no failed count
        want_failed = figs["num_prompts"]["value"] - figs["request_count"]["value"]
    if want_failed is not None:
        assert failed == want_failed
    if (figs.get("incomplete_count") or {}).get("value") is not None:
        assert sum(1 for r in reqs if r.finish_reason == "incomplete") == figs["incomplete_count"]["value"]


@pytest.mark.parametrize("oracle,entry", _entries("run"))
def test_request_records_reproduce_the_harness_figures(oracle, entry):
    """Our statistic of the imported requests against the harness's: TTFT always, ITL where the
    harness's ITL is per request (AIPerf, GuideLLM; vLLM pools every gap of every request, which
    records of per-request means cannot). AIPerf and vLLM take numpy's linear percentiles, as we
    do; GuideLLM's median is an order statistic of its own (one of the two middle values)."""
    lr = _run(oracle, entry)
    ok = [r for r in _requests(lr, entry) if r.finish_reason not in FAILED and r.ttft_ms is not None]
    if not ok:
        pytest.skip("no per-request timings in this file (summary only)")
    tool = json.loads(oracle.read_text())["tool"]
    fields = [("ttft", "ttft_ms")] + ([("itl", "itl_ms")] if tool in ("aiperf", "guidellm") else [])
    for name, col in fields:
        values = sorted(getattr(r, col) for r in ok)
        assert np.mean(values) == pytest.approx(_native(entry["figures"][f"{name}_mean"], col), rel=1e-9), name
        theirs = _native(entry["figures"][f"{name}_p50"], col)
        if tool == "guidellm":
            middle = values[(len(values) - 1) // 2 : len(values) // 2 + 1]
            assert any(v == pytest.approx(theirs, rel=1e-12) for v in middle), (name, theirs, middle)
        else:
            assert np.median(values) == pytest.approx(theirs, rel=1e-9), name


@pytest.mark.parametrize("oracle,entry", _entries("phase"))
def test_phase_copies_and_warmups_are_skipped_with_the_reason(oracle, entry):
    result = _loaded(oracle.parent)
    path = str(oracle.parent / entry["file"])
    reason = next(s.reason for s in result.skipped if s.path == path)
    if entry["phase"] == "warmup":
        assert reason.startswith("AIPerf warm-up phase export")
        if entry["figures"]["failed_count"]["value"]:
            assert "failed" in reason
    else:
        assert "read once" in reason


def _aggregate_sets(oracle: Path) -> list[tuple[str, int | None, dict]]:
    """(aggregate file, concurrency or None, figures) of every aggregate the oracle lists; a
    sweep aggregate gives one set per parameter combination."""
    out = []
    for agg in json.loads(oracle.read_text()).get("aggregates", []):
        for combo in agg.get("combinations", [agg]):
            params = combo.get("parameters") or combo.get("variation") or {}
            conc = next((v for k, v in params.items() if k.split(".")[-1] == "concurrency"), None)
            out.append((agg["file"], conc, combo["figures"]))
    return out


#: oracle aggregate figure -> (native metric, statistic, from the trials' records or summaries)
AGGREGATE_FIGURES = {
    "ttft_p50_across_trials_mean": ("ttft_ms", "p50"),
    "ttft_mean_across_trials_mean": ("ttft_ms", "mean"),
    "itl_p50_across_trials_mean": ("itl_ms", "p50"),
    "itl_mean_across_trials_mean": ("itl_ms", "mean"),
    "output_token_throughput_across_trials_mean": ("output_tok_s", "mean"),
    "request_count_across_trials_mean": ("requests", "count"),
}


def _trial_value(lr, metric: str, stat: str) -> float:
    ok = [r for r in lr.run.requests if r.finish_reason != "error"]
    if metric == "requests":
        return len(ok)
    if metric.endswith("_ms"):
        vals = [getattr(r, metric) for r in ok]
        return float(np.median(vals) if stat == "p50" else np.mean(vals))
    return next(m.value for m in lr.run.measurements if (m.metric, m.statistic) == (metric, stat))


@pytest.mark.parametrize(
    "oracle",
    [o for o in ORACLES if "aggregates" in json.loads(o.read_text())],
    ids=lambda p: str(p.parent.relative_to(HARNESS)),
)
def test_aggregates_over_trials_agree_with_the_trials_read(oracle):
    """AIPerf's means over trials (the oracle's aggregate figures, sweep combinations included)
    are reproduced from the trials read, latencies from their request records: each trial run
    notes the check, and none is left as a mismatch for the flag."""
    result = _loaded(oracle.parent)
    trials = [lr for lr in result.runs if "profile_runs" in lr.source_file]
    sets = _aggregate_sets(oracle)
    assert sets
    for where, conc, figures in sets:
        mine = [lr for lr in trials if conc is None or {m.concurrency for m in lr.run.measurements} == {conc}]
        assert len(mine) >= 2, where
        for key, (metric, stat) in AGGREGATE_FIGURES.items():
            fig = figures.get(key)
            if not fig or fig["value"] is None:
                continue
            ours = np.mean([_trial_value(lr, metric, stat) for lr in mine])
            assert ours == pytest.approx(_native(fig, metric), rel=1e-9), (where, conc, key)
        assert all(f"aggregate over trials ({where})" in (lr.run.notes or "") for lr in mine), where
    assert not any(lr.checks for lr in result.runs)
