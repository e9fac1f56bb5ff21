"""Words for the exam findings."""

from __future__ import annotations

from benchreport import format as F

from ..rules.exams import CountsOnly, NotACount, NotSignificant
from ._common import combines, exam_name, generic, test_words, writes

__all__ = ["not_significant", "counts_only", "score_not_a_count"]


@writes(NotSignificant)
def not_significant(f: NotSignificant) -> str:
    shared = getattr(f, "family_alpha", None)
    alpha = float(shared) if isinstance(shared, (int, float)) else f.thresholds["alpha"]
    name = exam_name(f.benchmark, f.dimension)
    if None not in (f.baseline_correct, f.candidate_correct, f.n_items):
        msg = (
            f"{name}: {f.candidate} (candidate) {f.candidate_correct} of {f.n_items} against {f.baseline} "
            f"(baseline) {f.baseline_correct} of {f.n_items}, candidate − baseline "
            f"{F.points_words(f.diff, signed=True)}, "
        )
    else:
        msg = f"{name}: {f.candidate} against {f.baseline}, "
    if float(f.p_value) >= alpha:
        named = f" ({test_words(f.test)})" if f.test else ""
        msg += f"p = {F.pval(f.p_value)}{named}: no difference is shown at alpha = {F.num(alpha)}" + (
            f" (the exams' share of alpha = {F.num(f.thresholds['alpha'])}, split across the families tested)."
            if isinstance(shared, (int, float))
            else "."
        )
    else:
        msg += (
            f"p = {F.pval(f.p_value)} but {F.pval(f.p_holm)} after Holm's correction for the other exam "
            f"comparisons: no difference is shown at alpha = {F.num(alpha)}."
        )
    if f.mde is not None:
        msg += f" This sample detects only differences of about {F.points_words(f.mde)} or more."
    return msg


@writes(CountsOnly)
def counts_only(f: CountsOnly) -> str:
    names = F.join_words([exam_name(i.benchmark, i.dimension) for i in f.exams])
    tests = sorted({str(i.test) for i in f.exams if i.test})
    used = "an unpaired test" if not tests else f"an unpaired test ({F.join_words([test_words(t) for t in tests])})"
    msg = (
        f"{f.candidate} against {f.baseline}: only counts are known for {names}, so {used} was used though both "
        "seats took the same items; item-level verdicts would allow a sharper paired test."
    )
    if f.rounded:
        msg += f" Some counts are reconstructed from published scores ({f.rounded[0].rounding})."
    return msg


@writes(NotACount)
def score_not_a_count(f: NotACount) -> str:
    with_ = f" against {F.join_words(f.compared_with)}" if f.compared_with else ""
    return (
        f"{exam_name(f.benchmark, f.dimension)}: {f.seats[0]}'s score {F.num(f.score)} on a 0-100 scale of "
        f"{f.total} items is {f.items:.1f} items, not a whole number, so it is not a share of these items "
        f"(an average over parts of other sizes, or a weighted score). No count can be made from it, so its "
        f"delta{with_} is not tested; give the counts (correct and total) to test it."
    )


@combines("exam.score_not_a_count")
def not_a_count_sentences(findings: list[NotACount], messages: list[str]) -> list[str]:
    """Several scores that are no whole number of their items, in one sentence (issue 42: the reason
    once, not once per score; each finding is whole in flags.json and the appendix's table of flags)."""
    if len(findings) == 1:
        return generic(messages)
    by_seat: dict[str, list[NotACount]] = {}
    for f in findings:
        by_seat.setdefault(f.seats[0], []).append(f)
    scores = F.join_words(
        [
            f"{seat} ({', '.join(f'{exam_name(f.benchmark, f.dimension)} {F.num(f.score)}' for f in mine)})"
            for seat, mine in by_seat.items()
        ]
    )
    totals = {f.total for f in findings}
    if len(totals) == 1:
        items = f"{F.join_words([f'{f.items:.1f}' for f in findings])} of their {totals.pop()} items"
    else:
        items = F.join_words([f"{f.items:.1f} of {f.total}" for f in findings]) + " items"
    return [
        f"The 0-100 scores of {scores} are no whole numbers of items ({items}: averages over parts of other "
        "sizes, or weighted scores), so no count can be made from them and their deltas are not tested; give "
        "the counts (correct and total) to test them."
    ]


@combines("exam.not_significant")
def not_significant_sentences(findings: list[NotSignificant], messages: list[str]) -> list[str]:
    """A pair's exam deltas that show no difference, in one sentence per pair when each was tested
    alone at the full alpha (raw p at or above it): the reason once, each exam's delta, p and
    smallest detectable difference (Section 4's tables give the counts). Else each its own."""
    pairs: dict[tuple, list[NotSignificant]] = {}
    for f in findings:
        pairs.setdefault((f.candidate, f.baseline), []).append(f)
    plain = all(
        not isinstance(getattr(f, "family_alpha", None), (int, float))
        and f.p_value is not None
        and float(f.p_value) >= f.thresholds["alpha"]
        and f.diff is not None
        for f in findings
    )
    if len(findings) == 1 or not plain or all(len(g) == 1 for g in pairs.values()):
        return generic(messages)
    out = []
    for (candidate, baseline), group in pairs.items():
        tests = {str(f.test) for f in group if f.test}
        by = f" by {test_words(tests.pop())}" if len(tests) == 1 else ""
        each = "; ".join(
            f"{exam_name(f.benchmark, f.dimension)} {_counts(f)}{F.points_words(f.diff, signed=True)}, "
            f"p = {F.pval(f.p_value)}"
            + (f" ({test_words(f.test)})" if f.test and not by else "")
            + (f", detecting only about {F.points_words(f.mde)} or more" if f.mde is not None else "")
            for f in group
        )
        out.append(
            f"{candidate} (candidate) against {baseline} (baseline): no exam delta shows a difference at alpha = "
            f"{F.num(group[0].thresholds['alpha'])}{by} (candidate − baseline: {each})."
        )
    return out


def _counts(f: NotSignificant) -> str:
    """'154 of 164 against 153 of 164, ' when the counts were given, else ''."""
    if None in (f.candidate_correct, f.baseline_correct, f.n_items):
        return ""
    return f"{f.candidate_correct} of {f.n_items} against {f.baseline_correct} of {f.n_items}, "
