"""The per-pass request figures by one SQL query (benchreport.store.figures, issue 44) are
`summarise`'s bit for bit: every float equal (NaN where NaN), the same groups in the same order.

Two levels: request rows built to be awkward (failures of every kind, NULL, NaN and infinite
metric values, output_tokens <= 1, e2e <= ttft, start_ms missing or not finite in some records,
ties in start_ms, 1 to 300 requests a group) given to the query directly and to `FrameSource`;
and run files of that kind ingested into a Parquet store and a DuckLake store, whose
`StoreRequests.summaries` (by SQL) must equal the summaries of the same files loaded from JSON.
"""

from __future__ import annotations

import filecmp
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from benchreport.load import load
from benchreport.stats.common import sequential_sum
from benchreport.stats.requests import FrameSource, GroupSummary, column_metric, summarise
from benchreport.store import Store, StoreRequests, ingest, read_tables
from benchreport.store import read as store_read
from benchreport.store.figures import READ_COLUMNS, date_batches, summaries_of_rows
from benchreport.tables import build_tables, frame_from_arrow

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import generate  # noqa: E402

FINISH = ["stop", "length", "error", "cancelled", "incomplete", None]


def _same(a, b) -> bool:
    """Bit-identical floats (NaN equals NaN; 0.0 and -0.0 differ), equal anything else."""
    if isinstance(a, float) or isinstance(b, float):
        if not (isinstance(a, float) and isinstance(b, float)):
            return False
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    return a == b


def assert_same_summaries(got: list[GroupSummary], want: list[GroupSummary]) -> None:
    assert [g.key for g in got] == [w.key for w in want]
    for g, w in zip(got, want):
        head = (g.seat, g.date, g.pass_, g.n_requests, g.n_failed)
        assert head == (w.seat, w.date, w.pass_, w.n_requests, w.n_failed), g.key
        assert list(g.stats) == list(w.stats), g.key
        for metric, (values, n, lag1) in w.stats.items():
            got_values, got_n, got_lag1 = g.stats[metric]
            assert list(got_values) == list(values) and got_n == n, (g.key, metric)
            for stat, v in values.items():
                assert _same(got_values[stat], v), (g.key, metric, stat, got_values[stat], v)
            assert _same(got_lag1, lag1), (g.key, metric, "lag1", got_lag1, lag1)


def test_the_left_to_right_sum_is_duckdbs_list_sum():
    """`sequential_sum` against DuckDB's `list_sum` itself (the premise of the SQL mean and lag-1):
    random lists of 1 to 3,000 values of mixed sign and scale, and signed zeros."""
    rng = np.random.default_rng(44)
    lists = [[-0.0], [-0.0, -0.0], [0.0, -0.0], [-0.0, 5.0, -5.0]]
    for _ in range(200):
        n = int(rng.integers(1, 3001))
        lists.append((rng.lognormal(3, 2, n) * rng.choice([-1.0, 1.0], n)).tolist())
    con = duckdb.connect()
    got = [v for (v,) in con.execute("SELECT list_sum(x) FROM unnest(?::DOUBLE[][]) AS t(x)", [lists]).fetchall()]
    want = [sequential_sum(x) for x in lists]
    assert [(v, math.copysign(1.0, v)) for v in got] == [(v, math.copysign(1.0, v)) for v in want]
    assert sum(sequential_sum(x) != float(np.sum(x)) for x in lists) > 0  # numpy's pairwise sum is another


# --- request rows built to be awkward -------------------------------------------------------------


def _awkward(rng, x: np.ndarray, share: float) -> list:
    """Values with some NULL, NaN, +inf, -inf, 0.0 and -0.0 among them."""
    out: list = x.tolist()
    for i in np.flatnonzero(rng.random(len(x)) < share):
        out[i] = [None, math.nan, math.inf, -math.inf, 0.0, -0.0][rng.integers(6)]
    return out


def _group_rows(rng, n: int) -> dict:
    """One group's columns: ties (rounded values), failures of every kind, awkward values."""
    ttft = np.round(rng.lognormal(4, 0.7, n), int(rng.integers(0, 3)))
    if rng.random() < 0.15:  # signed zeros: figures that are 0.0, never -0.0
        ttft = rng.choice([0.0, -0.0, 1.0], n, p=[0.45, 0.45, 0.1])
    e2e = ttft + np.round(rng.lognormal(7, 0.5, n), 1)
    le = rng.random(n) < 0.1  # e2e at or below ttft: no decode rate
    e2e = np.where(le, ttft - rng.integers(0, 2, n), e2e)
    tok = rng.integers(0, 400, n).astype(object)
    tok[rng.random(n) < 0.1] = 1
    tok[rng.random(n) < 0.05] = None
    start = np.round(np.cumsum(rng.exponential(20, n)), 0)  # whole ms: ties
    start = rng.permutation(start) if rng.random() < 0.3 else start
    start = start.tolist()
    kind = rng.integers(5)
    if kind == 0 and n:  # one record without start_ms: stored order
        start[rng.integers(n)] = None
    elif kind == 1 and n:
        start[rng.integers(n)] = [math.nan, math.inf][rng.integers(2)]
    elif kind == 2:
        start = [0.0] * n  # all tied
    failed = rng.random(n) < rng.choice([0.0, 0.05, 0.3, 1.0], p=[0.3, 0.4, 0.25, 0.05])
    return {
        "output_tokens": tok.tolist(),
        "ttft_ms": _awkward(rng, ttft, 0.04),
        "e2e_latency_ms": _awkward(rng, e2e, 0.04),
        "itl_ms": _awkward(rng, np.round(rng.lognormal(2.5, 0.3, n), 3), 0.08) if rng.random() < 0.8 else [None] * n,
        "finish_reason": [FINISH[i] for i in rng.integers(0, len(FINISH), n)],
        "error": ["boom" if f else None for f in failed],
        "start_ms": start,
    }


def awkward_rows(seed: int, groups: int) -> pa.Table:
    """Request rows of `groups` groups over two dates, in stored order (run, then seq)."""
    rng = np.random.default_rng(seed)
    cols: dict[str, list] = {c: [] for c in READ_COLUMNS}
    seq = 0
    for k in range(groups):
        n = int(rng.choice([1, 2, 3, 4, int(rng.integers(5, 60)), int(rng.integers(60, 301)), 300]))
        day = ["2026-11-01", "2026-11-02"][k % 2]
        run = f"seat-{k % 3}-{day}-p{k // 6}"
        workload, conc = ["decode", "prefill", "mixed"][k % 3], [1, 4, None][(k // 3) % 3]
        g = _group_rows(rng, n)
        cols["day"] += [day] * n
        cols["run_id"] += [run] * n
        cols["seat"] += [f"seat-{k % 3}"] * n
        cols["date"] += [day] * n
        cols["pass"] += [k // 6] * n
        cols["workload"] += [workload] * n
        cols["concurrency"] += [conc] * n
        cols["seq"] += list(range(seq, seq + n))
        seq += n
        for c, v in g.items():
            cols[c] += v
    types = {"pass": pa.int64(), "concurrency": pa.int64(), "output_tokens": pa.int64(), "seq": pa.int64()}
    floats = ("ttft_ms", "e2e_latency_ms", "itl_ms", "start_ms")
    table = pa.table(
        {c: pa.array(v, pa.float64() if c in floats else types.get(c, pa.string())) for c, v in cols.items()}
    )
    return table.sort_by(
        [
            ("seat", "ascending"),
            ("date", "ascending"),
            ("pass", "ascending"),
            ("run_id", "ascending"),
            ("seq", "ascending"),
        ]
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_sql_figures_of_awkward_rows_are_summarise_bit_for_bit(seed):
    rows = awkward_rows(seed, groups=60)
    assert pa.compute.sum(pa.compute.is_nan(rows["ttft_ms"])).as_py() > 0  # the awkward cases are there
    con = duckdb.connect()
    con.register("awkward", rows)
    days = ["2026-11-01", "2026-11-02"]
    got = summaries_of_rows(con, "awkward", days)
    seen_nan = seen_lag1 = 0
    for day in days:
        mine = rows.filter(pa.compute.equal(rows["day"], day))
        want = list(FrameSource(frame_from_arrow("requests", mine)).summaries())
        assert len(want) == 30
        assert_same_summaries(got[day], want)
        seen_nan += sum(math.isnan(r) for g in want for (_, _, r) in g.stats.values())
        seen_lag1 += sum(not math.isnan(r) for g in want for (_, _, r) in g.stats.values())
    assert seen_nan and seen_lag1  # both kinds of lag-1 compared


def test_a_changed_definition_is_seen():
    """The comparison can fail: numpy's pairwise mean differs from the SQL mean on some group."""
    rows = awkward_rows(4, groups=40)
    con = duckdb.connect()
    con.register("awkward", rows)
    got = summaries_of_rows(con, "awkward", ["2026-11-01"])["2026-11-01"]
    mine = rows.filter(pa.compute.equal(rows["day"], "2026-11-01"))
    source = FrameSource(frame_from_arrow("requests", mine))
    differs = 0
    for g in got:
        for metric, (values, _, _) in g.stats.items():
            pairwise = float(np.sort(column_metric(source.group(g.key), metric)).mean())
            differs += pairwise != values["mean"]
    assert differs > 0


# --- run files into both stores -------------------------------------------------------------------

NIGHTS = ("2026-11-01", "2026-11-02")


def _roughen(path: Path, rng) -> None:
    """A generated run file with failures, missing figures, output_tokens <= 1, e2e = ttft,
    start_ms missing in some runs and tied in others (what a loader accepts of those)."""
    doc = json.loads(path.read_text())
    runs_kind = rng.integers(3)
    for r in doc["requests"]:
        u = rng.random()
        if u < 0.05:
            r["error"] = "timeout"
        elif u < 0.12:
            r["finish_reason"] = ["error", "cancelled", "incomplete"][rng.integers(3)]
        elif u < 0.18:
            r.pop(["ttft_ms", "e2e_latency_ms", "itl_ms", "output_tokens"][rng.integers(4)], None)
        elif u < 0.22:
            r["output_tokens"] = int(rng.integers(0, 2))
        elif u < 0.26 and r.get("ttft_ms") is not None:
            r["e2e_latency_ms"] = r["ttft_ms"]
        if runs_kind == 0:
            r["start_ms"] = float(rng.integers(0, 5))  # ties
        elif runs_kind == 1:
            r["start_ms"] = float(rng.integers(0, 10_000))
    if runs_kind == 1 and doc["requests"]:
        doc["requests"][int(rng.integers(len(doc["requests"])))].pop("start_ms", None)
    path.write_text(json.dumps(doc))


@pytest.fixture(scope="module")
def rough(tmp_path_factory):
    runs = tmp_path_factory.mktemp("rough")
    rng = np.random.default_rng(44)
    for i, day in enumerate(NIGHTS):
        for path in generate(runs / day, seats=3, passes=2, requests=60, concurrencies=(1, 4), date=day, seed=5 + i):
            _roughen(path, rng)
    return runs


def _json_summaries(runs: Path) -> dict[str, list[GroupSummary]]:
    tables = build_tables(load([runs / d for d in NIGHTS], progress=False))
    requests = tables.requests
    return {d: list(FrameSource(requests[requests["date"].astype(str) == d]).summaries()) for d in NIGHTS}


def test_dates_are_cut_into_batches_of_a_bounded_number_of_runs():
    runs_on = {"a": 100, "b": 100, "c": 100, "d": 300, "e": 0, "f": 50}
    assert date_batches(list("abcdef"), runs_on, budget=256) == [["a", "b"], ["c"], ["d"], ["e", "f"]]
    assert date_batches([], runs_on) == []
    assert [d for b in date_batches(list("fedcba"), runs_on, budget=1) for d in b] == list("fedcba")


@pytest.mark.parametrize("engine", ["parquet", "ducklake"])
def test_a_stores_sql_summaries_equal_the_json_files_summaries(rough, tmp_path, engine, monkeypatch):
    if engine == "ducklake":
        pytest.importorskip("duckdb_extension_ducklake", reason="the DuckLake store needs the `lake` extra")
    location = f"ducklake:{tmp_path / 'lake'}" if engine == "ducklake" else f"parquet:{tmp_path / 'store'}"
    report = ingest([rough], location)
    assert report.ok and report.runs_added == 12
    store = Store.open(location)
    source = StoreRequests(store, read_tables(store).runs, cache_root=tmp_path / "cache")
    want = _json_summaries(rough)
    got = list(source.summaries())
    assert source.computed == list(NIGHTS)
    assert_same_summaries(got, want[NIGHTS[0]] + want[NIGHTS[1]])
    assert sum(g.n_failed for g in got) > 0
    again = StoreRequests(store, read_tables(store).runs, cache_root=tmp_path / "cache")
    assert_same_summaries(list(again.summaries()), got)  # from the cache, the same
    assert again.computed == []
    python_route = [summarise(g) for g in source.groups()]  # the store's rows through pandas
    assert_same_summaries(got, python_route)
    # a query a date (the batches a bigger store is cut into) gives the same
    monkeypatch.setattr(store_read, "date_batches", lambda days, runs_on: date_batches(days, runs_on, budget=1))
    one_by_one = StoreRequests(store, read_tables(store).runs, cache=False, kept=False)
    assert_same_summaries(list(one_by_one.summaries()), got)
    assert one_by_one.computed == list(NIGHTS) and one_by_one.by_query


def _analyse(*args) -> None:
    cmd = [sys.executable, "-m", "benchreport", "analyse", *map(str, args), "--quiet"]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, timeout=600)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("engine", ["parquet", "ducklake"])
def test_analyse_of_a_store_writes_the_bytes_analyse_of_the_files_writes(rough, tmp_path, engine):
    if engine == "ducklake":
        pytest.importorskip("duckdb_extension_ducklake", reason="the DuckLake store needs the `lake` extra")
    location = f"ducklake:{tmp_path / 'lake'}" if engine == "ducklake" else f"parquet:{tmp_path / 'store'}"
    ingest([rough], location)
    _analyse("--store", location, "--out", tmp_path / "from-store")
    _analyse(rough, "--out", tmp_path / "from-files")
    names = sorted(
        p.relative_to(tmp_path / "from-files").as_posix()
        for p in (tmp_path / "from-files").rglob("*")
        if p.is_file() and p.name != ".benchreport-output"  # records when it was written
    )
    assert "tables/passes.csv" in names and "tables/cells.csv" in names
    have = sorted(
        p.relative_to(tmp_path / "from-store").as_posix()
        for p in (tmp_path / "from-store").rglob("*")
        if p.is_file() and p.name != ".benchreport-output"
    )
    assert have == names
    _, mismatch, errors = filecmp.cmpfiles(tmp_path / "from-store", tmp_path / "from-files", names, shallow=False)
    assert mismatch == [] and errors == []


# --- the figures kept in the store (pass_figures), written by the ingest -----------------------------


def _location(tmp_path: Path, engine: str, name: str = "store") -> str:
    if engine == "ducklake":
        pytest.importorskip("duckdb_extension_ducklake", reason="the DuckLake store needs the `lake` extra")
    return f"{engine}:{tmp_path / name}"


def _kept_rows(location: str) -> list[dict]:
    """Every pass_figures row the store holds, read past the reader (all versions, all batches)."""
    store = Store.open(location)
    if getattr(store, "lake", False):
        if not store.has("pass_figures"):
            return []
        return store.connection().sql("SELECT * FROM lake.pass_figures").to_arrow_table().to_pylist()
    files = sorted(str(p) for p in store.root.glob("pass_figures/day=*/*.parquet"))
    if not files:
        return []
    return duckdb.sql(f"SELECT * FROM read_parquet({files!r}, hive_partitioning = true)").to_arrow_table().to_pylist()


def test_the_kept_figures_are_summarise_bit_for_bit(rough, tmp_path, store_engine):
    location = _location(tmp_path, store_engine)
    ingest([rough], location)
    rows = _kept_rows(location)
    assert sorted({r["file_sha"] for r in rows if r["workload"] is None}) == Store.open(location).current_shas()
    assert sum(r["workload"] is None for r in rows) == 12  # a mark a run
    assert all(r["summary_version"] == store_read.SUMMARY_VERSION for r in rows)
    store = Store.open(location)
    kept = StoreRequests(store, read_tables(store).runs, cache=False)
    got = list(kept.summaries())
    assert kept.by_query == []  # every figure read from the table
    want = _json_summaries(rough)
    assert_same_summaries(got, want[NIGHTS[0]] + want[NIGHTS[1]])
    queried = StoreRequests(store, read_tables(store).runs, cache=False, kept=False)
    assert_same_summaries(list(queried.summaries()), got)
    assert sorted(set(queried.by_query)) == store.current_shas()


def test_a_store_without_kept_figures_computes_them_as_before(rough, tmp_path, store_engine, monkeypatch):
    """A store ingested before the figures were kept (night 1 here), and kept figures of another
    summary version: those versions' figures are computed from their request rows, the same."""
    import importlib

    from benchreport.store import figures

    ingest_module = importlib.import_module("benchreport.store.ingest")

    location = _location(tmp_path, store_engine)
    with monkeypatch.context() as m:
        m.setattr(ingest_module, "batch_figures", lambda *args: [])
        ingest([rough / NIGHTS[0]], location)
    assert _kept_rows(location) == []
    ingest([rough / NIGHTS[1]], location)
    store = Store.open(location).snapshot()
    runs = read_tables(store).runs
    night_one = set(runs.loc[runs["date"].astype(str) == NIGHTS[0], "source_sha256"].astype(str))
    source = StoreRequests(store, runs, cache=False)
    got = list(source.summaries())
    assert sorted(source.by_query) == sorted(night_one)  # night 2's read from the table
    want = _json_summaries(rough)
    assert_same_summaries(got, want[NIGHTS[0]] + want[NIGHTS[1]])
    monkeypatch.setattr(figures, "SUMMARY_VERSION", figures.SUMMARY_VERSION + 1)
    bumped = StoreRequests(store, runs, cache=False)
    assert_same_summaries(list(bumped.summaries()), got)
    assert sorted(bumped.by_query) == store.current_shas()


def test_as_of_an_older_snapshot_reads_that_snapshots_figures(rough, tmp_path):
    """A run file changed after it was ingested: the store now reads the new version's figures,
    and as of the snapshot before, the old version's (DuckLake time travel)."""
    location = _location(tmp_path, "ducklake")
    runs = tmp_path / "runs"
    shutil.copytree(rough / NIGHTS[0], runs / NIGHTS[0])
    ingest([runs], location)
    before = Store.open(location).current_version()
    old = _json_summaries_of(runs)
    changed = sorted(runs.rglob("*.json"))[0]
    doc = json.loads(changed.read_text())
    for r in doc["requests"]:  # a slower run: every latency 1.5 times
        for k in ("ttft_ms", "e2e_latency_ms", "itl_ms"):
            if isinstance(r.get(k), (int, float)):
                r[k] = r[k] * 1.5
    changed.write_text(json.dumps(doc))
    assert ingest([runs], location).superseded
    new = _json_summaries_of(runs)
    assert [s.stats for s in new] != [s.stats for s in old]
    for store, want in ((Store.open(location).snapshot(), new), (Store.open(location).at(before), old)):
        source = StoreRequests(store, read_tables(store).runs, cache=False)
        assert_same_summaries(list(source.summaries()), want)
        assert source.by_query == []


def _json_summaries_of(runs: Path) -> list[GroupSummary]:
    return list(FrameSource(build_tables(load([runs], progress=False)).requests).summaries())


def test_a_failed_ingest_leaves_no_figures_without_their_runs(rough, tmp_path, store_engine, monkeypatch):
    """An ingest that fails after the chunk's figures were written and before its files table
    (killed, a conflict it gave up on): no figure of it is read, and the next ingest stores it."""
    location = _location(tmp_path, store_engine)
    store_class = type(Store.open(location, create=True))

    def fail(self, df):
        raise RuntimeError("killed")

    with monkeypatch.context() as m:
        m.setattr(store_class, "write_files", fail)
        with pytest.raises(RuntimeError, match="killed"):
            ingest([rough], location)
    store = Store.open(location)
    assert store.current_shas() == []
    if store_engine == "ducklake":
        assert _kept_rows(location) == []  # rolled back with the chunk
    ingest([rough], location)
    store = Store.open(location)
    marked = {r["batch"] if store_engine == "ducklake" else None for r in _kept_rows(location)}
    if store_engine == "ducklake":
        assert marked == set(store.in_use()["batch"].astype(str))
    else:  # the killed batch's parts were swept: only the listed batch's are there
        assert {p.name for p in store.root.glob("pass_figures/day=*/*.parquet")} == {
            f"part-{b}.parquet" for b in set(store.in_use()["batch"].astype(str))
        }
    source = StoreRequests(store, read_tables(store).runs, cache=False)
    want = _json_summaries(rough)
    assert_same_summaries(list(source.summaries()), want[NIGHTS[0]] + want[NIGHTS[1]])
    assert source.by_query == []


def test_migrate_and_repair_keep_the_figures(rough, tmp_path):
    """`store migrate` copies the kept figures; `store repair` of a damaged batch writes them again."""
    from benchreport.store.check import check, repair
    from benchreport.store.lake import migrate

    pytest.importorskip("duckdb_extension_ducklake", reason="the DuckLake store needs the `lake` extra")
    old = f"parquet:{tmp_path / 'old'}"
    ingest([rough], old)
    want = _json_summaries(rough)
    migrate(Store.open(old), f"ducklake:{tmp_path / 'new'}")
    for location in (old, f"ducklake:{tmp_path / 'new'}"):
        store = Store.open(location)
        source = StoreRequests(store, read_tables(store).runs, cache=False)
        assert_same_summaries(list(source.summaries()), want[NIGHTS[0]] + want[NIGHTS[1]])
        assert source.by_query == []
    part = next((tmp_path / "old" / "pass_figures" / f"day={NIGHTS[1]}").glob("part-*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    assert any(p.name.endswith(part.name) for p in check(Store.open(old)))
    report = repair(Store.open(old))
    assert report.problems_after == [] and report.lost == []
    store = Store.open(old)
    source = StoreRequests(store, read_tables(store).runs, cache=False)
    assert_same_summaries(list(source.summaries()), want[NIGHTS[0]] + want[NIGHTS[1]])
    assert source.by_query == []
