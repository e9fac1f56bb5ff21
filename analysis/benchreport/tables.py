"""Tidy tables from loaded runs: long-form pandas DataFrames with fixed keys, and Parquet I/O.

One row per observation, keys named once in `benchreport.columns`. Delivered tokens include
reasoning tokens (spec): `output_tokens` is all delivered tokens, `reasoning_tokens` the
part of them that was reasoning.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields
from operator import attrgetter
from pathlib import Path

import msgspec
import numpy as np
import pandas as pd
import pyarrow as pa

from benchreport import conditions
from benchreport.columns import COMPONENT_RUN_COLUMNS, MEASUREMENT_FIELDS, NOT_A_COUNT, TABLE_COLUMNS, TABLE_SCHEMAS
from benchreport.load import LoadResult, native
from benchreport._memory import gc_paused


@dataclass
class Tables:
    """The tidy tables of one data set (see benchreport.columns.TABLE_COLUMNS)."""

    seats: pd.DataFrame
    components: pd.DataFrame
    runs: pd.DataFrame
    measurements: pd.DataFrame
    requests: pd.DataFrame
    exams: pd.DataFrame
    exam_items: pd.DataFrame
    events: pd.DataFrame

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def items(self):
        return [(name, getattr(self, name)) for name in self.names()]


def tidy_frame(name: str, columns: dict[str, list]) -> pd.DataFrame:
    """A DataFrame with the table's columns in order and its dtypes (benchreport.columns.TABLE_SCHEMAS).

    Columns go through Arrow arrays (C speed for lists with None) and come back with
    pandas' nullable dtypes: Int64, boolean, string; float64 with NaN; int64 for `pass`.
    """
    schema = TABLE_SCHEMAS[name]
    n = len(next(iter(columns.values()))) if columns else 0
    arrays = []
    for col in schema.names:
        values = columns.get(col)
        arrays.append(
            pa.array(values if values is not None else [None] * n, type=schema.arrow_type(col), from_pandas=True)
        )
    return schema.from_arrow(pa.Table.from_arrays(arrays, names=schema.names))


def frame_from_arrow(name: str, table: pa.Table) -> pd.DataFrame:
    """A tidy table from Arrow columns (the run store's Parquet), with the dtypes `tidy_frame` gives."""
    return TABLE_SCHEMAS[name].from_arrow(table)


def _day(date: str) -> str:
    return date[:10]


def score_is_a_count(score: float, total: int) -> bool:
    """Whether a 0-100 score can be `100 * k / total` for a whole k, as printed: the nearest
    share is within half a unit of the score's last decimal (88 -> 0.5, 88.2 -> 0.05). A score
    that is not (88.2% of 94 items is 82.9 items) is an average over parts of other sizes or a
    weighted score, not a share of these items."""
    text = repr(float(score))
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 0
    decimals = 0 if text.endswith(".0") else decimals
    k = np.floor(score / 100.0 * total + 0.5)
    return abs(100.0 * k / total - score) <= 0.5 * 10.0**-decimals + 1e-9


def _rounding(score: float, total: int) -> tuple[int, str]:
    exact = score / 100.0 * total
    count = int(np.floor(exact + 0.5))
    if not score_is_a_count(score, total):
        return count, (
            f"{NOT_A_COUNT}{score:g} on a 0-100 scale of {total} items is {exact:.2f} items, no whole "
            f"number ({count} items would be {100.0 * count / total:.2f})"
        )
    return count, f"{score:g} on a 0-100 scale of {total} items = {exact:.2f}, rounded to {count}"


REQUEST_FIELDS = list(native.Request.__struct_fields__)
#: C-level attribute getters: `map(getter, requests)` per field is ~4x faster than a transpose
_REQUEST_GETTERS = [(f, attrgetter(f)) for f in REQUEST_FIELDS]


def build_tables(loaded: LoadResult) -> Tables:
    """Stack validated runs into the tidy tables (pure: no I/O)."""
    with gc_paused():
        return _build_tables(loaded)[0]


def build_store_frames(loaded: LoadResult) -> tuple[Tables, list[dict], dict[str, list]]:
    """The tidy tables plus the per-run seat rows and component rows the run store keeps
    (from them `merge_seat_row` and `first_run_components` rebuild the seats and components)."""
    with gc_paused():
        return _build_tables(loaded)


class _Columns:
    """The growing columns of every tidy table while runs are added in table order, plus the
    per-run seat and component rows the run store keeps."""

    def __init__(self):
        self.seats: dict[str, dict] = {}
        self.tables: dict[str, dict[str, list]] = {
            name: {k: [] for k in TABLE_COLUMNS[name]} for name in Tables.names() if name not in ("seats", "components")
        }
        self.request_keys: list[dict] = []
        self.request_counts: list[int] = []
        self.seat_runs: list[dict] = []  # one seat row per run, for the run store
        self.comp_runs: dict[str, list] = {k: [] for k in COMPONENT_RUN_COLUMNS}

    def append(self, table: str, pairs) -> None:
        """One row of `table` from (column, value) pairs."""
        cols = self.tables[table]
        for k, v in pairs:
            cols[k].append(v)

    def add_run(self, lr) -> None:
        """Every row one loaded run contributes."""
        run, seat = lr.run, lr.run.seat
        day = _day(run.date)
        row = _seat_row(seat)
        merge_seat_row(self.seats, row)
        self.seat_runs.append({**row, "run_id": run.run_id, "date": day, "pass": run.pass_})
        for c in seat.components or ():
            for k, v in (
                ("seat", seat.id),
                ("name", c.name),
                ("component_role", c.role),
                ("license", c.license),
                ("run_id", run.run_id),
            ):
                self.comp_runs[k].append(v)
        self.append("runs", _run_pairs(lr, day))
        keys = {"run_id": run.run_id, "seat": seat.id, "date": day, "pass": run.pass_}
        self.add_measurements(keys, run.measurements or ())
        self.add_requests(keys, run.requests or ())
        for e in run.exams or ():
            self.add_exam(e, run.run_id, seat.id, day)
        for ev in run.events or ():
            self.append(
                "events",
                (
                    *keys.items(),
                    ("kind", ev.kind),
                    ("message", ev.message),
                    ("concurrency", ev.concurrency),
                    ("reproduced", ev.reproduced),
                ),
            )

    def add_measurements(self, keys: dict, ms) -> None:
        meas = self.tables["measurements"]
        if ms:
            for k, v in keys.items():
                meas[k].extend([v] * len(ms))
            for f in MEASUREMENT_FIELDS:
                meas[f].extend([getattr(m, f) for m in ms])

    def add_requests(self, keys: dict, rs) -> None:
        """A run's request fields; its keys are repeated over them once, at the end (`request_columns`)."""
        if rs:
            reqs = self.tables["requests"]
            self.request_keys.append(keys)
            self.request_counts.append(len(rs))
            for f, get in _REQUEST_GETTERS:
                reqs[f].extend(map(get, rs))

    def add_exam(self, e, run_id: str, seat: str, day: str) -> None:
        """One exam result, and its item verdicts where it has them."""
        for it in e.items or ():
            self.append(
                "exam_items",
                (
                    ("run_id", run_id),
                    ("seat", seat),
                    ("date", day),
                    ("benchmark", e.benchmark),
                    ("dimension", e.dimension),
                    ("item_id", it.id),
                    ("correct", it.correct),
                ),
            )
        correct, total, from_items, rounding = _exam_count(e)
        self.append(
            "exams",
            (
                ("run_id", run_id),
                ("seat", seat),
                ("date", day),
                ("benchmark", e.benchmark),
                ("dimension", e.dimension),
                ("correct", correct),
                ("total", total),
                ("score", e.score),
                ("from_items", from_items),
                ("count_rounding", rounding),
                ("measured_on", e.measured_on and _day(e.measured_on)),
                ("from_earlier_run", e.from_earlier_run),
                ("placement_note", e.placement_note),
            ),
        )

    def request_columns(self) -> dict[str, list]:
        """The requests table's columns, the run keys repeated over each run's requests (C speed)."""
        reqs = self.tables["requests"]
        if self.request_counts:
            counts = np.array(self.request_counts)
            for k in ("run_id", "seat", "date", "pass"):
                reqs[k] = np.repeat(np.array([key[k] for key in self.request_keys], dtype=object), counts)
        return reqs

    def frames(self) -> Tables:
        seat_cols = {k: [s[k] for s in self.seats.values()] for k in TABLE_COLUMNS["seats"]}
        frames = {name: tidy_frame(name, cols) for name, cols in self.tables.items() if name != "requests"}
        return Tables(
            seats=tidy_frame("seats", seat_cols),
            components=tidy_frame("components", first_run_components(self.comp_runs, self.seat_runs)),
            requests=tidy_frame("requests", self.request_columns()),
            **frames,
        )


def _seat_row(seat) -> dict:
    """A run's seat as a row of the seats table."""
    place = seat.placement
    return {
        "seat": seat.id,
        "model": seat.model,
        "quantisation": seat.quantisation,
        "engine": seat.engine,
        "role": seat.role,
        "checkpoint_bytes": seat.checkpoint_bytes,
        "nodes": place and place.nodes,
        "gpus_per_node": place and place.gpus_per_node,
        "gpu_memory_bytes": place and place.gpu_memory_bytes,
        "tensor_parallel": place and place.tensor_parallel,
        "interconnect": place and place.interconnect,
    }


def _run_pairs(lr, day: str) -> tuple:
    """A loaded run's row of the runs table, as (column, value) pairs."""
    run, seat, h = lr.run, lr.run.seat, lr.run.harness
    load = msgspec.to_builtins(run.load) if run.load is not None else None
    return (
        ("run_id", run.run_id),
        ("seat", seat.id),
        ("date", day),
        ("pass", run.pass_),
        ("harness", h.name),
        ("harness_version", h.version),
        ("probe", h.probe),
        ("max_tokens", h.max_tokens),
        ("temperature", h.temperature),
        ("thinking", h.thinking),
        ("warmup_excluded", run.warmup_excluded),
        ("settings", json.dumps(seat.settings, sort_keys=True) if seat.settings is not None else None),
        ("quantisation", seat.quantisation),
        ("engine", seat.engine),
        ("source_file", lr.source_file),
        ("source_sha256", lr.sha256),
        ("source_format", lr.source_format),
        ("notes", run.notes),
        ("assumptions", "; ".join(lr.assumptions) if lr.assumptions else None),
        ("harness_group", h.group),
        ("figure_checks", json.dumps(list(lr.checks), sort_keys=True) if lr.checks else None),
        ("load", json.dumps(load, sort_keys=True) if load else None),
        ("load_id", conditions.fingerprint(load) or None),
        ("load_label", conditions.words(load) or None),
    )


def _exam_count(e) -> tuple:
    """(correct, total, from_items, count_rounding) of an exam result: counted from its items, as
    given, or made up from its 0-100 score (`_rounding` says how)."""
    if e.items is not None:
        return sum(i.correct for i in e.items), len(e.items), True, None
    if e.correct is not None:
        return e.correct, e.total, False, None
    correct, rounding = _rounding(e.score, e.total)
    return correct, e.total, False, rounding


def _build_tables(loaded: LoadResult) -> tuple[Tables, list[dict], dict[str, list]]:
    columns = _Columns()
    for lr in sorted(loaded.runs, key=lambda lr: (lr.run.seat.id, _day(lr.run.date), lr.run.pass_, lr.run.run_id)):
        columns.add_run(lr)
    return columns.frames(), columns.seat_runs, columns.comp_runs


def merge_seat_row(seats: dict[str, dict], row: dict) -> None:
    """Fold one run's seat row into `seats` (runs in table order): the first run defines the
    seat; later runs fill what earlier ones left unknown, and the latest role wins."""
    sid = row["seat"]
    if sid not in seats:
        seats[sid] = {k: row[k] for k in TABLE_COLUMNS["seats"]}
        return
    prev = seats[sid]
    for k in TABLE_COLUMNS["seats"]:
        v = row[k]
        if v is not None and (prev.get(k) is None or k == "role"):
            prev[k] = v


def first_run_components(comp_runs: dict[str, list], seat_runs: list[dict]) -> dict[str, list]:
    """The components of each seat as its first run (in table order) names them."""
    first = {}
    for r in seat_runs:
        first.setdefault(r["seat"], r["run_id"])
    keep = [i for i, (s, rid) in enumerate(zip(comp_runs["seat"], comp_runs["run_id"])) if first.get(s) == rid]
    return {k: [comp_runs[k][i] for i in keep] for k in TABLE_COLUMNS["components"]}


def write_parquet(tables: Tables, out_dir: str | os.PathLike) -> list[Path]:
    """Write each table as `OUT/<name>.parquet`; returns the paths written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, df in tables.items():
        path = out / f"{name}.parquet"
        df.to_parquet(path, index=False)
        written.append(path)
    return written


def read_parquet(in_dir: str | os.PathLike) -> Tables:
    """Read tables written by write_parquet (dtypes restored from Parquet metadata)."""
    base = Path(in_dir)
    return Tables(**{name: pd.read_parquet(base / f"{name}.parquet") for name in Tables.names()})
