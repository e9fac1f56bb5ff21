"""Every date's group summaries of a run store, cold: the Python route, the SQL route and the
figures the ingest kept (issue 44, "history at the speed of SQL"), on a Parquet store and a
DuckLake store; and what keeping them costs the ingest.

A generated archive (benchmarks/generate_archive.py: SEATS seats, NIGHTS nights, 5 passes of
REQUESTS requests at 4 concurrencies) is ingested into both stores; then, on each, without the
summary cache:

- python: each date's request rows read into pandas and `summarise` run group by group (the
  route `StoreRequests.summaries` took before the figures were computed by SQL);
- sql: `StoreRequests(..., kept=False).summaries()`, every date by one query over its request
  rows (benchreport.store.figures), the route of before the figures were kept;
- kept: `StoreRequests.summaries()`, every date from the `pass_figures` rows the ingest wrote.

The archive is ingested into each engine twice: as it is (the figures computed and kept) and
with the figures' step left out (`batch_figures` replaced by nothing), the ingest's extra cost.

Reported: CPU seconds of this process and its children (DuckDB runs on one thread, in this
process) and wall seconds of each, and whether the routes give the same summaries bit for bit.

    python benchmarks/bench_store_figures.py [--seats 10] [--nights 30] [--requests 200]
        [--work DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_archive import generate_archive  # noqa: E402

from benchreport.stats.requests import summarise  # noqa: E402
from benchreport.store import Store, StoreRequests, ingest, read_tables  # noqa: E402


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended (a loader's workers)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def _timed(fn) -> tuple[float, float, object]:
    """(CPU seconds, wall seconds, result) of fn()."""
    c0, t0 = _cpu(), time.perf_counter()
    out = fn()
    return round(_cpu() - c0, 2), round(time.perf_counter() - t0, 2), out


def _ingest(runs: Path, location: str, *, keep_figures: bool) -> tuple[float, float]:
    """(CPU s, wall s) of ingesting the archive; without `keep_figures`, the figures' step left out."""
    module = importlib.import_module("benchreport.store.ingest")
    kept = module.batch_figures
    if not keep_figures:
        module.batch_figures = lambda *args: []
    try:
        cpu, wall, _ = _timed(lambda: ingest([runs], location))
    finally:
        module.batch_figures = kept
    return cpu, wall


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
    sql_cpu, sql_s, sql = _timed(lambda: list(StoreRequests(store, runs, cache=False, kept=False).summaries()))
    from_table = StoreRequests(store, runs, cache=False)
    kept_cpu, kept_s, kept = _timed(lambda: list(from_table.summaries()))
    return {
        "groups": len(sql),
        "python_cpu_s": python_cpu,
        "python_wall_s": python_s,
        "sql_cpu_s": sql_cpu,
        "sql_wall_s": sql_s,
        "cpu_ratio": round(python_cpu / sql_cpu, 2) if sql_cpu else None,
        "kept_cpu_s": kept_cpu,
        "kept_wall_s": kept_s,
        "kept_versions_computed": len(set(from_table.by_query)),
        "bit_identical": _flat(python) == _flat(sql) == _flat(kept),
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
    for name in ("parquet", "ducklake"):
        location = f"{name}:{work / name}"
        bare_cpu, bare_s = _ingest(work / "runs", f"{name}:{work / (name + '-bare')}", keep_figures=False)
        ingest_cpu, ingest_s = _ingest(work / "runs", location, keep_figures=True)
        res["engines"][name] = {
            "ingest_cpu_s": ingest_cpu,
            "ingest_wall_s": ingest_s,
            "ingest_without_figures_cpu_s": bare_cpu,
            "ingest_without_figures_wall_s": bare_s,
            **bench(location),
        }
        print(name, json.dumps(res["engines"][name]), flush=True)
    print(json.dumps(res, indent=2))
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return res


if __name__ == "__main__":
    main()
