"""Every captured harness folder, read as a user's folder is (issue 25, "one cell, one condition").

All the real harness outputs under tests/fixtures/ (tests/fixtures/harness/ and
tests/fixtures/captures/: ten harnesses, several loads and endpoints in one folder, repeated runs,
trials, files with no model name) are put in one folder twice: once copied with their file times,
once copied as `cp -r` or a sync tool does, every file time new and days later. Both are ingested
through the command line, and:

* no file is refused, and every file is either the source of a run or skipped with its reason;
* the copy reads as the original: the same runs, seats, dates and pass numbers, except where a
  run's date could only come from its file time, which the run says in its assumptions;
* no cell holds runs of two recorded conditions, and no (cell, date, pass) is claimed twice, so
  no pass was merged into another or dropped.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

FIXTURES = Path(__file__).parent / "fixtures"
SOURCES = ("harness", "captures")
#: how far the copy's file times are moved: past midnight whatever the time of day
LATER_S = 3 * 86400 + 3600
RUN_KEYS = ["run_id", "seat", "date", "pass", "harness", "probe", "load_id"]
CELL = ["seat", "harness", "probe", "workload", "concurrency", "metric", "statistic", "condition", "load_id"]


def _copy(dest: Path, *, keep_times: bool) -> Path:
    for name in SOURCES:
        shutil.copytree(FIXTURES / name, dest / name, copy_function=shutil.copy2 if keep_times else shutil.copyfile)
    if not keep_times:
        later = time.time() + LATER_S
        for path in sorted(dest.rglob("*")):
            os.utime(path, (later, later))
    return dest


def _ingest(folder: Path, out: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "ingest", str(folder), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    tables = {name: pd.read_parquet(out / f"{name}.parquet") for name in ("runs", "measurements")}
    tables["refused"] = json.loads((out / "refused.json").read_text())
    tables["root"] = folder
    return tables


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    base = tmp_path_factory.mktemp("original")
    return _ingest(_copy(base / "runs", keep_times=True), base / "tables")


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    base = tmp_path_factory.mktemp("copied")
    return _ingest(_copy(base / "runs", keep_times=False), base / "tables")


def _keyed(runs: pd.DataFrame) -> pd.DataFrame:
    return runs[RUN_KEYS].astype(str).sort_values("run_id").reset_index(drop=True)


def test_every_file_is_a_run_or_a_named_skip(copied, tmp_path):
    assert copied["refused"]["refused"] == []
    root = copied["root"]
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "analyse", str(root), "--out", str(tmp_path / "a"), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    prov = pd.read_csv(tmp_path / "a" / "provenance.csv", dtype=str, keep_default_na=False)
    # hidden names (a harness's `.aiperf_results_ready.json` marker, a sync tool's files) are not walked
    files = {
        str(p)
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    }
    assert set(prov["path"]) == files
    assert set(prov["status"]) == {"read", "skipped"}
    assert (prov.loc[prov["status"] == "skipped", "reason"].str.strip() != "").all()
    read = set(copied["runs"]["source_file"])
    companions = prov.loc[(prov["status"] == "read") & (prov["run_id"] == ""), "path"]
    assert len(companions) and not set(companions) & read
    assert (prov.loc[prov["status"] == "read", "sha256"].str.fullmatch("[0-9a-f]{64}")).all()
    assert read == set(prov.loc[prov["run_id"] != "", "path"])
    assert {h for h in copied["runs"]["harness"]} >= {
        "vllm bench serve",
        "guidellm",
        "aiperf",
        "sglang bench_serving",
        "trtllm-bench",
        "inference-perf",
        "genai-bench",
        "llmperf",
        "mlperf loadgen",
        "lm-evaluation-harness",
    }


def test_a_copy_without_file_times_reads_as_the_original(original, copied):
    a, b = _keyed(original["runs"]), _keyed(copied["runs"])
    assert a["run_id"].tolist() == b["run_id"].tolist()
    by_file_time = copied["runs"]["assumptions"].fillna("").str.contains("modification time")
    from_file_time = set(copied["runs"].loc[by_file_time, "run_id"])
    same = ~a["run_id"].isin(from_file_time)
    pd.testing.assert_frame_equal(a[same].reset_index(drop=True), b[same].reset_index(drop=True))
    # a date taken from a file time moves with the copy, and the run says so
    moved = a.loc[~same, "date"].to_numpy() != b.loc[~same, "date"].to_numpy()
    assert moved.all() or not len(moved)


def test_no_cell_holds_two_conditions_and_no_pass_is_claimed_twice(copied):
    runs = copied["runs"][["run_id", "harness", "probe", "load_id"]]
    m = copied["measurements"].merge(runs, on="run_id", how="left", validate="many_to_one")
    for col in ("probe", "condition", "statistic", "load_id"):  # load_id is empty where nothing was recorded
        m[col] = m[col].astype(object).where(m[col].notna(), "")
    claimed = m.groupby(CELL + ["date", "pass"], dropna=False)["run_id"].nunique()
    assert (claimed == 1).all(), claimed[claimed > 1].head()
    # the runs of one cell share one recorded load, but for what only sizes or seeds the sample
    condition = copied["runs"].set_index("run_id")["load"].map(_condition)
    m["recorded"] = m["run_id"].map(condition)
    loads = m.groupby(CELL, dropna=False)["recorded"].nunique()
    assert (loads <= 1).all(), loads[loads > 1].head()


def _condition(load) -> str:
    """The recorded load without what docs/importers.md says sizes or seeds a sample; lengths a
    harness counted as sent (not a target it was given) by their octave, as documented there."""
    described = json.loads(load) if isinstance(load, str) else {}
    for key in ("seed", "requests", "duration_s", "warmup_requests", "warmup_s", "concurrency"):
        described.pop(key, None)
    for key in ("prompt_tokens", "output_tokens"):
        lengths = described.get(key)
        if isinstance(lengths, dict) and lengths.get("sent"):
            described[key] = {"octave": round(math.log2(lengths["mean"]))}
    return json.dumps(described, sort_keys=True)
