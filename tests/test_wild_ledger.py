"""The corpus from the wild (tests/wild/, published result files from real accelerators) against its
ledger (tests/wild_ledger.json, described in tests/wild_ledger.py), through the command line:
every file read, skipped or refused as the ledger says, each figure the file states equal to ours,
and `validate`, `analyse` and `build` over the whole corpus without a crash (issue 40)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from wild_ledger import LEDGER, REL, WILD, analyse, rows_of

ENTRIES = json.loads(LEDGER.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    return analyse(tmp_path_factory.mktemp("wild") / "out")


def test_the_ledger_names_every_file_of_the_corpus_once():
    listed = [e["file"] for e in ENTRIES]
    assert len(listed) == len(set(listed))
    on_disk = {p.relative_to(WILD).as_posix() for p in WILD.rglob("*") if p.is_file()} - {"README.md", "SOURCES.tsv"}
    assert set(listed) == on_disk
    sources = {row["file"] for row in csv.DictReader(open(WILD / "SOURCES.tsv", encoding="utf-8"), delimiter="\t")}
    assert sources == on_disk
    assert len(listed) >= 150


def test_analyse_exits_as_the_ledger_says(analysed):
    refused = [e["file"] for e in ENTRIES if e["outcome"] == "refused"]
    assert analysed["returncode"] == 0, analysed["stderr"][-2000:]
    assert "Traceback" not in analysed["stderr"]
    assert not refused or all(f in analysed["stderr"] for f in refused)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e["file"][-90:])
def test_each_file_as_the_ledger_says(analysed, entry):
    got = analysed["files"].get(entry["file"])
    assert got is not None, "the file is not in provenance.csv"
    assert got["status"] == entry["outcome"], got["reason"]
    if entry["outcome"] != "read":
        assert entry["reason"] in got["reason"]
        return
    assert len(got["runs"]) == entry["runs"]
    rows = rows_of(analysed, entry["file"])
    assert sorted({r["seat"] for r in rows}) == entry["seats"]
    for fig in entry["figures"]:
        match = [
            float(r["value"])
            for r in rows
            if r["metric"] == fig["metric"]
            and r["statistic"] == fig["statistic"]
            and ("concurrency" not in fig or r["concurrency"] == str(fig["concurrency"]))
        ]
        assert any(v == pytest.approx(fig["value"], rel=REL) for v in match), (fig, match)
    for metric in entry.get("absent", []):
        assert not [r for r in rows if r["metric"] == metric], f"{metric} reported, the file has none"


def test_validate_names_only_the_files_the_ledger_refuses():
    proc = subprocess.run(
        [sys.executable, "-m", "benchreport", "validate", str(WILD), "--quiet"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    refused = [e["file"] for e in ENTRIES if e["outcome"] == "refused"]
    assert proc.returncode == (1 if refused else 0), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_the_whole_corpus_builds(tmp_path):
    refused = any(e["outcome"] == "refused" for e in ENTRIES)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchreport",
            "build",
            str(WILD),
            "--out",
            str(tmp_path / "r"),
            "--format",
            "html",
            "--quiet",
            *(["--skip-bad"] if refused else []),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "r" / "report.html").stat().st_size > 10_000
