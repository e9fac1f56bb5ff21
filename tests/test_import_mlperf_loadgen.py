"""MLPerf LoadGen logs: mlperf_log_detail.txt as aggregates with their sample counts; INVALID never silent."""

from __future__ import annotations

import shutil
from pathlib import Path

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
    behind them as LoadGen logged them; no ITL (LoadGen has none; TPOT is the decode rate). Offline
    has no request latency: its latencies are times since its one query was issued, left out."""
    folder, result, _, passes = loaded
    run = _run(result, folder, entry["file"]).run
    rid = run.run_id
    assert not run.requests
    if value(entry["scenario"]) == "Offline":
        assert not has_metric(passes, rid, "e2e_latency_ms") and not has_metric(passes, rid, "ttft_ms")
        assert f"p50 {value(entry['latency_p50_ns']) / 1e6:,.0f} ms" in run.notes and "throughput only" in run.notes
    else:
        for key, stat in (
            ("latency_p50_ns", "p50"),
            ("latency_p90_ns", "p90"),
            ("latency_p99_ns", "p99"),
            ("latency_mean_ns", "mean"),
        ):
            assert pass_row(passes, rid, "e2e_latency_ms", stat).value == pytest.approx(
                value(entry[key]) / 1e6, rel=1e-12
            )
    if value(entry["ttft_p50_ns"]) is None:
        assert not has_metric(passes, rid, "ttft_ms")
    else:
        assert pass_row(passes, rid, "ttft_ms", "p50").value == pytest.approx(value(entry["ttft_p50_ns"]) / 1e6)
        assert pass_row(passes, rid, "ttft_ms", "mean").value == pytest.approx(value(entry["ttft_mean_ns"]) / 1e6)
        assert pass_row(passes, rid, "decode_tok_s_per_stream", "p50").value == pytest.approx(
            1e9 / value(entry["tpot_p50_ns"])
        )
    assert value(entry["itl_p50_ns"]) is None and not has_metric(passes, rid, "itl_ms")
    tokens = (
        value(entry["output_tok_s"]) if value(entry["output_tok_s"]) is not None else value(entry["tokens_per_second"])
    )
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
        "decode-server-poisson-4rps"
    }
    assert {m.workload for m in _run(result, folder, "offline/mlperf_log_detail.txt").run.measurements} == {
        "decode-offline"
    }


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


@pytest.mark.parametrize(
    "text, where",
    [
        (':::MLLOG {"key": "loadgen_version", "value": "6.0"}\n:::MLLOG {"key": "result_validity", "val\n', "$"),
        (':::MLLOG {"key": "loadgen_version", "value": "6.0"}\n', "$"),
    ],
)
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
    (tmp_path / "mlperf_log_detail.txt").write_text(
        text.replace(good, f'"value": {json.dumps(stamp)}'), encoding="utf-8"
    )
    result = load([tmp_path])
    assert not result.runs
    (r,) = result.refused
    assert r.json_path == "$.test_datetime" and json.dumps(stamp)[:20] in r.message


# --- an official MLPerf Inference submission tree (issue 40) ---------------------------------

SUBMISSION = HARNESS.parent / "mlperf-submission"  # not in harness/: see its README
NVIDIA = SUBMISSION / "closed" / "NVIDIA"
SYSTEM = "B200-SXM-180GBx8_TRT"
RESULTS = NVIDIA / "results" / SYSTEM / "deepseek-r1"
SYSTEM_NAME = "NVIDIA DGX B200 (8x B200-SXM-180GB, TensorRT)"


def _logged(path, key):
    """LoadGen's own value of `key` in a detail log (the first record of it, as LoadGen's summary reads)."""
    import json
    import re

    line = re.search(r'^:::MLLOG (\{"key": "' + re.escape(key) + r'".*)$', path.read_text(), re.M).group(1)
    return json.loads(line)["value"]


def _by_scenario(result):
    return {lr.run.measurements[0].workload: lr.run for lr in result.runs}


@pytest.fixture(scope="module")
def submission():
    result, tables, passes = load_tables(SUBMISSION)
    return result, tables, passes


def test_a_submission_tree_reads_every_performance_run_and_skips_the_rest_with_reasons(submission):
    """Performance run_1 logs are the runs; the accuracy-mode log (no validity record: normal), the
    accuracy log the submission tools cut short, accuracy.txt, the system and implementation
    descriptions and the compliance files are skipped with their reasons; nothing is refused."""
    result, _, _ = submission
    assert not result.refused, [str(r) for r in result.refused]
    assert sorted(r.source_file for r in result.runs) == sorted(
        str(RESULTS / s / "performance" / "run_1" / "mlperf_log_detail.txt") for s in ("Offline", "Server")
    )
    reasons = {
        str(Path(s.path).relative_to(NVIDIA)): s.reason for s in result.skipped if Path(s.path).is_relative_to(NVIDIA)
    }
    assert {s.path for s in result.skipped} - {str(NVIDIA / r) for r in reasons} == {str(SUBMISSION / "README.md")}
    assert reasons[f"systems/{SYSTEM}.json"] == (
        "an MLPerf system description, read into the seats of the results beside it"
    )
    acc = f"results/{SYSTEM}/deepseek-r1/Offline/accuracy/"
    assert "accuracy-mode log (AccuracyOnly)" in reasons[acc + "mlperf_log_detail.txt"]
    assert "normal, not damage" in reasons[acc + "mlperf_log_detail.txt"]
    for scenario in ("Offline", "Server"):
        cut = reasons[f"results/{SYSTEM}/deepseek-r1/{scenario}/accuracy/mlperf_log_accuracy.json"]
        assert "cut to its first and last 4 KiB by the MLPerf submission tools" in cut
        assert "compliance" in reasons[f"compliance/{SYSTEM}/deepseek-r1/{scenario}/TEST06/verify_accuracy.txt"]
        impl = reasons[f"measurements/{SYSTEM}/deepseek-r1/{scenario}/{SYSTEM}_{scenario}.json"]
        assert impl.startswith("an MLPerf implementation description") and "read into the seats" in impl
    scores = reasons[acc + "accuracy.txt"]
    assert "exact_match 81.4494" in scores and "read into the notes" in scores
    assert "exact_match 81.4494, tokens_per_sample 3758.85" in _by_scenario(result)["decode-offline"].notes


def test_offline_gives_throughput_only_and_server_its_token_latencies(submission):
    """Offline's latencies are times since its one query was issued: no e2e latency (nor TTFT) is
    measured; its tokens/s and samples/s are LoadGen's. Server: TTFT and TPOT percentiles,
    completed tokens/s and samples/s, as logged."""
    result, _, passes = submission
    runs = _by_scenario(result)
    offline, server = runs["decode-offline"], runs["decode-server-poisson-5rps"]
    off_log = RESULTS / "Offline" / "performance" / "run_1" / "mlperf_log_detail.txt"
    srv_log = RESULTS / "Server" / "performance" / "run_1" / "mlperf_log_detail.txt"
    assert {m.metric for m in offline.measurements} == {"output_tok_s", "request_rate"}
    assert not has_metric(passes, offline.run_id, "e2e_latency_ms")
    assert pass_row(passes, offline.run_id, "output_tok_s", "mean").value == _logged(
        off_log, "result_tokens_per_second"
    )
    assert pass_row(passes, offline.run_id, "request_rate", "mean").value == _logged(
        off_log, "result_samples_per_second"
    )
    assert "not request latencies: left out" in offline.notes and "result_validity VALID" in offline.notes
    assert (
        pass_row(passes, server.run_id, "output_tok_s", "mean").value
        == _logged(srv_log, "result_completed_tokens_per_second")
        == 18592.2
    )
    assert pass_row(passes, server.run_id, "request_rate", "mean").value == _logged(
        srv_log, "result_completed_samples_per_sec"
    )
    assert pass_row(passes, server.run_id, "ttft_ms", "p50").value == pytest.approx(
        _logged(srv_log, "result_first_token_50.00_percentile_latency_ns") / 1e6
    )
    assert pass_row(passes, server.run_id, "decode_tok_s_per_stream", "p50").value == pytest.approx(
        1e9 / _logged(srv_log, "result_time_per_output_token_50.00_percentile_ns")
    )
    assert "scheduled 5.01703 samples/s" in server.notes
    assert "queries over LoadGen's latency target" not in server.notes  # no e2e target (0): not a finding
    assert not server.events and not offline.events


def test_the_seat_is_the_benchmark_on_the_system_its_description_records(submission):
    result, tables, _ = submission
    (seat_id,) = {lr.run.seat.id for lr in result.runs}
    seat = result.runs[0].run.seat
    assert (
        seat.model == "deepseek-r1" and seat_id == "deepseek-r1--B200-SXM-180GBx8_TRT-NVIDIA"
    )  # the results folder and submitter
    assert seat.quantisation == "fp4" and seat.engine == "TensorRT 10.11, CUDA 12.9"
    settings = dict(seat.settings)
    assert settings["system"] == SYSTEM_NAME and settings["hardware"] == "NVIDIA B200-SXM-180GB"
    assert settings["accelerators"] == 8 and settings["nodes"] == 1 and settings["submitter"] == "NVIDIA"
    assert any("configuration the files record" in a for a in result.runs[0].assumptions)


def _tree_copy(tmp_path):
    import shutil

    dest = tmp_path / "submission"
    shutil.copytree(SUBMISSION, dest)
    return dest, dest / "closed" / "NVIDIA"


def test_two_systems_of_one_benchmark_are_two_seats_named_by_their_systems(tmp_path):
    import json
    import shutil

    root, nvidia = _tree_copy(tmp_path)
    other = "H200-SXM-141GBx8_TRT"
    shutil.copytree(nvidia / "results" / SYSTEM, nvidia / "results" / other)
    desc = json.loads((nvidia / "systems" / f"{SYSTEM}.json").read_text())
    desc.update(system_name="NVIDIA H200 (8x H200-SXM-141GB, TensorRT)", accelerator_model_name="NVIDIA H200-SXM-141GB")
    (nvidia / "systems" / f"{other}.json").write_text(json.dumps(desc))
    for log in (nvidia / "results" / other).rglob("mlperf_log_detail.txt"):  # another run: other bytes
        log.write_text(log.read_text() + "\n")
    result = load([root])
    assert not result.refused, [str(r) for r in result.refused]
    seats = {lr.run.seat.id: lr.run.seat for lr in result.runs}
    assert len(result.runs) == 4 and len(seats) == 2
    assert {s.settings["system"] for s in seats.values()} == {SYSTEM_NAME, "NVIDIA H200 (8x H200-SXM-141GB, TensorRT)"}
    assert any("B200" in i and "H200" not in i for i in seats) and any(
        i.endswith("--H200-SXM-141GBx8_TRT-NVIDIA") for i in seats
    )


def test_without_its_system_description_the_system_is_the_results_folder_stated(tmp_path):
    """Only files given are read: the results folder alone does not reach systems/ beside it."""
    result = load([RESULTS])
    assert not result.refused and len(result.runs) == 2
    run = result.runs[0]
    assert run.run.seat.settings["system"] == SYSTEM and run.run.seat.model == "deepseek-r1"
    assert any("named after its results folder" in a for a in run.assumptions)


def test_a_compliance_performance_run_is_not_a_pass(tmp_path):
    import shutil

    root, nvidia = _tree_copy(tmp_path)
    audit = nvidia / "compliance" / SYSTEM / "deepseek-r1" / "Offline" / "TEST01" / "performance" / "run_1"
    audit.mkdir(parents=True)
    log = (RESULTS / "Offline" / "performance" / "run_1" / "mlperf_log_detail.txt").read_text()
    (audit / "mlperf_log_detail.txt").write_text(log.replace("2025-07-28T21:46:35Z", "2025-07-29T01:00:00Z"))
    shutil.copy(RESULTS / "Offline" / "performance" / "run_1" / "mlperf_log_summary.txt", audit)
    result = load([root])
    assert not result.refused and len(result.runs) == 2
    assert all("/compliance/" not in lr.source_file for lr in result.runs)
    reason = next(s.reason for s in result.skipped if s.path == str(audit / "mlperf_log_detail.txt"))
    assert reason.startswith("MLPerf compliance run (TEST01 of deepseek-r1 Offline")
    assert "not a performance pass" in reason


def test_an_interactive_run_is_named_so_though_loadgen_logs_server(tmp_path):
    """LoadGen runs Interactive as its Server scenario: the submission's folder says which."""
    import shutil

    run1 = tmp_path / "NVIDIA" / "results" / SYSTEM / "deepseek-r1" / "Interactive" / "performance" / "run_1"
    run1.mkdir(parents=True)
    shutil.copy(RESULTS / "Server" / "performance" / "run_1" / "mlperf_log_detail.txt", run1)
    (run) = load([tmp_path]).runs[0].run
    assert {m.workload for m in run.measurements} == {"decode-interactive-poisson-5rps"}
    assert "Interactive scenario" in run.notes and "(TTFT 2000 ms, TPOT 80 ms)" in run.notes


def test_inferred_tokens_per_second_is_read_and_said(tmp_path):
    """gpt-j's LoadGen logs tokens/s inferred from samples/s (result_inferred_tokens_per_second)."""
    text = (RESULTS / "Offline" / "performance" / "run_1" / "mlperf_log_detail.txt").read_text()
    assert '"key": "result_tokens_per_second", "value": 33379,' in text
    (tmp_path / "mlperf_log_detail.txt").write_text(
        text.replace('"key": "result_tokens_per_second"', '"key": "result_inferred_tokens_per_second"')
    )
    (run,) = [lr.run for lr in load([tmp_path]).runs]
    assert [m.value for m in run.measurements if m.metric == "output_tok_s"] == [33379]
    assert "not counted tokens" in run.notes


def test_an_accuracy_log_cut_otherwise_is_still_refused(tmp_path):
    (tmp_path / "mlperf_log_accuracy.json").write_text('[\n{ "seq_id" : 0, "qsl_idx" : 12, "data" : "0A0B')
    (r,) = load([tmp_path]).refused
    assert "the file is damaged" in r.message


def test_the_command_line_reads_the_tree(tmp_path):
    """`benchreport validate` and `analyse` on the tree: nothing refused; the tables carry the seat's
    configuration and LoadGen's figures; Offline has no latency row."""
    import subprocess
    import sys

    import pandas as pd

    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "validate", str(SUBMISSION)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "2 run(s) valid, 0 file(s) refused" in proc.stderr
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "analyse", str(SUBMISSION), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    seats = pd.read_csv(out / "tables" / "seats.csv")
    assert len(seats) == 1 and seats.model[0] == "deepseek-r1" and seats.quantisation[0] == "fp4"
    passes = pd.read_csv(out / "tables" / "passes.csv")
    offline = passes[passes.workload == "decode-offline"]
    assert set(offline.metric) == {"output_tok_s", "request_rate"}
    assert offline[offline.metric == "output_tok_s"].value.tolist() == [33379]
    server = passes[passes.workload == "decode-server-poisson-5rps"]
    assert server[server.metric == "output_tok_s"].value.tolist() == [18592.2]


def test_one_system_name_from_two_submitters_is_two_seats(tmp_path):
    """NVIDIA, Google and Lambda all submit "NVIDIA DGX B200 (8x B200-SXM-180GB, TensorRT)" in v5.1:
    their results are not passes of one seat."""
    import shutil

    root, nvidia = _tree_copy(tmp_path)
    google = nvidia.parent / "Google"
    shutil.copytree(nvidia / "systems", google / "systems")
    shutil.copytree(nvidia / "results", google / "results")
    for log in (google / "results").rglob("mlperf_log_detail.txt"):
        log.write_text(log.read_text() + "\n")
    result = load([root])
    assert not result.refused and len(result.runs) == 4
    seats = {lr.run.seat.id for lr in result.runs}
    assert len(seats) == 2 and any(i.endswith("-Google") for i in seats)
