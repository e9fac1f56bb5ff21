"""Where a run store keeps what: its marker, the files table, one Parquet dataset per table."""
from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["STORE_FORMAT", "Store", "StoreError", "STORED_TABLES", "FILE_COLUMNS"]

STORE_FORMAT = "benchreport.store/1"
#: tables kept per date (requests are the bulk; the rest are small)
STORED_TABLES = ("runs", "measurements", "requests", "exams", "exam_items", "events", "seat_runs", "component_runs")
#: the files table: one row per file version seen
FILE_COLUMNS = ["path", "sha256", "size", "mtime_ns", "status", "reason", "run_ids", "current", "batch"]


class StoreError(Exception):
    """A store that cannot be used as asked (one line, names the store)."""


class Store:
    """A run store folder: its marker, files table and Parquet datasets."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    # --- the marker --------------------------------------------------------------------
    @classmethod
    def open(cls, root: str | os.PathLike, *, create: bool = False) -> "Store":
        """Open a store; with `create`, make it when the folder is missing or empty."""
        store = cls(root)
        marker = store.root / "store.json"
        if marker.is_file():
            try:
                fmt = json.loads(marker.read_text(encoding="utf-8")).get("format")
            except (OSError, ValueError, AttributeError) as exc:
                raise StoreError(f"{marker}: not a readable store marker ({exc})") from None
            if fmt != STORE_FORMAT:
                raise StoreError(f"{marker}: expected format {STORE_FORMAT!r}, got {fmt!r}")
            return store
        if not create:
            raise StoreError(f"{store.root}: not a run store (no store.json); create one with "
                             "`benchreport ingest RUNS --store DIR`")
        if store.root.exists() and any(store.root.iterdir()):
            raise StoreError(f"{store.root}: not empty and not a run store; choose an empty or new folder")
        store.root.mkdir(parents=True, exist_ok=True)
        _write_atomic(marker, json.dumps({"format": STORE_FORMAT}, indent=2) + "\n")
        return store

    # --- the files table -----------------------------------------------------------------
    @property
    def files_path(self) -> Path:
        return self.root / "files.parquet"

    def files(self) -> pd.DataFrame:
        """Every file version seen (FILE_COLUMNS); empty for a new store."""
        if not self.files_path.is_file():
            return pd.DataFrame({c: pd.Series(dtype="object") for c in FILE_COLUMNS})
        return pd.read_parquet(self.files_path)

    def write_files(self, df: pd.DataFrame) -> None:
        """Replace the files table (atomically: a killed ingest leaves the previous one)."""
        tmp = self.files_path.with_name(f".files.{uuid.uuid4().hex}.parquet")
        df = df[FILE_COLUMNS].sort_values(["path", "current", "sha256"], kind="stable").reset_index(drop=True)
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
        os.replace(tmp, self.files_path)

    def current_shas(self) -> list[str]:
        """The file versions in use (loaded, current), sorted."""
        f = self.files()
        if not len(f):
            return []
        use = f[(f["status"] == "loaded") & f["current"].astype(bool)]
        return sorted(set(use["sha256"].astype(str).tolist()))

    def content_key(self) -> str:
        """A digest of what the store holds now (the versions in use): equal stores, equal keys."""
        return hashlib.sha256("\n".join(self.current_shas()).encode()).hexdigest()

    # --- the datasets ----------------------------------------------------------------------
    def table_dir(self, table: str) -> Path:
        if table not in STORED_TABLES:
            raise ValueError(f"`table` must be one of {STORED_TABLES}; got {table!r}")
        return self.root / table

    def glob(self, table: str) -> str:
        """The DuckDB glob of a table's parts."""
        return str(self.table_dir(table) / "day=*" / "*.parquet")

    def has(self, table: str) -> bool:
        d = self.table_dir(table)
        return d.is_dir() and any(d.glob("day=*/*.parquet"))

    def dates(self) -> list[str]:
        """The dates the store holds runs of, sorted."""
        d = self.table_dir("runs")
        return sorted(p.name[4:] for p in d.glob("day=*")) if d.is_dir() else []

    def sweep_orphans(self) -> int:
        """Remove part files of batches the files table does not know (a killed ingest's);
        returns how many were removed."""
        f = self.files()
        known = set(f["batch"].dropna().astype(str)) if len(f) else set()
        gone = 0
        for table in STORED_TABLES:
            d = self.table_dir(table)
            if not d.is_dir():
                continue
            for part in d.glob("day=*/*"):
                name = part.name
                batch = name[5:-8] if name.startswith("part-") and name.endswith(".parquet") else None
                if name.endswith(".tmp") or (batch is not None and batch not in known):
                    part.unlink(missing_ok=True)
                    gone += 1
        return gone

    def write_part(self, table: str, date: str, frame: pd.DataFrame, batch: str) -> Path:
        """One part file of a table for one date (written to a temporary name, then renamed)."""
        folder = self.table_dir(table) / f"day={date}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"part-{batch}.parquet"
        tmp = folder / f".part-{batch}.{uuid.uuid4().hex}.tmp"
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp)
        os.replace(tmp, path)
        return path


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
