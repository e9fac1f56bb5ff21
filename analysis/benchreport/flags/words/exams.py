"""Words for the exam findings."""

from __future__ import annotations

from benchreport import format as F

from ..rules.exams import CountsOnly, NotACount, NotSignificant
from ._common import exam_name, test_words, writes

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
    used = "an unpaired test" if not tests else F.join_words([test_words(t) for t in tests]) + ", an unpaired test,"
    msg = (
        f"{f.candidate} against {f.baseline}: only counts are known for {names}, so {used} was used although "
        "both seats took the same items; item-level verdicts would allow a sharper paired test."
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
