"""Every refusal is a line, never a traceback: option values, file names of any bytes, files
that are not regular files, integers of any size."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchreport.cli import main
from benchreport.load import load

GOOD = Path(__file__).parent / "bad_inputs" / "good"
ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "benchreport", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        timeout=timeout,
    )


# --- item 11: every number on the command line is checked, exit 2 and one line -------------------


@pytest.mark.parametrize(
    "argv, words",
    [
        (
            ["analyse", "R", "--out", "O", "--n-boot", "0"],
            "argument --n-boot: expected an integer from 100 to 1000000, got '0'",
        ),
        (["analyse", "R", "--out", "O", "--n-boot", "10000000000"], "argument --n-boot: expected an integer"),
        (["analyse", "R", "--out", "O", "--alpha", "0"], "argument --alpha: expected a number > 0 and < 1, got '0'"),
        (
            ["analyse", "R", "--out", "O", "--alpha", "nan"],
            "argument --alpha: expected a number > 0 and < 1, got 'nan'",
        ),
        (["flags", "R", "--alpha", "1"], "argument --alpha: expected a number > 0 and < 1, got '1'"),
        (
            ["build", "R", "--out", "O", "--seed", "-1"],
            "argument --seed: expected an integer from 0 to 2^63-1, got '-1'",
        ),
        (["build", "R", "--out", "O", "--seed", str(2**63)], "argument --seed: expected an integer from 0 to 2^63-1"),
        (["validate", "R", "--max-file-mb", "nan"], "argument --max-file-mb: expected a number > 0"),
        (["validate", "R", "--max-file-mb", "-1"], "argument --max-file-mb: expected a number > 0"),
        (["ingest", "R", "--out", "O", "--max-file-mb", "inf"], "argument --max-file-mb: expected a number > 0"),
        (["exam-delta", "1/2", "1/2", "--power", "1.5"], "argument --power: expected a number > 0 and < 1, got '1.5'"),
        (["exam-delta", "1/2", "1/2", "--alpha", "nan"], "argument --alpha: expected a number > 0 and < 1"),
        (["analyse", "R", "--out", "O", "--min-obs", "0"], "argument --min-obs: expected an integer from 2 to"),
        (
            ["analyse", "R", "--out", "O", "--capped-share", "1.5"],
            "argument --capped-share: expected a number from 0 to 1",
        ),
        (
            ["analyse", "R", "--out", "O", "--spread-limit", "0.5"],
            "argument --spread-limit: expected a number from 1 to",
        ),
        (["analyse", "R", "--out", "O", "--cv-limit=-inf"], "argument --cv-limit: expected a number > 0"),
        (["build", "R", "--out", "O", "--title", "x\u202ey"], "argument --title: expected a title of at most 300"),
        (["build", "R", "--out", "O", "--title", "x" * 301], "argument --title: expected a title of at most 300"),
    ],
)
def test_bad_option_values_exit_2_in_one_line(capsys, argv, words):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err, err
    assert err.startswith(f"benchreport {argv[0]}: ")


def test_every_threshold_has_a_range():
    from benchreport.thresholds import Thresholds

    THRESHOLD_RANGES = Thresholds.ranges()
    assert set(THRESHOLD_RANGES) == {name for name, _, _ in Thresholds.describe()}
    for name, default, _ in Thresholds.describe():
        low, high, low_in, high_in = THRESHOLD_RANGES[name]
        assert (low <= default if low_in else low < default) and (default <= high if high_in else default < high), name


# --- item 9 and 20: file names of any bytes -----------------------------------------------------


def test_non_utf8_file_names_load_and_write_everywhere(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    raw = os.fsencode(runs) + b"/q\xff.json"
    shutil.copy(GOOD / "good-1.json", raw)
    result = load([runs])
    assert result.ok and result.runs[0].source_file == f"{runs}/q\\xff.json"
    assert main(["ingest", str(runs), "--out", str(tmp_path / "pq"), "--quiet"]) == 0
    assert pd.read_parquet(tmp_path / "pq" / "runs.parquet")["source_file"].tolist() == [f"{runs}/q\\xff.json"]
    assert main(["analyse", str(runs), "--out", str(tmp_path / "an"), "--quiet"]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_file_name_cannot_forge_an_output_line(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    forged = "x.json: $: all good\nevil\u202e.json"
    (runs / forged).write_text("{}")
    (runs / "bad\r.json").write_text("[")
    code = main(["validate", "--strict", str(runs)])  # without --strict both are skipped as not run files
    out = capsys.readouterr()
    assert code == 1 and "Traceback" not in out.err
    lines = out.out.splitlines()
    assert len(lines) == 2, lines
    assert (
        lines[0] == f"{runs}/bad\\r.json: $: expected complete JSON, found a document that ends early "
        "(truncated?) at line 1 column 2"
    )
    assert lines[1].startswith(f"{runs}/x.json: $: all good\\nevil\\u202e.json: $: expected a native")
    refused = json.loads(json.dumps([r.as_dict() for r in load([runs], strict=True).refused]))
    assert all("\n" not in r["path"] for r in refused)
    skipped = json.loads(load([runs]).refused_json())["skipped"]
    assert len(skipped) == 2 and all("\n" not in s["path"] and "\r" not in s["path"] for s in skipped)


# --- item 5: only regular files are opened ----------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_in_a_runs_folder_is_refused_by_name_not_opened(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    os.mkfifo(runs / "x.json")
    shutil.copy(GOOD / "good-1.json", runs)
    proc = run_cli("validate", runs, runs / "x.json", "/dev/null", timeout=60)  # would hang if opened
    assert proc.returncode == 1
    assert f"{runs}/x.json: $: expected a regular file, found a FIFO (named pipe): not opened" in proc.stdout
    assert "/dev/null: $: expected a regular file, found a character device: not opened" in proc.stdout
    assert "1 run(s) valid" in proc.stderr


def test_symlinks_and_unreadable_folders_are_reported(tmp_path):
    """Item 15: a folder of symlinks gave '0 valid, 0 refused, 0 skipped'."""
    store, runs = tmp_path / "store", tmp_path / "runs"
    shutil.copytree(GOOD, store)
    runs.mkdir()
    for name in ("good-1.json", "good-2.json"):
        (runs / name).symlink_to(store / name)
    (runs / "gone.json").symlink_to(tmp_path / "nothing.json")
    (runs / "a-folder").symlink_to(store)  # a folder: followed once
    (runs / "b-again").symlink_to(store)  # the same folder again: skipped, with the reason
    result = load([runs])
    assert sorted(lr.run.run_id for lr in result.runs) == ["good-1", "good-2", "good-3"]
    assert [str(r) for r in result.refused] == [
        f"{runs}/gone.json: $: expected a file or folder, found a symlink to nothing ({tmp_path}/nothing.json)"
    ]
    assert sorted(str(s) for s in result.skipped) == [
        f"{runs}/a-folder/good-1.json: skipped: the same file as {runs}/good-1.json: read once, from there",
        f"{runs}/a-folder/good-2.json: skipped: the same file as {runs}/good-2.json: read once, from there",
        f"{runs}/b-again: skipped: a symlink to a folder already read ({store})",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_unreadable_subfolder_is_refused(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(GOOD, runs / "locked")
    (runs / "locked").chmod(0)
    try:
        result = load([runs])
    finally:
        (runs / "locked").chmod(0o755)
    assert [str(r) for r in result.refused] == [
        f"{runs}/locked: $: could not read the folder: Permission denied; any run files in it were not read"
    ]


def test_unreadable_subfolder_is_refused_even_as_root(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    shutil.copytree(GOOD, runs / "locked")
    real = os.scandir

    def scandir(path):
        if Path(path).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    result = load([runs])
    assert not result.runs
    assert [str(r) for r in result.refused] == [
        f"{runs}/locked: $: could not read the folder: Permission denied; any run files in it were not read"
    ]


# --- item 12: CSV cells that a spreadsheet would run ---------------------------------------------


def test_csv_cells_that_could_start_a_formula_are_neutralised(tmp_path, capsys):
    import csv

    from runs import make_run, write_run

    run = make_run(exams=[{"benchmark": "=cmd|' /C calc'!A0", "correct": 150, "total": 164}])
    run["measurements"][0]["workload"] = "=1+1"
    run["measurements"][2]["workload"] = "@SUM(A1)"
    write_run(tmp_path / "runs", "a.json", run)
    assert main(["analyse", str(tmp_path / "runs"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    with open(tmp_path / "out" / "tables" / "cells.csv", newline="") as f:
        cells = list(csv.DictReader(f))
    workloads = {row["workload"] for row in cells}
    assert {"'=1+1", "'@SUM(A1)"} <= workloads and "=1+1" not in workloads
    assert all(not row["estimate"].startswith("'") for row in cells)  # numbers stay numbers
    text = (tmp_path / "out" / "tables" / "cells.csv").read_text()
    assert "\n=" not in text and ",=" not in text and ",@" not in text
