"""`benchreport ingest RUNS --store DIR`: add to the run store what it has not seen.

The unit of reading is each file given, and each entry (file or sub-folder) of a folder
given: a nightly archive `runs/2026-11-30/...` is read night by night. A unit whose files
all match the store by path, size and modification time is not opened again; any other
unit is read whole (harness folders pair their files and number their passes together),
with the manifests at the top of the folder given. Of what it holds, file versions the
store already has (same SHA-256) are left as they are; new versions are added, and a new
version of a path supersedes the old one (`files.parquet`, column `current`).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from benchreport.load import DEFAULT_MAX_FILE_BYTES, MANIFEST_NAMES, RESULT_SUFFIXES, LoadResult, load
from benchreport.load.errors import Refusal, Skipped
from benchreport.tables import COMPONENT_RUN_COLUMNS, build_store_frames

from .layout import FILE_COLUMNS, Store

__all__ = ["IngestReport", "ingest"]


@dataclass
class IngestReport:
    """What an ingest did."""

    store: Path
    added: list[str] = field(default_factory=list)          # file versions added (paths)
    unchanged: int = 0                                      # files the store already had
    superseded: list[str] = field(default_factory=list)     # paths whose older version was replaced
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    runs_added: int = 0
    batch: str | None = None                                # the last batch written
    batches: list[str] = field(default_factory=list)        # every batch written (one per chunk)

    @property
    def ok(self) -> bool:
        return not self.refused

    def summary(self) -> str:
        return (f"{self.store}: {len(self.added)} file(s) added ({self.runs_added} run(s)), {self.unchanged} "
                f"unchanged, {len(self.superseded)} superseded, {len(self.refused)} refused, "
                f"{len(self.skipped)} skipped")


def _units(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], list[Path], list[Skipped]]:
    """(units to read, manifests at the top of the folders given, files there that are no run files)."""
    units, manifests, skipped = [], [], []
    for given in paths:
        p = Path(given)
        if not p.is_dir():
            units.append(p)
            continue
        for entry in sorted(p.iterdir()):
            if entry.name in MANIFEST_NAMES:
                manifests.append(entry)
            elif entry.is_dir() or entry.suffix.lower() in RESULT_SUFFIXES:
                units.append(entry)
            else:
                skipped.append(Skipped(str(entry), "not a .json or .jsonl file: not read"))
    return units, manifests, skipped


def _stat_key(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def _unit_files(unit: Path) -> list[Path]:
    if unit.is_dir():
        return sorted(p for p in unit.rglob("*") if p.is_file())
    return [unit]


def _unchanged(unit: Path, known: set[tuple]) -> bool:
    files = _unit_files(unit)
    return bool(files) and all(_stat_key(f) in known for f in files)


def _resolved(display: str) -> str:
    try:
        return str(Path(display).resolve())
    except (OSError, RuntimeError, ValueError):
        return display


#: the file bytes read into memory at once: units are loaded in chunks of about this size, each
#: written as its own batch, so a year of unread nights is ingested within bounded memory
CHUNK_BYTES = 128 * 1024 * 1024


def _unit_bytes(unit: Path) -> int:
    return sum((_stat_key(f) or ("", 0, 0))[1] for f in _unit_files(unit))


def chunks(units: list[Path], budget: int = CHUNK_BYTES) -> list[list[Path]]:
    """Units in order, grouped so each group's files add up to about `budget` bytes (at least one unit)."""
    out, size = [], 0
    for u in units:
        b = _unit_bytes(u)
        if not out or (size + b > budget and out[-1]):
            out.append([])
            size = 0
        out[-1].append(u)
        size += b
    return out


def ingest(paths: Iterable[str | os.PathLike], store_dir: str | os.PathLike, *,
           max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, progress: bool | None = False,
           chunk_bytes: int = CHUNK_BYTES) -> IngestReport:
    """Add the runs under `paths` the store has not seen; see the module docstring. Units are
    read `chunk_bytes` at a time (each chunk its own batch, the files table written after each)."""
    store = Store.open(store_dir, create=True)
    store.sweep_orphans()
    files = store.files()
    report = IngestReport(store.root)
    current = files[files["current"].astype(bool)] if len(files) else files
    known = {(p, int(s), int(m)) for p, s, m in zip(current.get("path", []), current.get("size", []),
                                                     current.get("mtime_ns", []))}
    units, manifests, report.skipped = _units(paths)
    todo = [u for u in units if not _unchanged(u, known)]
    reading = set(todo)  # a set: a year of a 50-seat fleet is 90,000 units (a list made this quadratic)
    report.unchanged = sum(len(_unit_files(u)) for u in units if u not in reading)
    if not todo:
        return report
    noted = 0  # refusals already given a files-table row
    rows = []
    unit_skips, report.skipped, seen = report.skipped, [], set()
    for chunk in chunks(todo, chunk_bytes):
        loaded = load([*map(str, chunk), *map(str, manifests)], max_file_bytes=max_file_bytes, progress=progress)
        fresh = [s for s in [*unit_skips, *loaded.skipped] if s.path not in seen]  # a manifest's, once
        seen |= {s.path for s in fresh}
        report.skipped += fresh
        rows += [_file_row(s.path, None, "skipped", s.reason, []) for s in fresh]
        new_runs, new_rows = _new_versions(loaded, files, report)
        rows += new_rows
        report.refused = report.refused[:noted] + list(loaded.refused) + report.refused[noted:]
        for r in report.refused[noted:]:
            rows.append(_file_row(r.path, None, "refused", f"{r.json_path}: {r.message}", []))
        noted = len(report.refused)
        batch = None
        if new_runs:
            batch = hashlib.sha256("\n".join(sorted(lr.sha256 for lr in new_runs)).encode()).hexdigest()[:16]
            _write_batch(store, LoadResult(runs=new_runs), batch)
            report.runs_added += len(new_runs)
            report.batch = batch
            report.batches.append(batch)
        files = _merge_files(files, rows, batch)
        store.write_files(files)
        rows = []
    return report


def _file_row(display: str, sha: str | None, status: str, reason: str | None, run_ids: list[str]) -> dict:
    path = _resolved(display)
    key = _stat_key(Path(path))
    return {"path": path, "sha256": sha, "size": key[1] if key else None, "mtime_ns": key[2] if key else None,
            "status": status, "reason": reason, "run_ids": run_ids, "current": True, "batch": None}


def _new_versions(loaded: LoadResult, files: pd.DataFrame, report: IngestReport) -> tuple[list, list[dict]]:
    """The loaded runs the store does not hold yet, and their files-table rows."""
    have = files[(files["status"] == "loaded")] if len(files) else files
    current_sha = set(have.loc[have["current"].astype(bool), "sha256"].astype(str)) if len(have) else set()
    taken = {}  # run_id -> path holding it now
    for p, ids, cur in zip(have.get("path", []), have.get("run_ids", []), have.get("current", [])):
        if cur:
            for rid in list(ids if ids is not None else []):
                taken[str(rid)] = p
    by_file: dict[tuple, list] = {}
    for lr in loaded.runs:
        by_file.setdefault((lr.source_file, lr.sha256), []).append(lr)
    new_runs, rows = [], []
    for (display, sha), runs in sorted(by_file.items()):
        path = _resolved(display)
        if sha in current_sha:
            report.unchanged += 1
            continue
        clash = [lr.run.run_id for lr in runs if taken.get(lr.run.run_id) not in (None, path)]
        if clash:
            report.refused.append(Refusal(display, "$.run_id", f'expected a run_id new to the store, got "{clash[0]}", '
                                          f"which {taken[clash[0]]} already uses"))
            continue
        if len(have) and (have["path"] == path).any():
            report.superseded.append(path)
        report.added.append(path)
        new_runs.extend(runs)
        rows.append(_file_row(display, sha, "loaded", None, sorted(lr.run.run_id for lr in runs)))
    return new_runs, rows


def _merge_files(files: pd.DataFrame, rows: list[dict], batch: str | None) -> pd.DataFrame:
    """The files table with `rows` added, older rows of the same paths no longer current."""
    new = pd.DataFrame(rows, columns=FILE_COLUMNS)
    if batch is not None:
        new.loc[new["status"] == "loaded", "batch"] = batch
    old = files.copy()
    if len(old):
        # a new version in use replaces every older row of its path; a refusal or skip replaces
        # older refusals and skips only (the last good version stays in use, and says so)
        loaded_now = set(new.loc[new["status"] == "loaded", "path"])
        noted_now = set(new.loc[new["status"] != "loaded", "path"])
        stale = old["path"].isin(loaded_now) | (old["path"].isin(noted_now) & (old["status"] != "loaded"))
        old.loc[stale, "current"] = False
    out = pd.concat([old, new], ignore_index=True) if len(old) else new
    out["current"] = out["current"].astype(bool)
    for c in ("size", "mtime_ns"):
        out[c] = pd.array(pd.to_numeric(out[c], errors="coerce"), dtype="Int64")
    return out


def _write_batch(store: Store, loaded: LoadResult, batch: str) -> None:
    """One part per stored table and date, each row with its file version and order."""
    tables, seat_runs, comp_runs = build_store_frames(loaded)
    sha_of = {lr.run.run_id: lr.sha256 for lr in loaded.runs}
    frames = {name: getattr(tables, name) for name in ("runs", "measurements", "requests", "exams", "exam_items",
                                                       "events")}
    frames["seat_runs"] = pd.DataFrame(seat_runs)
    frames["component_runs"] = pd.DataFrame(comp_runs, columns=COMPONENT_RUN_COLUMNS)
    day_of = dict(zip(tables.runs["run_id"], tables.runs["date"]))
    for name, df in frames.items():
        if not len(df):
            continue
        df = df.assign(file_sha=df["run_id"].map(sha_of), seq=np.arange(len(df), dtype=np.int64))
        days = df["run_id"].map(day_of)
        for day, part in df.groupby(days, sort=True):
            store.write_part(name, str(day), part.reset_index(drop=True), batch)
