"""Faults and failed requests: faults, crashes and defects recorded in the runs, and requests
that failed (spec/flags.md, "Deployment": fault.recorded, fault.unreproduced, requests.failed)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from benchreport import format as F
from benchreport.stats.cells import failed_mask
from benchreport.thresholds import Thresholds

from .._common import int_or_none, plain, used
from ..findings import ABSENT, Finding, Record, key
from .provenance import run_checks

__all__ = [
    "Event",
    "ErrorCount",
    "FailedRun",
    "RequestsFailed",
    "MissingRun",
    "RequestsMissing",
    "ERROR_EXAMPLES",
    "faults",
    "requests_failed",
    "requests_missing",
]

#: how many kinds of error message a finding quotes per run
ERROR_EXAMPLES = 2
#: an error message is quoted up to this many characters, cut at a word's end (enough for what
#: failed and why: "Bad Request: This model's maximum context length is 70 tokens. However, you
#: requested 84 tokens"; each run file keeps it whole)
ERROR_CHARS = 110


@dataclass(frozen=True, kw_only=True)
class Event(Finding):
    """A fault or crash (fault.recorded), one not seen again (fault.unreproduced), a defect (defect.open)."""

    CODES = ("fault.recorded", "fault.unreproduced", "defect.open")
    kind: str
    run_id: str
    date: str
    at: int | None = key("concurrency")
    reproduced: bool | None
    message: str


@dataclass(frozen=True, kw_only=True)
class ErrorCount(Record):
    """One kind of error message (messages equal but for their numbers), an example and how many."""

    error: str
    count: int
    #: how many different messages of this kind there were (they differ in their numbers)
    variants: int = 1


@dataclass(frozen=True, kw_only=True)
class FailedRun(Record):
    run_id: str
    date: str
    pass_: int = key("pass")
    workloads: list[str]
    concurrencies: list[int]
    failed: int
    requests: int
    share: float
    errors: list[ErrorCount]


@dataclass(frozen=True, kw_only=True)
class RequestsFailed(Finding):
    """Failed requests of one seat, run by run: `requests` are those of the runs with failures,
    `seat_requests` and `seat_runs` all the seat's request records and the runs that hold them
    (the failures' scope: "18 of 38 requests in 2 runs failed, 2% of the seat's 1,040")."""

    CODES = ("requests.failed",)
    failed: int
    requests: int
    worst_share: float
    runs: list[FailedRun]
    thresholds: dict[str, float]
    seat_requests: int = ABSENT
    seat_runs: int = ABSENT


@dataclass(frozen=True, kw_only=True)
class MissingRun(Record):
    run_id: str
    date: str
    pass_: int = key("pass")
    workload: str | None
    concurrency: int | None
    asked: int
    at_least: bool
    kept: int
    field: str | None
    basis: str | None


@dataclass(frozen=True, kw_only=True)
class RequestsMissing(Finding):
    """Requests a harness was asked to send (or must have sent) that its files do not hold, run
    by run (`missing` is a lower bound when any run's count is one)."""

    CODES = ("requests.missing",)
    harness: str | None
    missing: int
    at_least: bool
    runs: list[MissingRun]


def faults(events: pd.DataFrame) -> list[Event]:
    """`fault.recorded` (fault or crash, warn), `fault.unreproduced` (recorded as not seen again,
    info) and `defect.open` (a defect, warn), one finding per event."""
    if events is None or events.empty:
        return []
    out = []
    for r in events.itertuples(index=False):
        kind = str(r.kind)
        if kind not in ("fault", "crash", "defect"):
            continue
        conc = int_or_none(r.concurrency)
        ev = dict(
            kind=kind,
            run_id=str(r.run_id),
            date=str(r.date),
            at=conc,
            reproduced=None if F.missing(r.reproduced) else bool(r.reproduced),
            message=str(r.message),
        )
        head = dict(seats=(str(r.seat),), concurrency=conc)
        if kind == "defect":
            out.append(Event(code="defect.open", severity="warn", **head, **ev))
            continue
        out.append(Event(code="fault.recorded", severity="warn", **head, **ev))
        if ev["reproduced"] is False:
            out.append(Event(code="fault.unreproduced", severity="info", **head, **ev))
    return out


_JSON_MESSAGE = re.compile(r'"(?:message|detail|error)"\s*:\s*"((?:[^"\\]|\\.)*)')
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")


def _error_text(error, finish_reason) -> str:
    """The error as a reader wants it: an OpenAI-style JSON body's `message` in place of the body
    (`Bad Request: This model's maximum context length is 70 tokens. ...`), whitespace made single,
    at most ERROR_CHARS characters cut at a word's end."""
    if not (isinstance(error, str) and error.strip()):
        return f"finish_reason {finish_reason}" if isinstance(finish_reason, str) else "failed"
    text = error.strip()
    brace, found = text.find("{"), _JSON_MESSAGE.search(text)
    if found and brace >= 0 and found.start() > brace:
        text = (text[:brace].strip() + " " + found.group(1).replace('\\"', '"')).strip()
    return F.words_cut(" ".join(text.split()), ERROR_CHARS)


def error_counts(texts) -> list[ErrorCount]:
    """Error messages grouped by their shape (equal but for their numbers), most frequent first,
    each with its first message as the example: "3× ... you requested 84 tokens ..." with
    variants 3 rather than three near-identical quotes."""
    kinds: dict[str, list] = {}
    for text in texts:
        kinds.setdefault(_NUMBERS.sub("#", text), []).append(text)
    ranked = sorted(kinds.values(), key=lambda seen: -len(seen))  # stable: first seen first among ties
    return [ErrorCount(error=seen[0], count=len(seen), variants=len(set(seen))) for seen in ranked[:ERROR_EXAMPLES]]


def _failed_run(run_id, g: pd.DataFrame) -> FailedRun:
    n_failed = int(g["_failed"].sum())
    bad = g.loc[g["_failed"]]
    texts = [
        _error_text(e, f)
        for e, f in zip(
            bad["error"] if "error" in g else [None] * n_failed,
            bad["finish_reason"] if "finish_reason" in g else [None] * n_failed,
        )
    ]
    return FailedRun(
        run_id=str(run_id),
        date=str(g["date"].iloc[0]),
        pass_=int(g["pass"].iloc[0]),
        workloads=sorted({str(w) for w in g["workload"].dropna()}),
        concurrencies=sorted({int(c) for c in g["concurrency"].dropna()}),
        failed=n_failed,
        requests=int(len(g)),
        share=n_failed / len(g),
        errors=error_counts(texts),
    )


def requests_failed(
    requests: pd.DataFrame | None, runs: pd.DataFrame | None = None, *, thresholds: Thresholds
) -> list[RequestsFailed]:
    """`requests.failed`: requests of a run that failed (an error, or finish_reason error/cancelled/incomplete).

    One finding per seat, with each run's failed share and the errors seen. Severity:
    critical above `failed_critical` of a run's requests (the successful ones are not
    representative of the seat), warn above `failed_warn`, info otherwise. The figures
    are of the successful requests only (benchreport.stats.cells).
    """
    if requests is None or not len(requests):
        return []
    failed = failed_mask(requests)
    if not failed.any():
        return []
    by_seat: dict[str, list[FailedRun]] = {}
    for (seat, run_id), g in requests.assign(_failed=failed).groupby(["seat", "run_id"], sort=True):
        if g["_failed"].any():
            by_seat.setdefault(str(seat), []).append(_failed_run(run_id, g))
    seat_rows = requests.groupby("seat")["run_id"].agg(["size", "nunique"])
    out = []
    for seat, items in sorted(by_seat.items()):
        worst = max(i.share for i in items)
        sev = "critical" if worst > thresholds.failed_critical else "warn" if worst > thresholds.failed_warn else "info"
        out.append(
            RequestsFailed(
                code="requests.failed",
                severity=sev,
                seats=(seat,),
                failed=sum(i.failed for i in items),
                requests=sum(i.requests for i in items),
                worst_share=plain(worst),
                runs=items,
                thresholds=used(thresholds, "failed_warn", "failed_critical"),
                seat_requests=int(seat_rows.loc[seat, "size"]),
                seat_runs=int(seat_rows.loc[seat, "nunique"]),
            )
        )
    return out


def requests_missing(runs: pd.DataFrame | None) -> list[RequestsMissing]:
    """`requests.missing` (warn): requests a harness was asked to send, or must have sent, that its
    files do not hold (issue 26). The importers state them (`runs.figure_checks`, metric `sent`):
    llmperf's worker threads each send at least one request and a failure ends its thread before
    it is written; a genai-bench run that ended before its time limit stopped at its request
    limit. A harness that drops requests mostly drops its failures, so the failure share and the
    figures are of the requests kept. One finding per seat and harness."""
    by_seat: dict[tuple, list[MissingRun]] = {}
    for r, k in run_checks(runs):
        if k.get("metric") != "sent" or float(k["recomputed"]) >= float(k["reported"]):
            continue
        harness = None if F.missing(r.get("harness")) else str(r["harness"])
        field_ = k.get("field") if isinstance(k.get("field"), str) else None
        by_seat.setdefault((str(r["seat"]), harness), []).append(
            MissingRun(
                run_id=str(r["run_id"]),
                date=str(r["date"]),
                pass_=int(r["pass"]),
                workload=k.get("workload") if isinstance(k.get("workload"), str) else None,
                concurrency=int_or_none(k.get("concurrency")),
                asked=int(k["reported"]),
                at_least=bool(k.get("at_least")),
                kept=int(k["recomputed"]),
                field=field_,
                basis=k.get("basis") if isinstance(k.get("basis"), str) else None,
            )
        )
    out = []
    for (seat, harness), items in sorted(by_seat.items(), key=lambda kv: (kv[0][0], kv[0][1] or "")):
        items.sort(key=lambda i: (i.date, i.pass_, i.run_id, i.concurrency or 0))
        out.append(
            RequestsMissing(
                code="requests.missing",
                severity="warn",
                seats=(seat,),
                harness=harness,
                missing=sum(i.asked - i.kept for i in items),
                at_least=any(i.at_least for i in items),
                runs=items,
            )
        )
    return out
