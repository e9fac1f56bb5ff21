"""Harness outputs end to end: the traps fire on the real harnesses' files, and a report
builds from a folder of mixed harness outputs as the harnesses wrote them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchreport.load import load
from harness_oracle import FOLDERS, HARNESS
from benchreport.pipeline import Options, analyse


@pytest.fixture(scope="module")
def flags():
    return analyse(load([HARNESS]), Options(n_boot=1000)).flags


def _by_code(flags, code):
    return flags[flags["code"] == code]


def test_cached_prompt_tokens_from_guidellm_and_aiperf_raise_the_prefix_cache_trap(flags):
    rows = _by_code(flags, "trap.prefix_cache")
    assert len(rows) and all("tiny-gpt2-s1" in seats for seats in rows["seats"])
    assert rows["message"].str.contains("cached prompt tokens").any()


def test_answers_only_in_the_reasoning_field_raise_the_reasoning_trap(flags):
    """GuideLLM against a server that answers in a "reasoning" field (fleet paper, trap 3)."""
    rows = _by_code(flags, "trap.reasoning_field")
    assert list(rows["seats"]) == [("tiny-gpt2-r1",)]
    assert rows["evidence"].iloc[0]["empty_content"] == 12  # GuideLLM's 12; inference-perf's answers have content


def test_inferences_without_a_manifest_are_flagged(flags):
    seats = {s for t in _by_code(flags, "import.assumed")["seats"] for s in t}
    # files that record no model (MLPerf LoadGen, trtllm-bench reports, SGLang) are seats named after
    # their folders (issue 25), said as an assumption
    named = {"harness_mlperf-loadgen_offline", "harness_mlperf-loadgen_server-qps4", "harness_sglang"}
    assert {"tiny-gpt2-s1", "tiny-gpt2-s2", "tiny-gpt2-r1"} | named <= seats
    assert all(s.startswith(("tiny-gpt2", "harness_")) for s in seats)


@pytest.mark.slow
def test_report_builds_from_a_folder_of_mixed_harness_outputs(tmp_path):
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "build", *map(str, FOLDERS), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    html = (out / "report.html").read_text(encoding="utf-8")
    for harness in ("vllm", "guidellm", "aiperf", "lm-eval"):
        assert harness in html.lower(), harness
    for seat in ("tiny-gpt2-s1", "tiny-gpt2-s2", "tiny-gpt2-r1"):
        assert seat in html
    codes = {f["code"] for f in json.loads((out / "flags.json").read_text())}
    assert {"trap.prefix_cache", "trap.reasoning_field", "import.assumed", "exam.not_significant"} <= codes
    assert (out / "report.pdf").stat().st_size > 10_000
    deltas = (out / "tables" / "exam_deltas.csv").read_text()
    assert "McNemar" in deltas  # two lm-eval seats' samples pair by item
    from report_text import html_text, internal_tokens

    text = html_text(out / "report.html")
    assert internal_tokens(text) == []  # issue 42: a reader's words only
    from report_text import unsourced_figures

    assert unsourced_figures(out) == []  # and every figure in a sentence is a table row's
    # two loads that read alike are told apart by what they sent, not by a hash
    assert "synthetic; prompt length 32±4 from 24 to 40" in text and "32±4 without bounds" in text


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "benchreport", *map(str, args)], capture_output=True, text=True)


@pytest.mark.parametrize("name", ["aiperf-sweep", "aiperf-warmup-failed"])
def test_aiperf_folders_validate_as_written(name):
    """AIPerf 0.13's sweep folder (3 trials x 4 concurrencies, aggregate/ and phases/) and a run
    whose warm-up requests all failed: every file is read or skipped, none refused."""
    proc = run_cli("validate", HARNESS / name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 file(s) refused" in proc.stderr + proc.stdout


def test_fourteen_of_twentyfour_failed_is_critical():
    """AIPerf with 14 of 24 requests failed (HTTP 400): requests.failed, critical, with the error."""
    proc = run_cli("flags", HARNESS / "aiperf-errors", "--json")
    assert proc.returncode == 0, proc.stderr
    failed = [f for f in json.loads(proc.stdout) if f["code"] == "requests.failed"]
    assert len(failed) == 1 and failed[0]["severity"] == "critical"
    assert failed[0]["evidence"]["failed"] == 14 and failed[0]["evidence"]["requests"] == 24
    assert "maximum context length" in failed[0]["message"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["aiperf-sweep", "aiperf-warmup-failed"])
def test_aiperf_folder_builds_without_skip_bad(tmp_path, name):
    out = tmp_path / "report"
    proc = run_cli("build", HARNESS / name, "--out", out, "--format", "html", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert (out / "report.html").stat().st_size > 10_000
    refused = json.loads((out / "refused.json").read_text()) if (out / "refused.json").exists() else {"refused": []}
    assert refused["refused"] == []
