"""Every sentence the flags say, written from typed findings, in one place.

`message(finding)` is a flag's `message`; `limitation_sentences(code, findings, messages)`
are that code's sentences in "What these numbers will not carry" (several findings of one
code said together where that reads better; otherwise the messages themselves). One module
per family, holding both, so a flag and its limitations sentence cannot disagree:

    sampling, stability, history, traps, comparisons, exams, deployment, faults, provenance

Plain text only: nothing is escaped and no HTML is built (the renderer escapes).
"""

from __future__ import annotations

from benchreport import format as F

from . import comparisons, deployment, exams, faults, harness, history, provenance, sampling, stability, traps  # noqa: F401 (register)
from ._common import COMBINERS, WRITERS, generic
from .stability import warmup_unknown_summary

__all__ = [
    "message",
    "limitation_sentences",
    "says_together",
    "group_lead",
    "condensed_rest",
    "NO_FLAGS",
    "warmup_unknown_summary",
]

NO_FLAGS = "The checks found nothing in these data that limits what the numbers carry: no flag was raised."


def message(finding) -> str:
    """The flag's message: one or two plain sentences with the figures (spec/flags.md)."""
    return WRITERS[type(finding)](finding)


def says_together(code: str) -> bool:
    """Whether several findings of `code` are said in sentences of their own (not just their messages)."""
    return code in COMBINERS


def limitation_sentences(code: str, findings: list | None, messages: list[str]) -> list[str]:
    """The sentences of one code's findings in "What these numbers will not carry".

    `findings` are the typed findings behind `messages` (None when only the messages are
    known); codes without a way of saying several findings at once are said by their messages.
    """
    combine = COMBINERS.get(code)
    if combine is None or findings is None:
        return generic(messages)
    return combine(findings, messages)


def group_lead(group: str, codes: set) -> str | None:
    """The sentence that opens a group's paragraph, if any."""
    if group == "sample" and codes & sampling.LEAD_CODES:
        return sampling.LEAD
    if group == "history":
        return history.LEAD
    return None


def condensed_rest(code: str, n_rest: int, seats: list[str], max_named: int) -> str:
    """The sentence naming the findings of a code not stated in full (fleet scale)."""
    named = F.join_words(seats[:max_named] + ([f"{len(seats) - max_named} more"] if len(seats) > max_named else []))
    return (
        f"The same finding holds for {F.plural(n_rest, 'more case')}, concerning {named}; "
        "each is stated with its figures in flags.json."
    )
