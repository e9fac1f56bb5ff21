"""The run store: an archive of run files as Hive-partitioned Parquet, read with DuckDB.

    STORE/
      store.json                        format benchreport.store/1 (refused otherwise)
      files.parquet                     every file seen: path, sha256, size, mtime, status,
                                        reason, run_ids, current (the version in use)
      <table>/day=YYYY-MM-DD/part-<batch>.parquet
                                        one part per ingest batch and date, for the tables
                                        runs, measurements, requests, exams, exam_items,
                                        events, seat_runs, component_runs; every row carries
                                        `file_sha` (the version it came from) and `seq` (its
                                        order in the run)

`benchreport ingest RUNS --store STORE` adds what it has not seen: files are known by
SHA-256 (and, to avoid re-reading a year of files every night, by path, size and
modification time first); a changed file under the same path is a new version that
supersedes the old one, and `files.parquet` says which version is current. Re-ingesting
the same files changes nothing. The layout is plain Parquet with Hive partitions, so
Spark, Trino or DuckDB read it as it is (docs/store.md has the queries).

Analysis never loads the archive's request records at once: `read_tables` gives every
table but requests, and `StoreRequests` hands the statistics one date's request records
at a time (benchreport.stats.requests).
"""

from __future__ import annotations

import importlib

from .layout import STORE_FORMAT, Store, StoreError
from .ingest import IngestReport, ingest
from . import lake  # noqa: F401 - registers the DuckLake store (`--store ducklake:DIR`, `postgresql://`)

__all__ = ["STORE_FORMAT", "Store", "StoreError", "IngestReport", "ingest", "read_tables", "StoreRequests"]


def __getattr__(name: str):
    """`read_tables` and `StoreRequests`, imported when first named (PEP 562): reading a store's
    runs brings the statistics (SciPy), which a build that finds its report up to date never
    needs (a fleet's year: 1 of its 2.6 s)."""
    if name in ("read_tables", "StoreRequests"):
        return getattr(importlib.import_module(".read", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
