"""MLPerf LoadGen logs: mlperf_log_detail.txt as aggregates with their sample counts; INVALID never silent."""
from __future__ import annotations

import shutil

import pytest

from benchreport.flags.rules import faults
from benchreport.load import load
from harness_oracle import HARNESS, copy_with_manifest, has_metric, load_tables, oracle, pass_row, value

FOLDER = "mlperf-loadgen"
ORACLE = oracle(FOLDER)["results"]
MANIFEST = "version: 1\nruns:\n  - files: '**'\n    seat: {id: tiny-gpt2-s1, model: tiny-gpt2-s1}\n"


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    folder = copy_with_manifest(FOLDER, tmp_path_factory.mktemp("ml") / FOLDER, MANIFEST)
    return (folder,) + load_tables(folder)


def _run(result, folder, file):
    return next(r for r in result.runs if r.source_file == str(folder / file))


def test_detail_logs_are_runs_and_the_rest_is_skipped_with_reasons(loaded):
    folder, result, _, _ = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert sorted(r.source_file for r in result.runs) == sorted(str(folder / e["file"]) for e in ORACLE)
    reasons = {s.path.split(FOLDER + "/", 1)[1]: s.reason for s in result.skipped}
    for scenario in ("offline", "server-qps4"):
        assert "human-readable twin" in reasons[f"{scenario}/mlperf_log_summary.txt"]
        assert "human-readable twin" in reasons[f"{scenario}/stdout.txt"]
        assert reasons[f"{scenario}/mlperf_log_trace.json"].startswith("MLPerf LoadGen trace log, empty")
        assert "no entries" in reasons[f"{scenario}/mlperf_log_accuracy.json"]


@pytest.mark.parametrize("entry", ORACLE, ids=lambda e: e["scenario"]["value"])
def test_our_figures_are_loadgens(loaded, entry):
    """Latency and first-token percentiles (ns, converted once), throughput, and the sample counts
    behind them as LoadGen logged them; no ITL (LoadGen has none; TPOT is the decode rate)."""
    folder, result, _, passes = loaded
    run = _run(result, folder, entry["file"]).run
    rid = run.run_id
    assert not run.requests
    for key, stat in (("latency_p50_ns", "p50"), ("latency_p90_ns", "p90"), ("latency_p99_ns", "p99"),
                      ("latency_mean_ns", "mean")):
        assert pass_row(passes, rid, "e2e_latency_ms", stat).value == pytest.approx(value(entry[key]) / 1e6, rel=1e-12)
    if value(entry["ttft_p50_ns"]) is None:
        assert not has_metric(passes, rid, "ttft_ms")
    else:
        assert pass_row(passes, rid, "ttft_ms", "p50").value == pytest.approx(value(entry["ttft_p50_ns"]) / 1e6)
        assert pass_row(passes, rid, "ttft_ms", "mean").value == pytest.approx(value(entry["ttft_mean_ns"]) / 1e6)
        assert pass_row(passes, rid, "decode_tok_s_per_stream", "p50").value == pytest.approx(
            1e9 / value(entry["tpot_p50_ns"]))
    assert value(entry["itl_p50_ns"]) is None and not has_metric(passes, rid, "itl_ms")
    tokens = value(entry["output_tok_s"]) if value(entry["output_tok_s"]) is not None else value(
        entry["tokens_per_second"])
    assert pass_row(passes, rid, "output_tok_s", "mean").value == tokens
    samples = value(entry["request_count"]) * value(entry["generated_samples_per_query"])
    assert {m.n for m in run.measurements} == {samples}
    rate = first_of(value(entry["completed_samples_per_sec"]), value(entry["samples_per_second"]))
    assert pass_row(passes, rid, "request_rate", "mean").value == rate
    assert f"result_validity {value(entry['result_validity'])}" in run.notes


def first_of(*values):
    return next(v for v in values if v is not None)


def test_invalid_result_is_a_fault_the_report_flags(loaded):
    """result_validity INVALID goes into the notes and becomes a `fault` event (fault.recorded,
    warn), so it reaches the report's limitations section."""
    folder, result, tables, _ = loaded
    server = _run(result, folder, "server-qps4/mlperf_log_detail.txt").run
    offline = _run(result, folder, "offline/mlperf_log_detail.txt").run
    assert [e.kind for e in server.events] == ["fault"] and not offline.events
    assert "INVALID" in server.events[0].message and "435 more queries" in server.events[0].message
    assert "early stopping" in server.notes and "17 of 24 queries over" in server.notes
    assert "not failed samples" in server.notes  # LoadGen's num_errors is a log line, not a failure
    flags = faults(tables.events)
    assert [(f.code, f.severity) for f in flags] == [("fault.recorded", "warn")]
    assert "INVALID" in flags[0].message


def test_workloads_name_the_scenario(loaded):
    folder, result, _, _ = loaded
    assert {m.workload for m in _run(result, folder, "server-qps4/mlperf_log_detail.txt").run.measurements} == {
        "decode-server-poisson-4rps"}
    assert {m.workload for m in _run(result, folder, "offline/mlperf_log_detail.txt").run.measurements} == {
        "decode-offline"}


def test_date_and_version_from_the_log(loaded):
    folder, result, _, _ = loaded
    run = _run(result, folder, "server-qps4/mlperf_log_detail.txt").run
    assert run.date.startswith("2026-12-01T10:54:40") and run.harness.version.startswith("6.0.17")


def test_without_a_manifest_the_seat_is_its_folder(tmp_path):
    """LoadGen's log names no model: the seat is named after the folder, never refused (issue 25)."""
    shutil.copy(HARNESS / FOLDER / "offline" / "mlperf_log_detail.txt", tmp_path)
    result = load([tmp_path])
    assert not result.refused and [lr.run.seat.id for lr in result.runs] == [tmp_path.name]
    assert "benchreport.yaml manifest" in "; ".join(result.runs[0].assumptions)


@pytest.mark.parametrize("text, where", [
    (':::MLLOG {"key": "loadgen_version", "value": "6.0"}\n:::MLLOG {"key": "result_validity", "val\n', "$"),
    (':::MLLOG {"key": "loadgen_version", "value": "6.0"}\n', "$"),
])
def test_a_broken_or_unfinished_log_is_refused(tmp_path, text, where):
    (tmp_path / "mlperf_log_detail.txt").write_text(text)
    (tmp_path / "benchreport.yaml").write_text(MANIFEST)
    result = load([tmp_path])
    assert not result.runs and result.refused[0].json_path == where
    assert result.refused[0].message.startswith("expected a")


def test_an_empty_json_elsewhere_is_still_refused(tmp_path):
    (tmp_path / "result.json").write_bytes(b"")
    assert "empty file" in load([tmp_path]).refused[0].message


@pytest.mark.parametrize("stamp", ["2026-13-45T99:00:00Z", "not a date", "9999-01-01T00:00:00Z", 20261201])
def test_an_impossible_test_datetime_is_refused_with_its_key(tmp_path, stamp):
    """A date LoadGen cannot have written is refused by its key, never replaced by the file's time."""
    import json

    text = (HARNESS / FOLDER / "offline" / "mlperf_log_detail.txt").read_text(encoding="utf-8")
    good = '"value": "2026-12-01T10:54:46Z"'
    assert good in text
    (tmp_path / "mlperf_log_detail.txt").write_text(text.replace(good, f'"value": {json.dumps(stamp)}'),
                                                    encoding="utf-8")
    result = load([tmp_path])
    assert not result.runs
    (r,) = result.refused
    assert r.json_path == "$.test_datetime" and json.dumps(stamp)[:20] in r.message
