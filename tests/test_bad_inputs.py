"""Hardening: the bad-input corpus, every file refused with its message, good files kept.

Expected messages: tests/bad_inputs_expected.json (`{dir}` stands for the corpus folder,
`{considered}` for the harness formats the registered importers read).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchreport.load import harness, load

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from measure import run_measured  # noqa: E402

CORPUS = Path(__file__).parent / "bad_inputs"
EXPECTED = json.loads((Path(__file__).parent / "bad_inputs_expected.json").read_text())
GOOD_IDS = {"good-1", "good-2", "good-3", "duplicate", "two-models-1"}
#: corpus files that claim to be no run (no native format, no harness's key): in a folder they are
#: skipped as not run files, refused only with strict (issue 31)
NOT_RUNS = {"binary.json", "deep-nesting.json"}


@pytest.fixture
def run_cli(capsys):
    """`benchreport ARGS` in this process: returncode, stdout and stderr as a subprocess gives them."""
    from types import SimpleNamespace

    from benchreport.cli import main

    def run(*args):
        code = main([str(a) for a in args])
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)

    return run


def test_corpus_is_current(tmp_path):
    """The committed files are exactly what make_corpus.py writes."""
    sys.path.insert(0, str(CORPUS))
    try:
        import make_corpus
    finally:
        sys.path.pop(0)
    for name, data in make_corpus.corpus().items():
        assert (CORPUS / name).read_bytes() == data, name


def test_every_bad_file_refused_with_its_message():
    result = load([CORPUS], strict=True)
    considered = "; ".join(harness.considered())  # the registered importers' formats
    got = {
        r.path.split("bad_inputs/", 1)[1]: f"{r.json_path}: {r.message}".replace(str(CORPUS), "{dir}").replace(
            considered, "{considered}"
        )
        for r in result.refused
    }
    assert got == EXPECTED
    assert {lr.run.run_id for lr in result.runs} == GOOD_IDS


def test_without_strict_the_files_that_are_not_runs_are_skipped_and_the_others_refused_as_before():
    result = load([CORPUS])
    assert {r.path.split("bad_inputs/", 1)[1] for r in result.refused} == set(EXPECTED) - NOT_RUNS
    assert {Path(s.path).name for s in result.skipped if s.not_a_run} == NOT_RUNS
    assert {lr.run.run_id for lr in result.runs} == GOOD_IDS


def test_messages_name_the_file_and_a_json_path():
    result = load([CORPUS])
    for r in result.refused:
        line = str(r)
        assert line.startswith(str(CORPUS)) and ": $" in line


def test_validate_cli_lists_each_refused_file_without_traceback(run_cli):
    proc = run_cli("validate", CORPUS, "--strict")
    assert proc.returncode == 1
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(EXPECTED)
    for name in EXPECTED:
        assert any(line.startswith(f"{CORPUS}/{name}: $") for line in lines), name
    assert "Traceback" not in proc.stdout + proc.stderr


def test_ingest_keeps_good_files_and_writes_refused_json(tmp_path, run_cli):
    proc = run_cli("ingest", CORPUS, "--out", tmp_path / "out")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    refused = json.loads((tmp_path / "out" / "refused.json").read_text())
    assert sorted(Path(r["path"]).name for r in refused["refused"]) == sorted(
        Path(n).name for n in EXPECTED if n not in NOT_RUNS
    )
    assert NOT_RUNS <= {Path(s["path"]).name for s in refused["skipped"]}
    runs = pd.read_parquet(tmp_path / "out" / "runs.parquet")
    assert set(runs["run_id"]) == GOOD_IDS
    proc = run_cli("ingest", CORPUS, "--out", tmp_path / "out2", "--skip-bad")
    assert proc.returncode == 0


def test_huge_file_fails_cleanly_with_a_size_message(tmp_path, run_cli):
    big = tmp_path / "huge.json"
    with open(big, "wb") as f:  # sparse: 3 GB on paper, nothing on disk, never read
        f.truncate(3 * 1024**3)
    (tmp_path / "good.json").write_bytes((CORPUS / "good" / "good-1.json").read_bytes())
    proc = run_cli("validate", tmp_path)
    assert proc.returncode == 1
    assert f"{big}: $: expected a file of at most 512 MB (--max-file-mb), found 3221.2 MB" in proc.stdout
    assert "1 run(s) valid" in proc.stderr


def test_large_valid_file_loads_within_memory(tmp_path):
    """A valid file of ~60 MB (300,000 requests) loads; peak memory stays a small multiple of it."""

    doc = json.loads((CORPUS / "good" / "good-1.json").read_text())
    req = {
        "workload": "decode",
        "concurrency": 16,
        "prompt_tokens": 512,
        "output_tokens": 256,
        "ttft_ms": 35.25,
        "e2e_latency_ms": 2400.5,
        "itl_ms": 9.25,
        "finish_reason": "stop",
    }
    body = json.dumps(req, separators=(",", ":"))
    head = json.dumps(doc)[:-1]
    path = tmp_path / "big.json"
    with open(path, "w") as f:
        f.write(head + ',"requests":[' + ",".join([body] * 300_000) + "]}")
    code = (
        f"from benchreport.load import load; from benchreport.tables import build_tables; "
        f"r = load([{str(path)!r}]); t = build_tables(r); assert len(t.requests) == 300000"
    )
    # the child's own peak (benchmarks/measure.py): its ru_maxrss would start from this worker's size
    measured = run_measured([sys.executable, "-c", code])
    assert measured.returncode == 0, measured.stderr
    assert measured.peak_mb < 1500, measured.peak_mb
