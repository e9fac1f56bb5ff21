"""Exams: deltas that show no difference, and deltas tested unpaired because only counts are
known (spec/flags.md, "Exams"). The exam side of `sample.underpowered` is in `sampling`."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from benchreport import format as F
from benchreport.columns import is_not_a_count
from benchreport.thresholds import Thresholds

from .._common import int_or_none, key_sort, na, plain, used
from ..findings import ABSENT, Finding, Record

__all__ = [
    "NotSignificant",
    "CountsExam",
    "Rounded",
    "CountsOnly",
    "NotACount",
    "exam_not_significant",
    "exam_counts_only",
    "exam_score_not_a_count",
]


@dataclass(frozen=True, kw_only=True)
class NotSignificant(Finding):
    """An exam delta whose exact test does not reject equality (raw or Holm-adjusted p >= alpha)."""

    CODES = ("exam.not_significant",)
    benchmark: str
    dimension: str | None
    baseline: str
    candidate: str
    test: str | None
    n_items: int | None
    baseline_correct: int | None
    candidate_correct: int | None
    p_value: float | None
    p_holm: float | None
    diff: float | None
    mde: float | None
    #: the level the exam family was tested at when it shares alpha with the comparisons' families
    #: (alpha/F, issue 43); absent when it had the full alpha
    family_alpha: float = ABSENT
    thresholds: dict[str, float]


@dataclass(frozen=True, kw_only=True)
class CountsExam(Record):
    benchmark: str
    dimension: str | None
    test: str | None
    n_items: int | None


@dataclass(frozen=True, kw_only=True)
class Rounded(Record):
    seat: str
    benchmark: str
    dimension: str | None
    rounding: str


@dataclass(frozen=True, kw_only=True)
class CountsOnly(Finding):
    """Exam deltas of one pair tested unpaired; `rounded` names counts reconstructed from scores."""

    CODES = ("exam.counts_only",)
    baseline: str
    candidate: str
    exams: list[CountsExam]
    rounded: list[Rounded]


def exam_level(comparisons: pd.DataFrame | None, alpha: float) -> float:
    """The level the exam family is tested at: alpha/F when the comparisons' families share alpha
    with it (their ``family_alpha``, issue 43: the exam deltas are counted among the F families
    when any has a test), else alpha."""
    if comparisons is None or not len(comparisons) or "family_alpha" not in comparisons:
        return alpha
    a = pd.to_numeric(comparisons["family_alpha"], errors="coerce").dropna()
    return float(min(alpha, a.min())) if len(a) else alpha


def exam_not_significant(
    exam_deltas: pd.DataFrame | None, *, thresholds: Thresholds, comparisons: pd.DataFrame | None = None
) -> list[NotSignificant]:
    """`exam.not_significant`: an exam delta whose exact test does not reject equality at the exam
    family's level (raw p, or Holm-adjusted p across the exam deltas when that is >= it): alpha,
    or alpha/F when the report's comparisons split alpha across F families, exams one of them
    (`exam_level`; benchreport.stats.multiplicity.family_gatekeeping).

    The field note's HumanEval 153 against 154 of 164 has p = 1.0: a one-problem difference
    is no difference. The smallest detectable difference (`mde`) comes with it when the
    statistics give it.
    """
    if exam_deltas is None or exam_deltas.empty:
        return []
    alpha = exam_level(comparisons, float(thresholds.alpha))
    shared = alpha < float(thresholds.alpha)
    out = []
    for r in exam_deltas.itertuples(index=False):
        p = getattr(r, "p_value", None)
        if F.missing(p):
            continue
        p_holm = na(getattr(r, "p_holm", None))
        if not (float(p) >= alpha or (p_holm is not None and float(p_holm) >= alpha)):
            continue
        out.append(
            NotSignificant(
                code="exam.not_significant",
                severity="info",
                seats=tuple(sorted({str(r.baseline), str(r.candidate)})),
                benchmark=str(r.benchmark),
                dimension=na(getattr(r, "dimension", None)),
                baseline=str(r.baseline),
                candidate=str(r.candidate),
                test=na(getattr(r, "test", None)),
                n_items=int_or_none(getattr(r, "n_items", None)),
                baseline_correct=int_or_none(getattr(r, "baseline_correct", None)),
                candidate_correct=int_or_none(getattr(r, "candidate_correct", None)),
                p_value=plain(p),
                p_holm=plain(p_holm),
                diff=plain(getattr(r, "diff", None)),
                mde=plain(na(getattr(r, "mde", None))),
                family_alpha=alpha if shared else ABSENT,
                thresholds=used(thresholds, "alpha"),
            )
        )
    return out


_PAIRED_TESTS = ("mcnemar", "paired", "tango", "sign")


def _paired(r) -> bool:
    test = "" if F.missing(getattr(r, "test", None)) else str(r.test).lower()
    named_paired = any(k in test for k in _PAIRED_TESTS) and "unpaired" not in test
    return (
        not F.missing(getattr(r, "baseline_only", None))
        or not F.missing(getattr(r, "candidate_only", None))
        or named_paired
    )


def exam_counts_only(exam_deltas: pd.DataFrame | None, exams: pd.DataFrame | None = None) -> list[CountsOnly]:
    """`exam.counts_only`: an exam delta tested unpaired because only counts are known.

    Both seats took the same items (same benchmark and item count), but without item-level
    verdicts the test cannot use the pairing (McNemar / exact conditional tests on
    discordant items are sharper: Fagerland, Lydersen & Laake 2013). Detected from empty
    `baseline_only`/`candidate_only` or an unpaired test name. One finding per pair; counts
    reconstructed from published 0-100 scores are named.
    """
    if exam_deltas is None or exam_deltas.empty:
        return []
    rounding = {}
    if exams is not None and not exams.empty and "count_rounding" in exams.columns:
        for r in exams.itertuples(index=False):
            if not F.missing(r.count_rounding):
                rounding[(str(r.seat), str(r.benchmark), na(r.dimension))] = str(r.count_rounding)
    pairs: dict[tuple, list] = {}
    for r in exam_deltas.itertuples(index=False):
        if str(getattr(r, "test", "") or "").startswith("none"):
            continue  # not tested at all (exam.score_not_a_count says why)
        if not _paired(r):
            pairs.setdefault((str(r.baseline), str(r.candidate)), []).append(
                CountsExam(
                    benchmark=str(r.benchmark),
                    dimension=na(getattr(r, "dimension", None)),
                    test=na(getattr(r, "test", None)),
                    n_items=int_or_none(getattr(r, "n_items", None)),
                )
            )
    out = []
    for (a, b), items in sorted(pairs.items()):
        items = sorted(items, key=lambda i: (i.benchmark, key_sort(i.dimension)))
        rounded = [
            Rounded(
                seat=s, benchmark=i.benchmark, dimension=i.dimension, rounding=rounding[(s, i.benchmark, i.dimension)]
            )
            for s in (a, b)
            for i in items
            if (s, i.benchmark, i.dimension) in rounding
        ]
        out.append(
            CountsOnly(
                code="exam.counts_only",
                severity="info",
                seats=tuple(sorted((a, b))),
                baseline=a,
                candidate=b,
                exams=items,
                rounded=rounded,
            )
        )
    return out


@dataclass(frozen=True, kw_only=True)
class NotACount(Finding):
    """A published 0-100 score that is no whole number of the items it is said to be over, so
    no count (and no exact test of a delta) can be made from it."""

    CODES = ("exam.score_not_a_count",)
    benchmark: str
    dimension: str | None
    score: float
    total: int
    items: float
    compared_with: list[str]


def exam_score_not_a_count(exams: pd.DataFrame | None, exam_deltas: pd.DataFrame | None = None) -> list[NotACount]:
    """`exam.score_not_a_count`: a score given without counts whose share of its stated total is
    no whole number of items (88.2% of 94 items is 82.9 items: an average over parts of other
    sizes, or a weighted score). The statistics make no test of its deltas (`test` "none: ...",
    benchreport.stats.exams); this says why, and names the seats it was to be compared with."""
    if exams is None or exams.empty or "count_rounding" not in exams.columns:
        return []
    partners: dict[tuple, set] = {}
    if exam_deltas is not None and not exam_deltas.empty:
        for r in exam_deltas.itertuples(index=False):
            for a, b in ((r.baseline, r.candidate), (r.candidate, r.baseline)):
                partners.setdefault((str(a), str(r.benchmark), na(r.dimension)), set()).add(str(b))
    out = []
    for r in exams.itertuples(index=False):
        if not is_not_a_count(r.count_rounding):
            continue
        dim = na(r.dimension)
        out.append(
            NotACount(
                code="exam.score_not_a_count",
                severity="warn",
                seats=(str(r.seat),),
                benchmark=str(r.benchmark),
                dimension=dim,
                score=float(r.score),
                total=int(r.total),
                items=float(r.score) / 100.0 * int(r.total),
                compared_with=sorted(partners.get((str(r.seat), str(r.benchmark), dim), ())),
            )
        )
    return sorted(out, key=lambda f: (f.seats[0], f.benchmark, key_sort(f.dimension)))
