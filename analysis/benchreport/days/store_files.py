"""The run store's cache of each date's cells (benchreport.days.entries), in STORE/.cache/cells/.

One entry per date: `DATE-TOKEN.passes.arrow` and `DATE-TOKEN.cells.arrow` (Arrow IPC with
zstd: a year of entries reads in a fraction of the time its Parquet took), written
atomically (a killed build leaves no half-written entry); saving a date's new entry removes
its older ones. A cache entry that cannot be read is treated as missing and recomputed.
The cache holds nothing the store does not: deleting `.cache/` costs time, never data.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather

from benchreport.stats.history import LevelSeries

from .entries import INDEX_VERSION, DayEntry
from .scan import DayFacts

__all__ = ["StoreDayCache", "StoreHistoryCache", "StoreCsvFragments"]

#: a date as it may appear in a cache file's name (dates come from run files: never a path)
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_TOKEN = re.compile(r"[0-9a-f]{32,64}")


def _nameable(day: str, token: str) -> bool:
    return bool(_DAY.fullmatch(str(day)) and _TOKEN.fullmatch(str(token)))


def _atomic(path: Path, write) -> None:
    """`write(tmp)` beside `path`, then one rename: a killed build leaves no half-written entry."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    write(tmp)
    os.replace(tmp, path)


class StoreDayCache:
    """Day entries in a store's `.cache/cells/` (a benchreport.days.entries.DayCache)."""

    def __init__(self, root: str | os.PathLike):
        self.dir = Path(root) / ".cache" / "cells"
        self.read: list[str] = []  # dates read from the cache
        self._seen: set[str] = set()
        self.written: list[str] = []  # dates computed and kept

    def _paths(self, day: str, token: str) -> tuple[Path, Path]:
        stem = f"{day}-{token[:32]}"
        return self.dir / f"{stem}.passes.arrow", self.dir / f"{stem}.cells.arrow"

    def has(self, day: str, token: str) -> bool:
        if not _nameable(day, token):
            return False
        p, c = self._paths(day, token)
        return p.is_file() and c.is_file()

    def stamp(self, day: str, token: str) -> list | None:
        """The entry's files as they are now (size and modification time of each): the index's facts
        of a date are used only while its entry is the one they were read from."""
        if not _nameable(day, token):
            return None
        try:
            return [x for path in self._paths(day, token) for st in [path.stat()] for x in (st.st_size, st.st_mtime_ns)]
        except OSError:
            return None

    def _read(self, path: Path, day: str, columns=None) -> pa.Table | None:
        try:
            table = feather.read_table(path, columns=list(columns) if columns is not None else None)
        except Exception:  # noqa: BLE001 - a damaged entry is recomputed, never trusted
            return None
        if day not in self._seen:
            self._seen.add(day)
            self.read.append(day)
        return table

    def _derived(self, day: str, token: str, name: str) -> Path:
        return self.dir / f"{day}-{token[:32]}.{name}.arrow"

    def load_derived(self, day: str, token: str, name: str) -> pa.Table | None:
        """What was kept as `name` beside a date's entry (an Arrow table), or None when missing or damaged."""
        if not self.has(day, token):
            return None
        try:
            return feather.read_table(self._derived(day, token, name))
        except Exception:  # noqa: BLE001 - a damaged file is recomputed, never trusted
            return None

    def save_derived(self, day: str, token: str, name: str, value: pa.Table) -> None:
        """Keep `value` (an Arrow table) beside a date's entry; other tokens' files of that date and
        name go, and the JSON files of before (a year of them read as JSON was seconds a build). A
        cache that cannot be written is skipped: the numbers are the same, only not kept."""
        if not self.has(day, token):
            return
        path = self._derived(day, token, name)
        try:
            _atomic(path, lambda tmp: feather.write_feather(value, tmp, compression="zstd"))
            for old in [*self.dir.glob(f"{day}-*.{name}.arrow"), *self.dir.glob(f"{day}-*.json")]:
                if old != path:
                    old.unlink(missing_ok=True)
        except OSError:
            return

    def load_passes(self, day: str, token: str, columns=None) -> pa.Table | None:
        return self._read(self._paths(day, token)[0], day, columns) if self.has(day, token) else None

    def load_cells(self, day: str, token: str) -> pa.Table | None:
        return self._read(self._paths(day, token)[1], day) if self.has(day, token) else None

    def load(self, day: str, token: str) -> DayEntry | None:
        """A date's whole entry, or None."""
        passes, cells = self.load_passes(day, token), self.load_cells(day, token)
        return DayEntry(passes, cells) if passes is not None and cells is not None else None

    def save(self, day: str, token: str, entry: DayEntry) -> bool:
        if not _nameable(day, token):
            return False  # not a plain date: computed every time, never named on disk
        p, c = self._paths(day, token)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            for path, table in ((p, entry.passes), (c, entry.cells)):
                _atomic(path, lambda tmp, t=table: feather.write_feather(t, tmp, compression="zstd"))
            for old in self.dir.glob(f"{day}-*.arrow"):
                if old not in (p, c):
                    old.unlink(missing_ok=True)
        except OSError:
            return False  # a read-only store still analyses; it only does not get faster
        self.written.append(day)
        return True

    # --- the index: what an analysis keeps of each date (benchreport.days.scan.DayFacts) ------
    _INDEX_TABLES = ("notable", "counted", "dated")

    def load_index(self) -> dict | None:
        try:
            doc = json.loads((self.dir / "index.json").read_text(encoding="utf-8"))
            if doc.get("version") != INDEX_VERSION:
                return None
            tables = {}
            for name in self._INDEX_TABLES:
                t = feather.read_table(self.dir / f"index.{name}.arrow")
                if (t.schema.metadata or {}).get(b"generation", b"").decode() != doc["generation"]:
                    return None  # written by another analysis than the JSON beside it
                tables[name] = t
            out = {}
            for day, f in doc["days"].items():
                cut = {name: tables[name].slice(*f["rows"][name]) for name in self._INDEX_TABLES}
                out[str(day)] = DayFacts(
                    str(f["token"]),
                    int(f["n"]),
                    [tuple(k) for k in f["triples"]],
                    bool(f["small"]),
                    cut["notable"],
                    cut["counted"],
                    cut["dated"],
                    list(f["stamp"]) if f.get("stamp") else None,
                )
            return out
        except Exception:  # noqa: BLE001 - missing or damaged (any reason): read from the entries
            return None

    def save_index(self, facts: dict) -> bool:
        days = sorted(d for d, f in facts.items() if _nameable(d, f.token))
        generation = uuid.uuid4().hex
        doc = {"version": INDEX_VERSION, "generation": generation, "days": {}}
        start = {name: 0 for name in self._INDEX_TABLES}
        for d in days:
            f = facts[d]
            rows = {}
            for name in self._INDEX_TABLES:
                n = getattr(f, name).num_rows
                rows[name] = [start[name], n]
                start[name] += n
            doc["days"][d] = {
                "token": f.token,
                "n": f.n,
                "triples": [list(k) for k in f.triples],
                "small": f.small,
                "rows": rows,
                "stamp": self.stamp(d, f.token),
            }
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            for name in self._INDEX_TABLES:
                parts = [getattr(facts[d], name) for d in days]
                if not parts:
                    return False
                t = pa.concat_tables(parts, promote_options="permissive")
                t = t.replace_schema_metadata({**(t.schema.metadata or {}), b"generation": generation.encode()})
                _atomic(
                    self.dir / f"index.{name}.arrow", lambda tmp, t=t: feather.write_feather(t, tmp, compression="zstd")
                )
            text = json.dumps(doc)
            _atomic(self.dir / "index.json", lambda tmp: tmp.write_text(text, encoding="utf-8"))
        except OSError:
            return False
        return True


class StoreHistoryCache:
    """The history walk in a store's `.cache/history/` (benchreport.stats.history.HistoryDayCache):
    each date's walked rows as `DATE-DIGEST.arrow` (Arrow IPC, zstd) and the series' level state
    after the last date walked as `state.json`."""

    def __init__(self, root: str | os.PathLike):
        self.dir = Path(root) / ".cache" / "history"
        self.resumed_after: str | None = None  # set by history_days(): the date its walk resumed after

    def _rows(self, day: str, digest: str) -> Path:
        return self.dir / f"{day}-{digest[:32]}.arrow"

    def has_rows(self, day: str, digest: str) -> bool:
        return _nameable(day, digest) and self._rows(day, digest).is_file()

    def load_rows(self, day: str, digest: str) -> pa.Table | None:
        if not self.has_rows(day, digest):
            return None
        try:
            return feather.read_table(self._rows(day, digest))
        except Exception:  # noqa: BLE001 - a damaged file is walked again, never trusted
            return None

    def save_rows(self, day: str, digest: str, rows: pa.Table) -> bool:
        if not _nameable(day, digest):
            return False
        path = self._rows(day, digest)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _atomic(path, lambda tmp: feather.write_feather(rows, tmp, compression="zstd"))
            for old in self.dir.glob(f"{day}-*.arrow"):
                if old != path:
                    old.unlink(missing_ok=True)
        except OSError:
            return False
        return True

    def load_state(self) -> dict | None:
        try:
            doc = json.loads((self.dir / "state.json").read_text(encoding="utf-8"))
            series = {
                seat: {tuple(k): LevelSeries.from_state(s) for k, s in items} for seat, items in doc["series"].items()
            }
            marked = None
            if doc.get("marked"):
                path = self.dir / doc["marked"]
                if (
                    not _nameable(doc["upto"], doc["digest"])
                    or path.name != self._marked(doc["upto"], doc["digest"]).name
                ):
                    return None
                marked = feather.read_table(path)
            pieces = {
                str(d): {"n": int(p["n"]), "verdicts": {str(v): int(n) for v, n in p["verdicts"].items()}}
                for d, p in doc["pieces"].items()
            }
            return {
                "upto": str(doc["upto"]),
                "digest": str(doc["digest"]),
                "series": series,
                "pieces": pieces,
                "marked": marked,
            }
        except Exception:  # noqa: BLE001 - missing or damaged (any reason): walk from the start
            return None

    def _marked(self, upto: str, digest: str) -> Path:
        return self.dir / f"marked-{upto}-{digest[:32]}.arrow"

    def save_state(self, state: dict) -> bool:
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            series = {
                seat: [[list(k), s.to_state()] for k, s in items.items()] for seat, items in state["series"].items()
            }
            marked = None
            if state.get("marked") is not None and _nameable(state["upto"], state["digest"]):
                path = self._marked(state["upto"], state["digest"])
                _atomic(path, lambda tmp: feather.write_feather(state["marked"], tmp, compression="zstd"))
                marked = path.name
            doc = json.dumps(
                {
                    "upto": state["upto"],
                    "digest": state["digest"],
                    "series": series,
                    "pieces": state.get("pieces", {}),
                    "marked": marked,
                }
            )
            _atomic(self.dir / "state.json", lambda tmp: tmp.write_text(doc, encoding="utf-8"))
            for old in self.dir.glob("marked-*.arrow"):
                if old.name != marked:
                    old.unlink(missing_ok=True)
            (self.dir / "rows.parquet").unlink(missing_ok=True)  # the whole-table file of older versions
        except OSError:
            return False
        return True


class StoreCsvFragments:
    """Each date's lines of tables/passes.csv and history.csv in a store's `.cache/csv/` (a year
    of pass rows is a million lines, formatted once each instead of on every build)."""

    def __init__(self, root: str | os.PathLike, table: str = "passes"):
        self.root, self.table = Path(root), table
        self.dir = self.root / ".cache" / "csv"

    def of(self, table: str) -> "StoreCsvFragments":
        """The fragments of another table (its own files)."""
        return StoreCsvFragments(self.root, table)

    def _path(self, day: str, token: str) -> Path:
        return self.dir / f"{day}-{token[:32]}.{self.table}.csv"

    def load(self, day: str, token: str) -> bytes | None:
        """A date's lines as they were saved (UTF-8 bytes), or None."""
        if not _nameable(day, token):
            return None
        try:
            return self._path(day, token).read_bytes()
        except OSError:
            return None

    def save(self, day: str, token: str, data: bytes) -> None:
        """Keep a date's lines (UTF-8 bytes, each line ending in a newline)."""
        if not _nameable(day, token):
            return
        path = self._path(day, token)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _atomic(path, lambda tmp: tmp.write_bytes(data))
            for old in self.dir.glob(f"{day}-*.{self.table}.csv"):
                if old != path:
                    old.unlink(missing_ok=True)
        except OSError:
            return
