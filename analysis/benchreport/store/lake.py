"""The run store on DuckLake: the same tables, kept by a catalog database instead of our own
manifest and lock (issue 44).

    --store ducklake:DIR                  an embedded store: DIR/catalog.sqlite (the catalog)
                                          and DIR/data/ (Parquet), no server; afterwards
                                          plain `--store DIR` opens it (DIR/store.json says so)
    --store postgresql://HOST:PORT/DB?data_path=/shared/store
                                          a fleet: the catalog in PostgreSQL, the Parquet files
                                          under data_path (given when the store is made; the
                                          catalog remembers it)

Every stored table (`STORED_TABLES`, and `files`) is a DuckLake table; each row of a data table
carries `day`, `file_sha`, `seq` (as the Parquet store's rows) and `batch` (the ingest batch
that wrote it). An ingest chunk (whole files, about `CHUNK_BYTES` of them: a night, in a nightly
job) is one catalog transaction: its data files, its rows of every table
and its files table land together or not at all, so there is no lock to hold, no manifest of
parts and no sweep of a killed writer's leftovers. Writers run at once; a writer whose commit
conflicts with another's (every ingest updates the one row of `head`, so two ingests always
conflict) rolls back and runs again on the new state, as an optimistic transaction does. A
reader pins one snapshot (`AT (VERSION => n)`) and reads by it.

DuckDB loads the DuckLake, SQLite and PostgreSQL extensions from their PyPI packages
(`duckdb-extension-*`): nothing is downloaded at run time.
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet  # noqa: F401 - pa.parquet

from benchreport.columns import FILE_COLUMNS, PART_COLUMNS, TABLE_SCHEMAS

from .figures import memory_connection
from .layout import ENGINES, STORED_TABLES, Store, StoreBusy, StoreError

__all__ = ["LAKE_FORMAT", "LakeStore", "extension_path", "migrate"]

LAKE_FORMAT = "benchreport.lake/1"
#: the columns a data table's rows carry besides the tidy table's
LAKE_KEYS = ("day", "file_sha", "seq", "batch")
#: how long a writer keeps retrying a conflicting commit by default (seconds)
RETRY_SECONDS = 600.0
_URL = re.compile(r"postgres(ql)?://")
#: what a job making an embedded store writes first (another job making it at once finds these)
_BEING_MADE = re.compile(r"catalog\.sqlite(-wal|-shm|-journal)?|data|store\.json|\.store\.json\.[0-9a-f]{32}\.tmp")


class LakeConflict(Exception):
    """A commit another writer's commit got in the way of (retried by `transact`)."""


class LakeWriteFailed(StoreError):
    """A write the catalog or the disk refused for good (full, read-only): rolled back, not
    retried (`kind` "failed", exit 4)."""

    kind = "failed"


#: errors of a write that another try would meet again (everything else is taken for a conflict)
_NOT_A_CONFLICT = re.compile(
    r"disk is full|No space left|Read-only file system|readonly database|Permission denied|Disk quota", re.I
)


def extension_path(name: str) -> str:
    """The file of a DuckDB extension shipped by its PyPI package (`duckdb-extension-NAME`,
    for this DuckDB's version); StoreError naming the package when it is not installed."""
    spec = importlib.util.find_spec(f"duckdb_extension_{name}")
    found = []
    if spec is not None and spec.origin:
        folder = os.path.join(os.path.dirname(spec.origin), "extensions")
        found = glob.glob(os.path.join(folder, f"v{duckdb.__version__}", "*.duckdb_extension"))
    if not found:
        raise StoreError(
            f"a DuckLake store needs the PyPI package duckdb-extension-{name.replace('_', '-')} built for this "
            f"DuckDB ({duckdb.__version__}): pip install 'benchreport[lake]' (it pins DuckDB with its extensions)"
        )
    return found[0]


def _connect(extensions: tuple[str, ...]) -> duckdb.DuckDBPyConnection:
    con = memory_connection()
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    for name in extensions:
        con.execute(f"LOAD '{extension_path(name)}'")
    return con


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class LakeStore(Store):
    """A run store whose tables are kept by DuckLake (see the module docstring). The API is the
    Parquet store's (`files`, `in_use`, `content_key`, `dates`, `snapshot`, `cache_lock`, and
    the writer's `write_part`/`write_files` inside `transact`), so ingest, the readers and the
    nightly route do not know which store they have."""

    lake = True

    def __init__(self, location: str):
        self.location = location
        self.frozen = False
        self._files = None
        self._parts = None
        self._seen = {}
        self.version: int | None = None  # the pinned snapshot of a frozen store
        self._con: duckdb.DuckDBPyConnection | None = None
        self._use_pairs: tuple | None = None  # (shas, pairs) of `use_pairs`, kept by a snapshot
        self._writing = self._dirty = False
        if _URL.match(location):
            parts = urlsplit(location)
            query = dict(parse_qsl(parts.query))
            data = query.pop("data_path", None)
            self.catalog = "postgres:" + urlunsplit(parts._replace(query=urlencode(query)))
            self.data_path = None if data is None else os.path.abspath(data)
            self.extensions = ("ducklake", "postgres_scanner")
            shown = parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1], query="")  # never a password
            self.root = Path(self.data_path or "/")
            self.display = urlunsplit(shown)
        else:
            self.root = Path(os.path.abspath(Path(location.removeprefix("ducklake:")).expanduser()))
            self.catalog = f"sqlite:{self.root / 'catalog.sqlite'}"
            self.data_path = str(self.root / "data") + os.sep
            self.extensions = ("ducklake", "sqlite_scanner")
            self.display = str(self.root)

    def __str__(self) -> str:
        return self.display

    # --- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, root, *, create: bool = False) -> "LakeStore":
        store = cls(str(root))
        if _URL.match(store.location):
            store.connection()  # made on first use (DuckLake writes its catalog tables)
            return store
        marker = store.root / "store.json"
        try:
            if marker.is_file():
                fmt = json.loads(marker.read_text(encoding="utf-8")).get("format")
                if fmt != LAKE_FORMAT:
                    raise StoreError(f"{marker}: expected format {LAKE_FORMAT!r}, got {fmt!r}")
                return store
            if not create:
                raise StoreError(f"{store.root}: not a run store (no store.json)")
            if store.root.exists() and any(not _BEING_MADE.fullmatch(e.name) for e in store.root.iterdir()):
                raise StoreError(f"{store.root}: not empty and not a run store; choose an empty or new folder")
            store.root.mkdir(parents=True, exist_ok=True)
            store.connection()
            tmp = marker.with_name(f".store.json.{uuid.uuid4().hex}.tmp")
            tmp.write_text(json.dumps({"format": LAKE_FORMAT}, indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, marker)
        except OSError as exc:
            raise StoreError(f"{store.root}: cannot be used as a run store ({exc})") from None
        return store

    def connection(self) -> duckdb.DuckDBPyConnection:
        """This store's DuckDB connection, the catalog attached as `lake` (made on first use)."""
        if self._con is None:
            catalog = self.catalog
            if catalog.startswith("sqlite:") and self.writable:
                _wal(catalog.removeprefix("sqlite:"))
            elif catalog.startswith("sqlite:"):  # a read-only share: SQLite cannot open it there in WAL mode
                catalog = "sqlite:" + _read_only_copy(catalog.removeprefix("sqlite:"))
            con = _connect(self.extensions)
            options = ["DATA_INLINING_ROW_LIMIT 0"]  # every row in Parquet, readable from outside
            if self.data_path:
                options.append(f"DATA_PATH {_quote(self.data_path)}")
                # an embedded store's data is DIR/data/ wherever DIR is now: the catalog keeps the
                # absolute path it was made at, and a folder copied or moved (a backup, another
                # disk) must open as the Parquet store's did (its data files' paths are relative)
                options.append("OVERRIDE_DATA_PATH true")
            if not self.writable:
                options.append("READ_ONLY")
            for attempt in range(8):  # writers making a new catalog at once: one makes it, the others retry
                try:
                    con.execute(f"ATTACH {_quote('ducklake:' + catalog)} AS lake ({', '.join(options)})")
                    break
                except duckdb.Error as exc:
                    if attempt == 7:
                        raise StoreError(f"{self}: cannot open the DuckLake catalog ({_short(exc)})") from None
                    time.sleep(random.uniform(0.1, 0.5))
            self._con = con
        return self._con

    # --- snapshots ---------------------------------------------------------------------------
    def current_version(self) -> int:
        return int(self.connection().sql("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0])

    def snapshot(self) -> "LakeStore":
        """This store at its current snapshot, kept (time travel: later commits are not seen)."""
        if self.frozen:
            return self
        snap = LakeStore(self.location)
        snap.root, snap.display, snap._con = self.root, self.display, self.connection()
        snap.version = self.current_version()
        snap.files()
        snap.frozen = True
        return snap

    def at(self, when) -> "LakeStore":
        """This store as it was at snapshot `when` (a snapshot id, or YYYY-MM-DD: the last
        snapshot committed by the end of that day, UTC): a build as of then."""
        snap = self.snapshot()
        text = str(when).strip()
        con = self.connection()
        if re.fullmatch(r"\d+", text):
            version = int(text)
            if version > snap.version:
                raise StoreError(f"{self}: no snapshot {version} (the newest is {snap.version})")
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            q = (
                "SELECT max(snapshot_id) FROM lake.snapshots() "
                "WHERE snapshot_time < (CAST(? AS DATE) + 1)::TIMESTAMP AT TIME ZONE 'UTC'"
            )
            version = con.execute(q, [text]).fetchone()[0]
            if version is None:
                raise StoreError(f"{self}: nothing was committed by the end of {text}")
        else:
            raise StoreError(f"--as-of: expected a snapshot number or YYYY-MM-DD, got {text!r}")
        snap2 = LakeStore(self.location)
        snap2.root, snap2.display, snap2._con = snap.root, snap.display, snap._con
        snap2.version = int(version)
        snap2.files()
        snap2.frozen = True
        return snap2

    def table_sql(self, table: str) -> str:
        """The FROM item of a lake table at this store's snapshot."""
        at = f" AT (VERSION => {int(self.version)})" if self.version is not None else ""
        return f"lake.{table}{at}"

    def _exists(self, table: str) -> bool:
        con = self.connection()
        if self.version is None:
            q = "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake' AND table_name = ?"
            return bool(con.execute(q, [table]).fetchone()[0])
        try:
            con.execute(f"SELECT 1 FROM {self.table_sql(table)} LIMIT 0")
        except duckdb.Error:
            return False
        return True

    # --- the files table ---------------------------------------------------------------------
    def files(self) -> pd.DataFrame:
        if self._files is None or not (self.frozen or self._writing):
            if not self._exists("files"):
                df = pd.DataFrame({c: pd.Series(dtype="object") for c in FILE_COLUMNS})
            else:
                df = self.connection().sql(f"SELECT * FROM {self.table_sql('files')}").df()
                for c in ("size", "mtime_ns"):
                    df[c] = pd.array(pd.to_numeric(df[c], errors="coerce"), dtype="Int64")
                df["current"] = df["current"].astype(bool)
                df["context"] = df["context"].fillna("").astype(str)
                df["run_ids"] = [list(x) if x is not None else [] for x in df["run_ids"]]
                df = df.sort_values(["path", "current", "sha256"], kind="stable").reset_index(drop=True)
            self._files = df[FILE_COLUMNS]
        return self._files

    def write_files(self, df: pd.DataFrame) -> None:
        """Replace the files table inside the writer's transaction."""
        df = df[FILE_COLUMNS].sort_values(["path", "current", "sha256"], kind="stable").reset_index(drop=True)
        con = self.connection()
        self._dirty = True
        con.register("lake_frame", _files_arrow(df))
        try:
            if not self._exists("files"):
                con.execute("CREATE TABLE lake.files AS SELECT * FROM lake_frame")
            else:
                con.execute("DELETE FROM lake.files")
                con.execute("INSERT INTO lake.files SELECT * FROM lake_frame")
        finally:
            con.unregister("lake_frame")
        self._files = df

    # --- parts: the catalog's own list of data files ------------------------------------------
    def parts(self) -> pd.DataFrame:
        """The data files the catalog lists (table, day, name, size); batch and sha256 are not kept."""
        rows = []
        for table in STORED_TABLES:
            if not self._exists(table):
                continue
            at = f", snapshot_version => {int(self.version)}" if self.version is not None else ""
            q = f"SELECT data_file, data_file_size_bytes FROM ducklake_list_files('lake', '{table}'{at})"
            for name, size in self.connection().sql(q).fetchall():
                m = re.search(r"day=(\d{4}-\d{2}-\d{2})", name)
                rows.append(
                    {
                        "table": table,
                        "day": m.group(1) if m else None,
                        "batch": None,
                        "name": name,
                        "size": size,
                        "sha256": None,
                    }
                )
        return pd.DataFrame(rows, columns=PART_COLUMNS)

    def write_parts(self, df: pd.DataFrame) -> None:
        """Nothing to write: the catalog lists every data file of the commit itself."""

    def sweep_orphans(self) -> int:
        """Nothing to sweep: a killed writer's data files are not in the catalog (DuckLake's
        `ducklake_delete_orphaned_files` removes them)."""
        return 0

    def write_part(self, table: str, date: str, frame: pd.DataFrame, batch: str) -> dict:
        """Insert one date's rows of a table in the writer's transaction."""
        self.table_dir(table)
        con = self.connection()
        self._dirty = True
        arrow = pa.Table.from_pandas(frame.assign(day=str(date), batch=batch), preserve_index=False)
        exists = self._exists(table)
        kept = _kept_types(con, table) if exists else {}
        arrow = pa.table({n: _lake_column(c, table, n, kept.get(n)) for n, c in zip(arrow.column_names, arrow.columns)})
        con.register("lake_rows", arrow)
        try:
            if not exists:
                con.execute(f"CREATE TABLE lake.{table} AS SELECT * FROM lake_rows LIMIT 0")
                con.execute(f"ALTER TABLE lake.{table} SET PARTITIONED BY (day)")
            have = {r[0] for r in con.execute(f"DESCRIBE lake.{table}").fetchall()}
            for name, col in zip(arrow.column_names, arrow.columns):
                if name not in have:  # a column a later code version added
                    con.execute(f'ALTER TABLE lake.{table} ADD COLUMN "{name}" {_sql_type(col.type)}')
            con.execute(f"INSERT INTO lake.{table} BY NAME SELECT * FROM lake_rows")
        finally:
            con.unregister("lake_rows")
        return {
            "table": table,
            "day": str(date),
            "batch": batch,
            "name": f"{table}/day={date}",
            "size": 0,
            "sha256": None,
        }

    def part_files(self, table: str, day: str | None = None) -> list:
        raise NotImplementedError("a DuckLake store is read by SQL (benchreport.store.read)")

    def has(self, table: str) -> bool:
        return self._exists(table)

    def use_pairs(self, shas=None) -> pa.Table:
        """(sha, b): each version in use (of `shas` only, when given) and the batch it was read in,
        in the files table's order, as Arrow: what a read joins its rows to. A snapshot makes it
        once for the same `shas` (a build reads a dozen tables of the same versions: filtering a
        year's 92,000 versions for each was 3.5 s of a 50-seat year's new-night build)."""
        key = None if shas is None else tuple(shas)
        if self.frozen and self._use_pairs is not None and self._use_pairs[0] == key:
            return self._use_pairs[1]
        use = self.in_use()
        sha = pa.array(use["sha256"].astype(str).tolist() if len(use) else [], type=pa.string())
        pairs = pa.table(
            {"sha": sha, "b": pa.array(use["batch"].astype(str).tolist() if len(use) else [], pa.string())}
        )
        if key is not None:
            pairs = pairs.filter(pc.is_in(sha, value_set=pa.array(key, type=pa.string())))
        if self.frozen:
            self._use_pairs = (key, pairs)
        return pairs

    def dates(self) -> list[str]:
        use = self.in_use()
        if not len(use) or not self._exists("runs"):
            return []
        pairs = self.use_pairs()
        q = (
            f"SELECT DISTINCT r.day FROM (SELECT * FROM {self.table_sql('runs')}) AS r SEMI JOIN lake_pairs AS u "
            "ON r.file_sha = u.sha AND r.batch = u.b ORDER BY 1"
        )
        con = self.connection()
        con.register("lake_pairs", pairs)
        try:
            return [str(d) for (d,) in con.sql(q).fetchall()]
        finally:
            con.unregister("lake_pairs")

    # --- writers -----------------------------------------------------------------------------
    @property
    def writable(self) -> bool:
        if _URL.match(self.location):
            return True
        return os.access(self.root, os.W_OK | os.X_OK)

    def cache_root(self) -> Path | None:
        if not _URL.match(self.location):
            return super().cache_root()
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchreport" / "stores"
        folder = base / hashlib.sha256(self.display.encode()).hexdigest()[:16]
        try:
            (folder / ".cache").mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return folder

    @contextmanager
    def lock(self, wait: float | None = None, *, doing: str = "ingest"):
        """One catalog transaction (no lock: `transact` retries a conflicting commit)."""
        if not self.writable:
            raise StoreError(f"{self}: read-only; `{doing}` writes to the store")
        con = self.connection()
        con.execute("BEGIN TRANSACTION")
        self._writing, self._dirty, self._files = True, False, None
        try:
            yield self
            if not self._dirty:  # nothing new: no commit, not a byte of the store changed
                con.execute("ROLLBACK")
                return
            self._commit(con)
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass
            raise
        finally:
            self._writing, self._files = False, None

    def _commit(self, con) -> None:
        """Commit the writer's transaction; LakeConflict when another writer's commit came first."""
        con.execute("CREATE TABLE IF NOT EXISTS lake.head (n BIGINT)")
        con.execute("DELETE FROM lake.head")
        con.execute("INSERT INTO lake.head VALUES (1)")  # two ingests always conflict: one retries
        try:
            con.execute("COMMIT")
        except duckdb.Error as exc:
            raise LakeConflict(_short(exc)) from None
        if self.catalog.startswith("sqlite:"):
            _checkpoint(self.catalog.removeprefix("sqlite:"))

    def commit_chunk(self) -> None:
        """Commit what an ingest wrote so far and go on in a new transaction. An ingest reads
        its files a chunk at a time (`benchreport.store.ingest.CHUNK_BYTES`); a chunk is whole
        files, their rows and the files table, so each commit is a consistent store. Held in one
        transaction, a year of nights at 10 seats took 6.3 GB (the catalog's transaction keeps
        what it inserts until it commits). A conflicting commit retries the ingest, which then
        finds the chunks already committed unchanged."""
        if not (self._writing and self._dirty):
            return
        con = self.connection()
        self._commit(con)
        con.execute("BEGIN TRANSACTION")
        self._dirty, self._files = False, None

    def transact(self, work, *, wait: float | None = None, doing: str = "ingest"):
        """Run `work()` as one transaction, again on a commit conflict (another writer committed
        first) until `wait` seconds (default RETRY_SECONDS) have passed: StoreBusy then."""
        limit = time.monotonic() + (RETRY_SECONDS if wait is None else wait)
        tries = 0
        while True:
            tries += 1
            try:
                with self.lock(wait, doing=doing):
                    result = work()
                if hasattr(result, "notes") and tries > 1:
                    result.notes.append(f"committed after {tries - 1} conflicting commit(s) of other writers")
                return result
            except (LakeConflict, duckdb.Error) as exc:
                why = _short(exc)
                if _NOT_A_CONFLICT.search(why):  # a full disk, a read-only file: trying again will not help
                    raise LakeWriteFailed(f"{self}: `{doing}` was not committed, nothing was changed ({why})") from None
                if time.monotonic() > limit:
                    raise StoreBusy(
                        f"{self}: other writers kept committing first ({why}); nothing was changed"
                    ) from None
                time.sleep(random.uniform(0.05, 0.5) * min(tries, 8))


def _wal(path: str) -> None:
    """An SQLite catalog in WAL mode: readers never block a writer's commit."""
    import sqlite3

    try:
        with sqlite3.connect(path) as db:
            db.execute("PRAGMA journal_mode=WAL")
    except sqlite3.Error:
        pass  # a read-only share: read as it is


def _checkpoint(path: str) -> None:
    """Write the WAL back into the catalog file (best effort): a copy of the store, or the store
    on a read-only share, then holds every commit in catalog.sqlite itself."""
    import sqlite3

    try:
        with sqlite3.connect(path, timeout=1) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error:
        pass


def _read_only_copy(path: str) -> str:
    """A private copy of an SQLite catalog on a read-only share (its last checkpoint: every
    ingest ends with one), in a temporary folder removed when the process ends."""
    import atexit
    import sqlite3
    import tempfile

    folder = tempfile.mkdtemp(prefix="benchreport-catalog-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    copy = os.path.join(folder, "catalog.sqlite")
    try:
        src = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
        with sqlite3.connect(copy) as dst:
            src.backup(dst)
        src.close()
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: the store's catalog cannot be read ({exc})") from None
    return copy


def _files_arrow(df: pd.DataFrame) -> pa.Table:
    return pa.table(
        {
            "path": pa.array(df["path"].astype(object), pa.string()),
            "sha256": pa.array(df["sha256"].astype(object).where(df["sha256"].notna(), None), pa.string()),
            "size": pa.array(pd.to_numeric(df["size"], errors="coerce").astype("Int64"), pa.int64()),
            "mtime_ns": pa.array(pd.to_numeric(df["mtime_ns"], errors="coerce").astype("Int64"), pa.int64()),
            "status": pa.array(df["status"].astype(object), pa.string()),
            "reason": pa.array(df["reason"].astype(object).where(df["reason"].notna(), None), pa.string()),
            "run_ids": pa.array([list(x) if x is not None else [] for x in df["run_ids"]], pa.list_(pa.string())),
            "current": pa.array(df["current"].astype(bool), pa.bool_()),
            "batch": pa.array(df["batch"].astype(object).where(df["batch"].notna(), None), pa.string()),
            "context": pa.array(df["context"].fillna("").astype(str), pa.string()),
        }
    )


#: the tidy table whose columns a stored table's rows carry (the per-run rows of seats and components)
_DECLARED = {"seat_runs": "seats", "component_runs": "components"}


def _declared_type(table: str, column: str) -> pa.DataType | None:
    """The Arrow type a stored table's column is declared with (benchreport.columns), if any."""
    schema = TABLE_SCHEMAS.get(_DECLARED.get(table, table))
    if schema is not None and column in schema.names:
        return schema.arrow_type(column)
    return {"run_id": pa.string(), "date": pa.string(), "pass": pa.int64()}.get(column)


def _kept_types(con, table: str) -> dict[str, str]:
    """The SQL type of each column of an existing catalog table."""
    return {r[0]: r[1] for r in con.execute(f"DESCRIBE lake.{table}").fetchall()}


def _lake_column(col: pa.ChunkedArray, table: str = "", name: str = "", kept: str | None = None) -> pa.ChunkedArray:
    """A column as the catalog keeps it. An all-null column of no type (a batch where nobody
    recorded it) takes the type the table already has, else its declared type, else text: typed
    by the first batch alone, a later batch's numbers would be kept as text ('2.0')."""
    if pa.types.is_null(col.type):
        if kept is not None:
            return pa.chunked_array([pa.nulls(len(col), type=_arrow_of(kept))])
        return col.cast(_declared_type(table, name) or pa.string())
    if pa.types.is_dictionary(col.type):
        return col.cast(col.type.value_type)
    return col


def _arrow_of(sql_type: str) -> pa.DataType:
    """The Arrow type DuckDB gives a column of an SQL type."""
    return duckdb.connect(":memory:").sql(f"SELECT NULL::{sql_type} AS c").to_arrow_table().schema.field("c").type


def _sql_type(t: pa.DataType) -> str:
    con = duckdb.connect(":memory:")
    con.register("empty", pa.table({"c": pa.array([], t)}))
    return con.sql("DESCRIBE SELECT * FROM empty").fetchone()[1]


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def migrate(old: Store, new_location: str) -> dict:
    """Copy a Parquet store into a new DuckLake store (`ducklake:DIR` or `postgresql://...`) in one
    transaction: every listed part (superseded versions included) under its batch, and the files
    table as it is; then check that both stores hold the same versions in use and the same number
    of rows of every table. Returns what was copied (table -> rows)."""
    if getattr(old, "lake", False):
        raise StoreError(f"{old}: already a DuckLake store")
    old = old.snapshot()
    new = Store.open(new_location, create=True)
    if not getattr(new, "lake", False):
        raise StoreError(f"{new_location}: migrate makes a DuckLake store (ducklake:DIR or postgresql://...)")
    if len(new.files()):
        raise StoreError(f"{new}: not empty; migrate into a new store")
    parts = old.parts()
    old.part_files("runs")  # a listed part that is missing or cut stops it here, named
    rows: dict[str, int] = {}

    def copy() -> dict:
        for table, day, batch, name in zip(parts["table"], parts["day"], parts["batch"], parts["name"]):
            frame = pa.parquet.read_table(old.root / str(name)).to_pandas()
            frame = frame.drop(columns=[c for c in ("day",) if c in frame.columns])
            new.write_part(str(table), str(day), frame, str(batch))
            rows[str(table)] = rows.get(str(table), 0) + len(frame)
        new.write_files(old.files())
        return rows

    new.transact(copy, doing="store migrate")
    after = Store.open(new_location).snapshot()
    if after.content_key() != old.content_key():
        raise StoreError(f"{new}: the files table differs from {old.root}'s after the copy")
    for table in STORED_TABLES:
        counted = 0
        if after.has(table):
            q = f"SELECT count(*) FROM {after.table_sql(table)}"
            counted = after.connection().sql(q).fetchone()[0]
        if counted != rows.get(table, 0):
            raise StoreError(f"{new}: {table} holds {counted} rows, {rows.get(table, 0)} were copied")
    return rows


def _open_lake(root, *, create: bool = False) -> LakeStore:
    return LakeStore.open(root, create=create)


for _key in ("postgresql://", "postgres://", "ducklake:", LAKE_FORMAT):
    ENGINES[_key] = _open_lake
