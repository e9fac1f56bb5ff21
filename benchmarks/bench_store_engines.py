"""The run store on three engines, one run: today's Parquet store, DuckLake (embedded SQLite catalog,
the `ducklake:DIR` store) and Apache Iceberg (PyIceberg, SQL catalog on SQLite) (issue 44).

On the same generated nights: ingest all but the last night, ingest the last (a new night),
ingest everything again (nothing new), read every table and every date's request records back,
and, for the two benchreport stores, `benchreport analyse --store` cold, after the new night and
with nothing changed. Iceberg is driven with PyIceberg directly (benchreport has no Iceberg
store): one append per table and night, since an Iceberg SQL catalog commits one table at a time.
Last, every date's per-pass request statistics of the DuckLake store by one SQL query, against
the Python route's group summaries (`sql_pass_figures`: time, and how many figures are
bit-identical).

    python benchmarks/bench_store_engines.py [--seats 3] [--nights 30] [--requests 60] [--work DIR]
        [--postgres postgresql://USER@HOST:PORT/DB]   (also DuckLake on a PostgreSQL catalog)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import generate  # noqa: E402

from benchreport.load import load  # noqa: E402
from benchreport.stats.requests import summarise  # noqa: E402
from benchreport.store import Store, StoreRequests, ingest, read_tables  # noqa: E402
from benchreport.tables import build_store_frames  # noqa: E402


def _timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return round(time.perf_counter() - t0, 3), out


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _analyse(location: str, out: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "benchreport", "analyse", "--store", location, "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    return {"s": round(time.perf_counter() - t0, 3), "peak_rss_mb_so_far": round(peak / 1024)}


def _read_all(location: str) -> int:
    store = Store.open(location).snapshot()
    tables = read_tables(store)
    requests = StoreRequests(store, tables.runs, cache=False)
    n = 0
    for day in store.dates():
        n += len(requests.requests_of(set(tables.runs.loc[tables.runs["date"].astype(str) == day, "run_id"])))
    return n


def bench_store(name: str, location: str, nights: list[Path], work: Path) -> dict:
    res = {"engine": name}
    res["ingest_first_s"], _ = _timed(ingest, nights[:-1], location)
    res["analyse_cold"] = _analyse(location, work / f"{name}-a1")
    res["ingest_new_night_s"], _ = _timed(ingest, nights[-1:], location)
    res["analyse_new_night"] = _analyse(location, work / f"{name}-a2")
    res["ingest_nothing_new_s"], _ = _timed(ingest, nights, location)
    res["analyse_nothing_changed"] = _analyse(location, work / f"{name}-a3")
    res["read_all_s"], res["requests_read"] = _timed(_read_all, location)
    root = Path(location.removeprefix("ducklake:").removeprefix("parquet:").split("data_path=")[-1])
    res["bytes"] = _size(root)
    return res


_SQL_PASS_FIGURES = """
WITH r AS (
  SELECT x.run_id, x.workload, coalesce(x.concurrency, -1) AS c,
         x.error IS NOT NULL OR coalesce(x.finish_reason IN ('error', 'cancelled', 'incomplete'), false) AS failed,
         x.ttft_ms, x.itl_ms, x.e2e_latency_ms,
         CASE WHEN x.output_tokens > 1 AND x.e2e_latency_ms > x.ttft_ms
              THEN (x.output_tokens - 1) / ((x.e2e_latency_ms - x.ttft_ms) / 1000.0) END AS decode_tok_s_per_stream
  FROM (SELECT * FROM {requests}) AS x SEMI JOIN use_pairs AS u ON x.file_sha = u.sha AND x.batch = u.b
)
SELECT run_id, workload, c, count(*) AS n_requests, count(*) FILTER (failed) AS n_failed, {figures}
FROM r GROUP BY ALL
"""


def sql_pass_figures(location: str) -> dict:
    """Every date's per-pass request statistics (mean, p50-p99 of each metric) by one query the
    engine runs over a DuckLake store's requests (DuckDB's own avg and quantile_cont), against
    the Python route's group summaries (benchreport.stats.requests.summarise, group by group over
    each date's rows in pandas): time and the largest difference. benchreport's own SQL route,
    bit-identical, is measured by benchmarks/bench_store_figures.py."""
    store = Store.open(location).snapshot()
    runs = read_tables(store).runs
    t0 = time.perf_counter()
    python = {g.key: summarise(g) for g in StoreRequests(store, runs, cache=False).groups()}
    t_python = time.perf_counter() - t0
    figures = []
    for m in ("ttft_ms", "itl_ms", "e2e_latency_ms", "decode_tok_s_per_stream"):
        only = f"FILTER (NOT failed AND isfinite({m}))"  # the successful requests' finite values
        figures.append(f"avg({m}) {only} AS {m}__mean")
        figures += [f"quantile_cont({m}, {q}) {only} AS {m}__p{round(q * 100)}" for q in (0.5, 0.9, 0.95, 0.99)]
    use = store.in_use()
    pairs = pa.table({"sha": use["sha256"].astype(str).tolist(), "b": use["batch"].astype(str).tolist()})
    con = store.connection()
    con.register("use_pairs", pairs)
    sql = _SQL_PASS_FIGURES.format(requests=store.table_sql("requests"), figures=", ".join(figures))
    t0 = time.perf_counter()
    rows = con.sql(sql).df()
    t_sql = time.perf_counter() - t0
    worst, exact, compared = 0.0, 0, 0
    for row in rows.itertuples(index=False):
        summary = python[(row.run_id, row.workload, int(row.c))]
        assert (summary.n_requests, summary.n_failed) == (row.n_requests, row.n_failed)
        for metric, (values, _, _) in summary.stats.items():
            for stat, want in values.items():
                got = getattr(row, f"{metric}__{stat}")
                compared += 1
                exact += got == want
                worst = max(worst, abs(got - want) / max(abs(want), 1e-300))
    return {
        "groups": len(rows),
        "python_route_s": round(t_python, 3),
        "sql_s": round(t_sql, 3),
        "figures_compared": compared,
        "bit_identical": exact,
        "largest_relative_difference": worst,
    }


def _iceberg_frames(night: Path) -> dict[str, pa.Table]:
    loaded = load([night], progress=False)
    tables, _, _ = build_store_frames(loaded)
    sha_of = {lr.run.run_id: lr.sha256 for lr in loaded.runs}
    day_of = dict(zip(tables.runs["run_id"], tables.runs["date"].astype(str)))
    out = {}
    for name in ("runs", "measurements", "requests"):
        df = getattr(tables, name)
        df = df.assign(
            file_sha=df["run_id"].map(sha_of), seq=np.arange(len(df), dtype=np.int64), day=df["run_id"].map(day_of)
        )
        t = pa.Table.from_pandas(df, preserve_index=False)
        cols = {}
        for n, c in zip(t.column_names, t.columns):
            if pa.types.is_null(c.type) or pa.types.is_dictionary(c.type):
                c = c.cast(pa.string() if pa.types.is_null(c.type) else c.type.value_type)
            if pa.types.is_timestamp(c.type):
                c = c.cast(pa.timestamp("us"))
            cols[n] = c
        out[name] = pa.table(cols)
    return out


def bench_iceberg(nights: list[Path], work: Path) -> dict:
    try:
        from pyiceberg.catalog.sql import SqlCatalog
        from pyiceberg.expressions import EqualTo
    except ImportError:
        return {"engine": "iceberg", "skipped": "pyiceberg is not installed (pip install 'pyiceberg[sql-sqlite]')"}
    root = work / "iceberg"
    root.mkdir()
    catalog = SqlCatalog("bench", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=f"file://{root / 'data'}")
    catalog.create_namespace("store")
    res = {"engine": "iceberg", "commits": 0}

    def append(batch: list[Path]) -> None:
        for night in batch:
            for name, t in _iceberg_frames(night).items():
                ident = f"store.{name}"
                if not catalog.table_exists(ident):
                    catalog.create_table(ident, schema=t.schema)
                table = catalog.load_table(ident)
                with table.update_schema() as update:
                    update.union_by_name(t.schema)
                table.append(t)
                res["commits"] += 2

    res["ingest_first_s"], _ = _timed(append, nights[:-1])
    res["ingest_new_night_s"], _ = _timed(append, nights[-1:])

    def read_all() -> int:
        n = 0
        requests = catalog.load_table("store.requests")
        for day in sorted({n.name for n in nights}):
            n += requests.scan(row_filter=EqualTo("day", day)).to_arrow().num_rows
        return n

    res["read_all_s"], res["requests_read"] = _timed(read_all)
    res["bytes"] = _size(root)
    return res


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=3)
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--requests", type=int, default=60)
    ap.add_argument("--work", type=Path, default=None, help="a new folder for the nights and stores")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument(
        "--postgres", default=None, metavar="URL", help="also a DuckLake store on this PostgreSQL database (empty)"
    )
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="benchreport-engines-"))
    runs = work / "runs"
    days = np.datetime64("2026-01-01") + np.arange(args.nights)
    nights = []
    for i, day in enumerate(days.astype(str)):
        generate(runs / day, seats=args.seats, passes=3, requests=args.requests, concurrencies=(1, 4), date=day, seed=i)
        nights.append(runs / day)
    res = {"seats": args.seats, "nights": args.nights, "requests_per_cell": args.requests, "engines": []}
    res["engines"].append(bench_store("parquet", f"parquet:{work / 'parquet'}", nights, work))
    res["engines"].append(bench_store("ducklake", f"ducklake:{work / 'ducklake'}", nights, work))
    if args.postgres:
        (work / "pg-data").mkdir()
        url = f"{args.postgres}?data_path={work / 'pg-data'}"
        res["engines"].append(bench_store("ducklake-postgresql", url, nights, work))
    res["engines"].append(bench_iceberg(nights, work))
    res["sql_pass_figures"] = sql_pass_figures(f"ducklake:{work / 'ducklake'}")
    same = subprocess.run(["diff", "-rq", str(work / "parquet-a2" / "tables"), str(work / "ducklake-a2" / "tables")])
    res["analyses_equal"] = same.returncode == 0
    print(json.dumps(res, indent=2))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return res


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
