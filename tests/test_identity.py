"""Identity from evidence (issue 40): a seat is the model and the configuration the files record, and
passes come from recorded repetition. Folders made on purpose, through the command line:
- two files of one model id whose names differ by a configuration ('_tp2_' against '_tp4_') are two
  seats, said as such; files that differ only by counters and times (pass1/pass2) are passes;
- a configuration the file records (trtllm-bench's tensor parallel) makes two seats of one model;
- a seat the manifest names is never split;
- the real GuideLLM files of tests/wild (tp2 and tp4 of one model, published on Intel XPU) are two seats."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VLLM = sorted((ROOT / "tests" / "fixtures" / "harness" / "vllm").rglob("*concurrency4*.json"))
TRTLLM = ROOT / "tests" / "fixtures" / "harness" / "trtllm" / "bench-3856265"
GUIDELLM = ROOT / "tests" / "wild" / "guidellm"


def _passes(folder, out):
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "analyse", str(folder), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(open(out / "tables" / "passes.csv", encoding="utf-8")))
    return {(r["seat"], r["pass"]) for r in rows}


def test_files_named_by_two_configurations_are_two_seats(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(VLLM[0], runs / "serving_tiny_tp2_c4.json")
    shutil.copy(VLLM[1], runs / "serving_tiny_tp4_c4.json")
    seats = _passes(runs, tmp_path / "out")
    assert seats == {("tiny-gpt2-s1--tp2", "1"), ("tiny-gpt2-s1--tp4", "1")}


def test_files_that_differ_by_counters_and_times_are_passes(tmp_path):
    runs = tmp_path / "runs"
    for i, src in enumerate(VLLM[:2], 1):
        (runs / f"pass{i}").mkdir(parents=True)
        shutil.copy(src, runs / f"pass{i}" / src.name)
    assert _passes(runs, tmp_path / "out") == {("tiny-gpt2-s1", "1"), ("tiny-gpt2-s1", "2")}


def test_a_recorded_tensor_parallel_makes_two_seats(tmp_path):
    for tp in (2, 4):
        folder = tmp_path / "runs" / f"bench-{tp}"
        shutil.copytree(TRTLLM, folder)
        report = (folder / "report.txt").read_text().replace("TP Size:\t\t1", f"TP Size:\t\t{tp}")
        (folder / "report.txt").write_text(report)
        stats = json.loads((folder / "statistics.json").read_text())  # other bytes: not one file read twice
        (folder / "statistics.json").write_text(json.dumps(stats, indent=tp))
    seats = {s for s, _ in _passes(tmp_path / "runs", tmp_path / "out")}
    assert len(seats) == 2 and {s.split("--")[-1].split("-")[0] for s in seats} == {"tp2", "tp4"}, seats


def test_a_seat_the_manifest_names_is_never_split(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(VLLM[0], runs / "serving_tiny_tp2_c4.json")
    shutil.copy(VLLM[1], runs / "serving_tiny_tp4_c4.json")
    (runs / "benchreport.yaml").write_text("version: 1\nruns:\n  - files: '**'\n    seat: {id: mine, model: tiny}\n")
    assert _passes(runs, tmp_path / "out") == {("mine", "1"), ("mine", "2")}


def test_the_published_guidellm_tp2_and_tp4_are_two_seats(tmp_path):
    seats = {s for s, _ in _passes(GUIDELLM, tmp_path / "out") if "Thinking" in s}
    assert seats == {"Qwen_Qwen3-4B-Thinking-2507--tp2", "Qwen_Qwen3-4B-Thinking-2507--tp4"}
    flags = json.loads((tmp_path / "out" / "flags.json").read_text())
    assumed = " ".join(f["message"] for f in flags if f["code"] == "import.assumed")
    assert "differ by 'tp2'" in assumed
