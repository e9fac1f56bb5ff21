"""`benchreport ingest RUNS --store DIR`: add to the run store what it has not seen.

The unit of reading is each file given, and each entry (file or sub-folder) of a folder
given: a nightly archive `runs/2026-11-30/...` is read night by night. A unit whose files
all match the store by path, size and modification time (and that was read with the same
manifests) is not opened again; any other unit is read whole (harness folders pair their
files and number their passes together), with the manifests at the top of the folder
given. A file's version is the SHA-256 of the bytes that were parsed, with the manifests it
was read with: a version the store holds is never stored again (a file changed and changed
back is its old version, in use again), a new version of a path supersedes the old one
(`files.parquet`, column `current`).

Everything happens under the store's lock (one ingest at a time; `wait` seconds for another
to finish). A file that changes while it is read (a harness still appending) is read again;
if it is still changing, what was read is stored and the file is read again by the next
ingest (said in the report's notes). Refused files are read again by every ingest, so a
fixed cause (the manifest it asked for, a permission, a larger `--max-file-mb`) is seen.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from benchreport.load import DEFAULT_MAX_FILE_BYTES, MANIFEST_NAMES, RESULT_SUFFIXES, LoadResult, load
from benchreport.load.errors import NOT_A_RUN_WHY, Refusal, Skipped
from benchreport.tables import COMPONENT_RUN_COLUMNS, build_store_frames

from .layout import FILE_COLUMNS, PART_COLUMNS, Store

__all__ = ["IngestReport", "ingest", "PATH_MAX"]

#: the longest path a file may have to be stored (Linux's PATH_MAX); a longer one is refused by name
PATH_MAX = 4096


@dataclass
class IngestReport:
    """What an ingest did."""

    store: Path
    added: list[str] = field(default_factory=list)  # file versions added (paths)
    unchanged: int = 0  # files the store already had
    superseded: list[str] = field(default_factory=list)  # paths whose older version was replaced
    restored: list[str] = field(default_factory=list)  # paths back to a version the store holds
    refused: list[Refusal] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. a file that changed while it was read
    runs_added: int = 0
    batch: str | None = None  # the last batch written
    batches: list[str] = field(default_factory=list)  # every batch written (one per chunk)

    @property
    def ok(self) -> bool:
        return not self.refused

    def summary(self) -> str:
        back = f", {len(self.restored)} back to a stored version" if self.restored else ""
        return (
            f"{self.store}: {len(self.added)} file(s) added ({self.runs_added} run(s)), {self.unchanged} "
            f"unchanged, {len(self.superseded)} superseded{back}, {len(self.refused)} refused, "
            f"{len(self.skipped)} skipped"
        )


def _units(paths: Iterable[str | os.PathLike]) -> tuple[list[Path], list[Path], list[Skipped], set[str]]:
    """(units to read, manifests at the top of the folders given, files there that are no run files,
    the units that are files given by name: only these are refused when they are not run files)."""
    units, manifests, skipped, named = [], [], [], set()
    for given in paths:
        p = Path(os.path.abspath(Path(given).expanduser()))
        if not p.is_dir():
            units.append(p)
            named.add(str(p))
            continue
        for entry in sorted(p.iterdir()):
            if entry.name in MANIFEST_NAMES:
                manifests.append(entry)
            elif entry.is_dir() or entry.suffix.lower() in RESULT_SUFFIXES:
                units.append(entry)
            else:
                skipped.append(Skipped(str(entry), "not a .json or .jsonl file: not read"))
    return units, manifests, skipped, named


def _stat_key(path: Path) -> tuple[str, int, int] | None:
    try:
        st = path.stat()
        return str(path.resolve()), st.st_size, st.st_mtime_ns
    except (OSError, RuntimeError, ValueError):
        return None


def _unit_files(unit: Path) -> list[Path]:
    try:
        if unit.is_dir():
            return sorted(p for p in unit.rglob("*") if p.is_file())
    except OSError:
        return [unit]
    return [unit]


def _unchanged(unit: Path, known: set[tuple]) -> bool:
    files = _unit_files(unit)
    return bool(files) and all(_stat_key(f) in known for f in files)


def _resolved(display: str) -> str:
    try:
        return str(Path(display).resolve())
    except (OSError, RuntimeError, ValueError):
        return display


def manifest_context(manifests: list[Path]) -> str:
    """A digest of the manifests a unit is read with ("" for none): another manifest, another version."""
    if not manifests:
        return ""
    h = hashlib.sha256()
    for m in sorted(manifests):
        try:
            data = m.read_bytes()
        except OSError as exc:
            data = f"unreadable: {exc.strerror}".encode()
        h.update(f"{_resolved(str(m))}\n{hashlib.sha256(data).hexdigest()}\n".encode())
    return h.hexdigest()[:32]


#: the file bytes read into memory at once: units are loaded in chunks of about this size, each
#: written as its own batch, so a year of unread nights is ingested within bounded memory
#: (64 MB: 16 nights at 50 seats peaked at 1,168 MB against 1,708 MB in 128 MB chunks, for the same
#: CPU, 28.7 s and 28.0 s; the year at 50 seats in 128 MB chunks peaked at 2,107 MB)
CHUNK_BYTES = 64 * 1024 * 1024


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


def ingest(
    paths: Iterable[str | os.PathLike],
    store_dir: str | os.PathLike,
    *,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    progress: bool | None = False,
    chunk_bytes: int = CHUNK_BYTES,
    wait: float | None = None,
    strict: bool = False,
) -> IngestReport:
    """Add the runs under `paths` the store has not seen; see the module docstring. Units are
    read `chunk_bytes` at a time (each chunk its own batch, the tables written after each).
    Another ingest holding the store: StoreBusy, at once or after `wait` seconds. `strict`: a
    file that is not a run file is refused, not skipped (`benchreport.load.load`), and one skipped
    so before is read again."""
    paths = [Path(os.path.abspath(Path(p).expanduser())) for p in paths]  # before anything changes directory
    store = Store.open(store_dir, create=True)
    return store.transact(
        lambda: ingest_files(
            store, paths, max_file_bytes=max_file_bytes, progress=progress, chunk_bytes=chunk_bytes, strict=strict
        ),
        wait=wait,
        doing="ingest",
    )


def ingest_files(
    store: Store,
    paths: list[Path],
    *,
    max_file_bytes: int,
    progress,
    chunk_bytes: int,
    manifests: list[Path] | None = None,
    strict: bool = False,
) -> IngestReport:
    """The ingest itself, under the lock. `manifests`: read with these (`store repair` reading
    a batch again) instead of those at the top of the folders given."""
    files = store.files()
    report = IngestReport(getattr(store, "display", store.root))
    units, found, report.skipped, named = _units(paths)
    manifests = found if manifests is None else manifests
    context = manifest_context(manifests)
    units, too_long = _path_limits(units, report)
    current = files[files["current"].astype(bool)] if len(files) else files
    # refused files are read again (their cause may be fixed); a loaded file only if it was read
    # with the manifests given now
    skipped = current["status"] == "skipped" if len(current) else None
    if strict and len(current):  # skipped as not a run file: refused now, so read again
        skipped &= ~current["reason"].astype(str).str.startswith(NOT_A_RUN_WHY)
    fresh = (
        current[skipped | ((current["status"] == "loaded") & (current["context"] == context))]
        if len(current)
        else current
    )
    known = {
        (p, int(s), int(m))
        for p, s, m in zip(fresh.get("path", []), fresh.get("size", []), fresh.get("mtime_ns", []))
        if not (pd.isna(s) or pd.isna(m))
    }
    todo = [u for u in units if not _unchanged(u, known)]
    reading = set(todo)  # a set: a year of a 50-seat fleet is 90,000 units (a list made this quadratic)
    report.unchanged = sum(len(_unit_files(u)) for u in units if u not in reading)
    rows = [_manifest_row(m, context) for m in manifests]
    rows = [r for r in rows if not _same_row(files, r)]
    if not todo:
        if rows:
            store.write_files(_merge_files(files, rows, None))
        return report
    unit_skips, report.skipped, seen = report.skipped, [], set()
    for chunk in chunks(todo, chunk_bytes):
        loaded, stats = _load_steady(chunk, manifests, max_file_bytes, progress, report, strict=strict, named=named)
        new_skips = [s for s in [*unit_skips, *loaded.skipped] if s.path not in seen]  # a manifest's, once
        seen |= {s.path for s in new_skips}
        report.skipped += new_skips
        rows += [_file_row(s.path, None, "skipped", s.reason, [], stats, "") for s in new_skips]
        new_runs, new_rows, files, clashes, dirty = _new_versions(loaded, files, report, stats, context)
        rows += new_rows
        for r in _refusals([*loaded.refused, *clashes], report):
            rows.append(
                _file_row(
                    r.path, loaded.digests.get(r.path), "refused", f"{r.json_path}: {r.message}", [], stats, context
                )
            )
        rows = [r for r in rows if not _same_row(files, r)]
        batch = None
        if new_runs:
            salt = str(len(files))  # a batch name is never reused, even for the same versions
            batch = hashlib.sha256(
                "\n".join([salt, *sorted(f"{lr.sha256}:{context}" for lr in new_runs)]).encode()
            ).hexdigest()[:16]
            parts = _write_batch(store, LoadResult(runs=new_runs), batch)
            listed = store.parts()
            listed = listed[~listed["name"].isin([p["name"] for p in parts])]
            store.write_parts(pd.concat([listed, pd.DataFrame(parts, columns=PART_COLUMNS)], ignore_index=True))
            report.runs_added += len(new_runs)
            report.batch = batch
            report.batches.append(batch)
        if rows or dirty:
            files = _merge_files(files, rows, batch)
            store.write_files(files)
        store.commit_chunk()  # a DuckLake store commits each chunk: bounded memory
        rows = []
    report.refused.sort(key=lambda r: (r.path, r.json_path))
    return report


def _refusals(refused: list[Refusal], report: IngestReport) -> list[Refusal]:
    report.refused.extend(refused)
    return list(refused)


def _path_limits(units: list[Path], report: IngestReport) -> tuple[list[Path], list[Path]]:
    """Units whose paths the system can name; the others refused by name (never a traceback)."""
    ok, bad = [], []
    for u in units:
        if len(os.fsencode(str(u))) >= PATH_MAX:
            report.refused.append(
                Refusal(
                    str(u)[:200] + "...",
                    "$",
                    f"expected a path shorter than {PATH_MAX} bytes, got {len(os.fsencode(str(u)))}: not read",
                )
            )
            bad.append(u)
        else:
            ok.append(u)
    return ok, bad


def _load_steady(
    chunk: list[Path],
    manifests: list[Path],
    max_file_bytes: int,
    progress,
    report: IngestReport,
    *,
    strict: bool = False,
    named: set[str] = frozenset(),
) -> tuple[LoadResult, dict]:
    """Load a chunk, stat-ing its files before and after: a file that changed while it was read
    is read again once; if it is still changing, what was read is kept and its stat is left
    unrecorded (the next ingest reads it again), with a note. Returns (result, path -> stat)."""
    for attempt in (1, 2):
        before = {k[0]: k for f in (f for u in chunk for f in _unit_files(u)) for k in [_stat_key(f)] if k}
        loaded = load(
            [*map(str, chunk), *map(str, manifests)],
            max_file_bytes=max_file_bytes,
            progress=progress,
            strict=strict,
            named=[*(u for u in map(str, chunk) if u in named), *map(str, manifests)],
        )
        after = {k[0]: k for f in (f for u in chunk for f in _unit_files(u)) for k in [_stat_key(f)] if k}
        moving = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        if not moving:
            return loaded, before
        if attempt == 2:
            report.notes += [
                f"{p}: changed while it was read; what was read is stored, and the next ingest reads it again"
                for p in moving
            ]
            return loaded, {p: k for p, k in before.items() if p not in set(moving)}
    raise AssertionError("unreachable")


def _manifest_row(path: Path, context: str) -> dict:
    try:
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        sha = None
    key = _stat_key(path)
    return {
        "path": _resolved(str(path)),
        "sha256": sha,
        "size": key[1] if key else None,
        "mtime_ns": key[2] if key else None,
        "status": "manifest",
        "reason": None,
        "run_ids": [],
        "current": True,
        "batch": None,
        "context": context,
    }


def _file_row(
    display: str, sha: str | None, status: str, reason: str | None, run_ids: list[str], stats: dict, context: str
) -> dict:
    path = _resolved(display)
    key = stats.get(path)
    return {
        "path": path,
        "sha256": sha,
        "size": key[1] if key else None,
        "mtime_ns": key[2] if key else None,
        "status": status,
        "reason": reason,
        "run_ids": run_ids,
        "current": True,
        "batch": None,
        "context": context,
    }


def _same_row(files: pd.DataFrame, row: dict) -> bool:
    """Whether `row` (a refusal, skip or manifest) is already the current row of its path, as it is."""
    if not len(files) or row["status"] == "loaded":
        return False
    cur = files[(files["path"] == row["path"]) & files["current"].astype(bool) & (files["status"] == row["status"])]
    for _, old in cur.iterrows():
        if all(_eq(old[c], row[c]) for c in ("sha256", "reason", "size", "mtime_ns", "context")):
            return True
    return False


def _eq(a, b) -> bool:
    na, nb = a is None or (not isinstance(a, str) and pd.isna(a)), b is None or (not isinstance(b, str) and pd.isna(b))
    if na or nb:
        return na and nb
    return str(a) == str(b) if isinstance(a, str) or isinstance(b, str) else int(a) == int(b)


def _new_versions(
    loaded: LoadResult, files: pd.DataFrame, report: IngestReport, stats: dict, context: str
) -> tuple[list, list[dict], pd.DataFrame, list[Refusal], bool]:
    """(the loaded runs the store does not hold yet, their files-table rows, the files table,
    run_id clashes, whether the table changed): versions the store holds already are put back
    in use, and a stored version now seen steady gets its size and time."""
    files = files.copy() if len(files) else files
    clashes, dirty = [], False
    have = files[(files["status"] == "loaded")] if len(files) else files
    cur_mask = have["current"].astype(bool) if len(have) else pd.Series(dtype=bool)
    current_versions = (
        set(zip(have.loc[cur_mask, "sha256"].astype(str), have.loc[cur_mask, "context"])) if len(have) else set()
    )
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
        key = stats.get(path)
        mine = (
            (files["path"] == path)
            & (files["status"] == "loaded")
            & (files["sha256"] == sha)
            & (files["context"] == context)
            if len(files)
            else None
        )
        if mine is not None and mine.any():
            idx = files.index[mine][-1]
            if not bool(files.at[idx, "current"]):  # changed and changed back: the stored version again
                files.loc[files["path"] == path, "current"] = False
                files.at[idx, "current"] = True
                report.restored.append(path)
                dirty = True
            else:
                report.unchanged += 1
            if key and (
                _eq(files.at[idx, "size"], None)
                or (int(files.at[idx, "size"]), int(files.at[idx, "mtime_ns"])) != (key[1], key[2])
            ):
                files.at[idx, "size"], files.at[idx, "mtime_ns"] = key[1], key[2]  # seen steady now
                dirty = True
            continue
        if (sha, context) in current_versions:  # the same content at another path: stored once
            report.unchanged += 1
            continue
        clash = [lr.run.run_id for lr in runs if taken.get(lr.run.run_id) not in (None, path)]
        if clash:
            clashes.append(
                Refusal(
                    display,
                    "$.run_id",
                    f'expected a run_id new to the store, got "{clash[0]}", which {taken[clash[0]]} already uses',
                )
            )
            continue
        if len(have) and (have["path"] == path).any():
            report.superseded.append(path)
        report.added.append(path)
        new_runs.extend(runs)
        rows.append(_file_row(display, sha, "loaded", None, sorted(lr.run.run_id for lr in runs), stats, context))
    if len(files):
        files["size"] = pd.array(pd.to_numeric(files["size"], errors="coerce"), dtype="Int64")
        files["mtime_ns"] = pd.array(pd.to_numeric(files["mtime_ns"], errors="coerce"), dtype="Int64")
    return new_runs, rows, files, clashes, dirty


def _merge_files(files: pd.DataFrame, rows: list[dict], batch: str | None) -> pd.DataFrame:
    """The files table with `rows` added, older rows of the same paths no longer current."""
    new = pd.DataFrame(rows, columns=FILE_COLUMNS)
    if batch is not None:
        new.loc[new["status"] == "loaded", "batch"] = batch
    old = files.copy()
    if len(old):
        # a new version in use replaces every older row of its path; a refusal, skip or manifest
        # replaces older ones of its kind only (the last good version stays in use, and says so)
        loaded_now = set(new.loc[new["status"] == "loaded", "path"])
        noted_now = set(new.loc[new["status"] != "loaded", "path"])
        stale = old["path"].isin(loaded_now) | (old["path"].isin(noted_now) & (old["status"] != "loaded"))
        old.loc[stale, "current"] = False
    out = pd.concat([old, new], ignore_index=True) if len(old) else new
    out["current"] = out["current"].astype(bool)
    out["context"] = out["context"].fillna("").astype(str)
    for c in ("size", "mtime_ns"):
        out[c] = pd.array(pd.to_numeric(out[c], errors="coerce"), dtype="Int64")
    return out


def _write_batch(store: Store, loaded: LoadResult, batch: str) -> list[dict]:
    """One part per stored table and date, each row with its file version and order, then the
    batch's `pass_figures` computed over the rows written (`batch_figures`); returns the parts'
    rows of the parts table."""
    tables, seat_runs, comp_runs = build_store_frames(loaded)
    sha_of = {lr.run.run_id: lr.sha256 for lr in loaded.runs}
    frames = {
        name: getattr(tables, name) for name in ("runs", "measurements", "requests", "exams", "exam_items", "events")
    }
    frames["seat_runs"] = pd.DataFrame(seat_runs)
    frames["component_runs"] = pd.DataFrame(comp_runs, columns=COMPONENT_RUN_COLUMNS)
    day_of = dict(zip(tables.runs["run_id"], tables.runs["date"]))
    parts = []
    for name, df in frames.items():
        if not len(df):
            continue
        df = df.assign(file_sha=df["run_id"].map(sha_of), seq=np.arange(len(df), dtype=np.int64))
        days = df["run_id"].map(day_of)
        for day, part in df.groupby(days, sort=True):
            parts.append(store.write_part(name, str(day), part.reset_index(drop=True), batch))
    runs_on = Counter(str(d) for d in day_of.values())
    return parts + batch_figures(store, parts, batch, runs_on)


def batch_figures(*args, **kwargs):
    """`benchreport.store.figures.batch_figures`, imported when an ingest writes figures: it brings
    the statistics (SciPy), which opening a store, as an up-to-date build does, never needs."""
    from .figures import batch_figures as figures_of

    return figures_of(*args, **kwargs)
