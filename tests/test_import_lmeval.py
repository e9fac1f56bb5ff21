"""lm-evaluation-harness results + samples: item-level exams that pair across seats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchreport.load import load
from benchreport.tables import build_tables

FIXTURES = Path(__file__).parent / "fixtures" / "harness" / "lmeval"
RESULTS = sorted(FIXTURES.rglob("results_*.json"))
SAMPLES = sorted(FIXTURES.rglob("samples_*.jsonl"))


@pytest.fixture(scope="module")
def loaded():
    result = load(sorted({p.parent for p in RESULTS}))
    return result, build_tables(result)


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_fixtures_present():
    assert len(RESULTS) >= 2 and SAMPLES, "the captured lm-eval fixtures (two seats) are missing"


def test_one_run_per_invocation_with_item_exams(loaded):
    result, tables = loaded
    assert not result.refused, [str(r) for r in result.refused]
    assert len(result.runs) == len(RESULTS)
    assert tables.exams.from_items.all()
    for lr in result.runs:
        doc = json.loads(Path(lr.source_file).read_text())
        assert lr.run.seat.model == doc["model_name"]
        assert lr.run.harness.version == doc["lm_eval_version"]


def test_item_counts_reproduce_the_results_scores(loaded):
    """correct/total from the items equal lm-eval's own score x n-samples for each task."""
    result, tables = loaded
    for lr in result.runs:
        doc = json.loads(Path(lr.source_file).read_text())
        exams = tables.exams[tables.exams.run_id == lr.run.run_id]
        for row in exams.itertuples():
            flt = row.dimension if isinstance(row.dimension, str) else "none"
            scores = doc["results"][row.benchmark]
            metric = "acc" if f"acc,{flt}" in scores else "exact_match"
            assert row.total == doc["n-samples"][row.benchmark]["effective"]
            assert row.correct == pytest.approx(scores[f"{metric},{flt}"] * row.total, abs=1e-9)


def test_two_seats_pair_by_doc_hash(loaded):
    """The exam_items table has the same item ids for both seats (McNemar pairs them)."""
    _, tables = loaded
    items = tables.exam_items
    seats = sorted(items.seat.unique())
    assert len(seats) >= 2
    for (_bench, _dim), group in items.groupby(["benchmark", "dimension"], dropna=False):
        ids = [set(group[group.seat == s].item_id) for s in seats]
        assert all(i == ids[0] for i in ids) and ids[0]
        hashes = {r["doc_hash"] for p in SAMPLES for r in _lines(p)}
        assert ids[0] <= hashes


def test_samples_alone_under_neutral_names_pair_with_a_manifest(tmp_path):
    """Without results files the task comes from the manifest-less file name (stated), the seat
    from the manifest; the item ids still pair across seats."""
    by_seat = {}
    for p in SAMPLES:
        by_seat.setdefault(p.parent.name, []).append(p)
    seats = sorted(by_seat)[:2]
    for seat in seats:
        (tmp_path / seat).mkdir()
        for i, p in enumerate(sorted(by_seat[seat])):
            shutil.copy(p, tmp_path / seat / f"x{i}.jsonl")
    manifest = {
        "runs": [{"files": f"{seat}/**", "seat": {"id": seat, "model": seat}, "date": "2026-11-30"} for seat in seats]
    }
    (tmp_path / "benchreport.json").write_text(json.dumps(manifest))
    result = load([tmp_path])
    assert not result.refused, [str(r) for r in result.refused]
    tables = build_tables(result)
    items = tables.exam_items
    for _bench, group in items.groupby("benchmark"):
        a, b = (set(group[group.seat == s].item_id) for s in seats)
        assert a == b and a
    assumed = "; ".join(a for lr in result.runs for a in lr.assumptions)
    assert "after the samples file" in assumed and "seat id" not in assumed


def test_a_metric_that_is_not_a_verdict_is_left_out_with_a_note(tmp_path):
    src = next(p for p in SAMPLES if "metrics" in _lines(p)[0])
    rows = _lines(src)
    metric = rows[0]["metrics"][0]
    for i, r in enumerate(rows):
        r[metric] = 0.25 * (i % 4)  # e.g. a BLEU-like score, not 0/1
        r["metrics"] = [metric]
    (tmp_path / "x.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = load([tmp_path])
    assert not result.runs and not result.refused
    assert f"metric '{metric}' is not a 0/1 verdict" in result.skipped[0].reason


def test_results_without_samples_give_count_exams(tmp_path):
    shutil.copy(RESULTS[0], tmp_path / "r.json")
    result = load([tmp_path])
    assert not result.refused
    doc = json.loads(RESULTS[0].read_text())
    exams = build_tables(result).exams
    assert set(exams.benchmark) == set(doc["results"])
    assert not exams.from_items.any()
    assert set(exams.total) <= {v["effective"] for v in doc["n-samples"].values()}
