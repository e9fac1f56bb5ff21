"""Findings: what a rule found, as typed data, before a word is written.

Each rule (`benchreport.flags.rules`) returns `Finding`s: the code, severity, seats and cell of
spec/flags.md plus typed evidence fields (one dataclass per code family, defined beside its
rules). `benchreport.flags.words` writes a finding's message and its sentences of "What these
numbers will not carry"; `Finding.evidence()` is its `evidence` in flags.json, and
`finding_from_flag` reads one back from a flags row (for the limitations section and for
flags loaded from JSON).

Evidence fields serialise in declaration order under their own name, or under the
`key` of their metadata (`pass_` -> "pass"); a field left `ABSENT` is not written at all
(None is written as null); an `unwritten` field is for the words only. Nested records
(`Record` subclasses) serialise the same way.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

from ._common import plain

__all__ = [
    "ABSENT",
    "Record",
    "CellKey",
    "Finding",
    "key",
    "unwritten",
    "one_cell",
    "finding_from_flag",
    "finding_types",
]


class _Absent:
    """The value of an evidence field that is left out (not null: absent)."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()


def key(name: str, **kwargs):
    """A field written to the evidence under another name (`pass_ = key("pass")`)."""
    return field(metadata={"key": name}, **kwargs)


def unwritten(**kwargs):
    """A field the words use that the evidence does not record (ABSENT when read back from a flag)."""
    return field(default=ABSENT, metadata={"dump": False}, **kwargs)


@dataclass(frozen=True, kw_only=True)
class Record:
    """A record of evidence: serialises its fields, in order, to a JSON-ready dict."""

    _HEAD: ClassVar[frozenset] = frozenset()

    def evidence(self) -> dict:
        out = {}
        for f in fields(self):
            if f.name in self._HEAD or not f.metadata.get("dump", True):
                continue
            v = getattr(self, f.name)
            if v is not ABSENT:
                out[f.metadata.get("key", f.name)] = _dump(v)
        return out

    @classmethod
    def from_evidence(cls, evidence: dict, **head):
        """The record (or finding, with its `head` fields) from its evidence dict."""
        hints = _hints(cls)
        values = dict(head)
        for f in fields(cls):
            if f.name in cls._HEAD or not f.metadata.get("dump", True):
                continue
            k = f.metadata.get("key", f.name)
            if k in evidence:
                values[f.name] = _load(hints[f.name], evidence[k])
        return cls(**values)


def _dump(v):
    if isinstance(v, Record):
        return v.evidence()
    if isinstance(v, dict):
        return {str(k): _dump(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_dump(x) for x in v]
    return plain(v)


_HINTS: dict[type, dict] = {}


def _hints(cls) -> dict:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _load(tp, v):
    """A JSON value back to the declared type: records, lists and tuples of records, dicts of them."""
    if v is None:
        return None
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in args if a is not type(None) and a is not _Absent]
        return _load(inner[0], v) if len(inner) == 1 else v
    if isinstance(tp, type) and is_dataclass(tp) and issubclass(tp, Record):
        return tp.from_evidence(v)
    if origin in (list, tuple) and args:
        items = [_load(args[0], x) for x in v]
        return tuple(items) if origin is tuple else items
    if origin is dict and len(args) == 2:
        return {k: _load(args[1], x) for k, x in v.items()}
    return v


@dataclass(frozen=True, kw_only=True)
class CellKey(Record):
    """A cell as evidence names it (workload, concurrency, metric, statistic); extra fields follow."""

    workload: str | None
    concurrency: int | None
    metric: str | None
    statistic: str | None


_REGISTRY: dict[str, list[type]] = {}


@dataclass(frozen=True, kw_only=True)
class Finding(Record):
    """One finding (spec/flags.md): code, severity, seats, the cell when it concerns one, evidence."""

    _HEAD: ClassVar[frozenset] = frozenset(
        {"code", "severity", "seats", "workload", "concurrency", "metric", "statistic"}
    )
    #: the codes a finding type carries
    CODES: ClassVar[tuple[str, ...]] = ()

    code: str
    severity: str
    seats: tuple[str, ...]
    workload: str | None = None
    concurrency: int | None = None
    metric: str | None = None
    statistic: str | None = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for code in cls.__dict__.get("CODES", ()):
            _REGISTRY.setdefault(code, []).append(cls)

    @classmethod
    def matches(cls, evidence: dict) -> bool:
        """Whether an evidence dict of one of `CODES` is of this type (codes with two shapes say how)."""
        return True

    @property
    def cell(self) -> dict | None:
        """The flag's cell, or None when it concerns no single cell."""
        c = {
            "workload": self.workload,
            "concurrency": self.concurrency,
            "metric": self.metric,
            "statistic": self.statistic,
        }
        return None if all(v is None for v in c.values()) else c


def one_cell(cells: list) -> dict:
    """Head fields that give a finding its cell when exactly one cell is concerned (else none)."""
    if len(cells) != 1:
        return {}
    c = cells[0]
    return {"workload": c.workload, "concurrency": c.concurrency, "metric": c.metric, "statistic": c.statistic}


def finding_types(code: str) -> list[type]:
    """The finding types that carry `code`."""
    return list(_REGISTRY.get(code, ()))


def finding_from_flag(code: str, severity: str, seats, evidence: dict, cell: dict | None = None) -> Finding:
    """The typed finding behind a flag row (or a flags.json record); KeyError for an unknown code."""
    for cls in _REGISTRY[code]:
        if cls.matches(evidence):
            head = {k: v for k, v in (cell or {}).items() if k in ("workload", "concurrency", "metric", "statistic")}
            return cls.from_evidence(evidence, code=code, severity=severity, seats=tuple(seats), **head)
    raise KeyError(f"no finding type of {code} matches its evidence")
