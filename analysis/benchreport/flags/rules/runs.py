"""Which runs carry which cell, and what each run says about how it measured (built once).

Shared by `sample.mixed_runs` (runs pooled as passes of one cell), `sample.mixed_conditions`
(runs one label groups that sent different loads) and `compare.not_like_for_like` (the runs
behind each side of a comparison).
"""

from __future__ import annotations

import json
import weakref

import pandas as pd

from benchreport import format as F
from benchreport.columns import REQUEST_METRICS

from .._common import int_or_none, na, plain, settings, wl

__all__ = ["LIKE_FIELDS", "RunIndex", "seat_keys"]

#: run fields that change what is measured (spec/flags.md compare.not_like_for_like); the
#: seat's `settings` are compared too, as "settings.KEY"
LIKE_FIELDS = ("harness", "probe", "max_tokens", "temperature", "thinking")


#: what the profile keeps of a run's load (benchreport.conditions): its id, words and description
_LOAD_FIELDS = ("load_id", "load_label", "load")


def seat_keys(m: pd.DataFrame) -> dict[str, set]:
    """seat -> set of (workload, concurrency, metric) it has measurements for."""
    return {
        str(s_): set(
            zip([na(x) for x in g["workload"]], [int_or_none(x) for x in g["concurrency"]], g["metric"].astype(str))
        )
        for s_, g in m.groupby("seat")
    }


class RunIndex:
    """Runs by cell, and each run's measuring profile.

    Keys are plain Python values so that a comparison row is a dictionary lookup, not a
    scan of the measurements (a fleet has thousands of comparison rows).
    """

    _last: tuple = (None, None)  # (weak reference to the tables, their index): two rules share one

    @classmethod
    def of(cls, tables) -> "RunIndex":
        """The index of these tables, built once for the rules of one analysis."""
        ref, index = cls._last
        if ref is not None and ref() is tables:
            return index
        index = cls(tables)
        cls._last = (weakref.ref(tables), index)
        return index

    def __init__(self, tables):
        self.by_cell = _by_key(tables.measurements, ["seat", "date", "workload", "concurrency", "metric"])
        self.by_req = _by_key(tables.requests, ["seat", "date", "workload", "concurrency"])
        self.profiles = _profiles(tables.runs)
        self._cache: dict[frozenset, dict] = {}
        self._method_of: dict[str, tuple] = {}  # run_id -> (harness group or harness, probe, load id)

    def cell_runs(self, seat, workload, concurrency, metric, date=None) -> set:
        """run_ids carrying a seat's figures for one cell (measurements; requests for request metrics)."""
        key = (str(seat), None if date is None else str(date), wl(workload), int_or_none(concurrency))
        ids = self.by_cell.get(key + (str(metric),), set())
        if not ids and metric in REQUEST_METRICS:
            ids = self.by_req.get(key, set())
        return ids

    def by_method(self, ids: set, *, by_load: bool = True) -> dict[tuple, set]:
        """`ids` split by (harness group or harness, probe, load id): the runs that can be passes of one
        cell (benchreport.stats.cells keys cells by all three); without `by_load`, by the first two."""
        parts: dict[tuple, set] = {}
        method = self._method_of
        for rid in ids:
            k = method.get(rid)
            if k is None:
                p = self.profiles.get(rid, {})
                k = method[rid] = (
                    str(p.get("harness_group") or p.get("harness")),
                    str(p.get("probe")),
                    str(p.get("load_id") or ""),
                )
            parts.setdefault(k if by_load else k[:2], set()).add(rid)
        return {k: parts[k] for k in sorted(parts)}

    def labelled_cells(self) -> list[tuple]:
        """(seat, date, workload, concurrency, metric or None, harness, probe, {load id: run_ids}) where a
        stated probe groups runs of more than one recorded load (each load its own cell)."""
        out = []
        for seat, date, w, c, metric, all_ids in self._day_cells():
            for (h, probe), ids in self.by_method(all_ids, by_load=False).items():
                if probe in ("None", ""):
                    continue
                loads: dict[str, set] = {}
                for rid in ids:
                    loads.setdefault(str(self.profiles.get(rid, {}).get("load_id") or ""), set()).add(rid)
                if len(loads) > 1:
                    out.append((seat, date, w, c, metric, h, probe, loads))
        return out

    def _day_cells(self) -> list[tuple]:
        cells = [(k[0], k[1], k[2], k[3], k[4], ids) for k, ids in self.by_cell.items() if k[1] is not None]
        return cells + [(k[0], k[1], k[2], k[3], None, ids) for k, ids in self.by_req.items() if k[1] is not None]

    def pooled_cells(self) -> list[tuple]:
        """(seat, date, workload, concurrency, metric or None, run_ids) of the runs the statistics pool
        as passes of one cell: per day, split by harness, probe and load (benchreport.stats.cells)."""
        return [
            (seat, date, w, c, metric, ids)
            for seat, date, w, c, metric, all_ids in self._day_cells()
            for ids in self.by_method(all_ids).values()
        ]

    def load_of(self, rid: str) -> tuple[str | None, dict | None]:
        """(the load in words, the load description) of a run; (None, None) when it states none."""
        p = self.profiles.get(str(rid), {})
        text = p.get("load")
        return p.get("load_label"), (json.loads(text) if isinstance(text, str) and text else None)

    def profile(self, ids: set) -> dict[str, set]:
        """field -> set of stated values over the runs (unstated left out); settings keys as 'settings.KEY'.
        The load is not among them: the cell key holds it (`load_of`)."""
        fs = frozenset(ids)
        if fs not in self._cache:
            prof: dict[str, set] = {}
            for rid in sorted(fs):
                for f, v in self.profiles.get(rid, {}).items():
                    if f in _LOAD_FIELDS:
                        continue
                    prof.setdefault(f, set())
                    if v is not None:
                        prof[f].add(v)
            self._cache[fs] = prof
        return self._cache[fs]


def _by_key(df: pd.DataFrame | None, cols: list[str]) -> dict[tuple, set]:
    """(seat, date, workload, concurrency[, metric]) -> run_ids, and the same with date None (any day).

    One pass over the distinct (key, run) rows, each column turned into plain Python values in
    one call (value by value, pandas' Arrow-backed text was most of a year's flags)."""
    out: dict[tuple, set] = {}
    if df is None or not len(df):
        return out
    rows = df[cols + ["run_id"]].drop_duplicates()
    workload = rows[cols[2]].astype(object)
    conc = [None if v != v else int(v) for v in pd.to_numeric(rows[cols[3]], errors="coerce").astype(float).tolist()]
    parts = [
        rows[cols[0]].astype(str).tolist(),
        rows[cols[1]].astype(str).tolist(),
        workload.where(workload.notna(), None).tolist(),
        conc,
        *(rows[c].astype(str).tolist() for c in cols[4:]),
    ]
    for key, rid in zip(zip(*parts), rows["run_id"].astype(str).tolist()):
        ids = out.get(key)
        if ids is None:
            ids = out[key] = set()
        ids.add(rid)
        any_day = key[:1] + (None,) + key[2:]
        ids = out.get(any_day)
        if ids is None:
            ids = out[any_day] = set()
        ids.add(rid)
    return out


def _profiles(runs: pd.DataFrame | None) -> dict[str, dict]:
    """run_id -> the run's measuring profile (LIKE_FIELDS, harness_group, settings.KEY); runs stating
    the same values share one profile (a year of nightly runs states a few dozen)."""
    out: dict[str, dict] = {}
    if runs is None or not len(runs):
        return out
    names = [*LIKE_FIELDS, "harness_group", *_LOAD_FIELDS, "settings"]
    arrays = [runs[f].astype(object).to_numpy() if f in runs else [None] * len(runs) for f in names]
    seen: dict[tuple, dict] = {}
    for rid, *values in zip(runs["run_id"].astype(object).to_numpy(), *arrays):
        try:
            key = tuple(None if F.missing(v) else v for v in values)
            prof = seen.get(key)
        except TypeError:  # an unhashable value (settings as a dict): no sharing
            key, prof = None, None
        if prof is None:
            prof = {f: (None if F.missing(v) else plain(v)) for f, v in zip(names[:-1], values[:-1])}
            for k, v in settings(values[-1]).items():
                prof["settings." + k] = json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v
            if key is not None:
                seen[key] = prof
        out[str(rid)] = prof
    return out
