"""Every date's group summaries of a run store, cold: the Python route against the SQL route
(issue 44, "history at the speed of SQL"), on a Parquet store and a DuckLake store.

A generated archive (benchmarks/generate_archive.py: SEATS seats, NIGHTS nights, 5 passes of
REQUESTS requests at 4 concurrencies) is ingested into both stores; then, on each, without the
summary cache:

- python: each date's request rows read into pandas and `summarise` run group by group (the
  route `StoreRequests.summaries` took before the figures were computed by SQL);
- sql: `StoreRequests.summaries()`, every date by one query (benchreport.store.figures).

Reported: CPU seconds of this process (DuckDB runs on one thread, in this process) and wall
seconds of each, and whether the two give the same summaries bit for bit.

    python benchmarks/bench_store_figures.py [--seats 10] [--nights 30] [--requests 200]
        [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_archive import generate_archive  # noqa: E402

from benchreport.stats.requests import summarise  # noqa: E402
from benchreport.store import Store, StoreRequests, ingest, read_tables  # noqa: E402


def _timed(fn) -> tuple[float, float, object]:
    """(CPU seconds, wall seconds, result) of fn()."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return round(time.process_time() - c0, 2), round(time.perf_counter() - t0, 2), out


def _flat(summaries) -> list:
    """A summary list as plain values, NaN as None (to compare bit for bit with ==)."""

    def plain(x):
        return None if isinstance(x, float) and math.isnan(x) else x

    return [
        (s.key, s.seat, s.date, s.pass_, s.n_requests, s.n_failed)
        + tuple(
            (m, n, plain(r), tuple((k, plain(v)) for k, v in values.items())) for m, (values, n, r) in s.stats.items()
        )
        for s in summaries
    ]


def bench(location: str) -> dict:
    """Cold summaries of every date of one store by both routes."""
    store = Store.open(location).snapshot()
    runs = read_tables(store).runs
    python_cpu, python_s, python = _timed(
        lambda: [summarise(g) for g in StoreRequests(store, runs, cache=False).groups()]
    )
    sql_cpu, sql_s, sql = _timed(lambda: list(StoreRequests(store, runs, cache=False).summaries()))
    return {
        "groups": len(sql),
        "python_cpu_s": python_cpu,
        "python_wall_s": python_s,
        "sql_cpu_s": sql_cpu,
        "sql_wall_s": sql_s,
        "cpu_ratio": round(python_cpu / sql_cpu, 2) if sql_cpu else None,
        "bit_identical": _flat(python) == _flat(sql),
    }


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=10)
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--work", type=Path, default=None, help="a new folder for the archive and stores")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="benchreport-figures-"))
    generate_archive(work / "runs", seats=args.seats, n_nights=args.nights, requests=args.requests)
    res = {"seats": args.seats, "nights": args.nights, "requests_per_pass": args.requests, "engines": {}}
    for name, location in (("parquet", f"parquet:{work / 'parquet'}"), ("ducklake", f"ducklake:{work / 'ducklake'}")):
        t0 = time.perf_counter()
        ingest([work / "runs"], location)
        res["engines"][name] = {"ingest_s": round(time.perf_counter() - t0, 1), **bench(location)}
        print(name, json.dumps(res["engines"][name]), flush=True)
    print(json.dumps(res, indent=2))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return res


if __name__ == "__main__":
    main()
