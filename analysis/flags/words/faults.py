"""Words for faults, crashes, defects and failed requests."""
from __future__ import annotations

from benchreport import format as F

from ..rules.faults import Event, FailedRun, RequestsFailed
from ._common import more, writes

__all__ = ["event", "requests_failed"]


@writes(Event)
def event(f: Event) -> str:
    at = f" at {F.streams(f.at)}" if f.at is not None else ""
    seat, what = f.seats[0], F.first_sentence(f.message)
    if f.code == "fault.unreproduced":
        return (f"{seat}: the {f.kind}{at} on {f.date} did not reproduce, so whether it would recur under "
                "sustained load is unknown.")
    if f.code == "defect.open":
        return f"{seat}: an open defect was recorded{at} ({f.date}): {what}" + (
            " It was not seen again." if f.reproduced is False else "")
    return f"{seat}: a {f.kind} was recorded{at} ({f.date}): {what}" + (
        " It reproduced in a later run." if f.reproduced is True else "")


def _run_phrase(i: FailedRun) -> str:
    where = F.streams(i.concurrencies[0]) if len(i.concurrencies) == 1 else f"pass {i.pass_}"
    errs = ", ".join(f"{e.count}× {e.error}" for e in i.errors)
    return f"{i.failed} of {i.requests} ({F.pct(i.share)}) at {where} on {i.date}: {errs}"


_FAILED_TAIL = {"critical": " So many failed that the successful requests are not representative of the seat: "
                            "do not quote these figures.",
                "warn": " The figures are of the successful requests only.",
                "info": " The figures are of the successful requests only."}


@writes(RequestsFailed)
def requests_failed(f: RequestsFailed) -> str:
    shown = "; ".join(_run_phrase(i) for i in sorted(f.runs, key=lambda i: -i.share)[:3])
    return (f"{f.seats[0]}: {f.failed} of {f.requests} requests failed ({shown}{more(3, len(f.runs), 'runs')})."
            f"{_FAILED_TAIL[f.severity]}")
