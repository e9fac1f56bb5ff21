"""Words for the stability findings: drift between passes and warm-up exclusion.

The warm-up sentences are written here only: the flag's message, its sentence in "What
these numbers will not carry", and the report's summary of seats whose runs do not say
(`warmup_unknown_summary`).
"""

from __future__ import annotations

from benchreport import format as F
from benchreport.columns import higher_is_better

from ..rules.stability import Drift, Warmup
from ._common import LISTED, combines, generic, more, phrase, writes

__all__ = ["drift", "warmup", "warmup_sentences", "warmup_unknown_summary"]


@writes(Drift)
def drift(f: Drift) -> str:
    seat, cl = f.seats[0], f.cells
    if f.code == "drift.warmup":
        better = [_improved(c) for c in cl]
        parts = [
            f"{phrase(c)}{_by(c)} {'rose' if c.total_change > 0 else 'fell'} {F.series(c.values, ' → ')} "
            f"{F.unit_of(c.metric)} ({F.pct(c.total_change, signed=True)}, "
            f"{'better' if b else 'worse'} each pass)".replace("  ", " ")
            for c, b in zip(cl[:LISTED], better[:LISTED])
        ]
        if all(better):
            why = (
                "getting better pass after pass, as a warm-up does (caches, compilation, autotuning), so the "
                "seat was not at steady state. Report the later passes' level and the range; the first passes "
                "are not representative."
            )
        elif not any(better):
            why = (
                "getting worse pass after pass, which a warm-up does not do (throttling, memory or queue "
                "growth, a neighbour's load?), so the seat was not at steady state. Report the range and find "
                "the cause before quoting any one pass."
            )
        else:
            why = (
                "moving steadily in opposite directions, better in some and worse in others, so the seat was "
                "not at steady state. Report the median and the range; no one pass is representative."
            )
        return f"{seat} on {f.date}: {'; '.join(parts)}{more(LISTED, len(cl))} across consecutive passes: {why}"
    parts = []
    for c in cl[:LISTED]:
        spread = f"{F.ratio(c.spread)}-fold" if c.spread is not None else "spread n/a"
        parts.append(
            f"{phrase(c)} ranged {F.num(min(c.values))}–{F.num(max(c.values))} {F.unit_of(c.metric)} "
            f"over {c.n_passes} passes ({spread}, CV {F.pct(c.cv)})".replace("  ", " ")
        )
    return (
        f"{seat} on {f.date}: {'; '.join(parts)}{more(LISTED, len(cl))}. "
        "One pass is not representative of this seat; report the median and the range."
    )


def _improved(c) -> bool:
    """Whether the cell's movement is an improvement (throughput up, latency down)."""
    return (c.total_change > 0) == higher_is_better(str(c.metric))


def _by(c) -> str:
    """' (vllm bench serve)': the harness that measured the cell, where known."""
    h = getattr(c, "harness", None)
    return f" ({h})" if isinstance(h, str) and h else ""


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
