"""The flags through the whole pipeline (benchreport.pipeline.analyse and `benchreport analyse`):
exclusions decided once with the user's thresholds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchreport.cli import main
from flag_fixtures import EXAMPLE

NVFP4 = "glm-5.3-flash-nvfp4-tp4-2node"
NVFP4_FILE = "2026-09-10-glm-5.3-flash-nvfp4-tp4-2node-pass1.json"

pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="example data not present")


@pytest.fixture(scope="module")
def unmarked_cache_hit(tmp_path_factory) -> Path:
    """data/example with the 95,941 tok/s prefill moved to a second pass of its seat, its
    `fresh_prompt` left unstated: only its ratio to the seat's fresh 4,711 tok/s (20.4x) says it
    is a prefix-cache hit. (In one run the statistics keep the first figure of a cell, so the
    figure gets a pass of its own to be seen in the cells.)"""
    folder = tmp_path_factory.mktemp("runs") / "example"
    shutil.copytree(EXAMPLE, folder)
    path = folder / "fleet-paper" / NVFP4_FILE
    run = json.loads(path.read_text(encoding="utf-8"))
    hit = [m for m in run["measurements"] if m["metric"] == "prefill_tok_s" and m["value"] == 95941]
    assert len(hit) == 1
    run["measurements"].remove(hit[0])
    path.write_text(json.dumps(run), encoding="utf-8")
    del hit[0]["fresh_prompt"]
    second = {k: v for k, v in run.items() if k not in ("requests", "events", "exams")}
    second.update({"run_id": run["run_id"].replace("pass1", "pass2"), "pass": 2, "measurements": hit})
    (path.parent / NVFP4_FILE.replace("pass1", "pass2")).write_text(json.dumps(second), encoding="utf-8")
    return folder


def _analyse(runs: Path, out: Path, *options: str) -> tuple[pd.DataFrame, list[dict]]:
    assert main(["analyse", str(runs), "--out", str(out), "--quiet", *options]) == 0
    cells = pd.read_csv(out / "tables" / "cells.csv")
    return cells, json.loads((out / "flags.json").read_text(encoding="utf-8"))


def _prefill_values(cells: pd.DataFrame) -> list[float]:
    sel = cells[(cells["seat"] == NVFP4) & (cells["metric"] == "prefill_tok_s")]
    return sorted(float(v) for vals in sel["values"].astype(str) for v in vals.split(";"))


def _cache_flags(flags: list[dict]) -> list[dict]:
    return [f for f in flags if f["code"] == "trap.prefix_cache"]


def test_default_cache_ratio_excludes_and_flags_the_95941_figure(unmarked_cache_hit, tmp_path):
    cells, flags = _analyse(unmarked_cache_hit, tmp_path / "out")
    assert _prefill_values(cells) == [4711.0]
    (f,) = _cache_flags(flags)
    assert f["severity"] == "critical" and f["evidence"]["value"] == 95941
    assert f["evidence"]["reasons"] == ["ratio"] and f["evidence"]["thresholds"] == {"cache_ratio": 3.0}
    assert f["evidence"]["ratio"] == pytest.approx(95941 / 4711)


def test_cache_ratio_25_keeps_the_95941_figure_and_raises_no_cache_flag(unmarked_cache_hit, tmp_path):
    """The issue-13 bug: at --cache-ratio 25 the 20.4x figure raised no flag yet was dropped from the cells."""
    cells, flags = _analyse(unmarked_cache_hit, tmp_path / "out", "--cache-ratio", "25")
    assert 95941.0 in _prefill_values(cells)
    assert _cache_flags(flags) == []


def test_a_figure_marked_not_fresh_is_excluded_at_any_ratio(tmp_path):
    """In data/example the 95,941 figure says its prompt was not fresh: excluded whatever the ratio."""
    cells, flags = _analyse(EXAMPLE, tmp_path / "out", "--cache-ratio", "25")
    assert _prefill_values(cells) == [4711.0]
    (f,) = _cache_flags(flags)
    assert f["evidence"]["reasons"] == ["not_fresh"] and f["evidence"]["thresholds"] == {"cache_ratio": 25.0}
