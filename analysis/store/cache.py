"""The run store's cache of each date's cells (benchreport.stats.day_cache), in STORE/.cache/cells/.

One entry per date: `DATE-TOKEN.passes.parquet` and `DATE-TOKEN.cells.parquet`, written
atomically (a killed build leaves no half-written entry); saving a date's new entry removes
its older ones. A cache entry that cannot be read is treated as missing and recomputed.
The cache holds nothing the store does not: deleting `.cache/` costs time, never data.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow.parquet as pq

from benchreport.stats.day_cache import (DayEntry, cells_from_arrow, cells_to_arrow, passes_from_arrow,
                                         passes_to_arrow)

__all__ = ["StoreDayCache"]


class StoreDayCache:
    """Day entries in a store's `.cache/cells/` (a benchreport.stats.day_cache.DayCache)."""

    def __init__(self, root: str | os.PathLike, cell_columns: list[str]):
        self.dir = Path(root) / ".cache" / "cells"
        self.cell_columns = cell_columns
        self.read: list[str] = []      # dates read from the cache
        self.written: list[str] = []   # dates computed and kept

    def _paths(self, day: str, token: str) -> tuple[Path, Path]:
        stem = f"{day}-{token[:32]}"
        return self.dir / f"{stem}.passes.parquet", self.dir / f"{stem}.cells.parquet"

    def load(self, day: str, token: str) -> DayEntry | None:
        p, c = self._paths(day, token)
        if not (p.is_file() and c.is_file()):
            return None
        try:
            entry = DayEntry(passes_from_arrow(pq.read_table(p)), cells_from_arrow(pq.read_table(c), self.cell_columns))
        except Exception:  # noqa: BLE001 - a damaged entry is recomputed, never trusted
            return None
        self.read.append(day)
        return entry

    def save(self, day: str, token: str, entry: DayEntry) -> None:
        p, c = self._paths(day, token)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            for path, table in ((p, passes_to_arrow(entry.passes)), (c, cells_to_arrow(entry.cells))):
                tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
                pq.write_table(table, tmp, compression="zstd")
                os.replace(tmp, path)
            for old in self.dir.glob(f"{day}-*.parquet"):
                if old not in (p, c):
                    old.unlink(missing_ok=True)
        except OSError:
            return  # a read-only store still analyses; it only does not get faster
        self.written.append(day)
