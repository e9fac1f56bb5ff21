"""The run store on DuckLake (issue 44): `--store ducklake:DIR` (embedded: an SQLite catalog and
local Parquet, no server) and `--store postgresql://...` (a real PostgreSQL server this module
starts), behind the same API as the Parquet store.

Every case compares with a clean single-writer ingest of the same files into a Parquet store:
the same versions in use, the same rows in every table, and `analyse` writing the same bytes."""

from __future__ import annotations

import filecmp
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from benchreport.store import Store, StoreError, ingest, read_tables  # noqa: E402
from benchreport.store.check import check  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate  # noqa: E402

TABLES = ("seats", "components", "runs", "measurements", "exams", "exam_items", "events", "requests")
NIGHTS = ("2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04")


def _cli(*args, timeout=300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmd = [sys.executable, "-m", "benchreport", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)


def _state(location) -> dict:
    store = Store.open(location)
    tables = read_tables(store, with_requests=True)
    use = store.in_use()
    out = {"in_use": sorted(zip(use["path"].astype(str), use["sha256"].astype(str)))}
    for name in TABLES:
        df = getattr(tables, name)
        out[name] = df[[c for c in df.columns if c != "source_file"]].reset_index(drop=True)
    return out


def assert_same_store(location, clean: Path) -> None:
    got, want = _state(location), _state(clean)
    assert got["in_use"] == want["in_use"]
    for name in TABLES:
        pd.testing.assert_frame_equal(got[name], want[name], check_exact=True, obj=name)


def assert_same_analysis(location, clean: Path, tmp_path: Path) -> None:
    outs = []
    for i, store in enumerate((location, clean)):
        out = tmp_path / f"analysis-{i}"
        done = _cli("analyse", "--store", store, "--out", out, "--quiet")
        assert done.returncode == 0, done.stderr
        outs.append(out)
    names = sorted(p.relative_to(outs[1]).as_posix() for p in outs[1].rglob("*") if p.is_file())
    names = [n for n in names if n != ".benchreport-output"]  # records the time it was written
    assert names == sorted(
        p.relative_to(outs[0]).as_posix() for p in outs[0].rglob("*") if p.is_file() and p.name != ".benchreport-output"
    )
    _, mismatch, errors = filecmp.cmpfiles(outs[0], outs[1], names, shallow=False)
    assert not mismatch and not errors


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    runs = tmp_path_factory.mktemp("nights")
    for i, day in enumerate(NIGHTS):
        generate(runs / day, seats=3, passes=2, requests=30, concurrencies=(1, 4), date=day, seed=3 + 2 * i)
    return runs


@pytest.fixture(scope="module")
def clean(nights, tmp_path_factory):
    """A clean single-writer ingest of every night into a Parquet store."""
    store = tmp_path_factory.mktemp("clean") / "store"
    ingest([nights], f"parquet:{store}")
    return store


# --- embedded: ducklake:DIR -----------------------------------------------------------------------


def test_an_embedded_lake_store_holds_and_analyses_what_the_parquet_store_does(nights, clean, tmp_path):
    lake = tmp_path / "lake"
    report = ingest([nights / d for d in NIGHTS[:2]], f"ducklake:{lake}")
    assert report.runs_added and not report.refused
    report = ingest([nights], lake)  # afterwards plain DIR opens it (store.json says so)
    assert report.added and len(report.unchanged and [1]) == 1
    assert (lake / "catalog.sqlite").is_file() and any((lake / "data").rglob("*.parquet"))
    assert type(Store.open(lake)).__name__ == "LakeStore"
    assert_same_store(lake, clean)
    assert_same_analysis(lake, clean, tmp_path)
    assert check(Store.open(lake)) == []


def test_ingesting_the_same_files_again_commits_nothing(nights, tmp_path):
    lake = tmp_path / "lake"
    ingest([nights / NIGHTS[0]], f"ducklake:{lake}")
    version = Store.open(lake).current_version()
    catalog = (lake / "catalog.sqlite").read_bytes()
    again = ingest([nights / NIGHTS[0]], lake)
    assert not again.added and again.unchanged
    assert Store.open(lake).current_version() == version
    assert (lake / "catalog.sqlite").read_bytes() == catalog


def test_a_reader_keeps_its_snapshot_and_an_old_snapshot_can_be_read(nights, tmp_path):
    lake = tmp_path / "lake"
    ingest([nights / NIGHTS[0]], f"ducklake:{lake}")
    reader = Store.open(lake).snapshot()
    first = reader.version
    runs_before = len(read_tables(reader).runs)
    ingest([nights / NIGHTS[1]], lake)
    assert len(read_tables(reader).runs) == runs_before  # the pinned snapshot
    now = Store.open(lake)
    assert len(read_tables(now).runs) > runs_before
    assert len(read_tables(now.at(first)).runs) == runs_before  # time travel
    assert now.dates() == list(NIGHTS[:2]) and now.at(first).dates() == [NIGHTS[0]]


@pytest.mark.slow
def test_analyse_and_build_as_of_a_snapshot_or_a_day(nights, tmp_path):
    """`--as-of SNAPSHOT` gives what the store held then, after later ingests: the tables of a
    build equal those of a store that never saw the later nights."""
    lake, old = tmp_path / "lake", tmp_path / "old"
    ingest([nights / NIGHTS[0]], f"ducklake:{lake}")
    ingest([nights / NIGHTS[0]], f"parquet:{old}")
    then = Store.open(lake).current_version()
    ingest([nights / NIGHTS[1]], lake)
    built = _cli("build", "--store", lake, "--as-of", then, "--out", tmp_path / "b", "--format", "html", "--quiet")
    assert built.returncode == 0, built.stderr
    want = _cli("build", "--store", old, "--out", tmp_path / "w", "--format", "html", "--quiet")
    assert want.returncode == 0, want.stderr
    names = sorted(p.name for p in (tmp_path / "w" / "tables").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b" / "tables").iterdir())
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "b" / "tables", tmp_path / "w" / "tables", names, shallow=False)
    assert not mismatch and not errors
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert Store.open(lake).at(today).version == Store.open(lake).current_version()
    for bad, code in (("99999", 2), ("yesterday", 2)):
        r = _cli("analyse", "--store", lake, "--as-of", bad, "--out", tmp_path / "x")
        assert r.returncode == code and "Traceback" not in r.stderr, r.stderr
    r = _cli("analyse", "--store", old, "--as-of", "1", "--out", tmp_path / "x")
    assert r.returncode == 2 and "keeps no snapshots" in r.stderr, r.stderr


def test_a_new_store_is_a_lake_store_and_a_parquet_store_is_asked_for_by_name(nights, tmp_path):
    """A new `--store DIR` is DuckLake's (the default since issue 44); `parquet:DIR` makes the
    Parquet store of before, refuses a DuckLake folder, and migrates to a plain new DIR."""
    ingest([nights / NIGHTS[0]], tmp_path / "new")
    assert (tmp_path / "new" / "catalog.sqlite").is_file() and Store.open(tmp_path / "new").lake
    ingest([nights / NIGHTS[0]], f"parquet:{tmp_path / 'old'}")
    assert (tmp_path / "old" / "files.parquet").is_file() and not getattr(Store.open(tmp_path / "old"), "lake", False)
    with pytest.raises(StoreError, match="not the Parquet store"):
        Store.open(f"parquet:{tmp_path / 'new'}")
    done = _cli("store", "migrate", "--store", tmp_path / "old", "--to", tmp_path / "moved")
    assert done.returncode == 0 and "checked equal" in done.stderr, done.stderr
    assert Store.open(tmp_path / "moved").content_key() == Store.open(tmp_path / "new").content_key()


def test_an_embedded_store_moved_to_another_folder_reads_and_grows_there(nights, tmp_path):
    """The catalog keeps the absolute data path it was made at; a store folder moved (a backup
    restored, another disk) still reads its own data and writes new nights under its new folder."""
    ingest([nights / NIGHTS[0]], tmp_path / "a")
    shutil.move(tmp_path / "a", tmp_path / "b")
    ingest([nights / NIGHTS[1]], tmp_path / "b")
    ingest([nights / NIGHTS[0], nights / NIGHTS[1]], tmp_path / "clean")
    assert not (tmp_path / "a").exists()
    got = read_tables(Store.open(tmp_path / "b"), with_requests=True)
    want = read_tables(Store.open(tmp_path / "clean"), with_requests=True)
    for name in ("runs", "measurements", "requests"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(want, name), check_exact=True)
    assert len(got.runs) and check(Store.open(tmp_path / "b")) == []


def test_a_bulk_ingest_commits_each_chunk(nights, clean, tmp_path):
    """Files read a chunk at a time are committed a chunk at a time (a year at once held 6.3 GB
    in one transaction): one snapshot a chunk, and the store equals a clean ingest."""
    lake = tmp_path / "lake"
    ingest([nights / NIGHTS[0]], lake)
    before = Store.open(lake).current_version()
    report = ingest([nights / d for d in NIGHTS[1:]], lake, chunk_bytes=1)
    assert len(report.batches) > len(NIGHTS) - 1  # each night's folder gives its files, a chunk each
    assert Store.open(lake).current_version() == before + len(report.batches)
    assert_same_store(lake, clean)


def test_a_parquet_store_migrates_into_a_lake_store_equal(nights, tmp_path):
    """`store migrate --store OLD --to ducklake:NEW` copies every version, superseded ones
    included, in one transaction, and the two stores read the same."""
    old, new = tmp_path / "old", tmp_path / "new"
    ingest([nights / NIGHTS[0]], f"parquet:{old}")
    ingest([nights], f"parquet:{old}")
    done = _cli("store", "migrate", "--store", old, "--to", f"ducklake:{new}")
    assert done.returncode == 0 and "checked equal" in done.stderr, done.stderr
    assert_same_store(new, old)
    assert Store.open(new).content_key() == Store.open(old).content_key()
    again = _cli("store", "migrate", "--store", old, "--to", f"ducklake:{new}")
    assert again.returncode == 2 and "not empty" in again.stderr, again.stderr


def test_several_ingest_processes_at_once_on_an_embedded_store(nights, clean, tmp_path):
    """Four processes, overlapping nights, one SQLite catalog: each commit is one transaction,
    a conflicting one is retried, and every run is there once."""
    lake = tmp_path / "lake"
    ingest([nights / NIGHTS[0]], f"ducklake:{lake}")
    procs = _ingest_at_once(nights, str(lake))
    assert_same_store(lake, clean)
    # a writer whose commit lost to another's leaves the data files it wrote, as a killed one
    # does: in no commit, never read (the store equals the clean one above); `store check` lists
    # them as leftovers and nothing else
    assert {p.kind for p in check(Store.open(lake))} <= {"leftover"}, procs


def test_a_killed_ingest_leaves_the_store_as_before_or_after(nights, clean, tmp_path):
    lake = tmp_path / "lake"
    ingest([nights / NIGHTS[0]], f"ducklake:{lake}")
    before = _state(lake)["in_use"]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmd = [sys.executable, "-m", "benchreport", "ingest", str(nights), "--store", str(lake), "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3.0)  # starting Python and reading the first night's files
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    after = _state(lake)["in_use"]
    assert after in (before, _state(clean)["in_use"])
    problems = check(Store.open(lake))
    assert all(p.kind == "leftover" for p in problems)  # data files no commit lists: never read
    ingest([nights], lake)
    assert_same_store(lake, clean)


def test_the_documented_query_reads_a_lake_store_with_no_benchreport_code(nights, clean, tmp_path):
    """docs/store.md's DuckLake SQL, run as printed (the extensions loaded from their packages'
    files), counts exactly the request records benchreport reads."""
    import re

    import duckdb

    from benchreport.store.lake import extension_path

    lake = tmp_path / "lake"
    ingest([nights / NIGHTS[0]], f"ducklake:{lake}")
    ingest([nights], lake)  # a second batch, so a join on the wrong batch would double rows
    text = (ROOT / "docs" / "store.md").read_text()
    sql = re.findall(r"```sql\n(.*?)```", text, re.S)[1]
    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions = false")
    for name in ("ducklake", "sqlite_scanner"):
        con.execute(f"LOAD '{extension_path(name)}'")
    *setup, query = [q for q in sql.replace("STORE", str(lake)).split(";") if q.strip()]
    for q in setup:
        con.execute(q)
    got = con.sql(query).df()
    want = read_tables(Store.open(clean), with_requests=True).requests
    assert int(got["requests"].sum()) == len(want) > 0
    assert got.groupby("seat")["requests"].sum().to_dict() == want.groupby("seat").size().to_dict()


def test_a_stray_copy_is_never_read_and_a_damaged_data_file_is_one_line(nights, clean, tmp_path):
    """Readers read the files the catalog lists, never a glob; a listed file that is gone is
    `damaged store` on one line (exit 4), and `store check` names it (what the engine cannot
    guarantee: the bytes under its catalog)."""
    lake = tmp_path / "lake"
    ingest([nights], f"ducklake:{lake}")
    listed = sorted((lake / "data" / "main" / "requests").rglob("*.parquet"))
    shutil.copy(listed[0], listed[0].with_name("copy (1).parquet"))  # a sync tool's copy
    assert_same_store(lake, clean)
    problems = check(Store.open(lake))
    assert [p.kind for p in problems] == ["leftover"]  # never read; named
    listed[0].with_name("copy (1).parquet").unlink()
    listed[-1].unlink()
    analysed = _cli("analyse", "--store", lake, "--out", tmp_path / "out")
    assert analysed.returncode == 4, analysed.stderr
    damaged = [line for line in analysed.stderr.splitlines() if "damaged store" in line]
    assert len(damaged) == 1 and "Traceback" not in analysed.stderr and listed[-1].name in damaged[0]
    checked = _cli("store", "check", "--store", lake)
    assert checked.returncode == 4 and f"{listed[-1]}: missing" in checked.stdout, checked.stdout


def test_a_read_only_embedded_store_analyses(nights, clean, tmp_path):
    """On a read-only mount (a mount namespace) the SQLite catalog is read from a private copy;
    ingest is refused with one line (exit 2)."""
    unshare = shutil.which("unshare")
    lake = tmp_path / "lake"
    ingest([nights], f"ducklake:{lake}")
    script = f'mount --bind "{lake}" "{lake}" && mount -o remount,bind,ro "{lake}" && exec "$@"'
    if not unshare or subprocess.run([unshare, "-m", "sh", "-c", script, "sh", "true"]).returncode:
        pytest.skip("no mount namespace here to make a read-only store")
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "PYTHONHASHSEED": "0"}
    py = [sys.executable, "-m", "benchreport"]

    def read_only(*args):
        cmd = [unshare, "-m", "sh", "-c", script, "sh", *py, *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)

    analysed = read_only("analyse", "--store", lake, "--out", tmp_path / "ro", "--quiet")
    assert analysed.returncode == 0, analysed.stderr
    want = _cli("analyse", "--store", clean, "--out", tmp_path / "rw", "--quiet")
    assert want.returncode == 0
    assert (tmp_path / "ro" / "tables" / "cells.csv").read_bytes() == (
        tmp_path / "rw" / "tables" / "cells.csv"
    ).read_bytes()
    refused = read_only("ingest", nights, "--store", lake)
    assert refused.returncode == 2 and "read-only" in refused.stderr and "Traceback" not in refused.stderr


def test_a_full_disk_leaves_the_store_as_it_was(nights, tmp_path):
    """An ingest that fills the disk (a 400 KB tmpfs in a mount namespace) is rolled back: one
    line, exit 4, not retried, and the store still holds exactly the night before."""
    unshare = shutil.which("unshare")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    py = f'"{sys.executable}" -m benchreport'
    script = (
        f'mount -t tmpfs -o size=400k tmpfs "{mnt}" || exit 99; '
        f'{py} ingest "{nights / NIGHTS[0]}" --store "ducklake:{mnt / "lake"}" --quiet || exit 98; '
        f'{py} ingest "{nights}" --store "{mnt / "lake"}" --quiet; echo "rc=$?"; '
        f'"{sys.executable}" -c "from benchreport.store import Store; '
        f"s = Store.open('{mnt / 'lake'}'); print('in_use', sorted(s.in_use()['path'].str[-40:]))\""
    )
    if not unshare:
        pytest.skip("no unshare here to make a small file system")
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run([unshare, "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=600)
    if done.returncode == 99:
        pytest.skip("no mount namespace here to make a small file system")
    assert "rc=4" in done.stdout, (done.stdout, done.stderr)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "was not committed, nothing was changed" in lines[0] and "full" in lines[0], lines
    first = Store.open(_fresh_copy(nights, tmp_path)).in_use()["path"].str[-40:]
    assert f"in_use {sorted(first)}" in done.stdout


def _fresh_copy(nights: Path, tmp_path: Path) -> Path:
    store = tmp_path / "first-night"
    ingest([nights / NIGHTS[0]], store)
    return store


def _ingest_at_once(nights: Path, location: str) -> list:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    cmds = [
        [
            sys.executable,
            "-m",
            "benchreport",
            "ingest",
            str(nights / NIGHTS[i]),
            str(nights / NIGHTS[(i + 1) % len(NIGHTS)]),
            "--store",
            location,
            "--quiet",
        ]
        for i in range(len(NIGHTS))
    ]
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for c in cmds]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(cmds), outs
    return outs


# --- a fleet: a real PostgreSQL server ------------------------------------------------------------


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for path in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(path)
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server of the Debian package on a free port and a temporary folder, as the
    `postgres` user when run as root (the server refuses root); skipped where there is none."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("no PostgreSQL server binaries (Debian package postgresql; `make system-deps`)")
    as_user: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="benchreport-pg-"))
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no `postgres` user to run the server as")
        os.chmod(folder, 0o755)
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    data = folder / "data"
    try:
        subprocess.run(
            [*as_user, initdb, "-D", data, "-A", "trust", "-U", "bench", "--no-sync"],
            check=True,
            capture_output=True,
        )
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [*as_user, pg_ctl, "-D", data, "-o", options, "-l", folder / "log", "-w", "start"],
            check=True,
            capture_output=True,
        )
        yield f"postgresql://bench@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, pg_ctl, "-D", data, "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_several_writers_at_once_through_postgresql(postgres, nights, clean, tmp_path):
    """Four ingest processes talking TCP to one PostgreSQL catalog at once, from an empty catalog:
    every run is there once, and `analyse` equals a clean single-writer ingest's."""
    shared = tmp_path / "shared-data"
    shared.mkdir()
    url = f"{postgres}?data_path={shared}"
    _ingest_at_once(nights, url)
    assert_same_store(url, clean)
    assert_same_analysis(url, clean, tmp_path)
    store = Store.open(url)
    assert check(store) == []
    again = _cli("ingest", nights, "--store", url)
    assert again.returncode == 0 and "0 file(s) added" in again.stderr, again.stderr
    built = _cli("build", "--store", postgres, "--out", tmp_path / "report", "--format", "html", "--quiet")
    assert built.returncode == 0 and (tmp_path / "report" / "report.html").is_file(), built.stderr


def test_reading_a_lake_store_keeps_no_copy_of_its_files_in_memory(nights, tmp_path):
    """Every Parquet file is read once per analysis: DuckDB's cache of the files it read (on by
    default, bounded only by its memory limit) held a year's files through a build, about 180 MB
    of a 50-seat year's peak. After reading every table, DuckDB holds none of them."""
    ingest([nights], str(tmp_path / "lake"))
    store = Store.open(tmp_path / "lake").snapshot()
    assert store.lake
    tables = read_tables(store, with_requests=True)
    assert len(tables.requests) and len(tables.measurements)
    con = store.connection()
    assert con.sql("SELECT current_setting('enable_external_file_cache')").fetchone()[0] is False
    cached = con.sql(
        "SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory() WHERE tag = 'EXTERNAL_FILE_CACHE'"
    ).fetchone()[0]
    assert cached == 0
