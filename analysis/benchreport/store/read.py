"""Reading a run store with DuckDB: the small tables whole, request records one date at a time.

Only the file versions in use (`files.parquet`, current and loaded) are read. Rows come
back in the order `benchreport.tables.build_tables` gives them (runs by seat, date, pass and
run id; each run's rows in their own order), so an analysis of the store equals an
analysis of the same files loaded from folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections import Counter
from pathlib import Path
from typing import Iterator

import duckdb
import pandas as pd
import pyarrow as pa

from benchreport.columns import COMPONENT_RUN_COLUMNS, TABLE_COLUMNS
from benchreport.stats.requests import FrameSource, GroupSummary, RequestGroup
from benchreport.tables import Tables, first_run_components, frame_from_arrow, merge_seat_row, tidy_frame

from .figures import SUMMARY_VERSION, date_batches, kept_summaries, memory_connection, store_summaries
from .layout import Store, StoreDamaged, store_load_result  # noqa: F401 - kept importable from here

__all__ = ["read_tables", "StoreRequests", "store_load_result", "connect"]

_RUN_ORDER = "seat, date, pass, run_id, seq"


def connect(store=None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection, one thread (reads in a fixed order, bounded memory);
    a DuckLake store's own (its catalog attached)."""
    if getattr(store, "lake", False):
        return store.connection()
    return memory_connection()


def _select(
    con,
    store: Store,
    table: str,
    shas: list[str],
    *,
    where: str = "",
    params=(),
    order=_RUN_ORDER,
    day: str | None = None,
) -> pa.Table:
    """Rows of one stored table from the file versions in use, as Arrow, in run order
    (each row's run placed by the runs table: seat, date, pass, run id; then its own order);
    `day`: of one date's partition only (the runs placing them read from that date's too).

    Only the parts the store lists are read (never a glob: a stray copy is not read), and of
    each part only the rows of its batch's versions in use (a version's rows are those of the
    batch it was written in). A DuckLake store is read by its catalog, at its snapshot."""
    if getattr(store, "lake", False):
        return _select_lake(con, store, table, shas, where=where, params=params, order=order, day=day)
    want = set(shas)
    parts = [(f, [s for s in ss if s in want]) for f, ss in store.part_files(table, day)] if want else []
    parts = [(f, ss) for f, ss in parts if ss]
    if not parts:
        return None
    pairs = [(f, s) for f, ss in parts for s in ss]
    src = "read_parquet(?::VARCHAR[], hive_partitioning = true, union_by_name = true, filename = true)"
    con.execute(
        "CREATE OR REPLACE TEMP TABLE use AS SELECT unnest(?::VARCHAR[]) AS filename, unnest(?::VARCHAR[]) AS sha",
        [[f for f, _ in pairs], [s for _, s in pairs]],
    )
    files = [f for f, _ in parts]
    if order == _RUN_ORDER and table != "runs":
        # a date's rows are placed by that date's runs only (a run and its rows share its date's
        # partition): a year of runs read for every date was most of a cold analysis
        runs = [(f, [s for s in ss if s in want]) for f, ss in store.part_files("runs", day)]
        rpairs = [(f, s) for f, ss in runs for s in ss]
        if not rpairs:
            return None
        con.execute(
            "CREATE OR REPLACE TEMP TABLE use_runs AS SELECT unnest(?::VARCHAR[]) AS filename, "
            "unnest(?::VARCHAR[]) AS sha",
            [[f for f, _ in rpairs], [s for _, s in rpairs]],
        )
        sql = (
            f"SELECT t.* EXCLUDE (day, file_sha, seq, filename) FROM {src} AS t "
            f"SEMI JOIN use AS u ON t.filename = u.filename AND t.file_sha = u.sha "
            f"JOIN (SELECT r.run_id, r.seat AS o_seat, r.date AS o_date, r.pass AS o_pass FROM {src} AS r "
            f"SEMI JOIN use_runs AS v ON r.filename = v.filename AND r.file_sha = v.sha) AS o USING (run_id) "
            f"WHERE true {where} ORDER BY o_seat, o_date, o_pass, t.run_id, t.seq"
        )
        args = [files, sorted({f for f, _ in runs}), *params]
    else:
        sql = (
            f"SELECT t.* EXCLUDE (day, file_sha, seq, filename) FROM {src} AS t "
            f"SEMI JOIN use AS u ON t.filename = u.filename AND t.file_sha = u.sha "
            f"WHERE true {where} ORDER BY {order}"
        )
        args = [files, *params]
    try:
        return con.sql(sql, params=args).to_arrow_table()
    except duckdb.Error as exc:
        where_ = f"{table}/day={day}" if day else table
        raise StoreDamaged(
            f"damaged store: a part of {store.root / where_} cannot be read "
            f"({' '.join(str(exc).split())[:200]}); `benchreport store check --store DIR`"
        ) from None


def _select_lake(con, store, table: str, shas, *, where: str, params, order: str, day: str | None) -> pa.Table | None:
    """`_select` of a DuckLake store: the rows of the (version, batch) pairs in use, by SQL."""
    pairs = store.use_pairs(shas)
    if not len(pairs) or not store.has(table) or not store.has("runs"):
        return None
    con.register("use_pairs", pairs)
    on_day = "WHERE day = $day" if day is not None else ""
    args = {"day": str(day)} if day is not None else {}

    def rows(t: str) -> str:
        return (
            f"(SELECT * FROM {store.table_sql(t)} {on_day}) AS x SEMI JOIN use_pairs AS u "
            "ON x.file_sha = u.sha AND x.batch = u.b"
        )

    extra = " EXCLUDE (day, file_sha, seq, batch)"
    if order == _RUN_ORDER and table != "runs":
        sql = (
            f"SELECT t.*{extra} FROM (SELECT x.* FROM {rows(table)}) AS t "
            f"JOIN (SELECT x.run_id, x.seat AS o_seat, x.date AS o_date, x.pass AS o_pass FROM {rows('runs')}) AS o "
            f"USING (run_id) WHERE true {where} ORDER BY o_seat, o_date, o_pass, t.run_id, t.seq"
        )
    else:
        sql = f"SELECT t.*{extra} FROM (SELECT x.* FROM {rows(table)}) AS t WHERE true {where} ORDER BY {order}"
    if params:
        raise ValueError("a DuckLake store's reads take no positional parameters")
    try:
        return con.sql(sql, params=args or None).to_arrow_table()
    except duckdb.Error as exc:
        where_ = f"{table}, day {day}" if day else table
        raise StoreDamaged(
            f"damaged store: {store}: {where_} cannot be read ({' '.join(str(exc).split())[:400]}); "
            "`benchreport store check --store STORE`"
        ) from None
    finally:
        con.unregister("use_pairs")


def _table(con, store, name: str, shas, source: str | None = None) -> pd.DataFrame:
    arrow = _select(con, store, source or name, shas)
    if arrow is None:
        return frame_from_arrow(name, pa.table({c: pa.nulls(0) for c in TABLE_COLUMNS[name]}))
    return frame_from_arrow(name, arrow)


def _seats(con, store, shas) -> tuple[pd.DataFrame, pd.DataFrame]:
    """seats and components rebuilt from the per-run rows, as build_tables folds them."""
    rows = _select(con, store, "seat_runs", shas)
    seat_runs = rows.to_pylist() if rows is not None else []
    seats: dict[str, dict] = {}
    for r in seat_runs:
        merge_seat_row(seats, r)
    comp = _select(con, store, "component_runs", shas)
    comp_runs = {k: [] for k in COMPONENT_RUN_COLUMNS}
    for r in comp.to_pylist() if comp is not None else []:
        for k in comp_runs:
            comp_runs[k].append(r.get(k))
    seat_cols = {k: [s[k] for s in seats.values()] for k in TABLE_COLUMNS["seats"]}
    return tidy_frame("seats", seat_cols), tidy_frame("components", first_run_components(comp_runs, seat_runs))


def read_tables(store: Store, *, with_requests: bool = False) -> Tables:
    """Every tidy table of the store's versions in use; requests empty unless `with_requests`
    (a year of them does not fit in memory: use `StoreRequests`)."""
    store = store.snapshot()
    con = connect(store)
    shas = store.current_shas()
    seats, components = _seats(con, store, shas)
    tables = {
        name: _table(con, store, name, shas) for name in ("runs", "measurements", "exams", "exam_items", "events")
    }
    requests = _table(con, store, "requests", shas if with_requests else [])
    return Tables(seats=seats, components=components, requests=requests, **tables)


class StoreRequests:
    """Request groups of a store, one date at a time (benchreport.stats.requests.RequestSource).

    Each date's group summaries are cached in `STORE/.cache/`, keyed by the file versions of
    that date (and the code's summary version): a new night computes its own summaries and
    reads every other night's from the cache, with the same numbers. A date without a cache
    entry is read from the figures the ingest kept (`pass_figures`); `kept=False` computes every
    such date by SQL from its request rows instead (the route of before, for comparison).
    """

    def __init__(self, store: Store, runs: pd.DataFrame, *, cache: bool = True, cache_root=None, kept: bool = True):
        self.store = store = store.snapshot()
        self.cache_root = Path(cache_root) if cache_root is not None else store.root
        self.shas = store.current_shas()
        self.day_of = dict(zip(runs["run_id"].astype(str).tolist(), runs["date"].astype(str).tolist()))
        self._files_of: dict[str, set] = {}
        for d, sha in zip(runs["date"].astype(str), runs["source_sha256"].astype(str)):
            self._files_of.setdefault(d, set()).add(sha)
        self._sha_of = dict(zip(runs["run_id"].astype(str).tolist(), runs["source_sha256"].astype(str).tolist()))
        self._runs_of: dict[str, list[str]] | None = None  # date -> its runs (made when first needed)
        self.cache, self.kept = cache, kept
        self.computed: list[str] = []  # dates whose summaries were not read from the cache
        self.by_query: list[str] = []  # versions whose figures were computed from their request rows now
        self._con = connect(store)
        self._cache: tuple[str, FrameSource] | None = None

    def _day(self, day: str) -> FrameSource:
        if self._cache is None or self._cache[0] != day:
            arrow = _select(self._con, self.store, "requests", self.shas, day=day)
            frame = frame_from_arrow("requests", arrow) if arrow is not None else None
            self._cache = (day, FrameSource(frame))
        return self._cache[1]

    def groups(self) -> Iterator[RequestGroup]:
        for day in sorted(set(self.day_of.values())):
            yield from self._day(day).groups()

    def _cache_path(self, day: str):
        key = hashlib.sha256(
            ("\n".join([day, str(SUMMARY_VERSION), *sorted(self._files_of.get(day, ()))])).encode()
        ).hexdigest()[:24]
        return self.cache_root / ".cache" / "summaries" / f"{day}-{key}.json"

    def summaries(self, days=None) -> Iterator[GroupSummary]:
        """Every group's summary of the dates (all by default), date by date: from the cache, and
        the dates without a cache entry from the figures the ingest kept, a version without them
        computed by SQL (`benchreport.store.figures`, bit for bit `summarise`'s), one query a
        batch of dates (`date_batches`: bounded memory), each date then cached. A damaged entry
        is computed again."""
        days = sorted(set(self.day_of.values())) if days is None else list(days)
        missing = [day for day in days if not (self.cache and self._cache_path(day).is_file())]
        runs_on = Counter(self.day_of.values())
        batch_of = {day: batch for batch in date_batches(missing, runs_on) for day in batch}
        computed: dict = {}
        for day in days:
            cached = None if day in batch_of else _read_json(self._cache_path(day))
            if cached is not None:
                yield from cached
                continue
            if day not in computed:
                computed = self._batch(batch_of.get(day, [day]))
            day_summaries = computed.pop(day)
            self.computed.append(day)
            if self.cache:
                _write_json(self._cache_path(day), [_summary_to_json(s) for s in day_summaries])
            yield from day_summaries

    def _batch(self, days: list[str]) -> dict[str, list[GroupSummary]]:
        """The summaries of some dates not in the cache: kept, else computed (see `summaries`)."""
        if self._runs_of is None:
            self._runs_of = {}
            for run, day in self.day_of.items():
                self._runs_of.setdefault(day, []).append(run)
        run_shas = {r: self._sha_of[r] for d in days for r in self._runs_of.get(d, ()) if r in self._sha_of}
        if not self.kept:
            self.by_query += sorted(set(run_shas.values()) & set(self.shas))
            return store_summaries(self._con, self.store, self.shas, days)
        out, missing = kept_summaries(self._con, self.store, self.shas, days, run_shas)
        self.by_query += missing
        return out

    def group(self, key: tuple) -> RequestGroup:
        return self._day(self.day_of[str(key[0])]).group(key)

    def day_token(self, date: str) -> str:
        """What the request records of one date (YYYY-MM-DD) are: their file versions
        (benchreport.days.entries keys a date's cells by it)."""
        shas = sorted(sha for d, s in self._files_of.items() if d[:10] == date for sha in s)
        return hashlib.sha256("\n".join([str(SUMMARY_VERSION), *shas]).encode()).hexdigest()

    def only(self, dates) -> "_Dates":
        """The same source restricted to some dates (YYYY-MM-DD)."""
        return _Dates(self, set(dates))

    def requests_of(self, run_ids: set[str]) -> pd.DataFrame:
        """The request records of some runs, in memory (the runs a report describes)."""
        frames = []
        for day in sorted({self.day_of[r] for r in run_ids if r in self.day_of}):
            arrow = _select(self._con, self.store, "requests", self.shas, day=day)
            if arrow is not None:
                f = frame_from_arrow("requests", arrow)
                frames.append(f[f["run_id"].astype(str).isin(run_ids)])
        if not frames:
            return frame_from_arrow("requests", pa.table({c: pa.nulls(0) for c in TABLE_COLUMNS["requests"]}))
        return pd.concat(frames, ignore_index=True)


class _Dates:
    """A StoreRequests seen through some dates only (the dates a day cache does not hold)."""

    def __init__(self, source: StoreRequests, dates: set):
        self.source, self.dates = source, dates

    def summaries(self) -> Iterator[GroupSummary]:
        return self.source.summaries(days=[d for d in sorted(set(self.source.day_of.values())) if d[:10] in self.dates])

    def group(self, key: tuple) -> RequestGroup:
        return self.source.group(key)


def _summary_to_json(s: GroupSummary) -> dict:
    return {
        "key": list(s.key),
        "seat": s.seat,
        "date": s.date,
        "pass": s.pass_,
        "n_requests": s.n_requests,
        "n_failed": s.n_failed,
        "stats": {m: [v, n, None if r != r else r] for m, (v, n, r) in s.stats.items()},
    }


def _summary_from_json(d: dict) -> GroupSummary:
    stats = {m: (v, int(n), float("nan") if r is None else float(r)) for m, (v, n, r) in d["stats"].items()}
    key = (str(d["key"][0]), str(d["key"][1]), int(d["key"][2]))
    return GroupSummary(key, d["seat"], d["date"], int(d["pass"]), int(d["n_requests"]), int(d["n_failed"]), stats)


def _read_json(path) -> list[GroupSummary] | None:
    """A date's cached summaries, or None when missing or damaged (then computed again)."""
    try:
        return [_summary_from_json(s) for s in json.loads(path.read_text(encoding="utf-8"))]
    except Exception:  # noqa: BLE001 - any unreadable entry is recomputed, never trusted
        return None


def _write_json(path, data) -> None:
    """Write a cache file atomically (a killed build leaves no half-written entry); a cache that
    cannot be written is skipped (the numbers are the same, only not kept)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_text(json.dumps(data, allow_nan=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        return
