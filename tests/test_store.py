"""The run store: what ingest adds, what it leaves, and that reading it equals loading the files."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest

from benchreport.load import load
from benchreport.stats import estimate_cells
from benchreport.store import Store, StoreError, StoreRequests, ingest, read_tables
from benchreport.tables import build_tables

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate  # noqa: E402


@pytest.fixture(autouse=True)
def _engine(store_engine, monkeypatch):
    """Each test on the DuckLake store (the default) and on the Parquet store; tests of the
    Parquet store's own files on it alone (`parquet_layout`)."""
    monkeypatch.setenv("BENCHREPORT_STORE_ENGINE", store_engine)


@pytest.fixture()
def archive(tmp_path):
    """Two nights of a small fleet, one folder a night, plus the example data."""
    runs = tmp_path / "runs"
    generate(runs / "2026-11-01", seats=3, passes=3, requests=40, concurrencies=(1, 4), date="2026-11-01")
    generate(runs / "2026-11-02", seats=3, passes=3, requests=40, concurrencies=(1, 4), date="2026-11-02", seed=3)
    shutil.copytree(ROOT / "data" / "example", runs / "example")
    return runs


def _parts(store: Path) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*.parquet"))


def test_reading_the_store_equals_loading_the_files(archive, tmp_path):
    report = ingest([archive], tmp_path / "store")
    assert report.ok and report.runs_added == 32 and len(report.skipped) == 1  # the example's README
    store = Store.open(tmp_path / "store")
    got = read_tables(store, with_requests=True)
    want = build_tables(load([archive / "example", archive / "2026-11-01", archive / "2026-11-02"], progress=False))
    for name in ("seats", "components", "runs", "measurements", "exams", "exam_items", "events", "requests"):
        cols = [c for c in getattr(want, name).columns if c != "source_file"]
        pd.testing.assert_frame_equal(getattr(got, name)[cols], getattr(want, name)[cols], check_exact=True)
    small = read_tables(store)
    ours = estimate_cells(small.measurements, StoreRequests(store, small.runs), small.runs, n_resamples=300).cells
    theirs = estimate_cells(want.measurements, want.requests, want.runs, n_resamples=300).cells
    assert ours.to_csv(index=False) == theirs.to_csv(index=False)


@pytest.mark.parquet_layout
def test_ingesting_the_same_files_again_changes_nothing(archive, tmp_path):
    ingest([archive], tmp_path / "store")
    before = (_parts(tmp_path / "store"), (tmp_path / "store" / "files.parquet").read_bytes())
    again = ingest([archive], tmp_path / "store")
    assert again.added == [] and again.runs_added == 0 and again.unchanged >= 32
    assert (_parts(tmp_path / "store"), (tmp_path / "store" / "files.parquet").read_bytes()) == before


def test_a_new_night_adds_only_its_files(archive, tmp_path):
    ingest([archive], tmp_path / "store")
    generate(archive / "2026-11-03", seats=3, passes=3, requests=40, concurrencies=(1, 4), date="2026-11-03", seed=4)
    r = ingest([archive], tmp_path / "store")
    assert r.runs_added == 9 and all("2026-11-03" in p for p in r.added)
    assert Store.open(tmp_path / "store").dates()[-1] == "2026-11-03"


def test_a_changed_file_is_a_new_version_that_supersedes_the_old(archive, tmp_path):
    ingest([archive], tmp_path / "store")
    f = archive / "2026-11-01" / "seat-000-2026-11-01-p1.json"
    doc = json.loads(f.read_text())
    doc["measurements"][0]["value"] = 12345.0
    f.write_text(json.dumps(doc))
    os.utime(f, ns=(1, 1))
    r = ingest([archive], tmp_path / "store")
    assert r.superseded == [str(f.resolve())] and r.runs_added == 1
    store = Store.open(tmp_path / "store")
    files = store.files()
    mine = files[files["path"] == str(f.resolve())]
    assert len(mine) == 2 and mine["current"].sum() == 1
    m = read_tables(store).measurements
    assert 12345.0 in set(m["value"]) and len(m[m["run_id"] == doc["run_id"]]) == len(doc["measurements"])


def test_a_run_id_taken_by_another_file_is_refused(archive, tmp_path):
    ingest([archive], tmp_path / "store")
    other = tmp_path / "late"
    other.mkdir()
    src = archive / "2026-11-01" / "seat-001-2026-11-01-p1.json"
    doc = json.loads(src.read_text())
    doc["measurements"][0]["value"] = 1.0
    (other / "copy.json").write_text(json.dumps(doc))
    r = ingest([other], tmp_path / "store")
    assert not r.ok and "already uses" in r.refused[0].message and r.runs_added == 0


@pytest.mark.parquet_layout
def test_parts_of_a_killed_ingest_are_swept(archive, tmp_path):
    ingest([archive], tmp_path / "store")
    stray = tmp_path / "store" / "runs" / "day=2026-11-01" / "part-deadbeefdeadbeef.parquet"
    shutil.copy(next((tmp_path / "store" / "runs" / "day=2026-11-01").glob("*.parquet")), stray)
    ingest([archive], tmp_path / "store")
    assert not stray.exists()
    assert len(read_tables(Store.open(tmp_path / "store")).runs) == 32


def test_a_folder_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "thesis.docx").write_text("mine")
    with pytest.raises(StoreError, match="not empty and not a run store"):
        ingest([ROOT / "data" / "example"], tmp_path / "x")
    with pytest.raises(StoreError, match="not a run store"):
        Store.open(tmp_path / "x")


def test_a_second_analysis_reads_each_dates_summaries_from_the_cache(archive, tmp_path):
    from benchreport.pipeline import Options, analyse_store
    from benchreport.store.read import StoreRequests as SR

    ingest([archive], tmp_path / "store")
    store = Store.open(tmp_path / "store")
    small = read_tables(store)
    first = SR(store, small.runs)
    a = estimate_cells(small.measurements, first, small.runs, n_resamples=300).cells
    assert sorted(first.computed) == store.dates()
    again = SR(store, small.runs)
    b = estimate_cells(small.measurements, again, small.runs, n_resamples=300).cells
    assert again.computed == [] and a.to_csv(index=False) == b.to_csv(index=False)
    generate(archive / "2026-11-03", seats=3, passes=3, requests=40, concurrencies=(1, 4), date="2026-11-03", seed=4)
    ingest([archive], tmp_path / "store")
    store = Store.open(tmp_path / "store")  # a Store is a snapshot: opened again, it sees the new night
    small = read_tables(store)
    third = SR(store, small.runs)
    estimate_cells(small.measurements, third, small.runs, n_resamples=300)
    assert third.computed == ["2026-11-03"]
    opts = Options(n_boot=300, baseline="seat-000")
    cached = analyse_store(store, opts)
    fresh = analyse_store(store, opts, cache=False)
    for name in ("cells", "comparisons", "passes"):
        assert getattr(cached, name).to_csv(index=False) == getattr(fresh, name).to_csv(index=False)


def test_ingest_in_chunks_reads_the_same_store(archive, tmp_path):
    """Units read one chunk at a time (each its own batch) give the same tables as one read."""
    one = ingest([archive], tmp_path / "one")
    many = ingest([archive], tmp_path / "many", chunk_bytes=1)
    assert len(many.batches) == 3 and len(one.batches) == 1  # the two nights and the example, one chunk each
    assert many.runs_added == one.runs_added == 32 and len(many.skipped) == len(one.skipped) == 1
    a, b = (
        read_tables(Store.open(tmp_path / "one"), with_requests=True),
        read_tables(Store.open(tmp_path / "many"), with_requests=True),
    )
    for name in ("seats", "components", "runs", "measurements", "exams", "events", "requests"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=True)
    fa, fb = (Store.open(tmp_path / s).files().drop(columns=["batch"]) for s in ("one", "many"))
    pd.testing.assert_frame_equal(fa, fb)
    again = ingest([archive], tmp_path / "many", chunk_bytes=1)
    assert again.added == [] and again.runs_added == 0


def test_validate_on_a_store_counts_its_runs(tmp_path):
    """`validate --store` said "0 run(s) valid" of a store of 180 runs (issue 45): it counts them."""
    import subprocess
    import sys

    example = Path(__file__).resolve().parents[1] / "data" / "example"
    py = [sys.executable, "-m", "benchreport"]
    subprocess.run([*py, "ingest", str(example), "--store", str(tmp_path / "s"), "--quiet"], check=True)
    proc = subprocess.run([*py, "validate", "--store", str(tmp_path / "s")], capture_output=True, text=True)
    assert proc.returncode == 0 and "14 run(s) in the store" in proc.stderr, proc.stderr


def test_the_content_key_is_the_digest_of_each_files_row_as_iterated():
    """The store's content key (an up-to-date build's only read of its files) is made from each
    column's values at once; the digest is the one of iterating the rows cell by cell, whatever a
    column holds: text, missing values of each kind, numbers."""
    import hashlib

    import numpy as np

    from benchreport.store.layout import Store as PlainStore

    frame = pd.DataFrame(
        {
            "status": pd.array(["loaded", "refused", "loaded", None], dtype="string[pyarrow]"),
            "path": pd.Series(["a.json", "b.json", "c é.json", "d.json"], dtype="str"),
            "sha256": pd.array(["x", None, "z", "w"], dtype="string"),
            "batch": pd.Series([1, 2, 3, 4], dtype="int64"),
            "context": pd.Series([None, "ctx", np.nan, "c"], dtype=object),
            "reason": pd.Series([None, "bad json", None, pd.NA], dtype=object),
            "current": [True, True, False, True],
        }
    )

    class Frozen(PlainStore):
        def files(self):
            return frame

    cur = frame[frame["current"]]
    want = hashlib.sha256(
        "\n".join(
            sorted(
                f"{s}|{p}|{h}|{b}|{c}|{r}"
                for s, p, h, b, c, r in zip(
                    cur["status"], cur["path"], cur["sha256"], cur["batch"], cur["context"], cur["reason"]
                )
            )
        ).encode()
    ).hexdigest()
    assert Frozen("/nonexistent").content_key() == want
