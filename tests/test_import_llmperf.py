"""llmperf `*_summary.json` + `*_individual_responses.json`: one run per summary, NaN read, lost failures said."""

from __future__ import annotations

import json
import shutil

import msgspec
import pytest

from benchreport import conditions
from benchreport.load import load
from harness_oracle import HARNESS, load_tables, oracle, pass_row, requests_of, value

FOLDER = HARNESS / "llmperf"
ORACLE = oracle("llmperf")["results"]


@pytest.fixture(scope="module")
def loaded():
    return load_tables(FOLDER)


def _run(result, file):
    return next(r for r in result.runs if r.source_file == str(FOLDER / file))


def test_one_run_per_summary_with_its_responses(loaded):
    result, _, _ = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert sorted(r.source_file for r in result.runs) == sorted(str(FOLDER / e["file"]) for e in ORACLE)
    assert b"NaN" in (FOLDER / "failed-c2" / "tiny-gpt2-s1_64_24_summary.json").read_bytes()
    assert not [s for s in result.skipped if s.path.endswith("_individual_responses.json")]


@pytest.mark.parametrize("entry", ORACLE, ids=lambda e: e["file"].split("/")[0])
def test_our_figures_are_llmperfs(loaded, entry):
    """TTFT and ITL p50 and means, recomputed from the imported responses, equal llmperf's (pandas
    quantiles over the same seconds, x1000 once); throughput and counts are its own."""
    result, tables, passes = loaded
    run = _run(result, entry["file"]).run
    for metric, key in (("ttft_ms", "ttft"), ("itl_ms", "itl")):
        p50 = pass_row(passes, run.run_id, metric, "p50")
        assert p50.value == pytest.approx(value(entry[f"{key}_p50_s"]) * 1000, rel=1e-12)
        assert p50.recomputed == pytest.approx(value(entry[f"{key}_p50_s"]) * 1000, rel=1e-9)
        assert pass_row(passes, run.run_id, metric, "mean").recomputed == pytest.approx(
            value(entry[f"{key}_mean_s"]) * 1000, rel=1e-9
        )
    out = pass_row(passes, run.run_id, "output_tok_s", "mean").value
    assert out == value(entry["output_tok_s"]) and repr(float(out)) == entry["console_output_throughput"]["value"]
    req = requests_of(tables, run.run_id)
    assert len(req) == value(entry["completed"]) == value(entry["request_count"])
    assert int(req.error.notna().sum()) == value(entry["failed"])
    assert {m.concurrency for m in run.measurements} == {value(entry["num_concurrent_requests"])}


def test_lost_failures_and_nan_are_said_in_the_notes(loaded):
    result, _, _ = loaded
    run = _run(result, "failed-c2/tiny-gpt2-s1_64_24_summary.json").run
    assert "llmperf loses failed requests" in run.notes
    assert "1 requests started, 1 completed, 0 errors" in run.notes
    assert "holds NaN" in run.notes
    assert all(m.metric != "itl_ms" or m.statistic != "stddev" for m in run.measurements)


def test_seat_date_and_probe_from_the_summary(loaded):
    result, tables, _ = loaded
    lr = _run(result, "reasoning-c1/tiny-gpt2-r1_64_24_summary.json")
    doc = json.loads((FOLDER / "reasoning-c1" / "tiny-gpt2-r1_64_24_summary.json").read_text())
    assert lr.run.seat.model == "tiny-gpt2-r1"
    assert lr.run.date.startswith("2026-") and lr.run.harness.probe is None
    assert conditions.words(msgspec.to_builtins(lr.run.load)) == "64±8 → 24±4 tok fixed, streaming"
    assert "reasoning tokens not counted" in "; ".join(lr.assumptions)
    assert all(r.reasoning_tokens is None for r in lr.run.requests)  # llmperf reads no usage
    assert doc["timestamp"] > 0


def test_error_records_are_failed_requests(tmp_path):
    shutil.copytree(FOLDER / "reasoning-c2", tmp_path / "x")
    path = tmp_path / "x" / "tiny-gpt2-r1_64_24_individual_responses.json"
    recs = json.loads(path.read_text())
    recs[0].update(error_code=400, error_msg="Bad Request: context too long")
    path.write_text(json.dumps(recs))
    run = load([tmp_path]).runs[0].run
    assert run.requests[0].finish_reason == "error"
    assert run.requests[0].error == "HTTP 400: Bad Request: context too long"


def test_responses_without_their_summary_are_skipped_with_the_reason(tmp_path):
    shutil.copy(FOLDER / "reasoning-c2" / "tiny-gpt2-r1_64_24_individual_responses.json", tmp_path / "a.json")
    result = load([tmp_path])
    assert not result.refused and not result.runs
    assert "without their *_summary.json" in result.skipped[0].reason


def test_a_broken_summary_is_refused_with_its_path(tmp_path):
    shutil.copytree(FOLDER / "reasoning-c2", tmp_path / "x")
    path = tmp_path / "x" / "tiny-gpt2-r1_64_24_summary.json"
    doc = json.loads(path.read_text())
    doc["results_ttft_s_quantiles_p50"] = "quick"
    path.write_text(json.dumps(doc))
    result = load([tmp_path])
    assert not result.runs and result.refused[0].json_path == "$.results_ttft_s_quantiles_p50"


# --- requests its files lost (issue 26) ------------------------------------------------------------


def _flags(folder):
    from benchreport.pipeline import analyse_paths

    return analyse_paths([str(folder)]).flags


def test_a_run_with_fewer_records_than_worker_threads_lost_requests():
    """failed-c2: 2 worker threads (`num_concurrent_requests` 2), each sending at least one request,
    and 1 response in the files (its summary agrees: 1 started, 1 completed, 0 errors): at least 1
    request missing, said as such; the summary's counts are no contradiction."""
    f = _flags(FOLDER / "failed-c2")
    miss = f[f.code == "requests.missing"]
    assert len(miss) == 1 and miss.iloc[0].severity == "warn"
    msg = miss.iloc[0].message
    assert msg.startswith("tiny-gpt2-s1: at least 1 request llmperf sent is missing from its files")
    assert "at least 2 sent (one per worker thread, `num_concurrent_requests` 2), 1 in the files" in msg
    ev = miss.iloc[0].evidence
    assert ev["missing"] == 1 and ev["at_least"] is True and ev["runs"][0]["field"] == "num_concurrent_requests"
    assert not (f.code == "import.figure_mismatch").any()


@pytest.mark.parametrize("folder", ["reasoning-c1", "reasoning-c2"])
def test_full_runs_lose_nothing_and_their_counts_agree(folder):
    f = _flags(FOLDER / folder)
    assert not f.code.isin(["requests.missing", "import.figure_mismatch"]).any(), list(f.message)


def test_an_error_count_its_responses_contradict_is_named(tmp_path):
    shutil.copytree(FOLDER / "reasoning-c2", tmp_path / "x")
    path = next((tmp_path / "x").glob("*_summary.json"))
    doc = json.loads(path.read_text())
    doc["results_number_errors"], doc["results_error_rate"] = 3, 0.25
    path.write_text(json.dumps(doc))
    mm = _flags(tmp_path / "x").query("code == 'import.figure_mismatch'")
    assert len(mm) == 1 and mm.iloc[0].severity == "warn"
    msg = mm.iloc[0].message
    assert "llmperf's `results_number_errors` at 2 streams says 3, its records show 0" in msg
    assert "llmperf's `results_error_rate` at 2 streams says 0.25, its records show 0 of 12 failed (0%)" in msg


def test_an_answer_with_no_content_token_is_not_a_ttft_of_zero(tmp_path):
    """An answer that was all reasoning: llmperf saw no content chunk, so it leaves TTFT 0 (and ITL
    0) and counts the empty text as one token. Its TTFT is no time to first token: left out, said,
    and the answer counts as empty content (trap.reasoning_field) (issue 26)."""
    import subprocess
    import sys

    run = tmp_path / "reasoning-c2"
    shutil.copytree(FOLDER / "reasoning-c2", run)
    path = next(run.glob("*_individual_responses.json"))
    records = json.loads(path.read_text())
    records[3].update(ttft_s=0, inter_token_latency_s=0, number_output_tokens=1)
    path.write_text(json.dumps(records))
    result = load([str(run)])
    (lr,) = result.runs
    reqs = lr.run.requests
    assert reqs[3].ttft_ms is None and reqs[3].itl_ms is None and reqs[3].content_chars == 0
    assert all(r.ttft_ms and r.ttft_ms > 0 for i, r in enumerate(reqs) if i != 3)
    assert any("1 of 12 answers carried no content token" in a for a in lr.assumptions)
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "flags", str(run), "--json", "--quiet"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    codes = {f["code"]: f for f in json.loads(proc.stdout)}
    assert "trap.reasoning_field" in codes and "1 of 1 answers" in codes["trap.reasoning_field"]["message"]
    assert "1 of 12 answers carried no content token" in codes["import.assumed"]["message"]


# --- a summary whose per-request file is absent or renamed (issue 40) ------------------------------


def _summary_stating_failures(tmp_path, freq="{429.0: 130}", **over):
    """A leaderboard-style summary: 150 started, 20 completed, 130 failed with HTTP 429, and no
    per-request file beside it (as leaderboards publish them)."""
    src = next((FOLDER / "reasoning-c2").glob("*_summary.json"))
    doc = json.loads(src.read_text().replace("NaN", "null"))
    doc.update(
        {
            "results_num_requests_started": 150,
            "results_num_completed_requests": 20,
            "results_number_errors": 130,
            "results_error_rate": 130 / 150,
            "results_error_code_frequency": freq,
            **over,
        }
    )
    folder = tmp_path / "leaderboard"
    folder.mkdir()
    (folder / "model_x_summary.json").write_text(json.dumps(doc))
    return folder


def test_a_summary_stating_its_failures_is_not_a_clean_run(tmp_path):
    """130 of 150 failed (HTTP 429) as the summary states it: 150 request rows without timings, 130
    of them failed with their code; `requests.failed` is raised through the command line and the
    note quotes the code and its count, not 'HTTP 429: 0'."""
    import subprocess
    import sys

    folder = _summary_stating_failures(tmp_path)
    (lr,) = load([str(folder)]).runs
    reqs = lr.run.requests
    assert len(reqs) == 150 and all(r.counted_only for r in reqs)
    failed = [r for r in reqs if r.finish_reason == "error"]
    assert len(failed) == 130 and {r.error for r in failed} == {"HTTP 429"}
    assert "(HTTP 429: 130)" in lr.run.notes and "20 completed, 130 failed" in lr.run.notes
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "flags", str(folder), "--json", "--quiet"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    codes = {f["code"]: f for f in json.loads(proc.stdout)}
    assert "requests.failed" in codes, sorted(codes)
    assert "130 of 150" in codes["requests.failed"]["message"], codes["requests.failed"]["message"]


@pytest.mark.parametrize(
    "freq, expected",
    [
        ("{429.0: 130}", [("429", 130)]),
        ("{'429': 100, 500: 30}", [("429", 100), ("500", 30)]),
        ({"429": 130}, [("429", 130)]),
        ("{}", []),
        ("not a mapping 429 at all", []),
        ("{None: 4}", [("None", 4)]),
    ],
)
def test_error_code_frequency_is_read_as_written(freq, expected):
    from benchreport.load.harness.llmperf import error_codes

    assert error_codes(freq) == expected


def test_an_error_rate_alone_gives_the_failed_count(tmp_path):
    folder = _summary_stating_failures(tmp_path, freq="{}", results_number_errors=None)
    (lr,) = load([str(folder)]).runs
    failed = [r for r in lr.run.requests if r.finish_reason == "error"]
    assert len(failed) == 130 and len(lr.run.requests) == 150
