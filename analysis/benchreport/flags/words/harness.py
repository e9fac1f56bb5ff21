"""Words for harnesses that disagree beyond their definitions (harness.disagree)."""

from __future__ import annotations

from benchreport import format as F

from ..rules.harness import DisagreePair, HarnessDisagree
from ._common import combines, generic, phrase, writes

__all__ = ["harness_disagree"]


def _pair(f: HarnessDisagree, p: DisagreePair) -> str:
    text = (
        f"{p.harness_b} gives {F.value_with_unit(p.estimate_b, f.metric)} against {p.harness_a}'s "
        f"{F.value_with_unit(p.estimate_a, f.metric)} (ratio {F.ratio(p.ratio)}, {F.ratio(p.ratio_low)} to "
        f"{F.ratio(p.ratio_high)})"
    )
    if p.common_ratio is not None:
        text += (
            f"; recomputed from both harnesses' request records under one definition ({p.common}), still "
            f"{F.ratio(p.common_ratio)} "
            f"({F.ratio(p.common_ratio_low)} to {F.ratio(p.common_ratio_high)})"
        )
    elif not p.differs_in:
        text += "; their definitions in the table do not differ where this figure depends on them"
    return text


@writes(HarnessDisagree)
def harness_disagree(f: HarnessDisagree) -> str:
    return (
        f"{f.seats[0]}: harnesses that measured {phrase(f)} under one load disagree beyond their intervals "
        f"and beyond what their definitions explain: {'; '.join(_pair(f, p) for p in f.pairs)}. "
        "Quote neither figure for the other harness's definition; find out which harness is wrong."
    )


@combines("harness.disagree")
def disagree_sentences(findings: list[HarnessDisagree], messages: list[str]) -> list[str]:
    """Every cell's unexplained pairs in one sentence (the section "Do the harnesses agree?" and tables/agreement.csv give each whole)."""
    if len(findings) == 1:
        return generic(messages)
    cells = []
    for f in findings:
        pairs = ", ".join(f"{p.harness_b} / {p.harness_a} {F.ratio(p.ratio)}" for p in f.pairs)
        p0 = f.pairs[0]
        cells.append(f"{f.seats[0]} {F.cell_phrase(None, p0.concurrency, p0.metric, None)} ({pairs})")
    return [
        "Harnesses that measured one seat's cell under one load disagree beyond their intervals and beyond what "
        f"their definitions explain: {F.join_words(cells)}; the section 'Do the harnesses agree?' and tables/agreement.csv give each pair with "
        "its intervals and the common recomputation."
    ]
