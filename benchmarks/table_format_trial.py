"""Which table format the run store builds on (issue 44, the trial): DuckLake or Apache Iceberg,
measured on our own tables.

It takes a Parquet run store (`benchreport ingest RUNS --store STORE`) and copies five of its
tables, run by run, into each format:

    runs        the store's `runs` rows                  (one row a run)
    requests    the store's `requests` rows              (the request records)
    passes      the store's `measurements` rows          (the figures a harness reported per pass)
    provenance  the store's files in use, one row a run  (path, sha256, size, manifests' digest)
    refusals    the store's refused files                (path, sha256, reason)

and measures, for DuckLake (DuckDB 1.5.5 with the `duckdb-extension-*` packages; a SQLite
catalog, and a PostgreSQL one with `--postgres URL`) and Iceberg (PyIceberg 0.12, SQL catalog on
SQLite):

- ingest: every night but the last, one transaction per run (all of a run's tables);
- a new night: the last night's ingest, then its pass-level figures (the mean and the p50, p90,
  p95 and p99 of each request metric per seat, date, pass and cell) by one SQL query in DuckDB;
- the full history: the same figures for every date by one query;
- as of a snapshot: the store as it was before the new night (row counts and figures);
- several writers at once: `--writers` processes (4) offering the same runs of a fresh catalog,
  each run one transaction guarded by an "is it there?" check; how many runs landed exactly once;
- an outside reader: a Python process that imports nothing but duckdb (no benchreport) and reads
  the store by SQL (DuckLake: `ATTACH 'ducklake:...'`; Iceberg: `iceberg_scan(metadata file)`).

The SQL figures are checked against our own pass values (`passes.csv` of `benchreport analyse`
on the same store, `--passes-csv`): the mean and p50 as `avg` and `quantile_cont` (Hyndman & Fan
definition 7, numpy's 'linear'), the tail quantiles p90, p95, p99 as benchreport's pass estimate,
Hyndman & Fan definition 8 (numpy's 'median_unbiased', benchreport.stats.common), which DuckDB
has no function for: the order statistics at the 0-based rank (n + 1/3) q - 2/3, interpolated,
over `list_sort(list(x))` (the macro `hf8`, `HF8_SQL`). DuckDB's own `quantile_cont` and `quantile_disc` for the
tails are reported too (how far definition 7 is from 8 on our passes), and which numpy method
each DuckDB function equals on random samples.

Extensions are loaded from the files the `duckdb-extension-*` packages install, with DuckDB's
autoinstall and autoload off and an empty extension directory (checked still empty afterwards),
so nothing is downloaded.

    python benchmarks/table_format_trial.py STORE --passes-csv ANALYSIS/tables/passes.csv
        [--work DIR] [--postgres postgresql://USER@HOST:PORT/DB] [--writers 4 (0: none)] [--writer-nights 3]
        [--formats ducklake,iceberg] [--nights N] [--per run|night] [--json OUT]

A year of nights is `--per night` (a night a transaction): a run a transaction is thousands of
Iceberg commits, each dearer than the last (docs/store.md, "Choosing a table format").

Needs (not part of benchreport's install): `pip install duckdb==1.5.5 duckdb-extension-ducklake
duckdb-extension-sqlite-scanner duckdb-extension-postgres-scanner duckdb-extension-iceberg
duckdb-extension-avro 'pyiceberg[sql-sqlite,pyarrow]'` (all 1.5.5, pyiceberg 0.12); without
them the trial says what is missing and exits 0 (skipped).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TABLES = ("runs", "requests", "passes", "provenance", "refusals")
STATS = ("mean", "p50", "p90", "p95", "p99")
TAIL_Q = {"p90": 0.9, "p95": 0.95, "p99": 0.99}
EXTENSIONS = ("ducklake", "sqlite_scanner", "postgres_scanner", "avro", "iceberg")
REQUIRED = ("duckdb", "pyiceberg", "sqlalchemy", *(f"duckdb_extension_{e}" for e in EXTENSIONS))

#: each table's columns from the Parquet store, per day (`{parts}`: the day's listed parts,
#: `{shas}`: the versions in use); cast so that every format gets the same plain types
SOURCE_SQL = {
    "runs": """SELECT run_id, seat, CAST(day AS DATE) AS day, pass, harness, harness_version, probe,
                      max_tokens, warmup_excluded, file_sha
               FROM read_parquet({parts}, hive_partitioning = true) WHERE file_sha IN {shas}""",
    "requests": """SELECT run_id, seat, CAST(day AS DATE) AS day, pass, workload, concurrency,
                          prompt_tokens, output_tokens, ttft_ms, e2e_latency_ms, itl_ms, finish_reason,
                          CAST(error AS VARCHAR) AS error, start_ms, file_sha, seq
                   FROM read_parquet({parts}, hive_partitioning = true) WHERE file_sha IN {shas}""",
    "passes": """SELECT run_id, seat, CAST(day AS DATE) AS day, pass, workload, concurrency, metric,
                        statistic, value, unit, file_sha
                 FROM read_parquet({parts}, hive_partitioning = true) WHERE file_sha IN {shas}""",
}

#: the pass-level figures of request records (`{requests}`: a FROM item, `{where}`: a filter),
#: as benchreport.stats.requests defines them: failed requests out, only finite values
FIGURES_SQL = """
WITH r AS (
  SELECT seat, day, pass, run_id, workload, coalesce(concurrency, -1) AS concurrency,
         error IS NOT NULL OR coalesce(finish_reason IN ('error', 'cancelled', 'incomplete'), false) AS failed,
         ttft_ms, itl_ms, e2e_latency_ms,
         CASE WHEN output_tokens > 1 AND e2e_latency_ms > ttft_ms
              THEN (output_tokens - 1) / ((e2e_latency_ms - ttft_ms) / 1000.0) END AS decode_tok_s_per_stream
  FROM {requests} WHERE {where}
), long AS (
  UNPIVOT r ON ttft_ms, itl_ms, e2e_latency_ms, decode_tok_s_per_stream INTO NAME metric VALUE x
), g AS (
  SELECT seat, day, pass, run_id, workload, concurrency, metric, count(*) AS n, avg(x) AS mean,
         quantile_cont(x, 0.5) AS p50,
         quantile_cont(x, 0.9) AS p90_cont, quantile_cont(x, 0.95) AS p95_cont, quantile_cont(x, 0.99) AS p99_cont,
         quantile_disc(x, 0.9) AS p90_disc, quantile_disc(x, 0.95) AS p95_disc, quantile_disc(x, 0.99) AS p99_disc,
         list_sort(list(x)) AS xs
  FROM long WHERE NOT failed AND isfinite(x) GROUP BY ALL
)
SELECT * EXCLUDE (xs), {hf8} FROM g
"""

#: Hyndman & Fan's definition 8 at probability q over a sorted list xs of n values, as two DuckDB
#: macros (benchreport.stats.common.median_unbiased_sorted, the same arithmetic in DOUBLE):
#: `hf8(xs, n, q)` interpolates the order statistics at the 0-based rank (n + 1/3) q + 1/3 - 1
HF8_SQL = """
CREATE OR REPLACE TEMP MACRO hf8_at(xs, n, v) AS
  xs[CAST(floor(v) AS BIGINT) + 1]
  + (xs[least(CAST(floor(v) AS BIGINT) + 2, n)] - xs[CAST(floor(v) AS BIGINT) + 1]) * (v - floor(v));
CREATE OR REPLACE TEMP MACRO hf8(xs, n, q) AS hf8_at(xs, n, least(greatest(
  (CAST(n AS DOUBLE) + 1.0::DOUBLE / 3.0::DOUBLE) * CAST(q AS DOUBLE) + 1.0::DOUBLE / 3.0::DOUBLE - 1.0::DOUBLE,
  0.0::DOUBLE), CAST(n AS DOUBLE) - 1.0::DOUBLE));
"""


def missing_packages() -> list[str]:
    """The trial's packages that are not installed (importable)."""
    return [name for name in REQUIRED if importlib.util.find_spec(name) is None]


def extension_file(name: str) -> Path:
    """The extension file a `duckdb-extension-NAME` package installs (built for its DuckDB)."""
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    found = sorted(Path(spec.submodule_search_locations[0]).glob("extensions/*/*.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"duckdb-extension-{name} holds no .duckdb_extension file")
    return found[-1]


def connect(extension_dir: Path, *, names=EXTENSIONS):
    """A DuckDB connection that never downloads: autoinstall and autoload off, an extension
    directory of its own, and each extension LOADed from its package's file."""
    import duckdb

    con = duckdb.connect(
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "extension_directory": str(extension_dir),
        }
    )
    for name in names:
        con.execute(f"LOAD '{extension_file(name)}'")
    return con


def _timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return round(time.perf_counter() - t0, 3), out


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


# --- the source: our Parquet store, night by night, run by run ---------------------------------
class Source:
    """Our Parquet store (its first `limit` dates, 0: all), read one date at a time: per date, a
    list of runs, each a dict of table name -> Arrow table (the run's rows of each of `TABLES`)."""

    def __init__(self, store_dir: Path, con, limit: int = 0):
        from benchreport.store import Store

        self.store, self.con = Store.open(store_dir).snapshot(), con
        self.days = self.store.dates()[: limit or None]
        files = self.store.files()
        self.refusals = _refusals_table(files[files["status"] == "refused"])

    def night(self, day: str) -> list[dict]:
        per_table = {}
        for table, source in (("runs", "runs"), ("requests", "requests"), ("passes", "measurements")):
            parts = self.store.part_files(source, day)
            paths = [p for p, _ in parts]
            shas = sorted({s for _, ss in parts for s in ss})
            sql = SOURCE_SQL[table].format(parts=_sql_list(paths), shas="(" + _sql_list(shas)[1:-1] + ")")
            per_table[table] = self.con.sql(sql).to_arrow_table()
        return _split_by_run(per_table, self.store.in_use())


def merge_units(units: list[dict]) -> dict:
    """Several runs as one unit (a night ingested in one transaction)."""
    import pyarrow as pa

    return {name: pa.concat_tables([u[name] for u in units]) for name in units[0]}


def _sql_list(items) -> str:
    return "[" + ", ".join("'" + str(x).replace("'", "''") + "'" for x in items) + "]"


def _split_by_run(per_table: dict, use) -> list[dict]:
    """One dict of tables per run (by the file version it came from), with its provenance row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    runs = per_table["runs"]
    by_sha = use.set_index(use["sha256"].astype(str))
    out = []
    for i in range(runs.num_rows):
        sha = runs["file_sha"][i].as_py()
        row = by_sha.loc[sha]
        unit = {t: per_table[t].filter(pc.equal(per_table[t]["file_sha"], sha)) for t in ("runs", "requests", "passes")}
        unit["provenance"] = pa.table(
            {
                "run_id": [runs["run_id"][i].as_py()],
                "day": runs["day"].slice(i, 1),
                "path": [str(row["path"])],
                "sha256": [sha],
                "size": pa.array([int(row["size"])], pa.int64()),
                "context": [str(row["context"] or "")],
            }
        )
        out.append(unit)
    return out


def _refusals_table(refused):
    import pyarrow as pa

    return pa.table(
        {
            "path": pa.array(refused["path"].astype(str).tolist(), pa.string()),
            "sha256": pa.array(refused["sha256"].astype(str).tolist(), pa.string()),
            "reason": pa.array(refused["reason"].astype(str).tolist(), pa.string()),
        }
    )


# --- the two formats ---------------------------------------------------------------------------
class DuckLake:
    """A DuckLake catalog (SQLite file or PostgreSQL) with its data as Parquet under `data`."""

    def __init__(self, con, catalog: str, data: Path):
        self.con = con
        data.mkdir(parents=True, exist_ok=True)
        con.execute(f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH '{data}/')")

    def create(self, unit: dict, refusals) -> None:
        """The five tables (and a one-row `head` every guarded ingest updates), the refusals."""
        self.con.execute("BEGIN")
        for name in TABLES:
            source = refusals if name == "refusals" else unit[name]
            self.con.register("t", source)
            self.con.execute(f"CREATE TABLE lake.{name} AS SELECT * FROM t LIMIT 0")
        self.con.execute("CREATE TABLE lake.head AS SELECT 0 AS ingests")
        self.con.register("t", refusals)
        self.con.execute("INSERT INTO lake.refusals BY NAME SELECT * FROM t")
        self.con.execute("COMMIT")

    def ingest_run(self, unit: dict, *, guard: bool = False) -> bool:
        """One run, all its tables, in one transaction; with `guard`, only when its file version
        is not there yet, and updating `head` so that two such ingests always conflict (two
        appends alone never do). Returns whether it wrote."""
        self.con.execute("BEGIN")
        try:
            if guard:
                sha = unit["provenance"]["sha256"][0].as_py()
                if self.con.execute("SELECT count(*) FROM lake.provenance WHERE sha256 = ?", [sha]).fetchall()[0][0]:
                    self.con.execute("ROLLBACK")
                    return False
                self.con.execute("UPDATE lake.head SET ingests = ingests + 1")
            for name in ("runs", "requests", "passes", "provenance"):
                self.con.register("t", unit[name])
                self.con.execute(f"INSERT INTO lake.{name} BY NAME SELECT * FROM t")
            self.con.execute("COMMIT")
        except Exception:
            try:  # a failed COMMIT has already rolled back
                self.con.execute("ROLLBACK")
            except Exception:
                pass
            raise
        return True

    def snapshot(self) -> int:
        return int(self.con.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchall()[0][0])

    def table(self, name: str, version: int | None = None) -> str:
        return f"lake.{name}" + (f" AT (VERSION => {int(version)})" if version is not None else "")

    def counts(self, version: int | None = None) -> dict:
        return {t: self.con.execute(f"SELECT count(*) FROM {self.table(t, version)}").fetchall()[0][0] for t in TABLES}

    def figures(self, day: str | None = None, version: int | None = None):
        """The figures by one query over the catalog's requests (of one day, as of a snapshot)."""
        where = f"day = DATE '{day}'" if day else "true"
        return pass_figures(self.con, self.table("requests", version), where)

    def run_counts(self) -> list[int]:
        return [r[0] for r in self.con.execute("SELECT count(*) FROM lake.runs GROUP BY run_id").fetchall()]

    def commits(self) -> int:
        return int(self.con.execute("SELECT count(*) FROM lake.snapshots()").fetchall()[0][0])


class Iceberg:
    """Apache Iceberg tables in a PyIceberg SQL catalog (SQLite), data as Parquet under the root."""

    def __init__(self, con, root: Path):
        from pyiceberg.catalog.sql import SqlCatalog

        root.mkdir(parents=True, exist_ok=True)
        self.con, self.root = con, root
        self.catalog = SqlCatalog("trial", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=f"file://{root / 'data'}")

    def create(self, unit: dict, refusals) -> None:
        self.catalog.create_namespace("store")
        for name in TABLES:
            source = refusals if name == "refusals" else unit[name]
            table = self.catalog.create_table(f"store.{name}", schema=source.schema)
            if name == "refusals" and source.num_rows:
                table.append(source)

    def ingest_run(self, unit: dict, *, guard: bool = False) -> bool:
        """One run: one commit per table (an Iceberg SQL catalog commits one table at a time),
        provenance last as the run's commit point; with `guard`, only when its version is not
        there yet (a check that cannot be atomic with the appends). A conflicting commit is
        retried on the table's new state."""
        from pyiceberg.exceptions import CommitFailedException
        from pyiceberg.expressions import EqualTo

        if guard:
            sha = unit["provenance"]["sha256"][0].as_py()
            prov = self.catalog.load_table("store.provenance")
            if prov.scan(row_filter=EqualTo("sha256", sha)).to_arrow().num_rows:
                return False
        for name in ("runs", "requests", "passes", "provenance"):
            for attempt in range(1000):
                try:
                    self.catalog.load_table(f"store.{name}").append(unit[name])
                    break
                except CommitFailedException:
                    time.sleep(0.005 * (1 + attempt % 10))
            else:
                raise RuntimeError(f"iceberg: store.{name}: no commit after 1000 attempts")
        return True

    def snapshot(self) -> dict:
        """Iceberg has no snapshot across tables: one snapshot id per table."""
        return {
            t: getattr(self.catalog.load_table(f"store.{t}").current_snapshot(), "snapshot_id", None) for t in TABLES
        }

    def arrow(self, name: str, where=None, version: dict | None = None):
        from pyiceberg.expressions import AlwaysTrue

        table = self.catalog.load_table(f"store.{name}")
        snap = (version or {}).get(name)
        return table.scan(row_filter=where or AlwaysTrue(), snapshot_id=snap).to_arrow()

    def counts(self, version: dict | None = None) -> dict:
        return {t: self.arrow(t, version=version).num_rows for t in TABLES}

    def figures(self, day: str | None = None, version: dict | None = None):
        """The figures through PyIceberg: a (filtered) scan to Arrow, the query in DuckDB."""
        from pyiceberg.expressions import EqualTo

        where = EqualTo("day", day) if day else None
        self.con.register("iceberg_requests", self.arrow("requests", where, version))
        return pass_figures(self.con, "iceberg_requests", "true")

    def run_counts(self) -> list[int]:
        return [int(c) for c in self.arrow("runs").to_pandas()["run_id"].value_counts()]

    def commits(self) -> int:
        return sum(len(self.catalog.load_table(f"store.{t}").snapshots()) for t in TABLES)

    def metadata_location(self, name: str) -> str:
        return self.catalog.load_table(f"store.{name}").metadata_location


def pass_figures(con, requests: str, where: str):
    """The pass-level figures of `FIGURES_SQL` as a pandas frame, one row per group and metric."""
    con.execute(HF8_SQL).fetchall()
    hf8 = ", ".join(f"hf8(xs, n, {q}) AS {stat}" for stat, q in TAIL_Q.items())
    return con.sql(FIGURES_SQL.format(requests=requests, where=where, hf8=hf8)).df()


# --- checks ------------------------------------------------------------------------------------
def compare_with_passes(figures, passes_csv: Path) -> dict:
    """The SQL figures against benchreport's own pass values (`passes.csv`, rows from requests):
    per column, how many were compared, how many are bit-identical, the largest relative difference.
    The tails as the pass estimate (definition 8, `hf8`) and as DuckDB's quantile_cont and
    quantile_disc."""
    import pandas as pd

    ours = pd.read_csv(passes_csv)
    ours = ours[ours["source"] == "requests"]
    key = ["run_id", "workload", "concurrency", "metric"]
    ours = ours.pivot_table(index=key, columns="statistic", values="value", aggfunc="first")
    ours.columns = [f"ours_{c}" for c in ours.columns]
    both = figures.merge(ours.reset_index(), on=key, how="inner")
    out = {"groups_sql": len(figures), "groups_matched": len(both)}
    columns = [(s, s) for s in STATS] + [(f"{s}_{k}", s) for s in TAIL_Q for k in ("cont", "disc")]
    for column, stat in columns:
        if f"ours_{stat}" not in both:
            continue
        pair = both[[column, f"ours_{stat}"]].dropna().to_numpy(dtype=float)
        if not len(pair):
            continue
        rel = np.abs(pair[:, 0] - pair[:, 1]) / np.abs(pair[:, 1])
        out[f"{column} vs ours {stat}"] = {
            "compared": len(pair),
            "bit_identical": int((pair[:, 0] == pair[:, 1]).sum()),
            "max_relative_difference": float(rel.max()),
        }
    return out


def quantile_correspondence(con, *, trials: int = 400, seed: int = 44) -> dict:
    """How far DuckDB's quantile_cont and quantile_disc are from each of numpy's quantile methods
    on random samples of 1 to 60 values at q = 0.5, 0.9, 0.95, 0.99: per function, the methods
    it equals to within 1e-12 (relative), with how many of the trials were bit-identical."""
    methods = ("linear", "lower", "higher", "nearest", "midpoint", "inverted_cdf", "closest_observation")
    methods += ("interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased", "normal_unbiased")
    rng = np.random.default_rng(seed)
    worst = {(fn, m): 0.0 for fn in ("quantile_cont", "quantile_disc") for m in methods}
    exact = dict.fromkeys(worst, 0)
    for _ in range(trials):
        x = rng.lognormal(3.0, 0.5, int(rng.integers(1, 61)))
        q = float(rng.choice([0.5, 0.9, 0.95, 0.99]))
        con.register("sample", {"x": x})
        got = con.execute(f"SELECT quantile_cont(x, {q}), quantile_disc(x, {q}) FROM sample").fetchall()[0]
        for fn, value in zip(("quantile_cont", "quantile_disc"), got):
            for m in methods:
                want = float(np.quantile(x, q, method=m))
                worst[fn, m] = max(worst[fn, m], abs(value - want) / abs(want))
                exact[fn, m] += value == want
    out: dict = {"quantile_cont": {}, "quantile_disc": {}}
    for (fn, m), rel in worst.items():
        if rel < 1e-12:
            out[fn][m] = {"max_relative_difference": rel, "bit_identical": f"{exact[fn, m]}/{trials}"}
    return out


OUTSIDE_DUCKLAKE = """
import duckdb, json, sys
con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
con.execute("SET enable_progress_bar = false")
for f in sys.argv[2:]:
    con.execute(f"LOAD '{f}'")
con.execute(f"ATTACH 'ducklake:{sys.argv[1]}' AS lake (READ_ONLY)")
rows = con.sql("SELECT seat, day, concurrency, median(ttft_ms) AS ttft_p50_ms, count(*) AS requests "
               "FROM lake.requests GROUP BY ALL ORDER BY ALL").fetchall()
print(json.dumps({"rows": len(rows), "requests": sum(r[-1] for r in rows), "benchreport": "benchreport" in sys.modules}))
"""

OUTSIDE_ICEBERG = """
import duckdb, json, sys
con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
con.execute("SET enable_progress_bar = false")
for f in sys.argv[2:]:
    con.execute(f"LOAD '{f}'")
con.execute(f"ATTACH '{sys.argv[1]}' AS cat (TYPE sqlite, READ_ONLY)")
meta = con.execute("SELECT metadata_location FROM cat.iceberg_tables "
                   "WHERE table_namespace = 'store' AND table_name = 'requests'").fetchall()[0][0]
rows = con.sql(f"SELECT seat, day, concurrency, median(ttft_ms) AS ttft_p50_ms, count(*) AS requests "
               f"FROM iceberg_scan('{meta}') GROUP BY ALL ORDER BY ALL").fetchall()
print(json.dumps({"rows": len(rows), "requests": sum(r[-1] for r in rows), "benchreport": "benchreport" in sys.modules}))
"""


def outside_reader(code: str, location: str, extensions: list[str]) -> dict:
    """Run `code` in a new Python that imports only duckdb: time and what it read."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code, location, *[str(extension_file(e)) for e in extensions]],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return {"s": round(time.perf_counter() - t0, 3), **json.loads(done.stdout.strip().splitlines()[-1])}


# --- the trial ---------------------------------------------------------------------------------
def open_target(spec: tuple, extension_dir: Path):
    """A format from its spec: ("ducklake", CATALOG, DATA) or ("iceberg", ROOT), with a DuckDB
    connection of its own that loads the packaged extensions."""
    con = connect(extension_dir)
    if spec[0] == "ducklake":
        return DuckLake(con, spec[1], Path(spec[2]))
    return Iceberg(con, Path(spec[1]))


def _ingest_nights(target, source: Source, days: list[str], per: str) -> tuple[float, int, int]:
    """Ingest these dates, a run (or a night) a transaction: seconds spent in the format (not in
    reading our store), runs and transactions."""
    seconds, runs, transactions = 0.0, 0, 0
    for day in days:
        units = source.night(day)
        batches = units if per == "run" else [merge_units(units)]
        t0 = time.perf_counter()
        for unit in batches:
            target.ingest_run(unit)
        seconds += time.perf_counter() - t0
        runs, transactions = runs + len(units), transactions + len(batches)
    return round(seconds, 3), runs, transactions


def trial_format(spec: tuple, source: Source, extension_dir: Path, per: str = "run") -> tuple[dict, object]:
    """Ingest every night but the last (a run, or a night, a transaction), then the last; the new
    night's figures, the full history's, the store as of the snapshot before the new night."""
    target = open_target(spec, extension_dir)
    target.create(source.night(source.days[0])[0], source.refusals)
    res = {"format": spec[0], "transaction": f"one per {per}"}
    res["ingest_first_s"], res["runs_first"], n = _ingest_nights(target, source, source.days[:-1], per)
    res["ingest_per_transaction_ms"] = round(1000 * res["ingest_first_s"] / max(n, 1), 1)
    before, counts_before = target.snapshot(), target.counts()
    res["ingest_new_night_s"], res["runs_new_night"], _ = _ingest_nights(target, source, source.days[-1:], per)
    res["new_night_figures_s"], new_figures = _timed(target.figures, source.days[-1])
    res["new_night_groups"] = len(new_figures)
    res["full_history_figures_s"], figures = _timed(target.figures)
    res["full_history_groups"] = len(figures)
    res["as_of_counts_s"], counts_then = _timed(target.counts, before)
    res["as_of_counts_equal_before_new_night"] = counts_then == counts_before
    res["as_of_figures_s"], then = _timed(target.figures, None, before)
    res["as_of_figures_groups"] = len(then)
    res["as_of_figures_equal"] = len(then) == len(figures) - len(new_figures)
    res["counts"] = target.counts()
    res["commits"] = target.commits()
    root = Path(spec[2] if spec[0] == "ducklake" else spec[1])
    catalog = Path(spec[1].split(":", 1)[1]) if spec[0] == "ducklake" and spec[1].startswith("sqlite:") else None
    res["bytes"] = _size(root) + (catalog.stat().st_size if catalog else 0)
    target.con.close()
    return res, figures


def _writer(spec: tuple, units: list, extension_dir: Path, guard: bool) -> dict:
    """One writer process: each run one transaction, retried on a conflict."""
    target = open_target(spec, extension_dir)
    wrote, retries, errors = 0, 0, {}
    for unit in units:
        for _ in range(2000):
            try:
                wrote += target.ingest_run(unit, guard=guard)
                break
            except Exception as exc:  # a conflict or a busy catalog: counted, retried
                retries += 1
                kind = f"{type(exc).__name__}: {' '.join(str(exc).split())[:240]}"
                errors[kind] = errors.get(kind, 0) + 1
                time.sleep(0.01)
    return {"wrote": wrote, "retries": retries, "errors": errors}


def concurrent_writers(spec: tuple, units: list, refusals, writers: int, extension_dir: Path, *, guard=True) -> dict:
    """`writers` processes at once on a fresh catalog, each offering every run (in a rotated
    order): how many runs landed exactly once, twice or more, or not at all."""
    target = open_target(spec, extension_dir)
    target.create(units[0], refusals)
    target.con.close()
    step = max(len(units) // writers, 1)
    orders = [units[i * step :] + units[: i * step] for i in range(writers)]
    ctx = multiprocessing.get_context("spawn")
    t0 = time.perf_counter()
    with ctx.Pool(writers) as pool:
        done = pool.starmap(_writer, [(spec, order, extension_dir, guard) for order in orders])
    wall = round(time.perf_counter() - t0, 3)
    target = open_target(spec, extension_dir)
    counts = target.run_counts()
    res = {
        "writers": writers,
        "guarded": guard,
        "runs_offered": len(units),
        "wall_s": wall,
        "landed_once": sum(c == 1 for c in counts),
        "landed_more_than_once": sum(c > 1 for c in counts),
        "missing": len(units) - len(counts),
        "request_rows": target.counts()["requests"],
        "request_rows_expected": sum(u["requests"].num_rows for u in units),
        "commits": target.commits(),
        "retries": sum(d["retries"] for d in done),
        "errors": _merge_errors(done),
    }
    target.con.close()
    return res


def _merge_errors(done: list[dict]) -> dict:
    out: dict = {}
    for d in done:
        for kind, n in d["errors"].items():
            out[kind] = out.get(kind, 0) + n
    return out


def postgres_database(url: str, name: str) -> str:
    """A new database `name` on the server of `url` (psql, from the Debian package postgresql):
    the URL of that database."""
    from urllib.parse import urlsplit, urlunsplit

    subprocess.run(["psql", url, "-q", "-c", f"DROP DATABASE IF EXISTS {name}"], check=True, capture_output=True)
    subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def specs(work: Path, formats: list[str], postgres: str | None, tag: str) -> list[tuple]:
    """The formats to try, each on a fresh catalog under `work` (`tag` keeps runs apart)."""
    out = []
    if "ducklake" in formats:
        out.append(
            ("ducklake", f"sqlite:{work / tag / 'ducklake' / 'catalog.sqlite'}", str(work / tag / "ducklake" / "data"))
        )
        (work / tag / "ducklake").mkdir(parents=True, exist_ok=True)
        if postgres:
            db = postgres_database(postgres, f"trial_{work.name}_{tag}".replace("-", "_").lower())
            out.append(("ducklake", f"postgres:{db}", str(work / tag / "ducklake-pg" / "data")))
    if "iceberg" in formats:
        out.append(("iceberg", str(work / tag / "iceberg")))
    return out


def label(spec: tuple) -> str:
    return spec[0] if spec[0] == "iceberg" else f"ducklake-{spec[1].split(':', 1)[0]}"


def run_trial(args, work: Path, extension_dir: Path) -> dict:
    """Every measurement of the module docstring, as one dict."""
    con = connect(extension_dir)
    res: dict = {"store": args.store.name, "quantile_correspondence": quantile_correspondence(con)}
    source = Source(args.store, con, args.nights)
    refusals = source.refusals
    res["nights"], res["refusals"] = len(source.days), refusals.num_rows
    res["formats"], figures = {}, {}
    for spec in specs(work, args.formats, args.postgres, "trial"):
        print(f"trial: {label(spec)} ...", file=sys.stderr)
        res["formats"][label(spec)], figures[label(spec)] = trial_format(spec, source, extension_dir, args.per)
    if args.passes_csv and not args.passes_csv.is_file():
        res["figures_vs_passes_csv"] = f"{args.passes_csv} is not a file"
    elif args.passes_csv:
        res["figures_vs_passes_csv"] = {name: compare_with_passes(f, args.passes_csv) for name, f in figures.items()}
    res["writers"] = {}
    units = [u for day in source.days[: args.writer_nights] for u in source.night(day)] if args.writers else []
    for spec in specs(work, args.formats, args.postgres, "writers") if args.writers else []:
        print(f"writers: {label(spec)} ...", file=sys.stderr)
        res["writers"][label(spec)] = concurrent_writers(spec, units, refusals, args.writers, extension_dir)
    if "ducklake" in args.formats and args.writers:
        spec = specs(work, ["ducklake"], None, "unguarded")[0]
        res["writers"]["ducklake-sqlite, no guard"] = concurrent_writers(
            spec, units, refusals, args.writers, extension_dir, guard=False
        )
    res["outside_readers"] = outside_readers(work, args)
    res["extension_directory_files_after"] = sorted(str(p.relative_to(extension_dir)) for p in extension_dir.rglob("*"))
    return res


def outside_readers(work: Path, args) -> dict:
    """The trial's stores read by a Python that imports only duckdb."""
    out = {}
    if "ducklake" in args.formats:
        location = f"sqlite:{work / 'trial' / 'ducklake' / 'catalog.sqlite'}"
        out["ducklake-sqlite"] = outside_reader(OUTSIDE_DUCKLAKE, location, ["ducklake", "sqlite_scanner"])
        if args.postgres:
            db = f"trial_{work.name}_trial".replace("-", "_").lower()
            location = "postgres:" + args.postgres.rsplit("/", 1)[0] + "/" + db
            out["ducklake-postgres"] = outside_reader(OUTSIDE_DUCKLAKE, location, ["ducklake", "postgres_scanner"])
    if "iceberg" in args.formats:
        catalog = str(work / "trial" / "iceberg" / "catalog.db")
        out["iceberg"] = outside_reader(OUTSIDE_ICEBERG, catalog, ["sqlite_scanner", "avro", "iceberg"])
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", type=Path, help="a Parquet run store (benchreport ingest RUNS --store STORE)")
    ap.add_argument(
        "--passes-csv", type=Path, default=None, help="tables/passes.csv of `benchreport analyse --store STORE`"
    )
    ap.add_argument(
        "--work", type=Path, default=None, help="a new folder for the trial's stores (default: a temporary one)"
    )
    ap.add_argument("--postgres", default=None, metavar="URL", help="also DuckLake on this PostgreSQL server")
    ap.add_argument("--formats", default="ducklake,iceberg", type=lambda s: s.split(","))
    ap.add_argument("--nights", type=int, default=0, help="only the store's first N nights (0: all)")
    ap.add_argument("--per", choices=("run", "night"), default="run", help="one transaction per run or per night")
    ap.add_argument("--writers", type=int, default=4, help="writer processes at once (0: no writers' test)")
    ap.add_argument("--writer-nights", type=int, default=3, help="the nights the concurrent writers offer")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    missing = missing_packages()
    if missing:
        print(f"table_format_trial: skipped, not installed: {', '.join(missing)} (see this script's docstring)")
        return 0
    work = args.work or Path(tempfile.mkdtemp(prefix="benchreport-trial-"))
    extension_dir = work / "duckdb-extensions"  # stays empty: nothing is installed or downloaded
    extension_dir.mkdir(parents=True, exist_ok=True)
    res = run_trial(args, work, extension_dir)
    text = json.dumps(res, indent=2, default=str)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
