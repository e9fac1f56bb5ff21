"""`vllm bench sweep serve` folders and three `vllm bench serve` cases seen in the field (issue 40).

The fixtures (`tests/fixtures/harness/vllm-sweep/`, `vllm-edge/`) are built, not captured, by
`scripts/capture/vllm_sweep_build.py` in vLLM's layout and key set (the fixture README says how).
A sweep folder is one seat per serve combination and one load per bench combination, its passes
from `run_number`, its warm-up and summary never passes; a request that produced nothing is a
failure; a chunked stream's gaps are not a per-token ITL; an ISO `date` dates the run.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchreport.load import load

HARNESS = Path(__file__).parent / "fixtures" / "harness"
SWEEP = HARNESS / "vllm-sweep"
EXP = SWEEP / "20261201_120000"
EDGE = HARNESS / "vllm-edge"
COMBS = {(32, 48): 2, (32, 96): 2, (256, 48): 2, (256, 96): 1}  # (max_num_seqs, random_input_len): passes


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchreport", *map(str, args)], capture_output=True, text=True)


def _rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _comb(folder: str) -> tuple[int, int]:
    serve, bench = folder.split("-BENCH--")
    return int(serve.split("=")[1]), int(bench.split("=")[1])


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "out"
    proc = _cli("analyse", SWEEP, "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


def test_validate_reads_the_runs_and_says_why_each_other_file_is_skipped():
    proc = _cli("validate", SWEEP)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout + proc.stderr
    assert f"{sum(COMBS.values())} run(s) valid, 0 file(s) refused" in text
    for line in text.splitlines():
        if "/summary.json: skipped" in line:
            assert "not passes of their own" in line and "checked against the run=N.json files" in line
        if "/warmup.json: skipped" in line:
            assert "warm-up run (run_number -1" in line and "not a measured pass" in line
    assert text.count("/summary.json: skipped") == 4 and text.count("/warmup.json: skipped") == 4
    assert "run 1 (pass 2) of serve max_num_seqs=256, bench random_input_len=96 failed (CalledProcessError" in text
    assert "the server of serve combination max_num_seqs=512 failed (RuntimeError" in text


def test_one_seat_per_serve_combination_and_one_cell_per_bench_combination(analysed):
    seats = {r["seat"]: r for r in _rows(analysed / "tables" / "seats.csv")}
    assert set(seats) == {"tiny-gpt2-s1--max_num_seqs_32", "tiny-gpt2-s1--max_num_seqs_256"}
    ttft = [
        r for r in _rows(analysed / "tables" / "cells.csv") if r["metric"] == "ttft_ms" and r["statistic"] == "mean"
    ]
    assert len(ttft) == 4  # 2 serve x 2 bench combinations, never pooled
    got = {
        (r["seat"].rsplit("_", 1)[1], r["load"].split(",")[1].strip().split(" ")[0].removesuffix("-token")): int(
            r["n_passes"]
        )
        for r in ttft
    }
    assert got == {(str(s), str(b)): n for (s, b), n in COMBS.items()}
    # the serve combinations differ about 2x in TTFT at the same load: the comparison the sweep is for
    est = {(r["seat"], r["load"]): float(r["estimate"]) for r in ttft}
    for load_ in {r["load"] for r in ttft}:
        assert est[("tiny-gpt2-s1--max_num_seqs_32", load_)] > 1.5 * est[("tiny-gpt2-s1--max_num_seqs_256", load_)]


def test_passes_are_run_number_plus_one(analysed):
    runs = {lr.run.run_id: lr for lr in load([SWEEP]).runs}
    passes = _rows(analysed / "tables" / "passes.csv")
    assert passes
    for row in passes:
        src = Path(runs[row["run_id"]].source_file)
        assert int(row["pass"]) == json.loads(src.read_text())["run_number"] + 1 == int(src.stem.split("=")[1]) + 1


def test_warmup_and_summary_are_never_passes_and_the_summary_is_checked():
    result = load([SWEEP])
    sources = {Path(lr.source_file).name for lr in result.runs}
    assert sources == {"run=0.json", "run=1.json"}
    skipped = {Path(s.path).name for s in result.skipped}
    assert {"summary.json", "warmup.json", "run=1.failure.json", "SERVE-max_num_seqs=512-failure.json"} <= skipped
    for lr in result.runs:
        doc = json.loads(Path(lr.source_file).read_text())
        seqs, in_len = _comb(Path(lr.source_file).parent.name)
        assert lr.run.pass_ == doc["run_number"] + 1
        assert lr.run.seat.settings["max_num_seqs"] == seqs == doc["max_num_seqs"]
        assert lr.run.load.prompt_tokens.mean == in_len
        assert lr.run.warmup_excluded is True
        assert "checked against the sweep's summary.json: TTFT mean" in lr.run.notes
        assert not lr.checks  # the summary repeats the run files' figures
        assert any("from the sweep's run_number" in a for a in lr.assumptions)
        assert any("max_num_seqs=" in a and "configuration the files record" in a for a in lr.assumptions)


def _copy(tmp_path) -> Path:
    dest = tmp_path / "sweep"
    shutil.copytree(SWEEP, dest)
    return dest / EXP.name


def test_a_summary_that_disagrees_with_its_run_is_a_figure_check(tmp_path):
    exp = _copy(tmp_path)
    comb = exp / "SERVE--max_num_seqs=32-BENCH--random_input_len=48"
    summary = json.loads((comb / "summary.json").read_text())
    summary[1]["mean_ttft_ms"] *= 1.5
    (comb / "summary.json").write_text(json.dumps(summary))
    result = load([exp.parent])
    bad = [lr for lr in result.runs if lr.checks]
    assert len(bad) == 1 and Path(bad[0].source_file) == comb / "run=1.json"
    assert bad[0].checks[0]["field"] == "mean_ttft_ms"
    assert "the sweep's summary.json differs from ours: TTFT mean (`mean_ttft_ms`)" in bad[0].run.notes


def test_a_run_whose_file_is_missing_is_read_from_the_summary(tmp_path):
    exp = _copy(tmp_path)
    comb = exp / "SERVE--max_num_seqs=32-BENCH--random_input_len=48"
    (comb / "run=1.json").unlink()
    result = load([exp.parent])
    assert not result.refused
    from_summary = [lr for lr in result.runs if Path(lr.source_file).name == "summary.json"]
    assert len(from_summary) == 1 and from_summary[0].run.pass_ == 2
    assert "run=1.json is not in its folder" in from_summary[0].run.notes
    assert len(result.runs) == sum(COMBS.values())


def _write_comb(root: Path, folder: str, runs: list[dict]) -> None:
    (root / folder).mkdir(parents=True)
    for doc in runs:
        (root / folder / f"run={doc['run_number']}.json").write_text(json.dumps(doc))


def test_bench_parameters_vllm_does_not_record_still_separate_cells(tmp_path):
    """A bench parameter the result has no field for (top_p) reaches the load; two values, two cells."""
    base = json.loads((EXP / "SERVE--max_num_seqs=32-BENCH--random_input_len=48" / "run=0.json").read_text())
    root = tmp_path / "exp"
    for top_p in (0.9, 1.0):
        runs = []
        for n in (0, 1):
            doc = {k: v for k, v in base.items() if k != "random_input_len"}
            doc.update(run_number=n, top_p=top_p, mean_ttft_ms=base["mean_ttft_ms"] + n + top_p)
            runs.append(doc)
        _write_comb(root, f"SERVE--max_num_seqs=32-BENCH--top_p={top_p}", runs)
    result = load([root])
    assert not result.refused and len(result.runs) == 4
    loads = {lr.run.load.extra["top_p"] for lr in result.runs}
    assert loads == {0.9, 1.0}
    assert sorted(lr.run.pass_ for lr in result.runs) == [1, 1, 2, 2]
    assert {lr.run.seat.id for lr in result.runs} == {"tiny-gpt2-s1--max_num_seqs_32"}


@pytest.mark.parametrize(
    "folder, merged",
    [
        ("SERVE-tensor_parallel_size=2-max_num_seqs=64-BENCH-max_concurrency=4", ("serve",)),  # 0.11.0
        ("serve-tensor_parallel_size=2-max_num_seqs=64-bench-max_concurrency=4", ("serve",)),  # first version
        ("SERVE--tensor_parallel_size=2-max_num_seqs=64-BENCH--max_concurrency=4", ("serve", "bench")),
    ],
)
def test_earlier_folder_names_and_engine_arguments_with_a_configuration_key(tmp_path, folder, merged):
    base = json.loads((EXP / "SERVE--max_num_seqs=32-BENCH--random_input_len=48" / "run=0.json").read_text())
    doc = {k: v for k, v in base.items() if k not in ("max_num_seqs", "random_input_len")}
    doc.update(run_number=0, tensor_parallel_size=2, max_num_seqs=64)
    if "bench" in merged:
        doc["max_concurrency"] = 4
    _write_comb(tmp_path / "exp", folder, [doc])
    [lr] = load([tmp_path / "exp"]).runs
    assert lr.run.seat.id == "tiny-gpt2-s1--tp2-max_num_seqs_64"
    assert lr.run.seat.placement.tensor_parallel == 2
    assert lr.run.seat.settings["max_num_seqs"] == 64


def test_named_combinations_are_told_apart_by_their_names(tmp_path):
    base = json.loads((EXP / "SERVE--max_num_seqs=32-BENCH--random_input_len=48" / "run=0.json").read_text())
    root = tmp_path / "exp"
    for i, name in enumerate(("low-latency", "high-throughput")):
        doc = {k: v for k, v in base.items() if k not in ("max_num_seqs", "random_input_len")}
        doc.update(run_number=0, _benchmark_name="short-prompts", mean_ttft_ms=base["mean_ttft_ms"] * (1 + i))
        _write_comb(root, f"SERVE--{name}-BENCH--short-prompts", [doc])
    result = load([root])
    assert {lr.run.seat.settings["sweep_serve"] for lr in result.runs} == {"low-latency", "high-throughput"}
    assert len({lr.run.seat.id for lr in result.runs}) == 2
    assert {lr.run.load.extra["sweep_bench"] for lr in result.runs} == {"short-prompts"}


# --- vllm bench serve: no-output requests, chunked streams, ISO dates -------------------------------


@pytest.fixture(scope="module")
def edge(tmp_path_factory):
    out = tmp_path_factory.mktemp("edge") / "out"
    proc = _cli("analyse", EDGE, "--out", out)
    assert proc.returncode == 0, proc.stderr
    runs = {Path(lr.source_file).name: lr for lr in load([EDGE]).runs}
    return out, runs


NO_OUTPUT = "vllm-infqps-concurrency4-tiny-gpt2-s1-20261201-130000.json"
CHUNKED = "vllm-infqps-concurrency2-tiny-gpt2-s1-20261201-130500.json"
ISO = "vllm-infqps-concurrency1-tiny-gpt2-s1-iso-date.json"


def test_requests_that_produced_nothing_are_failures(edge):
    out, runs = edge
    doc = json.loads((EDGE / NO_OUTPUT).read_text())
    lr = runs[NO_OUTPUT]
    empty = [i for i, e in enumerate(doc["errors"]) if e == "" and doc["output_lens"][i] == 0]
    assert len(empty) == 3 and doc["completed"] == 12  # vLLM counted them as completed
    failed = [r for r in lr.run.requests if r.finish_reason == "error"]
    assert len(failed) == 3 and {r.error for r in failed} == {"no output: 0 tokens, TTFT 0 and an empty error"}
    assert "3 of 12 requests produced no output" in lr.run.notes
    assert not lr.checks  # vLLM's completed count is reproduced, the 3 counted as it counts them
    row = next(
        r
        for r in _rows(out / "tables" / "passes.csv")
        if r["run_id"] == lr.run.run_id and r["metric"] == "ttft_ms" and r["statistic"] == "mean"
    )
    assert int(row["n_failed"]) == 3 and int(row["n_requests"]) == 12
    good = [t * 1000 for i, t in enumerate(doc["ttfts"]) if i not in empty]
    assert float(row["value"]) == pytest.approx(np.mean(good), rel=1e-9)
    assert float(row["value"]) > doc["mean_ttft_ms"] * 1.2  # vLLM's mean pooled three zeros


def test_a_chunked_stream_reports_no_per_token_itl(edge):
    out, runs = edge
    doc = json.loads((EDGE / CHUNKED).read_text())
    lr = runs[CHUNKED]
    assert all(len(g) + 1 < o for g, o in zip(doc["itls"], doc["output_lens"]))
    assert not [m for m in lr.run.measurements if m.metric == "itl_ms"]
    assert all(r.itl_ms is None for r in lr.run.requests)
    assert "12 of 12 streams carried several tokens a chunk" in lr.run.notes
    rows = [r for r in _rows(out / "tables" / "passes.csv") if r["run_id"] == lr.run.run_id]
    assert not [r for r in rows if r["metric"] == "itl_ms"]
    decode = next(r for r in rows if r["metric"] == "decode_tok_s_per_stream")
    assert float(decode["value"]) == pytest.approx(1000 / doc["mean_tpot_ms"])


def test_an_iso_date_dates_the_run(edge):
    _out, runs = edge
    lr = runs[ISO]
    assert json.loads((EDGE / ISO).read_text())["date"] == "2026-12-01T13:10:00"
    assert lr.run.date == "2026-12-01T13:10:00"
    assert not any("modification time" in a for a in lr.assumptions)


@pytest.mark.parametrize(
    "text, want",
    [
        ("20261201-131000", "2026-12-01T13:10:00"),
        ("2026-12-01 13:10:00", "2026-12-01T13:10:00"),
        ("2026-12-01T13:10:00.250000+00:00", "2026-12-01T13:10:00.250000+00:00"),
    ],
)
def test_date_forms(tmp_path, text, want):
    doc = json.loads((EDGE / ISO).read_text())
    doc["date"] = text
    (tmp_path / "x.json").write_text(json.dumps(doc))
    [lr] = load([tmp_path]).runs
    assert lr.run.date == want


def test_an_unreadable_date_is_said_to_be_one(tmp_path):
    doc = json.loads((EDGE / ISO).read_text())
    doc["date"] = "Dec 1st"
    (tmp_path / "x.json").write_text(json.dumps(doc))
    [lr] = load([tmp_path]).runs
    assert any("its own date 'Dec 1st' is not one benchreport reads" in a for a in lr.assumptions)


def test_metadata_configuration_makes_two_seats(tmp_path):
    """`--metadata tensor_parallel_size=N` (strings, as vLLM writes them) is the seat's configuration."""
    doc = json.loads((EDGE / ISO).read_text())
    for tp in ("1", "2"):
        meta = {"tensor_parallel_size": tp, "vllm_version": "0.33.0"}
        (tmp_path / f"tp{tp}.json").write_text(json.dumps({**doc, **meta}))
    runs = load([tmp_path]).runs
    assert {lr.run.seat.id for lr in runs} == {"tiny-gpt2-s1--tp1-vllm0.33.0", "tiny-gpt2-s1--tp2-vllm0.33.0"}
    assert {lr.run.seat.engine for lr in runs} == {"vllm 0.33.0"}
    assert all(lr.run.pass_ == 1 for lr in runs)
