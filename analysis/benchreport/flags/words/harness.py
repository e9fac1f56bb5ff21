"""Words for harnesses that disagree beyond their definitions (harness.disagree) and for harnesses
whose figures are apart with no interval to test them (harness.untested)."""

from __future__ import annotations

from benchreport import format as F

from ..rules.harness import DisagreePair, HarnessDisagree, HarnessUntested, UntestedPair
from ._common import combines, generic, phrase, writes

__all__ = ["harness_disagree", "harness_untested"]


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


def _untested_pair(f: HarnessUntested, p: UntestedPair) -> str:
    text = (
        f"{p.harness_b} gives {F.value_with_unit(p.estimate_b, f.metric)} against {p.harness_a}'s "
        f"{F.value_with_unit(p.estimate_a, f.metric)} (ratio {F.ratio(p.ratio)})"
    )
    return text + (f"; their definitions differ in {p.differs_in}" if p.differs_in else "")


@writes(HarnessUntested)
def harness_untested(f: HarnessUntested) -> str:
    return (
        f"{f.seats[0]}: harnesses that measured {phrase(f)} under one load give figures apart, with no "
        f"interval to test the gap: {'; '.join(_untested_pair(f, p) for p in f.pairs)}. One pass of a figure "
        "no request record holds has no interval; measure several passes of each harness."
    )


@combines("harness.untested")
def untested_sentences(findings: list[HarnessUntested], messages: list[str]) -> list[str]:
    """Every cell's untested pairs in one sentence (tables/agreement.csv gives each pair)."""
    if len(findings) == 1:
        return generic(messages)
    cells = [
        f"{f.seats[0]} {F.cell_phrase(None, f.concurrency, f.metric, None)} ({F.counted(len(f.pairs), 'pair')})"
        for f in findings
    ]
    return [
        "Harnesses that measured one seat's cell under one load give figures apart, with no interval to test "
        f"the gap: {F.join_words(cells)}. One pass of a figure no request record holds has no interval; measure "
        "several passes of each harness (tables/agreement.csv gives each pair)."
    ]
