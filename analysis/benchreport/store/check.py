"""`benchreport store check` and `store repair`: say and mend what is wrong with a run store.

`check` reads nothing but the store's own lists and files: every part `parts.parquet`
lists must be there, of the size and SHA-256 it was written with, and readable as Parquet;
every file version in use must have its parts; anything else under the table folders (a
sync tool's `part-copy (1).parquet`, a part of no known batch) is a stray, which readers
never read but which should not be there.

`repair` (under the store's lock, so never beside an ingest) moves strays and damaged
parts to `STORE/lost+found/` (nothing is deleted), and for every batch that lost a part
reads its file versions again from their sources: a source that still has the same
SHA-256 (and its manifests too) is stored again, as it was; any other becomes a row
with status `lost`, listed with the refusals until its source is ingested again. No
listed run that can be read again is lost.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from benchreport.load import DEFAULT_MAX_FILE_BYTES

from .ingest import ingest_files, manifest_context
from .layout import Store, StoreDamaged, StoreError, OWN_TEMP, sha_file

__all__ = ["Problem", "check", "repair", "RepairReport"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a store: `kind` (missing, size, sha256, unreadable, no_parts,
    stray, leftover, lost), the file it is about (relative to the store) and what is wrong."""

    kind: str
    name: str
    detail: str
    batch: str | None = None

    @property
    def damages_data(self) -> bool:
        """Whether a listed run's rows are not as written (strays and leftovers only clutter)."""
        return self.kind in ("missing", "size", "sha256", "unreadable", "no_parts")

    def __str__(self) -> str:
        return f"{self.name}: {self.kind}: {self.detail}"


def check(store: Store, *, hashed: bool = True) -> list[Problem]:
    """Everything wrong with the store, in a fixed order; [] for a sound store.
    `hashed`: compare every listed part's SHA-256 (reads every byte; sizes are always checked)."""
    problems: list[Problem] = []
    files = store.files()
    parts = store.parts()
    listed = set(parts["name"].astype(str))
    for name, size, sha, batch in zip(parts["name"], parts["size"], parts["sha256"], parts["batch"]):
        path = store.root / str(name)
        try:
            have = path.stat().st_size
        except OSError:
            problems.append(Problem("missing", str(name), "listed in parts.parquet, not on disk", str(batch)))
            continue
        if have != int(size):
            problems.append(Problem("size", str(name), f"{have} bytes, {int(size)} were written", str(batch)))
            continue
        if hashed and isinstance(sha, str) and sha and sha_file(path) != sha:
            problems.append(
                Problem("sha256", str(name), "not the bytes that were written (replaced or corrupted)", str(batch))
            )
            continue
        try:
            pq.read_metadata(path)
        except Exception as exc:  # noqa: BLE001 - any unreadable part is one line
            problems.append(Problem("unreadable", str(name), f"not readable as Parquet ({_short(exc)})", str(batch)))
    if getattr(store, "lake", False):  # the catalog lists every file of a commit: no batch goes without
        return problems + _lake_leftovers(store, listed) + _lost(files)
    use = store.in_use()
    with_runs = set(parts.loc[parts["table"] == "runs", "batch"].astype(str))
    for path, batch in sorted(zip(use.get("path", []), use.get("batch", []))):
        if str(batch) not in with_runs:
            problems.append(
                Problem("no_parts", str(path), f"in use, but its batch {batch} lists no runs part", str(batch))
            )
    for _, entry in store.table_files():
        name = entry.relative_to(store.root).as_posix()
        if name in listed:
            continue
        kind = "leftover" if OWN_TEMP.fullmatch(entry.name) else "stray"
        problems.append(
            Problem(kind, name, "not listed in parts.parquet: never read; `store repair` moves it to lost+found/")
        )
    return problems + _lost(files)


def _lost(files: pd.DataFrame) -> list[Problem]:
    if not len(files):
        return []
    cur = files[files["current"].astype(bool) & (files["status"] == "lost")]
    return [Problem("lost", str(path), str(reason)) for path, reason in zip(cur["path"], cur["reason"])]


def _lake_leftovers(store, listed: set) -> list[Problem]:
    """Data files under a DuckLake store's table folders that no commit lists: what a killed
    writer wrote before its commit (never read; DuckLake's `ducklake_delete_orphaned_files`
    removes them). A server catalog's data path may be shared storage: only a local one is walked."""
    base = Path(store.data_path or "") / "main" if store.data_path else None
    if base is None or not base.is_dir():
        return []
    out = []
    for table in sorted(p for p in base.iterdir() if p.is_dir() and p.name != "files" and p.name != "head"):
        for path in sorted(table.rglob("*.parquet")):
            if str(path) not in listed:
                out.append(Problem("leftover", str(path), "no commit lists it (a killed writer's): never read"))
    return out


@dataclass
class RepairReport:
    """What a repair did: files moved to lost+found, versions read again, versions lost."""

    moved: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    problems_after: list[Problem] = field(default_factory=list)

    def summary(self, root: Path) -> str:
        left = f"; still wrong: {len(self.problems_after)}" if self.problems_after else "; the store checks clean"
        return (
            f"{root}: {len(self.moved)} file(s) moved to lost+found/, {len(self.restored)} version(s) "
            f"read again from their sources, {len(self.lost)} lost{left}"
        )


def repair(store: Store, *, wait: float | None = None, max_file_bytes: int | None = None) -> RepairReport:
    """Mend the store (see the module docstring) under its lock; returns what was done. A
    DuckLake store is not mended here: its catalog never lists a half-written commit, and a data
    file damaged under it is restored from a backup of its data path."""
    if getattr(store, "lake", False):
        raise StoreError(
            f"{store}: a DuckLake store has no `store repair` (a killed writer's files are never read; "
            "DuckLake's ducklake_delete_orphaned_files removes them, a damaged data file comes back from a backup)"
        )
    report = RepairReport()
    with store.lock(wait, doing="store repair"):
        store.sweep_orphans()
        problems = check(store)
        damaged = sorted({p.batch for p in problems if p.damages_data and p.batch})
        parts = store.parts()
        for p in problems:
            if p.kind in ("stray", "leftover"):
                _to_lost_found(store, p.name, report)
        if damaged:
            for name in parts.loc[parts["batch"].isin(damaged), "name"].astype(str):
                if (store.root / name).exists():
                    _to_lost_found(store, name, report)
            store.write_parts(parts[~parts["batch"].isin(damaged)])
            files = store.files().copy()
            hit = (files["status"] == "loaded") & files["batch"].isin(damaged)
            todo = files[hit & files["current"].astype(bool)]
            files.loc[hit, "status"] = "lost"
            files.loc[hit, "reason"] = "$: its parts in the store were damaged, and its source was not read again"
            store.write_files(files)
            for batch in damaged:
                _read_again(store, todo[todo["batch"] == batch], report, max_file_bytes or DEFAULT_MAX_FILE_BYTES)
        report.problems_after = check(store)
    return report


def _read_again(store: Store, versions: pd.DataFrame, report: RepairReport, max_file_bytes: int) -> None:
    """Read a damaged batch's versions again, together (as they were read), with the manifests
    of their context; a source whose content is another now stays lost."""
    if not len(versions):
        return
    files = store.files()
    by_context: dict[str, list[str]] = {}
    for path, ctx in zip(versions["path"], versions["context"]):
        by_context.setdefault(str(ctx), []).append(str(path))
    for ctx, paths in sorted(by_context.items()):
        mans = files[(files["status"] == "manifest") & files["current"].astype(bool) & (files["context"] == ctx)]
        manifests = [Path(p) for p in mans["path"]] if ctx else []
        if ctx and manifest_context(manifests) != ctx:
            report.lost += paths
            continue
        want = dict(zip(versions["path"].astype(str), versions["sha256"].astype(str)))
        there = [Path(p) for p in paths if Path(p).is_file() and _sha_or_none(Path(p)) == want[p]]
        report.lost += [p for p in paths if Path(p) not in set(there)]
        if there:
            got = ingest_files(
                store, there, max_file_bytes=max_file_bytes, progress=False, chunk_bytes=1 << 62, manifests=manifests
            )
            back = set(got.added) | set(got.restored)
            report.restored += [str(p) for p in there if str(p) in back]
            report.lost += [str(p) for p in there if str(p) not in back]
    report.lost.sort()


def _sha_or_none(path: Path) -> str | None:
    try:
        return sha_file(path)
    except OSError:
        return None


def _to_lost_found(store: Store, name: str, report: RepairReport) -> None:
    """Move one file of the store to STORE/lost+found/<its path> (never over another file)."""
    src = store.root / name
    dest = store.root / "lost+found" / name
    dest.parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while dest.exists():
        dest = dest.with_name(f"{Path(name).name}.{n}")
        n += 1
    try:
        os.replace(src, dest)
    except OSError as exc:
        raise StoreDamaged(f"{src}: cannot be moved to lost+found/ ({exc.strerror or exc})") from None
    report.moved.append(name)


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:160] or type(exc).__name__
