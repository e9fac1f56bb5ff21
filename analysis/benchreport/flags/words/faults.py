"""Words for faults, crashes, defects and failed requests."""

from __future__ import annotations

from benchreport import format as F

from ..findings import ABSENT
from ..rules.faults import Event, FailedRun, MissingRun, RequestsFailed, RequestsMissing
from ._common import more, writes

__all__ = ["event", "requests_failed", "requests_missing"]


@writes(Event)
def event(f: Event) -> str:
    at = f" at {F.streams(f.at)}" if f.at is not None else ""
    seat, what = f.seats[0], F.first_sentence(f.message)
    if f.code == "fault.unreproduced":
        return (
            f"{seat}: the {f.kind}{at} on {f.date} did not reproduce, so whether it would recur under "
            "sustained load is unknown."
        )
    if f.code == "defect.open":
        return f"{seat}: an open defect was recorded{at} ({f.date}): {what}" + (
            " It was not seen again." if f.reproduced is False else ""
        )
    return f"{seat}: a {f.kind} was recorded{at} ({f.date}): {what}" + (
        " It reproduced in a later run." if f.reproduced is True else ""
    )


def _run_phrase(i: FailedRun) -> str:
    where = F.streams(i.concurrencies[0]) if len(i.concurrencies) == 1 else f"pass {i.pass_}"
    errs = "; ".join(_error_phrase(e) for e in i.errors)
    return f"{i.failed} of {i.requests} ({F.pct(i.share)}) at {where} on {i.date}: {errs}"


def _error_phrase(e) -> str:
    """'3× "Bad Request: ... 84 tokens ..." (3 messages of this form, their numbers differ)'."""
    variants = getattr(e, "variants", 1)
    differ = f" ({variants} messages of this form, their numbers differ)" if variants > 1 else ""
    return f"{e.count}× “{e.error}”{differ}"


_FAILED_TAIL = {
    "critical": " So many failed that the successful requests are not representative of the seat: "
    "do not quote these figures.",
    "warn": " The figures are of the successful requests only.",
    "info": " The figures are of the successful requests only.",
}


def _scope(f: RequestsFailed) -> tuple[str, bool]:
    """The failures' scope: their runs, and their share of the seat's requests when the seat has
    more ("in 2 runs ... (2% of the seat's 1,040 requests)"); and whether other runs of the seat
    are unaffected (flags from before the scope was recorded: unknown, so not said)."""
    runs = F.counted(len(f.runs), "run")
    if f.seat_requests is ABSENT or f.seat_runs is ABSENT or f.seat_requests <= f.requests:
        return f" in {runs} failed", False
    share = F.pct(f.failed / f.seat_requests) if f.seat_requests else "–"
    return (
        f" in {runs} failed ({share} of the seat's {F.count(f.seat_requests)} requests in "
        f"{F.counted(f.seat_runs, 'run')})"
    ), f.seat_runs > len(f.runs)


@writes(RequestsFailed)
def requests_failed(f: RequestsFailed) -> str:
    shown = "; ".join(_run_phrase(i) for i in sorted(f.runs, key=lambda i: -i.share)[:3])
    scope, others = _scope(f)
    tail = _FAILED_TAIL[f.severity]
    if f.severity == "critical" and others:
        one = len(f.runs) == 1
        tail = (
            f" So many failed that the successful requests of {'that run' if one else 'those runs'} are not "
            f"representative of the seat: do not quote {'its' if one else 'their'} figures. The seat's other "
            f"{F.counted(f.seat_runs - len(f.runs), 'run')} had no failed request."
        )
    elif f.severity != "critical" and others:
        tail = (
            f" The figures of {'that run' if len(f.runs) == 1 else 'those runs'} are of the successful requests only."
        )
    return f"{f.seats[0]}: {f.failed} of {f.requests} requests{scope}: {shown}{more(3, len(f.runs), 'runs')}.{tail}"


def _missing_phrase(i: MissingRun) -> str:
    where = f"at {F.streams(i.concurrency)} " if i.concurrency is not None else ""
    asked = f"at least {F.count(i.asked)}" if i.at_least else F.count(i.asked)
    why = i.basis.split("; ", 1)[1] if i.basis and "; " in i.basis else (f"`{i.field}`" if i.field else "")
    return f"{where}on {i.date}: {asked} sent{f' ({why})' if why else ''}, {F.count(i.kept)} in the files"


@writes(RequestsMissing)
def requests_missing(f: RequestsMissing) -> str:
    who = f.harness or "the harness"
    shown = "; ".join(_missing_phrase(i) for i in f.runs[:3])
    n = f"at least {F.count(f.missing)}" if f.at_least else F.count(f.missing)
    return (
        f"{f.seats[0]}: {n} request{'' if f.missing == 1 else 's'} {who} sent {'is' if f.missing == 1 else 'are'} "
        f"missing from its files ({shown}{more(3, len(f.runs), 'runs')}). A harness that drops requests mostly "
        "drops its failures, so the failure share and every figure are of the requests it kept: the seat may "
        "have failed more than these files show."
    )
