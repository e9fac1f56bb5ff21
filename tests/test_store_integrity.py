"""The run store never loses a run (issue 28): one writer at a time, content versions, the
listed parts as the truth, `store check` / `store repair`, read-only stores and the build key.

Every case ends by comparing the store with a clean ingest of the same files into a new
store: the same versions in use and the same rows in every table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from benchreport.cli import main
from benchreport.store import Store, ingest, read_tables
import importlib

ROOT = Path(__file__).resolve().parents[1]
SGLANG = ROOT / "tests" / "fixtures" / "harness" / "sglang" / "completions.jsonl"
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate  # noqa: E402

ingest_module = importlib.import_module("benchreport.store.ingest")

TABLES = ("seats", "components", "runs", "measurements", "exams", "exam_items", "events", "requests")


def _cli(*args, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run(
        [sys.executable, "-m", "benchreport", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def _state(store_dir: Path) -> dict:
    """What a store holds for a reader: the versions in use and every table's rows."""
    store = Store.open(store_dir)
    tables = read_tables(store, with_requests=True)
    use = store.in_use()
    out = {"in_use": sorted(zip(use["path"].astype(str), use["sha256"].astype(str)))}
    for name in TABLES:
        df = getattr(tables, name)
        cols = [c for c in df.columns if c != "source_file"]
        out[name] = df[cols].reset_index(drop=True)
    return out


def assert_same_as_clean(store_dir: Path, sources: list[Path], tmp_path: Path, **kw) -> None:
    clean = tmp_path / f"clean-{len(list(tmp_path.glob('clean-*')))}"
    ingest(sources, clean, **kw)
    got, want = _state(store_dir), _state(clean)
    assert got["in_use"] == want["in_use"]
    for name in TABLES:
        pd.testing.assert_frame_equal(got[name], want[name], check_exact=True, obj=name)


@pytest.fixture(autouse=True)
def _engine(store_engine, monkeypatch):
    """Each test on the DuckLake store (the default) and on the Parquet store; tests of the
    Parquet store's own files on it alone (`parquet_layout`)."""
    monkeypatch.setenv("BENCHREPORT_STORE_ENGINE", store_engine)


@pytest.fixture()
def nights(tmp_path):
    runs = tmp_path / "runs"
    generate(runs / "2026-11-01", seats=3, passes=2, requests=30, concurrencies=(1, 4), date="2026-11-01")
    generate(runs / "2026-11-02", seats=3, passes=2, requests=30, concurrencies=(1, 4), date="2026-11-02", seed=3)
    generate(runs / "2026-11-03", seats=2, passes=2, requests=30, concurrencies=(1,), date="2026-11-03", seed=5)
    return runs


# --- one writer at a time ------------------------------------------------------------------------


def test_two_ingest_processes_at_once_end_as_one_clean_ingest(nights, tmp_path):
    """Two real processes on one store at once (a nightly job and a colleague): each waits for the
    other, neither loses a row, and the store is what one ingest of everything would give."""
    store = tmp_path / "store"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmds = [
        [
            sys.executable,
            "-m",
            "benchreport",
            "ingest",
            str(nights / "2026-11-01"),
            str(nights / "2026-11-02"),
            "--store",
            str(store),
            "--wait",
            "120",
            "--quiet",
        ],
        [
            sys.executable,
            "-m",
            "benchreport",
            "ingest",
            str(nights / "2026-11-02"),
            str(nights / "2026-11-03"),
            "--store",
            str(store),
            "--wait",
            "120",
            "--quiet",
        ],
    ]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for c in cmds]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert_same_as_clean(store, [nights], tmp_path)
    assert _cli("store", "check", "--store", store).returncode == 0


@pytest.mark.parquet_layout
def test_a_second_job_is_told_the_store_is_busy_and_can_wait(nights, tmp_path):
    store_dir = tmp_path / "store"
    ingest([nights / "2026-11-01"], store_dir)
    before = (store_dir / "files.parquet").read_bytes()
    store = Store.open(store_dir)
    with store.lock(doing="ingest"):
        busy = _cli("ingest", nights / "2026-11-02", "--store", store_dir)
        assert busy.returncode == 4, busy.stderr
        line = busy.stderr.strip()
        assert "\n" not in line and "Traceback" not in line
        assert f"another job holds the store's lock (pid {os.getpid()}, ingest since" in line
        assert "--wait SECONDS" in line
        assert (store_dir / "files.parquet").read_bytes() == before
        timed = _cli("ingest", nights / "2026-11-02", "--store", store_dir, "--wait", "0.5")
        assert timed.returncode == 4 and "after waiting 0.5 s" in timed.stderr
    releaser = threading.Timer(1.5, lambda: None)
    lock = store.lock(doing="ingest")
    lock.__enter__()
    releaser = threading.Timer(1.5, lambda: lock.__exit__(None, None, None))
    releaser.start()
    t0 = time.monotonic()
    waited = _cli("ingest", nights / "2026-11-02", "--store", store_dir, "--wait", "60")
    assert waited.returncode == 0, waited.stderr
    assert time.monotonic() - t0 >= 1.4
    releaser.join()
    assert_same_as_clean(store_dir, [nights / "2026-11-01", nights / "2026-11-02"], tmp_path)


@pytest.mark.parquet_layout
def test_a_killed_writers_leftovers_are_swept_but_a_live_writers_parts_are_not(nights, tmp_path):
    """The sweep runs under the lock only: a part named as an ingest names them, of a batch no
    files table lists, is a killed writer's and goes; a temporary file of another name stays."""
    store_dir = tmp_path / "store"
    ingest([nights / "2026-11-01"], store_dir)
    day = store_dir / "runs" / "day=2026-11-01"
    (day / "part-0123456789abcdef.parquet").write_bytes(b"half")  # a killed ingest's part
    (day / ".part-0123456789abcdef.0123456789abcdef0123456789abcdef.tmp").write_bytes(b"x")
    (day / "notes.txt").write_text("someone else's")
    ingest([nights / "2026-11-02"], store_dir)
    assert not (day / "part-0123456789abcdef.parquet").exists()
    assert not any(day.glob(".part-*.tmp"))
    assert (day / "notes.txt").exists()  # not ours: `store check` names it, `store repair` moves it
    check = _cli("store", "check", "--store", store_dir)
    assert check.returncode == 1 and "runs/day=2026-11-01/notes.txt: stray" in check.stdout
    (day / "notes.txt").unlink()
    assert_same_as_clean(store_dir, [nights / "2026-11-01", nights / "2026-11-02"], tmp_path)


# --- content versions ------------------------------------------------------------------------


def _first_lines(n: int) -> bytes:
    return b"".join(SGLANG.read_bytes().splitlines(keepends=True)[:n])


def test_a_file_appended_to_while_it_is_read_is_read_again(tmp_path, monkeypatch):
    """SGLang `--output-file` and vLLM `--append-result` append a line per run: a line appended
    while the ingest reads the file is seen (the file is read again), not lost until touched."""
    runs = tmp_path / "runs"
    runs.mkdir()
    target = runs / "sglang.jsonl"
    target.write_bytes(_first_lines(1))
    real_load = ingest_module.load
    calls = []

    def appending_load(*a, **kw):
        result = real_load(*a, **kw)
        calls.append(1)
        if len(calls) == 1:  # the harness writes its next result while we read
            with open(target, "ab") as f:
                f.write(_first_lines(2)[len(_first_lines(1)) :])
        return result

    monkeypatch.setattr(ingest_module, "load", appending_load)
    report = ingest([runs], tmp_path / "store")
    monkeypatch.setattr(ingest_module, "load", real_load)
    assert len(calls) == 2 and report.notes == [] and report.runs_added == 2
    assert_same_as_clean(tmp_path / "store", [runs], tmp_path)


def test_a_file_still_growing_is_stored_as_read_and_read_again_next_time(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir()
    target = runs / "sglang.jsonl"
    target.write_bytes(_first_lines(1))
    real_load = ingest_module.load
    grown = iter([2, 3])

    def growing_load(*a, **kw):
        result = real_load(*a, **kw)
        n = next(grown, None)
        if n is not None:
            target.write_bytes(_first_lines(n))
        return result

    monkeypatch.setattr(ingest_module, "load", growing_load)
    first = ingest([runs], tmp_path / "store")
    monkeypatch.setattr(ingest_module, "load", real_load)
    assert first.runs_added == 2 and len(first.notes) == 1 and "changed while it was read" in first.notes[0]
    second = ingest([runs], tmp_path / "store")  # the harness has finished: the whole file now
    assert second.superseded == [str(target.resolve())] and second.runs_added == 3
    assert_same_as_clean(tmp_path / "store", [runs], tmp_path)
    out = _cli("ingest", runs, "--store", tmp_path / "store")
    assert out.returncode == 0 and "0 file(s) added" in out.stderr


def _native(tmp_path) -> Path:
    src = sorted((ROOT / "data" / "example" / "fleet-paper").rglob("*.json"))[0]
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(src, runs / "run.json")
    return runs / "run.json"


def test_a_file_changed_and_changed_back_is_its_old_version_again(tmp_path):
    path = _native(tmp_path)
    a = path.read_bytes()
    doc = json.loads(a)
    doc["notes"] = "edited once"
    store = tmp_path / "store"
    ingest([path.parent], store)
    path.write_text(json.dumps(doc))
    assert ingest([path.parent], store).superseded == [str(path.resolve())]
    parts_before = sorted(p.name for p in store.rglob("part-*.parquet"))
    path.write_bytes(a)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    back = ingest([path.parent], store)
    assert back.restored == [str(path.resolve())] and back.added == [] and back.runs_added == 0
    assert sorted(p.name for p in store.rglob("part-*.parquet")) == parts_before  # nothing stored twice
    f = Store.open(store).files()
    assert (f["path"] == str(path.resolve())).sum() == 2  # two versions, one of them in use
    assert_same_as_clean(store, [path.parent], tmp_path)
    for cmd in (["analyse", "--store", store, "--out", tmp_path / "out"], ["flags", "--store", store]):
        r = _cli(*cmd)
        assert r.returncode in (0, 3) and "Traceback" not in r.stderr, r.stderr


def test_a_fixed_refusal_is_seen_by_the_next_ingest(tmp_path):
    path = _native(tmp_path)
    store = tmp_path / "store"
    small = _cli("ingest", path.parent, "--store", store, "--max-file-mb", "0.001")
    assert small.returncode == 1 and "expected a file of at most" in small.stderr
    again = _cli("ingest", path.parent, "--store", store)  # the cause (the limit) is fixed; the file is not touched
    assert again.returncode == 0 and "1 file(s) added" in again.stderr, again.stderr
    assert_same_as_clean(store, [path.parent], tmp_path)


def test_a_broken_file_repaired_in_place_and_a_new_refusal_change_the_build_key(tmp_path):
    path = _native(tmp_path)
    store_dir = tmp_path / "store"
    ingest([path.parent], store_dir)
    key = Store.open(store_dir).content_key()
    (path.parent / "broken.json").write_text('{"format": "benchreport.run/1", ')
    report = ingest([path.parent], store_dir)
    assert [r.path for r in report.refused] == [str(path.parent / "broken.json")]
    refused_key = Store.open(store_dir).content_key()
    assert refused_key != key  # the report's appendix must now list the refusal: not "up to date"
    assert ingest([path.parent], store_dir).refused and Store.open(store_dir).content_key() == refused_key
    (path.parent / "broken.json").unlink()
    shutil.copy(path, path.parent / "broken.json")
    doc = json.loads(path.read_text())
    doc["run_id"] = doc["run_id"] + "-b"
    (path.parent / "broken.json").write_text(json.dumps(doc))
    fixed = ingest([path.parent], store_dir)
    assert fixed.ok and fixed.added == [str((path.parent / "broken.json").resolve())]


def test_an_edited_manifest_is_a_new_version_of_the_files_it_names(tmp_path):
    vllm = sorted((ROOT / "tests" / "fixtures" / "harness" / "vllm").rglob("*.json"))[0]
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(vllm, runs / "a.json")
    manifest = 'version: 1\nruns:\n  - files: "**"\n    seat: {{id: {seat}, role: candidate}}\n'
    (runs / "benchreport.yaml").write_text(manifest.format(seat="tiny-first"))
    store = tmp_path / "store"
    ingest([runs], store)
    assert set(read_tables(Store.open(store)).seats["seat"]) == {"tiny-first"}
    (runs / "benchreport.yaml").write_text(manifest.format(seat="tiny-renamed"))
    again = ingest([runs], store)
    assert again.runs_added == 1
    assert set(read_tables(Store.open(store)).seats["seat"]) == {"tiny-renamed"}
    assert_same_as_clean(store, [runs], tmp_path)


def test_a_path_longer_than_path_max_is_refused_by_name(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir()
    monkeypatch.chdir(runs)
    depth = 0
    while len(str(runs)) + depth * 201 < 4300:
        os.mkdir("d" * 200)
        os.chdir("d" * 200)
        depth += 1
    monkeypatch.chdir(tmp_path)
    r = _cli("ingest", runs, "--store", tmp_path / "store")
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "File name too long" in r.stderr or "expected a path shorter than 4096" in r.stderr


# --- the listed parts are the truth; check and repair ------------------------------------------


@pytest.mark.parquet_layout
def test_a_stray_copy_of_a_part_is_never_read(nights, tmp_path):
    store = tmp_path / "store"
    ingest([nights], store)
    part = next((store / "requests" / "day=2026-11-01").glob("part-*.parquet"))
    shutil.copy(part, part.with_name("part-copy (1).parquet"))  # what a sync tool leaves
    shutil.copy(part, part.with_name("part-0000000000000000.parquet"))  # well named, of no batch
    assert_same_as_clean(store, [nights], tmp_path)
    check = _cli("store", "check", "--store", store)
    assert check.returncode == 1
    assert "requests/day=2026-11-01/part-copy (1).parquet: stray" in check.stdout


@pytest.mark.parquet_layout
@pytest.mark.parametrize("damage", ["deleted", "truncated", "replaced"])
def test_a_damaged_part_is_one_line_and_repair_reads_it_again(nights, tmp_path, damage):
    store = tmp_path / "store"
    ingest([nights], store)
    part = next((store / "measurements" / "day=2026-11-02").glob("part-*.parquet"))
    if damage == "deleted":
        part.unlink()
    elif damage == "truncated":
        part.write_bytes(part.read_bytes()[:200])
    else:  # the same size, other bytes: only a check that hashes finds it
        data = bytearray(part.read_bytes())
        data[len(data) // 2] ^= 0xFF
        part.write_bytes(bytes(data))
    check = _cli("store", "check", "--store", store)
    assert check.returncode == 4, check.stdout + check.stderr
    assert (
        f"measurements/day=2026-11-02/{part.name}: {dict(deleted='missing', truncated='size', replaced='sha256')[damage]}"
        in check.stdout
    )
    if damage != "replaced":
        for cmd in (["analyse", "--store", store, "--out", tmp_path / "out"], ["flags", "--store", store]):
            r = _cli(*cmd)
            assert r.returncode == 4, r.stderr
            last = r.stderr.strip().splitlines()[-1]
            assert "Traceback" not in r.stderr and last.startswith(f"benchreport {cmd[0]}: damaged store: ")
            assert part.name in last
    fixed = _cli("store", "repair", "--store", store)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "0 lost; the store checks clean" in fixed.stderr
    assert (store / "lost+found").is_dir()
    assert _cli("store", "check", "--store", store).returncode == 0
    assert_same_as_clean(store, [nights], tmp_path)


@pytest.mark.parquet_layout
def test_repair_marks_lost_what_cannot_be_read_again(nights, tmp_path):
    store = tmp_path / "store"
    ingest([nights], store)
    part = next((store / "runs" / "day=2026-11-03").glob("part-*.parquet"))
    part.unlink()
    gone = sorted((nights / "2026-11-03").glob("*.json"))
    shutil.rmtree(nights / "2026-11-03")  # the source is gone too
    fixed = _cli("store", "repair", "--store", store)
    assert fixed.returncode == 1, fixed.stderr  # the store is sound, but some versions are lost
    for path in gone:
        assert f"lost (its source is gone or changed; ingest it again): {path}" in fixed.stderr
    analysed = _cli("analyse", "--store", store, "--out", tmp_path / "out")
    assert analysed.returncode == 1 and str(gone[0]) in analysed.stderr  # listed with the refusals
    # what survived is exactly the other nights
    assert_same_as_clean(store, [nights / "2026-11-01", nights / "2026-11-02"], tmp_path)


# --- read-only stores and the working directory ------------------------------------------------


def _read_only(cmd: list[str], store: Path, home: Path) -> subprocess.CompletedProcess:
    """Run `cmd` with the store mounted read-only (a mount namespace), or as nobody when that
    cannot be done; skip when neither can."""
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    unshare = shutil.which("unshare")
    if unshare:
        script = f'mount --bind "{store}" "{store}" && mount -o remount,bind,ro "{store}" && exec "$@"'
        probe = subprocess.run([unshare, "-m", "sh", "-c", script, "sh", "true"], capture_output=True)
        if probe.returncode == 0:
            return subprocess.run(
                [unshare, "-m", "sh", "-c", script, "sh", *cmd], capture_output=True, text=True, env=env, timeout=600
            )
    if os.geteuid() != 0:
        store.chmod(0o555)
        try:
            return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        finally:
            store.chmod(0o755)
    pytest.skip("no way to make a read-only store here (no mount namespace)")


def test_a_read_only_store_analyses_and_builds(nights, tmp_path):
    store = tmp_path / "store"
    ingest([nights / "2026-11-01"], store)
    home = tmp_path / "home"
    home.mkdir()
    py = [sys.executable, "-m", "benchreport"]
    analysed = _read_only([*py, "analyse", "--store", str(store), "--out", str(tmp_path / "a")], store, home)
    assert analysed.returncode == 0 and "Traceback" not in analysed.stderr, analysed.stderr
    assert analysed.stderr.count("is read-only: its cache is kept in") == 1
    assert not (store / ".cache").exists() and any((home / ".cache" / "benchreport" / "stores").rglob("*.arrow"))
    want = _cli("analyse", nights / "2026-11-01", "--out", tmp_path / "b")
    assert want.returncode == 0, want.stderr
    assert (tmp_path / "a" / "tables" / "cells.csv").read_bytes() == (
        tmp_path / "b" / "tables" / "cells.csv"
    ).read_bytes()
    again = _read_only([*py, "ingest", str(nights / "2026-11-02"), "--store", str(store)], store, home)
    assert again.returncode == 2 and "read-only" in again.stderr and "Traceback" not in again.stderr
    built = _read_only(
        [*py, "build", "--store", str(store), "--out", str(tmp_path / "r"), "--format", "html", "--quiet"], store, home
    )
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "r" / "report.html").is_file()


def test_build_with_a_relative_store_path(nights, tmp_path):
    """papermill changes the working directory while the analysis runs: a relative --store must
    still be the store the user meant, and no cache may appear under the package."""
    ingest([nights / "2026-11-01"], tmp_path / "store")
    before = sorted(p for p in (ROOT / "notebooks").rglob("*"))
    r = _cli("build", "--store", "store", "--out", "out", "--format", "html", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / "report.html").is_file() and (tmp_path / "store" / ".cache").is_dir()
    assert sorted(p for p in (ROOT / "notebooks").rglob("*")) == before


def test_a_busy_cache_is_computed_without_and_gives_the_same_numbers(nights, tmp_path):
    store_dir = tmp_path / "store"
    ingest([nights / "2026-11-01"], store_dir)
    store = Store.open(store_dir)
    with store.cache_lock() as (root, _):
        assert root == store.root
        r = _cli("analyse", "--store", store_dir, "--out", tmp_path / "a")
    assert r.returncode == 0 and "another analysis is writing" in r.stderr, r.stderr
    again = _cli("analyse", "--store", store_dir, "--out", tmp_path / "b")
    assert again.returncode == 0 and "another analysis" not in again.stderr
    assert (tmp_path / "a" / "tables" / "cells.csv").read_bytes() == (
        tmp_path / "b" / "tables" / "cells.csv"
    ).read_bytes()


def test_store_errors_are_one_line_with_their_exit_codes(tmp_path):
    r = _cli("store", "check", "--store", tmp_path / "nothing")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a run store" in r.stderr
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "store.json").write_text('{"format": "benchreport.store/1"}')
    (tmp_path / "s" / "files.parquet").write_bytes(b"PAR1 not really")
    r = _cli("analyse", "--store", tmp_path / "s", "--out", tmp_path / "o")
    assert r.returncode == 4 and "damaged store" in r.stderr and "Traceback" not in r.stderr
    assert main(["store", "check", "--store", str(tmp_path / "s")]) == 4


@pytest.mark.parquet_layout
def test_the_documented_query_reads_the_listed_parts_only(nights, tmp_path):
    """docs/store.md's SQL, run as printed on a store with a stray copy, counts what benchreport reads."""
    import re

    import duckdb

    store = tmp_path / "store"
    ingest([nights], store)
    part = next((store / "requests" / "day=2026-11-02").glob("part-*.parquet"))
    shutil.copy(part, part.with_name("part-copy (1).parquet"))
    sql = re.search(r"```sql\n(.*?)```", (ROOT / "docs" / "store.md").read_text(), re.S).group(1)
    con = duckdb.connect()
    *setup, query = [s for s in sql.replace("STORE", str(store)).split(";") if s.strip()]
    for s in setup:
        con.execute(s)
    got = con.sql(query).df()
    want = read_tables(Store.open(store), with_requests=True).requests
    assert int(got["requests"].sum()) == len(want) > 0
    by_seat = want.groupby("seat").size().to_dict()
    assert got.groupby("seat")["requests"].sum().to_dict() == by_seat
