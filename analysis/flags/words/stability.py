"""Words for the stability findings: drift between passes and warm-up exclusion.

The warm-up sentences are written here only: the flag's message, its sentence in "What
these numbers will not carry", and the report's summary of seats whose runs do not say
(`warmup_unknown_summary`).
"""
from __future__ import annotations

from benchreport import format as F

from ..rules.stability import Drift, Warmup
from ._common import combines, generic, more, phrase, writes

__all__ = ["drift", "warmup", "warmup_sentences", "warmup_unknown_summary"]


@writes(Drift)
def drift(f: Drift) -> str:
    seat, cl = f.seats[0], f.cells
    if f.code == "drift.warmup":
        parts = [f"{phrase(c)} {'climbed' if c.total_change > 0 else 'fell'} {F.series(c.values, ' → ')} "
                 f"{F.unit_of(c.metric)} ({F.pct(c.total_change, signed=True)})".replace("  ", " ") for c in cl[:3]]
        return (f"{seat} on {f.date}: {'; '.join(parts)}{more(3, len(cl))} across consecutive passes, so the seat "
                "was not at steady state. Report the median and the range; the first passes are not representative.")
    parts = []
    for c in cl[:3]:
        spread = f"{F.ratio(c.spread)}-fold" if c.spread is not None else "spread n/a"
        parts.append(f"{phrase(c)} ranged {F.num(min(c.values))}–{F.num(max(c.values))} {F.unit_of(c.metric)} "
                     f"over {c.n_passes} passes ({spread}, CV {F.pct(c.cv)})".replace("  ", " "))
    return (f"{seat} on {f.date}: {'; '.join(parts)}{more(3, len(cl))}. "
            "One pass is not representative of this seat; report the median and the range.")


def _runs_say(included: bool) -> str:
    if included:
        return "measured the warm-up requests too, so {their} figures include start-up effects."
    return "{do} not say whether warm-up requests were excluded, so {their} first requests may carry start-up effects."


@writes(Warmup)
def warmup(f: Warmup) -> str:
    n = len(f.runs)
    head = f"{f.seats[0]}: {F.plural(n, 'run')} ({F.join_words(f.dates)}) "
    if f.code == "warmup.included":
        return head + _runs_say(True).format(their="the")
    return head + _runs_say(False).format(do="does" if n == 1 else "do", their="the")


@combines("warmup.unknown", "warmup.included")
def warmup_sentences(findings: list[Warmup], messages: list[str]) -> list[str]:
    """The seats (and how many runs) whose runs do not say, or say warm-up was measured, in one sentence."""
    if len(findings) == 1:
        return generic(messages)
    seats = F.join_words([f"{f.seats[0]} ({F.plural(len(f.runs), 'run')})" for f in findings])
    included = findings[0].code == "warmup.included"
    return [f"The runs of {seats} " + _runs_say(included).format(do="do", their="their")]


def warmup_unknown_summary(seats: list[str]) -> str:
    """The report's one sentence on every seat whose runs do not say whether warm-up was excluded
    (section "Measurement traps"), seat ids listed at the end."""
    n = len(seats)
    said = _runs_say(False).format(do="does" if n == 1 else "do", their="their").rstrip(".")
    who = F.plural(n, "seat's runs", "seats' runs")
    return f"{who} {said}: {', '.join(seats)}."
