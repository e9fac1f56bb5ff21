"""Where a run store keeps what: its marker, its lock, the files table, the parts table, one
Parquet dataset per table.

Two tables are the truth about a store. `files.parquet` lists every file version seen (its
content hash, status, the batch its rows were written in, whether it is in use);
`parts.parquet` lists every part file an ingest wrote (table, date, batch, size, SHA-256).
Readers take exactly the listed parts of the batches in use, never a glob, so a stray copy a
sync tool leaves is never read and a deleted or truncated part is a one-line "damaged store"
error naming it, never a silent gap. Writers hold the store's lock (`Store.lock`, an OS
`flock` on `STORE/.lock`): one ingest or repair at a time; readers need no lock, because a
writer only adds parts and replaces the two tables atomically (parts first, then files), so
a reader sees the store before or after an ingest, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchreport import locks
from benchreport.columns import FILE_COLUMNS, PART_COLUMNS
from benchreport.load import LoadResult
from benchreport.load.errors import Refusal, Skipped

__all__ = [
    "STORE_FORMAT",
    "Store",
    "StoreError",
    "StoreBusy",
    "StoreDamaged",
    "STORED_TABLES",
    "FILE_COLUMNS",
    "PART_COLUMNS",
    "ENGINES",
]

STORE_FORMAT = "benchreport.store/1"
#: tables kept per date (requests are the bulk; the rest are small). pass_figures: every group's
#: figures, computed by the ingest that writes its run (benchreport.store.figures.batch_figures)
STORED_TABLES = (
    "runs",
    "measurements",
    "requests",
    "exams",
    "exam_items",
    "events",
    "seat_runs",
    "component_runs",
    "pass_figures",
)
#: a part's name as an ingest writes it (anything else under a table's folder is a stray)
_PART_NAME = re.compile(r"part-([0-9a-f]{16})\.parquet")
#: the temporary file a job making a store writes its marker through (another job may see it)
_MARKER_TEMP = re.compile(r"\.store\.json\.[0-9a-f]{32}\.tmp")
#: other engines behind this API, by location prefix or marker format (benchreport.store.lake
#: registers DuckLake's): key -> opener(root, create=...)
ENGINES: dict = {}
#: the engine a new store folder is made with: ducklake (benchreport.store.lake; the default since
#: issue 44) or parquet (this module: the store of before, still read, written and migrated)
ENGINE_VARIABLE = "BENCHREPORT_STORE_ENGINE"
#: what a new `--store DIR` is made as when `ENGINE_VARIABLE` is unset
DEFAULT_ENGINE = "ducklake"
#: the temporary files an ingest of this store writes (a leftover of a killed one, not a stray)
OWN_TEMP = re.compile(r"\.(part-[0-9a-f]{16}\.[0-9a-f]{32}\.tmp|(files|parts)\.[0-9a-f]{32}\.parquet)")


class StoreError(Exception):
    """A store that cannot be used as asked (one line, names the store). `kind` "usage": the
    command asked for something that is not there (benchreport.cli: exit 2)."""

    kind = "usage"


class StoreBusy(StoreError):
    """Another job holds the store's lock (`kind` "failed", exit 4: nothing was done, try again or
    `--wait`)."""

    kind = "failed"


class StoreDamaged(StoreError):
    """A listed part is missing, truncated or not what was written (`kind` "failed", exit 4;
    `store check`)."""

    kind = "failed"


class Store:
    """A run store folder: its marker, lock, files and parts tables and Parquet datasets.

    The root is made absolute when the store is opened: nothing a store does depends on the
    working directory (papermill changes it while a build runs). A Store sees the tables as
    they are now; `snapshot()` is a Store that keeps the state it first read, which every
    reader (an analysis, a build) takes, so it never mixes two states of the store.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(os.path.abspath(Path(root).expanduser()))
        self._files: pd.DataFrame | None = None
        self._parts: pd.DataFrame | None = None
        self._seen: dict[str, tuple] = {}  # table -> the stat it was read at
        self.frozen = False

    def snapshot(self) -> "Store":
        """This store as it is now, kept: later ingests are not seen by it (a reader's view)."""
        if self.frozen:
            return self
        snap = Store(self.root)
        snap.files(), snap.parts()
        snap.frozen = True
        return snap

    def _fresh(self, name: str, path: Path) -> bool:
        """Whether the table read last is still the one on disk (a frozen snapshot: always)."""
        if self.frozen:
            return True
        try:
            st = path.stat()
            now = (st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            now = None
        fresh = self._seen.get(name, "unread") == now
        self._seen[name] = now
        return fresh

    # --- the marker --------------------------------------------------------------------
    @classmethod
    def open(cls, root: str | os.PathLike, *, create: bool = False) -> "Store":
        """Open a store; with `create`, make it when the folder is missing or empty: a DuckLake
        store (`DEFAULT_ENGINE`), or as `ENGINE_VARIABLE` or a `parquet:DIR` location asks. A
        location or marker another engine registered (`ENGINES`: DuckLake's) opens that engine's
        store; an existing store opens as what it is."""
        asked = None
        if str(root).startswith("parquet:"):  # the Parquet store of before, by name
            root, asked = str(root).removeprefix("parquet:"), "parquet"
        for key, opener in ENGINES.items():
            if asked is None and str(root).startswith(key):
                return opener(root, create=create)
        store = cls(root)
        marker = store.root / "store.json"
        try:
            if marker.is_file():
                try:
                    fmt = json.loads(marker.read_text(encoding="utf-8")).get("format")
                except (OSError, ValueError, AttributeError) as exc:
                    raise StoreError(f"{marker}: not a readable store marker ({_why(exc)})") from None
                if fmt in ENGINES and asked == "parquet":
                    raise StoreError(f"{store.root}: a {fmt} store, not the Parquet store `parquet:` asks for")
                if fmt in ENGINES:
                    return ENGINES[fmt](root)
                if fmt != STORE_FORMAT:
                    raise StoreError(f"{marker}: expected format {STORE_FORMAT!r}, got {fmt!r}")
                return store
            if not create:
                raise StoreError(
                    f"{store.root}: not a run store (no store.json); create one with "
                    "`benchreport ingest RUNS --store DIR`"
                )
            engine = asked or os.environ.get(ENGINE_VARIABLE) or DEFAULT_ENGINE
            if engine == "ducklake" and "ducklake:" in ENGINES:
                return ENGINES["ducklake:"](root, create=True)
            if engine != "parquet":
                raise StoreError(f"{ENGINE_VARIABLE}={engine!r}: expected parquet or ducklake")
            # another job may be making this store now: its marker's temporary file is not content
            if store.root.exists() and any(not _MARKER_TEMP.fullmatch(e.name) for e in store.root.iterdir()):
                if marker.is_file():
                    return cls.open(root)  # made meanwhile
                raise StoreError(f"{store.root}: not empty and not a run store; choose an empty or new folder")
            store.root.mkdir(parents=True, exist_ok=True)
            tmp = marker.with_name(f".store.json.{uuid.uuid4().hex}.tmp")
            tmp.write_text(json.dumps({"format": STORE_FORMAT}, indent=2) + "\n", encoding="utf-8")
            try:
                os.link(tmp, marker)  # exactly one job makes the marker; the others find it made
            except FileExistsError:
                pass
            except OSError:  # a file system with no hard links: last writer wins, same content
                os.replace(tmp, marker)
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"{store.root}: cannot be used as a run store ({_why(exc)})") from None
        return store

    def commit_chunk(self) -> None:
        """Nothing to do: each chunk of an ingest is already its own batch, listed as written
        (DuckLake's store commits it)."""

    # --- one writer at a time ----------------------------------------------------------------
    @property
    def writable(self) -> bool:
        """Whether this process may write in the store (a read-only share is still read)."""
        return os.access(self.root, os.W_OK | os.X_OK)

    @contextmanager
    def lock(self, wait: float | None = None, *, doing: str = "ingest"):
        """Hold the store's writer lock (an OS `flock` on STORE/.lock, released when the process
        ends, however it ends). Another holder: StoreBusy at once, or after `wait` seconds."""
        if not self.writable:
            raise StoreError(
                f"{self.root}: read-only; `{doing}` writes to the store (analyse and build read a read-only store)"
            )
        path = self.root / ".lock"
        try:
            fd = locks.acquire(path, doing=doing, wait=wait)
        except locks.Busy as busy:
            waited = f" after waiting {wait:g} s" if wait else ""
            raise StoreBusy(
                f"{self.root}: another job holds the store's lock{busy.holder}{waited}; "
                f"nothing was changed (give --wait SECONDS to wait for it)"
            ) from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot lock the store ({_why(exc)})") from None
        try:
            self._files = self._parts = None  # what the last writer left, not an older snapshot
            yield self
        finally:
            os.close(fd)  # releases the lock

    def transact(self, work, *, wait: float | None = None, doing: str = "ingest"):
        """Run `work()` as this store's one writer: under the lock, after sweeping what a killed
        writer left (a catalog store runs it as one transaction instead)."""
        with self.lock(wait, doing=doing):
            self.sweep_orphans()
            return work()

    def cache_root(self) -> Path | None:
        """The folder whose `.cache/` keeps this store's analysis caches: the store itself, or for
        a read-only store (a share) a folder of the user's cache dir
        (`$XDG_CACHE_HOME/benchreport/stores/<digest of the store's path>`); None when neither can
        be written (the analysis then computes everything, with the same numbers)."""
        if self.writable:
            return self.root
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchreport" / "stores"
        folder = base / hashlib.sha256(str(self.root).encode()).hexdigest()[:16]
        try:
            (folder / ".cache").mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return folder if os.access(folder / ".cache", os.W_OK | os.X_OK) else None

    @contextmanager
    def cache_lock(self):
        """Yield (the cache root, a note or None): the root of `cache_root()` with its cache lock
        held (non-blocking: while another analysis writes the cache, this one computes without it,
        yielding None), so two builds never write one cache at once."""
        root = self.cache_root()
        if root is None:
            yield None, f"{self.root} is read-only and no user cache folder can be written: nothing is cached"
            return
        note = None if root == self.root else f"{self.root} is read-only: its cache is kept in {root / '.cache'}"
        try:
            (root / ".cache").mkdir(parents=True, exist_ok=True)
            fd = locks.lock_file(root / ".cache" / ".lock")
        except OSError as exc:
            yield None, f"{root / '.cache'} cannot be written ({_why(exc)}): nothing is cached"
            return
        try:
            try:
                held = locks.try_flock(fd)
            except OSError:
                held = False
            if not held:
                yield (
                    None,
                    (
                        f"another analysis is writing {root / '.cache'}: this one computes without the "
                        "cache (same numbers, slower)"
                    ),
                )
                return
            yield root, note
        finally:
            os.close(fd)

    # --- the files table -----------------------------------------------------------------
    @property
    def files_path(self) -> Path:
        return self.root / "files.parquet"

    @property
    def parts_path(self) -> Path:
        return self.root / "parts.parquet"

    def files(self) -> pd.DataFrame:
        """Every file version seen (FILE_COLUMNS); empty for a new store. Read once (a snapshot)."""
        if self._files is None or not self._fresh("files", self.files_path):
            if not self.files_path.is_file():
                self._files = pd.DataFrame({c: pd.Series(dtype="object") for c in FILE_COLUMNS})
            else:
                try:
                    df = pd.read_parquet(self.files_path)
                except Exception as exc:  # noqa: BLE001 - any unreadable table is one line
                    raise StoreDamaged(
                        f"damaged store: {self.files_path} cannot be read ({_why(exc)}); run `benchreport store check`"
                    ) from None
                if "context" not in df.columns:  # a store written before manifests were versioned
                    df["context"] = ""
                missing = [c for c in FILE_COLUMNS if c not in df.columns]
                if missing:
                    raise StoreDamaged(f"damaged store: {self.files_path} has no column {missing[0]!r}")
                df["context"] = df["context"].fillna("").astype(str)
                self._files = df[FILE_COLUMNS]
        return self._files

    def write_files(self, df: pd.DataFrame) -> None:
        """Replace the files table (atomically: a killed ingest leaves the previous one)."""
        df = df[FILE_COLUMNS].sort_values(["path", "current", "sha256"], kind="stable").reset_index(drop=True)
        _write_parquet_atomic(self.files_path, df)
        self._files = df
        self._fresh("files", self.files_path)

    def in_use(self) -> pd.DataFrame:
        """The versions in use: loaded and current (path, sha256, batch, ...)."""
        f = self.files()
        if not len(f):
            return f
        return f[(f["status"] == "loaded") & f["current"].astype(bool)]

    def current_shas(self) -> list[str]:
        """The file versions in use (loaded, current), sorted."""
        return sorted(set(self.in_use()["sha256"].astype(str).tolist()))

    def content_key(self) -> str:
        """A digest of everything a report of the store shows: the versions in use (and the
        batches and manifests they were read with), and the refusals and skips it lists."""
        f = self.files()
        if not len(f):
            return hashlib.sha256(b"").hexdigest()
        cur = f[f["current"].astype(bool)]
        columns = (cur[c].tolist() for c in ("status", "path", "sha256", "batch", "context", "reason"))
        # each column as Python values at once (the values iterating the column gives; a year's
        # 92,000 files one Arrow-backed cell at a time were a quarter of a no-change build)
        lines = sorted(f"{s}|{p}|{h}|{b}|{c}|{r}" for s, p, h, b, c, r in zip(*columns))
        return hashlib.sha256("\n".join(lines).encode()).hexdigest()

    # --- the parts table ------------------------------------------------------------------
    def parts(self) -> pd.DataFrame:
        """Every part written (PART_COLUMNS). A store written before parts were listed gets
        its list from the parts of known batches on disk (`store repair` writes it down)."""
        if self._parts is None or not self._fresh("parts", self.parts_path):
            if self.parts_path.is_file():
                try:
                    self._parts = pd.read_parquet(self.parts_path)[PART_COLUMNS]
                except Exception as exc:  # noqa: BLE001
                    raise StoreDamaged(
                        f"damaged store: {self.parts_path} cannot be read ({_why(exc)}); run `benchreport store repair`"
                    ) from None
            else:
                self._parts = self.parts_on_disk(known_only=True)
        return self._parts

    def parts_on_disk(self, *, known_only: bool = False, hashed: bool = False) -> pd.DataFrame:
        """The part files in the `day=` folders of the tables (a legacy store's list);
        `known_only`: only well-named parts of batches the files table knows."""
        known = set(self.files()["batch"].dropna().astype(str)) if known_only else None
        rows = []
        for table, part in self.table_files(dated_only=True):
            m = _PART_NAME.fullmatch(part.name)
            if known is not None and (m is None or m.group(1) not in known):
                continue
            try:
                size = part.stat().st_size
            except OSError:
                continue
            rows.append(
                {
                    "table": table,
                    "day": part.parent.name[4:],
                    "batch": m.group(1) if m else None,
                    "name": part.relative_to(self.root).as_posix(),
                    "size": size,
                    "sha256": sha_file(part) if hashed else None,
                }
            )
        return pd.DataFrame(rows, columns=PART_COLUMNS)

    def write_parts(self, df: pd.DataFrame) -> None:
        df = df[PART_COLUMNS].sort_values(["table", "day", "batch"], kind="stable").reset_index(drop=True)
        df["size"] = df["size"].astype("int64")
        _write_parquet_atomic(self.parts_path, df)
        self._parts = df
        self._fresh("parts", self.parts_path)

    def part_files(self, table: str, day: str | None = None) -> list[tuple[str, list[str]]]:
        """The listed parts of a table (of one date) that hold rows of versions in use, each
        with the SHA-256s of its batch's versions in use: what a reader reads, in a fixed order.
        A listed part that is missing or not its listed size is StoreDamaged, named."""
        self.table_dir(table)  # checks the name
        use = self.in_use()
        if not len(use):
            return []
        shas_of: dict[str, list[str]] = {}
        for sha, batch in zip(use["sha256"].astype(str), use["batch"].astype(str)):
            shas_of.setdefault(batch, []).append(sha)
        p = self.parts()
        p = p[(p["table"] == table) & p["batch"].isin(list(shas_of))]
        if day is not None:
            p = p[p["day"] == str(day)]
        out = []
        for name, size, batch in zip(p["name"], p["size"], p["batch"]):
            path = self.root / name
            try:
                have = path.stat().st_size
            except OSError:
                raise StoreDamaged(
                    f"damaged store: {path} is missing (listed in parts.parquet); "
                    "`benchreport store check --store DIR` says what is wrong"
                ) from None
            if have != int(size):
                raise StoreDamaged(
                    f"damaged store: {path} is {have} bytes, {int(size)} were written "
                    "(truncated or replaced); `benchreport store check --store DIR`"
                )
            out.append((str(path), sorted(shas_of[batch])))
        return out

    # --- the datasets ----------------------------------------------------------------------
    def table_dir(self, table: str) -> Path:
        if table not in STORED_TABLES:
            raise ValueError(f"`table` must be one of {STORED_TABLES}; got {table!r}")
        return self.root / table

    def table_files(self, *, dated_only: bool = False) -> list[tuple[str, Path]]:
        """(table, path) of every file under the table folders, sorted; `dated_only`: only those
        directly in a `day=` folder (where parts are written)."""
        out = []
        for table in STORED_TABLES:
            folder = self.table_dir(table)
            for path in sorted(folder.rglob("*")):
                if dated_only and not (path.parent.parent == folder and path.parent.name.startswith("day=")):
                    continue
                if path.is_file():
                    out.append((table, path))
        return out

    def has(self, table: str) -> bool:
        return bool(self.part_files(table))

    def dates(self) -> list[str]:
        """The dates the store holds runs of (in use), sorted."""
        use = set(self.in_use()["batch"].astype(str))
        p = self.parts()
        return sorted(set(p.loc[(p["table"] == "runs") & p["batch"].isin(use), "day"].astype(str)))

    def sweep_orphans(self) -> int:
        """Under the lock: remove what a killed writer of this store left (its temporary files,
        and parts in its own naming that no listed batch owns); returns how many. Files of any
        other name are never removed here (`store check` lists them, `store repair` moves them)."""
        known = set(self.files()["batch"].dropna().astype(str))
        if not self.parts_path.is_file() and len(self.files()):  # a store from before parts were listed
            self.write_parts(self.parts_on_disk(known_only=True, hashed=True))
        parts = self.parts()
        dead = ~parts["batch"].astype(str).isin(known)  # listed by a writer killed before its files table
        if dead.any():
            self.write_parts(parts[~dead])
        listed = set(self.parts()["name"].astype(str))
        gone = 0
        for entry in self.root.iterdir():
            if OWN_TEMP.fullmatch(entry.name):
                entry.unlink(missing_ok=True)
                gone += 1
        for _, part in self.table_files(dated_only=True):
            m = _PART_NAME.fullmatch(part.name)
            own = OWN_TEMP.fullmatch(part.name) is not None
            name = part.relative_to(self.root).as_posix()
            if own or (m is not None and name not in listed and m.group(1) not in known):
                part.unlink(missing_ok=True)
                gone += 1
        return gone

    def write_part(self, table: str, date: str, frame: pd.DataFrame, batch: str) -> dict:
        """One part file of a table for one date (written to a temporary name, then renamed);
        returns its row of the parts table (size and SHA-256 of the bytes written)."""
        folder = self.table_dir(table) / f"day={date}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"part-{batch}.parquet"
        tmp = folder / f".part-{batch}.{uuid.uuid4().hex}.tmp"
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp)
        sha, size = sha_file(tmp), tmp.stat().st_size
        os.replace(tmp, path)
        return {
            "table": table,
            "day": str(date),
            "batch": batch,
            "name": path.relative_to(self.root).as_posix(),
            "size": size,
            "sha256": sha,
        }


def sha_file(path: Path) -> str:
    """The SHA-256 of a file's bytes, read in chunks (the store keys every file it holds by it)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _why(exc: BaseException) -> str:
    return " ".join(str(getattr(exc, "strerror", None) or exc).split())[:200]


def _write_parquet_atomic(path: Path, df: pd.DataFrame) -> None:
    tmp = path.with_name(f".{path.stem}.{uuid.uuid4().hex}.parquet")
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp)
    os.replace(tmp, path)


def store_load_result(store: Store) -> LoadResult:
    """The refusals and skips the store recorded (current rows), as a load would list them."""
    f = store.snapshot().files()
    if not len(f):
        return LoadResult()
    cur = f[f["current"].astype(bool)]
    gone = cur["status"].isin(["refused", "lost"])  # lost: its parts were damaged (`store repair`)
    refused = [
        Refusal(p, *(str(r).split(": ", 1) if ": " in str(r) else ("$", str(r))))
        for p, r in zip(cur.loc[gone, "path"], cur.loc[gone, "reason"])
    ]
    skipped = [
        Skipped(p, str(r))
        for p, r in zip(cur.loc[cur["status"] == "skipped", "path"], cur.loc[cur["status"] == "skipped", "reason"])
    ]
    return LoadResult(refused=refused, skipped=skipped)
