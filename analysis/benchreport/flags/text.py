"""The report's section "What these numbers will not carry", composed from the flags alone.

Grouped the way the fleet paper's section 9 reads (`codes.GROUPS`: sample sizes, stability,
measurement traps, comparisons, exams, deployment, faults, provenance), codes in the order of
`codes.CODES`; every sentence is written by `benchreport.flags.words` from the findings behind
the flags, so the section cannot say more than the analysis found, nor drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from . import words
from .codes import CODES, GROUPS, group_of
from .findings import finding_from_flag
from .words import NO_FLAGS

__all__ = ["Paragraph", "limitations_paragraphs", "NO_FLAGS", "MAX_STATED", "STATED_WHEN_CONDENSED", "MAX_NAMED"]

#: above this many findings of one code, the section states a few in full and names the rest:
#: a fleet of 50 seats must not turn the section into pages of near-identical sentences (each
#: finding is whole in the appendix's table of flags and in flags.json; issue 42: at most ten
#: pages before the appendix for a folder of many harnesses' captures)
MAX_STATED = 4
STATED_WHEN_CONDENSED = 2
MAX_NAMED = 4

#: codes whose sentences say all their findings together at any number of them (their words name a
#: few and count the rest)
SAID_WHOLE_AT_ANY_SIZE = frozenset({"sample.single_pass"})

_CODE_ORDER = {c: i for i, c in enumerate(CODES)}


@dataclass
class Paragraph:
    """One group of the section: its title, its sentences, and the flags behind them."""

    group: str
    title: str
    sentences: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)
    n_flags: int = 0

    @property
    def text(self) -> str:
        return " ".join(self.sentences)


def _rows(flags: pd.DataFrame) -> list[dict]:
    return [
        {
            "code": str(r["code"]),
            "severity": str(r["severity"]),
            "seats": tuple(r["seats"]),
            "message": str(r["message"]),
            "evidence": r["evidence"] if isinstance(r["evidence"], dict) else {},
        }
        for _, r in flags.iterrows()
    ]


def _exam_key(ev: dict) -> tuple:
    return (ev.get("benchmark"), ev.get("dimension"), ev.get("baseline"), ev.get("candidate"))


def _sentences(code: str, rows: list[dict]) -> list[str]:
    """One code's sentences: its findings said together where words can, a few in full at fleet scale."""
    condensed = len(rows) > MAX_STATED and code not in SAID_WHOLE_AT_ANY_SIZE
    shown = rows[:STATED_WHEN_CONDENSED] if condensed else rows
    findings = None
    if words.says_together(code):
        findings = [finding_from_flag(r["code"], r["severity"], r["seats"], r["evidence"]) for r in shown]
    out = words.limitation_sentences(code, findings, [r["message"] for r in shown])
    if condensed:
        rest = rows[STATED_WHEN_CONDENSED:]
        seats = sorted({s for r in rest for s in r["seats"]})
        out.append(words.condensed_rest(code, len(rest), seats, MAX_NAMED))
    return [s for s in out if s]


def limitations_paragraphs(flags: pd.DataFrame) -> list[Paragraph]:
    """The section as structured paragraphs, one per group that has flags, in reading order."""
    if flags is None or flags.empty:
        return []
    rows = _rows(flags)
    said = {_exam_key(r["evidence"]) for r in rows if r["code"] == "exam.not_significant"}
    by_group: dict[str, dict[str, list]] = {}
    for row in rows:
        if (
            row["code"] == "sample.underpowered"
            and row["evidence"].get("kind") == "exam"
            and _exam_key(row["evidence"]) in said
        ):
            continue  # the not-significant sentence already gives the smallest detectable difference
        by_group.setdefault(group_of(row["code"], row["evidence"]), {}).setdefault(row["code"], []).append(row)
    out = []
    for group, title in GROUPS:
        codes = by_group.get(group)
        if not codes:
            continue
        para = Paragraph(group, title)
        lead = words.group_lead(group, set(codes))
        if lead:
            para.sentences.append(lead)
        for code in sorted(codes, key=lambda c: (_CODE_ORDER.get(c, len(_CODE_ORDER)), c)):
            para.sentences.extend(_sentences(code, codes[code]))
            para.codes.append(code)
            para.n_flags += len(codes[code])
        out.append(para)
    return out
